"""The ``torchrl`` section of ``python -m benchmarks``: TorchRL collection throughput.

Frames per second (one frame = one env-step of one environment) that TorchRL's
single-process ``Collector`` (formerly ``SyncDataCollector``) gathers from ``E``
environments of one task, three ways, all in this process's measurement loop:

* the native vector env, ``GymWrapper(gym.make_vec(id, E, vectorization_mode=
  "vector_entry_point", autoreset_mode=...))``: one compiled call steps all ``E``
  environments; both autoreset modes TorchRL accepts (DISABLED: TorchRL resets ended envs
  through ``reset_mask``; SAME_STEP: the env resets them and TorchRL swaps the final
  observation back in);
* ``SerialEnv(E, single env)``: ``E`` single envs stepped one after the other;
* ``ParallelEnv`` of ``W`` worker processes (TorchRL's default ``spawn``), each a
  ``SerialEnv`` of ``E / W`` single envs (a single env when ``W = E``); ``W``
  (``--torchrl-workers``) defaults to the largest divisor of ``E`` not above the usable
  cores. One process per env (``W = E``, what ``GymEnv(id, num_workers=E)`` builds) at
  ``E = 64`` on a 2-core, 23 GiB machine had not finished starting its workers after 9
  minutes, with 19 GiB of memory in use, so it is not the default.

The single env is ``GymEnv(id)``.

The policy replays actions drawn before the timed loop (uniform in [-1, 1]), so policy
cost is nothing but a copy. Every repeat collects the same number of batches; the rows
run repeat by repeat interleaved (ABBA...) so load on a shared machine hits them alike.
Setup (worker start, the kernel's first load) is outside the timing.
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Missing, Row, steps_for

SECTION = "torchrl"
HINT = 'not installed (pip install "steer-env[torchrl]")'
ROW_NATIVE = "Collector, native vector env (GymWrapper, autoreset {mode})"
ROW_SERIAL = "Collector, SerialEnv of single envs"
ROW_PARALLEL = "Collector, ParallelEnv of {workers} workers x SerialEnv of {per} single envs"
AGENTS = {"Pursuit": 2, "Evasion": 3}  # vehicles stepped per env-step, as elsewhere


def have() -> bool:
    try:
        import torchrl  # noqa: F401
    except ImportError:
        return False
    return True


def make_gym_env(env_id: str) -> Any:
    """``GymEnv(env_id)``; importable by TorchRL's spawned workers (it registers the id)."""
    from torchrl.envs import GymEnv

    import steer_env  # noqa: F401

    return GymEnv(env_id)


class Replay:
    """A policy that writes the next of ``actions`` (``(k, *batch, 2)``) into the tensordict."""

    def __init__(self, actions: Any) -> None:
        self.actions = actions
        self.i = 0

    def __call__(self, td: Any) -> Any:
        td.set("action", self.actions[self.i % len(self.actions)])
        self.i += 1
        return td


def _native(env_id: str, num_envs: int, mode: Any) -> Any:
    import gymnasium as gym
    from torchrl.envs import GymWrapper

    venv = gym.make_vec(
        env_id, num_envs, vectorization_mode="vector_entry_point", autoreset_mode=mode
    )
    return GymWrapper(venv)


def _serial(env_id: str, num_envs: int) -> Any:
    from torchrl.envs import SerialEnv

    return SerialEnv(num_envs, functools.partial(make_gym_env, env_id))


def make_serial_env(env_id: str, num_envs: int) -> Any:
    """``SerialEnv`` of ``num_envs`` single envs (a worker of the ParallelEnv row)."""
    if num_envs == 1:
        return make_gym_env(env_id)
    from torchrl.envs import SerialEnv

    return SerialEnv(num_envs, functools.partial(make_gym_env, env_id))


def _parallel(env_id: str, num_envs: int, workers: int) -> Any:
    from torchrl.envs import ParallelEnv

    make = functools.partial(make_serial_env, env_id, num_envs // workers)
    return ParallelEnv(workers, make)


def default_workers(num_envs: int) -> int:
    """The largest divisor of ``num_envs`` not above the usable cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(w for w in range(1, min(cores, num_envs) + 1) if num_envs % w == 0)


class Prepared:
    """A collector built and calibrated: :meth:`sample` runs one repeat, returns frames/s."""

    def __init__(
        self, name: str, env: Any, num_envs: int, target_s: float, note: str, agents: int
    ) -> None:
        import torch
        from torchrl.collectors import Collector

        self.name, self.env, self.num_envs, self.agents = name, env, num_envs, agents
        self.steps = 16  # env-steps per batch
        gen = torch.Generator().manual_seed(0)
        assert math.prod(env.batch_size) == num_envs
        actions = torch.rand((64, *env.batch_size, 2), generator=gen) * 2 - 1
        self.collector = Collector(
            env, Replay(actions), frames_per_batch=num_envs * self.steps, total_frames=-1
        )
        self.it = iter(self.collector)
        next(self.it)  # warm-up: first reset, first kernel use
        per_batch = self._run(2) / 2
        self.batches = steps_for(per_batch, target_s, 1, 10_000)
        self.note = f"{self.batches} batches of {self.steps} x {num_envs} frames/repeat; {note}"

    def _run(self, batches: int) -> float:
        t0 = time.perf_counter()
        for _ in range(batches):
            next(self.it)
        return time.perf_counter() - t0

    def sample(self) -> float:
        return self.batches * self.steps * self.num_envs / self._run(self.batches)

    def row(self, samples: list[float]) -> Row:
        return Row(
            SECTION, self.name, self.num_envs, "frames/s", samples, agents=self.agents,
            substeps=1, note=self.note,
        )  # fmt: skip

    def close(self) -> None:
        self.collector.shutdown()
        if not getattr(self.env, "is_closed", False):
            self.env.close()


def run(
    env: str,
    num_envs: int,
    repeats: int,
    target_s: float,
    add: Callable[[Any], None],
    workers: int | None = None,
) -> None:
    """Measure the rows for task ``env`` (``"Pursuit"``) at ``num_envs`` envs and ``add``
    each (a ``Missing`` row when TorchRL is not installed). ``workers``: processes of the
    ParallelEnv row (a divisor of ``num_envs``; default :func:`default_workers`)."""
    if not have():
        add(Missing(SECTION, "TorchRL collection", num_envs, HINT))
        return
    import torchrl

    env_id = f"steer_env/{env}-v0"
    agents = AGENTS[env]
    version = f"torchrl {torchrl.__version__}"
    single_note = f"{version}; single env GymEnv(id)"
    prepared: list[Prepared] = []
    from gymnasium.vector import AutoresetMode

    for mode in (AutoresetMode.DISABLED, AutoresetMode.SAME_STEP):
        name = f"{env} " + ROW_NATIVE.format(mode=mode.name)
        prepared.append(
            Prepared(name, _native(env_id, num_envs, mode), num_envs, target_s, version, agents)
        )
    prepared.append(
        Prepared(f"{env} {ROW_SERIAL}", _serial(env_id, num_envs), num_envs, target_s,
                 single_note, agents)
    )  # fmt: skip
    t0 = time.perf_counter()
    workers = default_workers(num_envs) if workers is None else workers
    if num_envs % workers:
        raise ValueError(f"--torchrl-workers {workers} does not divide {num_envs} envs")
    par = _parallel(env_id, num_envs, workers)
    par.start()
    started = time.perf_counter() - t0
    prepared.append(
        Prepared(f"{env} " + ROW_PARALLEL.format(workers=workers, per=num_envs // workers),
                 par, num_envs, target_s,
                 f"{single_note}; workers started in {started:.1f} s (not timed)", agents)
    )  # fmt: skip
    samples: dict[int, list[float]] = {id(p): [] for p in prepared}
    for r in range(repeats):
        for p in prepared if r % 2 == 0 else prepared[::-1]:
            samples[id(p)].append(p.sample())
    for p in prepared:
        add(p.row(samples[id(p)]))
        p.close()
