"""One comparison and rendering stack: what differs between tasks comes from the task
(its ``metrics``), not from a branch on the kind of task."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agents.evaluation import compare, cross_play
from agents.rllib import training as rllib_training
from agents.training import sb3
from steer_env.tasks import REGISTRY
from steer_env.tasks.pursuit_evasion import PURSUIT

ROOT = Path(__file__).resolve().parents[1]


def test_every_layout_comes_from_the_task():
    for name, task in REGISTRY.items():
        layout = task.metrics.layout
        for env in (name, task.env_id):
            if env is None:
                continue
            assert compare.task_of(env) is task
            assert compare.comparison_of(env) is compare.LAYOUTS[layout]
            assert sb3.setup_of(env) is sb3.SETUPS[layout]
            assert rllib_training.setup_of(env) is rllib_training.SETUPS[layout]
    assert isinstance(compare.comparison_of("team_pursuit"), cross_play.CrossPlay)
    assert isinstance(compare.comparison_of(None), compare.AgentsTable)  # the default task


def test_a_new_task_gets_its_layout_and_labels_from_its_entry(monkeypatch):
    metrics = dataclasses.replace(PURSUIT.metrics, success_means="penned", time_means="time")
    herding = dataclasses.replace(
        PURSUIT, name="herding", env_id="steer_env/Herding-v0", metrics=metrics
    )
    monkeypatch.setitem(REGISTRY, "herding", herding)
    assert compare.comparison_of("herding") is compare.LAYOUTS["agents"]
    assert compare.comparison_of("steer_env/Herding-v0") is compare.LAYOUTS["agents"]
    labels = {**metrics.labels, "rate": "penning"}
    monkeypatch.setitem(
        REGISTRY,
        "herding",
        dataclasses.replace(
            herding,
            metrics=metrics.__class__(
                metrics.layout, "penned", "time to pen", metrics.goal, labels
            ),
        ),
    )
    agent = {
        "label": "learned",
        "success_rate": 0.5,
        "success_ci95": [0.2, 0.8],
        "restricted_mean_time_s": 3.0,
        "mean_time_captured_s": 2.0,
        "median_time_s": 2.5,
    }
    summary = {
        "env_id": "steer_env/Herding-v0",
        "episodes": 4,
        "horizon_s": 10.0,
        "time_means": "time to pen",
        "agents": {"learned": agent},
        "paired_vs_learned": {},
        "goal": {},
    }
    table = compare.format_table(summary)
    assert "| agent | penning rate [95% CI] | mean time to pen (s)* |" in table


def test_the_summary_reads_the_task_metrics():
    results = {
        name: compare.play_episodes(
            "steer_env/Evasion-v0",
            lambda env, seed: compare.make_scripted("classic", env, seed=seed),
            8,
            5,
        )
        for name in ("classic",)
    }
    summary = compare.summarize(results, "steer_env/Evasion-v0", 0.1, 100)
    metrics = REGISTRY["evasion"].metrics
    assert (summary["success_means"], summary["time_means"]) == (
        metrics.success_means,
        metrics.time_means,
    )


def test_old_predicates_still_work_with_a_warning():
    import agents.evaluation.team as old_team
    import agents.rllib.team as rllib_team
    import agents.team as first_release_team

    with pytest.warns(DeprecationWarning, match=r"is_team_env is deprecated.*comparison_of"):
        assert old_team.is_team_env("team_pursuit") and not old_team.is_team_env("pursuit")
    with pytest.warns(DeprecationWarning, match=r"agents.team.is_team_env is deprecated"):
        assert first_release_team.is_team_env("team_pursuit")
    with pytest.warns(DeprecationWarning, match=r"is_team_task is deprecated.*setup_of"):
        assert rllib_team.is_team_task("team_pursuit") and not rllib_team.is_team_task("pursuit")


def test_no_command_branches_on_the_kind_of_task():
    # The old predicates are only kept as deprecated names (strings), never called.
    calls = re.compile(r"\bis_team\w*\s*\(|\bis_team\w*\s*=")
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in [ROOT / "train.py", *sorted((ROOT / "agents").rglob("*.py"))]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if calls.search(line)
    ]
    assert not found, found
