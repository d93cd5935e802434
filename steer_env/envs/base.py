"""Machinery shared by :class:`~steer_env.envs.pursuit.PursuitEnv` and
:class:`~steer_env.envs.evasion.EvasionEnv`: a :class:`gymnasium.Env` over a one-environment
:class:`~steer_env.envs.simulation.Simulation`."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import NDArray

from steer_env.envs import streams
from steer_env.envs.config import TaskConfig, make_config
from steer_env.envs.simulation import Simulation

RENDER_FPS = 10


def validate_render_mode(render_mode: str | None, accepted: list[str]) -> None:
    """Raise ``ValueError`` for an unknown render mode and a helpful error when pygame is
    missing (checked at construction, not at the first frame)."""
    if render_mode is None:
        return
    if render_mode not in accepted:
        raise ValueError(f"render_mode must be None or one of {accepted}, got {render_mode!r}")
    from steer_env import rendering

    rendering._import_pygame()


def validate_actions(action: Any, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Actions as float64 of exactly ``shape``, finite; ``ValueError`` otherwise."""
    try:
        arr = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"action must be numeric with shape {shape}, got {action!r}") from exc
    if arr.shape != shape:
        raise ValueError(f"action must have shape {shape}, got {arr.shape}")
    # A few values: Python's isfinite beats numpy's per-call overhead.
    finite = (
        all(map(math.isfinite, arr.ravel().tolist())) if arr.size <= 8 else np.isfinite(arr).all()
    )
    if not finite:
        raise ValueError("action must be finite: got NaN or inf (it would poison the episode)")
    return arr


class PursuitEvasionEnv(gym.Env[NDArray[np.float32], NDArray[np.float32]]):
    """Base class: the learned agent is vehicle 0 of a :class:`Simulation` with one env."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": RENDER_FPS,
    }
    agent_role: ClassVar[str] = "pursuer"
    default_config: ClassVar[TaskConfig] = TaskConfig()

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        self.config = make_config(self.default_config, kwargs)
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.sim = Simulation(self.config, self.agent_role, num_envs=1)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(self.sim.obs_dim,), dtype=np.float32)
        self._needs_reset = True
        self._keyed = False  # whether a reset has keyed the episode stream yet
        self._renderer = None
        self._trails = None

    # --- documented read-only state -------------------------------------------------
    @property
    def agent_index(self) -> int:
        """Index of the learned agent in the vehicle arrays (always 0)."""
        return Simulation.AGENT

    @property
    def positions(self) -> NDArray[np.float64]:
        """``(n, 2)`` positions of every vehicle, m (a copy)."""
        return self.sim.position[0].copy()

    @property
    def velocities(self) -> NDArray[np.float64]:
        """``(n, 2)`` velocities, m/s (a copy)."""
        return self.sim.velocity[0].copy()

    @property
    def headings(self) -> NDArray[np.float64]:
        """``(n, 2)`` unit headings (a copy)."""
        return self.sim.heading[0].copy()

    @property
    def is_pursuer(self) -> NDArray[np.bool_]:
        """``(n,)`` True for pursuers, False for evaders."""
        return self.sim.is_pursuer.copy()

    @property
    def max_speeds(self) -> NDArray[np.float64]:
        """``(n,)`` m/s."""
        return self.sim.max_speed.copy()

    @property
    def max_forces(self) -> NDArray[np.float64]:
        """``(n,)`` N."""
        return self.sim.max_force.copy()

    @property
    def masses(self) -> NDArray[np.float64]:
        """``(n,)`` kg."""
        return self.sim.mass.copy()

    @property
    def radii(self) -> NDArray[np.float64]:
        """``(n,)`` body radii, m."""
        return self.sim.radius.copy()

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in the current episode."""
        return int(self.sim.steps[0])

    # --- Gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Start an episode. A ``seed`` (or the first reset) keys the episode stream from
        ``np_random``; later unseeded resets continue the same stream, exactly as an env of
        ``gym.make_vec`` does when it autoresets."""
        super().reset(seed=seed)
        keys = None
        if seed is not None:
            keys = streams.key_from_seed(seed)
        elif not self._keyed:
            # np_random is Gymnasium's (seeded from the OS, or set by the user).
            keys = streams.key_from_generator(self.np_random)
        self.sim.reset_envs(np.array([0]), keys)
        self._keyed = True
        self._needs_reset = False
        if self._trails is not None:
            self._trails.reset(self.sim.position[0])
        if self.render_mode == "human":
            self.render()
        return self.sim.observe()[0], {"distance": float(self.sim.nearest_opponent_distance()[0])}

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        act = validate_actions(action, (2,))
        fres, bres, obs = self.sim.step_arrays(act.reshape(1, 2), reuse=True)
        # Rows in kernel.R_* and kernel.B_* order.
        reward, capture, escape, shaping, distance = fres[:, 0].tolist()
        terminated, truncated, captured = bres[:, 0].tolist()
        info: dict[str, Any] = {
            "distance": distance,
            "reward_terms": {"capture": capture, "escape": escape, "shaping": shaping},
        }
        if terminated or truncated:
            self._needs_reset = True
            info["is_success"] = captured if self.agent_role == "pursuer" else not captured
            step = int(self.sim.capture_step[0])
            info["capture_step"] = step  # -1: no capture
        if self._trails is not None:
            self._trails.push(self.sim.position[0])
        if self.render_mode == "human":
            self.render()
        return obs[0], reward, terminated, truncated, info

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode is None:
            name = self.spec.id if self.spec else type(self).__name__
            gym.logger.warn(
                "You are calling render method without specifying any render mode. "
                "You can specify the render_mode at initialization, e.g. "
                f'gym.make("{name}", render_mode="rgb_array")'
            )
            return None
        from steer_env import rendering
        from steer_env.envs import scene

        if self._renderer is None:
            bounds = (-self.config.half_size,) * 2 + (self.config.half_size,) * 2
            self._renderer = rendering.Renderer(
                bounds,
                width_px=600,
                render_mode=self.render_mode,
                fps=self.metadata["render_fps"],
                title=f"steer-env {type(self).__name__}",
            )
            self._trails = rendering.Trails(scene.TRAIL_LENGTH)
            self._trails.reset(self.sim.position[0])
        return scene.draw(self._renderer, self.sim, 0, self._trails)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
            self._trails = None
