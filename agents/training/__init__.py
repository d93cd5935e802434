"""Training of ``train.py``: the defaults, options and run folder, the run lifecycle both
frameworks share, and the SB3 pieces.

* :mod:`~agents.training.defaults` -- every task- and algorithm-dependent default, one
  table.
* :mod:`~agents.training.options` -- the command line of ``train.py``'s ``Args``, a new or
  resumed run's options.
* :mod:`~agents.training.run` -- run folder, ``config.json``, seeds, interruption, the
  final comparison, and :class:`~agents.training.run.TrainingRun`, a session's lifecycle.
* :mod:`~agents.training.sb3` -- hyperparameters, envs, checkpoints and callbacks of SB3.

This package was the module ``agents.training``; its names still resolve here for one
release, with a ``DeprecationWarning`` naming the module that holds them now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.deprecation import forward_moved_names

TABLE = "agents.training.defaults.TRAINING_DEFAULTS"


def sb3_table(attribute: str) -> dict[tuple[str, str], Any]:
    """The old ``{(algo, task): value}`` view of :data:`TABLE`'s SB3 entries."""
    from agents.training.defaults import TRAINING_DEFAULTS

    return {k: getattr(d, attribute) for k, d in TRAINING_DEFAULTS.items() if k[0] != "rllib-ppo"}


def old_hyperparameters() -> Callable[[str, int, int], dict[str, Any]]:
    """``hyperparameters(algo, n_envs, timesteps)`` as it was: SB3's settings are the same
    on every task."""
    from agents.training.sb3 import hyperparameters

    return lambda algo, n_envs, timesteps: hyperparameters(algo, "pursuit", n_envs, timesteps)


def first_per_algo(column: str) -> list[tuple[tuple[str, str], Any]]:
    """The ``(algo, task)`` entries of an SB3 table column, the first task's last, so a
    dict built from them keeps the first task's value per algorithm."""
    return list(reversed(sb3_table(column).items()))


def old_default_timesteps() -> Callable[[str, str], int]:
    from agents.training.defaults import training_defaults

    return lambda algo, env_id: training_defaults(algo, env_id).timesteps


__getattr__ = forward_moved_names(
    "agents.training",
    "agents.training.run",
    "agents.training.sb3",
    "agents.evaluation.policies",
    replaced={
        "DEFAULT_TIMESTEPS": (TABLE, lambda: sb3_table("timesteps")),
        # One value per algorithm, as the first release had: the first task's (pursuit).
        "DEFAULT_N_ENVS": (TABLE, lambda: {a: n for (a, _), n in first_per_algo("n_envs")}),
        "HYPERPARAMS": (
            TABLE,
            lambda: {a: dict(h) for (a, _), h in first_per_algo("hyperparameters")},
        ),
        "default_timesteps": (TABLE, old_default_timesteps),
        "hyperparameters": ("agents.training.sb3.hyperparameters", old_hyperparameters),
    },
)
