"""Batched pursuit/evasion simulation shared by the single and the vector environments.

One :class:`Simulation` holds ``E`` independent environments as ``(E, n, 2)`` arrays and
steps all of them with one physics call (:func:`steer_env.physics.integrate`). Vehicle 0 of
every environment is the learned agent; vehicles ``1..n-1`` are scripted opponents
(:mod:`steer_env.envs.opponents`). ``gym.make`` envs are a ``Simulation`` with ``E = 1``;
``gym.make_vec`` envs are one ``Simulation`` with ``E = num_envs``, so both run the same
code and produce identical trajectories for identical seeds.

Randomness (start positions, wander jitter) comes from one counter-based stream per
environment (:mod:`steer_env.envs.streams`), keyed from the seed passed to ``reset``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steer_env import physics, vecmath
from steer_env.envs import opponents, streams
from steer_env.envs.config import TaskConfig

Array = NDArray[np.float64]

#: Candidate start positions tried per opponent to respect ``min_start_distance``.
_START_CANDIDATES = 16
#: Features per observed opponent: relative position (2), relative velocity (2), present flag.
OPPONENT_FEATURES = 5
#: Features about the agent itself: velocity (2), wall offsets (8), elapsed time (1).
SELF_FEATURES = 11


@dataclass
class StepResult:
    """Per-environment outcome of one :meth:`Simulation.step` (arrays of shape ``(E,)``)."""

    reward: Array
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    captured: NDArray[np.bool_]
    reward_capture: Array
    reward_escape: Array
    reward_shaping: Array
    distance: Array


class Simulation:
    """``num_envs`` pursuit/evasion environments stepped together.

    Attributes (read-only for users; shapes with ``E = num_envs``, ``n = 1 + n_opponents``):
        position, velocity, heading: ``(E, n, 2)`` m, m/s, unit vectors.
        wander_target: ``(E, n, 2)`` m, wander state of each vehicle (local frame).
        mass, max_speed, max_force, radius: ``(n,)`` per-vehicle limits.
        is_pursuer: ``(n,)`` bool. ``AGENT = 0`` is the learned agent's index.
        steps: ``(E,)`` steps taken in the current episode.
        capture_step: ``(E,)`` step of capture in the current episode, ``-1`` if none.
    """

    AGENT = 0

    def __init__(self, cfg: TaskConfig, agent_role: str, num_envs: int) -> None:
        if agent_role not in ("pursuer", "evader"):
            raise ValueError(f"agent_role must be 'pursuer' or 'evader', got {agent_role!r}")
        self.cfg = cfg
        self.agent_role = agent_role
        self.num_envs = int(num_envs)
        n = 1 + cfg.n_opponents
        self.n_vehicles = n
        self.is_pursuer = np.zeros(n, dtype=bool)
        self.is_pursuer[0] = agent_role == "pursuer"
        self.is_pursuer[1:] = agent_role != "pursuer"
        self.pursuers = np.flatnonzero(self.is_pursuer)
        self.evaders = np.flatnonzero(~self.is_pursuer)
        self.opponents = np.arange(1, n)
        opp = slice(1, None)

        def per_vehicle(agent_value: float, opponent_value: float) -> Array:
            arr = np.full(n, float(opponent_value))
            arr[0] = agent_value
            return arr

        self.mass = per_vehicle(cfg.agent_mass, cfg.opponent_mass)
        self.max_speed = per_vehicle(cfg.agent_max_speed, cfg.opponent_max_speed)
        self.max_force = per_vehicle(cfg.agent_max_force, cfg.opponent_max_force)
        self.radius = np.full(n, cfg.vehicle_radius)
        for arr in (self.mass, self.max_speed, self.max_force, self.radius):
            arr.setflags(write=False)
        self._opp = opp

        e = self.num_envs
        self.position = np.zeros((e, n, 2))
        self.velocity = np.zeros((e, n, 2))
        self.heading = np.zeros((e, n, 2))
        self.heading[..., 0] = 1.0
        self.wander_target = np.zeros((e, n, 2))
        self.steps = np.zeros(e, dtype=np.int64)
        self.capture_step = np.full(e, -1, dtype=np.int64)
        self.key = np.zeros(e, dtype=np.uint64)
        self.counter = np.zeros(e, dtype=np.uint64)
        self._potential = np.zeros(e)
        self._force = np.zeros((e, n, 2))
        self.obs_dim = SELF_FEATURES + OPPONENT_FEATURES * cfg.observed_opponents

    # ----------------------------------------------------------------- randomness
    def _uniform(self, envs: NDArray[np.intp], count: int) -> Array:
        u = streams.uniform(self.key[envs], self.counter[envs], count)
        self.counter[envs] += np.uint64(count)
        return u

    # ----------------------------------------------------------------- reset
    def reset_envs(self, envs: NDArray[np.intp], keys: NDArray[np.uint64] | None = None) -> None:
        """Start a new episode in environments ``envs`` (indices). With ``keys``, their random
        streams restart from those keys first (a seeded reset); otherwise the streams go on."""
        envs = np.asarray(envs, dtype=np.intp)
        if envs.size == 0:
            return
        if keys is not None:
            self.key[envs] = keys
            self.counter[envs] = 0
        cfg = self.cfg
        n = self.n_vehicles
        k = _START_CANDIDATES
        u = self._uniform(envs, n * (2 * k + 2)).reshape(len(envs), n, 2 * k + 2)
        lo = -cfg.half_size + cfg.vehicle_radius
        span = cfg.arena_size - 2 * cfg.vehicle_radius
        candidates = lo + span * u[..., : 2 * k].reshape(len(envs), n, k, 2)
        agent = candidates[:, 0, 0]
        far = vecmath.length(candidates[:, 1:] - agent[:, None, None, :]) >= cfg.min_start_distance
        # First candidate far enough from the agent; the farthest one if none is.
        dist = vecmath.length(candidates[:, 1:] - agent[:, None, None, :])
        choice = np.where(far.any(axis=-1), far.argmax(axis=-1), dist.argmax(axis=-1))
        others = np.take_along_axis(candidates[:, 1:], choice[..., None, None], axis=2)[:, :, 0]
        angle = 2 * np.pi * u[..., 2 * k]
        wander_angle = 2 * np.pi * u[..., 2 * k + 1]
        self.position[envs, 0] = agent
        self.position[envs, 1:] = others
        self.velocity[envs] = 0.0
        self.heading[envs] = np.stack((np.cos(angle), np.sin(angle)), axis=-1)
        self.wander_target[envs] = cfg.wander_radius * np.stack(
            (np.cos(wander_angle), np.sin(wander_angle)), axis=-1
        )
        self.steps[envs] = 0
        self.capture_step[envs] = -1
        self._potential[envs] = self._potential_of(envs)

    # ----------------------------------------------------------------- step
    def _scripted_forces(self, noise: Array | None) -> Array:
        """Forces ``(E, n_opponents, 2)`` of the scripted opponents in the current state; the
        evaders' wander state advances with ``noise`` (uniform in [-1, 1])."""
        cfg = self.cfg
        args = (self.position, self.velocity, self.heading, self.max_speed, self.max_force)
        if self.agent_role == "pursuer":
            force, new_target = opponents.evader_forces(
                *args, self.wander_target[:, self._opp], noise, self.opponents, self.pursuers, cfg
            )
            self.wander_target[:, self._opp] = new_target
            return force
        return opponents.pursuer_forces(*args, self.opponents, self.evaders, cfg)

    def agent_force(self, action: Array) -> Array:
        """World-frame force ``(E, 2)`` for agent actions ``(E, 2)`` given in the agent's frame
        in units of its max force; the magnitude is clipped to max force."""
        local = vecmath.truncate(action, 1.0)
        return vecmath.vector_to_world(local, self.heading[:, 0]) * self.max_force[0]

    def step(self, action: Array) -> StepResult:
        """Advance every environment by one step with agent actions ``(E, 2)``."""
        cfg = self.cfg
        all_envs = np.arange(self.num_envs)
        noise = None
        if self.agent_role == "pursuer":
            noise = 2.0 * self._uniform(all_envs, 2 * cfg.n_opponents).reshape(
                self.num_envs, cfg.n_opponents, 2
            ) - 1.0
        force = self._force
        force[:, 1:] = self._scripted_forces(noise)
        force[:, 0] = self.agent_force(action)

        before = self.position.copy()
        physics.integrate(
            self.position, self.velocity, self.heading, force, self.mass, self.max_speed,
            self.max_force, cfg.dt, out=(self.position, self.velocity, self.heading),
        )
        self._enforce_walls()
        self.steps += 1

        captured = self._swept_capture(before)
        self.capture_step = np.where(captured & (self.capture_step < 0), self.steps,
                                     self.capture_step)
        timed_out = (self.steps >= cfg.time_limit) & ~captured

        sign = 1.0 if self.agent_role == "pursuer" else -1.0
        reward_capture = np.where(captured, sign, 0.0)
        reward_escape = np.where(timed_out, 1.0, 0.0) if sign < 0 else np.zeros(self.num_envs)
        new_potential = self._potential_of(all_envs)
        if cfg.reward_shaping:
            # Potential-based shaping (Ng, Harada and Russell 1999): gamma * phi(s') - phi(s),
            # with phi = 0 at terminal states so the optimal policy is unchanged.
            shaped_next = np.where(captured, 0.0, cfg.shaping_gamma * new_potential)
            reward_shaping = shaped_next - self._potential
        else:
            reward_shaping = np.zeros(self.num_envs)
        self._potential = new_potential
        reward = reward_capture + reward_escape + reward_shaping
        return StepResult(
            reward=reward,
            terminated=captured,
            truncated=timed_out,
            captured=captured,
            reward_capture=reward_capture,
            reward_escape=reward_escape,
            reward_shaping=reward_shaping,
            distance=self.nearest_opponent_distance(),
        )

    def _enforce_walls(self) -> None:
        """Keep every body inside the arena: clamp the position and cancel the velocity
        component that points out of it (an inelastic wall)."""
        limit = self.cfg.half_size - self.radius[None, :, None]
        p = self.position
        over = p > limit
        under = p < -limit
        if over.any() or under.any():
            np.clip(p, -limit, limit, out=p)
            v = self.velocity
            v[over & (v > 0)] = 0.0
            v[under & (v < 0)] = 0.0

    def _swept_capture(self, before: Array) -> NDArray[np.bool_]:
        """Capture if any pursuer-evader pair came within the capture radius at any time during
        the step (relative motion is linear within a step, so fast pairs cannot tunnel)."""
        r0 = before[:, self.evaders][:, None] - before[:, self.pursuers][:, :, None]
        r1 = self.position[:, self.evaders][:, None] - self.position[:, self.pursuers][:, :, None]
        d = r1 - r0
        dd = np.einsum("...k,...k->...", d, d)
        t = np.divide(-np.einsum("...k,...k->...", r0, d), dd, out=np.zeros_like(dd),
                      where=dd > 1e-18)
        closest = r0 + d * np.clip(t, 0.0, 1.0)[..., None]
        return (vecmath.length(closest) <= self.cfg.capture_radius).any(axis=(1, 2))

    # ----------------------------------------------------------------- observations
    def nearest_opponent_distance(self) -> Array:
        rel = self.position[:, 1:] - self.position[:, :1]
        return vecmath.length(rel).min(axis=1)

    def _potential_of(self, envs: NDArray[np.intp]) -> Array:
        rel = self.position[envs, 1:] - self.position[envs, :1]
        d = vecmath.length(rel).min(axis=1) / self.cfg.diagonal
        scale = self.cfg.shaping_scale
        return -scale * d if self.agent_role == "pursuer" else scale * d

    def observe(self) -> NDArray[np.float32]:
        """Egocentric observations ``(E, obs_dim)`` in [-1, 1] (layout in the env docstrings)."""
        cfg = self.cfg
        e = self.num_envs
        h = self.heading[:, 0]
        p = self.position[:, 0]
        obs = np.zeros((e, self.obs_dim))
        obs[:, 0:2] = vecmath.vector_to_local(self.velocity[:, 0], h) / self.max_speed[0]
        half = cfg.half_size
        walls = np.zeros((e, 4, 2))
        walls[:, 0, 0] = -half - p[:, 0]  # west wall (x = -half)
        walls[:, 1, 0] = half - p[:, 0]  # east wall
        walls[:, 2, 1] = -half - p[:, 1]  # south wall
        walls[:, 3, 1] = half - p[:, 1]  # north wall
        obs[:, 2:10] = (vecmath.vector_to_local(walls, h[:, None]) / cfg.arena_size).reshape(e, 8)
        obs[:, 10] = 2.0 * self.steps / cfg.time_limit - 1.0

        rel_p = self.position[:, 1:] - p[:, None]
        rel_v = self.velocity[:, 1:] - self.velocity[:, :1]
        order = np.argsort(vecmath.length(rel_p), axis=1, kind="stable")
        slots = min(cfg.observed_opponents, cfg.n_opponents)
        order = order[:, :slots]
        rel_p = np.take_along_axis(rel_p, order[..., None], axis=1)
        rel_v = np.take_along_axis(rel_v, order[..., None], axis=1)
        feats = np.zeros((e, cfg.observed_opponents, OPPONENT_FEATURES))
        feats[:, :slots, 0:2] = vecmath.vector_to_local(rel_p, h[:, None]) / cfg.diagonal
        speed_scale = self.max_speed[0] + self.max_speed[1:].max()
        feats[:, :slots, 2:4] = vecmath.vector_to_local(rel_v, h[:, None]) / speed_scale
        feats[:, :slots, 4] = 1.0
        obs[:, SELF_FEATURES:] = feats.reshape(e, -1)
        np.clip(obs, -1.0, 1.0, out=obs)
        return obs.astype(np.float32)
