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
import time
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
    RunPaths,
    TrainingRun,
    check_new_run_dir,
    prepare_run_dir,
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
        ray_info = start_ray(opts)  # before anything is written
    except UsageError as exc:
        return fail(PROG, exc, 2)
    except (PolicyLoadError, ConnectionError, RuntimeError) as exc:
        return fail(PROG, exc, 1)
    try:
        return train(opts, paths, previous, ray_info)
    except (UsageError, PolicyLoadError) as exc:
        return fail(PROG, exc, 2 if isinstance(exc, UsageError) else 1)
    except OSError as exc:
        return fail(PROG, exc, 1)
    finally:
        stop_ray()


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


# ------------------------------------------------------------------ training
def _fmt_eta(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


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
    comparison_files = ", survival.png"

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

    spaces = setup.spaces(env_id, opts)
    meta = {
        **spaces,
        "algo": "ppo",
        "framework": "rllib",
        "seed": int(opts["seed"]),
        "run_name": opts["name"],
        "versions": versions(),
    }
    session = {
        "cluster": ray_info,
        "num_env_runners": int(opts["num_env_runners"]),
        "envs_per_runner": int(opts["envs_per_runner"]),
        "num_learners": int(opts["num_learners"]),
        # Where RLlib placed the env runners (the tests check both nodes of a cluster get one).
        "env_runners": algo.env_runner_group.foreach_env_runner(
            runner_location, local_env_runner=False
        ),
        # Seconds each env runner's warm-up took (the driver's first).
        "warmup_s": [round(float(s), 2) for s in warmed],
    }
    seeding = (
        "env i of runner w in session k resets with "
        "SeedSequence([seed, k, w]).generate_state(envs_per_runner, uint64)[i] "
        f"(agents/rllib/{setup.env_module}.py)"
    )
    run.begin(start_timesteps, hp, meta["versions"], notes={"seeding": seeding}, session=session)

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(paths.tensorboard / "RLlib_PPO"), purge_step=start_timesteps or None)
    total = int(opts["timesteps"])
    timesteps = start_timesteps
    next_ckpt = start_timesteps + int(opts["checkpoint_freq"])
    next_eval = start_timesteps + int(opts["eval_freq"])
    eval_file = paths.eval / "evaluations.npz"
    rate_key, rate_name = setup.rate_key, setup.rate_name
    evals: dict[str, list[Any]] = {"timesteps": [], rate_key: [], "ep_lengths": []}
    if eval_file.is_file():
        with np.load(eval_file) as old:
            for k in evals:
                if k in old:
                    evals[k] = [x for x in old[k] if k != "timesteps" or x <= start_timesteps]
            n = len(evals["timesteps"])
            evals = {k: v[:n] for k, v in evals.items()}
    n_eval = int(opts["periodic_eval_episodes"])
    eval_seed = EVAL_SEED + int(opts["seed"])

    def meta_now() -> dict[str, Any]:
        return {**meta, "num_timesteps": timesteps}

    if total > timesteps:
        print(
            f"training RLlib PPO on {env_id}"
            + setup.training_note(opts, module_ids)
            + f" for {total - timesteps:,} timesteps "
            f"({opts['num_env_runners']} env runners x {opts['envs_per_runner']} envs, "
            f"{opts['num_learners']} learners, Ray {ray_info['address']}: "
            f"{ray_info['nodes']} nodes, {ray_info['cpus']:g} CPUs) -> {paths.root}",
            flush=True,
        )
    t0 = time.perf_counter()
    interrupted = False
    iteration = 0
    try:
        while timesteps < total:
            result = algo.train()
            iteration += 1
            runners = result.get("env_runners", {})
            timesteps += int(runners.get("num_env_steps_sampled", 0))
            learners = result.get("learners", {})
            elapsed = time.perf_counter() - t0
            fps = (timesteps - start_timesteps) / elapsed if elapsed > 0 else 0.0
            # Sums over the iteration's finished episodes (NaN or absent when none ended).
            n_ep = float(runners.get("steer_episodes") or 0)
            n_ep = int(n_ep) if np.isfinite(n_ep) else 0
            success = float(runners.get(f"steer_{rate_key}") or 0) / n_ep if n_ep else None
            scalars = [
                ("rollout/ep_len_mean", runners.get("episode_len_mean")),
                (f"rollout/{rate_name}_rate", success),
                ("time/fps", fps),
                *setup.scalars(runners, learners, module_ids),
            ]
            for key, value in scalars:
                if value is not None and np.isfinite(value):
                    writer.add_scalar(key, float(value), timesteps)
            line = f"[{iteration:4d}] {timesteps:>10,}/{total:,} steps"
            line += setup.returns_text(runners, module_ids)
            if success is not None:
                line += f" | {rate_name} {100 * success:5.1f}% of {n_ep}"
            eta = (total - timesteps) / fps if fps > 0 else 0.0
            line += f" | {fps:,.0f} steps/s | eta {_fmt_eta(eta)}"
            if timesteps >= next_eval or timesteps >= total:
                rate, length = setup.evaluate(algo, env_id, opts, module_ids, n_eval, eval_seed)
                evals["timesteps"].append(timesteps)
                evals[rate_key].append(rate)
                evals["ep_lengths"].append(length)
                writer.add_scalar(f"eval/{rate_name}_rate", rate, timesteps)
                writer.add_scalar("eval/mean_ep_length", length, timesteps)
                paths.eval.mkdir(parents=True, exist_ok=True)
                tmp = paths.eval / f".evaluations.tmp-{os.getpid()}.npz"
                np.savez(tmp, **{k: np.asarray(v) for k, v in evals.items()})
                os.replace(tmp, eval_file)
                line += f" | eval {rate_name} {100 * rate:.0f}%"
                next_eval = timesteps + int(opts["eval_freq"])
            if opts["progress"]:
                print(line, flush=True)
            if timesteps >= next_ckpt and timesteps < total:
                save_checkpoint(
                    algo, paths.checkpoints / f"{CHECKPOINT_PREFIX}{timesteps:09d}", meta_now()
                )
                next_ckpt = timesteps + int(opts["checkpoint_freq"])
    except KeyboardInterrupt:
        interrupted = True
    wall = time.perf_counter() - t0
    writer.flush()
    writer.close()
    run.end_training(timesteps - start_timesteps, wall)

    if interrupted:
        # algo.train() is atomic from the driver's view: the last finished iteration is saved.
        path = save_checkpoint(
            algo, paths.checkpoints / f"{CHECKPOINT_PREFIX}{timesteps:09d}", meta_now()
        )
        algo.stop()
        return run.interrupted(timesteps, path)

    final = save_checkpoint(algo, model_dir(paths), meta_now())
    algo.stop()
    run.trained(timesteps, "checkpoint", final)

    extra: dict[str, Any] = {"model": str(final), "framework": "rllib"}
    extra.update(setup.final_extra(final, module_ids))
    if not run.compare(env_id, final, extra, "checkpoint"):
        return 130
    gif = ", episode.gif" if opts["gif"] else ""
    survival = setup.comparison_files
    run.finish(
        "model/ (RLlib checkpoint), config.json, comparison.csv, comparison.json, "
        f"episodes.csv{survival}{gif}, checkpoints/, eval/, tb/"
    )
    print(f"compare again: python -m agents.compare --model {final}")
    return 0


__all__ = ["latest_checkpoint", "main", "resolve_options", "train", "wants_rllib"]
