"""Scripted teams of the team pursuit task acting from observations: one
:class:`~agents.scripted.ScriptedPolicy` per role, driving every agent of the role from that
agent's observation, plays the very trajectories of the engine's scripted team."""

from __future__ import annotations

import numpy as np
import pytest

from agents.evaluation.scripted import ScriptedPolicy
from steer_env.envs import team_pursuit_v0
from steer_env.envs.sb3 import make_team_sb3_vec_env
from steer_env.tasks import TEAM_TASKS

TASK = TEAM_TASKS["team_pursuit"]
E = 32
#: Steps over which every environment must follow the engine's scripted team. Like
#: tests/test_agents.py::test_observation_rebuilds_the_scene, agreement is to float32
#: observation precision (1e-5 m); later, rounding can tip a discrete choice (a
#: prioritized behaviour's range, the pursuers' bearing order) and a few episodes part.
STEPS = 40
ATOL = 1e-5

CASES = [
    ("reynolds", "pursuers", {"pursuer_strategy": "reynolds"}),
    ("cooperative", "pursuers", {"pursuer_strategy": "cooperative"}),
    ("flow", "evaders", {}),
    ("cooperative", "pursuers", {"pursuer_strategy": "cooperative", "n_pursuers": 4}),
    ("flow", "evaders", {"n_pursuers": 2, "n_evaders": 3}),
]


@pytest.mark.parametrize("name,learned,overrides", CASES)
def test_observation_policy_reproduces_the_engine_scripted_team(name, learned, overrides):
    """Every agent of the learned role driven by the observation-based policy follows the
    engine-scripted team's trajectories (``learned="none"``, the same strategy and seed)."""
    scripted = team_pursuit_v0.vector_env(E, learned="none", **overrides)
    driven = team_pursuit_v0.vector_env(E, learned=learned, **overrides)
    scripted.reset(seed=100)
    obs, _ = driven.reset(seed=100)
    policy = ScriptedPolicy(TASK, name, config={"learned": learned, **overrides})
    assert policy.role == ("pursuer" if learned == "pursuers" else "evader")
    assert obs.shape[1] == (
        overrides.get("n_pursuers", 3) if learned == "pursuers" else overrides.get("n_evaders", 1)
    )
    ref, state = scripted.batch.state, driven.batch.state
    for _ in range(STEPS):
        actions, _ = policy.predict(obs)
        assert actions.shape == (*obs.shape[:2], 2)
        scripted.step(np.zeros((E, 0, 2)))
        obs, *_ = driven.step(actions)
        np.testing.assert_allclose(state.position, ref.position, atol=ATOL)
        np.testing.assert_allclose(state.velocity, ref.velocity, atol=ATOL)
        np.testing.assert_array_equal(state.alive, ref.alive)


def test_cooperative_rank_is_the_bearing_order_not_the_roster_order():
    """Relabelling the pursuers (permuting the roster) does not change where the team goes:
    the spread uses each pursuer's bearing order around the evader, which its observation
    shows, not its roster index."""
    from steer_env.tasks.team_pursuit import TEAM_PURSUIT

    cfg = TEAM_PURSUIT.config(learned="none", pursuer_strategy="cooperative")
    a = team_pursuit_v0.vector_env(8, learned="none", pursuer_strategy="cooperative")
    a.reset(seed=7)
    for _ in range(10):
        a.step(np.zeros((8, 0, 2)))
    batch = a.batch
    force = batch.scripted_forces()
    perm = np.array([2, 0, 1, 3])
    from steer_env.engine.batch import Batch

    b = Batch(TEAM_PURSUIT.roster(cfg), TEAM_PURSUIT.world(cfg), 8)
    for field in ("position", "velocity", "heading", "alive"):
        getattr(b.state, field)[:] = getattr(batch.state, field)[:, perm]
    np.testing.assert_allclose(b.scripted_forces(), force[:, perm], atol=1e-12)


def test_team_policy_interface_and_errors():
    venv = team_pursuit_v0.vector_env(4, learned="pursuers", pursuer_strategy="cooperative")
    obs, _ = venv.reset(seed=3)
    policy = ScriptedPolicy("team_pursuit", "cooperative")
    one, state = policy.predict(obs[0, 0])
    assert state is None and one.shape == (2,) and one.dtype == np.float32
    grid, _ = policy.predict(obs)
    assert grid.shape == (4, 3, 2) and np.all(np.abs(grid) <= 1.0)
    # The same observation, the same action, from a fresh policy, in any row order.
    again, _ = ScriptedPolicy(TASK, "cooperative").predict(obs[::-1])
    np.testing.assert_array_equal(again, grid[::-1])
    assert ScriptedPolicy(TASK, "flow", config={"learned": "evaders"}).role == "evader"
    with pytest.raises(ValueError, match="unknown baseline 'naive'"):
        ScriptedPolicy(TASK, "naive")
    with pytest.raises(ValueError, match="role 'evader'"):
        ScriptedPolicy(TASK, "reynolds", role="evader")
    with pytest.raises(ValueError, match="observations must end with"):
        policy.predict(np.zeros(5, dtype=np.float32))


def test_team_policy_behind_the_sb3_adapter():
    venv = make_team_sb3_vec_env(4, seed=0, pursuer_strategy="reynolds")
    policy = ScriptedPolicy(TASK, "reynolds")
    obs = venv.reset()
    assert obs.shape == (12, policy.obs_dim)
    successes = []
    for _ in range(TASK.default_config.time_limit):
        actions, _ = policy.predict(obs)
        assert actions.shape == (12, 2)
        obs, _, dones, infos = venv.step(actions)
        successes += [info["is_success"] for info, d in zip(infos, dones, strict=True) if d]
    assert successes  # every environment's first episode ended by the time limit
    venv.close()
