"""Batched pursuit/evasion simulation shared by the single and the vector environments.

One :class:`Simulation` holds ``E`` independent environments as ``(E, n, 2)`` arrays and
steps all of them with one call of the compiled step kernel (:mod:`steer_env.envs.kernel`:
the scripted opponents of :mod:`steer_env.envs.opponents`, the physics step of
:func:`steer_env.physics.integrate`, capture, rewards and observations, transcribed
operation for operation). Vehicle 0 of every environment is the learned agent; vehicles
``1..n-1`` are scripted opponents. ``gym.make`` envs are a ``Simulation`` with ``E = 1``;
``gym.make_vec`` envs are one ``Simulation`` with ``E = num_envs``, so both run the same
code and produce identical trajectories for identical seeds.

Randomness (start positions, wander jitter) comes from one counter-based stream per
environment (:mod:`steer_env.envs.streams`), keyed from the seed passed to ``reset``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steer_env.envs.config import TaskConfig

Array = NDArray[np.float64]

#: Candidate start positions tried per opponent to respect ``min_start_distance``.
_START_CANDIDATES = 16
#: Features per observed opponent: relative position (2), relative velocity (2), present flag.
OPPONENT_FEATURES = 5
#: Features about the agent itself: velocity (2), wall offsets (8), elapsed time (1).
SELF_FEATURES = 11


def _kernel():
    """The step kernel module, imported on first use (numba takes ~0.3 s to import, which
    ``import steer_env`` need not pay)."""
    global _KERNEL
    if _KERNEL is None:
        from steer_env.envs import kernel

        _KERNEL = kernel
    return _KERNEL


_KERNEL = None


@dataclass
class StepResult:
    """Per-environment outcome of one :meth:`Simulation.step` (arrays of shape ``(E,)``;
    ``observation`` is ``(E, obs_dim)`` float32, the observations after the step)."""

    reward: Array
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]
    captured: NDArray[np.bool_]
    reward_capture: Array
    reward_escape: Array
    reward_shaping: Array
    distance: Array
    observation: NDArray[np.float32] | None = None


class Simulation:
    """``num_envs`` pursuit/evasion environments stepped together.

    Attributes (read-only for users; shapes with ``E = num_envs``, ``n = 1 + n_opponents``):
        position, velocity, heading: ``(E, n, 2)`` m, m/s, unit vectors.
        wander_target: ``(E, n, 2)`` m, wander state of each vehicle (local frame).
        mass, max_speed, max_force, radius: ``(n,)`` per-vehicle limits.
        is_pursuer: ``(n,)`` bool. ``AGENT = 0`` is the learned agent's index.
        steps: ``(E,)`` steps taken in the current episode.
        capture_step: ``(E,)`` step of capture in the current episode, ``-1`` if none.

    The state lives in a few preallocated blocks (``position`` is a view of one of them) that
    the kernel updates in place; a step allocates only the arrays it returns (and the
    kernel's small scratch).
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
        kernel = _kernel()
        # The kernel's inputs: a few contiguous blocks, updated in place.
        self._vehicle = np.stack((self.mass, self.max_speed, self.max_force, self.radius))
        self._params = kernel.pack_params(cfg, agent_role == "pursuer", self.max_speed)
        e = self.num_envs
        self._state = np.zeros((4, e, n, 2))  # position, velocity, heading, wander target
        self._state[2, ..., 0] = 1.0
        self._counts = np.zeros((2, e), dtype=np.int64)  # steps, capture step
        self._counts[1] = -1
        self._rng = np.zeros((2, e), dtype=np.uint64)  # stream key, counter
        self._potential = np.zeros(e)
        self._all = np.arange(e)
        self.obs_dim = SELF_FEATURES + OPPONENT_FEATURES * cfg.observed_opponents
        # Result buffers reused by ``step(..., reuse=True)`` (the single env's path).
        self._fres = np.empty((kernel.N_RESULTS, e))
        self._bres = np.empty((3, e), dtype=bool)

    # ----------------------------------------------------------------- state (views)
    @property
    def position(self) -> Array:
        return self._state[0]

    @property
    def velocity(self) -> Array:
        return self._state[1]

    @property
    def heading(self) -> Array:
        return self._state[2]

    @property
    def wander_target(self) -> Array:
        return self._state[3]

    @property
    def steps(self) -> NDArray[np.int64]:
        return self._counts[0]

    @property
    def capture_step(self) -> NDArray[np.int64]:
        return self._counts[1]

    @property
    def key(self) -> NDArray[np.uint64]:
        return self._rng[0]

    @property
    def counter(self) -> NDArray[np.uint64]:
        return self._rng[1]

    # ----------------------------------------------------------------- reset
    def reset_envs(self, envs: NDArray[np.intp], keys: NDArray[np.uint64] | None = None) -> None:
        """Start a new episode in environments ``envs`` (indices). With ``keys``, their random
        streams restart from those keys first (a seeded reset); otherwise the streams go on.

        Start state (drawn from each env's stream, :func:`steer_env.envs.kernel.reset_env`):
        the agent uniformly in the arena, each opponent at the first of 16 uniform candidates
        at least ``min_start_distance`` from it (the farthest if none is), all at rest with
        uniform headings and wander targets."""
        envs = np.asarray(envs, dtype=np.intp)
        if envs.size == 0:
            return
        if keys is not None:
            self.key[envs] = keys
            self.counter[envs] = 0
        _kernel().reset(self._state, self._counts, self._rng, self._potential, self._params, envs)

    # ----------------------------------------------------------------- step
    def step_arrays(
        self, action: Array, reuse: bool = False
    ) -> tuple[Array, NDArray[np.bool_], NDArray[np.float32]]:
        """Advance every environment by one step with agent actions ``(E, 2)``; the raw
        outputs of :func:`steer_env.envs.kernel.step`: ``(fres, bres, obs)`` with rows
        ``kernel.R_*`` and ``kernel.B_*``. With ``reuse``, ``fres`` and ``bres`` are buffers
        overwritten by the next step (``obs`` is always new)."""
        e = self.num_envs
        kernel = _kernel()
        action = np.ascontiguousarray(action, dtype=np.float64)
        if reuse:
            fres, bres = self._fres, self._bres
        else:
            fres = np.empty((kernel.N_RESULTS, e))
            bres = np.empty((3, e), dtype=bool)
        obs = np.empty((e, self.obs_dim), dtype=np.float32)
        kernel.step(
            self._state,
            self._counts,
            self._rng,
            self._potential,
            self._vehicle,
            self._params,
            action,
            fres,
            bres,
            obs,
        )
        return fres, bres, obs

    def step(self, action: Array) -> StepResult:
        """Advance every environment by one step with agent actions ``(E, 2)``."""
        fres, bres, obs = self.step_arrays(action)
        kernel = _kernel()
        return StepResult(
            reward=fres[kernel.R_REWARD],
            terminated=bres[kernel.B_TERMINATED],
            truncated=bres[kernel.B_TRUNCATED],
            captured=bres[kernel.B_CAPTURED],
            reward_capture=fres[kernel.R_CAPTURE],
            reward_escape=fres[kernel.R_ESCAPE],
            reward_shaping=fres[kernel.R_SHAPING],
            distance=fres[kernel.R_DISTANCE],
            observation=obs,
        )

    # ----------------------------------------------------------------- observations
    def nearest_opponent_distance(
        self, envs: NDArray[np.intp] | None = None, out: Array | None = None
    ) -> Array:
        """``(E,)`` distance from each agent to its nearest opponent, m. With ``envs``, only
        those entries are computed (into ``out`` when given)."""
        if out is None:
            out = np.empty(self.num_envs)
        _kernel().distances(self._state, self._all if envs is None else envs, out)
        return out

    def observe(
        self, envs: NDArray[np.intp] | None = None, out: NDArray[np.float32] | None = None
    ) -> NDArray[np.float32]:
        """Egocentric observations ``(E, obs_dim)`` in [-1, 1] (layout in the env docstrings).
        With ``envs`` (indices), only those rows are computed (into ``out`` when given)."""
        if out is None:
            out = np.zeros((self.num_envs, self.obs_dim), dtype=np.float32)
        envs = self._all if envs is None else np.asarray(envs, dtype=np.intp)
        _kernel().observe(self._state, self.steps, self._vehicle, self._params, envs, out)
        return out
