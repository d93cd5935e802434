"""The observation comes from one feature table: the writer, the decoder, the spaces and
the env docstrings all agree with it."""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401  (registers the ids)
from steer_env.engine.features import Feature, FeatureGroup, FeatureTable
from steer_env.envs import evasion_v0, herding_v0, pursuit_v0, team_pursuit_v0
from steer_env.envs.evasion import EvasionEnv
from steer_env.envs.herding import HerdingEnv
from steer_env.envs.pursuit import PursuitEnv
from steer_env.rules import herding as herding_rules
from steer_env.rules import pursuit_evasion as pe
from steer_env.tasks import get_task
from steer_env.tasks.team_pursuit import TEAM_PURSUIT


def _lines(text: str) -> list[str]:
    return [line.strip() for line in inspect.cleandoc(text).splitlines()]


def _contains(doc: str, table: str) -> bool:
    """Whether ``table``'s lines appear, consecutively, in ``doc``."""
    want, have = _lines(table), _lines(doc)
    return any(have[i : i + len(want)] == want for i in range(len(have)))


@pytest.mark.parametrize("env_class", [PursuitEnv, EvasionEnv])
def test_single_agent_docstrings_show_the_feature_table(env_class):
    assert _contains(env_class.__doc__, pe.FEATURES.markdown({"opponent": "K"}, ("teammate",)))


def test_herding_docstrings_show_the_feature_table():
    assert _contains(HerdingEnv.__doc__, herding_rules.FEATURES.markdown({"sheep": "K"}, ("dog",)))
    assert _contains(herding_v0.__doc__, herding_rules.FEATURES.rst({"dog": "D", "sheep": "K"}))


@pytest.mark.parametrize("module", [pursuit_v0, evasion_v0])
def test_one_agent_pettingzoo_docstrings_show_the_feature_table(module):
    assert _contains(module.__doc__, pe.FEATURES.rst({"opponent": "K"}, ("teammate",)))


def test_team_docstring_shows_the_feature_table():
    assert _contains(team_pursuit_v0.__doc__, pe.FEATURES.rst({"teammate": "T", "opponent": "O"}))


@pytest.mark.parametrize("name", ["pursuit", "evasion"])
def test_single_agent_spaces_and_sizes_come_from_the_table(name):
    task = get_task(name)
    env = gym.make(task.env_id, max_observed_opponents=2, n_opponents=3)
    world = env.unwrapped.batch.world
    low, high = pe.FEATURES.bounds(world)
    assert env.observation_space.shape == (pe.FEATURES.size(world),) == (11 + 5 * 2,)
    np.testing.assert_array_equal(env.observation_space.low, low)
    np.testing.assert_array_equal(env.observation_space.high, high)
    # The shipped models were trained on Box(-1, 1): the spaces must stay equal to it.
    assert env.observation_space == gym.spaces.Box(-1.0, 1.0, (21,), np.float32)


def test_team_spaces_come_from_the_table():
    env = team_pursuit_v0.parallel_env(n_pursuers=3, n_evaders=2, learned="both")
    world = TEAM_PURSUIT.world(env.config)
    size = pe.FEATURES.size(world)
    assert size == 11 + 5 * (2 + 3)
    for agent in env.possible_agents:
        assert env.observation_space(agent).shape == (size,)
    venv = team_pursuit_v0.vector_env(3, n_pursuers=3, n_evaders=2, learned="both")
    assert venv.observation_space.shape == (3, venv.n_agents, size)
    assert venv.observation_space == gym.spaces.Box(-1.0, 1.0, (3, 5, size), np.float32)


def test_named_positions_hold_what_the_table_says():
    """Write an observation, then read each feature by its name from the table."""
    env = gym.make("steer_env/Pursuit-v0")
    obs, _ = env.reset(seed=3)
    for _ in range(7):
        obs, *_ = env.step(np.array([0.6, -0.2], dtype=np.float32))
    base = env.unwrapped
    world = base.batch.world
    at = {name: i for i, name in enumerate(pe.FEATURES.names(world))}
    assert len(at) == obs.size
    assert obs[at["time"]] == pytest.approx(2 * 7 / world.time_limit - 1)
    assert obs[at["opponent_0.present"]] == 1.0
    heading = base.batch.state.heading[0, 0]
    velocity = base.batch.state.velocity[0, 0]
    forward = velocity @ heading / base.batch.vehicles["max_speed"][0]
    assert obs[at["velocity_forward"]] == pytest.approx(forward, abs=1e-6)
    half, x = world.arena_size / 2, base.batch.state.position[0, 0, 0]
    west = np.array([-half - x, 0.0])
    assert obs[at["west_wall_forward"]] == pytest.approx(west @ heading / world.arena_size, 1e-5)
    assert pe.FEATURES.position(world, "opponent", "present", 0) == at["opponent_0.present"]


def test_decoder_reads_the_positions_the_writer_wrote():
    """The classic baseline decodes its observation back into a state: the positions the
    table names, read back, give the state the env was in."""
    from agents.scripted import ScriptedPolicy

    env = gym.make("steer_env/Pursuit-v0")
    obs, _ = env.reset(seed=5)
    for _ in range(4):
        obs, *_ = env.step(np.array([0.3, 0.4], dtype=np.float32))
    policy = ScriptedPolicy("steer_env/Pursuit-v0", "classic")
    view = policy._view(1)
    view.load_observations(obs[None].astype(np.float64))
    state = env.unwrapped.batch.state
    np.testing.assert_allclose(view.state.position[0], state.position[0], atol=1e-3)
    np.testing.assert_allclose(view.state.velocity[0], state.velocity[0], atol=1e-3)
    np.testing.assert_allclose(view.state.heading[0, 0], state.heading[0, 0], atol=1e-4)


def test_tables_reject_ambiguous_or_out_of_range_features():
    f = Feature("x", "an x")
    with pytest.raises(ValueError, match="repeats a feature name"):
        FeatureGroup("g", (f, f))
    with pytest.raises(ValueError, match="repeat a name"):
        FeatureTable((FeatureGroup("g", (f,)), FeatureGroup("g", (f,))))
    with pytest.raises(ValueError, match="within the clip range"):
        FeatureTable((FeatureGroup("g", (Feature("y", "a y", 0.0, 2.0),)),))
    with pytest.raises(ValueError, match="rows must cover"):
        FeatureGroup("g", (f,), rows=((2, "two"),))
    with pytest.raises(KeyError, match="has no feature 'z'; it has x"):
        FeatureGroup("g", (f,)).index("z")


@settings(max_examples=30, deadline=None)
@given(teammates=st.integers(0, 6), opponents=st.integers(0, 6), obstacles=st.integers(0, 6))
def test_positions_tile_the_vector(teammates, opponents, obstacles):
    """Every position of the vector has exactly one (group, slot, feature) name."""

    class W:
        observed_teammates = teammates
        observed_opponents = opponents
        observed_obstacles = obstacles

    names = pe.FEATURES.names(W)
    assert len(names) == len(set(names)) == pe.FEATURES.size(W)
    assert len(names) == 11 + 5 * (teammates + opponents) + 4 * obstacles
    for i, name in enumerate(names):
        group, _, feature = name.rpartition(".")
        if group:
            kind, slot = group.rsplit("_", 1)
            assert pe.FEATURES.position(W, kind, feature, int(slot)) == i
        else:
            assert pe.FEATURES.position(W, "self", feature) == i
