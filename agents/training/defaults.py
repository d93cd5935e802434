"""Every task- and algorithm-dependent default of a training run, in one table.

:data:`TRAINING_DEFAULTS` is keyed ``(trainer, task)``: the trainer is ``ppo`` or ``sac``
(stable-baselines3) or ``rllib-ppo`` (PPO on RLlib), the task its short name (``pursuit``,
``evasion``, ``team_pursuit``). Each entry is the run's budget, its number of envs stepped
together and the algorithm's hyperparameters. The defaults that depend on neither are the
field defaults of ``train.py``'s ``Args``.

Imports no torch, SB3 or ray.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agents.evaluation.policy_base import ENV_SHORT, UsageError
from steer_env.tasks import REGISTRY, training
from steer_env.tasks.training import TRAINERS

# The shared hyperparameter sets, where the tasks' tables take them from (kept names).
SB3_PPO = training.SB3_PPO
SB3_SAC = training.SB3_SAC
RLLIB_PPO = training.RLLIB_PPO
#: RLlib PPO on the team task (its registry entry's): fragments longer than its episode.
RLLIB_TEAM_PPO: Mapping[str, Any] = REGISTRY["team_pursuit"].training["rllib-ppo"][
    "hyperparameters"
]


@dataclass(frozen=True)
class TrainingDefaults:
    """The defaults of one trainer on one task."""

    timesteps: int
    """Training budget of a new run (``--timesteps``)."""
    n_envs: int
    """Envs stepped together: SB3's ``--n-envs``; RLlib's ``--envs-per-runner``."""
    hyperparameters: Mapping[str, Any]
    """The algorithm's settings (SB3 adapts PPO's batch and SAC's buffer to the run:
    :func:`agents.training.sb3.hyperparameters`)."""
    curriculum: tuple[Mapping[str, Any], ...] = ()
    """Configuration stages before the task's own, as fractions of the budget
    (:func:`steer_env.tasks.training.defaults`; :func:`agents.training.sb3.curriculum`)."""
    config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Configuration values of the training envs in place of the trainer's derived ones
    (``shaping_gamma``; :func:`steer_env.tasks.training.defaults`)."""


class DefaultsTable(Mapping):
    """A live, read-only view ``(trainer, task) -> TrainingDefaults`` of the ``training``
    field of every task of the registry: a task registered later is in it too."""

    def _items(self) -> dict[tuple[str, str], TrainingDefaults]:
        return {
            (trainer, name): TrainingDefaults(**task.training[trainer])
            for trainer in TRAINERS
            for name, task in REGISTRY.items()
            if trainer in task.training
        }

    def __getitem__(self, key: tuple[str, str]) -> TrainingDefaults:
        trainer, name = key
        task = REGISTRY.get(name)
        if task is None or trainer not in task.training:
            raise KeyError(key)
        return TrainingDefaults(**task.training[trainer])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._items())})"


#: Every task's defaults per trainer, read from the registry entries' ``training`` tables.
TRAINING_DEFAULTS: Mapping[tuple[str, str], TrainingDefaults] = DefaultsTable()


def training_defaults(trainer: str, env: str) -> TrainingDefaults:
    """The entry of ``trainer`` on the task ``env`` (its env id or short name)."""
    try:
        return TRAINING_DEFAULTS[(trainer, ENV_SHORT.get(env, env))]
    except KeyError:
        raise UsageError(f"no training defaults for {trainer} on {env}") from None


def described(attribute: str, trainers: tuple[str, ...]) -> str:
    """The table's ``attribute`` for ``trainers``, as ``--help`` states a default: ``ppo 16,
    sac 4`` when a trainer's tasks agree, else one value per task."""
    parts = []
    for trainer in trainers:
        values = {task: getattr(d, attribute) for (t, task), d in TRAINING_DEFAULTS.items()
                  if t == trainer}  # fmt: skip
        if len(set(values.values())) == 1:
            parts.append(f"{trainer} {next(iter(values.values())):,}")
        else:
            parts.append(f"{trainer} " + " / ".join(f"{v:,} {k}" for k, v in values.items()))
    return ", ".join(parts)
