"""The env step of this checkout against another commit's, interleaved, in fresh processes.
With ``--paired``, ``--env Evasion-v0`` measures that env's single and vector rows instead.

    python -m benchmarks.versus --ref de83540               # single env and 8,192 envs
    python -m benchmarks.versus --ref de83540 --rounds 7 --num-envs 1024
    python -m benchmarks.versus --ref de83540 --paired --n-obstacles 16   # obstacle fields

Both versions cannot be imported into one process (same package name), so each round runs
one child process per version (alternating which goes first) on the same pre-drawn random
actions: Pursuit-v0 through ``gym.make`` (single env, resets included) and through
``gym.make_vec(..., vectorization_mode="vector_entry_point")``. The other version is checked
out with ``git worktree add --detach`` into a temporary folder (removed afterwards). Prints
the median env-steps/s of each version and the ratio this / ref. Threads are pinned to one.

``--paired`` measures both versions in *one* process instead (and the team task's native
batch, ``team_pursuit_v0.vector_env``, too), which is far steadier on a
shared machine whose speed drifts between processes: the ref's ``steer_env`` package is
copied under the name ``steer_env_ref`` (every ``steer_env`` in its sources renamed, so its
envs register as ``steer_env_ref/Pursuit-v0``), then short blocks of steps alternate between
the two envs; half the rounds run in a child that makes this version's env first, half in
one that makes the other's first (the env made first in a process runs a few percent
faster or slower whatever its code). Prints the best block of each and the median of the
per-round ratios with its quartiles.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from steer_env.cli import OneLineParser, fail, int_in, positive_int
from steer_env.tasks.config import OBSTACLE_RANGES

ROOT = Path(__file__).resolve().parents[1]
#: ``--n-obstacles``: the range every task accepts for ``n_obstacles``.
obstacle_count = int_in(0, OBSTACLE_RANGES["n_obstacles"][2])


CHILD = r"""
import json, sys, time
import numpy as np
import gymnasium as gym
import steer_env
mode, n, steps, kwargs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
rng = np.random.default_rng(0)
if mode == "vector":
    env = gym.make_vec(
        "steer_env/Pursuit-v0", num_envs=n, vectorization_mode="vector_entry_point", **kwargs
    )
    env.reset(seed=0)
    acts = rng.uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    for a in acts[:20]:
        env.step(a)
    t0 = time.perf_counter()
    for a in acts:
        env.step(a)
    rate = steps * n / (time.perf_counter() - t0)
else:
    env = gym.make("steer_env/Pursuit-v0", **kwargs)
    env.reset(seed=0)
    acts = rng.uniform(-1, 1, (steps, 2)).astype(np.float32)
    step, reset = env.step, env.reset
    for a in acts[:200]:
        _, _, te, tr, _ = step(a)
        if te or tr:
            reset()
    t0 = time.perf_counter()
    for a in acts:
        _, _, te, tr, _ = step(a)
        if te or tr:
            reset()
    rate = steps / (time.perf_counter() - t0)
print(json.dumps({"package": steer_env.__file__, "rate": rate}))
"""


PAIRED_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import gymnasium as gym
import steer_env, steer_env_ref
mode, n, rounds, name, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:6]
kwargs = json.loads(sys.argv[6])
ids = {"this": f"steer_env/{name}", "ref": f"steer_env_ref/{name}"}
if first == "ref":  # the env made first, and its arrays, come first in the process
    ids = {"ref": ids["ref"], "this": ids["this"]}
rng = np.random.default_rng(0)
if mode == "vector":
    steps = 20
    envs = {k: gym.make_vec(v, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
            for k, v in ids.items()}
    acts = rng.uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    for e in envs.values():
        e.reset(seed=0)
    def block(e):
        t = time.perf_counter()
        for a in acts:
            e.step(a)
        return steps * n / (time.perf_counter() - t)
elif mode == "team":
    import importlib
    steps = 20
    packages = {"this": "steer_env", "ref": "steer_env_ref"}
    envs = {
        k: importlib.import_module(f"{packages[k]}.envs.team_pursuit_v0").vector_env(n, **kwargs)
        for k in ids
    }
    for e in envs.values():
        e.reset(seed=0)
    acts = rng.uniform(-1, 1, (steps, n, envs["this"].n_agents, 2))
    def block(e):
        t = time.perf_counter()
        for a in acts:
            e.step(a)
        return steps * n / (time.perf_counter() - t)
else:
    steps = 2000
    envs = {k: gym.make(v, **kwargs) for k, v in ids.items()}
    acts = rng.uniform(-1, 1, (steps, 2)).astype(np.float32)
    for e in envs.values():
        e.reset(seed=0)
    def block(e):
        step, reset = e.step, e.reset
        t = time.perf_counter()
        for a in acts:
            _, _, te, tr, _ = step(a)
            if te or tr:
                reset()
        return steps / (time.perf_counter() - t)
for e in envs.values():
    block(e)  # warm-up: compiled code loaded, first episodes
rates = {k: [] for k in envs}
for r in range(rounds):
    for k in (list(envs) if r % 2 == 0 else list(envs)[::-1]):
        rates[k].append(block(envs[k]))
print(json.dumps({"package": steer_env.__file__, "ref": steer_env_ref.__file__, **rates}))
"""


def copy_renamed(tree: Path, dest: Path) -> Path:
    """``tree/steer_env`` copied to ``dest/steer_env_ref`` with every ``steer_env`` name in
    its sources renamed, so both versions import side by side."""
    target = dest / "steer_env_ref"
    shutil.copytree(tree / "steer_env", target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        text = path.read_text()
        path.write_text(re.sub(r"\bsteer_env\b", "steer_env_ref", text))
    return dest


def run_child(
    script: str, pythonpath: list[Path], args: list[object], label: str | None = None
) -> dict:
    """Run a child script with one thread per library and ``pythonpath`` first on the path;
    returns the JSON of its last line after checking that it imported ``steer_env`` from
    ``pythonpath[0]`` (not some installed copy). A child that fails raises
    ``RuntimeError`` with ``label`` (default: ``pythonpath[0]``) and its last error line."""
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    proc = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no error output"])[-1]
        raise RuntimeError(f"{label or pythonpath[0]}: {last}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(pythonpath[0])):
        raise RuntimeError(
            f"the child imported {result['package']}, not the one in {pythonpath[0]}"
        )
    return result


def measure_paired(
    ref_parent: Path,
    mode: str,
    num_envs: int,
    rounds: int,
    env: str = "Pursuit-v0",
    env_kwargs: dict[str, Any] | None = None,
) -> dict:
    """``rounds`` paired rounds, half in a child that makes this version's env first and
    half in one that makes the other's first: in one process the env made first runs a
    few percent faster or slower whatever its code (a commit against itself measured
    0.97 to 0.98 with one order only). ``env_kwargs`` go to every env made."""
    pooled: dict[str, list[float]] = {"this": [], "ref": []}
    kwargs = json.dumps(env_kwargs or {})
    for first, share in (("this", (rounds + 1) // 2), ("ref", rounds // 2)):
        if share == 0:
            continue
        result = run_child(
            PAIRED_CHILD,
            [ROOT, ref_parent],
            [mode, num_envs, share, env, first, kwargs],
            label=f"the paired {mode} measurement (this checkout and the ref)",
        )
        for k in pooled:
            pooled[k].extend(result[k])
    return pooled


def report_paired(
    ref: str, mode: str, n: int, result: dict, env: str = "Pursuit-v0", field: str = ""
) -> None:
    this, other = result["this"], result["ref"]
    ratios = sorted(a / b for a, b in zip(this, other, strict=True))
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(
        f"{'team_pursuit_v0' if mode == 'team' else env} {mode} "
        f"({n} env{'s' if n > 1 else ''}{field}), paired in one process: this "
        f"best {max(this):,.0f} env-steps/s, {ref} best {max(other):,.0f}; ratio of bests "
        f"{max(this) / max(other):.2f}; median of {len(ratios)} per-round ratios "
        f"{statistics.median(ratios):.2f} [quartiles {q[0]:.2f}, {q[2]:.2f}]",
        flush=True,
    )


def measure(
    tree: Path, mode: str, num_envs: int, steps: int, env_kwargs: dict[str, Any] | None = None
) -> float:
    kwargs = json.dumps(env_kwargs or {})
    return float(run_child(CHILD, [tree], [mode, num_envs, steps, kwargs])["rate"])


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog="python -m benchmarks.versus",
        description="Pursuit-v0 env-steps/s of this checkout vs another git commit.",
    )
    p.add_argument("--ref", required=True, help="the other commit (any git revision)")
    p.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds")
    p.add_argument("--num-envs", type=positive_int, default=8192, help="vector env size")
    p.add_argument("--steps", type=positive_int, default=300, help="vector env steps")
    p.add_argument(
        "--team-envs",
        type=positive_int,
        default=8192,
        help="team_pursuit_v0.vector_env size (with --paired)",
    )
    p.add_argument("--single-steps", type=positive_int, default=20_000, help="single env steps")
    p.add_argument(
        "--env",
        default="Pursuit-v0",
        choices=("Pursuit-v0", "Evasion-v0", "Herding-v0"),
        help="the single-agent env of the single and vector rows (with --paired)",
    )
    p.add_argument(
        "--n-obstacles",
        type=obstacle_count,
        default=0,
        help="obstacles placed per episode in every env measured (default 0: the empty "
        "arena, which any ref measures)",
    )
    p.add_argument(
        "--paired",
        action="store_true",
        help="both versions in one process, alternating blocks (steadier on a shared machine)",
    )
    args = p.parse_args(argv)
    # An empty arena passes nothing, so a ref from before obstacles measures it too.
    env_kwargs = {"n_obstacles": args.n_obstacles} if args.n_obstacles else {}
    field = f", {args.n_obstacles} obstacles" if args.n_obstacles else ""
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "ref"
        add = subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(other), args.ref],
            capture_output=True,
            text=True,
            check=False,
        )
        if add.returncode != 0:
            p.error(f"cannot check out --ref {args.ref}: {add.stderr.strip()}")
        try:
            if args.paired:
                parent = copy_renamed(other, Path(tmp) / "renamed")
                modes = (("single", 1), ("vector", args.num_envs), ("team", args.team_envs))
                for mode, n in modes:
                    rounds = max(args.rounds, 10)
                    result = measure_paired(parent, mode, n, rounds, args.env, env_kwargs)
                    report_paired(args.ref, mode, n, result, args.env, field)
                return 0
            trees = {"this": ROOT, args.ref: other}
            for mode, n, steps in (
                ("single", 1, args.single_steps),
                ("vector", args.num_envs, args.steps),
            ):
                rates: dict[str, list[float]] = {k: [] for k in trees}
                for r in range(args.rounds):
                    order = list(trees) if r % 2 == 0 else list(trees)[::-1]
                    for k in order:
                        rates[k].append(measure(trees[k], mode, n, steps, env_kwargs))
                med = {k: statistics.median(v) for k, v in rates.items()}
                print(
                    f"Pursuit-v0 {mode} ({n} env{'s' if n > 1 else ''}{field}): this "
                    f"{med['this']:,.0f} env-steps/s, {args.ref} {med[args.ref]:,.0f}; "
                    f"ratio {med['this'] / med[args.ref]:.2f} (medians of {args.rounds}; "
                    f"this {[round(x) for x in rates['this']]}, "
                    f"{args.ref} {[round(x) for x in rates[args.ref]]})",
                    flush=True,
                )
        except RuntimeError as err:
            # A child that could not measure (a ref without obstacles asked for some, ...).
            return fail("python -m benchmarks.versus", err)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)],
                capture_output=True,
                check=False,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
