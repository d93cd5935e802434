"""Machinery shared by the single-agent Gymnasium envs: a :class:`gymnasium.Env` over a
one-environment :class:`~steer_env.engine.batch.Batch` of a registered task
(:mod:`steer_env.tasks`)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec
from gymnasium.error import ResetNeeded
from numpy.typing import NDArray

from steer_env.engine.batch import Batch
from steer_env.envs import streams
from steer_env.tasks import Task
from steer_env.tasks.config import TaskConfig

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


def validate_actions(
    action: Any, shape: tuple[int, ...], name: str = "action", finite: bool = True
) -> NDArray[np.float64]:
    """Actions as float64 of exactly ``shape``, finite; ``ValueError`` naming ``name``
    otherwise. Accepts anything array-like: lists, numpy arrays of any real dtype, torch
    tensors (also ones that require grad). With ``finite=False`` NaN and inf pass (a caller
    that checks finiteness per agent, where some rows are ignored)."""
    if hasattr(action, "detach") and callable(action.detach):
        action = action.detach()  # a torch tensor that requires grad
        if hasattr(action, "cpu"):
            action = action.cpu()
    if type(action) is np.ndarray and action.dtype.kind in "fiu":
        arr = action.astype(np.float64, copy=False)
    else:
        if isinstance(action, np.ndarray) and (
            action.dtype.kind in "bc" or np.ma.is_masked(action)
        ):
            # numpy would drop an imaginary part or read a masked value: refuse them.
            raise ValueError(
                f"{name} must be real numbers of shape {shape}, none masked, got "
                f"{' '.join(repr(action).split())}"
            )
        if isinstance(action, list | tuple) and not all(
            isinstance(x, numbers.Real) and not isinstance(x, bool)
            for x in np.asarray(action, dtype=object).ravel().tolist()
        ):
            # numpy would turn None into NaN: name the real problem instead.
            raise ValueError(f"{name} must be numbers of shape {shape}, got {action!r}")
        try:
            arr = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numbers of shape {shape}, got {action!r} "
                f"({' '.join(str(exc).split())})"
            ) from None
        except OverflowError:
            raise ValueError(f"{name} must be finite numbers, got {action!r}") from None
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not finite:
        return arr
    # A few values: Python's isfinite beats numpy's per-call overhead.
    finite = (
        all(map(math.isfinite, arr.ravel().tolist())) if arr.size <= 8 else np.isfinite(arr).all()
    )
    if not finite:
        raise ValueError(f"{name} must be finite: got NaN or inf (it would poison the episode)")
    return arr


def validate_seed(seed: Any, name: str = "seed") -> int:
    """A non-negative Python int (any size: seeds are hashed to 64-bit stream keys)."""
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed!r}")
    return int(seed)


def _gym_seed(seed: int) -> int:
    """A seed for Gymnasium's ``np_random`` (numpy accepts any non-negative int, but keep
    it well inside what every consumer takes)."""
    return seed if seed < 2**63 else seed % (2**63)


class SteerEnv(gym.Env[NDArray[np.float32], NDArray[np.float32]]):
    """Base class of the single-agent envs: the learned agent of ``task`` in one
    :class:`Batch`."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "render_fps": RENDER_FPS,
    }
    task: ClassVar[Task]
    _given_spec: EnvSpec | None = None

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        self.config = self.task.config(**kwargs)
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.batch = self._make_batch(self.config)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.observation_space = spaces.Box(*self.batch.observation_bounds, dtype=np.float32)
        self._needs_reset = True
        self._keyed = False  # whether a reset has keyed the episode stream yet
        # The renderer and trails (pygame is imported by the first frame, not here).
        self._scenes = None if render_mode is None else self._make_scenes()
        self._step_info = self.task.step_info  # bound once: the step's only task call

    @classmethod
    def vector_env(cls, num_envs: int = 1, **kwargs: Any) -> Any:
        """``num_envs`` environments of this env's task in one native batch (a
        :class:`~steer_env.envs.vector.SteerVectorEnv`): the task's Gymnasium
        ``vector_entry_point``, so that ``gym.make_vec(id, num_envs)`` builds it."""
        from steer_env.envs.vector import SteerVectorEnv

        return SteerVectorEnv(num_envs, cls.task, **kwargs)

    def _make_batch(self, cfg: TaskConfig) -> Batch:
        return Batch(self.task.roster(cfg), self.task.world(cfg), num_envs=1, specialise=True)

    @property
    def agent_role(self) -> str:
        """``"pursuer"`` or ``"evader"``: the learned agent's team."""
        return self.batch.team_name(int(self.batch.agent_index[0]))

    # --- documented read-only state -------------------------------------------------
    @property
    def agent_index(self) -> int:
        """Index of the learned agent in the vehicle arrays (always 0)."""
        return int(self.batch.agent_index[0])

    @property
    def positions(self) -> NDArray[np.float64]:
        """``(n, 2)`` positions of every vehicle, m (a copy)."""
        return self.batch.state.position[0].copy()

    @property
    def velocities(self) -> NDArray[np.float64]:
        """``(n, 2)`` velocities, m/s (a copy)."""
        return self.batch.state.velocity[0].copy()

    @property
    def headings(self) -> NDArray[np.float64]:
        """``(n, 2)`` unit headings (a copy)."""
        return self.batch.state.heading[0].copy()

    @property
    def is_pursuer(self) -> NDArray[np.bool_]:
        """``(n,)`` True for pursuers, False for evaders."""
        return self.batch.is_pursuer.copy()

    @property
    def max_speeds(self) -> NDArray[np.float64]:
        """``(n,)`` m/s."""
        return self.batch.vehicles["max_speed"].copy()

    @property
    def max_forces(self) -> NDArray[np.float64]:
        """``(n,)`` N."""
        return self.batch.vehicles["max_force"].copy()

    @property
    def masses(self) -> NDArray[np.float64]:
        """``(n,)`` kg."""
        return self.batch.vehicles["mass"].copy()

    @property
    def radii(self) -> NDArray[np.float64]:
        """``(n,)`` body radii, m."""
        return self.batch.vehicles["radius"].copy()

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in the current episode."""
        return int(self.batch.state.steps[0])

    # --- episode length ------------------------------------------------------------------
    @property
    def spec(self) -> EnvSpec | None:
        """The :class:`~gymnasium.envs.registration.EnvSpec` that ``gym.make`` gave this
        env, with ``max_episode_steps`` set to the task's ``time_limit``: the length of
        every episode, which this env ends itself (a termination: time is observed).

        No ``max_episode_steps`` is registered for the ids: ``gym.make`` would then wrap
        every env in a ``TimeLimit`` of that many steps without telling the env, and cut
        episodes of a longer explicit ``time_limit``. ``gym.make(id,
        max_episode_steps=N)`` adds Gymnasium's own ``TimeLimit(N)``, which truncates
        longer episodes (``truncated=True``) like any outer wrapper."""
        given = self._given_spec
        if given is None:
            return None
        steps = self.config.time_limit
        if given.max_episode_steps != steps:
            kwargs = {**given.kwargs, "time_limit": steps}
            given = dataclasses.replace(given, max_episode_steps=steps, kwargs=kwargs)
            self._given_spec = given
        return given

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        self._given_spec = value

    # --- Gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Start an episode. A ``seed`` (any non-negative int) or the first reset keys the
        episode stream; later unseeded resets continue the same stream, exactly as an env
        of ``gym.make_vec`` does when it autoresets."""
        if seed is not None:
            seed = validate_seed(seed)
        super().reset(seed=None if seed is None else _gym_seed(seed))
        keys = None
        if seed is not None:
            keys = streams.key_from_seed(seed)
        elif not self._keyed:
            # np_random is Gymnasium's (seeded from the OS, or set by the user).
            keys = streams.key_from_generator(self.np_random)
        obs = self.batch.reset(None, keys)
        self._keyed = True
        self._needs_reset = False
        if self._scenes is not None:
            self._scenes.restart((0,))
        if self.render_mode == "human":
            self.render()
        return obs[0, 0], self.task.reset_info(self.batch)

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        buf = self.batch.action_buffer
        # Fast path for the usual action, a float ndarray of 2 finite numbers; anything
        # else goes through the full validation (which also words every error).
        x = y = math.nan
        if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":
            x, y = action.tolist()
        if math.isfinite(x) and math.isfinite(y):
            buf[0, 0, 0] = x
            buf[0, 0, 1] = y
        else:
            buf[0, 0] = validate_actions(action, (2,))
        result = self.batch.step(buf, reuse=True)
        row = result.row(0, 0)
        terminated = row.terminated
        if row.done:
            self._needs_reset = True
        info = self._step_info(row, self.batch)
        if self._scenes is not None:
            self._scenes.push()
        if self.render_mode == "human":
            self.render()
        return result.observation[0, 0].copy(), row.reward, terminated, False, info

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode is None:
            name = self.spec.id if self.spec else type(self).__name__
            gym.logger.warn(
                "You are calling render method without specifying any render mode. "
                "You can specify the render_mode at initialization, e.g. "
                f'gym.make("{name}", render_mode="rgb_array")'
            )
            return None
        if self._scenes is None:  # a render_mode set after construction
            self._scenes = self._make_scenes()
        return self._scenes.frame(0)

    def get_keys_to_action(self) -> dict[tuple[int, ...], NDArray[np.float32]]:
        """The keyboard's actions for :func:`gymnasium.utils.play.play`: WASD and the
        arrow keys, alone and in diagonal pairs, to fixed ``(forward, side)`` actions of
        length 1 (:func:`steer_env.live.keys_to_action`); no key is
        :data:`steer_env.live.NOOP`, which play takes as its ``noop``."""
        from steer_env.live import keys_to_action

        return keys_to_action()

    def _make_scenes(self) -> Any:
        from steer_env.envs.scene import Scenes

        title = f"steer-env {type(self).__name__}"
        return Scenes(self.batch, self.config, self.render_mode, title, self.metadata["render_fps"])

    def close(self) -> None:
        if self._scenes is not None:
            self._scenes.close()


def module_name(task: Any) -> str:
    """A team task's env name in its metadata and window titles: its PettingZoo module's
    (``team_pursuit_v0``), or the task's name for a task registered without a module."""
    return str(task.env_module or task.name).rsplit(".", 1)[-1]
