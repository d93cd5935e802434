"""``python -m benchmarks.fidelity``: what the alternative forms of the classic behaviours
do to the scripted teams of Pursuit-v0 and Evasion-v0.

Every vehicle is scripted (the learned seat plays the task's classic baseline through the
engine), and every variant plays the same ``--episodes`` seeded episodes (episode ``k``
starts from seed ``--seed + k``, as in ``agents.compare``). Printed per task and variant:
the pursuers' capture rate with its 95% Wilson interval, and the paired difference from
the default (Newcombe's interval). The variants (:mod:`steer_env.core.options`):

* ``separation_form="buckland"`` (the pursuers push 1/d from each other instead of at max
  speed) and separation weight 0 (no separation);
* ``prediction_form="seed"`` (look-ahead ``d / target max speed``) for the pursuers, the
  evader, or both;
* ``wander_form="offset"`` for the evader.

The rows are also written as JSON (``--json PATH``, default ``benchmarks/results_fidelity.json``)
with the command, the machine and the versions; the docs' fidelity table is read from that
file.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from agents.evaluation.stats import paired_proportion_difference, wilson_interval
from steer_env.cli import (
    OneLineParser,
    atomic_write_bytes,
    doc_summary,
    fail,
    positive_int,
    seed_int,
)
from steer_env.engine.batch import Batch
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.envs import streams
from steer_env.tasks import TASKS, Task, get_task

Change = Callable[[Strategy], Strategy]


def with_params(kind: str, weight: float | None = None, **params: object) -> Change:
    """A change of every ``kind`` behaviour of a strategy: new ``params`` (and ``weight``)."""

    def change(strategy: Strategy) -> Strategy:
        behaviors = [
            Behavior(
                b.kind,
                b.weight if weight is None or b.kind != kind else weight,
                b.target,
                **({**b.params, **params} if b.kind == kind else b.params),
            )
            for b in strategy.behaviors
        ]
        return Strategy(behaviors, strategy.combination, strategy.name)

    return change


def _same(strategy: Strategy) -> Strategy:
    return strategy


#: name -> (change of the pursuers' strategy, change of the evader's strategy).
VARIANTS: dict[str, tuple[Change, Change]] = {
    "default": (_same, _same),
    "separation buckland": (with_params("separation", separation_form="buckland"), _same),
    "separation weight 0": (with_params("separation", weight=0.0), _same),
    "pursuit prediction seed": (with_params("pursuit", prediction_form="seed"), _same),
    "evade prediction seed": (_same, with_params("evade", prediction_form="seed")),
    "both predictions seed": (
        with_params("pursuit", prediction_form="seed"),
        with_params("evade", prediction_form="seed"),
    ),
    "wander offset": (_same, with_params("wander", wander_form="offset")),
}

#: name -> what the variant changes, as the docs' table labels it.
LABELS: dict[str, str] = {
    "default": "default",
    "separation buckland": 'pursuers: `separation_form="buckland"`',
    "separation weight 0": "pursuers: separation weight 0",
    "pursuit prediction seed": 'pursuers: `prediction_form="seed"`',
    "evade prediction seed": 'evader: `prediction_form="seed"`',
    "both predictions seed": 'both: `prediction_form="seed"`',
    "wander offset": 'evader: `wander_form="offset"`',
}

#: Where ``python -m benchmarks.fidelity`` writes its rows by default.
DEFAULT_JSON = Path(__file__).resolve().parent / "results_fidelity.json"


def captures(
    task: Task, episodes: int, seed: int, pursuers: Change = _same, evaders: Change = _same
) -> np.ndarray:
    """Whether each of ``episodes`` seeded episodes of ``task`` (default config) ended with
    a capture, every vehicle scripted: the learned seat plays the task's classic baseline,
    the opponents their default strategy; ``pursuers``/``evaders`` change the strategies of
    the two teams."""
    cfg = task.default_config
    seat, *opponents = task.roster(cfg)
    seat = dataclasses.replace(seat, strategy=next(iter(task.baselines.values()))(cfg))
    roster = [seat, *opponents]
    roster = [
        dataclasses.replace(v, strategy=(pursuers if v.team == "pursuer" else evaders)(v.strategy))
        for v in roster
    ]
    batch = Batch(roster, task.world(cfg), episodes)
    batch.reset(None, streams.key_from_seed(np.arange(seed, seed + episodes, dtype=np.uint64)))
    done = np.zeros(episodes, dtype=bool)
    caught = np.zeros(episodes, dtype=bool)
    for _ in range(cfg.time_limit):
        result = batch.step(np.zeros((episodes, 0, 2)), active=~done)
        caught |= result.captures > 0
        done |= result.done
    return caught


def has_pursuers_and_evaders(task: Task) -> bool:
    """Whether ``task``'s default roster has the two teams the variants change."""
    teams = {vehicle.team for vehicle in task.roster(task.default_config)}
    return {"pursuer", "evader"} <= teams


def measure(
    tasks: Sequence[str], episodes: int, seed: int, variants: Sequence[str]
) -> list[dict[str, object]]:
    """One row per task and variant: capture rate, Wilson interval, paired difference from
    the default (percentage points)."""
    rows = []
    for name in tasks:
        task = get_task(name)
        base = captures(task, episodes, seed)
        for variant in variants:
            pursuers, evaders = VARIANTS[variant]
            caught = base if variant == "default" else captures(
                task, episodes, seed, pursuers, evaders
            )  # fmt: skip
            rate = wilson_interval(int(caught.sum()), episodes)
            diff = paired_proportion_difference(caught.astype(float), base.astype(float))
            rows.append({"task": task.env_id, "variant": variant, "rate": rate, "diff": diff})
    return rows


def format_rows(rows: list[dict[str, object]], episodes: int) -> str:
    lines = [
        f"capture rate of the scripted pursuers, {episodes} paired episodes, 95% intervals",
        "| task | variant | capture rate | minus default, points |",
        "|---|---|---|---|",
    ]
    for r in rows:
        rate, diff = r["rate"], r["diff"]
        lines.append(
            f"| {r['task']} | {r['variant']} | {100 * rate.mean:.1f} "
            f"[{100 * rate.lo:.1f}, {100 * rate.hi:.1f}]% | {100 * diff.mean:+.1f} "
            f"[{100 * diff.lo:+.1f}, {100 * diff.hi:+.1f}] |"
        )
    return "\n".join(lines)


def to_json(
    rows: list[dict[str, object]], command: str, episodes: int, seed: int
) -> dict[str, object]:
    """The rows as the results file holds them, with the command, machine and versions."""
    from benchmarks import common

    def interval(iv: object) -> dict[str, float]:
        return {"mean": float(iv.mean), "lo": float(iv.lo), "hi": float(iv.hi)}

    return {
        "command": command,
        "machine": common.machine(),
        "versions": common.versions(),
        "settings": {"episodes": episodes, "seed": seed},
        "measures": "capture rate of the scripted pursuers (Wilson 95%), and its paired "
        "difference from the default on the same episodes (Newcombe 95%)",
        "rows": [
            {
                "task": r["task"],
                "variant": r["variant"],
                "label": LABELS[r["variant"]],
                "episodes": episodes,
                "capture_rate": interval(r["rate"]),
                "minus_default": interval(r["diff"]),
            }
            for r in rows
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m benchmarks.fidelity", description=doc_summary(__doc__))
    parser.add_argument("--episodes", type=positive_int, default=1000)
    parser.add_argument("--seed", type=seed_int, default=1_000_000, help="first episode seed")
    parser.add_argument("--env", nargs="+", default=["pursuit", "evasion"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help="results file to write (default benchmarks/results_fidelity.json)",
    )

    def check(args: argparse.Namespace) -> None:
        # Every mistake before the minutes of episodes: the names, and where the file goes.
        for name in args.env:
            try:
                task = get_task(name)
            except ValueError as exc:
                parser.error(f"--env: {exc}")
            if not has_pursuers_and_evaders(task):
                usable = ", ".join(t.name for t in TASKS.values() if has_pursuers_and_evaders(t))
                parser.error(
                    f"--env: {task.name} has no scripted pursuers and evaders to vary; "
                    f"use one of {usable}"
                )
        if not args.json.parent.is_dir():
            parser.error(f"--json: folder {str(args.json.parent)!r} does not exist")

    args = parser.parse_args(argv, check=check)
    rows = measure(args.env, args.episodes, args.seed, args.variants)
    print(format_rows(rows, args.episodes))
    words = sys.argv[1:] if argv is None else list(argv)
    command = " ".join(["python -m benchmarks.fidelity", *words])
    result = to_json(rows, command, args.episodes, args.seed)
    try:
        atomic_write_bytes(args.json, (json.dumps(result, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        return fail("python -m benchmarks.fidelity", f"cannot write {args.json}: {exc}")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
