"""``--set KEY=VALUE`` (train, compare, render) and ``python -m agents.sweep``, in real
subprocesses: a run records its configuration, the commands that play its model use it,
``--set`` replaces it, and every mistake is one line with a non-zero exit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.evaluation.policies import load_policy, read_model_metadata
from steer_env.tasks.herding import HERDING
from steer_env.tasks.pursuit_evasion import PURSUIT

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--n-envs", "4", "--episodes", "8", "--periodic-eval-episodes", "4", "--no-progress"]


def _run(*args, timeout=240):
    env = {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "MPLBACKEND": "Agg",
        "PYGAME_HIDE_SUPPORT_PROMPT": "1",
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


def _one_line_error(r, text, code=2):
    assert r.returncode == code, (r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr


def test_a_run_records_its_configuration_and_the_commands_play_with_it(tmp_path):
    out = tmp_path / "runs"
    limit = 40  # steps: a horizon no default has
    r = _run(
        "train.py",
        *("--timesteps", "1024", "--out", str(out), "--name", "short"),
        *("--set", f"time_limit={limit}", "--set", "capture_radius=2.5", "--no-gif", *SMALL),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    run = out / "short"
    expected = {"time_limit": limit, "capture_radius": 2.5}
    assert json.loads((run / "config.json").read_text())["options"]["config"] == expected
    assert read_model_metadata(run / "model.zip")["config"] == expected
    assert load_policy(run / "model.zip").config == expected
    dt = PURSUIT.config().dt
    final = json.loads((run / "comparison.json").read_text())
    assert final["config"] == expected and final["horizon_s"] == pytest.approx(limit * dt)
    times = [float(x) for x in _column(run / "episodes.csv", "time_s") if x]  # "": no capture
    assert max(times, default=0.0) <= limit * dt

    # agents.compare plays the model in its configuration; --set replaces a value
    r = _run(
        "-m", "agents.compare", "--model", str(run / "model.zip"), "--episodes", "6",
        "--out", str(tmp_path / "c1"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((tmp_path / "c1" / "comparison.json").read_text())
    assert summary["config"] == expected and summary["horizon_s"] == pytest.approx(limit * dt)
    r = _run(
        "-m", "agents.compare", "--model", str(run / "model.zip"), "--episodes", "6",
        "--set", "time_limit=70", "--out", str(tmp_path / "c2"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((tmp_path / "c2" / "comparison.json").read_text())
    assert summary["config"] == {**expected, "time_limit": 70}
    assert summary["horizon_s"] == pytest.approx(70 * dt)

    # agents.render: the episode ends by the model's time limit
    r = _run(
        "-m", "agents.render", "--model", str(run / "model.zip"), "--set", "time_limit=12",
        "--out", str(tmp_path / "e.gif"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    import imageio.v3 as iio

    assert len(iio.imread(tmp_path / "e.gif", index=None)) <= 13  # the start and 12 steps

    # resuming with another configuration is refused
    r = _run(
        "train.py", "--resume", "--name", "short", "--out", str(out), "--set", "time_limit=41"
    )  # fmt: skip
    _one_line_error(r, "started with --set")


def _column(path: Path, name: str) -> list[str]:
    import csv

    with path.open() as f:
        return [row[name] for row in csv.DictReader(f)]


@pytest.mark.parametrize(
    "args,text",
    [
        (["train.py", "--set", "n_sheep=5"], "unexpected keyword argument 'n_sheep'"),
        (["train.py", "--set", "capture_radius=-1"], "capture_radius must be"),
        (["train.py", "--set", "time_limit"], "bad --set"),
        # Several dogs train, compare and sweep (tests/test_herding_dogs.py), as many in
        # every row of a sweep.
        (
            ["-m", "agents.sweep", "--env", "herding", "--no-learned", "--vary", "n_dogs=1,2"],
            "every row plays the same number of learned agents",
        ),
        (["train.py", "--env", "herding", "--set", "n_dogs=0"], "n_dogs must be"),
        (["train.py", "--framework", "rllib", "--set", "time_limit=5"], "not available"),
        (["train.py", "--env", "team_pursuit", "--set", "learned=evaders"], "--set learned"),
        (["-m", "agents.compare", "--no-learned", "--set", "n_sheep=0"], "unexpected keyword"),
        (
            ["-m", "agents.compare", "--env", "herding", "--no-learned", "--set", "n_sheep=0"],
            "n_sheep must be",
        ),
        (
            ["-m", "agents.render", "--env", "herding", "--agent", "strombom", "--set", "x=1"],
            "unexpected keyword argument 'x'",
        ),
        (
            [
                "-m",
                "agents.compare",
                "--env",
                "team_pursuit",
                "--no-learned",
                "--set",
                "evader_strategy=flow",
            ],
            "--set evader_strategy",
        ),
        (["-m", "agents.sweep", "--env", "herding", "--vary", "n_sheep"], "bad --vary"),
        (
            ["-m", "agents.sweep", "--env", "herding", "--no-learned", "--vary", "n_sheep=5,0"],
            "--vary: n_sheep must be",
        ),
        (
            ["-m", "agents.sweep", "--env", "herding", "--no-learned", "--vary", "n_sheeep=5"],
            "--vary: got an unexpected keyword argument 'n_sheeep'",
        ),
        (["-m", "agents.sweep", "--env", "herding", "--vary", "observed_sheep=3"], "observes"),
        (
            ["-m", "agents.sweep", "--env", "team_pursuit", "--vary", "n_pursuers=2"],
            "single-agent task",
        ),
    ],
)
def test_configuration_mistakes_are_one_line(tmp_path, args, text):
    out = tmp_path / ("out.gif" if "agents.render" in args else "out")
    r = _run(*args, "--out", str(out))
    _one_line_error(r, text)
    assert not out.exists() or (out.is_dir() and not any(out.iterdir()))


def test_a_model_played_in_a_configuration_it_cannot_observe_is_refused(tmp_path):
    r = _run(
        "-m", "agents.compare", "--env", "herding", "--set", "observed_sheep=3",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    _one_line_error(r, "expects observations of shape", code=1)
    assert not (tmp_path / "out").exists()


def test_sweep_plays_each_value_as_compare_does(tmp_path):
    """Each row is the comparison of that configuration: the same success counts as
    agents.compare with --set, the reference's paired difference the difference of the
    rates (same episodes), and the parameter really changes the game (a flock of 5 sheep
    is penned more often than one of 40 by Strömbom's dog)."""
    episodes = 60
    r = _run(
        "-m", "agents.sweep", "--env", "herding", "--no-learned", "--episodes", str(episodes),
        "--vary", "n_sheep=5,40", "--set", "time_limit=200", "--out", str(tmp_path / "s"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert [(row["parameter"], row["value"]) for row in result["rows"]] == [
        ("n_sheep", 5),
        ("n_sheep", 40),
    ]
    table = (tmp_path / "s" / "sweep.md").read_text()
    assert table.count("\n| n_sheep |") == 2 and "strombom - driver" in table
    for row in result["rows"]:
        assert row["config"] == {"time_limit": 200, "n_sheep": row["value"]}
        assert row["reference"] == "strombom"
        agents = row["agents"]
        diff = row["paired"]["driver"]["success_diff"]
        rates = agents["strombom"]["success_rate"] - agents["driver"]["success_rate"]
        assert diff == pytest.approx(rates)
        assert row["horizon_s"] == pytest.approx(200 * HERDING.config().dt)
    small, large = (row["agents"]["strombom"]["success_rate"] for row in result["rows"])
    assert small > large

    r = _run(
        "-m", "agents.compare", "--env", "herding", "--no-learned", "--episodes", str(episodes),
        "--set", "n_sheep=40", "--set", "time_limit=200", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((tmp_path / "c" / "comparison.json").read_text())
    for name in ("strombom", "driver"):
        assert summary["agents"][name]["successes"] == round(
            result["rows"][1]["agents"][name]["success_rate"] * episodes
        )
