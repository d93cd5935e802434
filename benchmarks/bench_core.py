"""Micro-benchmarks of the steering core.

Run with ``python -m benchmarks.bench_core`` (add ``--quick`` for fewer repeats). Threads are
pinned to one (``OMP_NUM_THREADS=1`` and friends are set before numpy is imported) so the
figures are per core.

1. One physics step (:func:`steer_env.physics.integrate`, in place) plus :func:`seek` for
   100,000 vehicles, against the "floor": the same arithmetic written inline as tight numpy
   on preallocated buffers. Target: ours / floor <= 3.
2. One flocking step (:func:`find_neighbors` + separation + alignment + cohesion +
   :func:`combine.weighted_sum`) for 1,000, 10,000 and 100,000 boids spread uniformly over a
   square sized so that each boid has about 15 neighbours within the neighbour radius.
   Targets: 10k < 10 ms, 100k < 1 s.
3. The same physics + seek call on 3 vehicles (per-call overhead), against the pure-numpy
   library before the core kernels (kept verbatim as the test oracle, tests/oracle_numpy.py)
   timed alongside. Target: at least 5x faster.
4. Compilation: a fresh process importing steer_env and making the first calls of sections
   1-2 with an empty ``NUMBA_CACHE_DIR`` (everything compiles), then again with that cache
   filled (everything loads), and the bare ``import steer_env``.

Every figure is the median over several repeats, with the min-max range. The figures are
also written as a results file (``--json PATH``, default ``benchmarks/results_core.json``:
the command, machine, versions, one row per measurement and the ratios with their targets),
which the performance page's steering-core tables are read from.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402

from benchmarks.common import Row, machine, versions  # noqa: E402
from steer_env import behaviors, combine, physics  # noqa: E402
from steer_env.cli import OneLineParser, doc_summary  # noqa: E402
from steer_env.neighbors import find_neighbors  # noqa: E402

NEIGHBOR_RADIUS = 5.0  # m
MEAN_NEIGHBORS = 15.0  # expected neighbours per boid
#: Where ``python -m benchmarks.bench_core`` writes its results by default.
DEFAULT_JSON = Path(__file__).resolve().parent / "results_core.json"


def timeit(fn: Callable[[], object], repeats: int, inner: int = 1) -> list[float]:
    """Seconds per call of ``fn``: one figure per repeat, each averaged over ``inner`` calls."""
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        out.append((time.perf_counter() - t0) / inner)
    return out


def fmt(samples: list[float], unit: str = "ms") -> str:
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0}[unit]
    med = statistics.median(samples) * scale
    return f"{med:9.3f} {unit}  (min {min(samples) * scale:.3f} - max {max(samples) * scale:.3f})"


# --- 1. physics + seek vs the numpy floor
def numpy_floor(
    position: np.ndarray,
    mass: np.ndarray,
    max_speed: np.ndarray,
    max_force: np.ndarray,
    target: np.ndarray,
    dt: float,
) -> Callable[[], None]:
    """The floor we are measured against: seek + truncate + integrate + heading update for
    every vehicle, written inline as bare numpy on preallocated buffers (about 25 numpy
    calls, nothing else). Returns a function that advances its own copy of the state."""
    n = position.shape[0]
    fp, fv = position.copy(), np.zeros((n, 2))
    fh = np.tile([1.0, 0.0], (n, 1))
    d = np.empty((n, 2))
    s = np.empty(n)
    t = np.empty(n)
    u = np.empty(n)
    mass_over_dt = np.broadcast_to(mass, (n,)) / dt

    def norm_into(vec: np.ndarray, out: np.ndarray) -> None:
        np.multiply(vec[:, 0], vec[:, 0], out=out)
        np.multiply(vec[:, 1], vec[:, 1], out=u)
        out += u
        np.sqrt(out, out=out)

    def floor() -> None:
        # seek: desired = max_speed * (target - p) / |target - p|; force = desired - v
        np.subtract(target, fp, out=d)
        norm_into(d, s)
        np.maximum(s, 1e-12, out=s)
        np.divide(max_speed, s, out=t)
        np.multiply(d, t[:, None], out=d)
        np.subtract(d, fv, out=d)
        # truncate to max_force, / mass, * dt
        norm_into(d, s)
        np.maximum(s, max_force, out=s)
        np.multiply(s, mass_over_dt, out=s)
        np.divide(max_force, s, out=t)
        np.multiply(d, t[:, None], out=d)
        np.add(fv, d, out=fv)
        # truncate the speed, move, heading
        norm_into(fv, s)
        np.maximum(s, max_speed, out=t)
        np.divide(max_speed, t, out=t)
        np.multiply(fv, t[:, None], out=fv)
        np.multiply(s, t, out=s)
        np.multiply(fv, dt, out=d)
        np.add(fp, d, out=fp)
        np.maximum(s, 1e-300, out=t)
        np.divide(fv, t[:, None], out=fh, where=(s > 1e-8)[:, None])

    return floor


def bench_physics(n: int, repeats: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(0)
    dt = 0.05
    pos0 = rng.uniform(-100.0, 100.0, (n, 2))
    mass = rng.uniform(0.5, 2.0, n)
    max_speed = rng.uniform(1.0, 3.0, n)
    max_force = rng.uniform(0.5, 4.0, n)
    target = np.array([3.0, -7.0])

    pos, vel = pos0.copy(), np.zeros((n, 2))
    head = np.tile([1.0, 0.0], (n, 1))
    state = (pos, vel, head)

    def ours() -> None:
        force = behaviors.seek(pos, vel, target, max_speed)
        physics.integrate(pos, vel, head, force, mass, max_speed, max_force, dt, out=state)

    floor = numpy_floor(pos0, mass, max_speed, max_force, target, dt)
    return timeit(ours, repeats, inner=5), timeit(floor, repeats, inner=5)


def bench_small(repeats: int) -> tuple[list[float], list[float]]:
    """Seconds per ``seek`` + in-place ``integrate`` call on 3 vehicles: steer_env, and the
    pure-numpy implementation it replaced (tests/oracle_numpy.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "tests"))
    import oracle_numpy

    def make(seek, integrate) -> Callable[[], None]:
        rng = np.random.default_rng(0)
        pos = rng.uniform(-10, 10, (3, 2))
        vel = np.zeros((3, 2))
        head = np.tile([1.0, 0.0], (3, 1))
        mass = np.ones(3)
        max_speed = np.full(3, 2.0)
        max_force = np.full(3, 3.0)
        target = np.array([3.0, 4.0])
        state = (pos, vel, head)

        def call() -> None:
            force = seek(pos, vel, target, max_speed)
            integrate(pos, vel, head, force, mass, max_speed, max_force, 0.05, out=state)

        return call

    ours = make(behaviors.seek, physics.integrate)
    before = make(oracle_numpy.seek, oracle_numpy.integrate)
    ours_t: list[float] = []
    before_t: list[float] = []
    for _ in range(repeats):  # interleaved, so load changes hit both alike
        ours_t += timeit(ours, 1, inner=1000)
        before_t += timeit(before, 1, inner=1000)
    return ours_t, before_t


#: What a fresh process runs for section 4: import, then the first call of each benchmark.
FIRST_USE = """
import time
t0 = time.perf_counter()
import numpy as np
from benchmarks.bench_core import bench_physics, flock_step, make_flock
t1 = time.perf_counter()
bench_physics(10, 1)
flock_step(*make_flock(300), method="auto")
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def first_use(cache_dir: str) -> tuple[float, float]:
    """(import seconds, first-calls seconds) of a fresh process using ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", FIRST_USE], env=env, capture_output=True, text=True, check=True
    )
    imp, calls = out.stdout.split()
    return float(imp), float(calls)


def bare_import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import steer_env; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


# --- 2. flocking
def make_flock(n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    side = NEIGHBOR_RADIUS * np.sqrt(n * np.pi / MEAN_NEIGHBORS)
    pos = rng.uniform(0.0, side, (n, 2))
    angle = rng.uniform(-np.pi, np.pi, n)
    head = np.stack((np.cos(angle), np.sin(angle)), axis=-1)
    vel = head * rng.uniform(0.5, 1.0, n)[:, None]
    max_speed = np.full(n, 1.5)
    max_force = np.full(n, 2.0)
    return pos, vel, head, max_speed, max_force


def flock_step(pos, vel, head, max_speed, max_force, method: str) -> np.ndarray:
    nb = find_neighbors(pos, NEIGHBOR_RADIUS, method=method)
    sep = behaviors.separation(vel, max_speed, nb)
    ali = behaviors.alignment(vel, head, max_speed, nb)
    coh = behaviors.cohesion(vel, max_speed, nb)
    return combine.weighted_sum([sep, ali, coh], [1.5, 1.0, 1.0], max_force)


def ratio(
    name: str, size: int | None, num: list[float], den: list[float], target: str
) -> dict[str, Any]:
    """A ratio of two medians as the results file holds it (``benchmarks`` layout)."""
    value = statistics.median(num) / statistics.median(den)
    return {"name": name, "size": size, "value": value, "unit": "x", "target": target}


def measure(repeats: int) -> tuple[list[Row], list[dict[str, Any]]]:
    """Sections 1-4: the rows (seconds per call) and the ratios with their targets, printed
    as they are measured."""
    rows: list[Row] = []
    ratios: list[dict[str, Any]] = []

    n = 100_000
    ours, floor = bench_physics(n, repeats)
    rows += [
        Row("physics", "integrate (in place) + seek, steer_env", n, "ms", [x * 1e3 for x in ours]),
        Row(
            "physics", "integrate (in place) + seek, numpy floor", n, "ms", [x * 1e3 for x in floor]
        ),
    ]
    r = ratio("physics + seek: steer_env / numpy floor", n, ours, floor, "<= 1x")
    r["pass"] = r["value"] <= 1.0
    ratios.append(r)
    print(f"1. integrate (in place) + seek, {n:,} vehicles")
    print(f"   steer_env   {fmt(ours)}")
    print(f"   numpy floor {fmt(floor)}")
    print(f"   ratio ours/floor = {r['value']:.2f}  (target <= 1: at or below the floor)")
    print()

    print("2. flocking step (find_neighbors + separation + alignment + cohesion + weighted_sum),")
    print(f"   radius {NEIGHBOR_RADIUS} m, ~{MEAN_NEIGHBORS:.0f} neighbours per boid")
    targets = {10_000: 10e-3, 100_000: 1.0}
    for n_boids, reps in ((1_000, repeats * 4), (10_000, repeats), (100_000, max(3, repeats // 3))):
        flock = make_flock(n_boids)
        nb = find_neighbors(flock[0], NEIGHBOR_RADIUS, method="kdtree")
        mean_nb = len(nb.i) / n_boids
        for method in ("kdtree", "auto"):
            samples = timeit(lambda f=flock, m=method: flock_step(*f, method=m), reps)
            limit = targets.get(n_boids)
            note = f"{mean_nb:.1f} neighbours per boid"
            if limit is not None:
                met = "met" if statistics.median(samples) < limit else "missed"
                note += f"; target < {fmt_limit(limit)}: {met}"
            rows.append(
                Row(
                    "flocking",
                    f"flocking step, find_neighbors method={method}",
                    n_boids,
                    "ms",
                    [x * 1e3 for x in samples],
                    note=note,
                )
            )
            target = f"  (target < {fmt_limit(limit)})" if limit is not None else ""
            print(
                f"   {n_boids:>7,} boids, {method:>6}: {fmt(samples)}"
                f"  [{mean_nb:.1f} neighbours/boid]{target}"
            )

    small, before = bench_small(repeats)
    rows += [
        Row("small", "integrate (in place) + seek, steer_env", 3, "us", [x * 1e6 for x in small]),
        Row(
            "small",
            "integrate (in place) + seek, pure numpy (tests/oracle_numpy.py)",
            3,
            "us",
            [x * 1e6 for x in before],
        ),
    ]
    r = ratio("3 vehicles: pure numpy / steer_env", 3, before, small, ">= 5x")
    r["pass"] = r["value"] >= 5.0
    ratios.append(r)
    print()
    print("3. integrate (in place) + seek, 3 vehicles, per call")
    print(f"   steer_env          {fmt(small, 'us')}")
    print(f"   pure numpy before  {fmt(before, 'us')}")
    print(f"   speed-up = {r['value']:.1f}x  (target >= 5x)")
    print()

    print("4. compilation (fresh process: import steer_env + first calls of sections 1-2)")
    with tempfile.TemporaryDirectory() as cache:
        cold = first_use(cache)
        warm = [first_use(cache) for _ in range(3)]
    imports = [bare_import_seconds() for _ in range(3)]
    first = "first calls of sections 1-2 in a fresh process"
    rows += [
        Row("compile", f"{first}, empty cache (compiles)", None, "s", [cold[1]],
            note=f"import {cold[0]:.2f} s"),
        Row("compile", f"{first}, filled cache (loads)", None, "s", [w[1] for w in warm],
            note=f"import {statistics.median(w[0] for w in warm):.2f} s"),
        Row("compile", "bare `import steer_env` (no numba import)", None, "s", imports),
    ]  # fmt: skip
    warm_calls = statistics.median(w[1] for w in warm)
    warm_import = statistics.median(w[0] for w in warm)
    print(f"   empty cache (compiles):  import {cold[0]:.2f} s, first calls {cold[1]:.2f} s")
    print(f"   filled cache (loads):    import {warm_import:.2f} s, first calls {warm_calls:.2f} s")
    print(f"   bare `import steer_env`: {statistics.median(imports):.2f} s (no numba import)")
    return rows, ratios


def fmt_limit(seconds: float) -> str:
    return f"{seconds * 1e3:g} ms" if seconds < 1 else f"{seconds:g} s"


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(prog="python -m benchmarks.bench_core", description=doc_summary(__doc__))
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument(
        "--json",
        type=Path,
        default=DEFAULT_JSON,
        metavar="PATH",
        help="results file to write (default benchmarks/results_core.json)",
    )
    words = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15

    command = " ".join(["python -m benchmarks.bench_core", *words])
    print(f"command: {command}")
    print(
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
    )
    print(f"figures: median over {repeats} repeats (min - max)")
    print()
    rows, ratios = measure(repeats)
    result = {
        "command": command,
        "machine": machine(),
        "versions": versions(),
        "settings": {"repeats": repeats, "neighbor_radius_m": NEIGHBOR_RADIUS},
        "rows": [row.to_json() for row in rows],
        "ratios": ratios,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
