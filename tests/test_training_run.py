"""The pieces of a run's lifecycle that every framework shares (agents/training/run.py):
the periodic-evaluation record, the iteration log, the model metadata and the summary of
what the run folder holds."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from agents.training.run import (
    RUN_FILES,
    EvaluationRecord,
    IterationLog,
    RunPaths,
    TrainingRun,
    fmt_eta,
    model_metadata,
    run_contents,
)

COLUMNS = ("successes", "ep_lengths")


def _read(path):
    with np.load(path) as f:
        return {k: f[k].tolist() for k in f.files}


def test_evaluation_record_writes_every_evaluation_and_continues_after_a_resume(tmp_path):
    path = RunPaths(tmp_path).evaluations
    record = EvaluationRecord(path, COLUMNS)
    assert len(record) == 0 and not path.exists()
    for t, rate, length in ((100, 0.25, 90.0), (200, 0.5, 80.0), (300, 0.75, 70.0)):
        record.append(t, successes=rate, ep_lengths=length)
        assert _read(path)["timesteps"] == list(range(100, t + 1, 100))  # written each time
    assert _read(path) == {
        "timesteps": [100, 200, 300],
        "successes": [0.25, 0.5, 0.75],
        "ep_lengths": [90.0, 80.0, 70.0],
    }
    assert sorted(os.listdir(path.parent)) == ["evaluations.npz"]  # no temporary file left

    # A session resumed from the checkpoint at 200 drops the evaluation made after it.
    resumed = EvaluationRecord(path, COLUMNS, start_timesteps=200)
    assert len(resumed) == 2
    assert _read(path)["timesteps"] == [100, 200, 300]  # the file changes at the next append
    resumed.append(250, successes=1.0, ep_lengths=60.0)
    assert _read(path) == {
        "timesteps": [100, 200, 250],
        "successes": [0.25, 0.5, 1.0],
        "ep_lengths": [90.0, 80.0, 60.0],
    }
    assert EvaluationRecord(path, COLUMNS, start_timesteps=99).columns == {
        "timesteps": [],
        "successes": [],
        "ep_lengths": [],
    }


def test_evaluation_record_replaces_a_damaged_or_foreign_file(tmp_path):
    path = tmp_path / "eval" / "evaluations.npz"
    path.parent.mkdir()
    path.write_bytes(b"not a zip")
    assert len(EvaluationRecord(path, COLUMNS, start_timesteps=10**6)) == 0
    np.savez(path, timesteps=np.array([100]), results=np.array([[1.0]]))  # no successes
    record = EvaluationRecord(path, COLUMNS, start_timesteps=10**6)
    assert len(record) == 0
    record.append(10, successes=0.0, ep_lengths=5.0)
    assert _read(path) == {"timesteps": [10], "successes": [0.0], "ep_lengths": [5.0]}


def test_evaluation_record_needs_a_value_for_every_column(tmp_path):
    record = EvaluationRecord(tmp_path / "e.npz", COLUMNS)
    with pytest.raises(ValueError, match="columns successes, ep_lengths, got successes"):
        record.append(1, successes=1.0)
    assert len(record) == 0 and not (tmp_path / "e.npz").exists()


def test_fmt_eta():
    assert [fmt_eta(s) for s in (-5, 0, 59.9, 60, 3599, 3600)] == [
        "0:00",
        "0:00",
        "0:59",
        "1:00",
        "59:59",
        "60:00",
    ]


def test_iteration_log_line_and_finite_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = IterationLog(tmp_path / "tb", start_timesteps=1000, total=61_000, show=False)
    line = log.line(3, 31_000, 500.0, " | success  50.0% of 4")
    # 30,000 timesteps left at 500 per second: one minute.
    assert line == "[   3]     31,000/61,000 steps | success  50.0% of 4 | 500 steps/s | eta 1:00"
    assert log.line(1, 1000, 0.0).endswith("| 0 steps/s | eta 0:00")
    assert log.fps(1000) == 0.0 and log.fps(2000) > 0
    log.scalars(2000, [("a", 1.5), ("b", None), ("c", math.nan), ("d", math.inf), ("e", 2)])
    log.close()
    acc = EventAccumulator(str(tmp_path / "tb")).Reload()
    assert sorted(acc.Tags()["scalars"]) == ["a", "e"]
    assert [(e.step, e.value) for e in acc.Scalars("a")] == [(2000, 1.5)]


def test_model_metadata_puts_the_run_first_then_the_fields_in_order():
    opts = {"env": "steer_env/Pursuit-v0", "algo": "ppo", "seed": "3", "name": "r", "x": 1}
    meta = model_metadata(opts, obs_shape=[8], versions={"numpy": "2"}, role="pursuer")
    assert list(meta.items()) == [
        ("env_id", "steer_env/Pursuit-v0"),
        ("algo", "ppo"),
        ("seed", 3),
        ("run_name", "r"),
        ("obs_shape", [8]),
        ("versions", {"numpy": "2"}),
        ("role", "pursuer"),
    ]


def _touch(root, names):
    for n in names:
        if n.endswith("/"):
            (root / n).mkdir()
        else:
            (root / n).write_text("x")


def test_run_contents_names_what_the_folder_holds_in_one_order(tmp_path):
    sb3 = tmp_path / "sb3"
    sb3.mkdir()
    _touch(sb3, ["tb/", "eval/", "episodes.csv", "config.json", "model.zip", "comparison.csv"])
    _touch(sb3, [".config.json.123.abcd.tmp.json", "notes.txt"])
    assert run_contents(sb3) == [
        "model.zip",
        "config.json",
        "comparison.csv",
        "episodes.csv",
        "eval/",
        "tb/",
        "notes.txt",
    ]
    rllib = tmp_path / "rllib"
    rllib.mkdir()
    _touch(rllib, [n for n in RUN_FILES if n != "model.zip"])
    assert ", ".join(run_contents(rllib)) == (
        "model/ (RLlib checkpoint), config.json, comparison.csv, comparison.json, "
        "episodes.csv, survival.png, episode.gif, checkpoints/, eval/, tb/"
    )


def test_finish_records_the_wall_time_and_prints_the_folder(tmp_path, capsys):
    import json

    paths = RunPaths(tmp_path / "r")
    paths.root.mkdir()
    run = TrainingRun("prog", {"seed": 0, "name": "r", "out": "runs"}, paths, {})
    run.begin(0, {"gamma": 0.9}, {"numpy": "2"})
    _touch(paths.root, ["model.zip", "tb/"])
    assert run.finish() == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"wrote {paths.root}/: model.zip, config.json, tb/ (tensorboard")
    assert json.loads(paths.config.read_text())["total_wall_s"] >= 0
