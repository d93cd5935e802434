"""The ``PPOConfig`` of an RLlib run of a single-agent task (the team task's builds on it:
:func:`agents.rllib.team.build_config`); its PPO settings are
:data:`agents.training.defaults.RLLIB_PPO`, overridden by ``hp``.
"""

from __future__ import annotations

from typing import Any

from agents.training.defaults import RLLIB_PPO


def build_config(
    env_id: str,
    seed: int,
    session: int,
    num_env_runners: int,
    envs_per_runner: int,
    num_learners: int = 0,
    vectorize_mode: str = "vector_entry_point",
    hp: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    array_runner: bool = True,
) -> Any:
    """The ``PPOConfig`` of a run (Ray must be initialized; registers the env creator).

    With the native vector env (``vectorize_mode="vector_entry_point"``) the env runners are
    :class:`agents.rllib.runner.NativeVectorEnvRunner`, which samples all sub-envs with
    array operations (``array_runner=False``: RLlib's stock ``SingleAgentEnvRunner``, for
    the benchmark and the tests that compare the two)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.tune import registry as tune_registry
    from ray.tune.registry import register_env

    from agents.rllib import env as rllib_env

    runner_cls = None
    if array_runner and vectorize_mode == "vector_entry_point":
        from agents.rllib.runner import NativeVectorEnvRunner

        runner_cls = NativeVectorEnvRunner

    hp = {**RLLIB_PPO, **(hp or {})}
    # Tune's registry keys its entries by the job id it first saw in this process; after a
    # Ray session ends and another starts (a second run in one process), that id is stale
    # and the env runners, which look the creator up under their own job id, miss it.
    tune_registry._global_registry._prefix = None
    register_env(rllib_env.RLLIB_ENV_NAME, rllib_env.make_env)
    runners = max(num_env_runners, 1)
    batch = runners * envs_per_runner * int(hp["rollout_fragment_length"])
    return (
        PPOConfig()
        .environment(
            rllib_env.RLLIB_ENV_NAME,
            env_config={"env_id": env_id, "seed": seed, "session": session, **(env_kwargs or {})},
            # Box(-1, 1) actions: RLlib's unsquash is the identity, and its per-sub-env
            # connector cost more than the whole simulation; SeededVectorEnv clips instead.
            normalize_actions=False,
            clip_actions=False,
        )
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=envs_per_runner,
            gym_env_vectorize_mode=vectorize_mode,
            rollout_fragment_length=int(hp["rollout_fragment_length"]),
            num_cpus_per_env_runner=1,
            env_runner_cls=runner_cls,
        )
        .learners(num_learners=num_learners, num_cpus_per_learner=1 if num_learners else "auto")
        .training(
            train_batch_size_per_learner=batch // max(num_learners, 1),
            minibatch_size=min(int(hp["minibatch_size"]), batch // max(num_learners, 1)),
            num_epochs=int(hp["num_epochs"]),
            lr=float(hp["lr"]),
            gamma=float(hp["gamma"]),
            lambda_=float(hp["lambda_"]),
            clip_param=float(hp["clip_param"]),
            vf_clip_param=float(hp["vf_clip_param"]),
            vf_loss_coeff=float(hp["vf_loss_coeff"]),
            entropy_coeff=float(hp["entropy_coeff"]),
            use_kl_loss=bool(hp["use_kl_loss"]),
            grad_clip=float(hp["grad_clip"]),
        )
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=list(hp["fcnet_hiddens"]),
                fcnet_activation="tanh",
                vf_share_layers=False,
                free_log_std=True,
            )
        )
        .callbacks(
            on_environment_created=rllib_env.on_environment_created,
            on_episode_end=rllib_env.on_episode_end,
        )
        .fault_tolerance(restart_failed_env_runners=True)
        .reporting(metrics_num_episodes_for_smoothing=envs_per_runner * runners)
        .debugging(seed=seed, log_level="ERROR")
    )
