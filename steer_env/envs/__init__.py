"""Gymnasium front ends of the registered tasks (single env, native vector env), registered
from :data:`steer_env.tasks.TASKS` under the ids of :data:`ENV_IDS`.

Every registered task's env class is an attribute of this package under its class name
(``from steer_env.envs import FlockingEnv``), read from the task's ``entry_point`` and
imported on first use, so a task added to the registry needs no line here."""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import load_env_creator, register, registry

from steer_env.tasks import TASKS, TaskConfig

ENV_IDS = tuple(task.env_id for task in TASKS.values())


def register_envs() -> None:
    """Register every single-agent task's env with Gymnasium (idempotent).

    No ``max_episode_steps`` is registered: the time limit is part of each task (the
    ``time_limit`` argument; reaching it ends the episode as a termination), and
    ``env.spec.max_episode_steps`` reports it. ``gym.make(id, max_episode_steps=N)`` adds
    Gymnasium's own ``TimeLimit(N)``, which truncates longer episodes."""
    for task in TASKS.values():
        if task.env_id in registry:
            continue
        register(
            id=task.env_id,
            entry_point=task.entry_point,
            vector_entry_point=task.vector_entry_point,
        )


register_envs()


def _env_classes() -> dict[str, str]:
    """Each registered task's env class name -> its ``entry_point`` (``module:Class``)."""
    return {task.entry_point.rpartition(":")[2]: task.entry_point for task in TASKS.values()}


def __getattr__(name: str) -> Any:
    """A registered task's env class by its class name, imported from its entry point."""
    entry_point = _env_classes().get(name)
    if entry_point is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = load_env_creator(entry_point)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_env_classes()))


__all__ = ["ENV_IDS", *sorted(_env_classes()), "TaskConfig", "register_envs"]
