"""Options, run folder and status messages of a training run, shared by both frameworks of
``train.py``: the SB3 path (``train.py``) and ``--framework rllib``
(:mod:`agents.rllib.training`).

A new run takes its options from the command line, defaults filled in; a resumed run
(``--resume --name <run>``) takes them from its ``config.json``: the options fixed for the
life of a run may not be given again with another value, the resumable ones may be given
again to change them (``--timesteps``: the new total). Each framework names its own fixed
and resumable options (:data:`RESUMABLE` lists those every framework has); this module
holds what they do with them.

Imports no torch, SB3 or ray.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.evaluation.compare import DEFAULT_SEED
from agents.evaluation.policies import UsageError
from agents.training.run import RunPaths, prepare_run_dir, read_json

#: Options of every framework that a resumed run takes from its config.json unless given
#: again (each framework adds its own).
RESUMABLE = (
    "timesteps",
    "threads",
    "eval_episodes",
    "eval_freq",
    "periodic_eval_episodes",
    "checkpoint_freq",
    "compare_seed",
    "gif",
    "progress",
)
#: Defaults of a new run's options that every framework has (``eval_freq`` and
#: ``checkpoint_freq`` default to a tenth of the run: :func:`new_run_options`).
DEFAULTS: dict[str, Any] = {
    "threads": 1,
    "eval_episodes": 500,
    "compare_seed": DEFAULT_SEED,
    "periodic_eval_episodes": 50,
    "gif": True,
    "progress": True,
}


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line (the parser's defaults are all None)."""
    return {k: v for k, v in vars(args).items() if v is not None}


def team_only(option: str) -> str:
    """The error for a team-task option (``learned``, ``opponent_model``, ...) given to a
    single-agent task, the same in both frameworks."""
    return f"{flag(option)} is for the team task (--env team_pursuit)"


def flag(option: str) -> str:
    """The command-line flag of an option name: ``n_envs`` -> ``--n-envs``."""
    return "--" + option.replace("_", "-")


def resumed_run(
    args: argparse.Namespace,
    fixed: tuple[str, ...],
    resumable: tuple[str, ...],
    check: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], RunPaths, dict[str, Any], list[Path]]:
    """Options of ``--resume --name <run>``: the ``fixed`` and ``resumable`` options of the
    run's config.json, the resumable ones given again replacing theirs. Returns the options,
    the run paths, the previous config and the temporary files of a killed run that were
    removed. ``check(previous_options)`` runs before the fixed options are compared;
    :class:`UsageError` for a missing name or run folder, or a fixed option given with
    another value."""
    if args.name is None:
        raise UsageError("--resume needs --name (the run folder under --out)")
    given = given_options(args)
    paths = RunPaths(args.out / args.name)
    stale = prepare_run_dir(paths, resume=True, overwrite=False)
    previous = read_json(paths.config)
    old = previous.get("options", {})
    if check is not None:
        check(old)
    for key in fixed:
        if key in given and given[key] != old.get(key):
            raise UsageError(
                f"run {args.name} was started with {flag(key)} {old.get(key)}; "
                "drop the option or start a new run"
            )
    opts = {
        **{k: old[k] for k in (*fixed, *resumable) if k in old},
        **{k: given[k] for k in resumable if k in given},
    }
    opts["name"] = args.name
    return opts, paths, previous, stale


def run_name(tag: str, algo: str, seed: int) -> str:
    """The default name of a new run: ``{tag}__{algo}__{seed}__{YYYYmmdd-HHMMSS}``."""
    return f"{tag}__{algo}__{seed}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def new_run_options(given: dict[str, Any], timesteps: int) -> dict[str, Any]:
    """A new run's options of :data:`DEFAULTS` (given or default), then ``eval_freq`` and
    ``checkpoint_freq`` (default ``timesteps // 10``, at least 1)."""
    opts = {key: given.get(key, default) for key, default in DEFAULTS.items()}
    opts["eval_freq"] = given.get("eval_freq", max(1, timesteps // 10))
    opts["checkpoint_freq"] = given.get("checkpoint_freq", max(1, timesteps // 10))
    return opts


def note_stale(prog: str, paths: RunPaths, stale: list[Path]) -> None:
    """Tell on stderr which temporary files of a killed run were removed (if any)."""
    if stale:
        print(
            f"{prog}: note: removed {len(stale)} temporary file(s) left by a killed run: "
            + ", ".join(str(f.relative_to(paths.root)) for f in stale),
            file=sys.stderr,
        )


def resume_command(opts: dict[str, Any], timesteps: int) -> str:
    """The command line that continues run ``opts["name"]`` up to ``timesteps`` (whichever
    framework trained it: ``--resume`` finds out from its config.json)."""
    out = f" --out {opts['out']}" if opts["out"] != "runs" else ""
    return f"python train.py --resume --name {opts['name']}{out} --timesteps {timesteps}"


def print_resuming(paths: RunPaths, checkpoint: Path, timesteps: int) -> None:
    print(f"resuming {paths.root} from {checkpoint.name} at {timesteps:,} timesteps")


def print_interrupted(
    prog: str, timesteps: int, total: int, checkpoint: Path, opts: dict[str, Any]
) -> None:
    """The stderr line of a training interrupted (Ctrl-C) at ``timesteps`` of ``total``."""
    print(
        f"{prog}: interrupted at {timesteps:,}/{total:,} timesteps; checkpoint {checkpoint}; "
        f"resume with: {resume_command(opts, total)}",
        file=sys.stderr,
    )


def session_fps(done: int, wall: float) -> float:
    """Timesteps per second of a session (0 when nothing was trained)."""
    return round(done / wall, 1) if wall > 0 and done > 0 else 0.0


def print_trained(done: int, wall: float, fps: float, what: str, path: Path) -> None:
    """``trained N timesteps in S s (F fps); <what> <path>`` when anything was trained."""
    if done > 0:
        print(f"trained {done:,} timesteps in {wall:.1f} s ({fps:,.0f} fps); {what} {path}")
