"""The task registry: each task is one :class:`Task` entry, data rather than code paths.

A task says who plays (the learned role, the scripted opponents and their strategy), how
it is configured (:class:`~steer_env.tasks.config.TaskConfig` defaults), which scripted
baselines play the learned role for comparison, and what counts as success. The
Gymnasium envs, the vector env, the SB3 adapter, ``train.py``, ``agents.compare``,
``agents.render`` and the benchmarks all read this registry; adding a task is one entry
plus its strategies (see :mod:`steer_env.tasks.pursuit_evasion`).

>>> from steer_env.tasks import get_task
>>> task = get_task("pursuit")
>>> task.env_id, task.learned_team, sorted(task.baselines)
('steer_env/Pursuit-v0', 'pursuer', ['classic', 'naive'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Strategy
from steer_env.rules.pursuit_evasion import World
from steer_env.tasks.config import TaskConfig

StrategyFactory = Callable[[TaskConfig], Strategy]


@dataclass(frozen=True)
class Task:
    """One task of the registry.

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
        metrics: what the comparison reports besides the success rate.
        description: one line for help texts.
    """

    name: str
    env_id: str
    learned_team: str
    default_config: TaskConfig
    opponent_strategy: StrategyFactory
    baselines: Mapping[str, StrategyFactory]
    success: str
    metrics: tuple[str, ...] = ("time_to_capture",)
    description: str = ""
    entry_point: str = ""
    vector_entry_point: str = ""
    env_kwargs: Mapping[str, object] = field(default_factory=dict)

    @property
    def opponent_team(self) -> str:
        return "evader" if self.learned_team == "pursuer" else "pursuer"

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
        )

    def is_success(self, captured: bool) -> bool:
        """Whether an episode that ended with (``captured``) or without a capture of the
        learned role's target counts as a success."""
        return captured if self.success == "capture" else not captured


#: Every task, by short name.
TASKS: dict[str, Task] = {}

#: Named strategies per role (``"pursuer"``, ``"evader"``), each built from a task config;
#: ``gym.make(id, opponent_strategy=name)`` picks one for the scripted opponents.
STRATEGIES: dict[str, dict[str, StrategyFactory]] = {"pursuer": {}, "evader": {}}


def register_task(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS` (its name and env id must be new)."""
    for other in TASKS.values():
        if task.name == other.name or task.env_id == other.env_id:
            raise ValueError(f"task {task.name!r} ({task.env_id}) is already registered")
    TASKS[task.name] = task
    return task


#: Multi-agent tasks (PettingZoo front ends), by short name. They have a table of their own
#: so that the single-agent consumers of :data:`TASKS` (Gymnasium registration,
#: ``train.py``, ``agents.compare``, the soak test) only see tasks they can run.
TEAM_TASKS: dict[str, Any] = {}


def register_team_task(task: Any) -> Any:
    """Add a multi-agent task (e.g. :class:`~steer_env.tasks.team_pursuit.TeamTask`) to
    :data:`TEAM_TASKS` (its name must be new)."""
    if task.name in TEAM_TASKS or task.name in TASKS:
        raise ValueError(f"task {task.name!r} is already registered")
    TEAM_TASKS[task.name] = task
    return task


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


# The built-in tasks register themselves.
from steer_env.tasks import pursuit_evasion as _pursuit_evasion  # noqa: E402, F401
from steer_env.tasks import team_pursuit as _team_pursuit  # noqa: E402, F401

__all__ = [
    "STRATEGIES",
    "TASKS",
    "TEAM_TASKS",
    "Task",
    "TaskConfig",
    "get_task",
    "register_task",
    "register_team_task",
]
