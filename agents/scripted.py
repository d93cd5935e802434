"""Scripted agents with stable-baselines3's ``predict`` interface.

They act only through the env's action space (a steering force in the agent's frame, in
units of its max force), so they are compared with learned agents on equal terms. Because
the egocentric observation does not carry everything a classic behaviour needs (the
opponent's absolute heading for pursuit's prediction, for instance), they read the env's
documented state: the ``sim`` attribute of the unwrapped single or vector env (a
:class:`steer_env.envs.simulation.Simulation`), never changing it.

* :class:`ClassicPursuer`: Reynolds pursuit with prediction + wall avoidance, the same
  behaviour composition as the env's scripted pursuers.
* :class:`NaivePursuer`: plain seek of the nearest evader's current position.
* :class:`ClassicEvader`: evade + wall avoidance + wander when unthreatened, the same
  composition as the env's scripted evaders (wander randomness from a Generator passed in).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env import behaviors, combine, vecmath
from steer_env.envs import opponents, streams
from steer_env.envs.simulation import Simulation

AGENT = np.array([Simulation.AGENT])


def _simulation(env: Any) -> Simulation:
    base = getattr(env, "unwrapped", env)
    sim = getattr(base, "sim", None)
    if not isinstance(sim, Simulation):
        raise TypeError(
            "scripted agents need a steer_env environment (single or vector), got "
            f"{type(base).__name__}"
        )
    return sim


class ScriptedPolicy:
    """Base class: turns a world-frame force for the agent into an action."""

    #: The role the policy plays; it must match the env's agent role.
    role: str = "pursuer"

    def __init__(self, env: Any) -> None:
        self.env = env
        self.sim = _simulation(env)
        if self.sim.agent_role != self.role:
            raise ValueError(
                f"{type(self).__name__} plays the {self.role}, but this env's agent is the "
                f"{self.sim.agent_role}"
            )

    def force(self) -> NDArray[np.float64]:
        """World-frame force ``(E, 2)`` for the agent of every env."""
        raise NotImplementedError

    def predict(
        self,
        observation: NDArray[np.float32],
        state: Any = None,
        episode_start: NDArray[np.bool_] | None = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        """SB3's policy interface: actions for ``observation`` (``(obs_dim,)`` for a single env,
        ``(E, obs_dim)`` for a vector env)."""
        sim = self.sim
        force = vecmath.truncate(self.force(), sim.max_force[0])
        local = vecmath.vector_to_local(force, sim.heading[:, 0]) / sim.max_force[0]
        action = np.clip(local, -1.0, 1.0).astype(np.float32)
        if np.ndim(observation) == 1:
            return action[0], None
        return action, None


class ClassicPursuer(ScriptedPolicy):
    """Reynolds pursuit with prediction plus wall avoidance (prioritized running sum)."""

    role = "pursuer"

    def force(self) -> NDArray[np.float64]:
        sim = self.sim
        return opponents.pursuer_forces(
            sim.position,
            sim.velocity,
            sim.heading,
            sim.max_speed,
            sim.max_force,
            AGENT,
            sim.evaders,
            sim.cfg,
        )[:, 0]


class NaivePursuer(ScriptedPolicy):
    """Seek the nearest evader's current position (no prediction), plus wall avoidance."""

    role = "pursuer"

    def force(self) -> NDArray[np.float64]:
        sim = self.sim
        cfg = sim.cfg
        k, _ = opponents.nearest(sim.position, AGENT, sim.evaders)
        target = np.take_along_axis(sim.position, sim.evaders[k][..., None], axis=1)[:, 0]
        p, v, h = sim.position[:, 0], sim.velocity[:, 0], sim.heading[:, 0]
        ms = sim.max_speed[0]
        wall = behaviors.wall_avoidance(p, v, h, ms, opponents.arena_bounds(cfg), cfg.feeler_length)
        chase = behaviors.seek(p, v, target, ms)
        return combine.prioritized(
            [wall, chase], [cfg.wall_weight, cfg.pursuit_weight], sim.max_force[0]
        )


class ClassicEvader(ScriptedPolicy):
    """Evade the nearest pursuer + wall avoidance + wander when unthreatened.

    The wander jitter of env ``i`` comes from its own counter-based stream
    (:mod:`steer_env.envs.streams`) keyed by ``seed + i``, where ``seed`` is ``rng`` (an
    int, or drawn once from a :class:`numpy.random.Generator`; ``None`` draws it from the
    OS). So env ``i`` of a vector env plays like a single env given ``seed + i``, whatever
    the batch size, and the wander state restarts with every episode.
    """

    role = "evader"

    #: Keeps the policy's streams apart from the env's, which are keyed from the same seeds.
    _SALT = np.uint64(0xC1A551CE7A5E5EED)

    def __init__(self, env: Any, rng: np.random.Generator | int | None = 0) -> None:
        super().__init__(env)
        if isinstance(rng, np.random.Generator):
            seed = int(rng.integers(2**63))
        elif rng is None:
            seed = int(np.random.default_rng().integers(2**63))
        else:
            seed = int(rng)
        e = self.sim.num_envs
        offsets = np.arange(e, dtype=np.uint64) + np.uint64(seed % 2**64)
        self._key = streams.key_from_seed(offsets) ^ self._SALT
        self._counter = np.zeros(e, dtype=np.uint64)
        self._wander = np.zeros((e, 1, 2))

    def force(self) -> NDArray[np.float64]:
        sim = self.sim
        cfg = sim.cfg
        start = sim.steps == 0  # a new episode: restart the wander target straight ahead
        self._wander[start] = (cfg.wander_radius, 0.0)
        u = streams.uniform(self._key, self._counter, 2)
        self._counter += np.uint64(2)
        noise = (2.0 * u - 1.0).reshape(sim.num_envs, 1, 2)
        force, self._wander = opponents.evader_forces(
            sim.position,
            sim.velocity,
            sim.heading,
            sim.max_speed,
            sim.max_force,
            self._wander,
            noise,
            AGENT,
            sim.pursuers,
            cfg,
        )
        return force[:, 0]
