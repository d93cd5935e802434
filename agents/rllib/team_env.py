"""The multi-agent team task as RLlib sees it: a thin ``MultiAgentEnv``, seeding, metrics.

This module imports ray (RLlib's ``MultiAgentEnv`` base class); it is imported only by the
``--framework rllib`` path and on the Ray workers that host an env runner.

**Why not RLlib's ``ParallelPettingZooEnv``.** RLlib 2.60's wrapper takes the agent names
from a ``set`` (so ``possible_agents`` comes in a hash order that differs between
processes), never updates ``agents`` when an agent leaves the game, and cannot be given a
seed plan. :class:`TeamMultiAgentEnv` keeps the PettingZoo env's roster order, follows
its ``agents`` (a captured evader leaves it), sets the ``"__all__"`` keys RLlib needs
(``terminateds["__all__"]`` once no agent is left: every evader captured or the time
limit; ``truncateds["__all__"]`` is always False as the task never truncates) and clips
actions to the ``Box(-1, 1)`` action space (RLlib's own unsquash/clip connector is switched
off, as for the single-agent tasks).

**Agents that leave early.** ``MultiAgentEnvRunner`` asks the RLModules for actions of the
agents that received an observation on the last step and are not done; a captured evader
gets its final observation, reward and ``terminated=True`` on its capture step and no
entry afterwards, which ``MultiAgentEpisode`` records as that agent's episode end.

**Seeding.** RLlib 2.60 vectorizes multi-agent envs with its ``SyncVectorMultiAgentEnv``,
which resets sub-env ``i`` of runner ``w`` with ``config.seed + w + i`` (the same overlap
between runners as in the single-agent case). :func:`on_environment_created` gives every
sub-env its own seed from the single-agent scheme (:func:`agents.rllib.env.env_seeds`)::

    seed of sub-env i on runner w = SeedSequence([seed, session, w]).generate_state(N, uint64)[i]

and the sub-env uses it in place of RLlib's seed at the first (seeded) reset; later resets
are RLlib's autoresets, which continue each sub-env's own random stream.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.rllib.env import env_seeds

#: Keys of ``env_config`` that are ours, not keyword arguments of the PettingZoo env.
CONFIG_KEYS = ("env_id", "seed", "session")
#: Team metrics kept in the final step's infos (the rest is dropped: RLlib stores every
#: step's infos in its episodes).
FINAL_INFO_KEYS = ("evaders_captured", "evaders_left", "capture_steps")


def module_of(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: ``pursuer_3`` -> ``"pursuer"``, ``evader_0`` ->
    ``"evader"``; every agent of a role shares that role's module."""
    return str(agent_id).rsplit("_", 1)[0]


def parallel_env(config: dict[str, Any]) -> Any:
    """The PettingZoo ``ParallelEnv`` of ``config["env_id"]`` (a name in
    :data:`steer_env.tasks.TEAM_TASKS`) with the rest of ``config`` as its arguments."""
    from steer_env.tasks import TEAM_TASKS

    cfg = dict(config)
    task = TEAM_TASKS[cfg.get("env_id", "team_pursuit")]
    kwargs = {k: v for k, v in cfg.items() if k not in CONFIG_KEYS}
    return importlib.import_module(task.env_module).parallel_env(**kwargs)


class TeamMultiAgentEnv(MultiAgentEnv):
    """An RLlib ``MultiAgentEnv`` around a team task's PettingZoo ``ParallelEnv`` (see the
    module docstring). ``config``: RLlib's ``env_config`` (an ``EnvContext``)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.par_env = parallel_env(dict(config or {}))
        self.possible_agents = list(self.par_env.possible_agents)
        self.agents = []
        agents = self.possible_agents
        self.observation_spaces = {a: self.par_env.observation_space(a) for a in agents}
        self.action_spaces = {a: self.par_env.action_space(a) for a in agents}
        # Old-API-stack attributes, which some RLlib checks still read.
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self.seed_plan: int | None = None

    def set_seed_plan(self, seed: int) -> None:
        """Use ``seed`` instead of RLlib's at the next seeded reset."""
        self.seed_plan = int(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None and self.seed_plan is not None:
            seed = self.seed_plan
        obs, _ = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return obs, {}

    def step(self, action_dict: dict[str, Any]) -> Any:
        actions = {
            a: np.clip(np.asarray(act, dtype=np.float64), -1.0, 1.0)
            for a, act in action_dict.items()
        }
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(actions)
        self.agents = list(self.par_env.agents)
        done = not self.agents
        terminateds["__all__"] = done
        truncateds["__all__"] = False
        keep = FINAL_INFO_KEYS if done else ()
        infos = {a: {k: info[k] for k in keep if k in info} for a, info in infos.items()}
        return obs, rewards, terminateds, truncateds, infos

    def render(self) -> Any:
        return self.par_env.render()

    def close(self) -> None:
        self.par_env.close()


def sub_envs(env_runner: Any) -> list[TeamMultiAgentEnv]:
    """The :class:`TeamMultiAgentEnv` sub-envs of a ``MultiAgentEnvRunner``."""
    vec = getattr(env_runner, "env", None)
    return [e.unwrapped for e in getattr(vec, "envs", [])]


def on_environment_created(*, env_runner: Any, env_context: Any, **kwargs: Any) -> None:
    """RLlib callback: give each sub-env of the runner its seed (module docstring). Runs on
    the runner, after the vector env is made and before its first (seeded) reset."""
    envs = sub_envs(env_runner)
    cfg = dict(env_context)
    seeds = env_seeds(
        int(cfg.get("seed", 0)),
        int(cfg.get("session", 0)),
        int(getattr(env_context, "worker_index", 0) or 0),
        len(envs),
    )
    if len(set(seeds)) != len(seeds):  # 64-bit draws: practically impossible
        raise RuntimeError("duplicate sub-env seeds")
    for env, seed in zip(envs, seeds, strict=True):
        env.set_seed_plan(seed)


def on_episode_end(*, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
    """RLlib callback: count the iteration's finished episodes (``steer_episodes``) and those
    that ended with every evader captured (``steer_captures``; per-iteration sums)."""
    if metrics_logger is None:
        return
    try:
        infos = episode.get_infos(-1)
    except (IndexError, KeyError, AttributeError):
        return
    left = [i["evaders_left"] for i in infos.values() if "evaders_left" in (i or {})]
    if left:
        metrics_logger.log_value("steer_episodes", 1, reduce="sum")
        metrics_logger.log_value("steer_captures", int(left[0] == 0), reduce="sum")
