"""Native batched vector environments: ``gym.make_vec("steer_env/Pursuit-v0", num_envs=N)``.

One :class:`~steer_env.engine.batch.Batch` steps all ``N`` environments with one compiled
call (no Python loop over environments). Seeded with ``reset(seed=s)``, environment ``i``
follows exactly the trajectory of ``gym.make(id).reset(seed=s + i)`` given the same
actions. All three of Gymnasium's autoreset modes are supported
(``gym.make_vec(id, n, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)``):

* ``NEXT_STEP`` (default): the step after an environment's episode ends resets it
  (ignoring its action) and returns its first observation and reset infos with reward 0;
* ``SAME_STEP``: an environment whose episode ends is reset within the same step; the
  observation and infos returned are the new episode's (as its ``reset()`` gives them),
  the last ones are in ``infos["final_obs"]`` and ``infos["final_info"]``;
* ``DISABLED``: nothing resets by itself; call ``reset(options={"reset_mask": mask})``
  before stepping an environment whose episode ended (stepping it raises otherwise).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from steer_env.engine.batch import Batch
from steer_env.envs import streams
from steer_env.envs.base import (
    RENDER_FPS,
    validate_actions,
    validate_render_mode,
    validate_seed,
)
from steer_env.tasks import Task, get_task
from steer_env.tasks.config import TIME_LIMIT, check_num_envs, check_number


def seeds_to_keys(
    seed: int | list[int | None] | None, num_envs: int, rng: np.random.Generator
) -> NDArray[np.uint64]:
    """Stream keys for ``num_envs`` environments: ``seed + i`` for an int, one per entry for
    a list (``None`` entries drawn from ``rng``), all drawn from ``rng`` for ``None``.
    Seeds may be any non-negative integers; a 1-D integer numpy array is a list of them."""
    if seed is None:
        return streams.key_from_generator(rng, num_envs)
    if isinstance(seed, np.ndarray) and seed.ndim == 1 and seed.dtype.kind in "iu":
        seed = seed.tolist()
    if not isinstance(seed, list | tuple):
        seed = validate_seed(seed)
        return np.concatenate([streams.key_from_seed(seed + i) for i in range(num_envs)])
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"seed must be an int or a list of {num_envs} seeds, got {len(seeds)}")
    keys = streams.key_from_generator(rng, num_envs)
    for i, s in enumerate(seeds):
        if s is not None:
            keys[i] = streams.key_from_seed(validate_seed(s, f"seed[{i}]"))[0]
    return keys


def reset_envs(
    batch: Batch,
    options: dict[str, Any] | None,
    seed: int | list[int | None] | None,
    keyed: NDArray[np.bool_],
    rng: np.random.Generator,
) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
    """New episodes in every environment of ``batch``, or those in ``options["reset_mask"]``:
    keyed by ``seed`` (:func:`seeds_to_keys`) when given; otherwise environments never keyed
    (``keyed``, updated) draw a key from ``rng`` and the others go on with their streams.
    Returns the reset environments and the observations of all ``(E, k, obs_dim)``."""
    num_envs = batch.num_envs
    mask = np.ones(num_envs, dtype=bool)
    if options and "reset_mask" in options:
        mask = np.asarray(options["reset_mask"], dtype=bool)
        if mask.shape != (num_envs,):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({num_envs},), got "
                f"shape {mask.shape}"
            )
    envs = np.flatnonzero(mask)
    obs = batch.observe()
    if seed is not None:
        batch.reset(envs, seeds_to_keys(seed, num_envs, rng)[envs], obs)
    else:
        new = envs[~keyed[envs]]
        if new.size:
            batch.reset(new, streams.key_from_generator(rng, new.size), obs)
        batch.reset(envs[keyed[envs]], None, obs)
    keyed[envs] = True
    return envs, obs


def restarted_infos(
    step: dict[str, NDArray], reset: dict[str, NDArray], restarted: NDArray[np.intp]
) -> dict[str, NDArray]:
    """``step``'s infos with the rows of the environments ``restarted`` after this step
    (SAME_STEP autoreset) taken from ``reset``, the infos of the state they were reset to,
    as a single env's ``reset()`` returns them."""
    infos: dict[str, NDArray] = {}
    for name, value in step.items():
        value = np.array(value)  # a copy: the final step's infos keep theirs
        value[restarted] = np.asarray(reset[name])[restarted]
        infos[name] = value
    return infos


def with_masks(values: dict[str, NDArray], num_envs: int) -> dict[str, NDArray]:
    """Gymnasium's vector infos: each ``(E,)`` value with its ``_name`` mask, all True (every
    key holds a value for every environment on every step)."""
    every = np.ones(num_envs, dtype=bool)
    infos: dict[str, NDArray] = {}
    for name, value in values.items():
        infos[name] = value
        infos[f"_{name}"] = every
    return infos


class SteerVectorEnv(VectorEnv):
    """``num_envs`` environments of one single-agent task in one batched simulation.

    Spaces, rewards and episode ends are those of the single env (see
    :class:`~steer_env.envs.pursuit.PursuitEnv` and :class:`~steer_env.envs.evasion.EvasionEnv`);
    observations are ``(num_envs, obs_dim)`` float32 and actions ``(num_envs, 2)``.
    ``infos`` follow Gymnasium's vector convention (arrays plus ``_name`` masks) with the
    single env's keys, flat and on every step from ``reset`` on: ``distance``,
    ``reward_capture``, ``reward_escape``, ``reward_shaping``, ``is_success`` (the outcome
    on an environment's final step, False before) and ``capture_step`` (-1 unless it
    ended by a capture). ``max_episode_steps=N`` truncates episodes still running after
    ``N`` steps, as Gymnasium's ``TimeLimit`` does to each single env.

    The batched state is readable as ``batch`` (a :class:`Batch`: ``batch.state.position``
    is ``(num_envs, n, 2)``). ``render_mode="rgb_array"``: ``render()`` returns one frame
    per environment (what Gymnasium's vector ``RecordVideo`` and ``HumanRendering`` take);
    ``"human"``: every environment is shown, tiled, in one window after each step.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - Gymnasium reads a plain dict
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["rgb_array", "human"],
        "render_fps": RENDER_FPS,
    }

    def __init__(
        self,
        num_envs: int,
        task: Task | str,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **kwargs: Any,
    ) -> None:
        check_num_envs(num_envs)
        self.task = get_task(task) if isinstance(task, str) else task
        self.config = self.task.config(**kwargs)
        #: Gymnasium's outer time limit, as ``gym.make(id, max_episode_steps=N)`` adds it to
        #: each single env: an episode still running after ``N`` steps is truncated.
        self.max_episode_steps = (
            None
            if max_episode_steps is None
            else check_number("max_episode_steps", max_episode_steps, *TIME_LIMIT)
        )
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            modes = ", ".join(m.value for m in AutoresetMode)
            raise ValueError(
                f"autoreset_mode must be one of {modes}, got {autoreset_mode!r}"
            ) from None
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.num_envs = int(num_envs)
        self.batch = Batch(
            self.task.roster(self.config),
            self.task.world(self.config),
            self.num_envs,
            specialise=True,
        )
        self.single_action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.single_observation_space = spaces.Box(*self.batch.observation_bounds, dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # episode over, not yet reset
        self._keyed = np.zeros(self.num_envs, dtype=bool)  # streams keyed by a reset
        # Renderers and trails (pygame is imported by the first frame, not here).
        self._scenes = None
        if render_mode is not None:
            from steer_env.envs.scene import Scenes

            title = f"steer-env {self.task.env_id}"
            self._scenes = Scenes(self.batch, self.config, "rgb_array", title, RENDER_FPS)
        self._window: Any = None

    @property
    def agent_role(self) -> str:
        return self.batch.team_name(int(self.batch.agent_index[0]))

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Reset all environments, or those in ``options["reset_mask"]`` (a bool array)."""
        if seed is not None and not isinstance(seed, list | tuple | np.ndarray):
            seed = validate_seed(seed)
        super().reset(seed=seed % 2**63 if isinstance(seed, int) else None)
        envs, obs = reset_envs(self.batch, options, seed, self._keyed, self.np_random)
        self._ended[envs] = False
        self.restart_frames(envs)
        if self.render_mode == "human":
            self.render()
        return obs[:, 0], with_masks(self.task.vector_reset_info(self.batch), self.num_envs)

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.float32],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        if not self.batch.started:
            raise ResetNeeded("Cannot call step() before calling reset()")
        act = validate_actions(actions, (self.num_envs, 2), "actions").reshape(self.num_envs, 1, 2)
        ended = self._ended
        mode = self.autoreset_mode
        active = None
        if ended.any():
            if mode == AutoresetMode.DISABLED:
                raise ResetNeeded(
                    f"environments {np.flatnonzero(ended).tolist()} ended: reset them with "
                    "reset(options={'reset_mask': mask}) before stepping (autoreset_mode is "
                    "DISABLED)"
                )
            # NEXT_STEP: these envs start a new episode instead of stepping.
            restart = np.flatnonzero(ended)
            self.batch.reset(restart)
            self.restart_frames(restart)
            active = ~ended
        result = self.batch.step(act, active)
        obs = result.observation[:, 0]
        terminated = result.terminated[:, 0]
        truncated = self._truncated(result.done)
        done = result.done | truncated
        # (An environment restarted instead of stepped reports its reset infos: the step's
        # results of an inactive environment describe the state it is in.)
        values = self.task.vector_step_info(result, self.batch, result.done)
        infos = with_masks(values, self.num_envs)
        if mode == AutoresetMode.SAME_STEP and done.any():
            finished = np.flatnonzero(done)
            final_obs = np.empty(self.num_envs, dtype=object)
            for i in finished.tolist():
                final_obs[i] = obs[i].copy()
            final_info = infos
            obs = obs.copy()
            obs[finished] = self.batch.reset(finished)[finished, 0]
            # As Gymnasium's SyncVectorEnv: the final step's infos in final_info, and the
            # new episode's reset infos in the finished environments' rows.
            reset = self.task.vector_reset_info(self.batch)
            infos = with_masks(restarted_infos(values, reset, finished), self.num_envs)
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = final_info
            infos["_final_info"] = done
            self._ended[:] = False
            self.advance_frames()
            self.restart_frames(finished)
        else:
            self._ended = done
            self.advance_frames(active)
        if self.render_mode == "human":
            self.render()
        return obs, result.reward[:, 0], terminated, truncated, infos

    def restart_frames(self, envs: NDArray[np.intp]) -> None:
        """The rendered trails of ``envs`` start again (new episodes there): for an adapter
        that resets the batch itself (:class:`~steer_env.envs.sb3.SB3VecEnv`)."""
        if self._scenes is not None:
            self._scenes.restart(np.asarray(envs).tolist())

    def advance_frames(self, stepped: NDArray[np.bool_] | None = None) -> None:
        """The rendered trails take the positions of a step (of the ``stepped``
        environments, all by default; before :meth:`restart_frames` of those that start
        again): also for an adapter that steps the batch itself
        (:class:`~steer_env.envs.sb3.SB3VecEnv`)."""
        if self._scenes is not None:
            self._scenes.push(stepped)

    def _truncated(self, terminal: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """``(E,)``: episodes cut by ``max_episode_steps`` on this step (not ended by the
        task itself; environments that restarted instead of stepping are at step 0)."""
        if self.max_episode_steps is None:
            return np.zeros(self.num_envs, dtype=bool)
        return (self.batch.state.steps >= self.max_episode_steps) & ~terminal

    def render(self) -> tuple[NDArray[np.uint8], ...] | None:
        """One ``(H, W, 3)`` frame per environment (as ``SyncVectorEnv`` returns them); in
        ``"human"`` mode, show them tiled in a window and return None."""
        if not self.batch.started:
            raise ResetNeeded("Cannot call render() before calling reset()")
        if self.render_mode is None:
            return None
        from steer_env import rendering

        frames = [self._scenes.frame(i) for i in range(self.num_envs)]
        if self.render_mode == "human":
            if self._window is None:
                self._window = rendering.FrameWindow(f"steer-env {self.task.env_id}", RENDER_FPS)
            self._window.show(rendering.tile_frames(frames))
            return None
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        if self._scenes is not None:
            self._scenes.close()
        if self._window is not None:
            self._window.close()
            self._window = None

    def __getstate__(self) -> dict[str, Any]:
        # A pygame window cannot be pickled: a copy opens its own (Scenes drop theirs).
        state = self.__dict__.copy()
        state["_window"] = None
        return state


def make_vector(task: str, num_envs: int = 1, **kwargs: Any) -> SteerVectorEnv:
    """A native vector env of the registered task ``task`` (a name or an id)."""
    return SteerVectorEnv(num_envs, task, **kwargs)


# Each id's vector entry point lives in its env module (``steer_env.envs.pursuit:
# make_pursuit_vector``); these names stay importable here for specs saved with them.
def make_pursuit_vector(num_envs: int = 1, **kwargs: Any) -> SteerVectorEnv:
    """``steer_env/Pursuit-v0``'s native vector env."""
    return make_vector("pursuit", num_envs, **kwargs)


def make_evasion_vector(num_envs: int = 1, **kwargs: Any) -> SteerVectorEnv:
    """``steer_env/Evasion-v0``'s native vector env."""
    return make_vector("evasion", num_envs, **kwargs)


__all__ = ["SteerVectorEnv", "make_evasion_vector", "make_pursuit_vector", "make_vector"]
