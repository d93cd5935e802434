"""Calibration of the team pursuit task's scripted teams against its scripted flow evader.

    python -m agents.team_calibration                         # 1,000 episodes, seeds 1000000..
    python -m agents.team_calibration --episodes 1000 --seed 2000000
    python -m agents.team_calibration --check                 # exit 1 if a target is missed
    python -m agents.team_calibration --json calibration.json # also write the results file

Every team plays the same episodes (episode ``k`` starts from seed ``seed + k``: paired
starts), each team as one batch of ``--episodes`` environments with nothing learned
(:func:`agents.evaluation.cross_play.play_team_episodes`): the Reynolds team of
``--pursuers`` pursuers, the cooperative team of as many, and a lone Reynolds pursuer.

Printed per team: the capture rate with its 95% Wilson interval, the mean time to capture
among the episodes with a capture, and the restricted mean ``mean(min(T, H))`` with
uncaptured episodes counted as the time limit ``H``; then the calibration targets (Reynolds team
at most 35%, lone pursuer at most 5%, cooperative team above the Reynolds team with
disjoint intervals) and whether they are met. ``--json PATH`` writes the same as a results
file (:func:`results_file`: every team's figures, the targets, the command that reproduces
it), atomically; the docs' calibration table is rendered from the shipped ones
(``agents/models/team_calibration_<seed>.json``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import stats
from agents.evaluation.results import atomic_write_json
from steer_env import cli
from steer_env.cli import OneLineParser

PROG = "python -m agents.team_calibration"
DEFAULT_EPISODES = 1000
DEFAULT_SEED = 1_000_000
MAX_EPISODES = 100_000
#: The calibration targets: capture rates the scripted teams must not exceed.
REYNOLDS_TEAM_MAX = 0.35
LONE_PURSUER_MAX = 0.05


def measure(episodes: int, seed: int, n_pursuers: int = 3) -> dict[str, dict[str, float]]:
    """Capture rate (with its Wilson interval), mean time to capture and restricted mean
    time (s) of each scripted team on the same ``episodes`` seeded episodes."""
    from agents.evaluation.cross_play import play_team_episodes
    from steer_env.tasks.team_pursuit import TEAM_PURSUIT

    cfg = TEAM_PURSUIT.config()
    horizon = cfg.time_limit * cfg.dt
    teams = {
        f"reynolds x{n_pursuers}": ("reynolds", n_pursuers),
        f"cooperative x{n_pursuers}": ("cooperative", n_pursuers),
        "reynolds x1": ("reynolds", 1),
    }
    out = {}
    for name, (strategy, size) in teams.items():
        played = play_team_episodes(
            strategy, "flow", episodes, seed, {"n_pursuers": size}, TEAM_PURSUIT
        )
        caught = played.captured
        times = np.where(caught, played.capture_step * cfg.dt, horizon)
        rate = stats.wilson_interval(int(caught.sum()), episodes)
        out[name] = {
            "captures": int(caught.sum()),
            "episodes": episodes,
            "rate": rate.mean,
            "lo": rate.lo,
            "hi": rate.hi,
            "mean_time": stats.event_mean(times, caught),
            "restricted_mean_time": stats.restricted_mean(times, caught, horizon),
        }
    return out


def team_targets(results: dict[str, dict[str, float]]) -> dict[str, tuple[str, bool]]:
    """Each team's calibration target, and whether ``results`` meets it (on the point
    estimates; the cooperative team must beat the Reynolds team with disjoint intervals)."""
    team, coop, lone = list(results.values())
    names = list(results)
    return {
        names[0]: (
            f"{names[0]} captures at most {REYNOLDS_TEAM_MAX:.0%}",
            team["rate"] <= REYNOLDS_TEAM_MAX,
        ),
        names[2]: (
            f"{names[2]} captures at most {LONE_PURSUER_MAX:.0%}",
            lone["rate"] <= LONE_PURSUER_MAX,
        ),
        names[1]: (f"{names[1]} captures clearly more than {names[0]}", coop["lo"] > team["hi"]),
    }


def targets(results: dict[str, dict[str, float]]) -> list[tuple[str, bool]]:
    """The calibration targets (:func:`team_targets`), each with whether it is met."""
    return list(team_targets(results).values())


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces a calibration run (its results file included)."""
    words = ["--episodes", str(args.episodes), "--seed", str(args.seed)]
    if args.pursuers != 3:
        words += ["--pursuers", str(args.pursuers)]
    if args.json is not None:
        words += ["--json", str(args.json)]
    return " ".join([PROG, *(shlex.quote(w) for w in words)])


def results_file(
    results: dict[str, dict[str, float]], args: argparse.Namespace, wall_s: float
) -> dict[str, Any]:
    """What ``--json`` writes: the settings, every team's figures (:func:`measure`), each
    team's target and whether it is met, the seconds it took and the command."""
    from steer_env.tasks.team_pursuit import TEAM_PURSUIT

    cfg = TEAM_PURSUIT.config()
    return {
        "command": command_line(args),
        "episodes": args.episodes,
        "seed": args.seed,
        "pursuers": args.pursuers,
        "horizon_s": cfg.time_limit * cfg.dt,
        "ci_method": "Wilson score 95%",
        "teams": results,
        "targets": [
            {"team": name, "target": text, "met": ok}
            for name, (text, ok) in team_targets(results).items()
        ],
        "wall_s": round(wall_s, 2),
    }


def format_table(results: dict[str, dict[str, float]]) -> str:
    lines = [
        f"{'team':<16} {'capture rate [95% Wilson]':>27} {'mean time to capture':>21} "
        f"{'restricted mean':>16}"
    ]
    for name, r in results.items():
        rate = f"{100 * r['rate']:.1f}% [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"
        mean = "-" if np.isnan(r["mean_time"]) else f"{r['mean_time']:.2f} s"
        lines.append(f"{name:<16} {rate:>27} {mean:>21} {r['restricted_mean_time']:>14.2f} s")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Capture rates (Wilson 95%% intervals) and times of the team pursuit "
        "task's scripted teams against the flow evader, on paired seeded episodes.",
    )
    p.add_argument(
        "--episodes",
        type=cli.int_in(1, MAX_EPISODES),
        default=DEFAULT_EPISODES,
        help=f"paired episodes per team, run as one batch (default {DEFAULT_EPISODES})",
    )
    cli.add_seed(p, DEFAULT_SEED, "episode k uses seed SEED + k")
    p.add_argument(
        "--pursuers",
        type=cli.int_in(1, 16),
        default=3,
        help="pursuers of the Reynolds and cooperative teams (default 3)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit with status 1 when one of the calibration targets is not met",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the results (figures, targets, the command) to this JSON file",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.seed + args.episodes - 1 > cli.SEED_MAX:
        return cli.fail(PROG, f"--seed + --episodes - 1 must be at most {cli.SEED_MAX}", status=2)
    if args.json is not None and (args.json.is_dir() or not args.json.parent.is_dir()):
        return cli.fail(PROG, f"--json {args.json}: must be a file in an existing folder", status=2)
    try:
        t0 = time.perf_counter()
        results = measure(args.episodes, args.seed, args.pursuers)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    wall = time.perf_counter() - t0
    print(
        f"{args.episodes} paired episodes, seeds {args.seed}..{args.seed + args.episodes - 1} "
        f"({wall:.1f} s)"
    )
    print(format_table(results))
    checks = targets(results)
    for text, ok in checks:
        print(f"{'met    ' if ok else 'MISSED '} {text}")
    if args.json is not None:
        atomic_write_json(args.json, results_file(results, args, wall))
        print(f"wrote {args.json}")
    if args.check and not all(ok for _, ok in checks):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
