"""Every task- and algorithm-dependent default of a training run, in one table.

:data:`TRAINING_DEFAULTS` is keyed ``(trainer, task)``: the trainer is ``ppo`` or ``sac``
(stable-baselines3) or ``rllib-ppo`` (PPO on RLlib), the task its short name (``pursuit``,
``evasion``, ``team_pursuit``). Each entry is the run's budget, its number of envs stepped
together and the algorithm's hyperparameters. The defaults that depend on neither are the
field defaults of ``train.py``'s ``Args``.

Imports no torch, SB3 or ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.evaluation.policy_base import ENV_SHORT, UsageError

#: stable-baselines3 PPO (constant learning rates, so resuming needs no schedule state).
SB3_PPO: Mapping[str, Any] = {
    "n_steps": 256,
    "batch_size": 1024,
    "n_epochs": 5,
    "learning_rate": 3e-4,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.0,
    "policy_kwargs": {"net_arch": [64, 64]},
}
#: stable-baselines3 SAC.
SB3_SAC: Mapping[str, Any] = {
    "learning_rate": 3e-4,
    "buffer_size": 1_000_000,  # capped at the training budget
    "batch_size": 256,
    "learning_starts": 1_000,
    "gamma": 0.99,
    "tau": 0.005,
    "train_freq": 1,
    "gradient_steps": 2,  # per step of the 4 envs: 1 update per 2 transitions
    # The rewards are small (shaping ~0.01 per step), so the default initial entropy
    # coefficient of 1 swamps them for tens of thousands of updates; start at 0.01.
    "ent_coef": "auto_0.01",
    "policy_kwargs": {"net_arch": [64, 64]},
}
#: RLlib PPO, close to the SB3 baseline's: 64x64 tanh MLPs with separate policy and value
#: nets, state-independent log std, no KL penalty, grad clip 0.5.
RLLIB_PPO: Mapping[str, Any] = {
    # Steps per sub-env per iteration: more than an episode (100 steps). The sub-envs start
    # together, so with shorter fragments every batch would hold one phase of the episodes
    # only (32 steps: the policy stalled at ~25% capture after 400k steps).
    "rollout_fragment_length": 128,
    "minibatch_size": 1024,
    "num_epochs": 5,
    "lr": 3e-4,
    "gamma": 0.99,
    "lambda_": 0.95,
    "clip_param": 0.2,
    "vf_clip_param": 10.0,
    "vf_loss_coeff": 0.5,
    "entropy_coeff": 0.0,
    "use_kl_loss": False,
    "grad_clip": 0.5,
    "fcnet_hiddens": [64, 64],
}
#: RLlib PPO on the team task: fragments longer than its 200-step episode.
RLLIB_TEAM_PPO: Mapping[str, Any] = {**RLLIB_PPO, "rollout_fragment_length": 256}


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


# PPO on Pursuit is the default run of ``python train.py`` and must finish, with the
# comparison, in under 5 minutes on 2 CPU cores. The team task's RLlib sub-envs are each a
# PettingZoo env (RLlib vectorizes multi-agent envs with a Python loop), so fewer of them.
TRAINING_DEFAULTS: dict[tuple[str, str], TrainingDefaults] = {
    ("ppo", "pursuit"): TrainingDefaults(300_000, 16, SB3_PPO),
    ("ppo", "evasion"): TrainingDefaults(500_000, 16, SB3_PPO),
    ("ppo", "team_pursuit"): TrainingDefaults(1_000_000, 16, SB3_PPO),
    ("sac", "pursuit"): TrainingDefaults(50_000, 4, SB3_SAC),
    ("sac", "evasion"): TrainingDefaults(50_000, 4, SB3_SAC),
    ("sac", "team_pursuit"): TrainingDefaults(50_000, 4, SB3_SAC),
    ("rllib-ppo", "pursuit"): TrainingDefaults(500_000, 32, RLLIB_PPO),
    ("rllib-ppo", "evasion"): TrainingDefaults(1_000_000, 32, RLLIB_PPO),
    ("rllib-ppo", "team_pursuit"): TrainingDefaults(1_000_000, 8, RLLIB_TEAM_PPO),
}


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
