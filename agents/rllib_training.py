"""Deprecated: moved to :mod:`agents.rllib.training` (the ``PPOConfig`` to
:mod:`agents.rllib.config`, Ray to :mod:`agents.rllib.cluster`, the defaults to
:data:`agents.training.defaults.TRAINING_DEFAULTS`). Its names still resolve here for one
release, with a ``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from typing import Any

from agents.deprecation import forward_moved_names

TABLE = "agents.training.defaults.TRAINING_DEFAULTS"


def rllib_entry(task: str) -> Any:
    from agents.training.defaults import training_defaults

    return training_defaults("rllib-ppo", task)


__getattr__ = forward_moved_names(
    "agents.rllib_training",
    "agents.rllib.training",
    "agents.rllib.config",
    "agents.rllib.cluster",
    replaced={
        "DEFAULT_ENV_RUNNERS": ("train.py's Args.num_env_runners", lambda: 1),
        "DEFAULT_ENVS_PER_RUNNER": (TABLE, lambda: rllib_entry("pursuit").n_envs),
        "DEFAULT_TIMESTEPS": (
            TABLE,
            lambda: {
                f"steer_env/{name.capitalize()}-v0": rllib_entry(name).timesteps
                for name in ("pursuit", "evasion")
            },
        ),
        "HYPERPARAMS": (TABLE, lambda: dict(rllib_entry("pursuit").hyperparameters)),
    },
)
