"""``train.py --framework rllib --env team_pursuit``: the multi-agent team task on RLlib.

    python train.py --framework rllib --env team_pursuit                     # learned pursuers
    python train.py --framework rllib --env team_pursuit --learned both      # + learned evaders
    python train.py --framework rllib --env team_pursuit --learned evaders

The run folder, Ray start, checkpoints, resume and progress lines are those of the
single-agent RLlib path (:mod:`agents.rllib.training`); this module adds what differs:

* the env: :class:`agents.rllib.team_env.TeamMultiAgentEnv` around the task's PettingZoo
  ``ParallelEnv`` (its docstring says why not RLlib's ``ParallelPettingZooEnv``, how agents
  that leave the game are handled, and how every runner and sub-env is seeded);
* the policies: one RLModule per learned role, shared by every agent of that role
  (parameter sharing through the ``policy_mapping_fn``: ``pursuer_i`` -> ``"pursuer"``,
  ``evader_j`` -> ``"evader"``). ``--learned pursuers`` (default) trains ``"pursuer"``
  against the scripted evaders, ``evaders`` trains ``"evader"`` against the scripted
  pursuers, ``both`` trains the two modules against each other;
* the periodic evaluation: deterministic episodes of the current modules in the driver;
  ``eval/evaluations.npz`` holds the capture rate (every evader captured) per evaluation;
* no final comparison with scripted teams yet (``agents.compare`` covers the single-agent
  tasks); the run says so and finishes.

A checkpoint's modules load as single-agent-style policies with
``agents.rllib.policy.load_rllib_policy(path, module="pursuer")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from steer_env.tasks import TEAM_TASKS

#: Modules trained for each ``--learned`` value.
MODULES = {"pursuers": ("pursuer",), "evaders": ("evader",), "both": ("pursuer", "evader")}
LEARNED = tuple(MODULES)


def is_team_task(name: str | None) -> bool:
    """Whether ``name`` is a task with a PettingZoo form."""
    return name in TEAM_TASKS


def env_config(task: str, learned: str, seed: int, session: int, **kwargs: Any) -> dict[str, Any]:
    return {"env_id": task, "learned": learned, "seed": seed, "session": session, **kwargs}


def build_config(
    task: str,
    learned: str,
    seed: int,
    session: int,
    num_env_runners: int,
    envs_per_runner: int,
    num_learners: int = 0,
    hp: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
) -> Any:
    """The multi-agent ``PPOConfig``: the single-agent one (same PPO settings, learners,
    fault tolerance) with the team env, one shared module per learned role and the team
    callbacks."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib import team_env as rllib_team_env
    from agents.rllib.config import build_config as single_agent_config

    modules = MODULES[learned]
    config = single_agent_config(
        task,
        seed,
        session,
        num_env_runners,
        envs_per_runner,
        num_learners,
        vectorize_mode="sync",  # the only mode RLlib 2.60 has for multi-agent envs
        hp=hp,
    )
    return (
        config.environment(
            rllib_team_env.TeamMultiAgentEnv,
            env_config=env_config(task, learned, seed, session, **(env_kwargs or {})),
        )
        .multi_agent(
            policies=list(modules),  # a list: modules built in this order everywhere
            policy_mapping_fn=rllib_team_env.module_of,
            policies_to_train=list(modules),
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: RLModuleSpec() for m in modules})
        )
        .callbacks(
            on_environment_created=rllib_team_env.on_environment_created,
            on_episode_end=rllib_team_env.on_episode_end,
        )
    )


def probe(task: str, learned: str) -> dict[str, Any]:
    """Checkpoint metadata of the task: agents, modules and the per-agent spaces."""
    from agents.rllib.team_env import module_of, parallel_env

    env = parallel_env({"env_id": task, "learned": learned})
    agents = list(env.possible_agents)
    obs = env.observation_space(agents[0]).shape
    act = env.action_space(agents[0]).shape
    env.close()
    return {
        "env_id": task,
        "team_task": task,
        "learned": learned,
        "modules": list(MODULES[learned]),
        "agents": {a: module_of(a) for a in agents},
        "obs_shape": list(obs),
        "action_shape": list(act),
    }


def evaluate(
    modules: dict[str, Any], task: str, learned: str, episodes: int, seed: int
) -> tuple[float, float]:
    """Capture rate (episodes that end with every evader captured) and mean length of
    ``episodes`` deterministic episodes of ``modules`` (module id -> RLModule), seeds
    ``seed + k``, played in the driver."""
    from agents.rllib.policy import RLlibPolicy
    from agents.rllib.team_env import module_of, parallel_env

    policies = {m: RLlibPolicy(mod, task, Path("."), {"algo": "ppo"}) for m, mod in modules.items()}
    env = parallel_env({"env_id": task, "learned": learned})
    captured, lengths = [], []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        steps, info = 0, {}
        while env.agents:
            actions = {}
            for m, policy in policies.items():
                names = [a for a in env.agents if module_of(a) == m]
                if names:
                    act, _ = policy.predict(np.stack([obs[a] for a in names]))
                    actions.update(zip(names, act, strict=True))
            obs, _, _, _, infos = env.step(actions)
            steps += 1
            info = next(iter(infos.values()), info)
        captured.append(info.get("evaders_left", 1) == 0)
        lengths.append(steps)
    env.close()
    return float(np.mean(captured)), float(np.mean(lengths))
