"""Gymnasium environments: ``steer_env/Pursuit-v0`` and ``steer_env/Evasion-v0``."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from steer_env.envs.config import TaskConfig
from steer_env.envs.evasion import EvasionEnv
from steer_env.envs.pursuit import PursuitEnv

ENV_IDS = ("steer_env/Pursuit-v0", "steer_env/Evasion-v0")


def register_envs() -> None:
    """Register both environments with Gymnasium (idempotent)."""
    for env_id, cls, vector in (
        ("steer_env/Pursuit-v0", PursuitEnv, "make_pursuit_vector"),
        ("steer_env/Evasion-v0", EvasionEnv, "make_evasion_vector"),
    ):
        if env_id in registry:
            continue
        register(
            id=env_id,
            entry_point=f"{cls.__module__}:{cls.__name__}",
            vector_entry_point=f"steer_env.envs.vector:{vector}",
            # The env enforces its own time limit (it needs it for the escape reward); the
            # registered limit is the same number so env.spec tells the truth.
            max_episode_steps=cls.default_config.time_limit,
        )


register_envs()

__all__ = ["ENV_IDS", "EvasionEnv", "PursuitEnv", "TaskConfig", "register_envs"]
