"""Helpers for ``train.py``: options, algorithm defaults, run folders, callbacks,
atomic checkpoints and resuming.

Run folder layout (``runs/<name>/``)::

    config.json          every option used, hyperparameters, versions, sessions, results
    model.zip            the final model (SB3 zip with a ``steer_env`` metadata dict)
    checkpoints/         ckpt_<timesteps>_steps.zip (+ replay_buffer.pkl for SAC)
    tb/                  tensorboard logs (``tensorboard --logdir runs/<name>/tb``)
    eval/evaluations.npz periodic evaluations (EvalCallback: rewards, lengths, successes)
    comparison.csv/.json, episodes.csv, survival.png   the final comparison
    episode.gif          learned vs classic agent on the same seed

Every model, buffer and JSON file is written to a temp file in its folder and moved into
place with ``os.replace`` (:func:`steer_env.cli.atomic_output`), so an interruption never
leaves a half-written file; the temp file of a run killed mid-write (SIGKILL) is deleted
when the run folder is next started or resumed (:func:`prepare_run_dir`).
"""

from __future__ import annotations

import json
import platform
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.policies import ENV_SHORT, METADATA_KEY, UsageError
from agents.evaluation.policies import ON_POLICY as ON_POLICY
from agents.evaluation.policies import (
    env_tag as env_tag,  # re-exported: its home is agents.evaluation.policy_base
)
from agents.evaluation.policies import resolve_device as resolve_device
from steer_env.cli import SEED_MAX, atomic_output, remove_stale_temporaries

#: Algorithms ``train.py`` trains.
TRAIN_ALGOS = ("ppo", "sac")

#: Default training budget (timesteps) per algorithm and env. PPO on Pursuit is the default
#: run of ``python train.py`` and must finish, with the comparison, in under 5 minutes on
#: 2 CPU cores.
DEFAULT_TIMESTEPS = {
    ("ppo", "pursuit"): 300_000,
    ("ppo", "team_pursuit"): 1_000_000,
    ("sac", "team_pursuit"): 50_000,
    ("ppo", "evasion"): 500_000,
    ("sac", "pursuit"): 50_000,
    ("sac", "evasion"): 50_000,
}
DEFAULT_N_ENVS = {"ppo": 16, "sac": 4}
#: Hyperparameters (constant learning rates, so resuming needs no schedule state).
HYPERPARAMS: dict[str, dict[str, Any]] = {
    "ppo": {
        "n_steps": 256,
        "batch_size": 1024,
        "n_epochs": 5,
        "learning_rate": 3e-4,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.0,
        "policy_kwargs": {"net_arch": [64, 64]},
    },
    "sac": {
        "learning_rate": 3e-4,
        "buffer_size": 1_000_000,  # capped at the training budget
        "batch_size": 256,
        "learning_starts": 1_000,
        "gamma": 0.99,
        "tau": 0.005,
        "train_freq": 1,
        "gradient_steps": 2,  # per step of the 4 envs: 1 update per 2 transitions
        # The rewards are small (shaping ~0.01 per step), so the default initial entropy
        # coefficient of 1 swamps them for tens of thousands of updates; start at 0.01.
        "ent_coef": "auto_0.01",
        "policy_kwargs": {"net_arch": [64, 64]},
    },
}
#: Seeds: training env ``i`` starts from ``seed + i``; the periodic evaluation uses
#: ``EVAL_SEED + seed`` each time (the same episodes at every evaluation); the final
#: comparison uses :data:`agents.evaluation.compare.DEFAULT_SEED` + k.
EVAL_SEED = 500_000
CHECKPOINT_RE = re.compile(r"^ckpt_(\d+)_steps\.zip$")
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


def trained_timesteps(algo: str, hp: dict[str, Any], n_envs: int, remaining: int) -> int:
    """How many timesteps ``model.learn(remaining)`` really trains: SB3 collects whole
    rollouts (PPO: ``n_steps * n_envs`` timesteps) or whole vector steps (SAC: ``n_envs``
    per step) until it has at least ``remaining``."""
    if remaining <= 0:
        return 0
    chunk = hp["n_steps"] * n_envs if algo in ON_POLICY else n_envs * int(hp.get("train_freq", 1))
    return -(-remaining // chunk) * chunk


def default_timesteps(algo: str, env_id: str) -> int:
    return DEFAULT_TIMESTEPS[(algo, ENV_SHORT.get(env_id, env_id))]


def hyperparameters(algo: str, n_envs: int, timesteps: int) -> dict[str, Any]:
    """The algorithm's hyperparameters adapted to ``n_envs`` and the budget."""
    hp = json.loads(json.dumps(HYPERPARAMS[algo]))
    if algo == "ppo":
        rollout = hp["n_steps"] * n_envs
        batch = min(hp["batch_size"], rollout)
        while rollout % batch:  # a divisor of the rollout: no truncated mini-batch
            batch -= 1
        hp["batch_size"] = max(batch, 2)
    else:
        hp["buffer_size"] = int(min(hp["buffer_size"], max(timesteps, 10_000)))
        hp["learning_starts"] = int(min(hp["learning_starts"], max(timesteps // 10, 100)))
    return hp


def versions() -> dict[str, str]:
    """Versions of Python and the libraries a run depends on."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for mod in ("steer_env", "numpy", "scipy", "gymnasium", "torch", "stable_baselines3"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - reported, never fatal
            out[mod] = "unavailable"
    return out


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
    def gif(self) -> Path:
        return self.root / "episode.gif"

    def checkpoint(self, timesteps: int) -> Path:
        return self.checkpoints / f"ckpt_{timesteps:09d}_steps.zip"


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
    import time

    from agents.evaluation import team
    from agents.evaluation.compare import format_table, run_comparison
    from agents.evaluation.policies import load_policy

    try:
        t1 = time.perf_counter()
        if team.is_team_env(env_id):
            record = team.final_team_comparison(
                model_path, opts, paths, opponent=extra.get("opponent")
            )
            config["status"] = "finished"
            config["comparison"] = {**record, "wall_s": round(time.perf_counter() - t1, 2)}
            return True
        policy = load_policy(model_path, env_id, device="cpu")
        summary = run_comparison(
            env_id,
            policy,
            int(opts["eval_episodes"]),
            int(opts["compare_seed"]),
            paths.root,
            extra=extra,
        )
        print()
        print(format_table(summary))
        compare_s = time.perf_counter() - t1
        if opts["gif"]:
            from agents.evaluation.render import render_gif

            render_gif(env_id, paths.gif, model=policy, seed=int(opts["compare_seed"]), side=True)
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
    config["comparison"] = {
        "episodes": summary["episodes"],
        "seed": int(opts["compare_seed"]),
        "wall_s": round(compare_s, 2),
        "goal": summary["goal"],
        "agents": {
            k: {
                "success_rate": v["success_rate"],
                "success_ci95": v["success_ci95"],
                "restricted_mean_time_s": v["restricted_mean_time_s"],
            }
            for k, v in summary["agents"].items()
        },
        "paired_vs_learned": summary["paired_vs_learned"],
    }
    return True


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write JSON through a temp file in the same folder and ``os.replace``
    (:func:`steer_env.cli.atomic_output`)."""
    from agents.evaluation.compare import atomic_write_json as write

    write(path, obj)


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


def model_timesteps(path: Path) -> int | None:
    """``num_timesteps`` stored in an SB3 zip (None if unreadable)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data"))
        return int(data["num_timesteps"])
    except Exception:
        return None


def latest_checkpoint(paths: RunPaths) -> tuple[Path, int] | None:
    """The most advanced resumable model of a run: the newest readable checkpoint, or
    ``model.zip`` when it holds more timesteps."""
    found: list[tuple[int, Path]] = []
    if paths.checkpoints.is_dir():
        for f in paths.checkpoints.iterdir():
            m = CHECKPOINT_RE.match(f.name)
            if m and model_timesteps(f) is not None:
                found.append((int(m.group(1)), f))
    if paths.model.is_file():
        t = model_timesteps(paths.model)
        if t is not None:
            found.append((t, paths.model))
    if not found:
        return None
    t, f = max(found, key=lambda x: (x[0], x[1].name != "model.zip"))
    return f, t


def save_model_atomic(model: Any, path: Path, metadata: dict[str, Any]) -> Path:
    """``model.save`` to a temp zip in ``path``'s folder, then ``os.replace`` onto ``path``
    (:func:`steer_env.cli.atomic_output`). ``metadata`` is stored in the zip's ``data`` JSON
    under ``steer_env``."""
    path = Path(path)
    setattr(model, METADATA_KEY, {**metadata, "num_timesteps": int(model.num_timesteps)})
    with atomic_output(path, ".tmp.zip") as tmp:
        model.save(tmp)
    return path


def save_replay_buffer_atomic(model: Any, path: Path) -> None:
    with atomic_output(path, ".tmp.pkl") as tmp:
        model.save_replay_buffer(tmp)


def save_checkpoint(model: Any, paths: RunPaths, metadata: dict[str, Any]) -> Path:
    """Checkpoint ``model`` (and, off-policy, its replay buffer) under ``checkpoints/``."""
    path = save_model_atomic(model, paths.checkpoint(int(model.num_timesteps)), metadata)
    if hasattr(model, "replay_buffer") and getattr(model, "replay_buffer", None) is not None:
        save_replay_buffer_atomic(model, paths.replay_buffer)
    return path


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


def make_callbacks(
    paths: RunPaths,
    checkpoint_freq: int,
    metadata: dict[str, Any],
    guard: InterruptGuard,
    eval_env: Any,
    eval_freq: int,
    eval_episodes: int,
    eval_seed: int,
    n_envs: int,
) -> tuple[Any, Any]:
    """``(checkpointer, CallbackList)``: periodic atomic checkpoints + stop on interrupt, and
    an :class:`~stable_baselines3.common.callbacks.EvalCallback` on a separate seeded
    eval env (success rate from ``infos["is_success"]``), its history kept across resumes."""
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, EvalCallback

    class Checkpointer(BaseCallback):
        """Checkpoints when a new rollout starts (the model has then been trained on every
        counted step) and stops training when an interrupt was requested."""

        def __init__(self) -> None:
            super().__init__()
            self.rollout_start = 0
            self.last_saved: Path | None = None
            self._next = checkpoint_freq

        def _init_callback(self) -> None:
            t = int(self.model.num_timesteps)
            self.rollout_start = t
            self._next = (t // checkpoint_freq + 1) * checkpoint_freq

        def _on_rollout_start(self) -> None:
            t = int(self.model.num_timesteps)
            self.rollout_start = t
            if t >= self._next:
                self.last_saved = save_checkpoint(self.model, paths, metadata)
                self._next = (t // checkpoint_freq + 1) * checkpoint_freq

        def _on_step(self) -> bool:
            return not guard.requested

    class SeededEval(EvalCallback):
        """EvalCallback that reseeds its env before each evaluation (same episodes every
        time) and continues the history in ``eval/evaluations.npz`` after a resume."""

        def _init_callback(self) -> None:
            super()._init_callback()
            f = paths.eval / "evaluations.npz"
            if f.is_file():
                try:
                    with np.load(f) as old:
                        self.evaluations_timesteps = list(old["timesteps"])
                        self.evaluations_results = [list(r) for r in old["results"]]
                        self.evaluations_length = [list(r) for r in old["ep_lengths"]]
                        if "successes" in old:
                            self.evaluations_successes = [list(r) for r in old["successes"]]
                except Exception:
                    pass  # a damaged history is replaced, never fatal

        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(eval_seed)
            return super()._on_step()

    ckpt = Checkpointer()
    evaluator = SeededEval(
        eval_env,
        n_eval_episodes=eval_episodes,
        eval_freq=max(1, eval_freq // n_envs),
        log_path=str(paths.eval),
        best_model_save_path=None,
        deterministic=True,
        verbose=0,
    )
    return ckpt, CallbackList([ckpt, evaluator])


@dataclass
class Session:
    """What one invocation of ``train.py`` did (recorded in config.json)."""

    started: str
    start_timesteps: int
    end_timesteps: int = 0
    train_wall_s: float = 0.0
    fps: float = 0.0
    status: str = "running"


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


def prepare_run_dir(paths: RunPaths, resume: bool, overwrite: bool) -> list[Path]:
    """Create the run folder. An existing one is an error unless ``resume`` (continue it) or
    ``overwrite`` (delete it first): :func:`check_new_run_dir`. Temporary files left by a run
    killed mid-write are deleted (never loaded: checkpoints are found by name); returns
    them."""
    import shutil

    root = paths.root
    if resume:
        _check_folder(root)
        if not paths.config.is_file():
            raise UsageError(f"cannot resume: {root} is not a run folder (no config.json)")
        return remove_stale_temporaries(root)
    if check_new_run_dir(paths, overwrite):
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    return remove_stale_temporaries(root)
