"""One registry of tasks, one task protocol, and front ends that take a task."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import steer_env  # noqa: F401  (registers the ids)
from steer_env.envs.team_pursuit_v0 import TeamPursuitEnv, TeamPursuitVectorEnv
from steer_env.envs.vector import SteerVectorEnv
from steer_env.tasks import REGISTRY, TASKS, TEAM_TASKS, TaskSpec, get_task, register
from steer_env.tasks.pursuit_evasion import PURSUIT
from steer_env.tasks.team_pursuit import TEAM_PURSUIT


def test_every_task_is_in_one_registry_and_implements_the_protocol():
    assert set(REGISTRY) == {"pursuit", "evasion", "team_pursuit", "herding", "crowd", "flocking"}
    rules = {
        "herding": "steer_env.rules.herding",
        "crowd": "steer_env.rules.crowd",
        "flocking": "steer_env.rules.flocking",
    }
    for name, task in REGISTRY.items():
        assert isinstance(task, TaskSpec)
        cfg = task.config()
        roster = task.roster(cfg)
        world = task.world(cfg)
        assert world.rules.__name__ == rules.get(name, "steer_env.rules.pursuit_evasion")
        learned = [v for v in roster if v.strategy is None]
        assert len(learned) == len(task.agent_names(cfg)) >= 1
        assert task.env_id is not None or task.env_module is not None


def test_the_two_tables_are_views_of_the_registry():
    assert list(TASKS) == ["pursuit", "evasion", "herding", "crowd", "flocking"]
    # Every task has a PettingZoo form: Pursuit and Evasion's is their one-agent view.
    assert list(TEAM_TASKS) == [
        "pursuit",
        "evasion",
        "team_pursuit",
        "herding",
        "crowd",
        "flocking",
    ]
    assert TASKS["pursuit"] is REGISTRY["pursuit"] is get_task("steer_env/Pursuit-v0")
    with pytest.raises(KeyError, match="not a single-agent task; those are pursuit, evasion"):
        TASKS["team_pursuit"]
    with pytest.raises(KeyError, match="not a team task"):
        TEAM_TASKS["nothing"]
    with pytest.raises(TypeError):
        TASKS["x"] = PURSUIT  # read-only


def test_register_refuses_duplicates_and_objects_outside_the_protocol():
    with pytest.raises(ValueError, match="already registered"):
        register(dataclasses.replace(PURSUIT, env_id="steer_env/Other-v0"))
    with pytest.raises(ValueError, match="already registered"):
        register(dataclasses.replace(PURSUIT, name="other"))
    with pytest.raises(TypeError, match="must implement TaskSpec"):
        register(object())
    assert set(REGISTRY) == {"pursuit", "evasion", "team_pursuit", "herding", "crowd", "flocking"}


def test_baselines_per_role_and_the_success_rule():
    assert list(PURSUIT.baselines_of("pursuer")) == ["classic", "naive"]
    assert list(TEAM_PURSUIT.baselines_of("pursuer")) == ["reynolds", "cooperative"]
    assert list(TEAM_PURSUIT.baselines_of("evader")) == ["flow"]
    with pytest.raises(ValueError, match="role must be one of pursuer for pursuit"):
        PURSUIT.baselines_of("evader")
    captured = np.array([True, False])
    np.testing.assert_array_equal(PURSUIT.is_success(captured), [True, False])
    np.testing.assert_array_equal(get_task("evasion").is_success(captured), [False, True])
    np.testing.assert_array_equal(TEAM_PURSUIT.is_success(captured, "evader"), [False, True])
    assert PURSUIT.is_success(True) is True and get_task("evasion").is_success(False) is True
    success, step = PURSUIT.outcome(np.array([1, 0]), np.array([False, False]), np.array([5, 9]))
    np.testing.assert_array_equal(success, [True, False])
    np.testing.assert_array_equal(step, [5, -1])


def test_a_vector_env_plays_any_task_object_it_is_given():
    """A task that is not registered (the pursuit task with three evaders by default)
    plays through the generic vector env as the registered one does with the same
    arguments."""
    three = dataclasses.replace(
        PURSUIT, default_config=dataclasses.replace(PURSUIT.default_config, n_opponents=3)
    )
    custom = SteerVectorEnv(4, three)
    registered = SteerVectorEnv(4, "pursuit", n_opponents=3)
    a, _ = custom.reset(seed=7)
    b, _ = registered.reset(seed=7)
    np.testing.assert_array_equal(a, b)
    actions = np.random.default_rng(0).uniform(-1, 1, (4, 2))
    for _ in range(20):
        a, ra, *_ = custom.step(actions)
        b, rb, *_ = registered.step(actions)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ra, rb)


def test_the_team_front_ends_take_a_task():
    two = dataclasses.replace(
        TEAM_PURSUIT,
        default_config=dataclasses.replace(TEAM_PURSUIT.default_config, n_pursuers=2),
    )
    env = TeamPursuitEnv(task=two)
    assert env.task is two and env.possible_agents == ["pursuer_0", "pursuer_1"]
    assert env.metadata["name"] == "team_pursuit_v0"
    obs, _ = env.reset(seed=1)
    reference = TeamPursuitEnv(n_pursuers=2)
    ref, _ = reference.reset(seed=1)
    for name in obs:
        np.testing.assert_array_equal(obs[name], ref[name])
    venv = TeamPursuitVectorEnv(3, task=two)
    assert venv.n_agents == 2
    venv.reset(seed=1)
    o, *_ = venv.step(np.zeros((3, 2, 2)))
    assert o.shape == (3, 2, venv.obs_dim)


def test_gymnasium_ids_come_from_the_registry():
    for task in TASKS.values():
        spec = gym.spec(task.env_id)
        assert spec.entry_point == task.entry_point
        assert spec.vector_entry_point == task.vector_entry_point


def test_every_task_env_class_is_exported_by_class_name_from_its_entry_point():
    import importlib

    import steer_env.envs as envs

    for task in TASKS.values():
        module, _, name = task.entry_point.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert getattr(envs, name) is cls
        assert name in envs.__all__ and name in dir(envs)
        namespace: dict = {}
        exec(f"from steer_env.envs import {name}", namespace)
        assert namespace[name] is cls
    with pytest.raises(AttributeError, match=r"'steer_env\.envs' has no attribute 'NoSuchEnv'"):
        envs.NoSuchEnv  # noqa: B018
