"""Training defaults belong to the task: each registry entry brings its table, and the
trainers read it from there."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from agents.training.defaults import TRAINING_DEFAULTS, TrainingDefaults, training_defaults
from steer_env.tasks import REGISTRY
from steer_env.tasks.pursuit_evasion import EVASION_PPO, PURSUIT, PURSUIT_PPO
from steer_env.tasks.training import RLLIB_PPO, SB3_PPO, SB3_SAC, TRAINERS, defaults, table


def test_every_task_brings_defaults_for_every_trainer():
    for name, task in REGISTRY.items():
        assert set(task.training) == set(TRAINERS), name
        for trainer, entry in task.training.items():
            assert set(entry) == {"timesteps", "n_envs", "hyperparameters"}
            assert TRAINING_DEFAULTS[trainer, name] == TrainingDefaults(**entry)


def test_the_table_is_the_one_it_was():
    # The budgets and envs of the first release's three tables, unchanged but for PPO on
    # pursuit and evasion, which learn more per sample in fewer timesteps.
    expected = {
        ("ppo", "pursuit"): (229_376, 32, PURSUIT_PPO),
        ("ppo", "evasion"): (229_376, 32, EVASION_PPO),
        ("ppo", "team_pursuit"): (1_000_000, 16, SB3_PPO),
        ("sac", "pursuit"): (50_000, 4, SB3_SAC),
        ("sac", "evasion"): (50_000, 4, SB3_SAC),
        ("sac", "team_pursuit"): (50_000, 4, SB3_SAC),
        ("rllib-ppo", "pursuit"): (500_000, 32, RLLIB_PPO),
        ("rllib-ppo", "evasion"): (1_000_000, 32, RLLIB_PPO),
        ("rllib-ppo", "team_pursuit"): (
            1_000_000,
            8,
            {**RLLIB_PPO, "rollout_fragment_length": 256},
        ),
    }
    old = [key for key in TRAINING_DEFAULTS if key[1] in ("pursuit", "evasion", "team_pursuit")]
    assert old == list(expected)
    for key, (timesteps, n_envs, hp) in expected.items():
        assert TRAINING_DEFAULTS[key] == TrainingDefaults(timesteps, n_envs, hp)
    assert training_defaults("ppo", "steer_env/Pursuit-v0").timesteps == 229_376
    assert {k: PURSUIT_PPO[k] for k in ("n_steps", "n_epochs", "learning_rate")} == {
        "n_steps": 128,
        "n_epochs": 8,
        "learning_rate": 1e-3,
    }


def test_a_new_task_brings_its_defaults_with_it(monkeypatch):
    herding = dataclasses.replace(
        PURSUIT,
        name="herding",
        env_id="steer_env/Herding-v0",
        training=table(ppo=defaults(123, 3, {**SB3_PPO, "n_steps": 64})),
    )
    monkeypatch.setitem(REGISTRY, "herding", herding)
    assert TRAINING_DEFAULTS["ppo", "herding"] == TrainingDefaults(
        123, 3, {**SB3_PPO, "n_steps": 64}
    )
    assert ("sac", "herding") not in TRAINING_DEFAULTS


def test_the_tasks_import_no_trainer():
    code = (
        "import sys, steer_env.tasks, steer_env.tasks.training; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'agents', 'stable_baselines3', 'ray', 'torch'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
