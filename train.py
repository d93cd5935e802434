#!/usr/bin/env python
"""Train a PPO (or SAC) agent on a steer-env task, then compare it with the scripted agents.

    python train.py                                   # PPO pursuer on Pursuit-v0, < 5 min
    python train.py --env evasion --timesteps 500000 --seed 0 --name evasion-baseline
    python train.py --algo sac --env pursuit          # SAC (4 envs by default)
    python train.py --resume --name <run>             # continue an interrupted run
    python train.py --resume --name <run> --timesteps 600000   # ... or train it further
    python train.py --framework rllib --address auto  # PPO on RLlib/Ray (agents/rllib/training.py)

Training runs on the native batched vector env (:func:`steer_env.envs.sb3.make_sb3_vec_env`)
with a progress bar, tensorboard logs, a periodic evaluation on a separate seeded env
(success rate included) and periodic checkpoints. Afterwards the model is compared with
the scripted agents of its role on ``--eval-episodes`` paired seeded episodes (see
``agents/evaluation/compare.py``) and an episode GIF is rendered. Everything goes to
``<--out>/<name>/`` (layout in ``agents/training/run.py``).

Ctrl-C stops training at the next step, saves a checkpoint and exits with status 130,
printing the command that resumes the run. Files are always written atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.evaluation.compare import DEFAULT_SEED, env_arg
from agents.evaluation.policies import PolicyLoadError, UsageError, env_tag
from agents.training import options as run_options
from agents.training.run import DEFAULT_N_ENVS as N_ENVS
from agents.training.run import (
    EVAL_SEED,
    NAME_RE,
    ON_POLICY,
    TRAIN_ALGOS,
    RunPaths,
    Session,
    atomic_write_json,
    default_timesteps,
    hyperparameters,
    latest_checkpoint,
    prepare_run_dir,
    trained_timesteps,
)
from agents.training.run import session_seed as derive_session_seed
from steer_env import cli
from steer_env.cli import OneLineParser, positive_int

PROG = "python train.py"
#: Options a resumed run takes from its config.json unless given again.
RESUMABLE = (*run_options.RESUMABLE, "device")
#: Options fixed for the life of a run.
FIXED = ("env", "algo", "n_envs", "seed", "learned", "opponent_model", "opponent_strategy")


def algo_arg(text: str) -> str:
    key = text.strip().lower()
    if key not in TRAIN_ALGOS:
        raise argparse.ArgumentTypeError(
            f"unknown algorithm {text!r}: use one of {', '.join(TRAIN_ALGOS)}"
        )
    return key


def name_arg(text: str) -> str:
    if not NAME_RE.match(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(
            f"bad run name {text!r}: use letters, digits, '.', '_' and '-' (no '/')"
        )
    return text


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Train PPO/SAC on steer_env/Pursuit-v0 or Evasion-v0, then compare the "
        "learned agent with the scripted ones. Defaults: PPO pursuer, < 5 min.",
    )
    # default=None everywhere: tells "given" from "default" when resuming.
    p.add_argument(
        "--env",
        type=env_arg,
        default=None,
        help="pursuit (default), evasion or team_pursuit (shared-parameter PPO for a team); "
        "full ids accepted",
    )
    p.add_argument(
        "--learned",
        choices=("pursuers", "evaders", "both"),
        default=None,
        help="team_pursuit: the role trained with one shared policy (default pursuers; the "
        "other role plays its scripted strategy, or --opponent-model); both: two policies "
        "trained together (--framework rllib)",
    )
    p.add_argument(
        "--opponent-model",
        type=Path,
        default=None,
        help="team_pursuit: a trained model of the other role, frozen, to train against "
        "(a best response to it)",
    )
    p.add_argument(
        "--opponent-strategy",
        default=None,
        help="team_pursuit: the other role's scripted strategy (pursuers: reynolds, "
        "cooperative; evader: flow; default the task's: reynolds / flow)",
    )
    p.add_argument("--algo", type=algo_arg, default=None, help="ppo (default) or sac")
    p.add_argument(
        "--timesteps",
        type=positive_int,
        default=None,
        help="total training timesteps (default: ppo 300k pursuit / 500k evasion, "
        "sac 50k); with --resume the new total",
    )
    p.add_argument(
        "--n-envs",
        type=positive_int,
        default=None,
        help="parallel envs in the batched simulation (default ppo 16, sac 4)",
    )
    cli.add_seed(p, None, "training seed", shown=0)
    p.add_argument("--out", type=Path, default=Path("runs"), help="runs folder (default runs)")
    p.add_argument(
        "--name",
        type=name_arg,
        default=None,
        help="run name (default {env}__{algo}__{seed}__{YYYYmmdd-HHMMSS})",
    )
    cli.add_device(p, "cpu for PPO, cuda for SAC if available", default=None)
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="torch CPU threads (default 1: fastest measured on 2 shared cores)",
    )
    p.add_argument(
        "--episodes",
        dest="eval_episodes",
        metavar="EPISODES",
        type=positive_int,
        default=None,
        help="paired episodes of the final comparison (default 500)",
    )
    cli.add_alias(p, "--eval-episodes", "--episodes")
    p.add_argument(
        "--compare-seed",
        type=cli.seed_int,
        default=None,
        help=f"first episode seed of the final comparison, as agents.compare --seed "
        f"(0 to {cli.SEED_MAX}; default {DEFAULT_SEED})",
    )
    p.add_argument(
        "--eval-freq",
        type=positive_int,
        default=None,
        help="timesteps between periodic evaluations (default timesteps/10)",
    )
    p.add_argument(
        "--periodic-eval-episodes",
        type=positive_int,
        default=None,
        help="episodes per periodic evaluation (default 50)",
    )
    p.add_argument(
        "--checkpoint-freq",
        type=positive_int,
        default=None,
        help="timesteps between checkpoints (default timesteps/10)",
    )
    p.add_argument(
        "--resume", action="store_true", help="continue run --name from its latest checkpoint"
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace an existing run folder of the same name"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--gif",
        dest="gif",
        action="store_true",
        default=None,
        help="render the episode GIF (default; use to re-enable on --resume)",
    )
    g.add_argument(
        "--no-gif", dest="gif", action="store_false", default=None, help="skip the episode GIF"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show a progress bar (default)",
    )
    g.add_argument(
        "--no-progress", dest="progress", action="store_false", default=None, help="no progress bar"
    )
    from agents.rllib.training import add_arguments as add_rllib_arguments  # imports no ray

    add_rllib_arguments(p)
    return p


def resolve_options(args: argparse.Namespace) -> tuple[dict[str, Any], RunPaths, dict[str, Any]]:
    """All options of this session (defaults filled in, or taken from the run's config.json
    when resuming), the run paths and the previous config (``{}`` for a new run)."""
    given = run_options.given_options(args)
    previous: dict[str, Any] = {}
    if args.resume:
        opts, paths, previous, stale = run_options.resumed_run(args, FIXED, RESUMABLE)
    else:
        env = given.get("env", "steer_env/Pursuit-v0")
        algo = given.get("algo", "ppo")
        seed = given.get("seed", 0)
        name = given.get("name") or run_options.run_name(env_tag(env), algo, seed)
        paths = RunPaths(args.out / name)
        from agents.evaluation.team import check_opponent_strategy, is_team_env

        if not is_team_env(env):
            for key in ("learned", "opponent_model", "opponent_strategy"):
                if key in given:
                    raise UsageError(run_options.team_only(key))
        timesteps = given.get("timesteps", default_timesteps(algo, env))
        opts = {
            "env": env,
            "algo": algo,
            "seed": seed,
            "name": name,
            "timesteps": timesteps,
            "n_envs": given.get("n_envs", N_ENVS[algo]),
            "device": given.get("device", "auto"),
            **run_options.new_run_options(given, timesteps),
        }
        if is_team_env(env):
            opts["learned"] = given.get("learned", "pursuers")
            if opts["learned"] == "both":
                raise UsageError(
                    "stable-baselines3 trains one role at a time: train against a frozen "
                    "--opponent-model, or train both roles with --framework rllib"
                )
            opponent = given.get("opponent_model")
            opts["opponent_model"] = str(opponent) if opponent is not None else None
            opts["opponent_strategy"] = check_opponent_strategy(
                opts["learned"], given.get("opponent_strategy"), opts["opponent_model"]
            )
        stale = prepare_run_dir(paths, resume=False, overwrite=args.overwrite)
    run_options.note_stale(PROG, paths, stale)
    opts["out"] = str(args.out)
    return opts, paths, previous


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from agents.rllib import training as rllib_training

    if rllib_training.wants_rllib(args):  # PPO on RLlib/Ray: agents/rllib/training.py
        for opt in ("opponent_model", "opponent_strategy"):
            if getattr(args, opt) is not None:
                flag = run_options.flag(opt)
                return cli.fail(PROG, f"{flag} is not available with --framework rllib", 2)
        return rllib_training.main(args)
    for opt in ("address", "num_env_runners", "envs_per_runner", "num_learners"):
        if getattr(args, opt) is not None:
            return cli.fail(PROG, f"{run_options.flag(opt)} needs --framework rllib", 2)
    try:
        if args.device == "cuda":  # checked before a run folder is created
            from agents.training.run import resolve_device

            resolve_device("cuda", args.algo or "ppo")
        opts, paths, previous = resolve_options(args)
    except UsageError as exc:
        return cli.fail(PROG, exc, 2)
    try:
        return train(opts, paths, previous, resume=args.resume)
    except (UsageError, PolicyLoadError, ImportError, OSError) as exc:
        if not args.resume:  # a new run that failed before writing anything leaves no folder
            with contextlib.suppress(OSError):
                paths.root.rmdir()
        if isinstance(exc, ImportError):
            return cli.fail(PROG, f'{exc}; install the extras: pip install -e ".[train,render]"')
        return cli.fail(PROG, exc, 2 if isinstance(exc, UsageError) else 1)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted before training started; nothing to save", file=sys.stderr)
        return 130


def train(opts: dict[str, Any], paths: RunPaths, previous: dict[str, Any], resume: bool) -> int:
    t_script = time.perf_counter()
    env_id, algo = opts["env"], opts["algo"]
    start = latest_checkpoint(paths) if resume else None
    if resume and start is None:
        raise UsageError(f"cannot resume: no checkpoint or model in {paths.root}")
    start_timesteps = start[1] if start else 0

    # ---- Seeding, CleanRL style: everything random is seeded here, before it is created.
    # A resumed session draws a fresh seed from (seed, timesteps done), below 2**32
    # (agents.training.run.session_seed).
    import numpy as np
    import torch

    session_seed = derive_session_seed(int(opts["seed"]), start_timesteps)
    random.seed(session_seed)
    np.random.seed(session_seed)  # noqa: NPY002  (legacy global RNG, as SB3 seeds it)
    torch.manual_seed(session_seed)
    torch.backends.cudnn.deterministic = True
    torch.set_num_threads(int(opts["threads"]))  # 1 is fastest for these small MLPs

    from stable_baselines3.common.vec_env import VecMonitor

    from agents.evaluation.policies import algo_class
    from agents.training.run import (
        InterruptGuard,
        final_comparison,
        make_callbacks,
        resolve_device,
        save_checkpoint,
        save_model_atomic,
        versions,
    )
    from steer_env.envs.sb3 import make_sb3_vec_env

    device = resolve_device(opts["device"], algo)
    n_envs = int(opts["n_envs"])
    total = int(opts["timesteps"])
    from agents.evaluation.team import is_team_env, team_slots

    # SB3's n_envs: environments, or agent slots of the trained role for the team task.
    slots = n_envs * team_slots(opts) if is_team_env(env_id) else n_envs
    hp = previous.get("hyperparameters") or hyperparameters(algo, slots, total)
    progress = bool(opts["progress"])
    if progress:
        try:
            import rich  # noqa: F401
            import tqdm  # noqa: F401
        except ImportError:
            print(
                f"{PROG}: note: progress bar needs tqdm and rich; training without it",
                file=sys.stderr,
            )
            progress = False

    # Potential-based shaping leaves the optimal policy unchanged only when its discount is
    # the learner's: the env is built with the algorithm's gamma.
    env_kwargs = {"shaping_gamma": float(hp.get("gamma", 0.99))}
    n_eval = int(opts["periodic_eval_episodes"])
    meta_extra: dict[str, Any] = {}
    opponent = None
    if is_team_env(env_id):
        # Parameter sharing: one SB3 env slot per agent of the trained role
        # (steer_env.envs.sb3.TeamSB3VecEnv), the other role scripted or a frozen model.
        from agents.evaluation.team import LEARNED_ROLE, load_team_policy
        from steer_env.envs.sb3 import make_team_sb3_vec_env

        role = "pursuer" if opts["learned"] == "pursuers" else "evader"
        team_config: dict[str, Any] = {"learned": opts["learned"]}
        if opts.get("opponent_strategy"):
            other_role = "evader" if role == "pursuer" else "pursuer"
            team_config[f"{other_role}_strategy"] = opts["opponent_strategy"]
        if opts.get("opponent_model"):
            other = "evader" if role == "pursuer" else "pursuer"
            opponent = load_team_policy(opts["opponent_model"], other, device="cpu")
            team_config["learned"] = "both"
        assert team_config["learned"] in (LEARNED_ROLE[role], "both")

        def make_env(n: int, seed: int) -> Any:
            return make_team_sb3_vec_env(
                n, seed=seed, role=role, opponent=opponent, **team_config, **env_kwargs
            )

        meta_extra = {"role": role, "config": {}}
    else:

        def make_env(n: int, seed: int) -> Any:
            return make_sb3_vec_env(env_id, n_envs=n, seed=seed, **env_kwargs)

    train_env = VecMonitor(make_env(n_envs, session_seed))
    eval_env = VecMonitor(make_env(min(10, n_eval), EVAL_SEED + int(opts["seed"])))
    assert train_env.num_envs == slots
    cls = algo_class(algo)
    if start:
        model = cls.load(
            start[0], env=train_env, device=device, tensorboard_log=str(paths.tensorboard)
        )
        model.set_random_seed(session_seed)
        if algo not in ON_POLICY and paths.replay_buffer.is_file():
            model.load_replay_buffer(paths.replay_buffer)
        run_options.print_resuming(paths, start[0], start_timesteps)
    else:
        model = cls(
            "MlpPolicy",
            train_env,
            seed=session_seed,
            device=device,
            verbose=0,
            tensorboard_log=str(paths.tensorboard),
            **hp,
        )

    meta = {
        "env_id": env_id,
        "algo": algo,
        "seed": int(opts["seed"]),
        "run_name": opts["name"],
        "obs_shape": list(train_env.observation_space.shape),
        "action_shape": list(train_env.action_space.shape),
        "versions": versions(),
        **meta_extra,
    }
    sessions = list(previous.get("sessions", []))
    session = Session(
        started=datetime.now().isoformat(timespec="seconds"), start_timesteps=start_timesteps
    )
    sessions.append(session.__dict__)
    config = {
        "options": opts,
        "device_resolved": device,
        "hyperparameters": hp,
        "eval_seed": EVAL_SEED + int(opts["seed"]),
        "versions": meta["versions"],
        "command": [sys.executable, *sys.argv],
        "status": "training",
        "sessions": sessions,
        "run_dir": str(paths.root),
    }
    atomic_write_json(paths.config, config)

    remaining = total - start_timesteps
    guard = InterruptGuard()
    ckpt, callbacks = make_callbacks(
        paths,
        int(opts["checkpoint_freq"]),
        meta,
        guard,
        eval_env,
        int(opts["eval_freq"]),
        n_eval,
        EVAL_SEED + int(opts["seed"]),
        slots,
    )
    interrupted = False
    t0 = time.perf_counter()
    if remaining > 0:
        steps = trained_timesteps(algo, hp, slots, remaining)
        team_note = f" x {slots // n_envs} shared-policy agents" if slots != n_envs else ""
        if steps != remaining:
            unit = (
                f"whole rollouts of {hp['n_steps'] * slots:,} timesteps "
                f"(n_steps {hp['n_steps']} x {slots} envs)"
                if algo in ON_POLICY
                else f"whole steps of the {slots} envs"
            )
            print(
                f"note: {algo.upper()} trains in {unit}: {steps:,} timesteps instead of the "
                f"{remaining:,} asked for (run total {start_timesteps + steps:,})",
                flush=True,
            )
        print(
            f"training {algo.upper()} on {env_id} for {steps:,} timesteps "
            f"({n_envs} envs{team_note}, {device}) -> {paths.root}",
            flush=True,
        )
        try:
            with guard:
                model.learn(
                    remaining,
                    callback=callbacks,
                    progress_bar=progress,
                    reset_num_timesteps=start_timesteps == 0,
                    tb_log_name=algo.upper(),
                )
            interrupted = guard.requested
        except KeyboardInterrupt:
            interrupted = True
    else:
        print(
            f"{paths.root} already has {start_timesteps:,} >= {total:,} timesteps; pass a "
            "larger --timesteps to train further (evaluating only)"
        )
    wall = time.perf_counter() - t0
    done = int(model.num_timesteps) - start_timesteps
    session.train_wall_s = round(wall, 2)
    session.fps = run_options.session_fps(done, wall)

    if interrupted:
        if algo in ON_POLICY:
            # The partial rollout was never trained on: count only what the network learned.
            model.num_timesteps = max(ckpt.rollout_start, start_timesteps)
        path = save_checkpoint(model, paths, meta)
        session.end_timesteps = int(model.num_timesteps)
        session.status = "interrupted"
        config["status"] = "interrupted"
        config["sessions"][-1] = session.__dict__
        atomic_write_json(paths.config, config)
        train_env.close()
        eval_env.close()
        run_options.print_interrupted(PROG, int(model.num_timesteps), total, path, opts)
        return 130

    try:
        save_model_atomic(model, paths.model, meta)
        session.end_timesteps = int(model.num_timesteps)
        session.status = "trained"
        config["status"] = "trained"
        config["sessions"][-1] = session.__dict__
        atomic_write_json(paths.config, config)
        train_env.close()
        eval_env.close()
        run_options.print_trained(done, wall, session.fps, "model", paths.model)

    except KeyboardInterrupt:
        config["status"] = "interrupted while saving"
        atomic_write_json(paths.config, config)
        print(f"{PROG}: interrupted while saving the model to {paths.model}", file=sys.stderr)
        return 130

    # ---- comparison with the scripted agents on paired seeded episodes
    extra: dict[str, Any] = {"model": str(paths.model)}
    if opponent is not None:
        extra["opponent"] = opponent
    if not final_comparison(env_id, paths.model, opts, paths, config, extra, PROG):
        return 130

    config["total_wall_s"] = round(time.perf_counter() - t_script, 2)
    atomic_write_json(paths.config, config)
    names = ["model.zip", "config.json", "comparison.csv", "comparison.json", "episodes.csv"]
    names += ["survival.png", "episode.gif", "checkpoints/", "eval/", "tb/"]
    written = [n for n in names if (paths.root / n.rstrip("/")).exists()]
    tb = f" (tensorboard --logdir {paths.tensorboard})" if paths.tensorboard.is_dir() else ""
    print(f"\nwrote {paths.root}/: {', '.join(written)}{tb}; total {config['total_wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    sys.exit(main())
