"""Training defaults belong to the task: each registry entry brings its table, and the
trainers read it from there."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from agents.training.defaults import TRAINING_DEFAULTS, TrainingDefaults, training_defaults
from steer_env.tasks import REGISTRY
from steer_env.tasks.pursuit_evasion import EVASION_PPO, PURSUIT, PURSUIT_PPO
from steer_env.tasks.training import (
    RLLIB_PPO,
    SB3_PPO,
    SB3_SAC,
    TRAINERS,
    check_curriculum,
    defaults,
    table,
)


def test_every_task_brings_defaults_for_every_trainer():
    for name, task in REGISTRY.items():
        assert set(task.training) == set(TRAINERS), name
        for trainer, entry in task.training.items():
            assert set(entry) == {"timesteps", "n_envs", "hyperparameters", "curriculum", "config"}
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


def test_a_curriculum_is_stages_of_the_budget_before_the_tasks_configuration():
    from agents.training.sb3 import curriculum, describe_curriculum, stages_from

    stages = check_curriculum(
        [{"until": 0.25, "config": {"a": 1}}, {"until": 0.5, "config": {"a": 2, "b": 3}}]
    )
    resolved = curriculum(stages, 1000, {})
    assert resolved == [
        {"until": 250, "config": {"a": 1}},
        {"until": 500, "config": {"a": 2, "b": 3}},
    ]
    opts = {"timesteps": 1000, "curriculum": resolved}
    assert stages_from(opts, 0) == [(250, {"a": 1}), (500, {"a": 2, "b": 3}), (1000, {})]
    # A run resumed mid-stage plays that stage's configuration until its end.
    assert stages_from(opts, 300) == [(500, {"a": 2, "b": 3}), (1000, {})]
    assert stages_from(opts, 500) == [(1000, {})]
    assert stages_from(opts, 1000) == []
    # Trained further (--resume --timesteps): the stages keep their timesteps.
    assert stages_from({**opts, "timesteps": 4000}, 0)[-1] == (4000, {})
    # A budget cut below a stage's end ends the curriculum there.
    assert stages_from({**opts, "timesteps": 400}, 0) == [(250, {"a": 1}), (400, {})]
    # A value the run sets itself is its own throughout: it leaves every stage.
    assert curriculum(stages, 1000, {"a": 7}) == [{"until": 500, "config": {"b": 3}}]
    assert curriculum(stages, 1000, {"a": 7, "b": 0}) == []
    assert stages_from({"timesteps": 10}, 0) == [(10, {})]  # a run without one
    line = describe_curriculum(resolved)
    assert line == (
        "curriculum: a=1 until 250 timesteps, then a=2 b=3 until 500 timesteps, then the "
        "task's configuration"
    )


@pytest.mark.parametrize(
    ("stages", "text"),
    [
        ([{"until": 0.5}], "stage 0: expected"),
        ([{"until": 1.0, "config": {"a": 1}}], "stage 0: until must be a fraction"),
        ([{"until": 0.0, "config": {"a": 1}}], "stage 0: until must be a fraction"),
        (
            [{"until": 0.5, "config": {"a": 1}}, {"until": 0.5, "config": {"a": 2}}],
            "stage 1: until must be a fraction of the budget in (0.5, 1)",
        ),
        ([{"until": 0.5, "config": {}}], "stage 0: config must be a non-empty mapping"),
        (["half"], "stage 0: expected"),
    ],
)
def test_a_bad_curriculum_is_refused_naming_its_stage(stages, text):
    with pytest.raises(
        ValueError, match="curriculum " + text.replace("(", r"\(").replace(")", r"\)")
    ):
        defaults(1000, 1, SB3_PPO, stages)


def test_flocking_trains_half_its_budget_with_a_lighter_catch():
    from steer_env.tasks.flocking import FlockingConfig

    (stage,) = TRAINING_DEFAULTS["ppo", "flocking"].curriculum
    assert stage == {"until": 0.5, "config": {"caught_penalty": 2.0}}
    assert FlockingConfig().caught_penalty == 8.0
    assert TRAINING_DEFAULTS["rllib-ppo", "flocking"].curriculum == ()
    # Progress is paid per m covered, not discounted by the learner's gamma.
    for trainer in ("ppo", "sac"):
        assert TRAINING_DEFAULTS[trainer, "flocking"].config == {"shaping_gamma": 1.0}
    assert TRAINING_DEFAULTS["ppo", "pursuit"].config == {}
