"""Training defaults a task brings with it: budgets, envs stepped together and the
algorithms' hyperparameters, per trainer.

A task's ``training`` field maps a trainer (``"ppo"``, ``"sac"``: stable-baselines3;
``"rllib-ppo"``: PPO on RLlib) to :func:`defaults` of it. The hyperparameter sets below are
shared by the built-in tasks; a new task may use them or bring its own. Plain data: the
trainers themselves (``agents.training``, ``agents.rllib``) read it, so this module imports
neither SB3 nor ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    # SB3's Adam settings (eps 1e-5), with torch's fused Adam: the same update in one
    # kernel per step instead of a loop over the parameters (about a tenth of a PPO
    # update of these small networks on a CPU).
    "policy_kwargs": {"net_arch": [64, 64], "optimizer_kwargs": {"eps": 1e-5, "fused": True}},
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

#: The trainers a task gives defaults for, in the order ``--help`` lists them.
TRAINERS = ("ppo", "sac", "rllib-ppo")


def defaults(
    timesteps: int,
    n_envs: int,
    hyperparameters: Mapping[str, Any],
    curriculum: tuple[Mapping[str, Any], ...] = (),
    config: Mapping[str, Any] | None = None,
) -> Mapping[str, Any]:
    """One trainer's entry of a task's ``training`` table: the budget of a new run, the envs
    stepped together (SB3's ``--n-envs``, RLlib's ``--envs-per-runner``) and the
    algorithm's hyperparameters. Plain dicts: an env holds its task, and envs are pickled
    (vector env workers, deepcopy).

    ``curriculum``: stages of configuration the training envs play before the task's own
    configuration, each ``{"until": fraction, "config": {key: value}}`` with ``fraction`` of
    the run's budget in (0, 1), increasing from stage to stage (:func:`check_curriculum`).
    The periodic evaluation and the final comparison always play the task's configuration.
    The stable-baselines3 trainers (``train.py``) read it.

    ``config``: configuration values of the training envs in place of those the trainer
    derives: ``train.py`` sets ``shaping_gamma`` to the algorithm's ``gamma`` (potential-based
    shaping then leaves the optimal policy unchanged) unless the task gives its own here or
    the run sets one with ``--set``."""
    return {
        "timesteps": int(timesteps),
        "n_envs": int(n_envs),
        "hyperparameters": hyperparameters,
        "curriculum": check_curriculum(curriculum),
        "config": dict(config or {}),
    }


def check_curriculum(stages: Any) -> tuple[Mapping[str, Any], ...]:
    """``stages`` of a curriculum (:func:`defaults`) as a tuple; ``ValueError`` naming the
    stage when one is not ``{"until": fraction, "config": {...}}`` with fractions in (0, 1)
    increasing from stage to stage."""
    checked, last = [], 0.0
    for i, stage in enumerate(stages):
        if not isinstance(stage, Mapping) or set(stage) != {"until", "config"}:
            raise ValueError(f"curriculum stage {i}: expected {{'until': fraction, 'config': "
                             f"{{...}}}}, got {stage!r}")  # fmt: skip
        until = stage["until"]
        if not isinstance(until, (int, float)) or not last < until < 1.0:
            raise ValueError(
                f"curriculum stage {i}: until must be a fraction of the budget in "
                f"({last:g}, 1), got {until!r}"
            )
        if not isinstance(stage["config"], Mapping) or not stage["config"]:
            raise ValueError(f"curriculum stage {i}: config must be a non-empty mapping")
        checked.append({"until": float(until), "config": dict(stage["config"])})
        last = float(until)
    return tuple(checked)


def table(**trainers: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    """A task's ``training`` field from keyword arguments ``ppo=``, ``sac=``,
    ``rllib_ppo=`` (each a :func:`defaults`), keyed by trainer name."""
    return {name.replace("_", "-"): entry for name, entry in trainers.items()}
