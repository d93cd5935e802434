"""A task's agents across values of its configuration, one parameter at a time.

    python -m agents.sweep --env herding --no-learned --vary n_sheep=10,25,50,100
    python -m agents.sweep --env herding --vary n_sheep=10,50 --vary speed_ratio=1.2,2.0
    python -m agents.sweep --env pursuit --vary capture_radius=0.5,1,2 --episodes 500

Each ``--vary NAME=V1,V2,...`` is a series of rows: the configuration the agents play in
(the model's, ``train.py --set`` having recorded it, else the task's defaults; ``--set``
values replace it for every row) with ``NAME`` set to each value in turn, the other
parameters unchanged. In every row each agent (the learned one, unless ``--no-learned``,
and the task's scripted agents of its role) plays the same ``--episodes`` paired episodes
(episode ``k`` from seed ``--seed + k``), as ``python -m agents.compare`` plays them; with
several learned agents of the role (``--set n_dogs=2``), each agent plays every one of
them, and the task's scripted policies for several agents are the rows' scripted agents.

Printed and written (``sweep.md`` and ``sweep.json`` in ``--out``): per row, each agent's
success rate with its 95% Wilson interval, its restricted mean time (s; episodes without
the task's event count as the time limit) and the mean of the task's first outcome
(herding: the fraction penned; ``sweep.json`` holds every outcome), and the paired
success difference of
the reference agent (the learned one, else the task's classic baseline) minus each other
agent, in points with Newcombe's 95% interval. A single-agent task's comparison only: the
team task's teams are compared by ``python -m agents.compare --env team_pursuit --set``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.evaluation.compare import (
    DEFAULT_ENV,
    DEFAULT_SEED,
    add_model_options,
    model_env,
    paired_differences,
    play_agents,
    restricted_times_of,
    run_tool,
    summarize,
    task_of,
)
from agents.evaluation.policies import (
    LearnedPolicy,
    UsageError,
    add_config_option,
    agent_spaces,
    config_overrides,
    default_model_path,
    env_tag,
    inference_device,
    load_policy,
    played_config,
)
from agents.evaluation.results import atomic_write_bytes, atomic_write_json, format_interval
from agents.evaluation.stats import Interval
from steer_env import cli
from steer_env.cli import OneLineParser, positive_int

PROG = "python -m agents.sweep"
DEFAULT_EPISODES = 1000


def vary_arg(text: str) -> tuple[str, list[Any]]:
    """An argparse ``type`` for ``--vary NAME=V1,V2,...``: the name and its values (each
    read as ``--set`` reads one)."""
    name, sep, raw = text.partition("=")
    name = name.strip()
    values = [v.strip() for v in raw.split(",")]
    if not sep or not name.isidentifier() or not all(values):
        raise argparse.ArgumentTypeError(
            f"bad --vary {text!r}: use NAME=V1,V2,... with a task configuration name, e.g. "
            "--vary n_sheep=10,25,50"
        )
    parsed = []
    for v in values:
        try:
            parsed.append(json.loads(v))
        except json.JSONDecodeError:
            parsed.append(v)
    return name, parsed


def sweep(
    env_id: str,
    policy: LearnedPolicy | None,
    varied: list[tuple[str, list[Any]]],
    base: dict[str, Any],
    episodes: int,
    seed: int,
    report: Any = None,
) -> dict[str, Any]:
    """Play every agent in each row of ``varied`` (``(name, values)`` pairs; ``base`` with
    ``name`` set to each value): the rows' per-agent statistics and paired differences.
    ``report(row)`` is called after each row."""
    rows = []
    for name, values in varied:
        for value in values:
            config = config_overrides({**base, name: value}, env_id, several=True, option="--vary")
            cfg = task_of(env_id).config(**config)
            obs_shape = agent_spaces(env_id, config)[0].shape
            if policy is not None and tuple(policy.model.observation_space.shape) != obs_shape:
                raise UsageError(
                    f"--vary {name}={value}: {policy.path} observes "
                    f"{policy.model.observation_space.shape} but this configuration gives "
                    f"{obs_shape} (a parameter the observation's size depends on)"
                )
            t0 = time.perf_counter()
            results, labels = play_agents(env_id, policy, episodes, seed, config)
            summary = summarize(results, env_id, cfg.dt, cfg.time_limit, labels)
            reference = next(iter(results))  # the learned agent, else the classic one
            times = restricted_times_of(results, cfg.dt, cfg.time_limit * cfg.dt)
            row = {
                "parameter": name,
                "value": value,
                "config": config,
                "horizon_s": summary["horizon_s"],
                "agents": {key: _agent_row(stat) for key, stat in summary["agents"].items()},
                "reference": reference,
                "paired": paired_differences(results, times, reference),
                "wall_s": round(time.perf_counter() - t0, 2),
            }
            rows.append(row)
            if report is not None:
                report(row)
    return {
        "env_id": env_id,
        "episodes": episodes,
        "seed": seed,
        "base_config": base,
        "success_means": task_of(env_id).metrics.success_means,
        "ci_methods": {
            "success_rate": "Wilson score 95%",
            "paired_success_difference": "Newcombe's hybrid score 95% for paired proportions "
            "(reference - other)",
        },
        "rows": rows,
    }


def _agent_row(stat: dict[str, Any]) -> dict[str, Any]:
    """What a row keeps of an agent's comparison statistics: the success rate, the
    restricted mean time and the mean of each of the task's outcomes."""
    row = {k: stat[k] for k in ("label", "success_rate", "success_ci95", "restricted_mean_time_s")}
    row["outcomes"] = {k: v["mean"] for k, v in stat.get("outcomes", {}).items()}
    return row


def _rate(stat: dict[str, Any]) -> str:
    lo, hi = stat["success_ci95"]
    return format_interval(Interval(stat["success_rate"], lo, hi), 100) + "%"


def format_rows(result: dict[str, Any], compact: bool = False) -> str:
    """The sweep as a Markdown table: one line per row; ``compact``: the success rates and
    the paired differences only."""
    first = result["rows"][0]
    names = list(first["agents"])
    reference = first["reference"]
    # The task's first outcome (herding: the fraction penned) says more than a success
    # rate near 0 or 1.
    outcome = next(iter(first["agents"][names[0]]["outcomes"]), None)
    if compact:
        outcome = None
    head = ["parameter", "value"]
    for key in names:
        label = first["agents"][key]["label"]
        head += [f"{label} success"] if compact else [f"{label} success", f"{label} time (s)"]
        if outcome is not None:
            head.append(f"{label} {outcome.replace('_', ' ')}")
    head += [f"{reference} - {key} (points)" for key in names if key != reference]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["rows"]:
        cells = [row["parameter"], str(row["value"])]
        for key in names:
            stat = row["agents"][key]
            cells.append(_rate(stat))
            if not compact:
                cells.append(f"{stat['restricted_mean_time_s']:.1f}")
            if outcome is not None:
                cells.append(f"{stat['outcomes'][outcome]:.2f}")
        for key in names:
            if key != reference:
                p = row["paired"][key]
                iv = Interval(p["success_diff"], *p["success_diff_ci95"])
                cells.append(format_interval(iv, 100, sign=True))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def command_line(args: argparse.Namespace, env_id: str) -> str:
    """The command that reproduces a sweep (``--out`` and ``--device`` left out)."""
    words = ["--env", task_of(env_id).name]
    if args.no_learned:
        words.append("--no-learned")
    elif args.model is not None:
        words += ["--model", str(args.model)]
    words += ["--episodes", str(args.episodes), "--seed", str(args.seed)]
    for name, values in args.vary:
        words += ["--vary", f"{name}={','.join(json.dumps(v) for v in values)}"]
    for name, value in args.config or []:
        words += ["--set", f"{name}={json.dumps(value)}"]
    return " ".join([PROG, *(shlex.quote(w) for w in words)])


def _shown_path(path: Path) -> str:
    """``path`` relative to the working folder when it lies inside it (a shipped model:
    ``agents/models/...``), else as it is."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# ------------------------------------------------------------------ CLI
def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Play a task's agents across values of its configuration, one parameter "
        "at a time (success rate with Wilson CI, restricted mean time, paired differences).",
    )
    p.add_argument(
        "--vary",
        action="append",
        type=vary_arg,
        required=True,
        metavar="NAME=V1,V2,...",
        help="a configuration parameter and its values, one row each (repeatable)",
    )
    add_model_options(p)
    p.add_argument("--no-learned", action="store_true", help="the scripted agents only")
    p.add_argument(
        "--episodes",
        type=positive_int,
        default=DEFAULT_EPISODES,
        help=f"paired episodes per agent and row (default {DEFAULT_EPISODES})",
    )
    cli.add_seed(p, DEFAULT_SEED, "episode k uses seed SEED + k")
    p.add_argument(
        "--out", type=Path, default=None, help="output folder (default runs/sweep/<env>__<time>)"
    )
    cli.add_device(p, "cpu, fastest for one small network on batched episodes")
    add_config_option(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_tool(PROG, lambda: _sweep_command(args))


def _sweep_command(args: argparse.Namespace) -> int:
    """``python -m agents.sweep`` (its errors are :func:`run_tool`'s)."""
    env_id = model_env(args) or DEFAULT_ENV
    if task_of(env_id).metrics.layout != "agents":
        raise UsageError(
            f"{PROG} compares the agents of a single-agent task; for {env_id} use "
            f"python -m agents.compare --env {env_id} --set KEY=VALUE"
        )
    if args.no_learned and args.model is not None:
        raise UsageError("--no-learned plays the scripted agents only: drop --model")
    given = config_overrides(args.config, env_id, several=True)
    model_path = None if args.no_learned else args.model or default_model_path(env_id, given)
    base = played_config(model_path, args.config, env_id, several=True)
    count = task_of(env_id).agent_count
    for name, values in args.vary:
        if name == count:
            raise UsageError(
                f"--vary {name}: every row plays the same number of learned agents; set it "
                f"with --set {name}=N"
            )
        for value in values:  # every row before any runs
            config_overrides({**base, name: value}, env_id, several=True, option="--vary")
    policy = None
    if model_path is not None:
        policy = load_policy(
            model_path, env_id, device=inference_device(args.device), env_kwargs=base
        )
        import torch

        torch.set_num_threads(1)  # small MLP, batched episodes: one thread is fastest
    out = args.out or Path("runs") / "sweep" / (
        f"{env_tag(env_id)}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder")
    t0 = time.perf_counter()

    def report(row: dict[str, Any]) -> None:
        rates = ", ".join(
            f"{stat['label']} {stat['success_rate']:.1%}" for stat in row["agents"].values()
        )
        print(f"{row['parameter']}={row['value']}: {rates} ({row['wall_s']:.1f} s)", flush=True)

    result = sweep(env_id, policy, args.vary, base, args.episodes, args.seed, report)
    result["model"] = _shown_path(policy.path) if policy is not None else None
    result["command"] = command_line(args, env_id)
    table = format_rows(result)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "sweep.json", result)
    atomic_write_bytes(out / "sweep.md", (table + "\n").encode())
    print()
    print(table)
    print(f"\n({time.perf_counter() - t0:.1f} s) wrote {out}/sweep.md, sweep.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
