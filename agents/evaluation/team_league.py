"""Learned evaders against learned teams: alternating best responses, then cross-play.

    python -m agents.team_league --rounds 2 --out runs/league        # ~25 min on 2 cores
    python -m agents.team_league --rounds 2 --out runs/league --episodes 1000

Each side trains against the other's frozen policy (``train.py --opponent-model``), so
neither only exploits a fixed script:

* round 0: evader ``e0`` against the cooperative team (the stronger scripted team);
* round ``k`` = 1..R: pursuer team ``pk`` against ``e(k-1)`` (``p1`` against the scripted
  flow evader, the task's default), then evader ``ek`` against ``pk``.

Every run is an ordinary ``train.py`` run folder under ``--out`` (``p1/``, ``e0/``, ...);
a run whose ``model.zip`` exists is reused, so an interrupted league continues where it
stopped. Finally every pursuer team (Reynolds, cooperative, ``p1..pR``) plays every evader
(flow, ``e0..eR``) on the same ``--episodes`` seeded episodes: ``crossplay.csv``,
``crossplay.json`` and the table on the console (capture rates with 95% Wilson intervals,
restricted mean time to capture).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from agents.evaluation.cross_play import DEFAULT_TASK, cross_play_env_arg
from agents.evaluation.league import train_script
from agents.evaluation.policies import UsageError
from steer_env import cli

PROG = "python -m agents.team_league"


def build_parser() -> Any:
    p = cli.OneLineParser(
        prog=PROG,
        description="Alternate best-response training of learned pursuer teams and learned "
        "evaders on a task with a cross-play table (--env, team_pursuit by default), then "
        "play every team against every evader.",
    )
    p.add_argument(
        "--env",
        type=cross_play_env_arg,
        default=DEFAULT_TASK,
        help=f"a task with a cross-play table (default {DEFAULT_TASK})",
    )
    p.add_argument("--rounds", type=cli.positive_int, default=2, help="rounds R (default 2)")
    p.add_argument("--out", type=Path, default=Path("runs/league"), help="league folder")
    p.add_argument(
        "--pursuer-timesteps",
        type=cli.positive_int,
        default=1_500_000,
        help="timesteps per pursuer team (default 1.5M)",
    )
    p.add_argument(
        "--evader-timesteps",
        type=cli.positive_int,
        default=1_000_000,
        help="timesteps per evader (default 1M)",
    )
    p.add_argument(
        "--n-envs", type=cli.positive_int, default=16, help="envs per training (default 16)"
    )
    p.add_argument(
        "--episodes",
        type=cli.positive_int,
        default=1000,
        help="paired episodes of the cross-play table (default 1000)",
    )
    cli.add_seed(p, 0, "training seed of every run")
    p.add_argument(
        "--compare-seed",
        type=cli.seed_int,
        default=1_000_000,
        help="first episode seed of the cross-play table (default 1000000)",
    )
    return p


def _train(
    out: Path, name: str, learned: str, timesteps: int, args: Any, opponent: str | Path
) -> Path:
    """The model of run ``out/name``, trained by ``train.py`` unless it already exists."""
    model = out / name / "model.zip"
    if model.is_file():
        print(f"[league] {name}: reusing {model}", flush=True)
        return model
    against = (
        ["--opponent-model", str(opponent)]
        if isinstance(opponent, Path)
        else ["--opponent-strategy", opponent]
    )
    argv = [
        "--env",
        args.env,
        "--learned",
        learned,
        *against,
        "--timesteps",
        str(timesteps),
        "--n-envs",
        str(args.n_envs),
        "--seed",
        str(args.seed),
        "--out",
        str(out),
        "--name",
        name,
        "--episodes",
        "200",
        "--no-gif",
        "--no-progress",
        "--overwrite",
    ]
    script = train_script()
    print(f"[league] {name}: python train.py {' '.join(argv)}", flush=True)
    rc = subprocess.run([sys.executable, str(script), *argv], check=False).returncode
    if rc != 0:
        raise UsageError(f"training {name} failed (exit {rc}); see its output above")
    return model


def run_league(args: Any) -> dict[str, Any]:
    from agents.evaluation.cross_play import (
        cross_play_task,
        format_team_table,
        learned_of,
        load_team_policy,
        reference_side,
        role_names,
        run_team_comparison,
    )

    task = cross_play_task(args.env)
    row, col = role_names(task)
    reference, classic = reference_side(task), task.baselines[col][0]
    learn_rows, learn_cols = learned_of(row, task), learned_of(col, task)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    pursuers: dict[str, Path] = {}
    evaders: dict[str, Path] = {}
    evaders["e0"] = _train(out, "e0", learn_cols, args.evader_timesteps, args, reference)
    previous: str | Path = classic
    for k in range(1, args.rounds + 1):
        pursuers[f"p{k}"] = _train(out, f"p{k}", learn_rows, args.pursuer_timesteps, args, previous)
        evaders[f"e{k}"] = _train(
            out, f"e{k}", learn_cols, args.evader_timesteps, args, pursuers[f"p{k}"]
        )
        previous = evaders[f"e{k}"]
    import torch

    torch.set_num_threads(1)
    summary = run_team_comparison(
        {n: load_team_policy(p, row, task=task) for n, p in pursuers.items()},
        {n: load_team_policy(p, col, task=task) for n, p in evaders.items()},
        args.episodes,
        args.compare_seed,
        out / "crossplay",
        extra={
            "models": {n: str(p) for n, p in {**pursuers, **evaders}.items()},
            "schedule": f"e0 vs {reference}; pk vs e(k-1) (p1 vs {classic}); ek vs pk",
        },
        task=task,
    )
    print()
    print(format_team_table(summary, task))
    print(f"\nwrote {out / 'crossplay'}/comparison.csv, episodes.csv, comparison.json")
    return summary


def main(argv: list[str] | None = None) -> int:
    from agents.evaluation.compare import RESUMABLE_INTERRUPT, run_tool

    args = build_parser().parse_args(argv)

    def command() -> int:
        run_league(args)
        return 0

    return run_tool(PROG, command, RESUMABLE_INTERRUPT)


if __name__ == "__main__":
    sys.exit(main())
