"""Native batched vector environments: ``gym.make_vec("steer_env/Pursuit-v0", num_envs=N)``.

One :class:`~steer_env.envs.simulation.Simulation` steps all ``N`` environments with array
operations (no Python loop over environments). Autoreset follows Gymnasium 1.x's
``NEXT_STEP`` mode: the step after an environment terminates or truncates resets it
(ignoring its action) and returns its first observation with reward 0. Seeded with
``reset(seed=s)``, environment ``i`` follows exactly the trajectory of
``gym.make(id).reset(seed=s + i)`` given the same actions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from steer_env.envs import streams
from steer_env.envs.base import RENDER_FPS, validate_actions, validate_render_mode
from steer_env.envs.config import TaskConfig, make_config
from steer_env.envs.evasion import EvasionEnv
from steer_env.envs.pursuit import PursuitEnv
from steer_env.envs.simulation import Simulation, StepResult


def seeds_to_keys(
    seed: int | list[int | None] | None, num_envs: int, rng: np.random.Generator
) -> NDArray[np.uint64]:
    """Stream keys for ``num_envs`` environments: ``seed + i`` for an int, one per entry for
    a list (``None`` entries drawn from ``rng``), all drawn from ``rng`` for ``None``."""
    if seed is None:
        return streams.key_from_generator(rng, num_envs)
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        return streams.key_from_seed(np.arange(num_envs, dtype=np.uint64) + np.uint64(seed))
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"seed must be an int or a list of {num_envs} seeds, got {len(seeds)}")
    keys = streams.key_from_generator(rng, num_envs)
    for i, s in enumerate(seeds):
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0:
                raise ValueError(f"seed[{i}] must be a non-negative integer or None, got {s!r}")
            keys[i] = streams.key_from_seed(s)[0]
    return keys


class SteerVectorEnv(VectorEnv):
    """``num_envs`` pursuit or evasion environments in one batched simulation.

    Spaces, rewards and episode ends are those of the single env (see
    :class:`~steer_env.envs.pursuit.PursuitEnv` and :class:`~steer_env.envs.evasion.EvasionEnv`);
    observations are ``(num_envs, obs_dim)`` float32 and actions ``(num_envs, 2)``.
    ``infos`` follow Gymnasium's vector convention (arrays plus ``_name`` masks):
    ``distance`` and ``reward_terms`` every step; ``is_success`` and ``capture_step``
    (``-1`` when there was no capture) on final steps only.

    The batched state is readable as ``sim`` (a :class:`Simulation`: ``position``,
    ``velocity``, ``heading`` are ``(num_envs, n, 2)``; per-vehicle limits ``(n,)``).
    ``render_mode="rgb_array"`` renders environment 0.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - Gymnasium reads a plain dict
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["rgb_array"],
        "render_fps": RENDER_FPS,
    }

    def __init__(
        self,
        num_envs: int,
        agent_role: str,
        default_config: TaskConfig,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        # gym.make_vec passes the registered max_episode_steps; an explicit time_limit wins.
        if max_episode_steps is not None and "time_limit" not in kwargs:
            kwargs["time_limit"] = max_episode_steps
        self.config = make_config(default_config, kwargs)
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.num_envs = int(num_envs)
        self.sim = Simulation(self.config, agent_role, self.num_envs)
        self.single_action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.single_observation_space = spaces.Box(
            -1.0, 1.0, shape=(self.sim.obs_dim,), dtype=np.float32
        )
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._any_autoreset = False  # self._autoreset.any(), kept to skip a numpy call per step
        self._started = False
        self._keyed = np.zeros(self.num_envs, dtype=bool)  # streams keyed by a reset
        self._renderer = None
        self._trails = None

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Reset all environments, or those in ``options["reset_mask"]`` (a bool array)."""
        super().reset(seed=seed if isinstance(seed, int | np.integer) else None)
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask'] must have shape ({self.num_envs},)")
        envs = np.flatnonzero(mask)
        if seed is not None:
            self.sim.reset_envs(envs, seeds_to_keys(seed, self.num_envs, self.np_random)[envs])
        else:
            # Envs never keyed get a key from np_random; the others go on with their streams.
            new = envs[~self._keyed[envs]]
            if new.size:
                self.sim.reset_envs(new, streams.key_from_generator(self.np_random, new.size))
            self.sim.reset_envs(envs[self._keyed[envs]])
        self._keyed[envs] = True
        self._autoreset[envs] = False
        self._any_autoreset = bool(self._autoreset.any())
        self._started = True
        if self._trails is not None:
            self._trails.reset(self.sim.position[0])
        every = np.ones(self.num_envs, dtype=bool)
        return self.sim.observe(), {
            "distance": self.sim.nearest_opponent_distance(),
            "_distance": every,
        }

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.float32],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        if not self._started:
            raise ResetNeeded("Cannot call step() before calling reset()")
        act = validate_actions(actions, (self.num_envs, 2))
        resetting = np.flatnonzero(self._autoreset) if self._any_autoreset else None
        if resetting is not None:
            saved_counter = self.sim.counter[resetting]  # fancy indexing: a copy
        result = self.sim.step(act)
        obs = result.observation
        if resetting is not None:
            # These envs ended last step: they start a new episode instead of stepping, with
            # their random streams exactly where a single env's reset() would find them.
            self.sim.counter[resetting] = saved_counter
            self.sim.reset_envs(resetting)
            for arr in (
                result.reward,
                result.reward_capture,
                result.reward_escape,
                result.reward_shaping,
            ):
                arr[resetting] = 0.0
            result.terminated[resetting] = False
            result.truncated[resetting] = False
            result.captured[resetting] = False
            self.sim.nearest_opponent_distance(resetting, out=result.distance)
            self.sim.observe(resetting, out=obs)
        done = result.terminated | result.truncated
        self._autoreset = done
        self._any_autoreset = bool(done.any())
        infos = self._infos(result, done, self._any_autoreset)
        if self._trails is not None:
            self._trails.push(self.sim.position[0])
        return (obs, result.reward, result.terminated, result.truncated, infos)

    def _infos(self, result: StepResult, done: NDArray[np.bool_], any_done: bool) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {
            "distance": result.distance,
            "_distance": every,
            "reward_terms": {
                "capture": result.reward_capture,
                "escape": result.reward_escape,
                "shaping": result.reward_shaping,
                "_capture": every,
                "_escape": every,
                "_shaping": every,
            },
            "_reward_terms": every,
        }
        if any_done:
            captured = result.captured
            success = captured if self.sim.agent_role == "pursuer" else ~captured
            infos["is_success"] = success & done
            infos["_is_success"] = done
            infos["capture_step"] = np.where(done, self.sim.capture_step, -1)
            infos["_capture_step"] = done
        return infos

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode is None:
            return None
        from steer_env import rendering
        from steer_env.envs import scene

        if self._renderer is None:
            h = self.config.half_size
            self._renderer = rendering.Renderer(
                (-h, -h, h, h), render_mode=self.render_mode, fps=RENDER_FPS
            )
            self._trails = rendering.Trails(scene.TRAIL_LENGTH)
            self._trails.reset(self.sim.position[0])
        return scene.draw(self._renderer, self.sim, 0, self._trails)

    def close_extras(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def make_pursuit_vector(num_envs: int = 1, **kwargs: Any) -> SteerVectorEnv:
    """``vector_entry_point`` of ``steer_env/Pursuit-v0``."""
    return SteerVectorEnv(num_envs, "pursuer", PursuitEnv.default_config, **kwargs)


def make_evasion_vector(num_envs: int = 1, **kwargs: Any) -> SteerVectorEnv:
    """``vector_entry_point`` of ``steer_env/Evasion-v0``."""
    return SteerVectorEnv(num_envs, "evader", EvasionEnv.default_config, **kwargs)


__all__ = ["Simulation", "SteerVectorEnv", "make_evasion_vector", "make_pursuit_vector"]
