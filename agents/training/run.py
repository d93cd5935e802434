"""The run of ``train.py``, whichever framework trains it: the run folder, ``config.json``,
seeds, Ctrl-C, the final comparison and :class:`TrainingRun`, the lifecycle of a session.

Run folder layout (``runs/<name>/``)::

    config.json          every option used, hyperparameters, versions, sessions, results
    model.zip            the final model (SB3 zip with a ``steer_env`` metadata dict)
    checkpoints/         ckpt_<timesteps>_steps.zip (+ replay_buffer.pkl for SAC)
    tb/                  tensorboard logs (``tensorboard --logdir runs/<name>/tb``)
    eval/evaluations.npz periodic evaluations (EvalCallback: rewards, lengths, successes)
    comparison.csv/.json, episodes.csv, survival.png   the final comparison
    episode.gif          learned vs classic agent on the same seed

(an RLlib run has ``model/`` and ``checkpoints/ckpt_<timesteps>/`` checkpoint folders
instead, and records its evaluations with :class:`EvaluationRecord`:
:mod:`agents.rllib.training`). Every model, buffer and JSON file is written to a
temp file in its folder and moved into place with ``os.replace``
(:func:`steer_env.cli.atomic_output`), so an interruption never leaves a half-written file;
the temp file of a run killed mid-write (SIGKILL) is deleted when the run folder is next
started or resumed (:func:`prepare_run_dir`).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import signal
import sys
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.policies import UsageError
from agents.evaluation.results import atomic_write_json as write_json
from steer_env.cli import SEED_MAX, atomic_output, remove_stale_temporaries

#: Seeds: training env ``i`` starts from ``seed + i``; the periodic evaluation uses
#: ``EVAL_SEED + seed`` each time (the same episodes at every evaluation); the final
#: comparison uses :data:`agents.evaluation.compare.DEFAULT_SEED` + k.
EVAL_SEED = 500_000
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


#: A resumed session's seed lies in [SESSION_SEED_BASE, SEED_MAX]: clear of the training
#: seeds of first sessions (small), of EVAL_SEED + seed and of the comparison seeds.
SESSION_SEED_BASE = 2_000_000


def session_seed(seed: int, start_timesteps: int) -> int:
    """The seed of a training session: ``seed`` for a new run; for a session resumed at
    ``start_timesteps`` a fresh one drawn from ``(seed, start_timesteps)`` (so it neither
    replays the first session's episodes nor lands on the evaluation or comparison seeds),
    always in ``[0, SEED_MAX]`` as numpy's global RNG, SB3 and torch require."""
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be in [0, {SEED_MAX}], got {seed}")
    if not start_timesteps:
        return int(seed)
    state = int(np.random.SeedSequence([int(seed), int(start_timesteps)]).generate_state(1)[0])
    return SESSION_SEED_BASE + state % (SEED_MAX + 1 - SESSION_SEED_BASE)


def versions() -> dict[str, str]:
    """Versions of Python and the libraries a run depends on."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for mod in ("steer_env", "numpy", "scipy", "gymnasium", "torch", "stable_baselines3"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - reported, never fatal
            out[mod] = "unavailable"
    return out


def model_metadata(opts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The ``steer_env`` metadata a run stores with its models and checkpoints: the task,
    algorithm, seed and run name of ``opts``, then ``fields`` (spaces, versions, what the
    framework or task adds)."""
    return {
        "env_id": opts["env"],
        "algo": opts["algo"],
        "seed": int(opts["seed"]),
        "run_name": opts["name"],
        **fields,
    }


# ------------------------------------------------------------------ run folder
@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def model(self) -> Path:
        return self.root / "model.zip"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def replay_buffer(self) -> Path:
        return self.checkpoints / "replay_buffer.pkl"

    @property
    def tensorboard(self) -> Path:
        return self.root / "tb"

    @property
    def eval(self) -> Path:
        return self.root / "eval"

    @property
    def evaluations(self) -> Path:
        return self.eval / "evaluations.npz"

    @property
    def gif(self) -> Path:
        return self.root / "episode.gif"

    def checkpoint(self, timesteps: int) -> Path:
        return self.checkpoints / f"ckpt_{timesteps:09d}_steps.zip"


#: What a run folder holds, in the order the run's last line names it (a folder with a
#: ``/``): the model (an SB3 zip or an RLlib checkpoint folder), the options and results,
#: the final comparison, the checkpoints, periodic evaluations and tensorboard logs.
RUN_FILES = (
    "model.zip",
    "model/",
    "config.json",
    "comparison.csv",
    "comparison.json",
    "episodes.csv",
    "survival.png",
    "episode.gif",
    "checkpoints/",
    "eval/",
    "tb/",
)
#: How the run's last line describes an entry of :data:`RUN_FILES` beyond its name.
RUN_FILE_NOTES = {"model/": " (RLlib checkpoint)"}


def run_contents(root: Path) -> list[str]:
    """The entries of the run folder ``root`` as the run's last line names them: those of
    :data:`RUN_FILES` it holds, in that order, then any other by name (hidden files, such
    as the temporary files of a write, aside)."""
    held = {f"{p.name}/" if p.is_dir() else p.name for p in Path(root).iterdir()}
    known = [n for n in RUN_FILES if n in held]
    other = sorted(n for n in held - set(known) if not n.startswith("."))
    return [n + RUN_FILE_NOTES.get(n, "") for n in known] + other


def final_comparison(
    env_id: str,
    model_path: Path,
    opts: dict[str, Any],
    paths: Any,
    config: dict[str, Any],
    extra: dict[str, Any],
    prog: str,
    saved: str = "model",
) -> bool:
    """The end of a training run, for every framework: compare the trained policy at
    ``model_path`` with the scripted agents on paired seeded episodes, print the table,
    render the side-by-side GIF (``opts["gif"]``) and record the result in ``config``
    (``status`` and ``comparison``; the caller writes it). Ctrl-C during it records the
    interruption in ``paths.config``, prints how to evaluate the saved ``saved`` later and
    returns False."""
    from agents.evaluation.compare import comparison_of

    try:
        record = comparison_of(env_id).final(env_id, model_path, opts, paths, extra)
    except KeyboardInterrupt:
        config["status"] = "interrupted during evaluation"
        atomic_write_json(paths.config, config)
        print(
            f"{prog}: interrupted during evaluation; the {saved} is saved at {model_path}; "
            f"evaluate it with: python -m agents.compare --model {model_path}",
            file=sys.stderr,
        )
        return False
    config["status"] = "finished"
    config["comparison"] = record
    return True


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write JSON through a temp file in the same folder and ``os.replace``
    (:func:`steer_env.cli.atomic_output`)."""
    write_json(path, obj)


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"{path} not found") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object")
    return data


# ------------------------------------------------------------------ interruption
class InterruptGuard:
    """While active, the first SIGINT (Ctrl-C) or SIGTERM only sets :attr:`requested`, so
    training stops cleanly at the next environment step; a second one raises
    ``KeyboardInterrupt`` at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(
            "\ninterrupt: stopping after this step and saving a checkpoint "
            "(press Ctrl-C again to stop at once)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> InterruptGuard:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


@dataclass
class Session:
    """What one invocation of ``train.py`` did (recorded in config.json)."""

    started: str
    start_timesteps: int
    end_timesteps: int = 0
    train_wall_s: float = 0.0
    fps: float = 0.0
    #: ``running`` while it trains, then ``trained``, ``interrupted`` (Ctrl-C or SIGTERM: a
    #: checkpoint was saved) or ``aborted`` (the process ended without saying how: SIGKILL,
    #: a crash; recorded by the session that next takes the folder).
    status: str = "running"
    pid: int = field(default_factory=os.getpid)


def _check_folder(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder")


def check_new_run_dir(paths: RunPaths, overwrite: bool) -> bool:
    """Whether a new run in ``paths.root`` must delete what the folder holds first (it
    exists and is not empty; an empty folder is used as it is). :class:`UsageError` when the
    path is not a folder, or the folder holds something and not ``overwrite``: the one rule
    of both frameworks (RLlib checks it before starting Ray)."""
    root = paths.root
    _check_folder(root)
    taken = root.is_dir() and any(root.iterdir())
    if taken and not overwrite:
        raise UsageError(
            f"run folder {root} already exists: pass --overwrite to replace it or --resume "
            "to continue it"
        )
    return taken


#: The run folders this process holds (by resolved path): the open folder it locked.
_HELD_RUN_DIRS: dict[Path, int] = {}


def _holder(root: Path) -> str:
    """`` (pid N)`` of the session that config.json in ``root`` records as running, if any."""
    try:
        sessions = json.loads((root / "config.json").read_text()).get("sessions") or []
        pid = sessions[-1].get("pid") if sessions[-1].get("status") == "running" else None
    except (OSError, ValueError, AttributeError, IndexError):
        pid = None
    return f" (pid {pid})" if isinstance(pid, int) else ""


def lock_run_dir(root: Path) -> None:
    """Hold the run folder ``root`` until :func:`release_run_dir` or the end of the
    process: an exclusive advisory lock (``flock``) on the folder itself, so two processes
    never train, resume or overwrite one run at once. A folder this process holds already
    stays held. :class:`UsageError` when another process holds it, or the folder cannot be
    opened. (Without ``fcntl``, on Windows, or on a file system that refuses ``flock``, the
    folder is not locked.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    key = root.resolve()
    held = _HELD_RUN_DIRS.get(key)
    if held is not None:
        now, then = key.stat(), os.fstat(held)
        if then.st_nlink > 0 and (now.st_dev, now.st_ino) == (then.st_dev, then.st_ino):
            return
        release_run_dir(key)  # that folder was deleted; this is a new one
    try:
        fd = os.open(key, os.O_RDONLY)
    except OSError as exc:
        raise UsageError(f"cannot open the run folder {root}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise UsageError(
            f"run folder {root} is in use by another training process{_holder(root)}: wait "
            "for it to end or pick another --name"
        ) from None
    except OSError:  # a file system without flock (some network mounts): not locked
        os.close(fd)
        return
    _HELD_RUN_DIRS[key] = fd


def release_run_dir(root: Path) -> None:
    """Let go of the run folder ``root`` (:func:`lock_run_dir`; nothing if not held)."""
    fd = _HELD_RUN_DIRS.pop(Path(root).resolve(), None)
    if fd is not None:
        os.close(fd)


def _clear_folder(root: Path) -> None:
    """Delete what ``root`` holds, keeping the folder (and its lock)."""
    import shutil

    for entry in root.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def prepare_run_dir(paths: RunPaths, resume: bool, overwrite: bool) -> list[Path]:
    """Create the run folder and hold it (:func:`lock_run_dir`). An existing one is an
    error unless ``resume`` (continue it) or ``overwrite`` (delete what it holds first):
    :func:`check_new_run_dir`. Temporary files left by a run killed mid-write are deleted
    (never loaded: checkpoints are found by name); returns them. A folder that cannot be
    cleared or created, or that another process holds, is a :class:`UsageError` naming
    it."""
    root = paths.root
    if resume:
        _check_folder(root)
        if not paths.config.is_file():
            raise UsageError(f"cannot resume: {root} is not a run folder (no config.json)")
        lock_run_dir(root)
        return remove_stale_temporaries(root)
    try:
        taken = check_new_run_dir(paths, overwrite)
        root.mkdir(parents=True, exist_ok=True)
        lock_run_dir(root)
        if taken:
            _clear_folder(root)
    except OSError as exc:  # an --out the user cannot write: their mistake, one line
        raise UsageError(f"cannot create the run folder {root}: {exc.strerror or exc}") from exc
    return remove_stale_temporaries(root)


def resume_command(opts: dict[str, Any], timesteps: int) -> str:
    """The command line that continues run ``opts["name"]`` up to ``timesteps`` (whichever
    framework trained it: ``--resume`` finds out from its config.json)."""
    out = f" --out {opts['out']}" if opts["out"] != "runs" else ""
    return f"python train.py --resume --name {opts['name']}{out} --timesteps {timesteps}"


def session_fps(done: int, wall: float) -> float:
    """Timesteps per second of a session (0 when nothing was trained)."""
    return round(done / wall, 1) if wall > 0 and done > 0 else 0.0


# ------------------------------------------------------------------ iterations
class EvaluationRecord:
    """The periodic evaluations of a run, ``eval/evaluations.npz``: one array per column,
    one entry per evaluation, ``timesteps`` first. A resumed session continues the record
    of the run from ``start_timesteps``: the evaluations after it (made by a session
    stopped after its last checkpoint) are dropped, and so is a record that cannot be read
    or lacks a column. Each :meth:`append` rewrites the file atomically
    (:func:`steer_env.cli.atomic_output`)."""

    def __init__(self, path: Path, columns: Iterable[str], start_timesteps: int = 0) -> None:
        self.path = Path(path)
        self.columns: dict[str, list[Any]] = {"timesteps": [], **{c: [] for c in columns}}
        if not self.path.is_file():
            return
        try:
            with np.load(self.path) as old:
                loaded = {c: list(old[c]) for c in self.columns}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return  # a damaged record is replaced, never fatal
        kept = sum(1 for t in loaded["timesteps"] if t <= start_timesteps)
        self.columns = {c: v[:kept] for c, v in loaded.items()}

    def __len__(self) -> int:
        return len(self.columns["timesteps"])

    def append(self, timesteps: int, **values: float) -> None:
        """Record the evaluation at ``timesteps`` (a value for every other column) and
        write the file."""
        if set(values) != set(self.columns) - {"timesteps"}:
            raise ValueError(
                f"an evaluation has the columns {', '.join(list(self.columns)[1:])}, "
                f"got {', '.join(values) or 'none'}"
            )
        self.columns["timesteps"].append(int(timesteps))
        for c, v in values.items():
            self.columns[c].append(v)
        with atomic_output(self.path) as tmp:
            np.savez(tmp, **{c: np.asarray(v) for c, v in self.columns.items()})


def fmt_eta(seconds: float) -> str:
    """``m:ss`` of a remaining time (whole seconds, never negative)."""
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class IterationLog:
    """The report of a framework that trains in iterations (RLlib): tensorboard scalars
    under ``tb_dir`` (a resumed session at ``start_timesteps`` discards the scalars logged
    after it) and the progress line of each iteration,
    ``[iteration] timesteps/total steps<details> | fps steps/s | eta m:ss``. Its clock,
    the session's training time, starts when it is created."""

    def __init__(self, tb_dir: Path, start_timesteps: int, total: int, show: bool) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(str(tb_dir), purge_step=start_timesteps or None)
        self.start_timesteps, self.total, self.show = start_timesteps, total, show
        self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def fps(self, timesteps: int) -> float:
        """Timesteps per second trained since the log started."""
        elapsed = self.elapsed()
        return (timesteps - self.start_timesteps) / elapsed if elapsed > 0 else 0.0

    def scalars(self, timesteps: int, pairs: Iterable[tuple[str, Any]]) -> None:
        """Log each ``(tag, value)`` at ``timesteps``; a missing or non-finite value is
        skipped."""
        for tag, value in pairs:
            if value is not None and math.isfinite(value):
                self.writer.add_scalar(tag, float(value), timesteps)

    def line(self, iteration: int, timesteps: int, fps: float, details: str = "") -> str:
        """The progress line of ``iteration`` (``details``: what the framework adds after
        the timesteps, each part starting with ``" | "``)."""
        eta = (self.total - timesteps) / fps if fps > 0 else 0.0
        return (
            f"[{iteration:4d}] {timesteps:>10,}/{self.total:,} steps{details}"
            f" | {fps:,.0f} steps/s | eta {fmt_eta(eta)}"
        )

    def print(self, line: str) -> None:
        if self.show:
            print(line, flush=True)

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()


# ------------------------------------------------------------------ run lifecycle
class TrainingRun:
    """The life of one session of a run, whichever framework trains it: ``config.json``
    (options, hyperparameters, versions, sessions, status, results), the session record,
    the messages of an interruption (Ctrl-C: exit status 130 and the command that
    resumes), the final comparison with the scripted agents and the summary line.

    A framework creates it as its session starts (the run's wall clock starts with it),
    calls :meth:`begin` once the model is built and before training, :meth:`end_training`
    after, then :meth:`interrupted` (a checkpoint was saved) or :meth:`trained` (the final
    model was saved), :meth:`compare` and :meth:`finish`."""

    def __init__(
        self, prog: str, opts: dict[str, Any], paths: RunPaths, previous: dict[str, Any]
    ) -> None:
        self.started = time.perf_counter()
        self.prog = prog
        self.opts = opts
        self.paths = paths
        #: Sessions of the run before this one (their count seeds RLlib's session). One
        #: still ``running`` ended unrecorded: this process holds the folder now.
        self.previous_sessions = [
            {**s, "status": "aborted"} if s.get("status") == "running" else s
            for s in previous.get("sessions", [])
        ]
        self.session = Session(started="", start_timesteps=0)
        self.session_extra: dict[str, Any] = {}
        self.config: dict[str, Any] = {}
        self.done, self.wall = 0, 0.0  # timesteps and seconds trained in the current session

    def begin(
        self,
        start_timesteps: int,
        hyperparameters: dict[str, Any],
        versions: dict[str, str],
        resolved: dict[str, Any] | None = None,
        notes: dict[str, Any] | None = None,
        session: dict[str, Any] | None = None,
    ) -> None:
        """Record the session and write ``config.json`` with status ``training``:
        ``resolved`` follows the options (what ``auto`` became), ``notes`` the evaluation
        seed, ``session`` the framework's facts about the current session (cluster, ...)."""
        self.session = Session(
            started=datetime.now().isoformat(timespec="seconds"), start_timesteps=start_timesteps
        )
        self.session_extra = dict(session or {})
        self.config = {
            "options": self.opts,
            **(resolved or {}),
            "hyperparameters": hyperparameters,
            "eval_seed": EVAL_SEED + int(self.opts["seed"]),
            **(notes or {}),
            "versions": versions,
            "command": [sys.executable, *sys.argv],
            "status": "training",
            "sessions": [*self.previous_sessions, self.session_record()],
            "run_dir": str(self.paths.root),
        }
        self.write_config()

    def session_record(self) -> dict[str, Any]:
        s = self.session.__dict__
        return {
            "started": s["started"],
            "start_timesteps": s["start_timesteps"],
            **self.session_extra,
            **{k: v for k, v in s.items() if k not in ("started", "start_timesteps")},
        }

    def write_config(self, status: str | None = None) -> None:
        if status is not None:
            self.config["status"] = status
        if self.config.get("sessions"):
            self.config["sessions"][-1] = self.session_record()
        atomic_write_json(self.paths.config, self.config)

    def end_training(self, done: int, wall: float) -> None:
        """``done`` timesteps were trained in ``wall`` seconds (recorded with the status)."""
        self.done = done
        self.wall = wall
        self.session.train_wall_s = round(wall, 2)
        self.session.fps = session_fps(done, wall)

    def interrupted(self, timesteps: int, checkpoint: Path) -> int:
        """Training stopped at ``timesteps`` and ``checkpoint`` was saved: record it and say
        how to resume. Returns the exit status, 130."""
        self.session.end_timesteps = int(timesteps)
        self.session.status = "interrupted"
        self.write_config("interrupted")
        total = int(self.opts["timesteps"])
        print(
            f"{self.prog}: interrupted at {timesteps:,}/{total:,} timesteps; checkpoint "
            f"{checkpoint}; resume with: {resume_command(self.opts, total)}",
            file=sys.stderr,
        )
        return 130

    def trained(self, timesteps: int, what: str, path: Path) -> None:
        """The final ``what`` (model, checkpoint) is saved at ``path``."""
        self.session.end_timesteps = int(timesteps)
        self.session.status = "trained"
        self.write_config("trained")
        if self.done > 0:
            print(
                f"trained {self.done:,} timesteps in {self.wall:.1f} s "
                f"({self.session.fps:,.0f} fps); {what} {path}"
            )

    def interrupted_while_saving(self, path: Path) -> int:
        self.write_config("interrupted while saving")
        print(f"{self.prog}: interrupted while saving the model to {path}", file=sys.stderr)
        return 130

    def compare(
        self, env_id: str, model_path: Path, extra: dict[str, Any], saved: str = "model"
    ) -> bool:
        """The final comparison (:func:`final_comparison`); False when Ctrl-C stopped it."""
        return final_comparison(
            env_id, model_path, self.opts, self.paths, self.config, extra, self.prog, saved
        )

    def finish(self) -> int:
        """Record the run's wall time and print what the run folder holds
        (:func:`run_contents`). Returns the exit status, 0."""
        self.config["total_wall_s"] = round(time.perf_counter() - self.started, 2)
        atomic_write_json(self.paths.config, self.config)
        tb = self.paths.tensorboard
        tb_note = f" (tensorboard --logdir {tb})" if tb.is_dir() else ""
        written = ", ".join(run_contents(self.paths.root))
        print(
            f"\nwrote {self.paths.root}/: {written}{tb_note}; "
            f"total {self.config['total_wall_s']:.0f} s"
        )
        return 0
