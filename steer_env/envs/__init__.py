"""Gymnasium front ends of the registered tasks: ``steer_env/Pursuit-v0``,
``steer_env/Evasion-v0``, ``steer_env/Herding-v0`` and ``steer_env/Crowd-v0`` (single env,
native vector env),
registered from
:data:`steer_env.tasks.TASKS`."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from steer_env.envs.crowd import CrowdEnv
from steer_env.envs.evasion import EvasionEnv
from steer_env.envs.herding import HerdingEnv
from steer_env.envs.pursuit import PursuitEnv
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

__all__ = [
    "ENV_IDS",
    "CrowdEnv",
    "EvasionEnv",
    "HerdingEnv",
    "PursuitEnv",
    "TaskConfig",
    "register_envs",
]
