"""The RLlib pair of ``python -m benchmarks.training`` (``--framework rllib``; needs
``pip install "steer-env[rllib]"``).

    python -m benchmarks.training --framework rllib     # time to 90% / 95%, pursuit

RLlib 2.60's PPO with the task's default RLlib settings (``train.py --framework rllib``'s:
:data:`agents.training.defaults.TRAINING_DEFAULTS` ``("rllib-ppo", task)``, built by
:func:`agents.rllib.config.build_config`), on a local Ray started as ``train.py`` starts it
(:func:`agents.rllib.cluster.start_ray`), one env runner of the default envs and the learner
in the driver, twice with the same seed and the same PPO settings:

* ``native``: ``train.py``'s runner, :class:`agents.rllib.runner.NativeVectorEnvRunner`
  on the native vector env (``gym_env_vectorize_mode="vector_entry_point"``);
* ``stock``: RLlib's own ``SingleAgentEnvRunner`` on Gymnasium's ``SyncVectorEnv`` of
  single envs (``"sync"``), with RLlib's default action handling
  (``normalize_actions=True``: for the ``Box(-1, 1)`` actions an identity and a clip, which
  the native side does inside its vector env).

Both sides reset sub-env ``i`` with the same seed (:mod:`agents.rllib.env`), so they train
on the same episodes up to float rounding. After every ``--eval-every`` timesteps (at the
end of the ``Algorithm.train()`` call that reaches them: the learner has trained on every
counted timestep) the clock stops and the current policy plays the same held-out paired
episodes as the SB3 pair, through :func:`agents.rllib.training.evaluate` (``train.py``'s
periodic evaluation: the deterministic policy in one native batch). The figures are the
seconds of the ``train()`` calls (evaluations excluded) and the timesteps at which the
success rate first reaches 90% and 95%, and the training timesteps per second. The
engine is compiled (warmed) in the driver and in every env runner before anything is
timed.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.training import EVAL_SEED, THRESHOLDS, first_reaching, run_line

#: The trainer's key in the tasks' training tables.
TRAINER = "rllib-ppo"
#: The two sides: (RLlib's ``gym_env_vectorize_mode``, whether the array runner samples).
RUNNERS = {"native": ("vector_entry_point", True), "stock": ("sync", False)}
#: Env runners (Ray actors) and learners of the runs: ``train.py``'s defaults.
NUM_ENV_RUNNERS = 1
NUM_LEARNERS = 0


def task_defaults(task: str) -> tuple[str, int, int, dict[str, Any]]:
    """``(env_id, timesteps, envs per runner, hyperparameters)`` of ``train.py --framework
    rllib`` on ``task``."""
    from agents.training.defaults import training_defaults
    from steer_env.tasks import get_task

    d = training_defaults(TRAINER, task)
    hp = {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.hyperparameters.items()}
    return get_task(task).env_id, d.timesteps, d.n_envs, hp


def iteration_timesteps(n_envs: int, hp: dict[str, Any]) -> int:
    """Timesteps one ``train()`` call samples: every sub-env of every runner steps
    ``rollout_fragment_length`` times (:func:`agents.rllib.config.build_config`'s batch)."""
    return NUM_ENV_RUNNERS * n_envs * int(hp["rollout_fragment_length"])


def build_algo(env_id: str, runner: str, n_envs: int, hp: dict[str, Any], seed: int) -> Any:
    """The PPO ``Algorithm`` of side ``runner`` (a key of :data:`RUNNERS`); Ray must be up."""
    from agents.rllib.config import build_config

    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {', '.join(RUNNERS)}, got {runner!r}")
    mode, array = RUNNERS[runner]
    config = build_config(
        env_id,
        seed,
        0,
        NUM_ENV_RUNNERS,
        n_envs,
        NUM_LEARNERS,
        vectorize_mode=mode,
        hp=hp,
        array_runner=array,
    )
    if runner == "stock":
        config.environment(normalize_actions=True)  # RLlib's default
    return config.build_algo()


def train_and_watch(
    env_id: str,
    runner: str,
    n_envs: int,
    hp: dict[str, Any],
    timesteps: int,
    seed: int,
    eval_every: int,
    episodes: int,
    eval_seed: int = EVAL_SEED,
    save_to: Path | None = None,
) -> dict[str, Any]:
    """RLlib PPO on ``env_id`` with side ``runner`` until ``timesteps`` are sampled,
    evaluated after every ``eval_every`` timesteps (0: only at the end) on ``episodes``
    held-out episodes with the clock stopped. ``save_to``: where to write the final
    checkpoint (as ``train.py`` writes one). Returns the curve (``timesteps``, training
    ``seconds``, ``success``) and the training timesteps per second. Ray must be up."""
    import torch

    from agents.rllib.training import SingleAgentSetup, evaluate, save_checkpoint, warm_task
    from agents.rllib.training import versions as rllib_versions
    from steer_env.tasks import get_task

    torch.manual_seed(seed)
    torch.set_num_threads(1)  # train.py's --threads default
    algo = build_algo(env_id, runner, n_envs, hp, seed)
    try:
        algo.env_runner_group.foreach_env_runner(
            warm_task(get_task(env_id).name), local_env_runner=True
        )
        curve: list[dict[str, float]] = []
        spent, sampled, iterations = 0.0, 0, 0
        next_eval = eval_every
        while sampled < timesteps:
            t0 = time.perf_counter()
            result = algo.train()
            spent += time.perf_counter() - t0
            iterations += 1
            sampled += int(result["env_runners"]["num_env_steps_sampled"])
            if (eval_every > 0 and sampled >= next_eval) or sampled >= timesteps:
                rate, _ = evaluate(algo, env_id, episodes, eval_seed)
                curve.append({"timesteps": sampled, "seconds": spent, "success": rate})
                if eval_every > 0:
                    next_eval = (sampled // eval_every + 1) * eval_every
        if save_to is not None:
            meta = {
                **SingleAgentSetup().spaces(env_id, {}),
                "algo": "ppo",
                "framework": "rllib",
                "seed": seed,
                "num_timesteps": sampled,
                "versions": rllib_versions(),
            }
            save_checkpoint(algo, Path(save_to), meta)
    finally:
        algo.stop()
    return {
        "runner": runner,
        "seed": seed,
        "curve": curve,
        "timesteps": sampled,
        "iterations": iterations,
        "train_s": spent,
        "timesteps_per_s": sampled / spent,
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
    }


def time_to_threshold(
    task: str,
    seeds: Sequence[int],
    episodes: int,
    eval_every: int | None,
    timesteps: int | None,
    save_to: Path | None = None,
) -> dict[str, Any]:
    """Both runners on ``task`` for every seed, in one local Ray session: curves and the
    threshold crossings. ``save_to``: a folder for each run's final checkpoint
    (``<runner>_<seed>``)."""
    from agents.rllib.cluster import start_ray, stop_ray

    env_id, default_timesteps, n_envs, hp = task_defaults(task)
    timesteps = timesteps or default_timesteps
    eval_every = eval_every or 2 * iteration_timesteps(n_envs, hp)
    ray_info = start_ray(
        {"address": None, "num_env_runners": NUM_ENV_RUNNERS, "num_learners": NUM_LEARNERS}
    )
    runs = []
    try:
        for seed in seeds:
            for runner in RUNNERS:
                where = None if save_to is None else Path(save_to) / f"{runner}_{seed}"
                run = train_and_watch(
                    env_id, runner, n_envs, hp, timesteps, seed, eval_every, episodes,
                    save_to=where,
                )  # fmt: skip
                run["reached"] = {f"{t:.0%}": first_reaching(run["curve"], t) for t in THRESHOLDS}
                runs.append(run)
                print(run_line(run), file=sys.stderr, flush=True)
    finally:
        stop_ray()
    return {
        "mode": "time_to_threshold",
        "framework": "rllib",
        "task": task,
        "env_id": env_id,
        "n_envs": n_envs,
        "num_env_runners": NUM_ENV_RUNNERS,
        "num_learners": NUM_LEARNERS,
        "ray": ray_info,
        "hyperparameters": hp,
        "timesteps": timesteps,
        "eval_every": eval_every,
        "episodes": episodes,
        "eval_seed": EVAL_SEED,
        "runs": runs,
    }


def rows(task: str = "pursuit", quick: bool = False) -> list[Any]:
    """The RLlib rows of the training section of ``python -m benchmarks``:
    :func:`time_to_threshold` for ``task`` (seed 0), per runner the training timesteps per
    second and the seconds to each threshold (a ``Missing`` row when the budget ended
    first). ``quick``: two iterations, evaluated after each, on 50 episodes (a smoke run:
    the thresholds are not expected)."""
    from benchmarks.training import threshold_rows

    _, _, n_envs, hp = task_defaults(task)
    iteration = iteration_timesteps(n_envs, hp)
    result = time_to_threshold(
        task,
        [0],
        50 if quick else 500,
        iteration if quick else None,
        2 * iteration if quick else None,
    )
    return threshold_rows(result, f"RLlib PPO {task.capitalize()}")
