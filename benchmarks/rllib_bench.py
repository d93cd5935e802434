"""RLlib rows of ``python -m benchmarks`` (section ``rllib``; needs ``steer-env[rllib]``).

* Sampling: one RLlib 2.60 ``SingleAgentEnvRunner`` (built in this process, no Ray actors)
  calling ``sample()`` on Pursuit-v0 with the PPO module of ``train.py --framework rllib``,
  its sub-envs either the package's native vector env
  (``gym_env_vectorize_mode="vector_entry_point"``) or Gymnasium's ``SyncVectorEnv`` of
  single envs (``"sync"``). Both use the same RLlib config (the one train.py uses), so the
  difference is the env alone; RLlib's per-sub-env Python work (episodes, connectors) is in
  both.
* PPO: ``train.py``'s RLlib PPO (local Ray, 1 env runner, learner in the driver), timesteps
  per second over whole ``Algorithm.train()`` iterations (sampling + learning), next to the
  ``sb3`` section's PPO rows.
"""

from __future__ import annotations

import time

from benchmarks.common import Row

ENV_ID = "steer_env/Pursuit-v0"
MODES = {"native": "vector_entry_point", "sync": "sync"}


def bench_rllib_sampling(adapter: str, num_envs: int, repeats: int, steps: int = 32) -> Row:
    """env-steps/s of ``SingleAgentEnvRunner.sample(num_timesteps=num_envs * steps)``."""
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from agents.rllib_training import build_config

    config = build_config(ENV_ID, 0, 0, 0, num_envs, vectorize_mode=MODES[adapter])
    runner = SingleAgentEnvRunner(config=config)
    n = num_envs * steps
    runner.sample(num_timesteps=num_envs * 4)  # warm-up: first reset, module, kernels
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        episodes = runner.sample(num_timesteps=n)
        elapsed = time.perf_counter() - t0
        samples.append(sum(len(e) for e in episodes) / elapsed)
    runner.stop()
    label = (
        "native vector env (vector_entry_point)"
        if adapter == "native"
        else "SyncVectorEnv of single envs (sync)"
    )
    return Row(
        "rllib",
        f"RLlib env runner sample, {label}",
        num_envs,
        "env-steps/s",
        samples,
        agents=2,
        substeps=1,
        note=f"{n} env-steps/repeat, PPO module 64x64",
    )


def bench_rllib_ppo(num_envs: int, iterations: int, repeats: int) -> Row:
    """timesteps/s of RLlib PPO as ``train.py --framework rllib`` runs it (local Ray, one
    env runner of ``num_envs`` native envs, learner in the driver): ``iterations``
    ``train()`` calls per repeat after one warm-up iteration."""
    from agents.rllib_training import use_loopback_only

    use_loopback_only()  # a local Ray on 127.0.0.1 only
    import ray

    from agents.rllib_training import HYPERPARAMS, build_config

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
        f"{k}={HYPERPARAMS[k]}" for k in ("rollout_fragment_length", "minibatch_size", "num_epochs")
    )
    return Row(
        "rllib",
        "RLlib PPO Pursuit, 1 env runner (native vector env), learner in driver",
        num_envs,
        "timesteps/s",
        samples,
        note=f"{iterations} iterations/repeat; {hp}",
    )
