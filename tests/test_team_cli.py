"""The team task through the commands, in subprocesses: train.py (shared-parameter PPO for
either role, resume, a frozen opponent), agents.compare (the cross-play table) and
agents.render (side-by-side GIF), and their one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation.cross_play import load_team_policy, play_team_episodes, run_team_comparison
from agents.evaluation.policies import PolicyLoadError

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--n-envs", "2", "--episodes", "20", "--periodic-eval-episodes", "4", "--no-progress"]


def _run(*args, timeout=300):
    env = {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture(scope="module")
def pursuer_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    r = _run(
        "train.py",
        "--env",
        "team_pursuit",
        "--timesteps",
        "1536",
        *SMALL,
        "--out",
        str(out),
        "--name",
        "team",
    )
    assert r.returncode == 0, r.stderr
    return out, out / "team", r.stdout


def test_train_team_pursuers_writes_a_shared_policy_and_the_cross_play_table(pursuer_run):
    _out, run, stdout = pursuer_run
    # 2 envs x 3 pursuers = 6 SB3 slots; PPO trains whole rollouts of 256 x 6.
    assert "2 envs x 3 shared-policy agents" in stdout
    for name in ("model.zip", "config.json", "comparison.json", "comparison.csv", "episode.gif"):
        assert (run / name).is_file(), name
    policy = load_team_policy(run / "model.zip")
    assert policy.role == "pursuer"
    assert policy.model.num_timesteps == 1536
    config = json.loads((run / "config.json").read_text())
    assert config["status"] == "finished"
    assert config["options"]["learned"] == "pursuers"
    cells = config["comparison"]["cells"]
    assert set(cells) == {
        "reynolds vs flow",
        "cooperative vs flow",
        "learned vs flow",
    }
    assert all(c["episodes"] == 20 for c in cells.values())
    assert "learned vs flow - cooperative vs flow" in config["comparison"]["paired"]
    # The table's learned row is what the policy does on those seeds.
    again = play_team_episodes(policy, "flow", 20, config["comparison"]["seed"])
    assert int(again.captured.sum()) == cells["learned vs flow"]["captures"]


def test_resume_team_run_trains_further(pursuer_run):
    out, run, _ = pursuer_run
    r = _run(
        "train.py",
        "--resume",
        "--name",
        "team",
        "--out",
        str(out),
        "--timesteps",
        "3072",
        "--no-gif",
    )
    assert r.returncode == 0, r.stderr
    assert load_team_policy(run / "model.zip").model.num_timesteps == 3072


def test_train_evaders_against_the_frozen_learned_team(pursuer_run, tmp_path):
    _, run, _ = pursuer_run
    r = _run(
        "train.py",
        "--env",
        "team_pursuit",
        "--learned",
        "evaders",
        "--opponent-model",
        str(run / "model.zip"),
        "--timesteps",
        "512",
        *SMALL,
        "--out",
        str(tmp_path),
        "--name",
        "ev",
        "--no-gif",
    )
    assert r.returncode == 0, r.stderr
    evader = load_team_policy(tmp_path / "ev" / "model.zip", "evader")
    assert evader.role == "evader"
    comparison = json.loads((tmp_path / "ev" / "comparison.json").read_text())
    # Learned evader column and learned pursuer row: learned plays learned.
    assert "learned vs learned" in comparison["cells"]
    assert "reynolds vs learned" in comparison["cells"]


def test_compare_and_render_the_team_task(pursuer_run, tmp_path, capsys):
    # In process (the commands' main()), to keep the suite fast; the subprocess path of the
    # same code runs in the training fixture above.
    from agents.evaluation import compare, render

    _, run, _ = pursuer_run
    rc = compare.main(
        ["--model", str(run / "model.zip"), "--episodes", "10", "--out", str(tmp_path / "c")]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "learned pursuers (PPO)" in out and "cooperative pursuers" in out
    assert (tmp_path / "c" / "comparison.json").is_file()
    rc = render.main(
        ["--model", str(run / "model.zip"), "--side-by-side", "--out", str(tmp_path / "s.gif")]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "learned team vs flow" in out and "cooperative team vs flow" in out
    from PIL import Image

    with Image.open(tmp_path / "s.gif") as gif:
        assert gif.n_frames > 1 and gif.width > 2 * 300  # two episodes side by side


def test_train_rejects_team_options_for_a_single_agent_task():
    r = _run("train.py", "--env", "pursuit", "--learned", "evaders", timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "python train.py: error: --learned is for the team task (--env team_pursuit)"
    ]


@pytest.mark.parametrize(
    ("command", "args", "text"),
    [
        ("compare", ["--env", "pursuit", "--opponent-model", "x.zip"], "--opponent-model is for"),
        ("render", ["--env", "team_pursuit", "--agent", "naive"], "unknown agent 'naive'"),
        ("compare", ["--env", "team_pursuit", "--model", "missing.zip"], "model file not found"),
        ("compare", ["--env", "team_pursuit", "--no-learned", "--model", "m.zip"], "drop --model"),
    ],
)
def test_team_command_errors_are_one_line(command, args, text, capsys):
    import importlib

    main = importlib.import_module(f"agents.evaluation.{command}").main
    rc = main(args)
    err = capsys.readouterr().err
    assert rc != 0
    assert text in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_single_agent_model_is_not_a_team_policy():
    from agents.evaluation.policies import default_model_path

    with pytest.raises(PolicyLoadError, match="not team_pursuit"):
        load_team_policy(default_model_path("steer_env/Pursuit-v0"))


def test_scripted_cross_play_is_paired_and_deterministic():
    a = run_team_comparison(None, None, 50, 123, None)
    b = run_team_comparison(None, None, 50, 123, None)
    assert a["cells"] == b["cells"]
    assert set(a["cells"]) == {"reynolds vs flow", "cooperative vs flow"}
    one = play_team_episodes("reynolds", "flow", 50, 123)
    assert int(one.captured.sum()) == a["cells"]["reynolds vs flow"]["captures"]
    # Episode k is the same episode in a batch of any size.
    first = play_team_episodes("reynolds", "flow", 5, 123)
    np.testing.assert_array_equal(first.capture_step, one.capture_step[:5])


def test_the_shipped_team_model_is_the_default_and_beats_the_scripted_teams(tmp_path, capsys):
    from agents.evaluation import compare
    from agents.evaluation.cross_play import default_model_path

    policy = load_team_policy(default_model_path("pursuer"))
    assert policy.role == "pursuer"
    rc = compare.main(["--env", "team_pursuit", "--episodes", "100", "--out", str(tmp_path)])
    assert rc == 0
    summary = json.loads((tmp_path / "comparison.json").read_text())
    learned = summary["cells"]["learned vs flow"]["capture_rate"]
    cooperative = summary["cells"]["cooperative vs flow"]["capture_rate"]
    # The README's measurement on 1,000 episodes: 99.5% vs 38.9%.
    assert learned >= 0.95 and learned - cooperative >= 0.4
    assert "learned pursuers (PPO)" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.training
def test_team_league_command_trains_each_round_with_train_py(tmp_path):
    """``python -m agents.team_league`` from the checkout: it finds ``train.py`` and trains
    e0, p1 and e1 (tiny budgets), then tables every team against every evader."""
    out = tmp_path / "abr"
    r = _run(
        "-m", "agents.team_league", "--rounds", "1", "--out", str(out), "--episodes", "8",
        "--pursuer-timesteps", "512", "--evader-timesteps", "512", "--n-envs", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for name in ("e0", "p1", "e1"):
        config = json.loads((out / name / "config.json").read_text())
        assert config["status"] == "finished" and (out / name / "model.zip").is_file()
    assert config["options"]["opponent_model"] == str((out / "p1" / "model.zip").resolve())
    summary = json.loads((out / "crossplay" / "comparison.json").read_text())
    assert set(summary["pursuer_teams"]) == {"reynolds", "cooperative", "p1"}
    assert set(summary["evaders"]) == {"flow", "e0", "e1"}


def test_league_reuses_finished_rounds_and_plays_every_team_against_every_evader(tmp_path, capsys):
    # Finished rounds (model.zip present) are reused, so a league continues where it
    # stopped; here every round is "finished" with the shipped models, so nothing trains.
    import shutil

    from agents.evaluation import team_league
    from agents.evaluation.policies import models_dir

    for name, model in (
        ("e0", "team_pursuit_evader_ppo.zip"),
        ("p1", "team_pursuit_pursuer_ppo.zip"),
        ("e1", "team_pursuit_evader_ppo.zip"),
    ):
        (tmp_path / name).mkdir()
        shutil.copy(models_dir() / model, tmp_path / name / "model.zip")
    rc = team_league.main(["--rounds", "1", "--out", str(tmp_path), "--episodes", "20"])
    assert rc == 0
    out = capsys.readouterr().out
    assert out.count("reusing") == 3
    summary = json.loads((tmp_path / "crossplay" / "comparison.json").read_text())
    assert set(summary["pursuer_teams"]) == {"reynolds", "cooperative", "p1"}
    assert set(summary["evaders"]) == {"flow", "e0", "e1"}
    assert len(summary["cells"]) == 9
    # e0 and e1 are the same model here: the same episodes, the same captures.
    for team in ("reynolds", "cooperative", "p1"):
        assert (
            summary["cells"][f"{team} vs e0"]["captures"]
            == summary["cells"][f"{team} vs e1"]["captures"]
        )
