"""Deprecated: moved to :mod:`agents.rllib.team` (its defaults to
:data:`agents.training.defaults.TRAINING_DEFAULTS`). Its names still resolve here for one
release, with a ``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from typing import Any

from agents.deprecation import forward_moved_names

TABLE = "agents.training.defaults.TRAINING_DEFAULTS"


def team_entry() -> Any:
    from agents.training.defaults import training_defaults

    return training_defaults("rllib-ppo", "team_pursuit")


def team_overrides() -> dict[str, Any]:
    """The team task's RLlib settings that differ from the single-agent tasks'."""
    from agents.training.defaults import RLLIB_PPO

    return {k: v for k, v in team_entry().hyperparameters.items() if RLLIB_PPO.get(k) != v}


__getattr__ = forward_moved_names(
    "agents.rllib_team",
    "agents.rllib.team",
    replaced={
        "DEFAULT_LEARNED": ("train.py's Args.learned", lambda: "pursuers"),
        "DEFAULT_TIMESTEPS": (TABLE, lambda: team_entry().timesteps),
        "DEFAULT_ENVS_PER_RUNNER": (TABLE, lambda: team_entry().n_envs),
        "HYPERPARAMS": (TABLE, team_overrides),
    },
)
