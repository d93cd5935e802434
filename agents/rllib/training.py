"""``train.py --framework rllib``: PPO on RLlib (Ray), on one machine or a Ray cluster.

    python train.py --framework rllib                          # local Ray, in-process
    python train.py --framework rllib --address auto           # join a running cluster
    python train.py --framework rllib --address HEAD:6379 --num-env-runners 8 --envs-per-runner 1024
    python train.py --resume --name <run>                      # continue an RLlib run
    python train.py --framework rllib --env team_pursuit [--learned pursuers|evaders|both]

The multi-agent team task (``--env team_pursuit``) uses the same run folder and loop with
the pieces :mod:`agents.rllib.team` adds (one shared module per learned role).

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

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.policies import ENV_SHORT, PolicyLoadError, UsageError, env_tag
from agents.rllib.cluster import check_address, start_ray, stop_ray
from agents.rllib.config import HYPERPARAMS, build_config
from agents.rllib.policy import METADATA_FILE, read_rllib_metadata
from agents.training import options as run_options
from agents.training.run import (
    EVAL_SEED,
    RunPaths,
    atomic_write_json,
    check_new_run_dir,
)
from steer_env.cli import fail, non_negative_int, positive_int

PROG = "python train.py"
FRAMEWORKS = ("sb3", "rllib")
#: RLlib defaults: one runner of 256 envs and the learner in the driver (2 cores: one each).
DEFAULT_ENV_RUNNERS = 1
DEFAULT_ENVS_PER_RUNNER = 32
DEFAULT_TIMESTEPS = {"steer_env/Pursuit-v0": 500_000, "steer_env/Evasion-v0": 1_000_000}
#: Options a resumed run takes from its config.json unless given again.
RESUMABLE = (*run_options.RESUMABLE, "num_env_runners", "envs_per_runner", "num_learners")
#: Options fixed for the life of a run.
FIXED = ("env", "seed", "learned")
CHECKPOINT_PREFIX = "ckpt_"


# ------------------------------------------------------------------ CLI hooks
def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--framework`` and the RLlib options to train.py's parser (no ray import)."""
    g = p.add_argument_group("RLlib (--framework rllib)")
    g.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        default=None,
        help="sb3 (default) or rllib: PPO on RLlib/Ray, locally or on a cluster",
    )
    g.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join: auto or HOST:PORT (default $RAY_ADDRESS, else a local "
        "in-process Ray)",
    )
    g.add_argument(
        "--num-env-runners",
        type=non_negative_int,
        default=None,
        help=f"RLlib env runner actors, 1 CPU each (default {DEFAULT_ENV_RUNNERS}; "
        "0 samples in the driver)",
    )
    g.add_argument(
        "--envs-per-runner",
        type=positive_int,
        default=None,
        help=f"sub-envs of each runner's native vector env (default {DEFAULT_ENVS_PER_RUNNER})",
    )
    g.add_argument(
        "--num-learners",
        type=non_negative_int,
        default=None,
        help="RLlib learner actors, 1 CPU each (default 0: learn in the driver)",
    )
    if "--learned" not in p._option_string_actions:  # train.py may define it itself
        from agents.rllib.team import LEARNED

        g.add_argument(
            "--learned",
            choices=LEARNED,
            default=None,
            help="team tasks (--env team_pursuit): the learned roles, one shared policy each "
            "(default pursuers)",
        )


def wants_rllib(args: argparse.Namespace) -> bool:
    """``--framework rllib``, or ``--resume`` of a run that was trained with RLlib."""
    if getattr(args, "framework", None) == "rllib":
        return True
    if args.resume and args.name and getattr(args, "framework", None) is None:
        cfg = Path(args.out) / args.name / "config.json"
        try:
            return json.loads(cfg.read_text()).get("options", {}).get("framework") == "rllib"
        except (OSError, ValueError, AttributeError):
            return False
    return False


def main(args: argparse.Namespace) -> int:
    """Entry point from train.py: one-line errors and exit codes as the SB3 path."""
    try:
        opts, paths, previous = resolve_options(args)
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


def resolve_options(args: argparse.Namespace) -> tuple[dict[str, Any], RunPaths, dict[str, Any]]:
    """This session's options (defaults filled in, or read from config.json on resume)."""
    given = run_options.given_options(args)
    if given.get("algo", "ppo") != "ppo":
        raise UsageError("--framework rllib trains PPO only (drop --algo)")
    if "n_envs" in given:
        raise UsageError(
            "--n-envs is for sb3; with rllib use --envs-per-runner and --num-env-runners"
        )
    if given.get("device", "auto") == "cuda":
        raise UsageError("--framework rllib trains on CPU here (drop --device cuda)")
    from agents.rllib import team as rllib_team

    previous: dict[str, Any] = {}
    if args.resume:

        def check(old: dict[str, Any]) -> None:
            if old.get("framework") != "rllib":
                raise UsageError(f"run {args.name} was not trained with RLlib; drop --framework")
            if "learned" in given and not rllib_team.is_team_task(old.get("env")):
                raise UsageError(f"--learned is for the team task; run {args.name} is not one")

        # The temporary files of a killed run are removed without a note (stale is unused).
        opts, paths, previous, _stale = run_options.resumed_run(args, FIXED, RESUMABLE, check)
    else:
        env = given.get("env", "steer_env/Pursuit-v0")
        seed = given.get("seed", 0)
        team = rllib_team.is_team_task(env)
        if "learned" in given and not team:
            raise UsageError(run_options.team_only("learned"))
        tag = env_tag(env)
        if team:
            tag += f"-{given.get('learned', rllib_team.DEFAULT_LEARNED)}"
        name = given.get("name") or run_options.run_name(tag, "rllib-ppo", seed)
        paths = RunPaths(args.out / name)
        # prepare_run_dir is called only after Ray started: check the folder here.
        check_new_run_dir(paths, args.overwrite)
        default_timesteps = rllib_team.DEFAULT_TIMESTEPS if team else DEFAULT_TIMESTEPS[env]
        timesteps = given.get("timesteps", default_timesteps)
        envs = rllib_team.DEFAULT_ENVS_PER_RUNNER if team else DEFAULT_ENVS_PER_RUNNER
        opts = {
            "env": env,
            "seed": seed,
            "name": name,
            "timesteps": timesteps,
            "num_env_runners": given.get("num_env_runners", DEFAULT_ENV_RUNNERS),
            "envs_per_runner": given.get("envs_per_runner", envs),
            "num_learners": given.get("num_learners", 0),
        }
        if team:
            opts["learned"] = given.get("learned", rllib_team.DEFAULT_LEARNED)
        opts.update(run_options.new_run_options(given, timesteps))
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
    from agents.training.run import versions as base

    out = base()
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


def evaluate(algo: Any, env_id: str, episodes: int, seed: int) -> tuple[float, float]:
    """Success rate and mean length of ``episodes`` deterministic episodes of the current
    policy (seeds ``seed + k``), played in the driver on the native vector env."""
    from agents.evaluation.compare import play_episodes
    from agents.rllib.policy import RLlibPolicy

    module = algo.get_module()
    policy = RLlibPolicy(module, env_id, Path("."), {"algo": "ppo"})
    res = play_episodes(env_id, lambda env, s: policy, episodes, seed)
    return float(res.success.mean()), float(res.length.mean())


def train(
    opts: dict[str, Any], paths: RunPaths, previous: dict[str, Any], ray_info: dict[str, Any]
) -> int:
    import torch

    from agents.rllib import team as rllib_team
    from agents.training.run import prepare_run_dir

    t_script = time.perf_counter()
    env_id = opts["env"]
    team = rllib_team.is_team_task(env_id)
    learned = opts.get("learned", rllib_team.DEFAULT_LEARNED)
    # RLlib's module ids: one shared module per learned role, or the single-agent default.
    module_ids = rllib_team.MODULES[learned] if team else ("default_policy",)
    start = latest_checkpoint(paths) if opts["resume"] else None
    if opts["resume"] and start is None:
        raise UsageError(f"cannot resume: no complete checkpoint in {paths.root}")
    if not opts["resume"]:
        prepare_run_dir(paths, resume=False, overwrite=opts["overwrite"])
    start_timesteps = start[1] if start else 0
    sessions = list(previous.get("sessions", []))
    session_index = len(sessions)
    torch.manual_seed(int(opts["seed"]) + session_index)
    torch.set_num_threads(int(opts["threads"]))

    hp = previous.get("hyperparameters") or {
        **HYPERPARAMS,
        **(rllib_team.HYPERPARAMS if team else {}),
    }
    config = (rllib_team.build_config if team else build_config)(
        *((env_id, learned) if team else (env_id,)),
        int(opts["seed"]),
        session_index,
        int(opts["num_env_runners"]),
        int(opts["envs_per_runner"]),
        int(opts["num_learners"]),
        hp=hp,
    )
    algo = config.build_algo()
    if start:
        algo.restore_from_path(str(start[0].resolve()))
        run_options.print_resuming(paths, start[0], start_timesteps)

    if team:
        spaces = rllib_team.probe(env_id, learned)
    else:
        import gymnasium as gym

        probe = gym.make(env_id)
        spaces = {
            "env_id": env_id,
            "obs_shape": list(probe.observation_space.shape),
            "action_shape": list(probe.action_space.shape),
        }
        probe.close()
    meta = {
        **spaces,
        "algo": "ppo",
        "framework": "rllib",
        "seed": int(opts["seed"]),
        "run_name": opts["name"],
        "versions": versions(),
    }
    session = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "start_timesteps": start_timesteps,
        "cluster": ray_info,
        "num_env_runners": int(opts["num_env_runners"]),
        "envs_per_runner": int(opts["envs_per_runner"]),
        "num_learners": int(opts["num_learners"]),
        # Where RLlib placed the env runners (the tests check both nodes of a cluster get one).
        "env_runners": algo.env_runner_group.foreach_env_runner(
            runner_location, local_env_runner=False
        ),
    }
    sessions.append(session)
    cfg_json = {
        "options": opts,
        "hyperparameters": hp,
        "eval_seed": EVAL_SEED + int(opts["seed"]),
        "seeding": "env i of runner w in session k resets with "
        "SeedSequence([seed, k, w]).generate_state(envs_per_runner, uint64)[i] "
        f"(agents/rllib/{'team_env' if team else 'env'}.py)",
        "versions": meta["versions"],
        "command": [sys.executable, *sys.argv],
        "status": "training",
        "sessions": sessions,
        "run_dir": str(paths.root),
    }
    atomic_write_json(paths.config, cfg_json)

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(paths.tensorboard / "RLlib_PPO"), purge_step=start_timesteps or None)
    total = int(opts["timesteps"])
    timesteps = start_timesteps
    next_ckpt = start_timesteps + int(opts["checkpoint_freq"])
    next_eval = start_timesteps + int(opts["eval_freq"])
    eval_file = paths.eval / "evaluations.npz"
    # Team runs evaluate the team's capture rate (every evader captured), whichever role
    # is learned; single-agent runs the learned agent's success rate.
    rate_key, rate_name = ("captures", "capture") if team else ("successes", "success")
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
            + (f" (learned {learned}: modules {', '.join(module_ids)})" if team else "")
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
            ret = runners.get("episode_return_mean")
            # Sums over the iteration's finished episodes (NaN or absent when none ended).
            n_ep = float(runners.get("steer_episodes") or 0)
            n_ep = int(n_ep) if np.isfinite(n_ep) else 0
            success = float(runners.get(f"steer_{rate_key}") or 0) / n_ep if n_ep else None
            # Per-module returns (team runs: episode return summed over the role's agents).
            module_returns = runners.get("module_episode_returns_mean") or {}
            scalars = [
                ("rollout/ep_len_mean", runners.get("episode_len_mean")),
                (f"rollout/{rate_name}_rate", success),
                ("time/fps", fps),
            ]
            if not team:
                scalars.append(("rollout/ep_rew_mean", ret))
            for m in module_ids:
                learner = learners.get(m, {})
                sub = f"{m}/" if team else ""
                scalars += [
                    (f"train/{sub}policy_loss", learner.get("policy_loss")),
                    (f"train/{sub}value_loss", learner.get("vf_loss")),
                    (f"train/{sub}entropy", learner.get("entropy")),
                    (f"train/{sub}explained_variance", learner.get("vf_explained_var")),
                ]
                if team:
                    scalars.append((f"rollout/{m}/ep_rew_mean", module_returns.get(m)))
            for key, value in scalars:
                if value is not None and np.isfinite(value):
                    writer.add_scalar(key, float(value), timesteps)
            line = f"[{iteration:4d}] {timesteps:>10,}/{total:,} steps"
            if team:
                for m in module_ids:
                    r = module_returns.get(m)
                    if r is not None and np.isfinite(r):
                        line += f" | {m} return {r:6.3f}"
            elif ret is not None and np.isfinite(ret):
                line += f" | return {ret:6.3f}"
            if success is not None:
                line += f" | {rate_name} {100 * success:5.1f}% of {n_ep}"
            eta = (total - timesteps) / fps if fps > 0 else 0.0
            line += f" | {fps:,.0f} steps/s | eta {_fmt_eta(eta)}"
            if timesteps >= next_eval or timesteps >= total:
                if team:
                    modules = {m: algo.get_module(m) for m in module_ids}
                    rate, length = rllib_team.evaluate(modules, env_id, learned, n_eval, eval_seed)
                else:
                    rate, length = evaluate(algo, env_id, n_eval, eval_seed)
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
    done = timesteps - start_timesteps
    session["train_wall_s"] = round(wall, 2)
    session["fps"] = run_options.session_fps(done, wall)
    session["end_timesteps"] = timesteps

    if interrupted:
        # algo.train() is atomic from the driver's view: the last finished iteration is saved.
        path = save_checkpoint(
            algo, paths.checkpoints / f"{CHECKPOINT_PREFIX}{timesteps:09d}", meta_now()
        )
        session["status"] = cfg_json["status"] = "interrupted"
        atomic_write_json(paths.config, cfg_json)
        algo.stop()
        run_options.print_interrupted(PROG, timesteps, total, path, opts)
        return 130

    final = save_checkpoint(algo, model_dir(paths), meta_now())
    algo.stop()
    session["status"] = cfg_json["status"] = "trained"
    atomic_write_json(paths.config, cfg_json)
    run_options.print_trained(done, wall, session["fps"], "checkpoint", final)

    from agents.training.run import final_comparison

    extra: dict[str, Any] = {"model": str(final), "framework": "rllib"}
    if team and set(module_ids) == {"pursuer", "evader"}:
        # Both roles learned: the table plays the trained modules against each other too.
        from agents.evaluation.team import load_team_policy

        extra["opponent"] = load_team_policy(final, "evader")
    if not final_comparison(env_id, final, opts, paths, cfg_json, extra, PROG, "checkpoint"):
        return 130
    cfg_json["total_wall_s"] = round(time.perf_counter() - t_script, 2)
    atomic_write_json(paths.config, cfg_json)
    gif = ", episode.gif" if opts["gif"] else ""
    written = (
        f"model/ (RLlib checkpoint), config.json, comparison.csv, comparison.json, "
        f"episodes.csv{gif}, checkpoints/, eval/, tb/"
        if team
        else "model/ (RLlib checkpoint), config.json, comparison.csv, comparison.json, "
        f"episodes.csv, survival.png{gif}, checkpoints/, eval/, tb/"
    )
    print(
        f"\nwrote {paths.root}/: {written} "
        f"(tensorboard --logdir {paths.tensorboard}); total {cfg_json['total_wall_s']:.0f} s"
    )
    print(f"compare again: python -m agents.compare --model {final}")
    return 0


__all__ = [
    "ENV_SHORT",
    "add_arguments",
    "build_config",
    "check_address",
    "latest_checkpoint",
    "main",
    "wants_rllib",
]
