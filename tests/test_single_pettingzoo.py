"""Pursuit and Evasion as team tasks with one learned agent: their PettingZoo forms
(``pursuit_v0``, ``evasion_v0``) pass PettingZoo's own tests and play exactly the episodes
of the Gymnasium envs from the same seeds and actions, in every form (single env, native
batch, SB3 slots, frames)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    seed_test,
)

import steer_env  # noqa: F401  (registers the ids)
from steer_env.envs import evasion_v0, pursuit_v0
from steer_env.tasks import REGISTRY, TEAM_TASKS

FORMS = {
    "pursuit": (pursuit_v0, "steer_env/Pursuit-v0", "pursuer_0"),
    "evasion": (evasion_v0, "steer_env/Evasion-v0", "evader_0"),
}
CONFIGS = [{}, {"n_opponents": 3, "max_observed_opponents": 2, "time_limit": 30}]


@pytest.mark.parametrize("name", FORMS)
def test_the_registry_entry_names_both_forms(name):
    module, env_id, agent = FORMS[name]
    task = REGISTRY[name]
    assert TEAM_TASKS[name] is task and task.env_id == env_id
    assert task.env_module == module.__name__
    assert module.parallel_env().possible_agents == [agent] == task.agent_names(task.config())


@pytest.mark.parametrize("name", FORMS)
def test_pettingzoo_api_seed_and_max_cycles_tests(name):
    module = FORMS[name][0]
    parallel_api_test(module.parallel_env(), num_cycles=300)
    parallel_seed_test(lambda: module.parallel_env(), num_cycles=100)
    api_test(module.env(), num_cycles=100)
    seed_test(module.env, num_cycles=50)
    max_cycles_test(module)


def _play_both(name: str, config: dict, seed: int, steps: int, actions_seed: int) -> None:
    """Step the Gymnasium env and the PettingZoo env side by side with the same actions
    (resets included) and assert every output equal."""
    module, env_id, agent = FORMS[name]
    gym_env = gym.make(env_id, **config)
    pz_env = module.parallel_env(**config)
    rng = np.random.default_rng(actions_seed)
    obs, info = gym_env.reset(seed=seed)
    pz_obs, pz_infos = pz_env.reset(seed=seed)
    assert pz_env.observation_space(agent).contains(pz_obs[agent])
    np.testing.assert_array_equal(obs, pz_obs[agent])
    assert info == pz_infos[agent]
    for _ in range(steps):
        action = rng.uniform(-1, 1, 2).astype(np.float32)
        obs, reward, terminated, truncated, info = gym_env.step(action)
        pz_obs, rewards, terms, truncs, pz_infos = pz_env.step({agent: action})
        np.testing.assert_array_equal(obs, pz_obs[agent])
        assert (reward, terminated, truncated, info) == (
            rewards[agent],
            terms[agent],
            truncs[agent],
            pz_infos[agent],
        )
        if terminated:
            assert pz_env.agents == []
            obs, info = gym_env.reset()  # unseeded: both continue their stream
            pz_obs, pz_infos = pz_env.reset()
            np.testing.assert_array_equal(obs, pz_obs[agent])


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "three_opponents"])
@pytest.mark.parametrize("name", FORMS)
def test_the_pettingzoo_form_plays_the_gymnasium_episodes(name, config):
    _play_both(name, config, seed=5, steps=250, actions_seed=0)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(FORMS)),
    seed=st.integers(0, 2**32),
    actions_seed=st.integers(0, 2**16),
    n_opponents=st.integers(1, 4),
)
def test_the_forms_agree_for_any_seed(name, seed, actions_seed, n_opponents):
    _play_both(name, {"n_opponents": n_opponents, "time_limit": 20}, seed, 45, actions_seed)


@pytest.mark.parametrize("name", FORMS)
def test_env_i_of_the_native_batch_is_the_parallel_env_seeded_seed_plus_i(name):
    module, _, agent = FORMS[name]
    num_envs, seed, steps = 3, 11, 120
    venv = module.vector_env(num_envs, time_limit=40)
    assert venv.possible_agents == [agent]
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (steps, num_envs, 1, 2))
    obs, infos = venv.reset(seed=seed)
    batched = [(obs, np.zeros((num_envs, 1)), np.zeros((num_envs, 1), dtype=bool))]
    for t in range(steps):
        obs, rewards, terms, truncs, infos = venv.step(actions[t])
        batched.append((obs, rewards, terms))
        assert infos["in_game"].shape == (num_envs, 1) and not truncs.any()
    for i in range(num_envs):
        env = module.parallel_env(time_limit=40)
        obs, _ = env.reset(seed=seed + i)
        np.testing.assert_array_equal(batched[0][0][i, 0], obs[agent])
        for t in range(steps):
            if not env.agents:  # NEXT_STEP autoreset: this step started the next episode
                obs, _ = env.reset()
                reward, term = 0.0, False
            else:
                obs, rewards, terms, _, _ = env.step({agent: actions[t, i, 0]})
                reward, term = rewards[agent], terms[agent]
            want_obs, want_rewards, want_terms = batched[t + 1]
            np.testing.assert_array_equal(want_obs[i, 0], obs[agent])
            assert (want_rewards[i, 0], want_terms[i, 0]) == (reward, term)


@pytest.mark.parametrize("name", FORMS)
def test_sb3_slots_of_the_pettingzoo_batch_equal_the_gymnasium_adapter(name):
    """``TeamSB3VecEnv`` over the one-agent batch gives SB3 the same experience as the
    single-agent adapter (``make_sb3_vec_env``) from the same seed."""
    from steer_env.envs.sb3 import make_sb3_vec_env, make_team_sb3_vec_env

    _, env_id, _ = FORMS[name]
    role = REGISTRY[name].learned_team
    single = make_sb3_vec_env(env_id, 4, seed=7, time_limit=25)
    team = make_team_sb3_vec_env(4, seed=7, role=role, task=name, time_limit=25)
    np.testing.assert_array_equal(single.reset(), team.reset())
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(60):
        action = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
        a, b = single.step(action), team.step(action)
        for x, y in zip(a[:3], b[:3], strict=True):
            np.testing.assert_array_equal(x, y)
        for info_a, info_b in zip(a[3], b[3], strict=True):
            if "terminal_observation" in info_a:
                ended += 1
                np.testing.assert_array_equal(
                    info_a["terminal_observation"], info_b["terminal_observation"]
                )
                assert info_a["is_success"] == info_b["is_success"]
    assert ended > 0


@pytest.mark.parametrize("name", FORMS)
def test_frames_and_state_of_the_two_forms(name, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    module, env_id, agent = FORMS[name]
    gym_env = gym.make(env_id, render_mode="rgb_array")
    pz_env = module.parallel_env(render_mode="rgb_array")
    gym_env.reset(seed=2)
    pz_env.reset(seed=2)
    for _ in range(5):
        gym_env.step(np.array([1.0, 0.2], dtype=np.float32))
        pz_env.step({agent: np.array([1.0, 0.2], dtype=np.float32)})
    np.testing.assert_array_equal(gym_env.render(), pz_env.render())
    assert pz_env.state_space.contains(pz_env.state())
    gym_env.close()
    pz_env.close()
