"""Names that moved keep working for a release, with a DeprecationWarning naming the new
place: the first release's scripted agents and ``python -m steer_env.gallery``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import steer_env  # noqa: F401
from agents.evaluation import scripted

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "old, env_id, baseline",
    [
        ("ClassicPursuer", "steer_env/Pursuit-v0", "classic"),
        ("NaivePursuer", "steer_env/Pursuit-v0", "naive"),
        ("ClassicEvader", "steer_env/Evasion-v0", "classic"),
    ],
)
def test_first_release_scripted_agents_warn_and_act_as_the_baseline(old, env_id, baseline):
    env = gym.make(env_id, n_opponents=1, time_limit=50)
    with pytest.warns(
        DeprecationWarning, match=rf"agents.scripted.{old} is deprecated.*ScriptedPolicy"
    ):
        agent = getattr(scripted, old)(env)
    new = scripted.ScriptedPolicy(env_id, baseline, config=env.unwrapped.config, seed=0)
    obs, _ = env.reset(seed=3)
    for _ in range(30):
        got, _ = agent.predict(obs)
        want, _ = new.predict(obs)
        np.testing.assert_array_equal(got, want)
        obs, _, term, trunc, _ = env.step(got)
        if term or trunc:
            break


def test_a_deprecated_agent_of_the_wrong_role_is_a_clear_error():
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="plays the evader"):
        scripted.ClassicEvader(gym.make("steer_env/Pursuit-v0"))


def test_old_gallery_module_warns_and_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "steer_env.gallery", "--list"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0
    assert "seek" in proc.stdout.split()
    assert "DeprecationWarning" in proc.stderr and "steer_env.demos.gallery" in proc.stderr
    with pytest.warns(DeprecationWarning, match="steer_env.demos.gallery"):
        sys.modules.pop("steer_env.gallery", None)
        import steer_env.gallery as old
    from steer_env.demos import gallery

    assert old.main is gallery.main and old.BEHAVIORS == gallery.BEHAVIORS


def test_team_pursuit_batch_names_moved_to_its_module_warn_and_are_the_same():
    from steer_env.envs import team_pursuit_v0, team_vector

    with pytest.warns(DeprecationWarning, match="team_pursuit_v0.TeamPursuitVectorEnv"):
        old = team_vector.TeamPursuitVectorEnv
    assert old is team_pursuit_v0.TeamPursuitVectorEnv
    with pytest.warns(DeprecationWarning, match="team_pursuit_v0.TASK"):
        assert team_vector.TASK is team_pursuit_v0.TASK
    with pytest.raises(AttributeError, match="no_such_name"):
        team_vector.no_such_name  # noqa: B018
    venv = old(num_envs=2)
    assert venv.reset(seed=0)[0].shape == (2, 3, 36)
