"""``python -m steer_env.warmup``: in a fresh process with an empty numba cache it fills
the cache, and a later process using that cache plays the same episode as this one and
finds the step of every registered opponent strategy there."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import steer_env  # noqa: F401
from steer_env import warmup

ROOT = Path(__file__).resolve().parents[1]

EPISODE = """
import json
import gymnasium as gym
import numpy as np
import steer_env
env = gym.make("steer_env/Pursuit-v0")
obs, _ = env.reset(seed=7)
rows = [obs.tolist()]
for k in range(25):
    obs, *_ = env.step(np.array([np.cos(k), np.sin(k)], dtype=np.float32))
    rows.append(obs.tolist())
print(json.dumps(rows))
"""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    return {**env, "NUMBA_CACHE_DIR": str(cache)}


def _episode_here() -> list[list[float]]:
    """The same episode in this process (its kernels from this process's cache)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(EPISODE, {"__name__": "episode"})
    return json.loads(out.getvalue())


def test_warmup_fills_an_empty_cache_that_later_processes_use(tmp_path):
    cache = tmp_path / "numba_cache"
    r = subprocess.run(
        [sys.executable, "-m", "steer_env.warmup", "--tasks", "pursuit"],
        cwd=ROOT, env=_env(cache), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("pursuit: ") and lines[-1].startswith("warm in ")
    assert list(cache.rglob("*.nbi")), "the warm-up wrote no cache index"
    # A later process loads that cache and plays exactly this process's episode.
    r = subprocess.run(
        [sys.executable, "-c", EPISODE], cwd=ROOT, env=_env(cache), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == _episode_here()
    # Every strategy registered for the task's opponents was warmed too: the step compiled
    # for the flow evader's behaviours loads from the cache.
    r = subprocess.run(
        [sys.executable, "-c", NAMED_STRATEGY], cwd=ROOT, env=_env(cache), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == {"kinds": ["evade", "flow_field", "wall_avoidance"],
                                    "hits": 1, "misses": 0}  # fmt: skip


NAMED_STRATEGY = """
import json
import gymnasium as gym
import numpy as np
import steer_env
from steer_env.engine.layout import BEHAVIOR_KINDS
env = gym.make("steer_env/Pursuit-v0", opponent_strategy="flow")
env.reset(seed=0)
env.step(np.zeros(2, dtype=np.float32))
step = env.unwrapped.batch._entry("step")
kinds = step.py_func.__globals__["scripted_forces"].py_func.__globals__["KINDS"]
print(json.dumps({"kinds": sorted(BEHAVIOR_KINDS[k] for k in kinds),
                  "hits": sum(step.stats.cache_hits.values()),
                  "misses": sum(step.stats.cache_misses.values())}))
"""


def test_each_task_is_warmed_with_every_strategy_its_scripted_roles_have_by_name():
    from steer_env.tasks import REGISTRY, STRATEGIES

    evasion = warmup.named_strategies(REGISTRY["evasion"])
    assert evasion[0] == {} and [v["opponent_strategy"] for v in evasion[1:]] == list(
        STRATEGIES["pursuer"]
    )
    team = warmup.named_strategies(REGISTRY["team_pursuit"])
    assert {"learned": "evaders", "pursuer_strategy": "cooperative"} in team
    assert {"learned": "pursuers", "evader_strategy": "flow"} in team
    assert warmup.named_strategies(REGISTRY["herding"]) == [{}]


def test_every_task_of_the_registry_and_the_library_are_targets():
    from steer_env.tasks import REGISTRY

    assert list(warmup.targets()) == [*REGISTRY, warmup.LIBRARY]


def test_an_unknown_target_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown warm-up target 'nope': use pursuit, "):
        warmup.warm(["nope"])
    r = subprocess.run(
        [sys.executable, "-m", "steer_env.warmup", "--tasks", "nope"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "'nope'" in r.stderr


def test_warm_reports_each_target():
    seen = []
    seconds = warmup.warm(["evasion"], lambda name, s: seen.append((name, s)))
    assert list(seconds) == ["evasion"] and seen == [("evasion", seconds["evasion"])]


def test_first_step_refuses_an_unknown_task_by_name():
    with pytest.raises(ValueError, match="unknown task 'nope': use pursuit, "):
        warmup.first_step("nope")


WITHOUT_PETTINGZOO = """
import runpy, sys
sys.modules["pettingzoo"] = None  # as if the multiagent extra were not installed
sys.argv = ["train.py", *sys.argv[1:]]
runpy.run_path("train.py", run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.training
@pytest.mark.parametrize("env", ["pursuit", "herding"])
def test_train_py_runs_without_pettingzoo(env, tmp_path):
    """The README's first command installs the ``train`` and ``render`` extras only: the
    engine warm-up must not need PettingZoo for a task that also has a PettingZoo form."""
    args = ["--env", env, "--timesteps", "1024", "--n-envs", "2", "--episodes", "4",
            "--periodic-eval-episodes", "2", "--no-gif", "--no-progress",
            "--out", str(tmp_path)]  # fmt: skip
    if env == "herding":
        args += ["--set", "n_sheep=5", "--set", "time_limit=20"]
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_PETTINGZOO, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "SDL_VIDEODRIVER": "dummy", "MPLBACKEND": "Agg"},
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "pettingzoo" not in (r.stdout + r.stderr).lower()
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert json.loads((run / "config.json").read_text())["status"] == "finished"


@pytest.mark.parametrize(
    ("env", "config", "strategies"),
    [
        ("steer_env/Evasion-v0", {}, {("classic pursuer",)}),
        ("steer_env/Pursuit-v0", {"opponent_strategy": "flow"}, None),
        ("steer_env/Herding-v0", {"n_dogs": 2, "n_sheep": 5}, None),
    ],
)
def test_train_py_warms_what_its_run_steps_and_nothing_else(env, config, strategies, monkeypatch):
    """train.py's warm-up steps a one-env copy of its training env only: not the task's
    other forms, nor the strategies registered for the opponents' role (evasion has four
    pursuer strategies; each would compile its own specialised step in a fresh install)."""
    from agents.training import sb3
    from steer_env.engine.batch import Batch

    opts = {"env": env, "config": config}
    make_env, _, _ = sb3.env_factory(opts, dict(config))
    stepped: list[tuple[str, ...]] = []
    step = Batch.step

    def recording(self, *args, **kwargs):
        stepped.append(tuple(s.name for s in self.strategies))
        return step(self, *args, **kwargs)

    monkeypatch.setattr(Batch, "step", recording)
    sb3.warm_engine(env, make_env)
    training = make_env(2, 0)
    training.reset()
    training.step(np.zeros((training.num_envs, 2), dtype=np.float32))
    assert len(stepped) == 2 and stepped[0] == stepped[1]  # the warm-up, then the run's env
    if strategies is not None:
        assert set(stepped) == strategies
