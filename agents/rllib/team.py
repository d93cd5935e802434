"""``train.py --framework rllib --env team_pursuit``: the multi-agent team task on RLlib.

    python train.py --framework rllib --env team_pursuit                     # learned pursuers
    python train.py --framework rllib --env team_pursuit --learned both      # + learned evaders
    python train.py --framework rllib --env team_pursuit --learned evaders

The run folder, Ray start, checkpoints, resume and progress lines are those of the
single-agent RLlib path (:mod:`agents.rllib.training`); this module adds what differs, and
:class:`TeamSetup` is what the one run loop asks of it (picked by the task's
``metrics.layout``):

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

from agents.deprecation import forward_moved_names, old_task_predicate
from agents.evaluation.policies import env_tag

#: Modules trained for each ``--learned`` value.
MODULES = {"pursuers": ("pursuer",), "evaders": ("evader",), "both": ("pursuer", "evader")}
LEARNED = tuple(MODULES)


__getattr__ = forward_moved_names(
    "agents.rllib.team",
    replaced={
        "is_team_task": (
            "agents.rllib.training.setup_of (the task's metrics.layout)",
            old_task_predicate,
        )
    },
)


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


class TeamSetup:
    """What an RLlib run of a team task (``metrics.layout`` ``"cross_play"``) does in the
    one run loop of :func:`agents.rllib.training.train`: one shared module per learned role
    (``--learned``), the PettingZoo env, the team's capture rate."""

    #: The periodic evaluation's key in ``evaluations.npz`` and its name in the logs: the
    #: team's capture rate (every evader captured), whichever role is learned.
    rate_key, rate_name = "captures", "capture"
    #: The module that documents how the sub-envs are seeded.
    env_module = "team_env"

    def check_learned(self, given: dict[str, Any], message: str) -> None:
        """``--learned`` is this task's option."""

    def run_tag(self, env: str, args: Any) -> str:
        return f"{env_tag(env)}-{args.learned}"

    def options(self, args: Any) -> dict[str, Any]:
        return {"learned": args.learned}

    def module_ids(self, opts: dict[str, Any]) -> tuple[str, ...]:
        return MODULES[opts["learned"]]

    def build_config(self, env_id: str, opts: dict[str, Any], *common: Any, hp: Any) -> Any:
        return build_config(env_id, opts["learned"], *common, hp=hp)

    def spaces(self, env_id: str, opts: dict[str, Any]) -> dict[str, Any]:
        return probe(env_id, opts["learned"])

    def training_note(self, opts: dict[str, Any], module_ids: tuple[str, ...]) -> str:
        return f" (learned {opts['learned']}: modules {', '.join(module_ids)})"

    def scalars(
        self, runners: dict[str, Any], learners: dict[str, Any], module_ids: tuple[str, ...]
    ) -> list[tuple[str, Any]]:
        """Each module's losses and its return (the episode return summed over the role's
        agents)."""
        returns = runners.get("module_episode_returns_mean") or {}
        out: list[tuple[str, Any]] = []
        for m in module_ids:
            out += learner_scalars(learners.get(m, {}), f"{m}/")
            out.append((f"rollout/{m}/ep_rew_mean", returns.get(m)))
        return out

    def returns_text(self, runners: dict[str, Any], module_ids: tuple[str, ...]) -> str:
        returns = runners.get("module_episode_returns_mean") or {}
        line = ""
        for m in module_ids:
            r = returns.get(m)
            if r is not None and np.isfinite(r):
                line += f" | {m} return {r:6.3f}"
        return line

    def evaluate(
        self,
        algo: Any,
        env_id: str,
        opts: dict[str, Any],
        module_ids: tuple[str, ...],
        episodes: int,
        seed: int,
    ) -> tuple[float, float]:
        modules = {m: algo.get_module(m) for m in module_ids}
        return evaluate(modules, env_id, opts["learned"], episodes, seed)

    def final_extra(self, final: Path, module_ids: tuple[str, ...]) -> dict[str, Any]:
        """Both roles learned: the table plays the trained modules against each other too."""
        from agents.evaluation.cross_play import load_team_policy, model_task, role_names

        task = model_task(final)
        rows, cols = role_names(task)
        if set(module_ids) != {rows, cols}:
            return {}
        return {"opponent": load_team_policy(final, cols, task=task)}


def learner_scalars(learner: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A module's losses for tensorboard (``prefix``: ``"<module>/"`` for a team run)."""
    return [
        (f"train/{prefix}policy_loss", learner.get("policy_loss")),
        (f"train/{prefix}value_loss", learner.get("vf_loss")),
        (f"train/{prefix}entropy", learner.get("entropy")),
        (f"train/{prefix}explained_variance", learner.get("vf_explained_var")),
    ]
