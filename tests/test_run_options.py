"""agents.training.options: the option and resume rules both frameworks of train.py share,
with train.py's Args as the one place of the defaults."""

import argparse
import json
from pathlib import Path

import pytest

import train
from agents.evaluation.policies import UsageError
from agents.training import options as run_options
from agents.training.run import resume_command


def args(out: Path, **given: object) -> argparse.Namespace:
    base = {"out": out, "name": None, "resume": False, "seed": None, "timesteps": None}
    return argparse.Namespace(**{**base, **given})


def saved_run(out: Path, name: str, options: dict) -> Path:
    root = out / name
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"options": options, "sessions": [{}]}))
    return root


def test_resume_command_names_the_run_and_a_non_default_out():
    opts = {"name": "r1", "out": "runs"}
    assert resume_command(opts, 1000) == ("python train.py --resume --name r1 --timesteps 1000")
    assert resume_command({**opts, "out": "/tmp/x"}, 5) == (
        "python train.py --resume --name r1 --out /tmp/x --timesteps 5"
    )


def test_new_run_defaults_and_frequencies():
    opts = run_options.new_run_options(train.Args(), 1000)
    assert opts["eval_freq"] == opts["checkpoint_freq"] == 100
    assert opts["threads"] == 1 and opts["eval_episodes"] == 500 and opts["gif"] is True
    assert run_options.new_run_options(train.Args(), 5)["eval_freq"] == 1
    given = run_options.new_run_options(train.Args(eval_freq=7, gif=False), 1000)
    assert given["eval_freq"] == 7 and given["gif"] is False


def test_resumed_run_keeps_fixed_options_and_takes_new_resumable_ones(tmp_path):
    saved_run(tmp_path, "r", {"seed": 3, "timesteps": 100, "threads": 2, "other": 1})
    opts, paths, previous, stale = run_options.resumed_run(
        args(tmp_path, name="r", resume=True, timesteps=500), ("seed",), ("timesteps", "threads")
    )
    assert opts == {"seed": 3, "timesteps": 500, "threads": 2, "name": "r"}
    assert paths.root == tmp_path / "r" and previous["sessions"] == [{}] and stale == []


def test_resumed_run_refuses_another_fixed_value_and_a_missing_name(tmp_path):
    saved_run(tmp_path, "r", {"seed": 3})
    with pytest.raises(UsageError, match="run r was started with --seed 3; drop the option"):
        run_options.resumed_run(args(tmp_path, name="r", resume=True, seed=4), ("seed",), ())
    with pytest.raises(UsageError, match="--resume needs --name"):
        run_options.resumed_run(args(tmp_path, resume=True), ("seed",), ())
    with pytest.raises(UsageError, match="not a run folder"):
        run_options.resumed_run(args(tmp_path, name="none", resume=True), ("seed",), ())


def test_resumed_run_check_sees_the_saved_options_first(tmp_path):
    saved_run(tmp_path, "r", {"seed": 3})
    seen = []

    def check(old: dict) -> None:
        seen.append(old)
        raise UsageError("refused")

    with pytest.raises(UsageError, match="refused"):
        run_options.resumed_run(args(tmp_path, name="r", resume=True, seed=4), ("seed",), (), check)
    assert seen == [{"seed": 3}]
