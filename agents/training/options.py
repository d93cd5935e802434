"""Options of a training run, shared by both frameworks of ``train.py``: the SB3 path
(:mod:`agents.training.sb3`) and ``--framework rllib`` (:mod:`agents.rllib.training`).

:func:`build_parser` makes the command line of ``train.py``'s ``Args`` (whose fields hold
the defaults). A new run takes its options from the command line, defaults filled in
(those that depend on the task and algorithm from
:data:`agents.training.defaults.TRAINING_DEFAULTS`); a resumed run
(``--resume --name <run>``) takes them from its ``config.json``: the options fixed for the
life of a run may not be given again with another value, the resumable ones may be given
again to change them (``--timesteps``: the new total). Each framework names its own fixed
and resumable options (:data:`RESUMABLE` lists those every framework has); this module
holds what they do with them.

Imports no torch, SB3 or ray.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.evaluation.policies import UsageError
from agents.training.run import NAME_RE, RunPaths, prepare_run_dir, read_json
from steer_env import cli

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


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line (the parser's defaults are None, "not given":
    :func:`build_parser`)."""
    return {k: v for k, v in vars(args).items() if v is not None}


def team_only(option: str) -> str:
    """The error for a team-task option (``learned``, ``opponent_model``, ...) given to a
    single-agent task, the same in both frameworks."""
    return f"{flag(option)} is for the team task (--env team_pursuit)"


#: Options whose flag is not their name's (``train.py``'s ``Args``).
FLAGS = {"config": "--set", "eval_episodes": "--episodes"}


def flag(option: str) -> str:
    """The command-line flag of an option name: ``n_envs`` -> ``--n-envs``."""
    return FLAGS.get(option, "--" + option.replace("_", "-"))


def resumed_run(
    args: argparse.Namespace,
    fixed: tuple[str, ...],
    resumable: tuple[str, ...],
    check: Callable[[dict[str, Any]], None] | None = None,
    given: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], RunPaths, dict[str, Any], list[Path]]:
    """Options of ``--resume --name <run>``: the ``fixed`` and ``resumable`` options of the
    run's config.json, the resumable ones given again replacing theirs. Returns the options,
    the run paths, the previous config and the temporary files of a killed run that were
    removed. ``given``: the options on the command line (default: those of ``args`` that
    are not None). ``check(previous_options)`` runs before the fixed options are compared;
    :class:`UsageError` for a missing name or run folder, or a fixed option given with
    another value."""
    if args.name is None:
        raise UsageError("--resume needs --name (the run folder under --out)")
    if given is None:
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


#: Options of a new run that every framework has, in the order config.json lists them.
COMMON = ("threads", "eval_episodes", "compare_seed", "periodic_eval_episodes", "gif", "progress")


def new_run_options(args: Any, timesteps: int) -> dict[str, Any]:
    """A new run's options of :data:`COMMON` from ``args`` (``train.py``'s ``Args``, defaults
    filled in), then ``eval_freq`` and ``checkpoint_freq`` (``None``: ``timesteps // 10``,
    at least 1)."""
    opts = {key: getattr(args, key) for key in COMMON}
    for key in ("eval_freq", "checkpoint_freq"):
        value = getattr(args, key)
        opts[key] = value if value is not None else max(1, timesteps // 10)
    return opts


def note_stale(prog: str, paths: RunPaths, stale: list[Path]) -> None:
    """Tell on stderr which temporary files of a killed run were removed (if any)."""
    if stale:
        print(
            f"{prog}: note: removed {len(stale)} temporary file(s) left by a killed run: "
            + ", ".join(str(f.relative_to(paths.root)) for f in stale),
            file=sys.stderr,
        )


def print_resuming(paths: RunPaths, checkpoint: Path, timesteps: int) -> None:
    print(f"resuming {paths.root} from {checkpoint.name} at {timesteps:,} timesteps")


def name_arg(text: str) -> str:
    """An argparse ``type``: a run name (a folder name under ``--out``)."""
    if not NAME_RE.match(text) or text in (".", ".."):
        raise argparse.ArgumentTypeError(
            f"bad run name {text!r}: use letters, digits, '.', '_' and '-' (no '/')"
        )
    return text


def build_parser(
    cls: type, prog: str, description: str, groups: dict[str, str] | None = None
) -> cli.OneLineParser:
    """The command line of the dataclass ``cls``: one option per field, ``--field-name``,
    with the ``help`` and argparse settings of the field's metadata (``flag``: another
    spelling, ``alias``: a deprecated one, ``group``: a key of ``groups``, which names the
    ``--help`` sections, ``shown``: the default as ``--help`` names it, ``off``: the help of
    ``--no-<flag>``). A field defaulting to False is a switch; one defaulting to True is a
    ``--flag``/``--no-flag`` pair. Every other option's parser default is None, "not
    given" (:func:`given_options`), so that a resumed run can tell given from default; the
    defaults themselves are the fields'."""
    parser = cli.OneLineParser(prog=prog, description=description)
    sections = {key: parser.add_argument_group(title) for key, title in (groups or {}).items()}
    for f in dataclasses.fields(cls):
        meta = dict(f.metadata)
        where = sections[meta.pop("group")] if "group" in meta else parser
        flag = meta.pop("flag", "--" + f.name.replace("_", "-"))
        text, alias, off = meta.pop("help"), meta.pop("alias", None), meta.pop("off", None)
        shown = meta.pop("shown", f.default)
        if f.default is False:
            where.add_argument(flag, dest=f.name, action="store_true", help=text)
        elif f.default is True:
            pair = where.add_mutually_exclusive_group()
            pair.add_argument(flag, dest=f.name, action="store_true", default=None, help=text)
            pair.add_argument(
                "--no-" + flag[2:], dest=f.name, action="store_false", default=None, help=off
            )
        else:
            tail = "" if shown is None else f" (default {shown})"
            where.add_argument(flag, dest=f.name, default=None, help=text + tail, **meta)
        if alias:
            cli.add_alias(parser, alias, flag)
    return parser
