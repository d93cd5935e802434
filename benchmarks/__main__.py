"""``python -m benchmarks``: steer-env against its peers and its numpy floor, in one run.

Prints one table and writes it as JSON (``--json``; default ``benchmarks/results.json``, the
run the README quotes, or ``benchmarks/results_quick.json`` with ``--quick``, so a smoke run
never replaces it).
Every figure is the median over ``--repeats`` repeats with the min-max range; throughputs
use actions drawn before the timed loop. Threads are pinned (``--threads``, default 1:
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``NUMBA_NUM_THREADS`` and
torch's intra-op threads) so every library runs on one core.

Agents per env-step (``agent-steps/s = env-steps/s * agents``): steer-env counts every
vehicle the physics steps, the learned agent plus the scripted opponents (Pursuit-v0: 2,
Evasion-v0: 3); MPE2 and VMAS simple_tag count their 4 agents (landmarks are static).
Physics sub-steps per env-step (``agent-substeps/s = agent-steps/s * substeps``): steer-env
1, MPE2 1, VMAS simple_tag 10.

Sections (``--sections``, comma-separated; default all): single, vector, memory, sync,
floor, flock, sb3, rllib, peers, compile, team, torchrl, herding, obstacles, crowd, flocking,
training.
``--quick`` shortens every measurement (for smoke tests). The ``rllib`` section
(``benchmarks/rllib_bench.py``) needs ``pip install "steer-env[rllib]"``. The ``team``
section (``benchmarks/team.py``) measures the team pursuit task (3 pursuers + 1 evader, 4
vehicles) against VMAS ``simple_tag``, MPE2 ``simple_tag_v3`` and SuperSuit's
PettingZoo-to-SB3 route, ours and each peer interleaved repeat by repeat. The ``torchrl``
section (``benchmarks/torchrl_bench.py``, needs ``pip install "steer-env[torchrl]"``)
measures TorchRL's collector on the first task of ``--tasks`` at ``--torchrl-n-envs`` envs:
the native vector env through ``GymWrapper`` vs ``SerialEnv`` and ``ParallelEnv`` of single
envs, interleaved repeat by repeat. The ``herding`` section (``benchmarks/herding.py``)
measures the herding batch (1 dog + 25 sheep per env, ``--herding-n-envs`` envs) against
VMAS ``flocking`` in vehicle-steps per second, with the single env and the PettingZoo
``parallel_env`` beside it. The ``obstacles`` section (``benchmarks/obstacles.py``) measures
the native vector env of each task at ``--obstacle-n-envs`` envs in an empty arena and with
16 obstacles, interleaved. The ``crowd`` section (``benchmarks/crowd.py``) measures
Crowd-v0's native vector env against Gymnasium's ``SyncVectorEnv`` of the same env at
``--crowd-n-envs`` envs, with 5 and with 20 humans. The ``flocking`` section
(``benchmarks/flocking.py``) measures flocking_v0's native batch (16 learned boids and a
predator per env) against VMAS ``flocking`` with 16 agents at ``--flocking-n-envs`` envs,
and its time per boid-step at 16, 64 and 256 boids. The ``training`` section
(``benchmarks/training.py``) trains the default PPO pursuer through the native adapter and
through ``make_vec_env``, and RLlib's PPO with ``train.py``'s native env runner and with
RLlib's stock one when ray is installed (``benchmarks/training_rllib.py``), and reports the
training seconds to 90% and 95% capture on held-out episodes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from steer_env.cli import OneLineParser, add_alias, doc_summary, positive_float, positive_int

SECTIONS = (
    "single",
    "vector",
    "memory",
    "sync",
    "floor",
    "flock",
    "sb3",
    "rllib",
    "peers",
    "compile",
    "team",
    "torchrl",
    "herding",
    "obstacles",
    "crowd",
    "flocking",
    "training",
)
DEFAULT_JSON = Path(__file__).resolve().parent / "results.json"
#: Where ``--quick`` writes without ``--json`` (git-ignored).
QUICK_JSON = DEFAULT_JSON.with_name("results_quick.json")


def _ints(text: str) -> list[int]:
    """Comma-separated positive integers (``_`` separators allowed)."""
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected positive integers like 1,64,1024, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,64,1024, got {text!r}")
    return values


ENV_NAMES = {"pursuit": "Pursuit", "evasion": "Evasion"}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(prog="python -m benchmarks", description=doc_summary(__doc__))
    p.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)",
    )
    p.add_argument(
        "--repeats",
        type=positive_int,
        default=None,
        help="repeats per figure (default 5; 3 with --quick)",
    )
    p.add_argument("--quick", action="store_true", help="short measurements (smoke test)")
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        help="where to write the JSON (default benchmarks/results.json; "
        "benchmarks/results_quick.json with --quick)",
    )
    p.add_argument(
        "--tasks",
        dest="envs",
        metavar="TASKS",
        default="Pursuit,Evasion",
        help="steer-env tasks to measure, comma-separated (default Pursuit,Evasion)",
    )
    p.add_argument(
        "--n-envs",
        dest="num_envs",
        metavar="N_ENVS",
        type=_ints,
        default=[1, 64, 1024, 8192],
        help="env counts of the vector env / VMAS / floor rows (default 1,64,1024,8192)",
    )
    p.add_argument(
        "--sync-n-envs",
        dest="sync_envs",
        metavar="SYNC_N_ENVS",
        type=_ints,
        default=[64, 1024],
        help="env counts of the SyncVectorEnv rows (default 64,1024)",
    )
    p.add_argument(
        "--memory-n-envs",
        dest="memory_envs",
        metavar="MEMORY_N_ENVS",
        type=_ints,
        default=[65536],
        help="env counts of the memory figure (default 65536)",
    )
    p.add_argument(
        "--boids",
        type=_ints,
        default=[1000, 10000, 100000],
        help="flock sizes (default 1000,10000,100000)",
    )
    p.add_argument(
        "--sb3-n-envs",
        dest="sb3_envs",
        metavar="SB3_N_ENVS",
        type=positive_int,
        default=16,
        help="env count of the PPO rows (default 16)",
    )
    p.add_argument(
        "--sb3-timesteps",
        type=positive_int,
        default=None,
        help="PPO timesteps per repeat (default 8 rollouts)",
    )
    p.add_argument(
        "--sb3-n-steps", type=positive_int, default=128, help="PPO n_steps (default 128)"
    )
    p.add_argument("--sb3-batch-size", type=positive_int, default=512, help="PPO batch_size (512)")
    p.add_argument("--sb3-epochs", type=positive_int, default=4, help="PPO n_epochs (default 4)")
    p.add_argument(
        "--team-n-envs",
        type=positive_int,
        default=8192,
        help="env count of the team native batch and VMAS rows (default 8192)",
    )
    p.add_argument(
        "--herding-n-envs",
        type=positive_int,
        default=8192,
        help="env count of the herding native batch and VMAS flocking rows (default 8192)",
    )
    p.add_argument(
        "--obstacle-n-envs",
        type=positive_int,
        default=8192,
        help="env count of the obstacles rows (default 8192)",
    )
    p.add_argument(
        "--crowd-n-envs",
        type=positive_int,
        default=8192,
        help="env count of the crowd rows (default 8192)",
    )
    p.add_argument(
        "--flocking-n-envs",
        type=positive_int,
        default=8192,
        help="env count of the flocking native batch and VMAS flocking rows (default 8192)",
    )
    p.add_argument(
        "--team-sb3-n-envs",
        type=positive_int,
        default=16,
        help="team envs of the team PPO rows, 3 pursuer slots each (default 16)",
    )
    p.add_argument(
        "--team-sb3-timesteps",
        type=positive_int,
        default=None,
        help="team PPO timesteps per repeat (default 4 rollouts; 2 with --quick)",
    )
    p.add_argument(
        "--torchrl-n-envs",
        type=positive_int,
        default=None,
        help="envs of the torchrl rows (default 64; 2 with --quick)",
    )
    p.add_argument(
        "--torchrl-workers",
        type=positive_int,
        default=None,
        help="processes of the torchrl ParallelEnv row, a divisor of --torchrl-n-envs "
        "(default: the largest one not above the usable cores)",
    )
    p.add_argument(
        "--rllib-envs",
        type=positive_int,
        default=1024,
        help="sub-envs per RLlib env runner for the sampling rows (default 1024)",
    )
    p.add_argument(
        "--rllib-repeats",
        type=positive_int,
        default=None,
        help="repeats of the RLlib rows (default --repeats, at most 3)",
    )
    p.add_argument(
        "--no-rllib-ppo",
        action="store_true",
        help="rllib section: the sampling rows only (skip the RLlib PPO row)",
    )
    p.add_argument(
        "--rllib-ppo-envs",
        type=positive_int,
        default=32,
        help="sub-envs of the RLlib PPO row's env runner (default 32, as train.py)",
    )
    p.add_argument(
        "--rllib-ppo-iterations",
        type=positive_int,
        default=None,
        help="RLlib PPO train() calls per repeat (default 3; 1 with --quick)",
    )
    p.add_argument(
        "--threads", type=positive_int, default=1, help="threads per library (default 1)"
    )
    p.add_argument(
        "--time-per-repeat",
        type=positive_float,
        default=None,
        help="seconds per throughput repeat (default 0.5; 0.02 with --quick)",
    )
    for old, new in (
        ("--envs", "--tasks"),
        ("--num-envs", "--n-envs"),
        ("--sync-envs", "--sync-n-envs"),
        ("--memory-envs", "--memory-n-envs"),
        ("--sb3-envs", "--sb3-n-envs"),
    ):
        add_alias(p, old, new)

    def check(args: argparse.Namespace) -> None:
        args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
        unknown = sorted(set(args.sections) - set(SECTIONS))
        if unknown:
            p.error(f"unknown section(s) {unknown}; choose from {','.join(SECTIONS)}")
        envs = [e.strip() for e in args.envs.split(",") if e.strip()]
        bad = [e for e in envs if e.lower() not in ENV_NAMES]
        if bad or not envs:
            p.error(f"unknown task(s) {bad}; choose from Pursuit,Evasion")
        args.envs = [ENV_NAMES[e.lower()] for e in envs]
        if args.json is None:
            args.json = QUICK_JSON if args.quick else DEFAULT_JSON
        if not args.json.parent.is_dir():
            p.error(f"--json: folder {str(args.json.parent)!r} does not exist")
        n = args.torchrl_n_envs or (2 if args.quick else 64)
        if args.torchrl_workers is not None and n % args.torchrl_workers:
            p.error(f"--torchrl-workers {args.torchrl_workers} must divide --torchrl-n-envs {n}")

    args = p.parse_args(argv, check=check)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.time_per_repeat is None:
        args.time_per_repeat = 0.02 if args.quick else 0.5
    if args.torchrl_n_envs is None:
        args.torchrl_n_envs = 2 if args.quick else 64

    if args.rllib_ppo_iterations is None:
        args.rllib_ppo_iterations = 1 if args.quick else 3
    if args.sb3_timesteps is None:
        rollouts = 2 if args.quick else 8
        args.sb3_timesteps = rollouts * args.sb3_envs * args.sb3_n_steps
    if args.team_sb3_timesteps is None:
        rollouts = 2 if args.quick else 4
        args.team_sb3_timesteps = rollouts * 3 * args.team_sb3_n_envs * args.sb3_n_steps
    return args


def pin_threads(n: int) -> None:
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(n)


# --------------------------------------------------------------------------- formatting
def fmt(v: float | None) -> str:
    if v is None:
        return ""
    if isinstance(v, int):
        return f"{v:,}"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def table(rows: list[Any], ratios: list[dict[str, Any]]) -> str:
    head = (
        "section",
        "benchmark",
        "size",
        "median",
        "min - max",
        "unit",
        "agent-steps/s",
        "agent-substeps/s",
        "note",
    )
    lines = []
    for r in rows:
        if hasattr(r, "samples"):
            lines.append(
                (
                    r.section,
                    r.name,
                    fmt(r.size),
                    fmt(r.median),
                    f"{fmt(r.lo)} - {fmt(r.hi)}",
                    r.unit,
                    fmt(r.agent_steps),
                    fmt(r.agent_substeps),
                    r.note,
                )
            )
        else:
            lines.append((r.section, r.name, fmt(r.size), "-", "", "", "", "", r.reason))
    for q in ratios:
        if q["target"] is None:
            verdict = ""
        elif q.get("not_judged"):
            verdict = f"not judged against {q['target']}: {q['not_judged']}"
        else:
            verdict = ("PASS " if q["pass"] else "FAIL ") + q["target"]
        if q.get("paired"):
            pr = q["paired"]
            verdict = (
                f"per round {fmt(pr['median'])} ({fmt(pr['min'])} - {fmt(pr['max'])})"
                + ("; " if verdict else "")
                + verdict
            )
        rng = "" if q["min"] is None else f"{fmt(q['min'])} - {fmt(q['max'])}"
        lines.append(
            ("ratio", q["name"], fmt(q["size"]), fmt(q["value"]), rng, q["unit"], "", "", verdict)
        )
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=True)]
    widths[-1] = 0
    out = []
    for k, line in enumerate([head, *lines]):
        cells = [
            str(c).rjust(w) if i in (2, 3, 6, 7) else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
        if k == 0:
            out.append("-" * len(out[0]))
    return "\n".join(out)


# --------------------------------------------------------------------------- ratios
def _find(rows: list[Any], section: str, size: int | None, contains: str = "") -> Any:
    for r in rows:
        if hasattr(r, "samples") and r.section == section and r.size == size and contains in r.name:
            return r
    return None


def _ratio(
    name: str,
    size: int | None,
    num: Any,
    den: Any,
    unit: str = "x",
    target: str | None = None,
    ok=None,
    per: str = "median",
    invert: bool = False,
) -> dict[str, Any] | None:
    """``num / den`` of two rows (medians; the range from min/max pairs)."""
    if num is None or den is None:
        return None

    def val(row: Any, which: str) -> float:
        x = {"median": row.median, "lo": row.lo, "hi": row.hi}[which]
        if per == "agent":
            return x * row.agents
        if per == "substep":
            return x * row.agents * row.substeps
        return x

    value = val(num, "median") / val(den, "median")
    lo = val(num, "lo") / val(den, "hi")
    hi = val(num, "hi") / val(den, "lo")
    if invert:
        value, lo, hi = 1 / value, 1 / hi, 1 / lo
    return {
        "name": name,
        "size": size,
        "value": value,
        "min": lo,
        "max": hi,
        "unit": unit,
        "target": target,
        "pass": None if ok is None else bool(ok(value)),
    }


def ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    out: list[dict[str, Any] | None] = []
    mpe = _find(rows, "peers", 1, "MPE2")
    for env in args.envs:
        single = _find(rows, "single", 1, env)
        out.append(
            _ratio(
                f"{env} single env / MPE2 simple_tag, env-steps/s",
                1,
                single,
                mpe,
                target=">= 8x",
                ok=lambda v: v >= 8,
            )
        )
        out.append(
            _ratio(
                f"{env} single env / MPE2 simple_tag, agent-steps/s", 1, single, mpe, per="agent"
            )
        )
    for env in args.envs:
        for e in args.num_envs:
            ours = _find(rows, "vector", e, env)
            vmas = _find(rows, "peers", e, "VMAS")
            big = e == 8192  # where the targets are set
            out.append(
                _ratio(
                    f"{env} vector / VMAS simple_tag, env-steps/s",
                    e,
                    ours,
                    vmas,
                    target=">= 10x" if big else "> 1x (ahead)",
                    ok=(lambda v: v >= 10) if big else (lambda v: v > 1),
                )
            )
            out.append(
                _ratio(
                    f"{env} vector / VMAS simple_tag, agent-substeps/s",
                    e,
                    ours,
                    vmas,
                    per="substep",
                    target="> 1x (ahead)",
                    ok=lambda v: v > 1,
                )
            )
            floor = _find(rows, "floor", e, env)
            out.append(
                _ratio(
                    f"{env} vector time per env-step / numpy floor's",
                    e,
                    ours,
                    floor,
                    invert=True,
                    target="<= 5x" if big else None,
                    ok=(lambda v: v <= 5) if big else None,
                )
            )
        for e in args.sync_envs:
            out.append(
                _ratio(
                    f"{env} native vector / SyncVectorEnv, env-steps/s",
                    e,
                    _find(rows, "vector", e, env),
                    _find(rows, "sync", e, env),
                )
            )
    for r in rows:
        if hasattr(r, "samples") and r.section == "memory":
            out.append(
                {
                    "name": f"{r.name}: peak memory",
                    "size": r.size,
                    "value": r.median,
                    "min": None,
                    "max": None,
                    "unit": "MiB",
                    "target": "< 1024 MiB",
                    "pass": r.median < 1024,
                }
            )
        if hasattr(r, "samples") and r.section == "flock" and r.size in (10_000, 100_000):
            limit = 50.0 if r.size == 10_000 else 1000.0
            out.append(
                {
                    "name": "flocking step",
                    "size": r.size,
                    "value": r.median,
                    "min": r.lo,
                    "max": r.hi,
                    "unit": "ms",
                    "target": f"< {limit:g} ms",
                    "pass": r.median < limit,
                }
            )
    n = args.sb3_envs
    out.append(
        _ratio(
            "PPO timesteps/s, native adapter / make_vec_env",
            n,
            _find(rows, "sb3", n, "PPO Pursuit, native"),
            _find(rows, "sb3", n, "PPO Pursuit, make_vec_env"),
            target=">= 1.5x",
            ok=lambda v: v >= 1.5,
        )
    )
    out.append(
        _ratio(
            "SB3 VecEnv step only, native adapter / DummyVecEnv",
            n,
            _find(rows, "sb3", n, "step only, native"),
            _find(rows, "sb3", n, "step only, DummyVecEnv"),
        )
    )
    e = args.rllib_envs
    out.append(
        _ratio(
            "RLlib sampling env-steps/s, native vector env + NativeVectorEnvRunner / sync",
            e,
            _find(rows, "rllib", e, "sample, native"),
            _find(rows, "rllib", e, "sample, SyncVectorEnv"),
            target=">= 5x",
            ok=lambda v: v >= 5,
        )
    )
    out.append(
        _ratio(
            "RLlib sampling env-steps/s, native vector env with the stock runner / sync",
            e,
            _find(rows, "rllib", e, "sample (stock SingleAgentEnvRunner), native"),
            _find(rows, "rllib", e, "sample, SyncVectorEnv"),
        )
    )
    out.append(
        _ratio(
            "PPO timesteps/s, RLlib (1 runner) / SB3 native adapter",
            None,
            _find(rows, "rllib", args.rllib_ppo_envs, "RLlib PPO"),
            _find(rows, "sb3", n, "PPO Pursuit, native"),
        )
    )
    for t in ("90%", "95%"):
        n_train = training_envs()
        out.append(
            _ratio(
                f"PPO seconds to {t} capture, make_vec_env / native adapter",
                n_train,
                _find(rows, "training", n_train, f"make_vec_env: seconds to {t}"),
                _find(rows, "training", n_train, f"native: seconds to {t}"),
            )
        )
    n_rllib = training_envs("rllib-ppo")
    for t in ("90%", "95%"):
        out.append(
            _ratio(
                f"RLlib PPO seconds to {t} capture, stock runner / NativeVectorEnvRunner",
                n_rllib,
                _find(rows, "training", n_rllib, f"stock runner: seconds to {t}"),
                _find(rows, "training", n_rllib, f"native runner: seconds to {t}"),
            )
        )
    out.extend(team_ratios(rows, args))
    out.extend(torchrl_ratios(rows, args))
    out.extend(herding_ratios(rows, args))
    out.extend(obstacle_ratios(rows, args))
    out.extend(crowd_ratios(rows, args))
    out.extend(flocking_ratios(rows, args))
    return [q for q in out if q is not None]


def training_envs(trainer: str = "ppo") -> int:
    """The envs of the training section's runs of ``trainer`` (``ppo``: SB3's, ``rllib-ppo``:
    RLlib's envs per runner), the default pursuer's."""
    from agents.training.defaults import training_defaults

    return training_defaults(trainer, "pursuit").n_envs


def torchrl_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    from benchmarks import torchrl_bench as tb

    e, env = args.torchrl_n_envs, args.envs[0]
    native = _find(rows, "torchrl", e, f"{env} " + tb.ROW_NATIVE.format(mode="DISABLED"))
    out = []
    for peer, label in ((tb.ROW_SERIAL, "SerialEnv"), ("Collector, ParallelEnv", "ParallelEnv")):
        den = _find(rows, "torchrl", e, f"{env} {peer}")
        q = _ratio(
            f"{env} TorchRL collector frames/s, native vector env (GymWrapper) / {label} of "
            "single envs",
            e,
            native,
            den,
        )
        if q is not None:  # interleaved repeats: the ratio within each round too
            per_round = [a / b for a, b in zip(native.samples, den.samples, strict=True)]
            q["paired"] = {
                "median": statistics.median(per_round),
                "min": min(per_round),
                "max": max(per_round),
                "per_round": per_round,
            }
        out.append(q)
    return out


def herding_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    from benchmarks import herding

    e = args.herding_n_envs
    big = e >= 8192  # where the target is set
    return [
        _ratio(
            "herding native batch / VMAS flocking, vehicle-steps/s",
            e,
            _find(rows, "herding", e, herding.ROW_BATCH),
            _find(rows, "herding", e, herding.ROW_VMAS),
            per="agent",
            target=">= 10x" if big else None,
            ok=(lambda v: v >= 10) if big else None,
        ),
        herding_scale_ratio(rows),
    ]


def obstacle_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    """Each task's vector env with obstacles over the same in an empty arena."""
    from benchmarks import obstacles

    e = args.obstacle_n_envs
    out = []
    for name in [*args.envs, *obstacles.EXTRA_ENVS]:
        pair = [
            _find(rows, "obstacles", e, obstacles.row_name(name, n))
            for n in (obstacles.OBSTACLES, 0)
        ]
        q = _ratio(
            f"{name} native vector env, {obstacles.OBSTACLES} obstacles / empty arena, env-steps/s",
            e,
            *pair,
            target=">= 0.5x",
            ok=lambda v: v >= 0.5,
        )
        if q is not None and not all(obstacles.times_resets(row) for row in pair):
            # Without the resets the ratio leaves out each new layout's placement.
            q["pass"] = None
            q["not_judged"] = "repeats shorter than an episode time no reset"
        out.append(q)
    return out


def crowd_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    """Crowd-v0's native vector env over its SyncVectorEnv, at each crowd size."""
    from benchmarks import crowd

    e = args.crowd_n_envs
    return [
        _ratio(
            f"Crowd-v0 native vector env / SyncVectorEnv, {n} humans, env-steps/s",
            e,
            _find(rows, "crowd", e, crowd.row_name("native", n)),
            _find(rows, "crowd", e, crowd.row_name("sync", n)),
        )
        for n in crowd.CROWD_SIZES
    ]


def flocking_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    """flocking_v0's native batch over VMAS flocking (same agents per env), and its time per
    boid-step at the largest flock of the scale rows over that at the smallest."""
    from benchmarks import flocking

    e = args.flocking_n_envs
    big = e >= 8192  # where the target is set
    small, large = flocking.SCALE_BOIDS[0], flocking.SCALE_BOIDS[-1]
    scale = _ratio(
        f"flocking_v0 time per boid-step, {large} boids / {small} boids",
        flocking.SCALE_ENVS,
        _find(rows, "flocking", flocking.SCALE_ENVS, flocking.row_batch(small)),
        _find(rows, "flocking", flocking.SCALE_ENVS, flocking.row_batch(large)),
    )
    if scale is not None:
        for key in ("value", "min", "max"):
            scale[key] *= small / large
        scale["target"], scale["pass"] = "<= 2x", bool(scale["value"] <= 2)
    return [
        _ratio(
            f"flocking_v0 native batch / VMAS flocking, {flocking.BOIDS} agents, env-steps/s",
            e,
            _find(rows, "flocking", e, flocking.row_batch(flocking.BOIDS)),
            _find(rows, "flocking", e, flocking.ROW_VMAS),
            target=">= 10x" if big else None,
            ok=(lambda v: v >= 10) if big else None,
        ),
        scale,
    ]


def herding_scale_ratio(rows: list[Any]) -> dict[str, Any] | None:
    """Time per sheep-step at the largest flock of the herding scale rows over that at the
    smallest: ``(rate_small * n_small) / (rate_large * n_large)``."""
    from benchmarks import herding

    small, large = herding.SCALE_SHEEP[0], herding.SCALE_SHEEP[-1]
    q = _ratio(
        f"herding time per sheep-step, {large} sheep / {small} sheep",
        herding.SCALE_ENVS,
        _find(rows, "herding", herding.SCALE_ENVS, herding.row_scale(small)),
        _find(rows, "herding", herding.SCALE_ENVS, herding.row_scale(large)),
    )
    if q is None:
        return None
    for key in ("value", "min", "max"):
        q[key] *= small / large
    q["target"], q["pass"] = "<= 2x", bool(q["value"] <= 2)
    return q


def team_ratios(rows: list[Any], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    from benchmarks import team

    e = args.team_n_envs
    big = e >= 8192  # where the issue sets the target
    batch = _find(rows, "team", e, team.ROW_BATCH)
    vmas = _find(rows, "team", e, team.ROW_VMAS)
    parallel = _find(rows, "team", 1, team.ROW_PARALLEL)
    mpe2 = _find(rows, "team", 1, team.ROW_MPE2)
    n = args.team_sb3_n_envs
    ppo_native = _find(rows, "team", n, team.ROW_PPO_NATIVE)
    ppo_supersuit = _find(rows, "team", n, team.ROW_PPO_SUPERSUIT)
    out = [
        _ratio(
            "team native batch / VMAS simple_tag, env-steps/s",
            e,
            batch,
            vmas,
            target=">= 10x" if big else None,
            ok=(lambda v: v >= 10) if big else None,
        ),
        _ratio(
            "team native batch / VMAS simple_tag, agent-substeps/s",
            e,
            batch,
            vmas,
            per="substep",
        ),
        _ratio(
            "team parallel_env / MPE2 simple_tag_v3, env-steps/s",
            1,
            parallel,
            mpe2,
            target=">= 8x",
            ok=lambda v: v >= 8,
        ),
        _ratio(
            "team PPO agent-steps/s, native adapter / SuperSuit",
            n,
            ppo_native,
            ppo_supersuit,
            target="> 1x (ahead)",
            ok=lambda v: v > 1,
        ),
    ]
    pairs = [(batch, vmas), (batch, vmas), (parallel, mpe2), (ppo_native, ppo_supersuit)]
    for q, (num, den) in zip(out, pairs, strict=True):
        if q is not None:  # the repeats ran interleaved: the ratio within each round too
            per_round = [a / b for a, b in zip(num.samples, den.samples, strict=True)]
            if q["unit"] == "x" and "substeps" in q["name"]:
                scale = (num.agents * num.substeps) / (den.agents * den.substeps)
                per_round = [x * scale for x in per_round]
            q["paired"] = {
                "median": statistics.median(per_round),
                "min": min(per_round),
                "max": max(per_round),
                "per_round": per_round,
            }
    return out


# --------------------------------------------------------------------------- main
def run(args: argparse.Namespace) -> tuple[list[Any], list[dict[str, Any]]]:
    from benchmarks import ours, peers

    if "torch" in sys.modules or peers.have("torch"):
        import torch

        torch.set_num_threads(args.threads)
    r, t = args.repeats, args.time_per_repeat
    rows: list[Any] = []

    def add(row: Any) -> None:
        rows.append(row)
        print(
            f"  {row.section:8} {row.name} [{row.size}]: "
            + (f"{fmt(row.median)} {row.unit}" if hasattr(row, "samples") else row.reason),
            file=sys.stderr,
            flush=True,
        )

    want = set(args.sections)
    if "compile" in want:
        # --quick: the first task only (every target compiles the shared engine anew).
        for row in ours.bench_compile(["pursuit"] if args.quick else None):
            add(row)
    if "single" in want:
        for env in args.envs:
            add(ours.bench_single(env, r, t))
    if "peers" in want:
        add(peers.bench_mpe2(r, t))
    if "vector" in want:
        for env in args.envs:
            for e in args.num_envs:
                add(ours.bench_vector(env, e, r, t))
    if "peers" in want:
        for e in args.num_envs:
            add(peers.bench_vmas(e, r, t))
    if "floor" in want:
        for env in args.envs:
            for e in args.num_envs:
                add(ours.bench_floor(env, e, r, t))
    if "sync" in want:
        for env in args.envs:
            for e in args.sync_envs:
                add(ours.bench_sync(env, e, r, t))
    if "memory" in want:
        for env in args.envs:
            for e in args.memory_envs:
                add(ours.bench_memory(env, e, steps=2 if args.quick else 5))
    if "flock" in want:
        for n in args.boids:
            add(ours.bench_flock(n, r))
    if "sb3" in want:
        if peers.have("stable_baselines3"):
            hyper = {
                "n_steps": args.sb3_n_steps,
                "batch_size": args.sb3_batch_size,
                "n_epochs": args.sb3_epochs,
            }
            reps = max(1, min(r, 3))
            for adapter in ("native", "dummy"):
                add(ours.bench_sb3(adapter, args.sb3_envs, args.sb3_timesteps, hyper, reps))
            for adapter in ("native", "dummy"):
                add(ours.bench_sb3_vecenv(adapter, args.sb3_envs, r, t))
        else:
            from benchmarks.common import Missing

            add(
                Missing(
                    "sb3", "PPO", args.sb3_envs, 'not installed (pip install "steer-env[train]")'
                )
            )
    if "rllib" in want:
        from benchmarks.common import Missing

        if peers.have("ray"):
            from benchmarks import rllib_bench

            reps = max(1, min(r, 3)) if args.rllib_repeats is None else args.rllib_repeats
            for row in rllib_bench.bench_rllib_sampling(args.rllib_envs, reps):
                add(row)
            if not args.no_rllib_ppo:
                add(
                    rllib_bench.bench_rllib_ppo(
                        args.rllib_ppo_envs, args.rllib_ppo_iterations, 1 if args.quick else reps
                    )
                )
        else:
            add(Missing("rllib", "RLlib", None, 'not installed (pip install "steer-env[rllib]")'))
    if "team" in want:
        from benchmarks import team

        team.run(
            args.team_n_envs,
            args.team_sb3_n_envs,
            args.team_sb3_timesteps,
            {
                "n_steps": args.sb3_n_steps,
                "batch_size": args.sb3_batch_size,
                "n_epochs": args.sb3_epochs,
            },
            r,
            t,
            add,
        )
    if "torchrl" in want:
        from benchmarks import torchrl_bench

        torchrl_bench.run(args.envs[0], args.torchrl_n_envs, r, t, add, args.torchrl_workers)
    if "herding" in want:
        from benchmarks import herding

        herding.run(args.herding_n_envs, r, t, add)
    if "obstacles" in want:
        from benchmarks import obstacles
        from benchmarks.ours import ENVS

        obstacles.run(
            {name: ENVS[name] for name in args.envs},
            args.obstacle_n_envs,
            r,
            t,
            add,
            quick=args.quick,
        )
    if "crowd" in want:
        from benchmarks import crowd

        crowd.run(args.crowd_n_envs, r, t, add)
    if "flocking" in want:
        from benchmarks import flocking

        flocking.run(args.flocking_n_envs, r, t, add)
    if "training" in want:
        from benchmarks.common import Missing

        if peers.have("stable_baselines3"):
            from benchmarks import training

            for row in training.rows("pursuit", quick=args.quick):
                add(row)
        else:
            add(Missing("training", "PPO", None, 'not installed (pip install "steer-env[train]")'))
        if peers.have("ray"):
            from benchmarks import training_rllib

            for row in training_rllib.rows("pursuit", quick=args.quick):
                add(row)
        else:
            add(
                Missing(
                    "training",
                    "RLlib PPO pair",
                    None,
                    'skipped: ray not installed (pip install "steer-env[rllib]")',
                )
            )
    return rows, ratios(rows, args)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    pin_threads(args.threads)
    from benchmarks import common

    command = "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"running: {command.strip()}", file=sys.stderr)
    rows, rats = run(args)
    result = {
        "command": command.strip(),
        "machine": common.machine(),
        "versions": common.versions(),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "counting": {
            "agents": "vehicles stepped per env-step: steer-env Pursuit 2, Evasion 3 (agent + "
            "scripted opponents); MPE2/VMAS simple_tag 4 agents; team section: 4 (3 "
            "pursuers + 1 evader) everywhere; its PPO rows count learned agent-steps (SB3 "
            "timesteps, one per pursuer slot)",
            "substeps": "physics sub-steps per env-step: steer-env 1, MPE2 1, VMAS 10",
            "memory": "tracemalloc peak (numpy + Python allocations) in a fresh process; RSS "
            "deltas in the note",
        },
        "rows": [row.to_json() for row in rows],
        "ratios": rats,
    }
    m = result["machine"]
    print(f"command: {result['command']}")
    print(
        f"machine: {m['platform']}; {m['cpu']} (kernels compiled for "
        f"{m['compiled_for']}); {m['cores']} cores ({m['usable_cores']} "
        f"usable); load {m['load_average_1_5_15min']}; threads per library {args.threads}"
    )
    print("versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v))
    print(
        f"figures: median of {args.repeats} repeats (min - max); agents and sub-steps as "
        "in the JSON's 'counting'"
    )
    print()
    print(table(rows, rats))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.json}")
    return result


if __name__ == "__main__":
    main()
