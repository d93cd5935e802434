"""Compile the engine ahead of first use: ``python -m steer_env.warmup``.

numba compiles steer-env's kernels the first time they run and keeps the machine code in
its on-disk cache (:mod:`steer_env.core.jit`: ``NUMBA_CACHE_DIR`` when set, else
``__pycache__`` beside the sources). A new virtual environment, container or Ray node
therefore pays the compile in its first ``step``; later processes load the cache. This
module pays it ahead, where the package is installed:

.. code-block:: bash

    python -m steer_env.warmup                    # every task and the numpy library
    python -m steer_env.warmup --tasks pursuit    # one task's forms only
    RUN python -m steer_env.warmup                # a Dockerfile, after pip install

or in each Ray worker before it samples: ``ray.init(runtime_env={
"worker_process_setup_hook": "steer_env.warmup.warm"})`` (``train.py --framework rllib``
warms its env runners itself).

What runs: every form of each registered task, one reset and one step each (the
Gymnasium env and its ``vector_entry_point``; the PettingZoo ``parallel_env`` and its
native ``vector_env``), then each scene of the behavior gallery for two steps (every
steering behavior, the physics, the neighbour search and flocking, through the numpy
API). A form already in the cache loads in well under a second. Each env's step is compiled
for the behaviours of its scripted strategies, so each task is warmed with every strategy
registered for its scripted roles by name (:func:`named_strategies`); an env made with a
``Strategy`` of other behaviours compiles its own step on first use.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from steer_env import cli

PROG = "python -m steer_env.warmup"
#: The name of the numpy library's entry in :func:`targets`.
LIBRARY = "library"


def named_strategies(task: Any) -> list[dict[str, Any]]:
    """The keyword arguments of ``task``'s envs that give its scripted vehicles each
    strategy registered for their role (:data:`steer_env.tasks.STRATEGIES`), the defaults
    first: ``opponent_strategy`` of a single-agent task; ``learned`` with
    ``pursuer_strategy`` or ``evader_strategy`` of a team task (and ``learned="both"``,
    nobody scripted)."""
    from steer_env.tasks import STRATEGIES

    fields = {f.name for f in dataclasses.fields(task.default_config)}
    variants: list[dict[str, Any]] = [{}]
    if "opponent_strategy" in fields:
        variants += [{"opponent_strategy": name} for name in STRATEGIES[task.opponent_team]]
    if "learned" in fields:
        for role, learned in (("pursuer", "evaders"), ("evader", "pursuers")):
            if f"{role}_strategy" in fields:
                variants += [
                    {"learned": learned, f"{role}_strategy": name} for name in STRATEGIES[role]
                ]
        variants.append({"learned": "both"})
    return variants


def _single_forms(env_id: str, kwargs: dict[str, Any]) -> None:
    import gymnasium as gym

    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    env.close()
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    venv.reset(seed=0)
    venv.step(np.zeros(venv.action_space.shape, dtype=np.float32))
    venv.close()


def _team_forms(env_module: str, kwargs: dict[str, Any]) -> None:
    module = importlib.import_module(env_module)
    env = module.parallel_env(**kwargs)
    env.reset(seed=0)
    env.step({agent: np.zeros(2, dtype=np.float32) for agent in env.agents})
    env.close()
    venv = module.vector_env(2, **kwargs)
    venv.reset(seed=0)
    venv.step(np.zeros((venv.num_envs, venv.n_agents, 2)))
    venv.close()


def _has_pettingzoo() -> bool:
    try:
        import pettingzoo  # noqa: F401
    except ImportError:
        return False
    return True


def _library() -> None:
    from steer_env.demos.gallery import SCENES

    for make in SCENES.values():
        scene = make(np.random.default_rng(0))
        scene.step()
        scene.step()


def first_step(name: str) -> float:
    """Seconds to make task ``name``'s default env (its Gymnasium env, else its PettingZoo
    ``parallel_env``), reset it and step it once: what a new process pays before its first
    result (compiling what numba's cache lacks). ``ValueError`` naming the tasks for an
    unknown one."""
    from steer_env.tasks import REGISTRY

    if name not in REGISTRY:
        raise ValueError(f"unknown task {name!r}: use {', '.join(REGISTRY)}")
    task = REGISTRY[name]
    t0 = time.perf_counter()
    if task.env_id is not None:
        import gymnasium as gym

        env = gym.make(task.env_id)
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    else:
        env = importlib.import_module(task.env_module).parallel_env()
        env.reset(seed=0)
        env.step({agent: np.zeros(2, dtype=np.float32) for agent in env.agents})
    seconds = time.perf_counter() - t0
    env.close()
    return seconds


def targets() -> dict[str, Callable[[], None]]:
    """What :func:`warm` can run, by name: each registered task (all its forms; the
    PettingZoo ones where PettingZoo is installed), then :data:`LIBRARY`."""
    from steer_env.tasks import REGISTRY

    out: dict[str, Callable[[], None]] = {}
    for name, task in REGISTRY.items():

        def run(task=task) -> None:
            # A PettingZoo form is warmed only where PettingZoo is installed (the
            # ``multiagent`` extra): without it nobody can make that form.
            team_forms = task.env_module is not None and _has_pettingzoo()
            for kwargs in named_strategies(task):
                if task.env_id is not None:
                    _single_forms(task.env_id, kwargs)
                if team_forms:
                    _team_forms(task.env_module, kwargs)

        out[name] = run
    out[LIBRARY] = _library
    return out


def warm(
    names: Iterable[str] | None = None, report: Callable[[str, float], None] | None = None
) -> dict[str, float]:
    """Run the :func:`targets` named (default: all), compiling what the cache lacks; the
    seconds each took, by name. ``report(name, seconds)`` is called after each.
    ``ValueError`` naming the accepted names for an unknown one."""
    available = targets()
    chosen = list(available) if names is None else list(names)
    unknown = [name for name in chosen if name not in available]
    if unknown:
        raise ValueError(f"unknown warm-up target {unknown[0]!r}: use {', '.join(available)}")
    seconds = {}
    for name in chosen:
        t0 = time.perf_counter()
        available[name]()
        seconds[name] = time.perf_counter() - t0
        if report is not None:
            report(name, seconds[name])
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = cli.OneLineParser(
        prog=PROG,
        description="Compile steer-env's engine into numba's on-disk cache ahead of first "
        "use: every registered task's env forms and the numpy library.",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        metavar="NAME",
        default=None,
        help=f"what to warm (default all: {', '.join(targets())})",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        warm(args.tasks, lambda name, s: print(f"{name}: {s:.1f} s", flush=True))
    except ValueError as exc:
        return cli.fail(PROG, exc, 2)
    print(f"warm in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
