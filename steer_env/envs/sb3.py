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


class _BatchVecEnv(VecEnv):
    """What SB3's ``VecEnv`` asks of any of our batched envs: the render metadata, frames,
    closing and attribute access. One simulation serves every index, so attributes and
    methods are those of ``vector_env`` whatever the index."""

    def __init__(self, vector_env: Any, num_envs: int) -> None:
        self.vector_env = vector_env
        super().__init__(
            num_envs, vector_env.single_observation_space, vector_env.single_action_space
        )
        self.render_mode = vector_env.render_mode
        # SB3's VecVideoRecorder reads render_fps (and render_modes) from here.
        self.metadata = {
            **self.metadata,
            "render_fps": vector_env.metadata["render_fps"],
            "render_modes": list(vector_env.metadata["render_modes"]),
        }
        self._actions: NDArray[np.float64] | None = None

    @property
    def unwrapped_env(self) -> Any:
        return self.vector_env

    def step_async(self, actions: NDArray[np.float32]) -> None:
        self._actions = validate_actions(actions, (self.num_envs, 2), "actions")

    def close(self) -> None:
        self.vector_env.close()

    def get_images(self) -> Sequence[NDArray[np.uint8] | None]:
        """One frame per *environment* of the simulation (``render()`` tiles them)."""
        if self.vector_env.render_mode is None:
            return [None] * self.vector_env.num_envs
        return list(self.vector_env.render())

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


class SB3VecEnv(_BatchVecEnv):
    """A :class:`SteerVectorEnv`'s batch driven through SB3's ``VecEnv`` API."""

    def __init__(self, vector_env: SteerVectorEnv) -> None:
        if not isinstance(vector_env, SteerVectorEnv):
            raise TypeError(f"vector_env must be a SteerVectorEnv, got {type(vector_env).__name__}")
        super().__init__(vector_env, vector_env.num_envs)
        self.batch = vector_env.batch
        self._rng = np.random.default_rng()
        self._episode_seeded = False

    def reset(self) -> NDArray[np.float32]:
        seeds = self._seeds
        if any(s is not None for s in seeds) or not self._episode_seeded:
            keys = seeds_to_keys(list(seeds), self.num_envs, self._rng)
            obs = self.batch.reset(None, keys)
            self._episode_seeded = True
        else:
            obs = self.batch.reset()
        self.vector_env.restart_frames(np.arange(self.num_envs))
        self._reset_seeds()
        self._reset_options()
        return obs[:, 0]

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
            outcomes = self.vector_env.task.final_info(result, self.batch, finished)
            for i, outcome in zip(finished.tolist(), outcomes, strict=True):
                infos[i] = {
                    # A copy: obs[i] is overwritten by the reset observation below.
                    "terminal_observation": obs[i].copy(),
                    "TimeLimit.truncated": False,
                    **outcome,
                }
            obs[finished] = self.batch.reset(finished)[finished, 0]
        self.vector_env.advance_frames()
        self.vector_env.restart_frames(finished)
        return obs, result.reward[:, 0].astype(np.float32), done.copy(), infos


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


class TeamSB3VecEnv(_BatchVecEnv):
    """Parameter sharing for the team task: one SB3 ``VecEnv`` slot per agent of ``role``.

    Wraps a :class:`~steer_env.envs.team_vector.TeamVectorEnv` of ``E`` environments
    whose ``role`` (``"pursuer"`` or ``"evader"``) has ``r`` learned agents: ``num_envs`` is
    ``E * r`` and slot ``e * r + j`` is agent ``j`` of that role in environment ``e``, so
    one policy is trained on every agent's experience. When the other role is learned too,
    ``opponent`` (anything with SB3's ``predict``, e.g. a frozen model or a mixture of
    opponents) acts for it, given ``episode_start`` on the rows of every environment whose
    episode starts (all of them after ``reset()``).

    Episode boundaries per slot (SB3's ``VecEnv`` contract, same-step reset):

    * when an environment's episode ends, each of its slots reports ``done`` with
      ``infos[slot]["terminal_observation"]``, ``"TimeLimit.truncated"`` False (the time
      limit ends the task) and ``"is_success"`` (pursuers: every evader captured; an evader:
      not captured); the observation returned is the next episode's first;
    * an agent that leaves the game while its environment plays on (a captured evader when
      ``n_evaders > 1``) reports ``done`` on that step with its terminal observation; until
      the environment's episode ends, its slot then plays a filler episode of zero
      observations and zero rewards (its actions are ignored) that ends, ``done`` with
      ``infos[slot]["departed"] = True``, when the environment's does. Pursuers never
      leave early, nor does the only evader of the default task (its capture ends the
      episode), so the default training has no filler steps.
    """

    def __init__(self, vector_env: Any, role: str = "pursuer", opponent: Any = None) -> None:
        from steer_env.envs.team_vector import TeamVectorEnv

        if not isinstance(vector_env, TeamVectorEnv):
            raise TypeError(f"vector_env must be a TeamVectorEnv, got {type(vector_env).__name__}")
        code = vector_env.batch.team_code(role, "role")
        self.role = role
        self.slots = np.flatnonzero(vector_env.agent_team == code)
        self.others = np.flatnonzero(vector_env.agent_team != code)
        if self.slots.size == 0:
            raise ValueError(
                f"role {role!r} is not learned in this env (learned="
                f"{vector_env.config.learned!r}): build it with learned={role + 's'!r} or 'both'"
            )
        if self.others.size and opponent is None:
            raise ValueError(
                "both roles are learned (learned='both'): pass opponent=<a policy with "
                "predict()> to act for the other role"
            )
        self.opponent = opponent
        self.n_envs_inner = vector_env.num_envs
        self.per_env = int(self.slots.size)
        super().__init__(vector_env, self.n_envs_inner * self.per_env)
        self._obs: NDArray[np.float32] | None = None  # all agents' last observations
        self._seed: int | None = None
        # Environments whose next step is the first of an episode (the opponent's
        # episode_start).
        self._starting = np.ones(self.n_envs_inner, dtype=bool)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds per *environment*: environment ``e`` (slots ``e*r .. e*r+r-1``) starts like
        ``team_pursuit_v0.parallel_env(...).reset(seed=seed + e)`` at the next reset."""
        if seed is None:
            seed = int(np.random.default_rng().integers(2**32))
        self._seed = int(seed)
        return [self._seed + e for e in range(self.n_envs_inner) for _ in range(self.per_env)]

    def _slots_of(self, array: NDArray) -> NDArray:
        """``(E, k, ...)`` -> ``(E * r, ...)``: this role's agents, environment-major."""
        return array[:, self.slots].reshape(self.num_envs, *array.shape[2:])

    def reset(self) -> NDArray[np.float32]:
        obs, _ = self.vector_env.reset(seed=self._seed)
        self._seed = None
        self._reset_options()
        self._obs = obs
        self._starting[:] = True
        return self._slots_of(obs).copy()

    def step_wait(
        self,
    ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        if self._actions is None or self._obs is None:
            raise RuntimeError("step_wait() called without reset() and step_async()")
        venv = self.vector_env
        E, r = self.n_envs_inner, self.per_env
        playing = venv.in_game()
        full = np.zeros((E, venv.n_agents, 2))
        full[:, self.slots] = self._actions.reshape(E, r, 2)
        self._actions = None
        if self.others.size:
            other_obs = self._obs[:, self.others].reshape(-1, venv.obs_dim)
            starting = np.repeat(self._starting, self.others.size)
            other_act, _ = self.opponent.predict(
                other_obs, episode_start=starting, deterministic=True
            )
            full[:, self.others] = np.asarray(other_act, dtype=np.float64).reshape(
                E, self.others.size, 2
            )
        full[~playing] = 0.0
        obs, rewards, terminations, _, info = venv.step(full)
        done_env = info["done"]
        self._starting = done_env.copy()
        was_playing = self._slots_of(playing)
        left = self._slots_of(terminations) & was_playing  # left the game on this step
        slot_env_done = np.repeat(done_env, r)
        dones = left | slot_env_done
        slot_obs = self._slots_of(obs).copy()
        slot_obs[~was_playing] = 0.0  # filler slots observe nothing
        rew = self._slots_of(rewards).astype(np.float32)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            success = self._slots_of(venv.task.agent_success(info, self.role))
            for s in np.flatnonzero(dones).tolist():
                entry: dict[str, Any] = {
                    "terminal_observation": slot_obs[s].copy(),
                    "TimeLimit.truncated": False,
                }
                if was_playing[s]:
                    entry["is_success"] = bool(success[s])
                else:
                    entry["departed"] = True
                infos[s] = entry
        if done_env.any():
            finished = np.flatnonzero(done_env)
            new_obs, _ = venv.reset(options={"reset_mask": done_env})
            obs = obs.copy()
            obs[finished] = new_obs[finished]
            restarted = np.repeat(done_env, r)
            slot_obs[restarted] = self._slots_of(obs)[restarted]
        # Agents that left keep observing zeros until their environment restarts.
        still_out = ~self._slots_of(venv.in_game())
        slot_obs[still_out] = 0.0
        self._obs = obs
        return slot_obs, rew, dones, infos


def make_team_sb3_vec_env(
    n_envs: int,
    seed: int | None = None,
    role: str = "pursuer",
    opponent: Any = None,
    task: Any = "team_pursuit",
    **kwargs: Any,
) -> TeamSB3VecEnv:
    """A :class:`TeamSB3VecEnv` over ``n_envs`` environments of a team task (``task``: its
    registry entry or name) in its native batch (``kwargs``: the
    task's configuration, e.g. ``learned="evaders"``), seeded so that environment ``e``
    starts like the task's ``parallel_env(**kwargs).reset(seed=seed + e)``."""
    import importlib

    from steer_env.envs.team_vector import TeamVectorEnv
    from steer_env.tasks import REGISTRY

    entry = REGISTRY[task] if isinstance(task, str) else task
    if entry.env_module is not None:  # the task's own batch (its class and metadata)
        batch = importlib.import_module(entry.env_module).vector_env(n_envs, **kwargs)
    else:
        batch = TeamVectorEnv(n_envs, task=entry, **kwargs)
    venv = TeamSB3VecEnv(batch, role, opponent)
    if seed is not None:
        venv.seed(seed)
    return venv
