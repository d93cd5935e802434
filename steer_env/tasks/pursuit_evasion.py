"""Pursuit-v0 and Evasion-v0: their classic strategies and registry entries.

The scripted strategies are Reynolds' behaviours combined by Buckland's prioritized
truncated running sum, all parameters from the task config:

* **classic evader**: wall avoidance, evade the nearest pursuer (with prediction, ignored
  beyond ``threat_range``) and, only while unthreatened, wander;
* **classic pursuer**: wall avoidance, separation from the other pursuers, pursuit of the
  nearest evader with prediction;
* **naive pursuer**: wall avoidance, then seek the nearest evader's current position;
* **hiding evader**: wall avoidance, Buckland's hide from the nearest pursuer within
  ``threat_range`` (behind the obstacle whose hiding spot is nearest; evade without
  obstacles) and, while unthreatened, wander.

With obstacles in the arena, each adds obstacle avoidance (Buckland's detection box) right
after wall avoidance.

The envs' scripted opponents run these strategies, and so do the baselines of
:mod:`agents.evaluation.scripted` (from their observations): one definition for both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steer_env.engine.strategy import Behavior, Strategy
from steer_env.tasks import STRATEGIES, Metrics, Task, register, training
from steer_env.tasks.config import TaskConfig, obstacle_avoidance


def unthreatened_wander(cfg: TaskConfig) -> Behavior:
    """The evaders' wander, acting only while no pursuer is within ``threat_range``."""
    return Behavior(
        "wander",
        cfg.wander_weight,
        wander_radius=cfg.wander_radius,
        wander_distance=cfg.wander_distance,
        wander_jitter=cfg.wander_jitter,
        active_beyond=cfg.threat_range,
    )


def classic_evader(cfg: TaskConfig) -> Strategy:
    """Wall avoidance, evade, and wander while unthreatened (prioritized)."""
    return Strategy(
        [
            Behavior("wall_avoidance", cfg.wall_weight, feeler_length=cfg.feeler_length),
            *obstacle_avoidance(cfg),
            Behavior(
                "evade",
                cfg.evade_weight,
                threat_range=cfg.threat_range,
                prediction_time=cfg.max_prediction_time,
            ),
            unthreatened_wander(cfg),
        ],
        combination="prioritized",
        name="classic evader",
    )


def hiding_evader(cfg: TaskConfig) -> Strategy:
    """Wall avoidance, obstacle avoidance, then Buckland's hide from the nearest pursuer
    within ``threat_range`` (arrive at the nearest spot behind an obstacle as seen from
    it; evade it in an empty arena), and wander while unthreatened (prioritized)."""
    return Strategy(
        [
            Behavior("wall_avoidance", cfg.wall_weight, feeler_length=cfg.feeler_length),
            *obstacle_avoidance(cfg),
            Behavior("hide", cfg.evade_weight, active_within=cfg.threat_range),
            unthreatened_wander(cfg),
        ],
        combination="prioritized",
        name="hiding evader",
    )


def classic_pursuer(cfg: TaskConfig) -> Strategy:
    """Wall avoidance, separation from teammates, pursuit with prediction (prioritized)."""
    return Strategy(
        [
            Behavior("wall_avoidance", cfg.wall_weight, feeler_length=cfg.feeler_length),
            *obstacle_avoidance(cfg),
            Behavior(
                "separation",
                cfg.separation_weight,
                target="teammates",
                neighbor_radius=cfg.separation_radius,
            ),
            Behavior("pursuit", cfg.pursuit_weight, prediction_time=cfg.max_prediction_time),
        ],
        combination="prioritized",
        name="classic pursuer",
    )


def naive_pursuer(cfg: TaskConfig) -> Strategy:
    """Wall avoidance, then seek the nearest evader's current position (no prediction)."""
    return Strategy(
        [
            Behavior("wall_avoidance", cfg.wall_weight, feeler_length=cfg.feeler_length),
            *obstacle_avoidance(cfg),
            Behavior("seek", cfg.pursuit_weight),
        ],
        combination="prioritized",
        name="naive pursuer",
    )


STRATEGIES["evader"].update(classic=classic_evader, hide=hiding_evader)
STRATEGIES["pursuer"].update(classic=classic_pursuer, naive=naive_pursuer)

#: PPO for the default ``python train.py``: 32 envs x 128 steps per rollout (4,096
#: timesteps) and 8 epochs of 1,024-sample batches at a learning rate of 1e-3, so each
#: sample teaches more than with :data:`~steer_env.tasks.training.SB3_PPO` (5 epochs, 3e-4):
#: 56 rollouts (229,376 timesteps) bring the pursuer past 95% capture. Chosen by
#: ``python -m benchmarks.training --search`` (its table is on the performance page).
PURSUIT_PPO: Mapping[str, Any] = {
    **training.SB3_PPO,
    "n_steps": 128,
    "n_epochs": 8,
    "learning_rate": 1e-3,
}

#: PPO for ``python train.py --env evasion``: 32 envs x 128 steps per rollout and 10 epochs
#: of 2,048-sample batches at a learning rate of 1e-3, 56 rollouts (229,376 timesteps, the
#: pursuit default's budget). Chosen by ``python -m benchmarks.training --search --task
#: evasion``: the evader then survives about 92% of held-out episodes where SB3's
#: 16 x 256-step, 5-epoch, 3e-4 settings reach 77-90% in the same budget.
EVASION_PPO: Mapping[str, Any] = {
    **training.SB3_PPO,
    "n_steps": 128,
    "batch_size": 2048,
    "n_epochs": 10,
    "learning_rate": 1e-3,
}

PURSUIT = register(
    Task(
        name="pursuit",
        env_id="steer_env/Pursuit-v0",
        learned_team="pursuer",
        default_config=TaskConfig(n_opponents=1, opponent_max_force=10.0),
        opponent_strategy=classic_evader,
        baselines={"classic": classic_pursuer, "naive": naive_pursuer},
        success="capture",
        metrics=Metrics(
            "agents",
            success_means="capture",
            time_means="time to capture",
            goal={
                "criterion": "learned - classic: success CI above 0 and restricted mean time "
                "to capture CI below 0",
                "time_shorter": True,
            },
            labels={
                "rate": "capture",
                "achieved": "captured",
                "event": "captured",
                "no_event": "no capture",
                "curve": "fraction of evaders still free",
                "title": "Pursuit",
            },
        ),
        entry_point="steer_env.envs.pursuit:PursuitEnv",
        vector_entry_point="steer_env.envs.pursuit:make_pursuit_vector",
        env_module="steer_env.envs.pursuit_v0",
        # PPO here is the default run of ``python train.py`` (:data:`PURSUIT_PPO`; its
        # training seconds per seed: benchmarks/train_runs/pursuit_seed*.json).
        training=training.table(
            ppo=training.defaults(229_376, 32, PURSUIT_PPO),
            sac=training.defaults(50_000, 4, training.SB3_SAC),
            rllib_ppo=training.defaults(500_000, 32, training.RLLIB_PPO),
        ),
    )
)

EVASION = register(
    Task(
        name="evasion",
        env_id="steer_env/Evasion-v0",
        learned_team="evader",
        default_config=TaskConfig(n_opponents=2),
        opponent_strategy=classic_pursuer,
        baselines={"classic": classic_evader, "hide": hiding_evader},
        success="escape",
        metrics=Metrics(
            "agents",
            success_means="no capture by the time limit",
            time_means="survival time",
            goal={
                "criterion": "learned - classic: survival-rate CI above 0",
                "time_shorter": False,
            },
            labels={
                "rate": "survival",
                "achieved": "survived",
                "event": "caught",
                "no_event": "escaped",
                "curve": "fraction of episodes the evader survives",
                "title": "Evasion",
            },
        ),
        entry_point="steer_env.envs.evasion:EvasionEnv",
        vector_entry_point="steer_env.envs.evasion:make_evasion_vector",
        env_module="steer_env.envs.evasion_v0",
        training=training.table(
            ppo=training.defaults(229_376, 32, EVASION_PPO),
            sac=training.defaults(50_000, 4, training.SB3_SAC),
            rllib_ppo=training.defaults(1_000_000, 32, training.RLLIB_PPO),
        ),
    )
)
