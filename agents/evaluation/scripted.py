"""Scripted agents with stable-baselines3's ``predict`` interface, acting from observations.

A scripted agent is a registered task's baseline strategy (:mod:`steer_env.tasks`, e.g.
the classic pursuer: wall avoidance, separation, pursuit with prediction) played from the
learned agent's seat. It sees only what a learned policy sees: its action is a function of
the observation it is given, for any batch shape, so it works behind Gymnasium and SB3
wrappers and in any training framework.

From each observation it rebuilds the scene that observation shows (its own pose from the
wall offsets, the observed vehicles from their slots;
:meth:`steer_env.engine.batch.Batch.load_observations`), runs the very strategy the envs'
scripted opponents run through the engine's compiled strategy stage, and returns the force
in its own frame in units of its max force. Strategies that wander keep their wander
target and a random stream per agent of each environment of the batch; the target
restarts at the start of each episode (``episode_start``, or an observation whose time
feature reads the first step).

Observations ``(E, obs_dim)`` are one agent in each of ``E`` environments, ``(E, k,
obs_dim)`` ``k`` agents in each (a shared policy's batch). Agent ``a`` of environment ``e``
draws from the stream of seed ``seed + e`` and agent ``a`` (:func:`agent_keys`), so an
episode played from seed ``s`` by a policy seeded ``s`` in a batch of one is the episode
played by environment ``e`` of a batch whose environment ``e`` starts from ``s`` and
whose policy is seeded ``s - e``: the same episode in the comparisons as in the rendered
ones, in any batch size.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env import vecmath
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.engine.strategy import Strategy
from steer_env.envs import streams
from steer_env.rules.pursuit_evasion import World
from steer_env.tasks import REGISTRY, STRATEGIES, Task, TaskConfig, get_task


class ScriptedPolicy:
    """The baseline ``name`` of ``task`` (``"classic"``, ``"naive"``...) as a policy.

    Also a scripted team of a team task (:data:`steer_env.tasks.TEAM_TASKS`, e.g.
    ``ScriptedPolicy(TEAM_TASKS["team_pursuit"], "cooperative")``): one policy plays any
    member of the team from that member's observation (every agent of the role can share
    it, as the engine's scripted team shares its strategy). The role is the one whose
    baselines hold ``name`` (``role`` picks one if several do).

    Args:
        task: a :class:`Task`, a task name / env id, or a team task (or its name).
        name: one of ``task.baselines`` (a team task's: of any role).
        config: the env configuration the observations come from (a :class:`TaskConfig` or
            ``gym.make`` keyword arguments; a team task's ``TeamConfig`` or keyword
            arguments); the task's defaults when omitted.
        seed: seeds the wander streams (environment ``e`` of a batch uses ``seed + e``,
            :func:`agent_keys`); ``None`` draws one from the OS.
        role: a team task's role (``"pursuer"``/``"evader"``); inferred from ``name``.
    """

    #: Keeps the policy's streams apart from the env's, which are keyed from the same seeds.
    _SALT = np.uint64(0xC1A551CE7A5E5EED)
    #: ``predict`` reads observations ``(E, k, obs_dim)`` as ``k`` agents of ``E``
    #: environments (:class:`agents.evaluation.shared.EveryAgent` passes them so).
    agent_axis = True

    def __init__(
        self,
        task: Any,
        name: str = "classic",
        config: Any = None,
        seed: int | None = 0,
        role: str | None = None,
    ) -> None:
        if seed is None:
            seed = int(np.random.default_rng().integers(2**63))
        self.seed = int(seed)
        self._views: dict[tuple[int, int], Batch] = {}
        # A task whose baselines are its own policies (herding's dogs) plays them directly.
        self._own: Any = None
        team_task = _team_task(task)
        if team_task is not None:
            self._init_team(team_task, name, config, role)
        else:
            self._init_single(task, name, config)
        self.obs_dim = self._own.obs_dim if self._own is not None else self._world.obs_dim

    def _init_single(self, task: Task | str, name: str, config: Any) -> None:
        self.task = get_task(task) if isinstance(task, str) else task
        known = tuple(dict.fromkeys((*self.task.baselines, *self.task.shared_baselines())))
        if name not in known:
            raise ValueError(
                f"unknown baseline {name!r} for {self.task.env_id}: use one of {', '.join(known)}"
            )
        if config is None:
            config = self.task.default_config
        elif isinstance(config, dict):
            config = self.task.config(**config)
        self.name = name
        self.config = config
        self.role = self.task.learned_team
        self._own = self.task.scripted_policy(name, config, self.seed)
        if self._own is not None:
            return
        self.strategy = self.task.baselines[name](config)
        self._world = self.task.world(config)
        self._roster = _decode_roster(self.task.roster(config), 0, self._world, self.strategy)

    def _init_team(self, task: Any, name: str, config: Any, role: str | None) -> None:
        roles = [r for r, names in task.baselines.items() if name in names]
        if role is not None:
            roles = [r for r in roles if r == role]
        if len(roles) != 1:
            known = ", ".join(f"{r}: {', '.join(n)}" for r, n in task.baselines.items())
            raise ValueError(
                f"unknown baseline {name!r}"
                + (f" for role {role!r}" if role is not None else "")
                + f" of team task {task.name!r}: use one of ({known})"
            )
        (role,) = roles
        if config is None:
            config = task.default_config
        elif isinstance(config, dict):
            config = task.config(**config)
        self.task = task
        self.name = name
        self.config = config
        self.role = role
        self.strategy = STRATEGIES[role][name](config)
        self._world = task.world(config)
        roster = task.roster(config)
        seat = next(i for i, v in enumerate(roster) if v.team == role)
        self._roster = _decode_roster(roster, seat, self._world, self.strategy)

    @property
    def _time_index(self) -> int:
        """Position of the elapsed-time feature in the observation (the task's table)."""
        return self._world.rules.FEATURES.position(self._world, "self", "time")

    def _view(self, envs: int, agents: int = 1) -> Batch:
        """A batch of ``envs * agents`` rows (agent ``a`` of environment ``e`` at row
        ``e * agents + a``) to rebuild observations into (kept per shape, so wander state
        carries over between calls with the same batch shape)."""
        view = self._views.get((envs, agents))
        if view is None:
            view = Batch(self._roster, self._world, envs * agents)
            view.state.key[:] = agent_keys(self.seed, envs, agents).reshape(-1) ^ self._SALT
            view.state.counter[:] = 0
            view.state.wander[:, 0] = (self.strategy.wander_radius(), 0.0)
            self._views[envs, agents] = view
        return view

    def predict(
        self,
        observation: NDArray[np.floating],
        state: Any = None,
        episode_start: NDArray[np.bool_] | None = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        """SB3's policy interface: one action per observation row (``(obs_dim,)``,
        ``(E, obs_dim)`` or ``(E, k, ..., obs_dim)`` in, ``(2,)``, ``(E, 2)`` or
        ``(E, k, ..., 2)`` out; the axes after the first are the agents of each
        environment)."""
        if self._own is not None:
            return self._own.predict(observation, state, episode_start, deterministic)
        obs = np.asarray(observation, dtype=np.float64)
        if obs.shape[-1:] != (self.obs_dim,):
            task = getattr(self.task, "env_id", None) or self.task.name
            raise ValueError(
                f"{type(self).__name__}: observations must end with {self.obs_dim} values "
                f"({task}), got shape {obs.shape}"
            )
        lead = obs.shape[:-1]
        flat = obs.reshape(-1, self.obs_dim)
        envs = lead[0] if lead else 1
        view = self._view(envs, flat.shape[0] // envs if envs else 1)
        starting = flat[:, self._time_index] <= -1.0  # the time feature of the first step
        if episode_start is not None:
            starting = starting | np.asarray(episode_start, dtype=bool).reshape(-1)
        view.state.wander[starting, 0] = (self.strategy.wander_radius(), 0.0)
        view.load_observations(flat)
        force = view.scripted_forces()[:, 0]
        view.state.counter[:] += np.uint64(view.draws)
        heading = view.state.heading[:, 0]
        max_force = view.vehicles["max_force"][0]
        action = np.clip(vecmath.vector_to_local(force, heading) / max_force, -1.0, 1.0)
        return action.astype(np.float32).reshape(*lead, 2), None


#: Puts the agents' own key parts (:func:`agent_keys`) apart from the keys of seeds.
_AGENT_SALT = np.uint64(0xA6E47A6E47A6E47A)


def agent_keys(seed: int, envs: int, agents: int) -> np.ndarray:
    """The stream keys ``(envs, agents)`` of a scripted policy seeded ``seed``: agent ``a``
    of environment ``e`` gets :func:`~steer_env.envs.streams.key_from_seed` of
    ``seed + e`` (modulo ``2**64``), XOR-ed for ``a > 0`` with a part of its own (the same
    in every environment: the key of the key of ``a ^ _AGENT_SALT``, so no XOR of two
    seeds' keys gives it). Agent 0's part is zero: one agent per environment draws from
    ``seed + e``'s stream."""
    keys = streams.key_from_seed(np.arange(envs, dtype=np.uint64) + np.uint64(seed % 2**64))
    own = streams.key_from_seed(
        streams.key_from_seed(np.arange(agents, dtype=np.uint64) ^ _AGENT_SALT)
    )
    own[0] = 0
    return keys[:, None] ^ own[None, :]


def _team_task(task: Any) -> Any:
    """The registered task with scripted teams per role (its comparison is the cross-play
    table, ``metrics.layout == "cross_play"``) that ``task`` names (or is), else ``None``."""
    if isinstance(task, str):
        task = REGISTRY.get(task.strip().lower())
    registered = any(task is t for t in REGISTRY.values())
    return task if registered and task.metrics.layout == "cross_play" else None


def _decode_roster(
    roster: list[VehicleSpec], seat: int, world: World, strategy: Strategy
) -> list[VehicleSpec]:
    """The roster an observation of ``roster[seat]`` decodes into
    (:meth:`Batch.load_observations`): the observer running ``strategy``, then one vehicle
    per teammate slot, then one per opponent slot (observed vehicles are only positions).

    Every slot gets a vehicle (slots beyond the real teammates or opponents repeat one of
    them; they are always absent), and the observer's velocity scale (its speed plus the
    fastest other vehicle's) is the real one: the view's other vehicles are the real ones
    plus such repeats."""
    me = roster[seat]
    others = [
        VehicleSpec(v.team, None, v.mass, v.max_speed, v.max_force, v.radius)
        for i, v in enumerate(roster)
        if i != seat
    ]
    teammates = [v for v in others if v.team == me.team]
    opponents = [v for v in others if v.team != me.team]
    slowest = min(others, key=lambda v: v.max_speed) if others else me
    pad_mate = VehicleSpec(me.team, None, me.mass, slowest.max_speed, me.max_force, me.radius)
    teammates = (teammates or [pad_mate]) * world.observed_teammates
    opponents = (opponents * world.observed_opponents) if opponents else []
    return [
        VehicleSpec(me.team, strategy, me.mass, me.max_speed, me.max_force, me.radius),
        *teammates[: world.observed_teammates],
        *opponents[: world.observed_opponents],
    ]


def classic(
    task: Task | str, config: TaskConfig | dict[str, Any] | None = None, seed: int | None = 0
) -> ScriptedPolicy:
    """The task's first (classic) baseline."""
    t = get_task(task) if isinstance(task, str) else task
    return ScriptedPolicy(t, next(iter(t.baselines)), config, seed)


class _DeprecatedScripted(ScriptedPolicy):
    """The first release's scripted agents, built from an env: now the env's task baseline
    as a :class:`ScriptedPolicy` (acting from observations, as every agent does)."""

    _baseline = "classic"
    _role = "pursuer"

    def __init__(self, env: Any, rng: np.random.Generator | int | None = 0) -> None:
        import warnings

        cls = type(self).__name__
        warnings.warn(
            f"agents.scripted.{cls} is deprecated and will be removed in the next release: use "
            f"agents.evaluation.scripted.ScriptedPolicy(env_id, {self._baseline!r}, "
            "config=...) (it acts from observations, behind any wrapper)",
            DeprecationWarning,
            stacklevel=2,
        )
        unwrapped = getattr(env, "unwrapped", env)
        task = getattr(unwrapped, "task", None)
        if not isinstance(task, Task):
            raise ValueError(f"{cls} needs a steer-env single-agent env, got {env!r}")
        if task.learned_team != self._role:
            raise ValueError(
                f"{cls} plays the {self._role}, but this env's agent is the {task.learned_team}"
            )
        seed = int(rng.integers(2**63)) if isinstance(rng, np.random.Generator) else rng
        super().__init__(task, self._baseline, config=unwrapped.config, seed=seed)


class ClassicPursuer(_DeprecatedScripted):
    """Deprecated: ``ScriptedPolicy("steer_env/Pursuit-v0", "classic")``."""


class NaivePursuer(_DeprecatedScripted):
    """Deprecated: ``ScriptedPolicy("steer_env/Pursuit-v0", "naive")``."""

    _baseline = "naive"


class ClassicEvader(_DeprecatedScripted):
    """Deprecated: ``ScriptedPolicy("steer_env/Evasion-v0", "classic")``."""

    _role = "evader"


__all__ = ["ClassicEvader", "ClassicPursuer", "NaivePursuer", "ScriptedPolicy", "classic"]
