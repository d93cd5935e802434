"""Soak test: millions of env-steps across extreme but valid configurations, checking the
invariants every step.

``--steps`` is rounded up to whole rounds of 4,096 envs x 250 steps (1,024,000 env-steps).

    python -m benchmarks.soak                     # 10 rounds: 10,240,000 env-steps
    python -m benchmarks.soak --steps 1_000_000 --seed 3   # 1 round

Each round builds a native vector env of every task with a configuration drawn at the
edges of the documented ranges (tiny and huge masses, speeds, forces, weights, arenas,
time steps, look-aheads...) and steps it with random actions of extreme magnitudes
(including ``1e300``). After every step it checks: observations finite and inside the Box,
rewards finite, positions inside the arena, speeds at most max speed, state finite. It
prints one line per round and the number of violations (0 expected); exit status 1 if any.
"""

from __future__ import annotations

import sys
import time

import gymnasium as gym
import numpy as np

import steer_env  # noqa: F401
from steer_env.cli import OneLineParser, doc_summary, int_in, non_negative_int
from steer_env.tasks import TASKS
from steer_env.tasks.config import _RANGES

#: Envs per round and steps per round.
NUM_ENVS = 4096
STEPS_PER_ROUND = 250


def extreme_config(rng: np.random.Generator) -> dict[str, float | int]:
    """A valid configuration with each drawn argument at (or next to) an end of its range."""
    cfg: dict[str, float | int] = {}
    for name, (_kind, low, high, low_inclusive) in _RANGES.items():
        if name in ("time_limit", "max_observed_opponents", "n_opponents") or rng.random() < 0.4:
            continue
        lo = low if low_inclusive else (low * 1.000001 if low > 0 else 1e-6)
        cfg[name] = float(lo if rng.random() < 0.5 else high)
    arena = float(cfg.get("arena_size", 25.0))
    half = arena / 2
    cfg["vehicle_radius"] = min(float(cfg.get("vehicle_radius", 0.3)), arena / 4 * 0.99)
    cfg["capture_radius"] = min(float(cfg.get("capture_radius", 0.8)), half * 0.5)
    cfg["feeler_length"] = min(float(cfg.get("feeler_length", 2.0)), half * 0.99)
    top = arena - 2 * cfg["vehicle_radius"]
    start = float(cfg.get("min_start_distance", 6.0))
    cfg["min_start_distance"] = min(max(start, cfg["capture_radius"] * 1.01), top * 0.99)
    cfg["n_opponents"] = int(rng.integers(1, 5))
    cfg["time_limit"] = int(rng.integers(5, 200))
    return cfg


def violations(venv, obs, reward) -> list[str]:
    """What is wrong with the env after a step (empty when nothing is)."""
    found = []
    base = venv.unwrapped
    state = base.batch.state
    if not (np.all(np.isfinite(obs)) and np.all(np.abs(obs) <= 1.0)):
        found.append("observation outside [-1, 1] or not finite")
    if not np.all(np.isfinite(reward)):
        found.append("reward not finite")
    for name in ("position", "velocity", "heading", "wander", "potential"):
        if not np.all(np.isfinite(getattr(state, name))):
            found.append(f"{name} not finite")
    if np.any(np.abs(state.position) > base.config.half_size * (1 + 1e-12)):
        found.append("a vehicle outside the arena")
    speed = np.linalg.norm(state.velocity, axis=-1)
    if np.any(speed > base.batch.vehicles["max_speed"] * (1 + 1e-9)):
        found.append("a vehicle above its max speed")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m benchmarks.soak", description=doc_summary(__doc__))
    parser.add_argument(
        "--steps",
        type=int_in(1),
        default=10_000_000,
        help=f"env-steps in all, rounded up to whole rounds of {NUM_ENVS:,} envs x "
        f"{STEPS_PER_ROUND} steps (default 10,000,000: 10 rounds)",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    done_steps = 0
    bad = 0
    start = time.perf_counter()
    round_index = 0
    while done_steps < args.steps:
        task = list(TASKS.values())[round_index % len(TASKS)]
        cfg = extreme_config(rng)
        venv = gym.make_vec(task.env_id, NUM_ENVS, **cfg)
        venv.reset(seed=int(rng.integers(2**63)))
        problems: set[str] = set()
        for _ in range(STEPS_PER_ROUND):
            scale = 10.0 ** rng.uniform(-3, 300, (NUM_ENVS, 1))
            actions = rng.uniform(-1, 1, (NUM_ENVS, 2)) * scale
            obs, reward, *_ = venv.step(actions)
            found = violations(venv, obs, reward)
            bad += len(found)
            problems.update(found)
            done_steps += NUM_ENVS
        venv.close()
        shown = ", ".join(f"{k}={v:g}" for k, v in sorted(cfg.items()))
        status = "ok" if not problems else "; ".join(sorted(problems))
        print(f"round {round_index}: {task.name} {status} [{shown}]", flush=True)
        round_index += 1
    seconds = time.perf_counter() - start
    print(
        f"{done_steps:,} env-steps in {seconds:.0f} s over {round_index} configurations: "
        f"{bad} violations"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
