"""RLlib rows of ``python -m benchmarks`` (section ``rllib``; needs ``steer-env[rllib]``).

* Sampling: one RLlib 2.60 env runner (built in this process, no Ray actors) calling
  ``sample()`` on Pursuit-v0 with the PPO module of ``train.py --framework rllib``, three
  ways: the package's native vector env (``gym_env_vectorize_mode="vector_entry_point"``)
  with train.py's :class:`agents.rllib_runner.NativeVectorEnvRunner` (array sampling loop);
  the native vector env with RLlib's stock ``SingleAgentEnvRunner`` (its per-sub-env Python
  work: episodes, connectors); and Gymnasium's ``SyncVectorEnv`` of single envs (``"sync"``)
  with the stock runner, RLlib's default way. The same RLlib config otherwise (train.py's).
* PPO: ``train.py``'s RLlib PPO (local Ray, 1 env runner, learner in the driver), timesteps
  per second over whole ``Algorithm.train()`` iterations (sampling + learning), next to the
  ``sb3`` section's PPO rows.
"""

from __future__ import annotations

import time

from benchmarks.common import Row

ENV_ID = "steer_env/Pursuit-v0"
MODES = {"native": "vector_entry_point", "sync": "sync"}


#: Sampling rows: (row key, vectorize mode, env runner) as train.py configures them
#: (``array``: agents.rllib_runner.NativeVectorEnvRunner; ``stock``: RLlib's own
#: SingleAgentEnvRunner).
SAMPLERS = {
    "native": ("vector_entry_point", "array"),
    "native-stock": ("vector_entry_point", "stock"),
    "sync": ("sync", "stock"),
}
LABELS = {
    "native": "RLlib env runner sample, native vector env (vector_entry_point), "
    "NativeVectorEnvRunner (train.py's)",
    "native-stock": "RLlib env runner sample (stock SingleAgentEnvRunner), native vector env "
    "(vector_entry_point)",
    "sync": "RLlib env runner sample, SyncVectorEnv of single envs (sync), stock "
    "SingleAgentEnvRunner",
}


def bench_rllib_sampling(
    num_envs: int, repeats: int, steps: int = 32, samplers: tuple[str, ...] = tuple(SAMPLERS)
) -> list[Row]:
    """env-steps/s of ``EnvRunner.sample(num_timesteps=num_envs * steps)`` for each of
    ``samplers`` (keys of :data:`SAMPLERS`), their repeats interleaved (one repeat of each in
    turn) so that load on a shared machine hits them alike."""
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from agents.rllib.config import build_config

    n = num_envs * steps
    runners = {}
    for key in samplers:
        mode, runner = SAMPLERS[key]
        config = build_config(
            ENV_ID, 0, 0, 0, num_envs, vectorize_mode=mode, array_runner=runner == "array"
        )
        runners[key] = (config.env_runner_cls or SingleAgentEnvRunner)(config=config)
        runners[key].sample(num_timesteps=num_envs * 4)  # warm-up: first reset, module, kernels
    samples: dict[str, list[float]] = {key: [] for key in samplers}
    for _ in range(repeats):
        for key, runner in runners.items():
            t0 = time.perf_counter()
            episodes = runner.sample(num_timesteps=n)
            elapsed = time.perf_counter() - t0
            samples[key].append(sum(len(e) for e in episodes) / elapsed)
    for runner in runners.values():
        runner.stop()
    return [
        Row(
            "rllib",
            LABELS[key],
            num_envs,
            "env-steps/s",
            samples[key],
            agents=2,
            substeps=1,
            note=f"{n} env-steps/repeat, PPO module 64x64, repeats interleaved",
        )
        for key in samplers
    ]


def bench_rllib_ppo(num_envs: int, iterations: int, repeats: int) -> Row:
    """timesteps/s of RLlib PPO as ``train.py --framework rllib`` runs it (local Ray, one
    env runner of ``num_envs`` native envs, learner in the driver): ``iterations``
    ``train()`` calls per repeat after one warm-up iteration."""
    from agents.rllib.cluster import use_loopback_only

    use_loopback_only()  # a local Ray on 127.0.0.1 only
    import ray

    from agents.rllib.config import build_config
    from agents.training.defaults import RLLIB_PPO

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        algo = build_config(ENV_ID, 0, 0, 1, num_envs).build_algo()
        algo.train()
        samples = []
        for _ in range(repeats):
            steps = 0
            t0 = time.perf_counter()
            for _ in range(iterations):
                steps += int(algo.train()["env_runners"]["num_env_steps_sampled"])
            samples.append(steps / (time.perf_counter() - t0))
        algo.stop()
    finally:
        ray.shutdown()
    hp = ", ".join(
        f"{k}={RLLIB_PPO[k]}" for k in ("rollout_fragment_length", "minibatch_size", "num_epochs")
    )
    return Row(
        "rllib",
        "RLlib PPO Pursuit, 1 env runner (native vector env), learner in driver",
        num_envs,
        "timesteps/s",
        samples,
        note=f"{iterations} iterations/repeat; {hp}",
    )
