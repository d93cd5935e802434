"""What a user gets from the package and its extras: type hints, Gymnasium's render
wrappers, and names and help texts that agree across commands."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import steer_env  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_ships_py_typed():
    assert resources.files("steer_env").joinpath("py.typed").is_file()
    toml = (ROOT / "pyproject.toml").read_text()
    assert 'steer_env = ["py.typed"]' in toml


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_gymnasium_vector_human_rendering_works_from_the_render_extra(mode):
    """Gymnasium's vector ``HumanRendering`` tiles the frames and resizes them with
    opencv, which the ``render`` extra brings in."""
    from gymnasium.wrappers.vector import HumanRendering

    venv = HumanRendering(
        gym.make_vec("steer_env/Pursuit-v0", 2, vectorization_mode=mode, render_mode="rgb_array")
    )
    venv.reset(seed=0)
    for _ in range(2):
        venv.step(np.zeros((2, 2), dtype=np.float32))
    venv.close()


def test_single_env_render_collection():
    env = gym.wrappers.RenderCollection(gym.make("steer_env/Pursuit-v0", render_mode="rgb_array"))
    env.reset(seed=0)
    env.step(np.zeros(2, dtype=np.float32))
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (600, 600, 3)


def test_run_folders_spell_the_env_as_every_command_does():
    """``train.py`` and ``python -m agents.compare`` name their folders by the task's short
    name (``pursuit``), whether the user typed the short name or the full id."""
    from agents.evaluation.compare import env_arg
    from agents.evaluation.policies import env_tag
    from agents.training.options import run_name

    expected = {
        "pursuit": "pursuit",
        "steer_env/Pursuit-v0": "pursuit",
        "evasion": "evasion",
        "steer_env/Evasion-v0": "evasion",
        "team_pursuit": "team_pursuit",
        "team_pursuit_v0": "team_pursuit",
    }
    for typed, tag in expected.items():
        assert env_tag(env_arg(typed)) == tag
        assert run_name(env_tag(env_arg(typed)), "ppo", 0).startswith(f"{tag}__ppo__0__")


def test_benchmark_help_names_each_option_by_its_own_name():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    for option, metavar in [
        ("--tasks", "TASKS"),
        ("--n-envs", "N_ENVS"),
        ("--sync-n-envs", "SYNC_N_ENVS"),
        ("--memory-n-envs", "MEMORY_N_ENVS"),
        ("--sb3-n-envs", "SB3_N_ENVS"),
    ]:
        assert f"{option} {metavar}" in out
    for stale in ("ENVS]", "NUM_ENVS", "SYNC_ENVS", "MEMORY_ENVS", "SB3_ENVS"):
        assert f" {stale}" not in out.replace("_N_ENVS", "")


def test_numba_has_an_upper_bound_and_the_suite_runs_within_it():
    """The engine relies on numba internals (the cache locator, entry points without
    reference counting), so the dependency is capped below the next minor release; a fresh
    install takes the newest release within the cap, which is what this suite checks."""
    import numba

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from packaging.requirements import Requirement
    from packaging.version import Version

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (numba_req,) = [Requirement(d) for d in deps if Requirement(d).name == "numba"]
    assert any(spec.operator == "<" for spec in numba_req.specifier)
    assert Version(numba.__version__) in numba_req.specifier
