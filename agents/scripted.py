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
target and a random stream per batch row (seeded by ``seed + row``); the target restarts
at the start of each episode (``episode_start``, or an observation whose time feature
reads the first step).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env import vecmath
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.envs import streams
from steer_env.tasks import Task, TaskConfig, get_task
from steer_env.tasks.config import make_config


class ScriptedPolicy:
    """The baseline ``name`` of ``task`` (``"classic"``, ``"naive"``...) as a policy.

    Args:
        task: a :class:`Task` or a task name / env id.
        name: one of ``task.baselines``.
        config: the env configuration the observations come from (a :class:`TaskConfig` or
            ``gym.make`` keyword arguments); the task's defaults when omitted.
        seed: seeds the wander streams (row ``i`` uses ``seed + i``); ``None`` draws one
            from the OS.
    """

    #: Keeps the policy's streams apart from the env's, which are keyed from the same seeds.
    _SALT = np.uint64(0xC1A551CE7A5E5EED)

    def __init__(
        self,
        task: Task | str,
        name: str = "classic",
        config: TaskConfig | dict[str, Any] | None = None,
        seed: int | None = 0,
    ) -> None:
        self.task = get_task(task) if isinstance(task, str) else task
        if name not in self.task.baselines:
            raise ValueError(
                f"unknown baseline {name!r} for {self.task.env_id}: use one of "
                f"{', '.join(self.task.baselines)}"
            )
        if config is None:
            config = self.task.default_config
        elif isinstance(config, dict):
            config = make_config(self.task.default_config, config)
        self.name = name
        self.config = config
        self.role = self.task.learned_team
        self.strategy = self.task.baselines[name](config)
        if seed is None:
            seed = int(np.random.default_rng().integers(2**63))
        self.seed = int(seed)
        world = self.task.world(config)
        self._world = world
        roster = self.task.roster(config)
        seat = roster[0]
        # The observer runs the baseline strategy; observed vehicles are only positions.
        others = [
            VehicleSpec(v.team, None, v.mass, v.max_speed, v.max_force, v.radius)
            for v in roster[1:]
        ]
        teammates = [v for v in others if v.team == seat.team][: world.observed_teammates]
        opponents = [v for v in others if v.team != seat.team]
        opponents = (opponents * world.observed_opponents)[: world.observed_opponents]
        self._roster = [
            VehicleSpec(
                seat.team, self.strategy, seat.mass, seat.max_speed, seat.max_force, seat.radius
            ),
            *teammates,
            *opponents,
        ]
        self._views: dict[int, Batch] = {}
        self.obs_dim = world.obs_dim

    def _view(self, rows: int) -> Batch:
        """A batch of ``rows`` environments to rebuild observations into (kept per size, so
        wander state carries over between calls with the same batch shape)."""
        view = self._views.get(rows)
        if view is None:
            view = Batch(self._roster, self._world, rows)
            keys = streams.key_from_seed(
                np.arange(rows, dtype=np.uint64) + np.uint64(self.seed % 2**64)
            )
            view.state.key[:] = keys ^ self._SALT
            view.state.counter[:] = 0
            view.state.wander[:, 0] = (self.strategy.wander_radius(), 0.0)
            self._views[rows] = view
        return view

    def predict(
        self,
        observation: NDArray[np.floating],
        state: Any = None,
        episode_start: NDArray[np.bool_] | None = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        """SB3's policy interface: one action per observation row (``(obs_dim,)`` or
        ``(..., obs_dim)`` in, ``(2,)`` or ``(..., 2)`` out)."""
        obs = np.asarray(observation, dtype=np.float64)
        if obs.shape[-1:] != (self.obs_dim,):
            raise ValueError(
                f"{type(self).__name__}: observations must end with {self.obs_dim} values "
                f"({self.task.env_id}), got shape {obs.shape}"
            )
        lead = obs.shape[:-1]
        flat = obs.reshape(-1, self.obs_dim)
        view = self._view(flat.shape[0])
        starting = flat[:, 10] <= -1.0  # the time feature of the first step
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


def classic(
    task: Task | str, config: TaskConfig | dict[str, Any] | None = None, seed: int | None = 0
) -> ScriptedPolicy:
    """The task's first (classic) baseline."""
    t = get_task(task) if isinstance(task, str) else task
    return ScriptedPolicy(t, next(iter(t.baselines)), config, seed)


__all__ = ["ScriptedPolicy", "classic"]
