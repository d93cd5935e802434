"""The RLlib entry points' input checks, with or without ray installed (no cluster needed):
one-line errors, non-zero exits, nothing written."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.evaluation.policies import PolicyLoadError, read_model_metadata

ROOT = Path(__file__).resolve().parents[1]
HAVE_RAY = importlib.util.find_spec("ray") is not None


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(HAVE_RAY, reason="ray is installed")
def test_framework_rllib_without_ray_says_how_to_install(tmp_path):
    proc = run("train.py", "--framework", "rllib", "--out", str(tmp_path), "--name", "x")
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert 'pip install "steer-env[rllib]"' in proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--address", "auto"],
        ["--num-env-runners", "2"],
        ["--envs-per-runner", "8"],
        ["--framework", "rllib", "--algo", "sac"],
        ["--framework", "rllib", "--n-envs", "4"],
        ["--framework", "rllib", "--address", "no-port-here"],
        ["--framework", "rllib", "--num-env-runners", "-1"],
        # --learned is for the team tasks; "both" trains two policies at once, RLlib only.
        ["--framework", "rllib", "--learned", "both"],
        ["--env", "team_pursuit", "--learned", "both"],
        # Training against a frozen or scripted opponent is the SB3 path's.
        ["--framework", "rllib", "--env", "team_pursuit", "--opponent-strategy", "flow"],
        ["--framework", "rllib", "--env", "team_pursuit", "--opponent-pool", "pool.json"],
        ["--framework", "rllib", "--init-model", "model.zip"],
        # Curricula are the SB3 trainer's.
        ["--framework", "rllib", "--no-curriculum"],
    ],
)
def test_bad_rllib_options_are_one_line_errors(args, tmp_path):
    proc = run("train.py", *args, "--out", str(tmp_path), "--name", "x")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 or "usage:" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x").exists()


def fake_checkpoint(folder: Path, env_id: str) -> Path:
    """A folder with only train.py's metadata: enough for the checks made before ray."""
    folder.mkdir(parents=True)
    meta = {"env_id": env_id, "algo": "ppo", "framework": "rllib", "obs_shape": [16]}
    (folder / "steer_env.json").write_text(json.dumps(meta))
    return folder


def test_checkpoint_of_another_env_is_refused(tmp_path):
    ckpt = fake_checkpoint(tmp_path / "ckpt", "steer_env/Evasion-v0")
    assert read_model_metadata(ckpt)["env_id"] == "steer_env/Evasion-v0"
    proc = run("-m", "agents.compare", "--model", str(ckpt), "--env", "pursuit")
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "trained on steer_env/Evasion-v0, not steer_env/Pursuit-v0" in proc.stderr
    proc = run("-m", "agents.render", "--model", str(ckpt), "--env", "pursuit")
    assert proc.returncode == 1 and "trained on steer_env/Evasion-v0" in proc.stderr


def test_folder_that_is_not_a_checkpoint_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(PolicyLoadError, match="not an RLlib checkpoint"):
        read_model_metadata(tmp_path / "empty")
    proc = run("-m", "agents.compare", "--model", str(tmp_path / "empty"))
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "not an RLlib checkpoint" in proc.stderr


@pytest.mark.skipif(not HAVE_RAY, reason="needs ray[rllib]")
def test_existing_run_folder_is_the_same_error_in_both_frameworks(tmp_path):
    """One rule and one message for a run folder that is already used (an empty folder is
    not): SB3's path and RLlib's refuse it before any training, and leave it as it was."""
    (tmp_path / "empty").mkdir()
    kept = tmp_path / "x" / "notes.txt"
    kept.parent.mkdir()
    kept.write_text("mine")
    expected = f"run folder {tmp_path / 'x'} already exists: pass --overwrite"
    for framework in ("sb3", "rllib"):
        proc = run("train.py", "--framework", framework, "--out", str(tmp_path), "--name", "x")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip().count("\n") == 0, proc.stderr
        assert expected in proc.stderr, proc.stderr
        assert sorted(p.name for p in kept.parent.iterdir()) == ["notes.txt"]
    # A file in the run folder's place is refused too, --overwrite or not, and kept.
    (tmp_path / "f").write_text("a file")
    lines = set()
    for framework in ("sb3", "rllib"):
        for extra in ((), ("--overwrite",)):
            proc = run(
                "train.py", "--framework", framework, "--out", str(tmp_path), "--name", "f",
                *extra,
            )  # fmt: skip
            assert proc.returncode == 2, proc.stderr
            lines.add(proc.stderr.strip())
    assert lines == {f"python train.py: error: {tmp_path / 'f'} exists and is not a folder"}
    assert (tmp_path / "f").read_text() == "a file"
    # An empty folder of that name is used as it is (both frameworks' option resolution
    # accept it; nothing is trained here).
    import train
    from agents.rllib import training as rllib_training
    from agents.training import sb3

    argv = ["--out", str(tmp_path), "--name", "empty", "--timesteps", "64"]
    _, paths, _ = rllib_training.resolve_options(*train.parse([*argv, "--framework", "rllib"]))
    assert paths.root == tmp_path / "empty"
    _, paths, _ = sb3.resolve_options(*train.parse(argv), train.PROG)
    assert paths.root == tmp_path / "empty"


@pytest.mark.skipif(not HAVE_RAY, reason="needs ray[rllib]")
def test_team_option_on_a_single_agent_task_is_the_same_error_in_both_frameworks(tmp_path):
    lines = {}
    for framework in ("sb3", "rllib"):
        proc = run(
            "train.py", "--framework", framework, "--env", "pursuit", "--learned", "pursuers",
            "--out", str(tmp_path), "--name", "x",
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        lines[framework] = proc.stderr.strip()
    assert lines["sb3"] == lines["rllib"], lines
    assert lines["sb3"] == (
        "python train.py: error: --learned is for the team task (--env team_pursuit)"
    )
    assert not (tmp_path / "x").exists()
