"""Shared pieces of ``python -m benchmarks``: timing, result rows, machine description."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Row:
    """One measured figure: the median of ``samples`` (one per repeat), in ``unit``.

    For throughputs (``unit`` ending in ``/s``) ``agents`` is the number of agents (vehicles)
    stepped per env-step and ``substeps`` the physics sub-steps per env-step, so
    ``agent_steps = median * agents`` and ``agent_substeps = agent_steps * substeps``.
    """

    section: str
    name: str
    size: int | None
    unit: str
    samples: list[float]
    agents: int | None = None
    substeps: int | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def lo(self) -> float:
        return min(self.samples)

    @property
    def hi(self) -> float:
        return max(self.samples)

    @property
    def agent_steps(self) -> float | None:
        return None if self.agents is None else self.median * self.agents

    @property
    def agent_substeps(self) -> float | None:
        if self.agents is None or self.substeps is None:
            return None
        return self.median * self.agents * self.substeps

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            median=self.median,
            min=self.lo,
            max=self.hi,
            agent_steps_per_s=self.agent_steps,
            agent_substeps_per_s=self.agent_substeps,
        )
        return d


@dataclass
class Missing:
    """A benchmark that could not run (a peer not installed, say)."""

    section: str
    name: str
    size: int | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def steps_for(per_step_s: float, target_s: float, lo: int, hi: int) -> int:
    """How many steps make one repeat last about ``target_s`` seconds."""
    if per_step_s <= 0:
        return hi
    return int(min(hi, max(lo, round(target_s / per_step_s))))


def without_log_folder(model: Any) -> Any:
    """``model`` (stable-baselines3) with a logger that writes nothing: without one its
    ``learn`` makes a new ``SB3-<time>`` folder in the system's temp directory (it has no
    tensorboard folder) that nothing is written to."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def time_once(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compiled_for() -> str:
    """The CPU that numba compiles the engine's kernels for (its ``CPU_NAME`` setting,
    ``NUMBA_CPU_NAME``, or LLVM's name of the host's, e.g. ``znver4``): the same "model
    name" can hide processors with different vector units, and the figures depend on
    which."""
    import numba
    from llvmlite import binding

    return numba.config.CPU_NAME or binding.get_host_cpu_name()


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "compiled_for": compiled_for(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "load_average_1_5_15min": load,
        "python": platform.python_version(),
        "threads": {
            var: os.environ.get(var)
            for var in (
                "OMP_NUM_THREADS",
                "MKL_NUM_THREADS",
                "OPENBLAS_NUM_THREADS",
                "NUMBA_NUM_THREADS",
            )
        },
    }


def versions() -> dict[str, str | None]:
    names = (
        "steer-env",
        "numpy",
        "scipy",
        "numba",
        "gymnasium",
        "stable-baselines3",
        "torch",
        "torchrl",
        "tensordict",
        "ray",
        "mpe2",
        "pettingzoo",
        "vmas",
        "supersuit",
    )
    return {name: version(name) for name in names}
