"""train.py end to end in subprocesses: a short run, resume, Ctrl-C, SAC and bad input."""

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation.policies import load_policy
from agents.training.run import RunPaths
from agents.training.sb3 import latest_checkpoint, model_timesteps

ROOT = Path(__file__).resolve().parents[1]
TRAIN = str(ROOT / "train.py")
SMALL = ["--n-envs", "4", "--episodes", "8", "--periodic-eval-episodes", "4", "--no-progress"]


def _env():
    return {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "MPLBACKEND": "Agg",
        "PYGAME_HIDE_SUPPORT_PROMPT": "1",
    }


def _train(*args, timeout=180):
    return subprocess.run(
        [sys.executable, TRAIN, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
    )


def _no_temp_files(root: Path):
    left = [p for p in root.rglob(".*") if p.is_file()]
    assert not left, left


def test_train_resume_and_overwrite(tmp_path):
    out = tmp_path / "runs"
    run = out / "r1"
    r = _train(
        "--timesteps",
        "2048",
        "--checkpoint-freq",
        "1024",
        "--eval-freq",
        "1024",
        "--out",
        str(out),
        "--name",
        "r1",
        "--no-gif",
        *SMALL,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "learned (PPO)" in r.stdout and "classic pursuer" in r.stdout
    for name in (
        "model.zip",
        "config.json",
        "comparison.csv",
        "comparison.json",
        "episodes.csv",
        "survival.png",
        "eval/evaluations.npz",
    ):
        assert (run / name).is_file(), name
    assert not (run / "episode.gif").exists()
    assert list((run / "tb").rglob("events.out.tfevents.*"))
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["ckpt_000001024_steps.zip"]
    pol = load_policy(run / "model.zip")
    assert pol.env_id == "steer_env/Pursuit-v0"
    assert pol.model.num_timesteps == 2048
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["status"] == "finished"
    assert cfg["options"]["timesteps"] == 2048 and cfg["options"]["n_envs"] == 4
    assert cfg["hyperparameters"]["batch_size"] == 512  # the whole rollout: 4 envs x 128
    assert {"torch", "stable_baselines3", "gymnasium", "numpy"} <= set(cfg["versions"])
    _no_temp_files(run)

    # the same name again: refused, nothing touched
    before = (run / "model.zip").stat().st_mtime_ns
    r = _train("--timesteps", "1024", "--out", str(out), "--name", "r1", *SMALL)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "--overwrite" in r.stderr
    assert (run / "model.zip").stat().st_mtime_ns == before

    # resume to a larger budget: continues the count, same tensorboard run, writes the GIF
    r = _train(
        "--resume",
        "--name",
        "r1",
        "--out",
        str(out),
        "--timesteps",
        "4096",
        "--eval-episodes",
        "6",
        "--no-progress",
        "--gif",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "resuming" in r.stdout and "2,048" in r.stdout
    assert model_timesteps(run / "model.zip") == 4096
    cfg = json.loads((run / "config.json").read_text())
    assert [s["start_timesteps"] for s in cfg["sessions"]] == [0, 2048]
    assert cfg["sessions"][-1]["end_timesteps"] == 4096
    # Each session loaded (or compiled) the engine before its training clock started.
    assert all(isinstance(s["warmup_s"], float) and s["warmup_s"] >= 0 for s in cfg["sessions"])
    assert cfg["options"]["n_envs"] == 4 and cfg["options"]["timesteps"] == 4096
    assert [p.name for p in (run / "tb").iterdir()] == ["PPO_1"]
    # The periodic evaluations continue the first session's record.
    with np.load(run / "eval" / "evaluations.npz") as evals:
        assert list(evals["timesteps"]) == [1024, 2048, 3072, 4096]
        assert len(evals["results"]) == len(evals["ep_lengths"]) == len(evals["successes"]) == 4
    gif = run / "episode.gif"
    assert gif.stat().st_size > 0
    import imageio.v3 as iio

    assert len(iio.imread(gif, index=None)) > 1
    _no_temp_files(run)

    # --overwrite replaces the run
    r = _train(
        "--timesteps", "1024", "--out", str(out), "--name", "r1", "--overwrite", "--no-gif", *SMALL
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert model_timesteps(run / "model.zip") == 1024


def _train_until_a_checkpoint(out: Path, name: str) -> subprocess.Popen:
    """A long ``train.py`` run ``name`` under ``out``, returned still training once its
    first checkpoint is written."""
    proc = subprocess.Popen(
        [sys.executable, TRAIN, "--timesteps", "5000000", "--checkpoint-freq", "2048",
         "--out", str(out), "--name", name, "--no-gif", *SMALL],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if list((out / name / "checkpoints").glob("ckpt_*.zip")):
            break
        time.sleep(0.2)
    if proc.poll() is not None:
        pytest.fail(f"train.py ended before a checkpoint: {proc.communicate()[1][-3000:]}")
    return proc


def test_ctrl_c_saves_checkpoint_and_resumes(tmp_path):
    out = tmp_path / "runs"
    run = out / "int"
    proc = _train_until_a_checkpoint(out, "int")
    try:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert "interrupted at" in last and "python train.py --resume --name int" in last
    found = latest_checkpoint(RunPaths(run))
    assert found is not None
    _, done = found
    assert done >= 2048 and done % 512 == 0  # whole rollouts of 4 envs x 128 steps
    for ckpt in (run / "checkpoints").glob("ckpt_*.zip"):
        with zipfile.ZipFile(ckpt) as zf:
            assert zf.testzip() is None
    assert not (run / "model.zip").exists()
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["status"] == "interrupted"
    _no_temp_files(run)

    r = _train(
        "--resume",
        "--name",
        "int",
        "--out",
        str(out),
        "--timesteps",
        str(done + 1024),
        "--no-progress",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert model_timesteps(run / "model.zip") == done + 1024


def test_one_process_trains_a_run_folder_and_a_killed_session_is_recorded(tmp_path):
    """While a run trains, a resume or an overwrite of its folder from another process is
    one line naming the training process, and changes nothing; after SIGKILL, the resume
    records the killed session as aborted, not as still running."""
    out = tmp_path / "runs"
    run = out / "held"
    proc = _train_until_a_checkpoint(out, "held")
    try:
        held = f"run folder {run} is in use by another training process (pid {proc.pid})"
        for args in (
            ["--resume", "--name", "held", "--out", str(out), "--timesteps", "8192"],
            ["--name", "held", "--out", str(out), "--overwrite", "--timesteps", "512", *SMALL],
        ):
            r = _train(*args)
            assert r.returncode == 2, r.stderr[-3000:]
            assert r.stderr.strip().splitlines() == [f"python train.py: error: {held}: wait for it "
                                                     "to end or pick another --name"]  # fmt: skip
            assert proc.poll() is None and (run / "config.json").is_file()
            assert list((run / "checkpoints").glob("ckpt_*.zip"))
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    cfg = json.loads((run / "config.json").read_text())
    assert [(s["status"], s["pid"]) for s in cfg["sessions"]] == [("running", proc.pid)]
    _, done = latest_checkpoint(RunPaths(run))
    r = _train("--resume", "--name", "held", "--out", str(out), "--timesteps", str(done + 512),
               "--no-progress")  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    cfg = json.loads((run / "config.json").read_text())
    assert [s["status"] for s in cfg["sessions"]] == ["aborted", "trained"]
    assert cfg["sessions"][1]["start_timesteps"] == done


def test_a_run_folder_deleted_and_made_again_is_locked_anew(tmp_path):
    """The lock follows the folder, not its path: one made again where a held one was
    deleted is locked again (another process cannot take it), and released on request."""
    from agents.training.run import lock_run_dir, release_run_dir

    root = tmp_path / "run"
    probe = (
        "import sys; from pathlib import Path; from agents.training.run import lock_run_dir\n"
        "try:\n    lock_run_dir(Path(sys.argv[1]))\nexcept Exception as e:\n"
        "    sys.exit(str(e))"
    )

    def taken_elsewhere() -> bool:
        r = subprocess.run([sys.executable, "-c", probe, str(root)], cwd=ROOT,
                           capture_output=True, text=True)  # fmt: skip
        return "in use by another training process" in r.stderr

    root.mkdir()
    lock_run_dir(root)
    lock_run_dir(root)  # held already: no second lock against itself
    assert taken_elsewhere()
    root.rmdir()
    root.mkdir()
    assert not taken_elsewhere()
    lock_run_dir(root)
    assert taken_elsewhere()
    release_run_dir(root)
    assert not taken_elsewhere()


def test_a_file_system_without_flock_trains_unlocked(tmp_path, monkeypatch):
    """Where ``flock`` is refused (ENOLCK, as some network mounts answer) the run goes on
    without a lock, as on a system without ``fcntl``."""
    import errno
    import fcntl

    from agents.training.run import _HELD_RUN_DIRS, lock_run_dir

    def refused(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    root = tmp_path / "run"
    root.mkdir()
    monkeypatch.setattr(fcntl, "flock", refused)
    lock_run_dir(root)
    assert root.resolve() not in _HELD_RUN_DIRS


def test_a_run_folder_that_cannot_be_opened_is_one_line(tmp_path):
    """What ``open`` refuses (here a socket where the folder should be, ENXIO) is a
    :class:`UsageError` naming the folder, not a traceback."""
    import socket

    from agents.evaluation.policies import UsageError
    from agents.training.run import lock_run_dir

    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(UsageError, match=f"cannot open the run folder {path}: "):
            lock_run_dir(path)


def test_sac_trains_and_saves_replay_buffer(tmp_path):
    out = tmp_path / "runs"
    r = _train(
        "--algo",
        "sac",
        "--timesteps",
        "400",
        "--n-envs",
        "2",
        "--checkpoint-freq",
        "200",
        "--eval-episodes",
        "4",
        "--periodic-eval-episodes",
        "2",
        "--no-gif",
        "--no-progress",
        "--out",
        str(out),
        "--name",
        "sac",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    run = out / "sac"
    pol = load_policy(run / "model.zip")
    assert pol.algo == "sac" and type(pol.model).__name__ == "SAC"
    assert (run / "checkpoints" / "replay_buffer.pkl").is_file()


@pytest.mark.parametrize(
    "args,text",
    [
        (["--env", "cartpole"], "unknown env"),
        (["--algo", "dqn"], "unknown algorithm"),
        (["--timesteps", "0"], "positive integer"),
        (["--timesteps", "many"], "positive integer"),
        (["--n-envs", "-2"], "positive integer"),
        (["--episodes", "0"], "positive integer"),
        (["--eval-episodes", "0"], "positive integer"),  # the deprecated spelling
        (["--seed", "4294967296"], "integer in [0, 4294967295]"),
        (["--seed", "99999999999999999999999"], "integer in [0, 4294967295]"),
        (["--compare-seed", "-1"], "integer in [0, 4294967295]"),
        (["--name", "a/b"], "bad run name"),
        (["--resume"], "--resume needs --name"),
        (["--resume", "--name", "ghost"], "not a run folder"),
    ],
)
def test_train_bad_input(tmp_path, args, text):
    r = _train(*args, "--out", str(tmp_path / "runs"))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_resume_rejects_changed_env(tmp_path):
    out = tmp_path / "runs"
    r = _train("--timesteps", "1024", "--out", str(out), "--name", "x", "--no-gif", *SMALL)
    assert r.returncode == 0, r.stderr[-3000:]
    r = _train("--resume", "--name", "x", "--env", "evasion", "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "started with --env steer_env/Pursuit-v0" in r.stderr


def test_cuda_unavailable_is_a_clean_error(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here: --device cuda is valid")
    r = _train("--device", "cuda", "--out", str(tmp_path / "runs"), "--name", "c")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "CUDA is not available" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_session_seed_is_always_valid_for_numpy_sb3_and_torch():
    import numpy as np
    import torch
    from hypothesis import given
    from hypothesis import strategies as st

    from agents.training.run import SESSION_SEED_BASE, session_seed

    # the case: the old formula gave 4,296,789,701 > 2**32 - 1
    s = session_seed(7, 466_944)
    assert SESSION_SEED_BASE <= s <= 2**32 - 1
    np.random.seed(s)  # noqa: NPY002  raises ValueError for seeds >= 2**32
    torch.manual_seed(s)
    assert session_seed(7, 0) == 7 and session_seed(2**32 - 1, 0) == 2**32 - 1
    with pytest.raises(ValueError):
        session_seed(2**32, 0)

    @given(st.integers(0, 2**32 - 1), st.integers(1, 10**12))
    def check(seed, done):
        assert SESSION_SEED_BASE <= session_seed(seed, done) <= 2**32 - 1

    check()


def test_timesteps_rounded_to_whole_rollouts_are_announced(tmp_path):
    out = tmp_path / "runs"
    r = _train(
        "--timesteps", "2048", "--episodes", "4", "--periodic-eval-episodes", "2",
        "--eval-freq", "4096", "--no-gif", "--no-progress", "--out", str(out), "--name", "r",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    note = next(i for i, line in enumerate(lines) if line.startswith("note: PPO trains"))
    start = next(i for i, line in enumerate(lines) if line.startswith("training PPO"))
    assert note < start  # said before training starts
    assert "4,096 timesteps instead of the 2,048 asked for" in lines[note]
    assert "for 4,096 timesteps" in lines[start]
    assert model_timesteps(out / "r" / "model.zip") == 4096
    # no checkpoint was due within one rollout: the last line must not claim one
    assert not (out / "r" / "checkpoints").exists()
    last = lines[-1]
    assert last.startswith("wrote ") and "model.zip" in last and "tb/" in last
    assert "checkpoints/" not in last and "episode.gif" not in last


def _rewrite_timesteps(model_zip: Path, timesteps: int) -> None:
    """Pretend the run's model has ``timesteps`` done (the SB3 zip's ``data`` JSON)."""
    with zipfile.ZipFile(model_zip) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    data = json.loads(members["data"])
    data["num_timesteps"] = timesteps
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model_zip, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def _killed_mid_save(target: Path) -> Path:
    """A real process that dies by SIGKILL while writing ``target`` atomically; returns the
    temporary file it leaves behind."""
    code = (
        "import sys, time\n"
        "from steer_env.cli import atomic_output\n"
        "with atomic_output(sys.argv[1], '.tmp.zip') as tmp:\n"
        "    tmp.write_bytes(b'PK\\x03\\x04 half a zip')\n"
        "    print(tmp, flush=True)\n"
        "    time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(target)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    tmp = Path(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert tmp.is_file() and not target.exists()
    return tmp


def test_resume_at_a_large_timestep_count_and_stale_temporaries_removed(tmp_path):
    out = tmp_path / "runs"
    run = out / "big"
    r = _train("--seed", "7", "--timesteps", "1024", "--out", str(out), "--name", "big",
               "--no-gif", *SMALL)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    # the resume point: seed 7 at 466,944 timesteps (its derived seed overflowed)
    _rewrite_timesteps(run / "model.zip", 466_944)
    for f in (run / "checkpoints").glob("*"):
        f.unlink()
    killed = _killed_mid_save(run / "checkpoints" / "ckpt_000467968_steps.zip")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    planted = run / f".model.zip.{dead}.0123abcd.tmp.zip"
    planted.write_bytes(b"PK partial")
    alive = run / f".config.json.{os.getpid()}.89abcdef.tmp.json"  # a live writer's: kept
    alive.write_bytes(b"{")
    r = _train("--resume", "--name", "big", "--out", str(out), "--timesteps", "467968")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "removed 2 temporary file(s) left by a killed run" in r.stderr
    assert not killed.exists() and not planted.exists() and alive.exists()
    assert "resuming" in r.stdout and "466,944" in r.stdout
    cfg = json.loads((run / "config.json").read_text())
    assert [s["start_timesteps"] for s in cfg["sessions"]] == [0, 466_944]
    assert model_timesteps(run / "model.zip") == 467_968


def test_a_curriculum_trains_its_stage_then_the_tasks_configuration(tmp_path, monkeypatch, capsys):
    """Flocking's first half trains with a caught boid paying 2; the second half, the
    periodic evaluation and the comparison play the task's 8 (the envs train.py builds are
    recorded around the real factory)."""
    import train
    from agents.training import sb3
    from agents.training.run import EVAL_SEED

    built = []  # (number of envs, seed, caught_penalty) of every env built
    real = sb3.env_factory

    def recording(opts, env_kwargs):
        make, *rest = real(opts, env_kwargs)

        def make_env(n, seed):
            built.append((n, seed, env_kwargs.get("caught_penalty", 8.0)))
            # Flocking pays progress undiscounted whatever the learner's gamma (its table's).
            assert env_kwargs["shaping_gamma"] == 1.0
            return make(n, seed)

        return (make_env, *rest)

    monkeypatch.setattr(sb3, "env_factory", recording)
    argv = ["--env", "flocking", "--set", "n_boids=4", "--set", "n_learned=-1"]
    argv += ["--timesteps", "2048", "--n-envs", "2", "--episodes", "4", "--eval-freq", "1024"]
    argv += ["--periodic-eval-episodes", "2", "--no-gif", "--no-progress"]
    assert train.main([*argv, "--out", str(tmp_path), "--name", "c"]) == 0
    out = capsys.readouterr().out
    assert "curriculum: caught_penalty=2.0 until 1,024 timesteps, then the task's " in out
    training = [penalty for n, seed, penalty in built if n == 2 and seed != EVAL_SEED]
    assert training == [2.0, 8.0]  # one rollout of 2 envs x 4 boids x 128 steps each
    others = {penalty for n, seed, penalty in built if n != 2 or seed == EVAL_SEED}
    assert others == {8.0}  # the periodic evaluation's and the engine warm-up's
    run = tmp_path / "c"
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["options"]["curriculum"] == [{"until": 1024, "config": {"caught_penalty": 2.0}}]
    assert model_timesteps(run / "model.zip") == 2048
    assert [p.name for p in (run / "tb").iterdir()] == ["PPO_1"]  # one run across stages
    with np.load(run / "eval" / "evaluations.npz") as evals:
        assert list(evals["timesteps"]) == [1024, 2048]
        # Each periodic evaluation plays 2 whole flocks: every boid's episode of each.
        assert evals["results"].shape == evals["successes"].shape == (2, 2 * 4)

    # A resumed run keeps its curriculum; --no-curriculum trains the task's throughout.
    r = _train("--resume", "--name", "c", "--out", str(tmp_path), "--no-curriculum")
    assert r.returncode == 2 and "keeps the curriculum it started with" in r.stderr
    built.clear()
    assert train.main([*argv, "--no-curriculum", "--out", str(tmp_path), "--name", "n"]) == 0
    assert [penalty for n, seed, penalty in built if n == 2 and seed != EVAL_SEED] == [8.0]
    assert json.loads((tmp_path / "n" / "config.json").read_text())["options"]["curriculum"] == []
