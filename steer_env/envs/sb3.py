"""stable-baselines3 ``VecEnv`` over the native batched simulation.

SB3 does not accept Gymnasium ``VectorEnv`` objects, and its own ``DummyVecEnv`` steps
envs one by one in Python. :class:`SB3VecEnv` exposes one batched
:class:`~steer_env.engine.batch.Batch` through SB3's ``VecEnv`` contract: actions
``(n_envs, 2)``, same-step reset of finished envs with ``infos[i]["terminal_observation"]``,
``"TimeLimit.truncated"`` (always ``False``: the time limit ends the task, it does not cut
it), and ``"is_success"`` on every final step (so ``EvalCallback`` reports success rates).
``render()`` tiles every environment's frame. Requires ``pip install "steer-env[train]"``.

>>> from steer_env.envs.sb3 import make_sb3_vec_env
>>> venv = make_sb3_vec_env("steer_env/Pursuit-v0", n_envs=4, seed=0)
>>> venv.reset().shape
(4, 16)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

import steer_env  # noqa: F401  (registers the ids)
from steer_env.envs.base import validate_actions
from steer_env.envs.vector import SteerVectorEnv, seeds_to_keys


class SB3VecEnv(VecEnv):
    """A :class:`SteerVectorEnv`'s batch driven through SB3's ``VecEnv`` API."""

    def __init__(self, vector_env: SteerVectorEnv) -> None:
        if not isinstance(vector_env, SteerVectorEnv):
            raise TypeError(f"vector_env must be a SteerVectorEnv, got {type(vector_env).__name__}")
        self.vector_env = vector_env
        self.batch = vector_env.batch
        super().__init__(
            vector_env.num_envs,
            vector_env.single_observation_space,
            vector_env.single_action_space,
        )
        self.render_mode = vector_env.render_mode
        # SB3's VecVideoRecorder reads render_fps (and render_modes) from here.
        self.metadata = {
            **self.metadata,
            "render_fps": vector_env.metadata["render_fps"],
            "render_modes": list(vector_env.metadata["render_modes"]),
        }
        self._actions: NDArray[np.float64] | None = None
        self._rng = np.random.default_rng()
        self._episode_seeded = False

    @property
    def unwrapped_env(self) -> SteerVectorEnv:
        return self.vector_env

    def reset(self) -> NDArray[np.float32]:
        seeds = self._seeds
        if any(s is not None for s in seeds) or not self._episode_seeded:
            keys = seeds_to_keys(list(seeds), self.num_envs, self._rng)
            obs = self.batch.reset(None, keys)
            self._episode_seeded = True
        else:
            obs = self.batch.reset()
        self._reset_seeds()
        self._reset_options()
        return obs[:, 0]

    def step_async(self, actions: NDArray[np.float32]) -> None:
        self._actions = validate_actions(actions, (self.num_envs, 2), "actions")

    def step_wait(
        self,
    ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        result = self.batch.step(self._actions.reshape(self.num_envs, 1, 2))
        self._actions = None
        done = result.done
        obs = result.observation[:, 0]
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        finished = np.flatnonzero(done)
        if finished.size:
            captured = ((result.captures > 0) | result.captured[:, 0])[finished].tolist()
            steps = self.batch.state.steps[finished].tolist()
            for k, i in enumerate(finished.tolist()):
                infos[i] = {
                    # A copy: obs[i] is overwritten by the reset observation below.
                    "terminal_observation": obs[i].copy(),
                    "TimeLimit.truncated": False,
                    "is_success": self.vector_env.task.is_success(captured[k]),
                    "capture_step": steps[k] if captured[k] else -1,
                }
            obs[finished] = self.batch.reset(finished)[finished, 0]
        return obs, result.reward[:, 0].astype(np.float32), done.copy(), infos

    def close(self) -> None:
        self.vector_env.close()

    def get_images(self) -> Sequence[NDArray[np.uint8] | None]:
        """One frame per environment (``render()`` tiles them)."""
        if self.vector_env.render_mode is None:
            return [None] * self.num_envs
        return list(self.vector_env.render())

    # --- attribute access: one simulation serves every index ---------------------------
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vector_env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.vector_env, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        result = getattr(self.vector_env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def make_sb3_vec_env(env_id: str, n_envs: int, seed: int | None = None, **kwargs: Any) -> SB3VecEnv:
    """An :class:`SB3VecEnv` of ``n_envs`` environments of ``env_id`` (``"steer_env/Pursuit-v0"``
    or ``"steer_env/Evasion-v0"``, any ``gym.make`` keyword arguments), seeded so that env
    ``i`` starts like ``gym.make(env_id).reset(seed=seed + i)``."""
    vector_env = gym.make_vec(
        env_id, num_envs=n_envs, vectorization_mode="vector_entry_point", **kwargs
    )
    venv = SB3VecEnv(vector_env.unwrapped)
    if seed is not None:
        venv.seed(seed)
    return venv
