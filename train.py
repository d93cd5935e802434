#!/usr/bin/env python
"""Train a PPO (or SAC) agent on a steer-env task, then compare it with the scripted agents.

    python train.py                                   # PPO pursuer on Pursuit-v0, about 30 s
    python train.py --env evasion --timesteps 500000 --seed 0 --name evasion-baseline
    python train.py --algo sac --env pursuit          # SAC (4 envs by default)
    python train.py --resume --name <run>             # continue an interrupted run
    python train.py --resume --name <run> --timesteps 600000   # ... or train it further
    python train.py --framework rllib --address auto  # PPO on RLlib/Ray (agents/rllib/training.py)

Read top to bottom: the options (:class:`Args`, every default of a run; those that depend on
the task and algorithm are :data:`agents.training.defaults.TRAINING_DEFAULTS`), then
:func:`train`: seed, envs, model, learn, save, compare. Training runs on the native batched
vector env (:func:`steer_env.envs.sb3.make_sb3_vec_env`) with a progress bar, tensorboard
logs, a periodic evaluation on a separate seeded env (success rate included) and periodic
checkpoints. Afterwards the model is compared with the scripted agents of its role on
``--episodes`` paired seeded episodes (``agents/evaluation/compare.py``) and an episode GIF
is rendered. Everything goes to ``<--out>/<name>/`` (layout in ``agents/training/run.py``;
the run's lifecycle, shared with RLlib, is :class:`agents.training.run.TrainingRun`).

Ctrl-C stops training at the next step, saves a checkpoint and exits with status 130,
printing the command that resumes the run. Files are always written atomically.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.evaluation.compare import DEFAULT_SEED
from agents.evaluation.policies import (
    PolicyLoadError,
    UsageError,
    config_pair,
    env_arg,
    resolve_device,
    task_names,
)
from agents.rllib.team import LEARNED
from agents.training import options, sb3
from agents.training.defaults import described, training_defaults
from agents.training.run import (
    EVAL_SEED,
    InterruptGuard,
    RunPaths,
    TrainingRun,
    model_metadata,
    release_run_dir,
    session_seed,
    versions,
)
from steer_env import cli
from steer_env.cli import positive_int

PROG = "python train.py"


def doc(help: str, **argparse: Any) -> dict[str, Any]:
    """A field's ``--help`` text and argparse settings (``type``, ``choices``, ``metavar``;
    ``flag``, ``alias``, ``group``, ``shown``, ``off``: see
    :func:`agents.training.options.build_parser`)."""
    return {"help": help, **argparse}


@dataclass(frozen=True)
class Args:
    """The options of ``python train.py`` (``--n-envs`` for ``n_envs``) and their defaults.
    ``None``: the task and algorithm's entry of ``TRAINING_DEFAULTS`` (``timesteps``,
    ``n_envs``, ``envs_per_runner``), or a tenth of the run (``eval_freq``,
    ``checkpoint_freq``). A resumed run takes its options from its config.json instead."""

    # fmt: off
    env: str = field(default="steer_env/Pursuit-v0", metadata=doc(
        f"{task_names()} (shared-parameter PPO for a team); full ids accepted",
        type=env_arg, shown="pursuit"))
    learned: str = field(default="pursuers", metadata=doc(
        "team_pursuit: the role trained with one shared policy (the other role plays its "
        "scripted strategy, or --opponent-model); both: two policies trained together "
        "(--framework rllib)", choices=LEARNED))
    opponent_model: Path | None = field(default=None, metadata=doc(
        "team_pursuit: a trained model of the other role, frozen, to train against (a best "
        "response to it)", type=Path))
    opponent_pool: Path | None = field(default=None, metadata=doc(
        "team_pursuit: a pool file of the other role (scripted strategies and models with "
        "weights, agents.evaluation.mixture): each env plays a member drawn at each reset",
        type=Path))
    opponent_strategy: str | None = field(default=None, metadata=doc(
        "team_pursuit: the other role's scripted strategy (pursuers: reynolds, cooperative; "
        "evader: flow; default the task's: reynolds / flow)"))
    init_model: Path | None = field(default=None, metadata=doc(
        "start from this model's network and weights (a model of the same task, algorithm and "
        "role) instead of a new network; this run's hyperparameters", type=Path))
    config: dict[str, Any] | None = field(default=None, metadata=doc(
        "a value of the task's configuration, e.g. --set n_sheep=50 (repeatable); the model "
        "records it, and comparing or rendering the model uses it",
        flag="--set", metavar="KEY=VALUE", action="append", type=config_pair, shown=None))
    curriculum: bool = field(default=True, metadata=doc(
        "train through the task's curriculum, where it has one: stages of configuration "
        "before its own (default)", off="train on the task's configuration throughout"))
    algo: str = field(default="ppo", metadata=doc("ppo or sac", type=sb3.algo_arg))
    timesteps: int | None = field(default=None, metadata=doc(
        "total training timesteps (default "
        f"{described('timesteps', ('ppo', 'sac', 'rllib-ppo'))}); with --resume the new total",
        type=positive_int))
    n_envs: int | None = field(default=None, metadata=doc(
        f"parallel envs in the batched simulation (default {described('n_envs', ('ppo', 'sac'))})",
        type=positive_int))
    seed: int = field(default=0, metadata=doc(
        f"training seed (0 to {cli.SEED_MAX})", type=cli.seed_int))
    out: Path = field(default=Path("runs"), metadata=doc("runs folder", type=Path))
    name: str | None = field(default=None, metadata=doc(
        "run name (default {env}__{algo}__{seed}__{YYYYmmdd-HHMMSS})", type=options.name_arg))
    device: str = field(default="auto", metadata=doc(
        "torch device", choices=cli.DEVICES, shown="auto: cpu for PPO, cuda for SAC if available"))
    threads: int = field(default=1, metadata=doc(
        "torch CPU threads (1: fastest measured on 2 shared cores)", type=positive_int))
    eval_episodes: int = field(default=500, metadata=doc(
        "paired episodes of the final comparison", flag="--episodes", alias="--eval-episodes",
        metavar="EPISODES", type=positive_int))
    compare_seed: int = field(default=DEFAULT_SEED, metadata=doc(
        "first episode seed of the final comparison, as agents.compare --seed "
        f"(0 to {cli.SEED_MAX})", type=cli.seed_int))
    eval_freq: int | None = field(default=None, metadata=doc(
        "timesteps between periodic evaluations (default timesteps/10)", type=positive_int))
    periodic_eval_episodes: int = field(default=50, metadata=doc(
        "episodes per periodic evaluation (a team's: every learned agent plays each)",
        type=positive_int))
    checkpoint_freq: int | None = field(default=None, metadata=doc(
        "timesteps between checkpoints (default timesteps/10)", type=positive_int))
    resume: bool = field(default=False, metadata=doc(
        "continue run --name from its latest checkpoint"))
    overwrite: bool = field(default=False, metadata=doc(
        "replace an existing run folder of the same name"))
    gif: bool = field(default=True, metadata=doc(
        "render the episode GIF (default; use to re-enable on --resume)",
        off="skip the episode GIF"))
    progress: bool = field(default=True, metadata=doc(
        "show a progress bar (default)", off="no progress bar"))
    framework: str = field(default="sb3", metadata=doc(
        "sb3 or rllib: PPO on RLlib/Ray, locally or on a cluster", choices=("sb3", "rllib"),
        group="rllib"))
    address: str | None = field(default=None, metadata=doc(
        "Ray cluster to join: auto or HOST:PORT (default $RAY_ADDRESS, else a local "
        "in-process Ray)", group="rllib"))
    num_env_runners: int = field(default=1, metadata=doc(
        "RLlib env runner actors, 1 CPU each (0 samples in the driver)",
        type=cli.non_negative_int, group="rllib"))
    envs_per_runner: int | None = field(default=None, metadata=doc(
        "sub-envs of each runner's native vector env (default "
        f"{described('n_envs', ('rllib-ppo',))})",
        type=positive_int, group="rllib"))
    num_learners: int = field(default=0, metadata=doc(
        "RLlib learner actors, 1 CPU each (0: learn in the driver)",
        type=cli.non_negative_int, group="rllib"))
    # fmt: on


def parse(argv: list[str] | None = None) -> tuple[Args, dict[str, Any]]:
    """The options (defaults filled in) and those given on the command line."""
    parser = options.build_parser(
        Args,
        prog=PROG,
        description="Train PPO/SAC on a registered task (--env), then compare the learned "
        "agents with the task's scripted ones. Defaults: a PPO pursuer on Pursuit-v0, about "
        "30 s.",
        groups={"rllib": "RLlib (--framework rllib)"},
    )
    given = options.given_options(parser.parse_args(argv))
    if "config" in given:  # --set KEY=VALUE pairs, the last of a name winning
        given["config"] = dict(given["config"])
    return Args(**given), given


def main(argv: list[str] | None = None) -> int:
    args, given = parse(argv)
    from agents.rllib import training as rllib_training  # imports no ray

    if rllib_training.wants_rllib(args, given):  # PPO on RLlib/Ray: agents/rllib/training.py
        return rllib_training.main(args, given)
    try:
        opts, paths, previous = sb3.resolve_options(args, given, PROG)
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
    finally:
        release_run_dir(paths.root)


def train(opts: dict[str, Any], paths: RunPaths, previous: dict[str, Any], resume: bool) -> int:
    run = TrainingRun(PROG, opts, paths, previous)
    env_id, algo, seed = opts["env"], opts["algo"], int(opts["seed"])
    start = sb3.latest_checkpoint(paths) if resume else None
    if resume and start is None:
        raise UsageError(f"cannot resume: no checkpoint or model in {paths.root}")
    start_timesteps = start[1] if start else 0

    # ---- Seeding, CleanRL style: everything random is seeded here, before it is created.
    # A resumed session draws a fresh seed from (seed, timesteps done), below 2**32.
    session = session_seed(seed, start_timesteps)
    sb3.seed_everything(session, int(opts["threads"]))

    # ---- Envs: the native batched vector env; a team task, or a configuration with several
    # agents of the learned role, trains one SB3 slot per agent of that role (one policy).
    # Potential-based shaping leaves the optimal policy unchanged only when its discount is
    # the learner's: the env is built with the algorithm's gamma, unless the task's training
    # table gives its own (flocking pays progress per m covered, undiscounted).
    from stable_baselines3.common.vec_env import VecMonitor

    device = resolve_device(opts["device"], algo)
    n_envs, total = int(opts["n_envs"]), int(opts["timesteps"])
    slots = sb3.agent_slots(opts)
    hp = previous.get("hyperparameters") or sb3.hyperparameters(algo, env_id, slots, total)
    progress = sb3.progress_bar(opts, PROG)
    config = dict(opts.get("config") or {})  # --set
    task_training = training_defaults(algo, env_id).config  # the task's own for training
    env_kwargs = {"shaping_gamma": float(hp.get("gamma", 0.99)), **task_training, **config}
    make_env, opponent, meta_extra = sb3.env_factory(opts, env_kwargs)
    n_eval = int(opts["periodic_eval_episodes"])

    # ---- A curriculum (the task's training entry) trains on its stages' configurations
    # first; the periodic evaluation and the comparison play the task's own.
    stages = sb3.stages_from(opts, start_timesteps)

    def training_env(overrides: dict[str, Any], env_seed: int) -> Any:
        make = sb3.env_factory(opts, {**env_kwargs, **overrides})[0] if overrides else make_env
        return VecMonitor(make(n_envs, env_seed))

    train_env = training_env(stages[0][1] if stages else {}, session)
    eval_env = VecMonitor(make_env(sb3.eval_envs(env_id, n_eval, config), EVAL_SEED + seed))
    assert train_env.num_envs == slots

    # ---- The engine compiles on its first use (a fresh install): pay it, or load it from
    # the cache, before the training clock starts, and say so when it was a compile.
    warmup_s = sb3.warm_engine(env_id, make_env)

    # ---- Model: new, from --init-model's weights, or the latest checkpoint; the session's seed.
    model = sb3.build_model(opts, hp, train_env, device, paths, session, start)
    meta = model_metadata(opts, obs_shape=list(train_env.observation_space.shape),
                          action_shape=list(train_env.action_space.shape), config=config,
                          versions=versions(), **meta_extra)  # fmt: skip
    run.begin(start_timesteps, hp, meta["versions"], resolved={"device_resolved": device},
              session={"warmup_s": round(warmup_s, 2)})  # fmt: skip

    # ---- Learn until the budget, Ctrl-C or a second Ctrl-C.
    guard = InterruptGuard()
    ckpt, callbacks = sb3.make_callbacks(paths, int(opts["checkpoint_freq"]), meta, guard,
                                         eval_env, int(opts["eval_freq"]),
                                         EVAL_SEED + seed, slots)  # fmt: skip
    interrupted = False
    t0 = time.perf_counter()
    if total > start_timesteps:
        sb3.print_training(opts, hp, slots, start_timesteps, device, paths.root)
        if opts.get("curriculum"):
            print(sb3.describe_curriculum(opts["curriculum"]), flush=True)
        try:
            with guard:
                for i, (until, overrides) in enumerate(stages):
                    done = int(model.num_timesteps)
                    if until <= done:  # the last rollout of a stage went past this one
                        continue
                    if i:  # a new stage: fresh envs of its configuration, seeded as a session
                        train_env.close()
                        train_env = training_env(overrides, session_seed(seed, done))
                        model.set_env(train_env)
                    model.learn(until - done, callback=callbacks, progress_bar=progress,
                                reset_num_timesteps=start_timesteps == 0 and i == 0,
                                tb_log_name=algo.upper())  # fmt: skip
                    if guard.requested:
                        break
            interrupted = guard.requested
        except KeyboardInterrupt:
            interrupted = True
    else:
        print(f"{paths.root} already has {start_timesteps:,} >= {total:,} timesteps; pass a "
              "larger --timesteps to train further (evaluating only)")  # fmt: skip
    run.end_training(int(model.num_timesteps) - start_timesteps, time.perf_counter() - t0)
    train_env.close()
    eval_env.close()

    # ---- Save: a checkpoint when interrupted, else the final model.
    if interrupted:
        if algo in sb3.ON_POLICY:
            # The partial rollout was never trained on: count only what the network learned.
            model.num_timesteps = max(ckpt.rollout_start, start_timesteps)
        path = sb3.save_checkpoint(model, paths, meta)
        return run.interrupted(int(model.num_timesteps), path)
    try:
        sb3.save_model_atomic(model, paths.model, meta)
        run.trained(int(model.num_timesteps), "model", paths.model)
    except KeyboardInterrupt:
        return run.interrupted_while_saving(paths.model)

    # ---- Compare with the scripted agents on paired seeded episodes.
    extra: dict[str, Any] = {"model": str(paths.model)}
    if opponent is not None:
        extra["opponent"] = opponent
    if not run.compare(env_id, paths.model, extra):
        return 130
    return run.finish()


if __name__ == "__main__":
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    sys.exit(main())
