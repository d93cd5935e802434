"""steer-env's own figures: single env, native vector env, Gymnasium's SyncVectorEnv, memory,
the numpy floor, flocking, SB3 PPO throughput and the kernel's compile time.

Throughputs are env-steps per second with actions drawn before the timed loop; episode ends
are handled inside it (single env: ``reset()``; vector envs: their own autoreset).
Agents per env-step: every vehicle the physics steps, the learned agent plus the scripted
opponents (2 in Pursuit-v0, 3 in Evasion-v0); one physics sub-step per env-step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import Row, steps_for, without_log_folder

ENVS = {"Pursuit": "steer_env/Pursuit-v0", "Evasion": "steer_env/Evasion-v0"}


def n_vehicles(env_id: str) -> int:
    import gymnasium as gym

    import steer_env  # noqa: F401

    env = gym.make(env_id)
    n = env.unwrapped.batch.n_vehicles
    env.close()
    return n


def _actions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


# --------------------------------------------------------------------------- single env
def timed_steps(env: Any) -> Callable[[np.ndarray], float]:
    """A function that steps the single env ``env`` through ``actions`` (resetting where
    an episode ends) and returns the seconds it took."""

    def run(actions: np.ndarray) -> float:
        step, reset = env.step, env.reset
        t0 = time.perf_counter()
        for a in actions:
            _, _, terminated, truncated, _ = step(a)
            if terminated or truncated:
                reset()
        return time.perf_counter() - t0

    return run


def bench_single(name: str, repeats: int, target_s: float) -> Row:
    """``gym.make`` (with Gymnasium's default wrappers), resets included."""
    import gymnasium as gym

    import steer_env  # noqa: F401

    env_id = ENVS[name]
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    run = timed_steps(env)
    per_step = run(_actions(rng, (200, 2))) / 200  # warm-up and calibration
    k = steps_for(per_step, target_s, 100, 200_000)
    actions = _actions(rng, (k, 2))
    samples = [k / run(actions) for _ in range(repeats)]
    env.close()
    return Row(
        "single",
        f"{name} gym.make",
        1,
        "env-steps/s",
        samples,
        agents=n_vehicles(env_id),
        substeps=1,
        note=f"{k} steps/repeat",
    )


# --------------------------------------------------------------------------- vector envs
def _bench_vector_env(
    venv: Any, num_envs: int, repeats: int, target_s: float, max_steps: int = 20_000
) -> tuple[list[float], int]:
    venv.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(actions: np.ndarray) -> float:
        step = venv.step
        t0 = time.perf_counter()
        for a in actions:
            step(a)
        return time.perf_counter() - t0

    per_step = run(_actions(rng, (3, num_envs, 2))) / 3
    k = steps_for(per_step, target_s, 3, max_steps)
    actions = _actions(rng, (k, num_envs, 2))
    samples = [k * num_envs / run(actions) for _ in range(repeats)]
    return samples, k


def _bench_make_vec(
    name: str, num_envs: int, repeats: int, target_s: float, mode: str, section: str, label: str
) -> Row:
    import gymnasium as gym

    import steer_env  # noqa: F401

    env_id = ENVS[name]
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode)
    samples, k = _bench_vector_env(venv, num_envs, repeats, target_s)
    venv.close()
    return Row(
        section,
        f"{name} {label}",
        num_envs,
        "env-steps/s",
        samples,
        agents=n_vehicles(env_id),
        substeps=1,
        note=f"{k} steps/repeat",
    )


def bench_vector(name: str, num_envs: int, repeats: int, target_s: float) -> Row:
    """``gym.make_vec(..., vectorization_mode="vector_entry_point")``: the native vector env."""
    return _bench_make_vec(
        name, num_envs, repeats, target_s, "vector_entry_point", "vector", "native vector env"
    )


def bench_sync(name: str, num_envs: int, repeats: int, target_s: float) -> Row:
    """``gym.make_vec(..., vectorization_mode="sync")``: Gymnasium's SyncVectorEnv of single
    envs."""
    return _bench_make_vec(name, num_envs, repeats, target_s, "sync", "sync", "SyncVectorEnv")


# --------------------------------------------------------------------------- memory
def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def memory_child(env_id: str, num_envs: int, steps: int) -> dict[str, Any]:
    """Run in a fresh process (``python -m benchmarks.ours memory ENV_ID NUM_ENVS STEPS``):
    peak memory of building, resetting and stepping a native vector env."""
    import tracemalloc

    import gymnasium as gym

    import steer_env  # noqa: F401

    warm = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    warm.reset(seed=0)
    warm.step(np.zeros((2, 2), dtype=np.float32))  # load the compiled kernel first
    warm.close()
    actions = _actions(np.random.default_rng(0), (steps, num_envs, 2))
    try:  # reset the peak-RSS mark (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        hwm_reset = True
    except OSError:
        hwm_reset = False
    rss0 = _rss_bytes()
    tracemalloc.start()
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    for a in actions:
        venv.step(a)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = _rss_bytes()
    hwm = _peak_rss_bytes()
    state = sum(a.nbytes for a in venv.unwrapped.batch.state)
    return {
        "tracemalloc_peak_bytes": traced_peak,
        "rss_delta_bytes": rss1 - rss0,
        "peak_rss_delta_bytes": (hwm - rss0) if (hwm is not None and hwm_reset) else None,
        "state_bytes": state,
        "steps": steps,
    }


def bench_memory(name: str, num_envs: int, steps: int = 5) -> Row:
    """Peak memory of a native vector env of ``num_envs`` (fresh process): tracemalloc's
    peak (every numpy and Python allocation while building, resetting and stepping it)."""
    env_id = ENVS[name]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.ours", "memory", env_id, str(num_envs), str(steps)],
        capture_output=True,
        text=True,
        check=True,
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    mb = 1 / 2**20
    peak_rss = info["peak_rss_delta_bytes"]
    note = (
        f"tracemalloc peak; RSS delta {info['rss_delta_bytes'] * mb:.1f} MiB"
        + ("" if peak_rss is None else f", peak-RSS delta {peak_rss * mb:.1f} MiB")
        + f"; state arrays {info['state_bytes'] * mb:.1f} MiB"
    )
    return Row(
        "memory",
        f"{name} native vector env, reset + {steps} steps",
        num_envs,
        "MiB",
        [info["tracemalloc_peak_bytes"] * mb],
        note=note,
        extra=info,
    )


# --------------------------------------------------------------------------- numpy floor
def floor_step(n: int, seed: int = 0):
    """The bare numpy cost of the physics arithmetic for ``n`` vehicles
    (:func:`benchmarks.bench_core.numpy_floor`: seek + truncate + integrate + heading on
    preallocated buffers, with no opponents' behaviours, walls, capture, rewards or
    observations)."""
    from benchmarks.bench_core import numpy_floor

    rng = np.random.default_rng(seed)
    return numpy_floor(
        rng.uniform(-10.0, 10.0, (n, 2)),
        np.ones(n),
        np.full(n, 3.0),
        np.full(n, 6.0),
        np.array([3.0, -7.0]),
        0.1,
    )


def bench_floor(name: str, num_envs: int, repeats: int, target_s: float) -> Row:
    """The floor for ``num_envs`` envs of ``name``: ``num_envs * n`` vehicles; reported as
    env-steps/s so it compares directly with the vector env."""
    n = n_vehicles(ENVS[name])
    step = floor_step(num_envs * n)
    per_step = min(_loop_time(step, 3) / 3 for _ in range(2))
    k = steps_for(per_step, target_s, 3, 100_000)
    samples = [k * num_envs / _loop_time(step, k) for _ in range(repeats)]
    return Row(
        "floor",
        f"{name} numpy floor (seek + integrate, {n} vehicles/env)",
        num_envs,
        "env-steps/s",
        samples,
        agents=n,
        substeps=1,
        note=f"{k} steps/repeat",
    )


def _loop_time(fn, k: int) -> float:
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- flocking
NEIGHBOR_RADIUS = 5.0
MEAN_NEIGHBORS = 15.0


def _flocking():
    """``(make_flock, flock_step)``: from :mod:`benchmarks.bench_core` when it provides them
    (the steering core's own benchmark), else equivalent local definitions."""
    try:
        from benchmarks.bench_core import flock_step, make_flock

        return make_flock, lambda *f: flock_step(*f, method="auto"), "benchmarks.bench_core"
    except ImportError:
        pass
    from steer_env import behaviors, combine
    from steer_env.neighbors import find_neighbors

    def make(n: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        side = NEIGHBOR_RADIUS * np.sqrt(n * np.pi / MEAN_NEIGHBORS)
        pos = rng.uniform(0.0, side, (n, 2))
        angle = rng.uniform(-np.pi, np.pi, n)
        head = np.stack((np.cos(angle), np.sin(angle)), axis=-1)
        vel = head * rng.uniform(0.5, 1.0, n)[:, None]
        return pos, vel, head, np.full(n, 1.5), np.full(n, 2.0)

    def step(pos, vel, head, max_speed, max_force):
        nb = find_neighbors(pos, NEIGHBOR_RADIUS)
        sep = behaviors.separation(vel, max_speed, nb)
        ali = behaviors.alignment(vel, head, max_speed, nb)
        coh = behaviors.cohesion(vel, max_speed, nb)
        return combine.weighted_sum([sep, ali, coh], [1.5, 1.0, 1.0], max_force)

    return make, step, "benchmarks.ours"


def bench_flock(n_boids: int, repeats: int) -> Row:
    """One flocking step: find_neighbors + separation + alignment + cohesion (+ weighted sum),
    ~15 neighbours per boid."""
    make, step, source = _flocking()
    flock = make(n_boids)
    step(*flock)  # warm-up
    samples = [_loop_time(lambda: step(*flock), 1) * 1e3 for _ in range(repeats)]
    return Row(
        "flock",
        "flocking step (neighbours + separation/alignment/cohesion)",
        n_boids,
        "ms/step",
        samples,
        note=f"~{MEAN_NEIGHBORS:.0f} neighbours/boid; {source}",
    )


# --------------------------------------------------------------------------- SB3
def timed_learn(model: Any, timesteps: int) -> tuple[float, float, float]:
    """``model.learn(timesteps)``: timesteps/s, and the microseconds per timestep spent
    collecting rollouts and training."""
    spent = {"collect": 0.0, "train": 0.0}
    for part, attr in (("collect", "collect_rollouts"), ("train", "train")):
        method = getattr(model, attr)

        def timed(*args, _m=method, _p=part, **kwargs):
            t0 = time.perf_counter()
            try:
                return _m(*args, **kwargs)
            finally:
                spent[_p] += time.perf_counter() - t0

        setattr(model, attr, timed)
    without_log_folder(model)
    t0 = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    elapsed = time.perf_counter() - t0
    n = model.num_timesteps
    return n / elapsed, spent["collect"] / n * 1e6, spent["train"] / n * 1e6


def bench_sb3(
    adapter: str, n_envs: int, timesteps: int, hyper: dict[str, Any], repeats: int
) -> Row:
    """PPO on Pursuit-v0: ``learn(timesteps)`` through the native adapter
    (:func:`steer_env.envs.sb3.make_sb3_vec_env` under ``VecMonitor``) or through
    ``make_vec_env`` (a ``DummyVecEnv`` of ``Monitor``-wrapped single envs)."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecMonitor

    from steer_env.envs.sb3 import make_sb3_vec_env

    env_id = ENVS["Pursuit"]
    samples, collect, train = [], [], []
    for r in range(repeats):
        if adapter == "native":
            venv = VecMonitor(make_sb3_vec_env(env_id, n_envs=n_envs, seed=r))
        else:
            venv = make_vec_env(env_id, n_envs=n_envs, seed=r)
        model = PPO("MlpPolicy", venv, seed=r, device="cpu", verbose=0, **hyper)
        rate, c, t = timed_learn(model, timesteps)
        samples.append(rate)
        collect.append(c)
        train.append(t)
        venv.close()
    label = (
        "native adapter (make_sb3_vec_env)"
        if adapter == "native"
        else "make_vec_env (DummyVecEnv of single envs)"
    )
    note = (
        f"collect {np.median(collect):.1f} + train {np.median(train):.1f} us/timestep; "
        + ", ".join(f"{k}={v}" for k, v in hyper.items())
    )
    return Row(
        "sb3",
        f"PPO Pursuit, {label}",
        n_envs,
        "timesteps/s",
        samples,
        note=note,
        extra={
            "hyperparameters": hyper,
            "timesteps": timesteps,
            "collect_us_per_timestep": collect,
            "train_us_per_timestep": train,
        },
    )


def bench_sb3_vecenv(adapter: str, n_envs: int, repeats: int, target_s: float) -> Row:
    """Stepping the SB3 VecEnv alone (random actions, no learning)."""
    from stable_baselines3.common.env_util import make_vec_env

    from steer_env.envs.sb3 import make_sb3_vec_env

    env_id = ENVS["Pursuit"]
    if adapter == "native":
        venv = make_sb3_vec_env(env_id, n_envs=n_envs, seed=0)
    else:
        venv = make_vec_env(env_id, n_envs=n_envs, seed=0)
    venv.reset()
    rng = np.random.default_rng(0)

    def run(actions: np.ndarray) -> float:
        step = venv.step
        t0 = time.perf_counter()
        for a in actions:
            step(a)
        return time.perf_counter() - t0

    per_step = run(_actions(rng, (20, n_envs, 2))) / 20
    k = steps_for(per_step, target_s, 10, 100_000)
    actions = _actions(rng, (k, n_envs, 2))
    samples = [k * n_envs / run(actions) for _ in range(repeats)]
    venv.close()
    label = "native adapter" if adapter == "native" else "DummyVecEnv"
    return Row(
        "sb3",
        f"SB3 VecEnv step only, {label}",
        n_envs,
        "env-steps/s",
        samples,
        agents=2,
        substeps=1,
        note=f"{k} steps/repeat",
    )


# --------------------------------------------------------------------------- compile time
_FIRST_STEP_SNIPPET = """
import sys, time
t0 = time.perf_counter()
from steer_env.warmup import first_step
t1 = time.perf_counter()
print(t1 - t0, first_step(sys.argv[1]))
"""

_WARM_SNIPPET = """
import sys, time
t0 = time.perf_counter()
from steer_env.warmup import warm
t1 = time.perf_counter()
print(t1 - t0, warm([sys.argv[1]])[sys.argv[1]])
"""

#: What ``python train.py --env NAME`` pays before its training clock starts: its warm-up
#: (:func:`agents.training.sb3.warm_engine`, a one-env copy of the default run's env).
_TRAIN_WARM_SNIPPET = """
import contextlib, io, sys, time
t0 = time.perf_counter()
from agents.training import sb3
from steer_env.tasks import REGISTRY
t1 = time.perf_counter()
env = REGISTRY[sys.argv[1]].env_id
make_env, _, _ = sb3.env_factory({"env": env, "config": {}}, {})
with contextlib.redirect_stdout(io.StringIO()):
    seconds = sb3.warm_engine(env, make_env)
print(t1 - t0, seconds)
"""


def _fresh_process(snippet: str, name: str, env: dict[str, str]) -> tuple[float, float]:
    """``(import seconds, measured seconds)`` of ``snippet`` run for ``name`` in a new
    process."""
    out = subprocess.run(
        [sys.executable, "-c", snippet, name], env=env, capture_output=True, text=True, check=True
    )
    imp, seconds = (float(x) for x in out.stdout.split())
    return imp, seconds


def bench_compile(names: list[str] | None = None) -> list[Row]:
    """For each task: its first step (``steer_env.warmup.first_step``: make the default env,
    reset it, step it once), in a fresh process with an empty numba cache (it compiles what
    it needs) and again with the cache that process wrote (it loads); then the warm-up of
    the task (every env form with every named strategy, :func:`steer_env.warmup.warm`) with
    an empty cache, and what ``python train.py --env NAME`` pays before it trains (its
    warm-up of the run's own env) with an empty cache. The numpy library's first use (its
    gallery) likewise."""
    from steer_env.tasks import REGISTRY
    from steer_env.warmup import LIBRARY, targets

    rows = []
    for name in names or list(targets()):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            snippet = _WARM_SNIPPET if name == LIBRARY else _FIRST_STEP_SNIPPET
            what = "first use" if name == LIBRARY else "first step"
            for label in ("empty cache: compiles", "filled cache: loads"):
                imp, first = _fresh_process(snippet, name, env)
                rows.append(
                    Row(
                        "compile",
                        f"{what} of {name}, {label}",
                        None,
                        "s",
                        [first],
                        note=f"import {imp:.2f} s",
                    )
                )
        if name == LIBRARY:
            continue
        rows.append(
            _cold_row(_WARM_SNIPPET, name, f"warm-up of {name}",
                      f"python -m steer_env.warmup --tasks {name}")
        )  # fmt: skip
        if REGISTRY[name].env_id is not None and _has_module("stable_baselines3"):
            rows.append(
                _cold_row(_TRAIN_WARM_SNIPPET, name, f"train.py's warm-up of {name}",
                          f"python train.py --env {name}, before training")
            )  # fmt: skip
    return rows


def _cold_row(snippet: str, name: str, what: str, command: str) -> Row:
    """The row of ``snippet`` run for ``name`` in a fresh process with an empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        imp, seconds = _fresh_process(snippet, name, dict(os.environ, NUMBA_CACHE_DIR=cache))
    label = f"{what}, empty cache: compiles"
    return Row("compile", label, None, "s", [seconds], note=f"{command}; import {imp:.2f} s")


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main(argv: list[str]) -> None:
    if argv[:1] == ["memory"]:
        print(json.dumps(memory_child(argv[1], int(argv[2]), int(argv[3]))))
        return
    raise SystemExit("usage: python -m benchmarks.ours memory ENV_ID NUM_ENVS STEPS")


if __name__ == "__main__":
    main(sys.argv[1:])
