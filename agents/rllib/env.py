"""steer-env as RLlib sees it: the env creator, per-runner seeding and episode metrics.

This module is imported on every Ray worker that hosts an RLlib ``EnvRunner`` (by
reference, through the creator and callback functions), so it imports neither ray nor
torch at module level.

**Vectorization.** With ``gym_env_vectorize_mode="vector_entry_point"`` RLlib 2.60's
``SingleAgentEnvRunner.make_env`` calls the registered creator with
``{**env_config, "num_envs": N}`` and gets back one :class:`~steer_env.envs.vector.SteerVectorEnv`
that steps all ``N`` envs in one batched simulation (:func:`make_env` returns it inside a
:class:`SeededVectorEnv`). In ``"sync"`` mode RLlib calls the creator without ``num_envs``
and Gymnasium's ``SyncVectorEnv`` loops over ``N`` single envs (kept for the benchmark).

**Seeding.** RLlib 2.60 resets runner ``w``'s vector env once, with the int seed
``config.seed + w``; a native vector env seeded ``s`` seeds its env ``i`` with ``s + i``, so
env ``i + 1`` of runner ``w`` would replay env ``i`` of runner ``w + 1`` (the overlap of
SB3#2268). And the creator cannot see the runner index itself: RLlib passes it
``env_ctx | {"num_envs": N}``, which is a plain dict without ``worker_index``. So the
``on_environment_created`` callback (:func:`on_environment_created`), which does receive the
``EnvContext``, gives the runner's :class:`SeededVectorEnv` its seed plan, and that env
replaces RLlib's int seed with one seed per sub-env (:func:`env_seeds`)::

    seed of env i on runner w = SeedSequence([seed, session, w]).generate_state(N, uint64)[i]

``seed`` is ``--seed``, ``session`` counts resumed sessions (0 for a new run, so a resumed
run does not replay its first episodes), ``w`` is RLlib's ``worker_index`` (1 ..
``num_env_runners``; 0 for the driver's local runner). The 64-bit seeds of different runners
and sub-envs are distinct (checked per runner; a collision between runners has probability
about ``(runners * N)**2 / 2**65``) and almost surely miss the small seeds of the
evaluation (500,000 + seed) and of the comparison (1,000,000 + k). A restarted runner keeps
its ``worker_index`` and so its seeds. Later resets are RLlib's autoresets, which continue
each sub-env's own random stream.

In ``"sync"`` mode (Gymnasium's ``SyncVectorEnv`` of single envs and RLlib's stock
``SingleAgentEnvRunner``: the benchmarks' stock side) the callback gives the runner the
same plan as the seed of its first reset (``SyncVectorEnv`` seeds its env ``i`` with the
list's item ``i``), so both modes start every sub-env from the same state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorWrapper

#: Name the creator is registered under with ``ray.tune.registry.register_env``.
RLLIB_ENV_NAME = "steer_env_rllib"
#: Keys of ``env_config`` that are ours, not keyword arguments of the env.
CONFIG_KEYS = ("env_id", "seed", "session", "num_envs")


def env_seeds(seed: int, session: int, worker_index: int, num_envs: int) -> list[int]:
    """The reset seed of each of the ``num_envs`` sub-envs of runner ``worker_index`` (the
    formula in the module docstring)."""
    ss = np.random.SeedSequence([int(seed), int(session), int(worker_index)])
    return [int(x) for x in ss.generate_state(int(num_envs), dtype=np.uint64)]


class SeededVectorEnv(VectorWrapper):
    """A steer-env vector env that, once given a seed plan (:meth:`set_seed_plan`), answers
    any seeded ``reset`` with its own per-sub-env seeds.

    Infos keep only what RLlib uses and the episode metrics need (``is_success`` and
    ``capture_step``, on steps where an episode ends, masked to those sub-envs): RLlib
    converts every step's info dict into one dict per sub-env and stores them in its
    episodes, and the per-step ``distance`` and reward-term arrays would only add Python
    work per sub-env.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.seed_plan: list[int] | None = None
        self.worker_index: int | None = None

    def set_seed_plan(self, seed: int, session: int, worker_index: int) -> list[int]:
        seeds = env_seeds(seed, session, worker_index, self.num_envs)
        if len(set(seeds)) != len(seeds):  # 64-bit draws: practically impossible
            raise RuntimeError(f"duplicate sub-env seeds on runner {worker_index}")
        self.seed_plan, self.worker_index = seeds, int(worker_index)
        return seeds

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None and self.seed_plan is not None:
            seed = list(self.seed_plan)
        obs, _ = self.env.reset(seed=seed, options=options)
        return obs, {}

    def step(self, actions: Any) -> Any:
        # Clip to the action box here, in one array operation, as stable-baselines3 does;
        # RLlib's own per-sub-env unsquash/clip connector is switched off (see
        # agents.rllib.config) because it costs more than the whole simulation.
        obs, reward, terminated, truncated, info = self.env.step(np.clip(actions, -1.0, 1.0))
        ended = terminated | truncated
        keep: dict[str, Any] = {}
        if ended.any():
            for name in ("is_success", "capture_step"):
                keep[name] = info[name]
                keep[f"_{name}"] = ended
        return obs, reward, terminated, truncated, keep


def env_kwargs(config: dict[str, Any]) -> dict[str, Any]:
    """The env's own keyword arguments in an RLlib ``env_config``."""
    return {k: v for k, v in dict(config).items() if k not in CONFIG_KEYS}


def make_env(config: dict[str, Any]) -> Any:
    """RLlib env creator: the native vector env of ``config["env_id"]`` when RLlib asks for
    ``num_envs`` (``vector_entry_point`` mode), a single env otherwise (``sync`` mode)."""
    import gymnasium as gym

    import steer_env  # noqa: F401  (registers the env ids on this worker)

    env_id = config["env_id"]
    if "num_envs" in config:
        venv = gym.make_vec(
            env_id,
            num_envs=int(config["num_envs"]),
            vectorization_mode="vector_entry_point",
            **env_kwargs(config),
        )
        return SeededVectorEnv(venv)
    return gym.make(env_id, **env_kwargs(config))


def find_seeded(env: Any) -> SeededVectorEnv | None:
    """The :class:`SeededVectorEnv` inside RLlib's wrappers, if any."""
    while env is not None:
        if isinstance(env, SeededVectorEnv):
            return env
        env = getattr(env, "env", None)
    return None


def on_environment_created(*, env_runner: Any, env_context: Any, **kwargs: Any) -> None:
    """RLlib callback (``config.callbacks(on_environment_created=...)``): give the runner's
    vector env its seed plan. Runs on the runner, right after ``make_env`` and before the
    first (seeded) reset."""
    cfg = dict(env_context)
    seed, session = int(cfg.get("seed", 0)), int(cfg.get("session", 0))
    worker_index = int(getattr(env_context, "worker_index", 0) or 0)
    seeded = find_seeded(getattr(env_runner, "env", None))
    if seeded is not None:
        seeded.set_seed_plan(seed, session, worker_index)
    elif getattr(env_runner, "_seed", None) is not None:
        # Sync mode: RLlib 2.60 passes the runner's ``_seed`` to the first reset of its
        # SyncVectorEnv, which takes a list of one seed per env.
        env_runner._seed = env_seeds(seed, session, worker_index, env_runner.env.num_envs)


def on_episode_end(*, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
    """RLlib callback: count the iteration's finished episodes (``steer_episodes``) and
    successes (``steer_successes``: capture for the pursuer, escape for the evader); both
    are per-iteration sums, so their ratio is the iteration's success rate."""
    if metrics_logger is None:
        return
    try:
        info = episode.get_infos(-1)
    except (IndexError, KeyError, AttributeError):
        return
    if isinstance(info, dict) and "is_success" in info:
        metrics_logger.log_value("steer_episodes", 1, reduce="sum")
        metrics_logger.log_value("steer_successes", int(bool(info["is_success"])), reduce="sum")
