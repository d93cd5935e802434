"""``train.py --framework rllib``: PPO on RLlib (Ray), on one machine or a Ray cluster.

    python train.py --framework rllib                          # local Ray, in-process
    python train.py --framework rllib --address auto           # join a running cluster
    python train.py --framework rllib --address HEAD:6379 --num-env-runners 8 --envs-per-runner 1024
    python train.py --resume --name <run>                      # continue an RLlib run
    python train.py --framework rllib --env team_pursuit [--learned pursuers|evaders|both]

The multi-agent team task (``--env team_pursuit``) uses the same run folder and loop with
the pieces :mod:`agents.rllib.team` adds (one shared module per learned role): the loop asks
the task's setup (:func:`setup_of`, by its ``metrics.layout``) for what differs.

Each env runner steps the package's native batched vector env
(``gym_env_vectorize_mode="vector_entry_point"``, see :mod:`agents.rllib.env`, which also
documents how every runner and sub-env is seeded). The run folder follows the SB3 path's
conventions (``agents/training/run.py``)::

    config.json          options, hyperparameters, cluster, versions, sessions, results
    model/               the final RLlib checkpoint (load it with --model runs/<name>/model)
    checkpoints/         ckpt_<timesteps>/ RLlib checkpoints (each with steer_env.json)
    tb/                  tensorboard scalars (episode return, success rate, losses, fps)
    eval/evaluations.npz periodic evaluations on a separate seeded env (timesteps, successes)
    comparison.*, episodes.csv, survival.png, episode.gif   as for SB3

ray is imported only inside functions: without the ``rllib`` extra, ``--framework rllib``
fails with a one-line message. Cluster problems (a bad ``--address``, nothing listening,
too few CPUs) are found before the run folder is created.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.compare import task_of
from agents.evaluation.policies import PolicyLoadError, UsageError, env_tag
from agents.rllib import team as rllib_team
from agents.rllib.cluster import check_address, start_ray, stop_ray
from agents.rllib.config import build_config
from agents.rllib.policy import METADATA_FILE, read_rllib_metadata
from agents.training import options as run_options
from agents.training.defaults import training_defaults
from agents.training.run import (
    EVAL_SEED,
    EvaluationRecord,
    IterationLog,
    RunPaths,
    TrainingRun,
    check_new_run_dir,
    model_metadata,
    prepare_run_dir,
    release_run_dir,
)
from agents.training.run import versions as base_versions
from steer_env.cli import fail

PROG = "python train.py"
#: The trainer of an RLlib run in the run name and in TRAINING_DEFAULTS.
TRAINER = "rllib-ppo"
#: Options a resumed run takes from its config.json unless given again.
RESUMABLE = (*run_options.RESUMABLE, "num_env_runners", "envs_per_runner", "num_learners")
#: Options fixed for the life of a run.
FIXED = ("env", "seed", "learned")
CHECKPOINT_PREFIX = "ckpt_"


# ------------------------------------------------------------------ CLI hooks
def wants_rllib(args: Any, given: dict[str, Any]) -> bool:
    """``--framework rllib``, or ``--resume`` of a run that was trained with RLlib (``args``:
    ``train.py``'s options, ``given``: those on the command line)."""
    if "framework" in given:
        return given["framework"] == "rllib"
    if args.resume and args.name:
        cfg = Path(args.out) / args.name / "config.json"
        try:
            return json.loads(cfg.read_text()).get("options", {}).get("framework") == "rllib"
        except (OSError, ValueError, AttributeError):
            return False
    return False


def main(args: Any, given: dict[str, Any]) -> int:
    """Entry point from train.py: one-line errors and exit codes as the SB3 path."""
    try:
        opts, paths, previous = resolve_options(args, given)
    except UsageError as exc:
        return fail(PROG, exc, 2)
    except (PolicyLoadError, ConnectionError, RuntimeError) as exc:
        return fail(PROG, exc, 1)
    try:
        try:
            ray_info = start_ray(opts)  # before anything is written
        except UsageError as exc:
            return fail(PROG, exc, 2)
        except (ConnectionError, RuntimeError) as exc:
            return fail(PROG, exc, 1)
        try:
            return train(opts, paths, previous, ray_info)
        except (UsageError, PolicyLoadError) as exc:
            return fail(PROG, exc, 2 if isinstance(exc, UsageError) else 1)
        except OSError as exc:
            return fail(PROG, exc, 1)
        finally:
            stop_ray()
    finally:
        release_run_dir(paths.root)


# ------------------------------------------------------------------ options
def checkpoint_dirs(paths: RunPaths) -> list[tuple[int, Path]]:
    """Complete checkpoints of a run (those with their ``steer_env.json``), oldest first."""
    found = []
    if paths.checkpoints.is_dir():
        for d in paths.checkpoints.iterdir():
            complete = (d / METADATA_FILE).is_file()
            if d.is_dir() and d.name.startswith(CHECKPOINT_PREFIX) and complete:
                try:
                    found.append((int(d.name[len(CHECKPOINT_PREFIX) :]), d))
                except ValueError:
                    continue
    return sorted(found)


def model_dir(paths: RunPaths) -> Path:
    return paths.root / "model"


def latest_checkpoint(paths: RunPaths) -> tuple[Path, int] | None:
    """The most advanced checkpoint: the newest in ``checkpoints/`` or ``model/``."""
    found = checkpoint_dirs(paths)
    final = model_dir(paths)
    if (final / METADATA_FILE).is_file():
        with contextlib.suppress(PolicyLoadError):
            found.append((int(read_rllib_metadata(final).get("num_timesteps", 0)), final))
    if not found:
        return None
    t, d = max(found, key=lambda x: x[0])
    return d, t


def resolve_options(
    args: Any, given: dict[str, Any]
) -> tuple[dict[str, Any], RunPaths, dict[str, Any]]:
    """The options of this run (``args``: train.py's, defaults filled in; or read from
    config.json on resume, ``given`` replacing the resumable ones)."""
    for key in ("opponent_model", "opponent_strategy", "opponent_pool", "init_model", "config"):
        if key in given:
            flag = "--set" if key == "config" else run_options.flag(key)
            raise UsageError(f"{flag} is not available with --framework rllib")
    if "curriculum" in given:
        flag = "--curriculum" if given["curriculum"] else "--no-curriculum"
        raise UsageError(f"{flag} is not available with --framework rllib")
    if args.algo != "ppo":
        raise UsageError("--framework rllib trains PPO only (drop --algo)")
    if "n_envs" in given:
        raise UsageError(
            "--n-envs is for sb3; with rllib use --envs-per-runner and --num-env-runners"
        )
    if args.device == "cuda":
        raise UsageError("--framework rllib trains on CPU here (drop --device cuda)")
    previous: dict[str, Any] = {}
    if args.resume:

        def check(old: dict[str, Any]) -> None:
            if old.get("framework") != "rllib":
                raise UsageError(f"run {args.name} was not trained with RLlib; drop --framework")
            setup_of(old.get("env")).check_learned(
                given, f"--learned is for the team task; run {args.name} is not one"
            )

        # The temporary files of a killed run are removed without a note (stale is unused).
        opts, paths, previous, _stale = run_options.resumed_run(
            args, FIXED, RESUMABLE, check, given=given
        )
    else:
        env, seed = args.env, args.seed
        setup = setup_of(env)
        setup.check_learned(given, run_options.team_only("learned"))
        tag = setup.run_tag(env, args)
        name = args.name or run_options.run_name(tag, TRAINER, seed)
        paths = RunPaths(args.out / name)
        # prepare_run_dir is called only after Ray started: check the folder here.
        check_new_run_dir(paths, args.overwrite)
        defaults = training_defaults(TRAINER, env)
        timesteps = args.timesteps or defaults.timesteps
        opts = {
            "env": env,
            "seed": seed,
            "name": name,
            "timesteps": timesteps,
            "num_env_runners": args.num_env_runners,
            "envs_per_runner": args.envs_per_runner or defaults.n_envs,
            "num_learners": args.num_learners,
        }
        opts.update(setup.options(args))
        opts.update(run_options.new_run_options(args, timesteps))
    opts["framework"] = "rllib"
    opts["algo"] = "ppo"
    opts["out"] = str(args.out)
    opts["overwrite"] = bool(args.overwrite)
    opts["resume"] = bool(args.resume)
    address = given.get("address") or os.environ.get("RAY_ADDRESS") or None
    opts["address"] = check_address(address) if address else None
    return opts, paths, previous


# ------------------------------------------------------------------ checkpoints
def save_checkpoint(algo: Any, target: Path, meta: dict[str, Any]) -> Path:
    """``algo.save_to_path`` into a temp folder beside ``target``, ``steer_env.json`` last,
    then one rename: a checkpoint folder is either complete or absent."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        algo.save_to_path(str(tmp.resolve()))
        (tmp / METADATA_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def versions() -> dict[str, str]:
    """:func:`agents.training.run.versions` and Ray's."""
    out = base_versions()
    try:
        import ray

        out["ray"] = ray.__version__
    except ImportError:  # pragma: no cover
        out["ray"] = "unavailable"
    return out


def checkpoint_dir(paths: RunPaths, timesteps: int) -> Path:
    """The folder of the run's checkpoint at ``timesteps``."""
    return paths.checkpoints / f"{CHECKPOINT_PREFIX}{timesteps:09d}"


# ------------------------------------------------------------------ training
def print_training(
    opts: dict[str, Any],
    note: str,
    ray_info: dict[str, Any],
    start: int,
    paths: RunPaths,
    batch: int,
) -> None:
    """The line that starts training (``note``: what the task's setup adds; ``batch``: the
    timesteps of one iteration). RLlib trains whole iterations, and each env runner samples
    whole steps of its vector env until it has counted its share of ``batch`` (a sub-env's
    reset step is not counted), so the run stops at the first iteration at or past
    ``--timesteps``, a few timesteps or up to an iteration beyond it; ``config.json``
    records the count reached."""
    print(
        f"training RLlib PPO on {opts['env']}{note} for {int(opts['timesteps']) - start:,} "
        f"timesteps ({opts['num_env_runners']} env runners x {opts['envs_per_runner']} envs, "
        f"{opts['num_learners']} learners, Ray {ray_info['address']}: "
        f"{ray_info['nodes']} nodes, {ray_info['cpus']:g} CPUs) -> {paths.root}\n"
        f"in whole iterations of at least {batch:,} timesteps: training stops at the first "
        "iteration that reaches the total",
        flush=True,
    )


def iteration_metrics(
    result: dict[str, Any], setup: Any, module_ids: tuple[str, ...], fps: float
) -> tuple[list[tuple[str, Any]], str]:
    """The tensorboard scalars of a training iteration's ``result`` and what its progress
    line says of the episodes it finished: the returns, and the success (or capture) rate
    from the env runners' sums ``steer_episodes`` and ``steer_<rate_key>`` (NaN or absent
    when no episode ended: no rate)."""
    runners = result.get("env_runners", {})
    n_ep = float(runners.get("steer_episodes") or 0)
    n_ep = int(n_ep) if np.isfinite(n_ep) else 0
    rate = float(runners.get(f"steer_{setup.rate_key}") or 0) / n_ep if n_ep else None
    scalars = [
        ("rollout/ep_len_mean", runners.get("episode_len_mean")),
        (f"rollout/{setup.rate_name}_rate", rate),
        ("time/fps", fps),
        *setup.scalars(runners, result.get("learners", {}), module_ids),
    ]
    details = setup.returns_text(runners, module_ids)
    if rate is not None:
        details += f" | {setup.rate_name} {100 * rate:5.1f}% of {n_ep}"
    return scalars, details


def runner_location(runner: Any) -> dict[str, Any]:
    """Runs on an env runner: its index, Ray node id and process id."""
    import ray

    return {
        "worker_index": int(runner.worker_index),
        "node_id": ray.get_runtime_context().get_node_id(),
        "pid": os.getpid(),
    }


def warm_task(task: str) -> Any:
    """A function of an env runner that warms ``task``'s engine in its process
    (:func:`steer_env.warmup.warm`) and returns the seconds it took."""

    def run(runner: Any) -> float:
        from steer_env.warmup import warm

        return warm([task])[task]

    return run


def session_facts(
    algo: Any, opts: dict[str, Any], ray_info: dict[str, Any], warmed: list[float]
) -> dict[str, Any]:
    """What config.json records of an RLlib session: the cluster, the runners and
    learners asked for, where RLlib placed the env runners (the tests check both nodes of
    a cluster get one) and the seconds each env runner's warm-up took (``warmed``, the
    driver's first)."""
    return {
        "cluster": ray_info,
        "num_env_runners": int(opts["num_env_runners"]),
        "envs_per_runner": int(opts["envs_per_runner"]),
        "num_learners": int(opts["num_learners"]),
        "env_runners": algo.env_runner_group.foreach_env_runner(
            runner_location, local_env_runner=False
        ),
        "warmup_s": [round(float(s), 2) for s in warmed],
    }


def seeding_note(env_module: str) -> str:
    """How the sub-envs of a session are seeded (config.json's ``seeding``), documented in
    ``agents/rllib/<env_module>.py``."""
    return (
        "env i of runner w in session k resets with "
        "SeedSequence([seed, k, w]).generate_state(envs_per_runner, uint64)[i] "
        f"(agents/rllib/{env_module}.py)"
    )


def evaluate(algo: Any, env_id: str, episodes: int, seed: int) -> tuple[float, float]:
    """Success rate and mean length of ``episodes`` deterministic episodes of the current
    policy (seeds ``seed + k``), played in the driver on the native vector env."""
    from agents.evaluation.compare import play_episodes
    from agents.rllib.policy import RLlibPolicy

    module = algo.get_module()
    policy = RLlibPolicy(module, env_id, Path("."), {"algo": "ppo"})
    res = play_episodes(env_id, lambda env, s: policy, episodes, seed)
    return float(res.success.mean()), float(res.length.mean())


class SingleAgentSetup:
    """What an RLlib run of a task with one learned agent (``metrics.layout``
    ``"agents"``) does in the run loop of :func:`train`: RLlib's default module on the
    task's native vector env, the learned agent's success rate (the team task's
    counterpart: :class:`agents.rllib.team.TeamSetup`)."""

    rate_key, rate_name = "successes", "success"
    env_module = "env"

    def check_learned(self, given: dict[str, Any], message: str) -> None:
        """:class:`UsageError` ``message`` when ``--learned`` was given: one agent learns."""
        if "learned" in given:
            raise UsageError(message)

    def run_tag(self, env: str, args: Any) -> str:
        return env_tag(env)

    def options(self, args: Any) -> dict[str, Any]:
        return {}

    def module_ids(self, opts: dict[str, Any]) -> tuple[str, ...]:
        return ("default_policy",)

    def build_config(self, env_id: str, opts: dict[str, Any], *common: Any, hp: Any) -> Any:
        return build_config(env_id, *common, hp=hp)

    def spaces(self, env_id: str, opts: dict[str, Any]) -> dict[str, Any]:
        import gymnasium as gym

        probe = gym.make(env_id)
        spaces = {
            "env_id": env_id,
            "obs_shape": list(probe.observation_space.shape),
            "action_shape": list(probe.action_space.shape),
        }
        probe.close()
        return spaces

    def training_note(self, opts: dict[str, Any], module_ids: tuple[str, ...]) -> str:
        return ""

    def scalars(
        self, runners: dict[str, Any], learners: dict[str, Any], module_ids: tuple[str, ...]
    ) -> list[tuple[str, Any]]:
        out = [("rollout/ep_rew_mean", runners.get("episode_return_mean"))]
        for m in module_ids:
            out += rllib_team.learner_scalars(learners.get(m, {}))
        return out

    def returns_text(self, runners: dict[str, Any], module_ids: tuple[str, ...]) -> str:
        ret = runners.get("episode_return_mean")
        return f" | return {ret:6.3f}" if ret is not None and np.isfinite(ret) else ""

    def evaluate(
        self,
        algo: Any,
        env_id: str,
        opts: dict[str, Any],
        module_ids: tuple[str, ...],
        episodes: int,
        seed: int,
    ) -> tuple[float, float]:
        return evaluate(algo, env_id, episodes, seed)

    def final_extra(self, final: Path, module_ids: tuple[str, ...]) -> dict[str, Any]:
        return {}


#: What an RLlib run does for a task, by the task's ``metrics.layout``.
SETUPS: dict[str, Any] = {"agents": SingleAgentSetup(), "cross_play": rllib_team.TeamSetup()}


def setup_of(env: str | None) -> Any:
    """The RLlib setup of the task ``env`` (its name or env id; the default task's when it
    names none)."""
    return SETUPS[task_of(env).metrics.layout]


def train(
    opts: dict[str, Any], paths: RunPaths, previous: dict[str, Any], ray_info: dict[str, Any]
) -> int:
    import torch

    run = TrainingRun(PROG, opts, paths, previous)
    env_id = opts["env"]
    setup = setup_of(env_id)
    # RLlib's module ids: one shared module per learned role, or the single-agent default.
    module_ids = setup.module_ids(opts)
    start = latest_checkpoint(paths) if opts["resume"] else None
    if opts["resume"] and start is None:
        raise UsageError(f"cannot resume: no complete checkpoint in {paths.root}")
    if not opts["resume"]:
        prepare_run_dir(paths, resume=False, overwrite=opts["overwrite"])
    start_timesteps = start[1] if start else 0
    session_index = len(run.previous_sessions)
    torch.manual_seed(int(opts["seed"]) + session_index)
    torch.set_num_threads(int(opts["threads"]))

    hp = previous.get("hyperparameters") or dict(training_defaults(TRAINER, env_id).hyperparameters)
    config = setup.build_config(
        env_id,
        opts,
        int(opts["seed"]),
        session_index,
        int(opts["num_env_runners"]),
        int(opts["envs_per_runner"]),
        int(opts["num_learners"]),
        hp=hp,
    )
    algo = config.build_algo()
    # Every env runner (and the driver, which evaluates) compiles the task's engine, or
    # loads it from numba's cache, before the first sample: no training iteration pays
    # the first compile of a new node.
    warmed = algo.env_runner_group.foreach_env_runner(
        warm_task(task_of(env_id).name), local_env_runner=True
    )
    if start:
        algo.restore_from_path(str(start[0].resolve()))
        run_options.print_resuming(paths, start[0], start_timesteps)

    meta = model_metadata(
        opts, **setup.spaces(env_id, opts), framework="rllib", versions=versions()
    )
    session = session_facts(algo, opts, ray_info, warmed)
    seeding = {"seeding": seeding_note(setup.env_module)}
    run.begin(start_timesteps, hp, meta["versions"], notes=seeding, session=session)

    total, timesteps = int(opts["timesteps"]), start_timesteps
    next_ckpt = start_timesteps + int(opts["checkpoint_freq"])
    next_eval = start_timesteps + int(opts["eval_freq"])
    rate_key, rate_name = setup.rate_key, setup.rate_name
    evaluations = EvaluationRecord(paths.evaluations, (rate_key, "ep_lengths"), start_timesteps)
    n_eval, eval_seed = int(opts["periodic_eval_episodes"]), EVAL_SEED + int(opts["seed"])

    def checkpoint(target: Path) -> Path:
        return save_checkpoint(algo, target, {**meta, "num_timesteps": timesteps})

    if total > timesteps:
        note = setup.training_note(opts, module_ids)
        print_training(opts, note, ray_info, timesteps, paths, config.total_train_batch_size)
    log = IterationLog(paths.tensorboard / "RLlib_PPO", start_timesteps, total, opts["progress"])
    interrupted, iteration = False, 0
    try:
        while timesteps < total:
            result = algo.train()
            iteration += 1
            timesteps += int(result.get("env_runners", {}).get("num_env_steps_sampled", 0))
            fps = log.fps(timesteps)
            scalars, details = iteration_metrics(result, setup, module_ids, fps)
            log.scalars(timesteps, scalars)
            line = log.line(iteration, timesteps, fps, details)
            if timesteps >= next_eval or timesteps >= total:
                rate, length = setup.evaluate(algo, env_id, opts, module_ids, n_eval, eval_seed)
                evaluations.append(timesteps, **{rate_key: rate, "ep_lengths": length})
                log.scalars(
                    timesteps, [(f"eval/{rate_name}_rate", rate), ("eval/mean_ep_length", length)]
                )
                line += f" | eval {rate_name} {100 * rate:.0f}%"
                next_eval = timesteps + int(opts["eval_freq"])
            log.print(line)
            if next_ckpt <= timesteps < total:
                checkpoint(checkpoint_dir(paths, timesteps))
                next_ckpt = timesteps + int(opts["checkpoint_freq"])
    except KeyboardInterrupt:
        interrupted = True
    run.end_training(timesteps - start_timesteps, log.elapsed())
    log.close()

    if interrupted:
        # algo.train() is atomic from the driver's view: the last finished iteration is saved.
        path = checkpoint(checkpoint_dir(paths, timesteps))
        algo.stop()
        return run.interrupted(timesteps, path)
    final = checkpoint(model_dir(paths))
    algo.stop()
    run.trained(timesteps, "checkpoint", final)

    extra = {"model": str(final), "framework": "rllib", **setup.final_extra(final, module_ids)}
    if not run.compare(env_id, final, extra, "checkpoint"):
        return 130
    run.finish()
    print(f"compare again: python -m agents.compare --model {final}")
    return 0


__all__ = ["latest_checkpoint", "main", "resolve_options", "train", "wants_rllib"]
