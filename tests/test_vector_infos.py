"""Every info of every environment of a vector form, at every step and through its
autoresets, equals what the single env (Gymnasium) or the PettingZoo env reports for the
same seed and actions: on the step that restarts an environment (NEXT_STEP), its reset
info; the step's results hold nothing for an environment that was reset instead of
stepped, and no info may read them."""

from __future__ import annotations

import importlib

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401  (registers the ids)
from steer_env.tasks import REGISTRY, TASKS, TEAM_TASKS

#: Configurations drawn per task: short episodes (several autoresets), and the counts and
#: neighbourhoods that change what the infos read (the rows of departed and restarted envs).
PURSUIT_EVASION = st.fixed_dictionaries(
    {
        "time_limit": st.integers(5, 40),
        "n_opponents": st.integers(1, 3),
        "capture_radius": st.sampled_from([0.5, 3.5]),
        "n_obstacles": st.sampled_from([0, 5]),
    }
)
CONFIGS = {
    "pursuit": PURSUIT_EVASION,
    "evasion": PURSUIT_EVASION,
    "herding": st.fixed_dictionaries(
        {
            "time_limit": st.integers(5, 40),
            "n_sheep": st.integers(1, 12),
            "local_centre": st.integers(1, 12),
            "pen_radius": st.sampled_from([4.0, 15.0]),
            "n_obstacles": st.sampled_from([0, 5]),
        }
    ),
    "crowd": st.fixed_dictionaries(
        {
            "time_limit": st.integers(5, 40),
            "n_humans": st.integers(1, 8),
            "scenario": st.sampled_from(["circle_crossing", "square_crossing"]),
            "visible": st.booleans(),
            "goal_radius": st.sampled_from([0.3, 3.0]),
            "n_obstacles": st.sampled_from([0, 5]),
        }
    ),
    "flocking": st.fixed_dictionaries(
        {
            "time_limit": st.integers(5, 40),
            "n_boids": st.integers(1, 12),
            "n_predators": st.integers(0, 2),
            "catch_radius": st.sampled_from([0.5, 4.0]),
            "goal_radius": st.sampled_from([4.0, 6.0]),
            "n_obstacles": st.sampled_from([0, 5]),
        }
    ),
    "team_pursuit": st.fixed_dictionaries(
        {
            "time_limit": st.integers(5, 40),
            "n_pursuers": st.integers(1, 3),
            "n_evaders": st.integers(1, 2),
            "learned": st.sampled_from(["pursuers", "evaders", "both"]),
            "capture_radius": st.sampled_from([0.5, 3.0]),
            "n_obstacles": st.sampled_from([0, 5]),
        }
    ),
}
#: Extra draws of the PettingZoo form (several learned agents).
TEAM_EXTRAS = {
    "herding": st.fixed_dictionaries(
        {"n_dogs": st.integers(1, 4), "max_observed_dogs": st.sampled_from([None, 0])}
    ),
    "crowd": st.fixed_dictionaries(
        {"n_robots": st.integers(1, 3), "max_observed_robots": st.sampled_from([None, 0])}
    ),
    "flocking": st.fixed_dictionaries(
        {"n_learned": st.sampled_from([None, 1]), "observed_boids": st.sampled_from([None, 0])}
    ),
}


def _equal(got, want, what: str) -> None:
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=what)


def _play_gymnasium(task, cfg: dict, n: int, seed: int, steps: int, actions_seed: int, mode):
    """The vector env against ``n`` single envs seeded ``seed + i``, info by info."""
    rng = np.random.default_rng(actions_seed)
    actions = rng.uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    venv = gym.make_vec(
        task.env_id, n, vectorization_mode="vector_entry_point", autoreset_mode=mode, **cfg
    )
    _, vinfo = venv.reset(seed=seed)
    trace = [vinfo]
    for t in range(steps):
        trace.append(venv.step(actions[t])[4])
    restarts = 0
    for i in range(n):
        env = gym.make(task.env_id, **cfg)
        _, info = env.reset(seed=seed + i)
        for key, value in info.items():
            _equal(trace[0][key][i], value, f"reset env {i} {key}")
        ended = False
        for t in range(steps):
            got = trace[t + 1]
            if ended and mode == AutoresetMode.NEXT_STEP:
                _, info = env.reset()  # this step restarted env i
                ended = False
                restarts += 1
            else:
                _, _, term, trunc, info = env.step(actions[t, i])
                ended = term or trunc
                if ended and mode == AutoresetMode.SAME_STEP:
                    for key, value in info.items():
                        _equal(got["final_info"][key][i], value, f"final env {i} t {t} {key}")
                    _, info = env.reset()
                    ended = False
                    restarts += 1
            for key, value in info.items():
                assert got[f"_{key}"][i]
                _equal(got[key][i], value, f"env {i} step {t} {key}")
    venv.close()
    return restarts


def _play_pettingzoo(task, cfg: dict, n: int, seed: int, steps: int, actions_seed: int):
    """The task's native batch against ``n`` PettingZoo envs seeded ``seed + i``: every key
    both report, ``(E,)`` values for every agent, ``(E, k)`` ones for each."""
    module = importlib.import_module(task.env_module)
    venv = module.vector_env(n, **cfg)
    k = venv.n_agents
    rng = np.random.default_rng(actions_seed)
    actions = rng.uniform(-1, 1, (steps, n, k, 2))
    _, vinfo = venv.reset(seed=seed)
    trace = [vinfo]
    for t in range(steps):
        trace.append(venv.step(actions[t])[4])
    restarts = 0
    for i in range(n):
        env = module.parallel_env(**cfg)
        _, infos = env.reset(seed=seed + i)
        steps_infos = [infos]
        for t in range(steps):
            if not env.agents:  # NEXT_STEP: this step restarted env i
                _, infos = env.reset()
                restarts += 1
            else:
                act = {name: actions[t, i, env.possible_agents.index(name)] for name in env.agents}
                infos = env.step(act)[4]
            steps_infos.append(infos)
        for t, (got, infos) in enumerate(zip(trace, steps_infos, strict=True)):
            for name, info in infos.items():
                a = env.possible_agents.index(name)
                for key in set(info) & set(got):
                    value = np.asarray(got[key])
                    mine = value[i, a] if value.ndim >= 2 else value[i]
                    _equal(mine, info[key], f"env {i} t {t} {name} {key}")
    return restarts


GYM_TASKS = sorted(TASKS)
PZ_TASKS = sorted(TEAM_TASKS)


def test_every_task_has_configurations_drawn_here():
    assert set(GYM_TASKS) | set(PZ_TASKS) <= set(CONFIGS)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    name=st.sampled_from(GYM_TASKS),
    n=st.integers(1, 6),
    seed=st.integers(0, 2**31),
    actions_seed=st.integers(0, 2**16),
    mode=st.sampled_from([AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]),
)
def test_gymnasium_vector_infos_equal_the_single_envs(data, name, n, seed, actions_seed, mode):
    cfg = data.draw(CONFIGS[name], label="config")
    restarts = _play_gymnasium(REGISTRY[name], cfg, n, seed, 90, actions_seed, mode)
    assert restarts > 0  # episodes of at most 40 steps in 90


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    name=st.sampled_from(PZ_TASKS),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**31),
    actions_seed=st.integers(0, 2**16),
)
def test_pettingzoo_vector_infos_equal_the_parallel_envs(data, name, n, seed, actions_seed):
    cfg = data.draw(CONFIGS[name], label="config")
    if name in TEAM_EXTRAS:
        cfg = {**cfg, **data.draw(TEAM_EXTRAS[name], label="team")}
    cfg = {key: value for key, value in cfg.items() if value is not None}  # None: the default
    restarts = _play_pettingzoo(REGISTRY[name], cfg, n, seed, 90, actions_seed)
    assert restarts > 0


@pytest.mark.parametrize("form", ["gymnasium", "pettingzoo"])
def test_herding_autoreset_step_reports_the_new_episode_start(form):
    """The measured case: env 0's first autoreset after a full 300-step episode reported
    the last step's flock distance (stale memory) instead of the new start's."""
    task = REGISTRY["herding"]
    seed, n = 0, 8
    if form == "gymnasium":
        restarts = _play_gymnasium(task, {}, n, seed, 302, 1, AutoresetMode.NEXT_STEP)
    else:
        restarts = _play_pettingzoo(task, {"n_dogs": 2}, n, seed, 302, 1)
    assert restarts >= n


def test_many_dogs_without_dog_slots_report_finite_infos_through_resets():
    """16 dogs that see no other dog, one sheep, at 256 envs: an autoreset step once read
    NaN."""
    module = importlib.import_module(REGISTRY["herding"].env_module)
    cfg = {"n_dogs": 16, "max_observed_dogs": 0, "n_sheep": 1, "local_centre": 1}
    venv = module.vector_env(256, time_limit=8, **cfg)
    venv.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, _, _, _, info = venv.step(rng.uniform(-1, 1, (256, 16, 2)))
        for key, value in info.items():
            assert np.isfinite(np.asarray(value, dtype=np.float64)).all(), key
        assert info["reward_shaping"].shape == (256, 16)


def test_each_dog_has_its_own_shaping_in_both_forms():
    """Two dogs: the shaping term is each dog's own (its distance to Strömbom's point),
    the same in the batched form ``(E, k)`` as in the parallel env, and each dog's reward
    is the sum of its terms."""
    module = importlib.import_module(REGISTRY["herding"].env_module)
    venv = module.vector_env(2, n_dogs=2)
    _, reset_info = venv.reset(seed=0)
    assert reset_info["reward_shaping"].shape == (2, 2)
    actions = np.random.default_rng(0).uniform(-1, 1, (2, 2, 2))
    _, rewards, _, _, info = venv.step(actions)
    assert info["reward_shaping"].shape == info["reward_success"].shape == (2, 2)
    env = module.parallel_env(n_dogs=2)
    env.reset(seed=1)
    _, want, _, _, infos = env.step({"dog_0": actions[1, 0], "dog_1": actions[1, 1]})
    for a, name in enumerate(env.possible_agents):
        assert info["reward_shaping"][1, a] == infos[name]["reward_shaping"]
        assert rewards[1, a] == want[name]
        assert rewards[1, a] == info["reward_success"][1, a] + info["reward_shaping"][1, a]
    assert info["reward_shaping"][1, 0] != info["reward_shaping"][1, 1]
