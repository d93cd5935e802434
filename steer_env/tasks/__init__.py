"""The task registry: every task is one entry, an object of the task protocol
(:class:`~steer_env.tasks.protocol.TaskSpec`), data rather than code paths.

A task says who plays (its roster and learned agents), how it is configured (its config
dataclass and ranges), its world (which names its rules, :mod:`steer_env.rules`), which
front ends it has (a Gymnasium id with one learned agent, a PettingZoo module), which
scripted baselines play each role for comparison, and what counts as success. The
Gymnasium envs, the vector envs, the PettingZoo envs, the SB3 adapters, ``train.py``,
``agents.compare``, ``agents.render`` and the benchmarks all read this registry.

:data:`REGISTRY` holds every task; :data:`TASKS` and :data:`TEAM_TASKS` are its views of
the tasks with a single-agent Gymnasium form and with a PettingZoo form.

>>> from steer_env.tasks import get_task
>>> task = get_task("pursuit")
>>> task.env_id, task.learned_team, sorted(task.baselines)
('steer_env/Pursuit-v0', 'pursuer', ['classic', 'naive'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Strategy
from steer_env.rules import pursuit_evasion as pursuit_evasion_rules
from steer_env.rules.pursuit_evasion import World
from steer_env.tasks.config import TaskConfig, make_config
from steer_env.tasks.protocol import (
    Metrics,
    Role,
    SharedOutcomeInfos,
    StrategyFactory,
    TaskSpec,
    check_role,
)


@dataclass(frozen=True)
class Task(TaskSpec, SharedOutcomeInfos):
    """A task with one learned agent against scripted opponents (Pursuit-v0, Evasion-v0),
    in two forms: its Gymnasium env (``env_id``) and its PettingZoo env (``env_module``),
    whose one agent (``"pursuer_0"``) plays the same episodes from the
    same seeds: the team form with N = 1.

    Attributes:
        name: short name (``"pursuit"``), accepted by every command's ``--env``.
        env_id: the Gymnasium id.
        learned_team: ``"pursuer"`` or ``"evader"``: the team of the learned agent.
        default_config: the task's defaults (``gym.make`` keyword arguments override them).
        opponent_strategy: builds the scripted opponents' :class:`Strategy` from a config.
        baselines: scripted agents for the learned role, by name, in table order (the first
            is *the* classic baseline); each builds its :class:`Strategy` from a config.
        success: ``"capture"`` (success = the episode ended with a capture) or
            ``"escape"`` (success = the learned evader was never captured).
        entry_point, vector_entry_point: the Gymnasium entry points of ``env_id``.
        env_module: the PettingZoo module (``parallel_env``, ``env``, ``vector_env``).
        metrics: what comparisons measure and how they report it.
        training: defaults per trainer (:mod:`steer_env.tasks.training`).
    """

    name: str
    env_id: str
    learned_team: str
    default_config: TaskConfig
    opponent_strategy: StrategyFactory
    baselines: Mapping[str, StrategyFactory]
    success: str
    entry_point: str = ""
    vector_entry_point: str = ""
    env_module: str | None = None
    metrics: Metrics = field(default_factory=lambda: Metrics("agents", "", ""))
    training: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def opponent_team(self) -> str:
        return "evader" if self.learned_team == "pursuer" else "pursuer"

    # --- the task protocol -------------------------------------------------------------
    def config(self, **overrides: Any) -> TaskConfig:
        """The task's defaults with ``overrides`` (``gym.make`` keyword arguments)."""
        return make_config(self.default_config, overrides)

    def agent_names(self, cfg: TaskConfig) -> list[str]:
        """The one learned agent, named as PettingZoo and the team tasks name agents
        (``["pursuer_0"]``)."""
        return [f"{self.learned_team}_0"]

    def baselines_of(self, role: str) -> Mapping[str, StrategyFactory]:
        """Scripted agents for ``role``: the learned role's baselines (the opponents'
        role has its scripted strategy, not baselines)."""
        check_role(role, (self.learned_team,), self.name)
        return self.baselines

    def roster(self, cfg: TaskConfig) -> list[VehicleSpec]:
        """The vehicles of one environment: the learned agent first, then the scripted
        opponents."""
        agent = VehicleSpec(
            team=self.learned_team,
            strategy=None,
            mass=cfg.agent_mass,
            max_speed=cfg.agent_max_speed,
            max_force=cfg.agent_max_force,
            radius=cfg.vehicle_radius,
        )
        opponent = VehicleSpec(
            team=self.opponent_team,
            strategy=self.strategy_of_opponents(cfg),
            mass=cfg.opponent_mass,
            max_speed=cfg.opponent_max_speed,
            max_force=cfg.opponent_max_force,
            radius=cfg.vehicle_radius,
        )
        return [agent] + [opponent] * cfg.n_opponents

    def strategy_of_opponents(self, cfg: TaskConfig) -> Strategy:
        """The scripted opponents' strategy: ``cfg.opponent_strategy`` (a :class:`Strategy`,
        or the name of one in :data:`STRATEGIES` for the opponents' role) or the task's
        default."""
        chosen = cfg.opponent_strategy
        if chosen is None:
            return self.opponent_strategy(cfg)
        if isinstance(chosen, Strategy):
            return chosen
        named = STRATEGIES[self.opponent_team]
        if chosen not in named:
            raise ValueError(
                f"opponent_strategy {chosen!r} is not one of the {self.opponent_team}s' "
                f"strategies: use one of {', '.join(named)}, or a Strategy"
            )
        return named[chosen](cfg)

    def opponent_choice(self, cfg: TaskConfig) -> tuple[str, tuple[str, ...]]:
        """The opponents' strategy (``opponent_strategy``), one of the named strategies of
        their role (:data:`STRATEGIES`)."""
        return "opponent_strategy", tuple(STRATEGIES[self.opponent_team])

    def world(self, cfg: TaskConfig) -> World:
        """The arena, episode and reward parameters of ``cfg``."""
        return World(
            dt=cfg.dt,
            arena_size=cfg.arena_size,
            capture_radius=cfg.capture_radius,
            time_limit=cfg.time_limit,
            end_on_first_capture=True,
            shaping=cfg.reward_shaping,
            shaping_scale=cfg.shaping_scale,
            shaping_gamma=cfg.shaping_gamma,
            observed_teammates=0,
            observed_opponents=cfg.observed_opponents,
            start_margin=cfg.vehicle_radius,
            min_start_distance=cfg.min_start_distance,
            obstacles=cfg.obstacle_field(),
        )

    def is_success(self, captured: Any, role: str | None = None) -> Any:
        """Whether an episode that ended with (``captured``) or without a capture of the
        learned role's target counts as a success (a bool, or an array of them)."""
        if role is not None:
            check_role(role, (self.learned_team,), self.name)
        return captured == (self.success == "capture")

    def outcome(self, captures: Any, captured: Any, steps: Any) -> tuple[Any, Any]:
        """``(is_success, capture_step)`` of episodes that ended on this step, from the
        step's ``captures`` in the environment, whether the learned agent was
        ``captured`` and the episode's ``steps`` (scalars or arrays): the capture step is
        -1 unless the episode ended with a capture."""
        ended_captured = pursuit_evasion_rules.ended_with_capture(captures, captured)
        capture_step = np.where(ended_captured, steps, -1)
        return self.is_success(ended_captured), capture_step

    # --- infos (the keys: steer_env.rules.pursuit_evasion.step_info) ----------------------
    def reset_info(self, batch: Any) -> dict[str, Any]:
        distance = float(batch.nearest_opponent_distance()[0, 0])
        return pursuit_evasion_rules.step_info(distance, 0.0, 0.0, 0.0, False, -1)

    def step_info(self, row: Any, batch: Any) -> dict[str, Any]:
        if row.done:
            success, capture_step = self.outcome(
                row.captures, row.captured, int(batch.state.steps[0])
            )
            return _step_info(
                row.distance, row.capture, row.escape, row.shaping, bool(success), int(capture_step)
            )
        return _step_info(row.distance, row.capture, row.escape, row.shaping, False, -1)

    def vector_agent_info(self, result: Any, batch: Any) -> dict[str, Any]:
        """Each agent's distance to its nearest opponent and reward terms, ``(E, k)``."""
        if result is None:
            zeros = np.zeros((batch.num_envs, batch.n_agents))
            distance, capture, escape, shaping = (
                batch.nearest_opponent_distance(), zeros, zeros.copy(), zeros.copy()
            )  # fmt: skip
        else:
            distance, capture, escape, shaping = (
                result.distance, result.reward_capture, result.reward_escape,
                result.reward_shaping,
            )  # fmt: skip
        return {
            "distance": distance,
            "reward_capture": capture,
            "reward_escape": escape,
            "reward_shaping": shaping,
        }

    def vector_reset_info(self, batch: Any) -> dict[str, Any]:
        e = batch.num_envs
        return self._vector_info(
            self.vector_agent_info(None, batch),
            np.zeros(e, dtype=bool),
            np.full(e, -1, dtype=np.int64),
        )

    def vector_step_info(self, result: Any, batch: Any, ended: Any) -> dict[str, Any]:
        e = batch.num_envs
        if ended.any():
            success, capture_step = self.outcome(
                result.captures, result.captured[:, 0], batch.state.steps
            )
            is_success = success & ended
            capture_step = np.where(ended, capture_step, -1)
        else:  # most steps: no outcome to read, so none is computed
            is_success = np.zeros(e, dtype=bool)
            capture_step = np.full(e, -1, dtype=np.int64)
        return self._vector_info(self.vector_agent_info(result, batch), is_success, capture_step)

    @staticmethod
    def _vector_info(agent: dict[str, Any], is_success: Any, capture_step: Any) -> dict[str, Any]:
        """The vector env's infos: agent 0's column of ``agent``, then the outcome."""
        return pursuit_evasion_rules.step_info(
            agent["distance"][:, 0],
            agent["reward_capture"][:, 0],
            agent["reward_escape"][:, 0],
            agent["reward_shaping"][:, 0],
            is_success,
            capture_step,
        )

    def final_info(self, result: Any, batch: Any, envs: Any) -> list[dict[str, Any]]:
        success, capture_step = self.outcome(
            result.captures[envs], result.captured[envs, 0], batch.state.steps[envs]
        )
        return [
            {"is_success": s, "capture_step": c}
            for s, c in zip(success.tolist(), capture_step.tolist(), strict=True)
        ]


class _View(Mapping):
    """A live, read-only view of the tasks of :data:`REGISTRY` that ``keep`` selects."""

    def __init__(self, keep: Any, what: str) -> None:
        self._keep = keep
        self._what = what

    def _items(self) -> dict[str, Any]:
        return {name: t for name, t in REGISTRY.items() if self._keep(t)}

    def __getitem__(self, name: str) -> Any:
        task = REGISTRY.get(name)
        if task is None or not self._keep(task):
            raise KeyError(f"{name!r} is not {self._what}; those are {', '.join(self._items())}")
        return task

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._what}: {list(self._items())})"


# The info builder of the single env, called on every step: bound once.
_step_info = pursuit_evasion_rules.step_info

#: Every task, by short name.
REGISTRY: dict[str, TaskSpec] = {}

#: The tasks with a single-agent Gymnasium form (``task.env_id``), by short name.
TASKS: Mapping[str, Task] = _View(lambda t: t.env_id is not None, "a single-agent task")

#: The tasks with a PettingZoo form (``task.env_module``), by short name.
TEAM_TASKS: Mapping[str, Any] = _View(lambda t: t.env_module is not None, "a team task")

#: Named strategies per role (``"pursuer"``, ``"evader"``), each built from a task config;
#: ``gym.make(id, opponent_strategy=name)`` picks one for the scripted opponents.
STRATEGIES: dict[str, dict[str, StrategyFactory]] = {"pursuer": {}, "evader": {}}


def register(task: TaskSpec) -> TaskSpec:
    """Add ``task`` to :data:`REGISTRY`: its name and front-end ids must be new, and it
    must implement the task protocol."""
    if not isinstance(task, TaskSpec):
        raise TypeError(f"a task must implement TaskSpec, got {type(task).__name__}")
    for other in REGISTRY.values():
        same_id = task.env_id is not None and task.env_id == other.env_id
        same_module = task.env_module is not None and task.env_module == other.env_module
        if task.name == other.name or same_id or same_module:
            raise ValueError(f"task {task.name!r} ({task.env_id}) is already registered")
    REGISTRY[task.name] = task
    return task


#: Kept names: every task goes through :func:`register`.
register_task = register
register_team_task = register


def get_task(name: str) -> Task:
    """The task for a short name (``pursuit``), a versioned name (``Pursuit-v0``) or an env id
    (``steer_env/Pursuit-v0``), any case; ``ValueError`` listing the accepted names."""
    key = str(name).strip().lower()
    for task in TASKS.values():
        short_v = task.env_id.split("/")[-1].lower()
        if key in (task.name, short_v, task.env_id.lower()):
            return task
    accepted = ", ".join(n for t in TASKS.values() for n in (t.name, t.env_id))
    raise ValueError(f"unknown env {name!r}: use one of {accepted}")


# The built-in tasks register themselves, in this order (the order of tables and lists).
# isort: off
from steer_env.tasks import pursuit_evasion as _pursuit_evasion  # noqa: E402, F401
from steer_env.tasks import team_pursuit as _team_pursuit  # noqa: E402, F401
from steer_env.tasks import herding as _herding  # noqa: E402, F401
from steer_env.tasks import crowd as _crowd  # noqa: E402, F401
from steer_env.tasks import flocking as _flocking  # noqa: E402, F401
# isort: on

__all__ = [
    "REGISTRY",
    "STRATEGIES",
    "TASKS",
    "TEAM_TASKS",
    "Metrics",
    "Role",
    "Task",
    "TaskConfig",
    "TaskSpec",
    "get_task",
    "register",
    "register_task",
    "register_team_task",
]
