"""Infos, specs and argument errors as the ecosystem's tools read them.

Infos are flat and stable on every front end: the same keys, types and shapes from
``reset`` on (TorchRL, RLlib and PettingZoo's wrappers build their specs from the first
info they see). ``env.spec.max_episode_steps`` is the episode length. Unknown keyword
arguments raise an error that is a ``TypeError`` (what Python and Gymnasium's envs raise)
and a ``ValueError``.
"""

from __future__ import annotations

import copy
import importlib

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from pettingzoo.test import parallel_api_test, state_test

import steer_env  # noqa: F401
from steer_env.envs import team_pursuit_v0
from steer_env.envs.vector import SteerVectorEnv
from steer_env.tasks import TEAM_TASKS
from steer_env.tasks.config import UnknownArgumentError

IDS = ("steer_env/Pursuit-v0", "steer_env/Evasion-v0")
SINGLE_KEYS = {
    "distance": float,
    "reward_capture": float,
    "reward_escape": float,
    "reward_shaping": float,
    "is_success": bool,
    "capture_step": int,
}
TEAM_KEYS = {
    "distance",
    "reward_capture",
    "reward_escape",
    "reward_shaping",
    "captured",
    "captures",
    "evaders_captured",
    "evaders_left",
    "capture_steps",
}


def _signature(info: dict) -> dict:
    """Key -> (type, shape) of an info dict."""
    return {k: (type(v), np.shape(v)) for k, v in info.items()}


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_infos_are_flat_and_stable(env_id):
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    assert {k: type(v) for k, v in info.items()} == SINGLE_KEYS
    signature = _signature(info)
    rng = np.random.default_rng(0)
    terms_seen = 0.0
    for _ in range(300):
        _, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, 2))
        assert _signature(info) == signature
        terms = info["reward_capture"] + info["reward_escape"] + info["reward_shaping"]
        assert reward == pytest.approx(terms, abs=1e-12)
        terms_seen += abs(info["reward_shaping"])
        if terminated or truncated:
            captured = info["capture_step"] >= 0
            assert info["is_success"] == (captured if "Pursuit" in env_id else not captured)
            _, info = env.reset()
            assert _signature(info) == signature
        else:
            assert info["is_success"] is False and info["capture_step"] == -1
    assert terms_seen > 0


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_env_infos_are_flat_and_stable(mode):
    venv = gym.make_vec(
        "steer_env/Pursuit-v0", 4, vectorization_mode="vector_entry_point", autoreset_mode=mode
    )
    _, info = venv.reset(seed=0)
    keys = set(SINGLE_KEYS) | {f"_{k}" for k in SINGLE_KEYS}
    assert set(info) == keys
    assert all(np.shape(v) == (4,) for v in info.values())
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(150):
        _, _, terminated, _, info = venv.step(rng.uniform(-1, 1, (4, 2)))
        base = {
            k: v
            for k, v in info.items()
            if k not in ("final_obs", "_final_obs", "final_info", "_final_info")
        }
        assert set(base) == keys
        assert all(np.shape(v) == (4,) and not isinstance(v, dict) for v in base.values())
        assert not info["is_success"][~terminated].any()
        ended += int(terminated.sum())
        if mode == AutoresetMode.SAME_STEP and terminated.any():
            assert set(info["final_info"]) == keys
    assert ended > 0


def test_sync_vector_env_matches_the_native_infos():
    """Gymnasium's own ``SyncVectorEnv`` batches the single env's infos into the same keys
    and values the native vector env reports."""
    native = gym.make_vec("steer_env/Pursuit-v0", 3, vectorization_mode="vector_entry_point")
    sync = gym.make_vec("steer_env/Pursuit-v0", 3, vectorization_mode="sync")
    native.reset(seed=4)
    sync.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(120):
        a = rng.uniform(-1, 1, (3, 2))
        _, _, _, _, got = native.step(a)
        _, _, _, _, want = sync.step(a)
        assert set(got) == set(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)


@pytest.mark.parametrize("env_id", IDS)
def test_spec_max_episode_steps_is_the_time_limit(env_id):
    assert gym.make(env_id).spec.max_episode_steps == 100
    env = gym.make(env_id, time_limit=37)
    assert env.spec.max_episode_steps == 37
    assert env.unwrapped.spec.max_episode_steps == 37
    # The spec remakes the same env.
    again = gym.make(env.spec)
    assert again.unwrapped.config.time_limit == 37
    env.reset(seed=0)
    steps = 0
    while True:
        steps += 1
        _, _, terminated, truncated, _ = env.step(np.zeros(2))
        if terminated or truncated:
            break
    assert steps <= 37 and (terminated and not truncated)
    # Not made by gym.make: no spec, as for any Gymnasium env.
    assert type(env.unwrapped)().spec is None


def test_max_episode_steps_truncates_as_gymnasium_does():
    """``gym.make(id, max_episode_steps=N)`` adds Gymnasium's TimeLimit: episodes are cut
    (truncated) at N; the native vector env cuts the same episodes at the same step."""
    env = gym.make("steer_env/Evasion-v0", max_episode_steps=7)
    assert env.spec.max_episode_steps == 7
    venv = gym.make_vec(
        "steer_env/Evasion-v0", 2, vectorization_mode="vector_entry_point", max_episode_steps=7
    )
    env.reset(seed=11)
    venv.reset(seed=11)
    for _ in range(7):
        _, r, term, trunc, _ = env.step(np.zeros(2))
        _, vr, vterm, vtrunc, _ = venv.step(np.zeros((2, 2)))
        assert (r, term, trunc) == (vr[0], vterm[0], vtrunc[0])
    assert trunc and not term
    _, _, vterm, vtrunc, _ = venv.step(np.zeros((2, 2)))  # NEXT_STEP: the reset step
    assert not vterm.any() and not vtrunc.any()
    with pytest.raises(ValueError, match="max_episode_steps must be an integer"):
        SteerVectorEnv(2, "pursuit", max_episode_steps=0)


@pytest.mark.parametrize("env_id", IDS)
def test_unknown_arguments_are_type_errors_naming_them(env_id):
    accepted = r"got an unexpected keyword argument 'frameskip'; accepted arguments: n_opponents"
    with pytest.raises(TypeError, match=accepted) as err:
        gym.make(env_id, frameskip=4)
    assert isinstance(err.value, ValueError)
    with pytest.raises(TypeError, match="'bogus'"):
        gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", bogus=1)
    with pytest.raises(TypeError, match="'bogus'"):
        team_pursuit_v0.parallel_env(bogus=1)
    with pytest.raises(TypeError, match="got unexpected keyword arguments 'a', 'b'; accepted"):
        gym.make(env_id, b=1, a=2)


# ----------------------------------------------------------------------------- team env
@pytest.mark.parametrize("learned", ["pursuers", "evaders", "both"])
def test_team_infos_are_flat_and_stable(learned):
    env = team_pursuit_v0.parallel_env(learned=learned, n_evaders=2, time_limit=60)
    _, infos = env.reset(seed=2)
    signature = None
    rng = np.random.default_rng(2)
    for info in infos.values():
        assert set(info) == TEAM_KEYS
        assert not any(isinstance(v, dict | list) for v in info.values())
        signature = signature or _signature(info)
        assert _signature(info) == signature
    assert info["capture_steps"].shape == (2,) and info["capture_steps"].dtype == np.int64
    while env.agents:
        actions = {a: rng.uniform(-1, 1, 2) for a in env.agents}
        _, _, _, _, infos = env.step(actions)
        for info in infos.values():
            assert _signature(info) == signature


def test_team_state_space_bounds_state():
    env = team_pursuit_v0.parallel_env(learned="both", n_pursuers=2, n_evaders=2)
    env.reset(seed=0)
    assert env.state_space.shape == env.state().shape == (5 * 4,)
    rng = np.random.default_rng(0)
    while env.agents:
        assert env.state_space.contains(env.state())
        env.step({a: rng.uniform(-1, 1, 2) for a in env.agents})
    state_test(team_pursuit_v0.env(), team_pursuit_v0.raw_env())
    parallel_api_test(team_pursuit_v0.parallel_env(), num_cycles=50)


def test_team_env_copies_after_rendering():
    env = team_pursuit_v0.parallel_env(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    twin = copy.deepcopy(env)
    a = {name: np.array([1.0, 0.0]) for name in env.agents}
    np.testing.assert_array_equal(env.step(a)[0]["pursuer_0"], twin.step(a)[0]["pursuer_0"])
    assert twin.render().shape == frame.shape


@pytest.mark.parametrize("method", ["observation_space", "action_space"])
def test_team_spaces_of_unknown_agents_name_the_possible_ones(method):
    env = team_pursuit_v0.parallel_env()
    with pytest.raises(KeyError, match=r"'bogus' is not an agent.*pursuer_0") as err:
        getattr(env, method)("bogus")
    assert isinstance(err.value, ValueError)
    with pytest.raises(
        ValueError, match=r"'evader_0' is scripted in this env \(learned='pursuers'\)"
    ):
        getattr(env, method)("evader_0")


def test_team_argument_errors_name_what_was_passed():
    with pytest.raises(ValueError, match=r"max_cycles must be an integer in \[1, 1e\+07\], got 0"):
        team_pursuit_v0.parallel_env(max_cycles=0)
    with pytest.raises(ValueError, match="max_cycles=50 disagrees with time_limit=60"):
        team_pursuit_v0.parallel_env(max_cycles=50, time_limit=60)
    for make in (
        team_pursuit_v0.vector_env,
        lambda n: gym.make_vec("steer_env/Pursuit-v0", num_envs=n),
    ):
        for n in (2**40, 2**63, 0):
            with pytest.raises(
                ValueError, match=rf"num_envs must be an integer in \[1, 16777216\], got {n}"
            ):
                make(n)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        team_pursuit_v0.raw_env().step([0.0, 0.0])
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        team_pursuit_v0.parallel_env().step({})


def test_team_classic_evader_is_a_working_strategy():
    """``evader_strategy="classic"`` is listed as valid, so it must play: the classic evader
    (wall avoidance, evade, wander) with the team config's wander parameters."""
    env = team_pursuit_v0.parallel_env(evader_strategy="classic", wander_jitter=4.0)
    env.reset(seed=1)
    start = env.batch.state.position[0, -1].copy()
    for _ in range(20):
        env.step({a: np.zeros(2) for a in env.agents})
    assert np.isfinite(env.batch.state.position).all()
    assert not np.allclose(env.batch.state.position[0, -1], start)


def test_team_actions_of_departed_agents_are_ignored_as_documented():
    env = team_pursuit_v0.parallel_env(time_limit=3)
    env.reset(seed=0)
    names = list(env.agents)
    for _ in range(3):
        env.step({a: np.zeros(2) for a in env.agents})
    assert env.agents == []
    assert env.step({}) == ({}, {}, {}, {}, {})
    assert env.step({name: np.full(2, np.nan) for name in names}) == ({}, {}, {}, {}, {})
    with pytest.raises(ValueError, match="'bogus': that is not an agent"):
        env.step({"bogus": np.zeros(2)})


@pytest.mark.parametrize("function", ["parallel_env", "env", "raw_env", "vector_env"])
@pytest.mark.parametrize("name", sorted(TEAM_TASKS))
def test_task_is_no_argument_of_a_task_module(name, function):
    """A task's module binds its task: ``task=...`` is an unknown keyword like any other,
    refused with the arguments the module accepts."""
    module = importlib.import_module(TEAM_TASKS[name].env_module)
    with pytest.raises(UnknownArgumentError, match=r"'task'; accepted arguments: .*max_cycles"):
        getattr(module, function)(task=0)
