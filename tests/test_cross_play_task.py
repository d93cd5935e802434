"""The cross-play layout reads everything about its task from the registry entry: a second
task with the layout (two pursuers against two evaders by default, its own words for the
roles, its scripted teams in another order) plays, tables and writes through the same code."""

import csv
import json
import warnings

import numpy as np
import pytest

from agents.evaluation import compare, cross_play, league, team_league
from agents.evaluation.cross_play import (
    Match,
    PolicyLoadError,
    UsageError,
    cross_play_task,
    format_team_table,
    learned_value,
    play_team_episodes,
    role_choice,
    run_team_comparison,
    sides,
)
from agents.evaluation.scripted import ScriptedPolicy
from steer_env.envs.parallel import TaskParallelEnv
from steer_env.tasks import REGISTRY, Metrics, Role, register
from steer_env.tasks.team_pursuit import LEARNED_VALUES, TeamConfig, TeamTask

NAME = "duo_pursuit"
ROLES = (
    Role(
        "pursuer",
        "hunters",
        side_word="hunters",
        sides_key="hunter_teams",
        strategy_key="pursuer_strategy",
        count_key="n_pursuers",
        caption="{} pack",
        learned_caption="learned pack",
    ),
    Role(
        "evader",
        "runners",
        side_word="runner",
        sides_key="runners",
        strategy_key="evader_strategy",
        count_key="n_evaders",
        caption="{} runner",
        learned_caption="learned runner",
    ),
)


@pytest.fixture
def duo():
    """A second cross-play task on the pursuit-evasion rules, registered for the test only
    (without a PettingZoo module of its own: the registry keeps modules unique)."""
    task = register(
        TeamTask(
            name=NAME,
            env_module=None,
            default_config=TeamConfig(
                n_pursuers=2, n_evaders=2, speed_ratio=0.9, capture_radius=2.0, time_limit=120
            ),
            baselines={"pursuer": ("cooperative", "reynolds"), "evader": ("flow",)},
            metrics=Metrics(
                "cross_play",
                success_means="both runners caught by the time limit",
                time_means="time to catch",
                labels={"rate": "catch", "title": "duo pursuit"},
            ),
            roles=ROLES,
            learned_values={
                (): "none",
                ("pursuer",): "pursuers",
                ("evader",): "evaders",
                ("pursuer", "evader"): "both",
            },
            training=REGISTRY["team_pursuit"].training,
        )
    )
    try:
        yield task
    finally:
        REGISTRY.pop(NAME)


def test_the_sides_and_words_come_from_the_entry(duo):
    assert cross_play_task(NAME) is duo
    assert NAME in cross_play.cross_play_names()
    rows = sides("pursuer", task=duo)
    assert [(r.name, r.side, r.label) for r in rows] == [
        ("cooperative", "cooperative", "cooperative hunters"),
        ("reynolds", "reynolds", "reynolds hunters"),
    ]
    [col] = sides("evader", {"mine": object()}, task=NAME)[1:]
    assert col.label == "mine (runners)"
    assert [c.label for c in sides("evader", task=NAME)] == ["flow runner"]
    assert cross_play.default_model_path(task=duo).name == f"{NAME}_pursuer_ppo.zip"
    assert cross_play.default_model_path("evader", duo).name == f"{NAME}_evader_ppo.zip"
    assert role_choice(duo) == ("learned", "pursuer_strategy", "evader_strategy")
    assert cross_play.team_slots({"learned": "evaders"}, duo) == 2
    assert cross_play.team_slots({"env": NAME, "learned": "pursuers"}) == 2
    policy = object()
    assert learned_value("reynolds", "flow", duo) == "none"
    assert learned_value(policy, "flow", duo) == "pursuers"
    assert learned_value("reynolds", policy, duo) == "evaders"
    assert learned_value(policy, policy, duo) == "both"
    # The task's defaults: two of each role in the batch it plays.
    match = Match("reynolds", "flow", 3, task=duo)
    assert match.venv.task is duo
    assert match.venv.batch.team.size == 4


def test_a_task_without_the_layout_is_refused_in_one_line(duo):
    with pytest.raises(UsageError, match="'pursuit' has no cross-play table: use team_pursuit"):
        cross_play_task("pursuit")
    for parser in (league.build_parser(), team_league.build_parser()):
        with pytest.raises(SystemExit):
            parser.parse_args(["--env", "herding"])
        assert parser.parse_args(["--env", NAME]).env == NAME
        assert parser.parse_args([]).env == "team_pursuit"


def test_a_model_is_of_the_task_its_metadata_names(duo):
    shipped = cross_play.default_model_path("pursuer", "team_pursuit")
    assert cross_play.model_task(shipped) is REGISTRY["team_pursuit"]
    with pytest.raises(PolicyLoadError, match=f"trained on team_pursuit, not {NAME}"):
        cross_play.load_team_policy(shipped, task=duo)


def play_one_by_one(task, policy, episodes, seed):
    """The episodes of ``policy`` (every pursuer) against the task's scripted evaders, each
    through the task's ParallelEnv from seed ``seed + k``: (captured, capture step)."""
    env = TaskParallelEnv(task=task, learned="pursuers")
    captured, steps = [], []
    for k in range(episodes):
        obs, infos = env.reset(seed=seed + k)
        while env.agents:
            names = list(obs)
            act, _ = policy.predict(np.stack([obs[a] for a in names]), deterministic=True)
            obs, _, _, _, infos = env.step(dict(zip(names, act, strict=True)))
        capture_steps = next(iter(infos.values()))["capture_steps"]
        caught = bool((capture_steps >= 0).all())
        captured.append(caught)
        steps.append(int(capture_steps.max()) if caught else -1)
    return np.array(captured), np.array(steps)


def test_play_team_episodes_equal_the_episodes_of_its_parallel_env(duo):
    """The pursuers of the second task, played from their observations by the cooperative
    strategy, in one batch of 8 environments and one episode at a time through the task's
    PettingZoo env: the same captures on the same steps."""
    policy = ScriptedPolicy(duo, "cooperative", role="pursuer")
    batched = play_team_episodes(policy, "flow", 8, 0, task=duo)
    captured, steps = play_one_by_one(duo, policy, 8, 0)
    np.testing.assert_array_equal(batched.captured, captured)
    np.testing.assert_array_equal(batched.capture_step, steps)
    assert 0 < captured.sum() < 8  # both outcomes occur, so the comparison can fail
    # Scripted on both sides, in the engine: the same as the policy from observations.
    engine = play_team_episodes("cooperative", "flow", 8, 0, task=NAME)
    np.testing.assert_array_equal(engine.capture_step, batched.capture_step)


def test_the_comparison_names_its_roles(duo, tmp_path):
    summary = run_team_comparison(None, None, 12, 5, tmp_path, task=duo)
    data = json.loads((tmp_path / "comparison.json").read_text())
    assert list(data) == list(summary)
    assert data["env"] == NAME
    assert data["hunter_teams"] == {
        "cooperative": "cooperative hunters",
        "reynolds": "reynolds hunters",
    }
    assert data["runners"] == {"flow": "flow runner"}
    assert "pursuer_teams" not in data and "evaders" not in data
    assert data["horizon_s"] == pytest.approx(12.0)  # the task's 120 steps of 0.1 s
    assert data["goal"] == {}  # the entry sets none
    cell = data["cells"]["reynolds vs flow"]
    assert (cell["hunters"], cell["runner"]) == ("reynolds", "flow")
    played = play_team_episodes("reynolds", "flow", 12, 5, task=duo)
    assert cell["captures"] == int(played.captured.sum())
    with open(tmp_path / "comparison.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header[:2] == ["hunters", "runner"]
    with open(tmp_path / "episodes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["hunters"] for r in rows[:12]] == ["cooperative"] * 12
    assert len(rows) == 2 * 12
    table = format_team_table(data).splitlines()
    assert table[0].startswith("duo pursuit: catch rate [95% Wilson] and restricted mean time")
    assert table[1].split() == ["hunters", "\\", "runner", "flow", "runner"]


def test_compare_plays_the_task_named_by_env(duo, tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["--env", NAME, "--no-learned", "--episodes", "6", "--seed", "3", "--out", str(out)]
    assert compare.main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("duo pursuit: catch rate")
    assert "cooperative hunters" in printed
    assert json.loads((out / "comparison.json").read_text())["env"] == NAME


def test_the_old_module_constants_warn_and_keep_their_values():
    old = {
        "TASK": REGISTRY["team_pursuit"],
        "ENV_NAME": "team_pursuit",
        "ROLES": ("pursuer", "evader"),
        "LEARNED_ROLE": {"pursuer": "pursuers", "evader": "evaders"},
        "GOAL": {"capture_rate": 0.95, "wilson_lower": 0.90, "points_above_cooperative": 0.20},
        "ROLE_CHOICE": ("learned", "pursuer_strategy", "evader_strategy"),
    }
    for name, value in old.items():
        with pytest.warns(DeprecationWarning, match=rf"cross_play\.{name} is deprecated: use"):
            assert getattr(cross_play, name) == value
    with pytest.warns(DeprecationWarning, match=r"league\.ANCHORS is deprecated"):
        assert league.ANCHORS == {"pursuer": ("reynolds", "cooperative"), "evader": ("flow",)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            cross_play.no_such_name  # noqa: B018
    assert dict(REGISTRY["team_pursuit"].learned_values) == LEARNED_VALUES


def test_train_py_trains_a_role_of_the_task_named_by_env(duo, tmp_path, capsys):
    """`train.py --env duo_pursuit` trains the pursuers of that task (its configuration, its
    observation length) and compares them in its table."""
    import train

    argv = ["--env", NAME, "--timesteps", "256", "--n-envs", "2", "--episodes", "4"]
    argv += ["--periodic-eval-episodes", "2", "--no-gif", "--no-progress"]
    assert train.main([*argv, "--out", str(tmp_path), "--name", "duo"]) == 0
    paired = [line for line in capsys.readouterr().out.splitlines() if line.startswith("paired")]
    assert len(paired) == 2 and all(": catch " in line for line in paired)
    run = tmp_path / "duo"
    policy = cross_play.load_team_policy(run / "model.zip", "pursuer", task=NAME)
    assert policy.env_id == NAME and policy.metadata["env_id"] == NAME
    assert policy.metadata["obs_shape"] == [cross_play.observation_length(task=NAME)]
    assert cross_play.observation_length(task=NAME) != cross_play.observation_length()
    summary = json.loads((run / "comparison.json").read_text())
    assert list(summary["hunter_teams"]) == ["cooperative", "reynolds", "learned"]


def test_the_renamed_side_keywords_warn_and_play_the_same_episodes():
    new = play_team_episodes(rows="reynolds", cols="flow", episodes=4, seed=9)
    with pytest.warns(DeprecationWarning, match="pursuers= is now rows="):
        old = play_team_episodes(pursuers="reynolds", evaders="flow", episodes=4, seed=9)
    assert np.array_equal(old.captured, new.captured)
    assert np.array_equal(old.capture_step, new.capture_step)
    with pytest.raises(TypeError, match="give rows= only"):
        play_team_episodes(rows="reynolds", pursuers="reynolds", cols="flow", episodes=1, seed=0)
    with pytest.warns(DeprecationWarning, match="pursuer_policy= is now row_policy="):
        summary = run_team_comparison(
            pursuer_policy=None, evader_policy=None, episodes=2, seed=9, out=None
        )
    assert summary["env"] == "team_pursuit"
