"""The herding task: Strömbom's sheep and dog written with the classic behaviours, the
pen rules, its Gymnasium and PettingZoo front ends, bad input and the calibration."""

from __future__ import annotations

import math
import os

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401
from steer_env import behaviors
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.envs.sb3 import make_sb3_vec_env
from steer_env.rules import herding as herding_rules
from steer_env.tasks import REGISTRY

TASK = REGISTRY["herding"]
ID = "steer_env/Herding-v0"
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def _play(name, episodes, seed=1000, **kwargs):
    env = gym.make_vec(ID, num_envs=episodes, vectorization_mode="vector_entry_point", **kwargs)
    policy = TASK.scripted_policy(name, env.unwrapped.config)
    obs, _ = env.reset(seed=seed)
    done = np.zeros(episodes, bool)
    success = np.zeros(episodes, bool)
    for _ in range(env.unwrapped.config.time_limit + 1):
        action, _ = policy.predict(obs)
        obs, _, terminated, truncated, info = env.step(action)
        ended = (terminated | truncated) & ~done
        success[ended] = info["is_success"][ended]
        done |= ended
        if done.all():
            break
    env.close()
    assert done.all()
    return success


# --------------------------------------------------------------------------- the library
def test_shepherd_target_collects_a_straggler_and_drives_a_tight_flock():
    centre, goal = np.array([0.0, 0.0]), np.array([10.0, 0.0])
    # A straggler 5 m above the centre, beyond a 4 m limit: aim 1 m beyond it.
    target, collecting = behaviors.shepherd_target(centre, [0.0, 5.0], goal, 4.0, 1.0, 3.0)
    assert collecting and np.allclose(target, [0.0, 6.0])
    # Within the limit: drive from 3 m behind the centre, away from the goal.
    target, collecting = behaviors.shepherd_target(centre, [0.0, 3.0], goal, 4.0, 1.0, 3.0)
    assert not collecting and np.allclose(target, [-3.0, 0.0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50), min_size=6, max_size=6),
    st.floats(0.1, 20),
    st.floats(0.0, 5),
    st.floats(0.0, 20),
)
def test_shepherd_target_lies_on_its_line_at_its_distance(xs, limit, collect, drive):
    c, f, g = np.array(xs[0:2]), np.array(xs[2:4]), np.array(xs[4:6])
    target, collecting = behaviors.shepherd_target(c, f, g, limit, collect, drive)
    assert np.all(np.isfinite(target))
    if collecting:
        assert np.linalg.norm(f - c) > limit
        assert np.isclose(np.linalg.norm(target - f), collect, atol=1e-9)
    elif np.linalg.norm(c - g) > 1e-6:
        assert np.isclose(np.linalg.norm(target - c), drive, atol=1e-9)
        # Behind the centre as seen from the goal.
        assert np.linalg.norm(target - g) >= np.linalg.norm(c - g) - 1e-9


# --------------------------------------------------------------------------- the engine
def _flock_batch(strategy, n=6, positions=None):
    roster = [VehicleSpec("dog", None, 1.0, 3.0, 6.0, 0.5)] + [
        VehicleSpec("sheep", strategy, 1.0, 2.0, 4.0, 0.5)
    ] * n
    world = TASK.world(TASK.config(n_sheep=n, observed_sheep=n))
    batch = Batch(roster, world, 1)
    batch.reset(None, np.array([7], dtype=np.uint64))
    if positions is not None:
        batch.state.position[0] = positions
        batch.state.velocity[0] = 0.0
    return batch


def test_topological_cohesion_seeks_the_centre_of_the_k_nearest():
    """cohesion with neighbor_count k: the force is the library's seek of the mean of the
    k nearest teammates (ties by index), whatever the farther ones do."""
    k = 2
    strategy = Strategy(
        [Behavior("cohesion", target="teammates", neighbor_radius=math.inf, neighbor_count=k)],
        combination="weighted_sum",
    )
    positions = np.array(
        [[40.0, 40.0], [0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [10.0, 10.0], [0, -20.0]]
    )
    batch = _flock_batch(strategy, positions=positions)
    force = batch.scripted_forces()[0]
    sheep = positions[1:]
    for i in range(1, 7):
        d = np.linalg.norm(sheep - positions[i], axis=1)
        d[i - 1] = np.inf
        nearest = np.lexsort((np.arange(6), d))[:k]
        centre = sheep[nearest].mean(axis=0)
        expected = behaviors.seek(positions[i], np.zeros(2), centre, 2.0)
        assert np.allclose(force[i], expected), i


@settings(max_examples=40, deadline=None)
@given(
    st.data(),
    st.sampled_from([3, 9, 25, 70]),  # both of kth_nearest's ranking routes (COUNT_SELECT_MAX)
)
def test_topological_neighbourhoods_match_a_sorted_reference(data, n):
    """For any flock (on a lattice, so many distances tie) and any k, each sheep's cohesion
    is the seek of the mean of its k nearest by (distance, index): by counting up to
    COUNT_SELECT_MAX vehicles, by insertion above, the same."""
    from steer_env.engine.step import COUNT_SELECT_MAX

    assert (n + 1 <= COUNT_SELECT_MAX) == (n < 70)
    k = data.draw(st.integers(1, n + 1), label="k")
    cells = data.draw(
        st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), min_size=n, max_size=n),
        label="cells",
    )
    strategy = Strategy(
        [Behavior("cohesion", target="teammates", neighbor_radius=math.inf, neighbor_count=k)],
        combination="weighted_sum",
    )
    positions = np.array([[45.0, 45.0], *cells], dtype=float)
    force = _flock_batch(strategy, n=n, positions=positions).scripted_forces()[0]
    sheep = positions[1:]
    for i in range(1, n + 1):
        d = np.linalg.norm(sheep - positions[i], axis=1)
        d[i - 1] = np.inf
        nearest = np.lexsort((np.arange(n), d))[: min(k, n - 1)]
        centre = sheep[nearest].mean(axis=0) if len(nearest) else positions[i]
        expected = behaviors.seek(positions[i], np.zeros(2), centre, 2.0) if len(nearest) else 0
        assert np.allclose(force[i], expected), (i, k)


def test_a_flocking_behaviour_outside_its_window_is_not_computed_and_adds_nothing():
    """cohesion with active_within: zero while the dog is beyond it, the full cohesion once
    it is within (the engine skips the neighbour pass where the window excludes it)."""
    within = Strategy(
        [
            Behavior(
                "cohesion",
                target="teammates",
                neighbor_radius=math.inf,
                neighbor_count=2,
                active_within=10.0,
            )
        ],
        combination="weighted_sum",
    )
    always = Strategy(
        [Behavior("cohesion", target="teammates", neighbor_radius=math.inf, neighbor_count=2)],
        combination="weighted_sum",
    )
    positions = np.array([[-40.0, 0.0], [0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    far = _flock_batch(within, n=3, positions=positions).scripted_forces()[0]
    assert np.all(far[1:] == 0.0)
    positions[0] = [1.0, 1.0]  # the dog within 10 m of every sheep
    near = _flock_batch(within, n=3, positions=positions).scripted_forces()[0]
    reference = _flock_batch(always, n=3, positions=positions).scripted_forces()[0]
    assert np.array_equal(near[1:], reference[1:])
    assert np.all(np.linalg.norm(near[1:], axis=1) > 0)


def test_active_within_flocks_only_while_a_dog_is_near():
    strategy = Strategy(
        [Behavior("seek", target="arena_center", active_within=10.0)], combination="weighted_sum"
    )
    positions = np.array([[30.0, 0.0], [20.0, 0.0]])
    batch = _flock_batch(strategy, n=1, positions=positions)
    batch.state.position[0, 0] = [5.0, 0.0]  # the dog 15 m away: beyond active_within
    assert np.allclose(batch.scripted_forces()[0, 1], 0.0)
    batch.state.position[0, 0] = [25.0, 0.0]  # now 5 m away: seek acts
    assert np.allclose(batch.scripted_forces()[0, 1], [-2.0, 0.0])


def test_grazing_wander_ambles_at_its_fraction_of_max_speed():
    strategy = Strategy(
        [Behavior("wander", wander_speed=0.05, wander_jitter=0.0)], combination="weighted_sum"
    )
    batch = _flock_batch(strategy, n=1)
    for _ in range(200):
        batch.step(np.zeros((1, 1, 2)))
    speed = np.linalg.norm(batch.state.velocity[0, 1])
    assert speed == pytest.approx(0.05 * 2.0, rel=1e-2)


@pytest.mark.parametrize(
    "bad",
    [
        {"neighbor_count": -1},
        {"neighbor_count": 1.5},
        {"wander_speed": 0.0},
        {"wander_speed": 2.0},
        {"active_within": -1.0},
        {"active_within": math.nan},
    ],
)
def test_behavior_rejects_bad_herding_parameters(bad):
    (name,) = bad
    with pytest.raises(ValueError, match=name):
        Behavior("cohesion", **bad)


# --------------------------------------------------------------------------- the env
def test_the_observed_target_is_strombom_s_point_from_the_observed_flock():
    """The observation's target group is Strömbom's collect/drive point: recomputed from
    the same observation's flock centre, farthest sheep and pen with the numpy
    ``shepherd_target`` (the kernel the compiled writer calls), it agrees to float32
    precision, and the flag says which of the two it is; both occur in a played episode."""
    env = gym.make_vec(ID, num_envs=16, vectorization_mode="vector_entry_point")
    cfg = env.unwrapped.config
    world = TASK.world(cfg)
    features = herding_rules.FEATURES
    at = {
        name: features.position(world, group, feature)
        for name, (group, feature) in {
            "pen": ("pen", "offset_forward"),
            "centre": ("flock", "centre_forward"),
            "farthest": ("flock", "farthest_forward"),
            "target": ("target", "target_forward"),
            "collecting": ("target", "collecting"),
        }.items()
    }
    diag = cfg.arena_size * math.sqrt(2.0)
    policy = TASK.scripted_policy("strombom", cfg)
    obs, _ = env.reset(seed=3)
    seen = set()
    for _ in range(120):
        o = obs.astype(np.float64)

        def vec(key, o=o):
            return o[:, at[key] : at[key] + 2] * diag

        want, collecting = behaviors.shepherd_target(
            vec("centre"), vec("farthest"), vec("pen"),
            cfg.collect_distance, cfg.repulsion_distance, cfg.drive_distance,
        )  # fmt: skip
        inside = np.all(np.abs(want) < 0.99 * diag, axis=1)
        # The centre and the straggler are float32 in the observation: a straggler within
        # a hair of the collect limit may fall on either side; compare where it does not.
        far = np.hypot(*(vec("farthest") - vec("centre")).T)
        clear = inside & (np.abs(far - cfg.collect_distance) > 0.05)
        np.testing.assert_allclose(vec("target")[clear], want[clear], atol=0.01)
        np.testing.assert_array_equal(o[clear, at["collecting"]], collecting[clear])
        seen.update(collecting[clear].tolist())
        obs, *_ = env.step(policy.predict(obs)[0])
    assert seen == {True, False}


def test_gymnasium_and_sb3_checkers_pass():
    from gymnasium.utils.env_checker import check_env

    env = gym.make(ID)
    check_env(env.unwrapped, skip_render_check=True)
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check

    sb3_check(gym.make(ID).unwrapped, warn=True)


def test_invariants_over_an_episode():
    env = gym.make(ID, n_sheep=30)
    obs, info = env.reset(seed=3)
    space = env.observation_space
    rng = np.random.default_rng(0)
    speeds = env.unwrapped.max_speeds
    for _ in range(300):
        obs, reward, terminated, _truncated, info = env.step(
            rng.uniform(-1, 1, 2).astype(np.float32)
        )
        assert space.contains(obs)
        v = np.linalg.norm(env.unwrapped.velocities, axis=1)
        assert np.all(v <= speeds + 1e-9)
        assert abs(env.unwrapped.positions).max() <= 50.0
        assert reward == pytest.approx(info["reward_success"] + info["reward_shaping"])
        if terminated:
            break
    assert info["pen_step"] == (env.unwrapped.elapsed_steps if info["is_success"] else -1)


def _potential(env, cfg) -> float:
    """The documented phi of the env's current flock and dog, from its positions."""
    dog, sheep = env.unwrapped.positions[0], env.unwrapped.positions[1:]
    centre = sheep.mean(axis=0)
    pen = np.array([cfg.pen_x, cfg.pen_y])
    distance = np.linalg.norm(centre - pen)
    offsets = np.linalg.norm(sheep - centre, axis=1)
    spread = offsets.mean()
    penned = np.mean(np.linalg.norm(sheep - pen, axis=1) <= cfg.pen_radius)
    diagonal = cfg.arena_size * math.sqrt(2)
    away = (distance + cfg.spread_weight * spread) / diagonal
    target, _ = behaviors.shepherd_target(
        centre, sheep[np.argmax(offsets)], pen,
        cfg.collect_distance, cfg.repulsion_distance, cfg.drive_distance,
    )  # fmt: skip
    near = np.linalg.norm(dog - target) / diagonal
    return cfg.shaping_scale * (cfg.penned_weight * penned - away - cfg.target_weight * near)


@pytest.mark.parametrize("terminal_potential", [False, True])
def test_shaping_sums_to_the_potentials_of_the_first_and_last_state(terminal_potential):
    """Discounted by shaping_gamma, an episode's shaping terms sum to -phi(s_0) (phi = 0
    at the end), or with terminal_potential to gamma^T phi(s_T) - phi(s_0)."""
    kwargs = dict(n_sheep=6, time_limit=40, terminal_potential=terminal_potential)
    env = gym.make(ID, **kwargs)
    cfg = TASK.config(**kwargs)
    env.reset(seed=11)
    start = _potential(env, cfg)
    rng = np.random.default_rng(1)
    total, t, terminated = 0.0, 0, False
    while not terminated:
        _, _, terminated, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        total += cfg.shaping_gamma**t * info["reward_shaping"]
        t += 1
    end = cfg.shaping_gamma**t * _potential(env, cfg) if terminal_potential else 0.0
    assert total == pytest.approx(end - start, abs=1e-9)
    assert (end != 0.0) == terminal_potential


def test_success_when_the_flock_is_in_the_pen_and_its_outcome():
    env = gym.make(ID, n_sheep=4, success_fraction=0.75)
    env.reset(seed=0)
    batch = env.unwrapped.batch
    pen = np.array([35.0, 35.0])
    batch.state.position[0, 1:4] = pen + np.array([[0, 0], [1, 0], [0, 1]])  # 3 of 4 in
    batch.state.position[0, 4] = [-30.0, -30.0]
    batch.state.velocity[0] = 0.0
    _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["is_success"] and info["pen_step"] == 1
    assert info["reward_success"] == TASK.config().success_reward == 10.0
    assert info["penned_fraction"] == 0.75
    assert info["fragmentation"] == 0.75  # the three penned sheep are one group
    assert info["dog_path"] >= 0.0


def test_vector_env_i_equals_a_single_env_seeded_seed_plus_i():
    venv = gym.make_vec(ID, num_envs=3, vectorization_mode="vector_entry_point")
    obs_v, _ = venv.reset(seed=11)
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (40, 3, 2)).astype(np.float32)
    trace_v = [obs_v]
    for a in actions:
        trace_v.append(venv.step(a)[0])
    for i in range(3):
        env = gym.make(ID)
        obs, _ = env.reset(seed=11 + i)
        assert np.array_equal(obs, trace_v[0][i])
        for t, a in enumerate(actions):
            obs = env.step(a[i])[0]
            assert np.array_equal(obs, trace_v[t + 1][i]), (i, t)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_sheep": 0}, "n_sheep"),
        ({"n_sheep": 10**6}, "n_sheep"),
        ({"pen_x": 45.0}, "pen_x"),
        ({"pen_radius": 0.3}, "pen_radius"),
        ({"success_fraction": 0.0}, "success_fraction"),
        ({"success_fraction": 1.5}, "success_fraction"),
        ({"cohesion_weight": math.nan}, "cohesion_weight"),
        ({"speed_ratio": -1.0}, "speed_ratio"),
        ({"n_dogs": 2}, "n_dogs"),
        ({"sheeps": 3}, "sheeps"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gym.make(ID, **kwargs)


def test_rgb_array_frames_show_the_pen_and_are_deterministic():
    pytest.importorskip("pygame")
    frames = []
    for _ in range(2):
        env = gym.make(ID, render_mode="rgb_array")
        env.reset(seed=4)
        env.step(np.zeros(2, np.float32))
        frames.append(env.render())
        env.close()
    assert frames[0].shape[2] == 3 and np.array_equal(frames[0], frames[1])
    green = np.array([86, 196, 116])
    assert (np.abs(frames[0].astype(int) - green).sum(axis=2) < 30).sum() > 100


# --------------------------------------------------------------------------- PettingZoo
def test_pettingzoo_api_and_seed_tests():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

    from steer_env.envs import herding_v0

    parallel_api_test(herding_v0.parallel_env(n_dogs=2, n_sheep=10), num_cycles=100)
    parallel_seed_test(lambda: herding_v0.parallel_env(n_dogs=2, n_sheep=10), num_cycles=100)
    api_test(herding_v0.env(n_dogs=2, n_sheep=10), num_cycles=50)


def test_team_vector_env_matches_the_parallel_env():
    pytest.importorskip("pettingzoo")
    from steer_env.envs import herding_v0

    venv = herding_v0.vector_env(2, n_dogs=2, n_sheep=8)
    obs_v, _ = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (20, 2, 2, 2))
    for e in range(2):
        env = herding_v0.parallel_env(n_dogs=2, n_sheep=8)
        obs, _ = env.reset(seed=5 + e)
        assert np.array_equal(obs["dog_1"], obs_v[e, 1])
    out = [venv.step(a)[0] for a in actions]
    env = herding_v0.parallel_env(n_dogs=2, n_sheep=8)
    env.reset(seed=6)
    for t, a in enumerate(actions):
        obs = env.step({"dog_0": a[1, 0], "dog_1": a[1, 1]})[0]
        assert np.array_equal(obs["dog_0"], out[t][1, 0]), t


# --------------------------------------------------------------------------- calibration
@pytest.mark.slow
def test_calibration_strombom_pens_30_to_70_percent_and_beats_the_driver():
    """The default flock: Strömbom's dog pens it in 30-70% of 200 seeded episodes, the
    driver clearly less often (paired difference of success above 0)."""
    from agents.evaluation import stats

    strombom = _play("strombom", 200)
    driver = _play("driver", 200)
    rate = stats.wilson_interval(int(strombom.sum()), strombom.size)
    assert 0.30 <= rate.mean <= 0.70, rate
    diff = stats.paired_proportion_difference(strombom.astype(float), driver.astype(float))
    assert diff.lo > 0, diff


def test_flanks_team_plays_two_dogs_from_their_own_observations():
    pytest.importorskip("pettingzoo")
    from steer_env.envs import herding_v0

    env = herding_v0.parallel_env(n_dogs=2, n_sheep=10)
    obs, _ = env.reset(seed=2)
    dog = TASK.scripted_policy("flanks", env.config)
    for _ in range(50):
        actions = {a: dog.predict(obs[a])[0] for a in env.agents}
        assert all(np.linalg.norm(v) <= 1 + 1e-6 for v in actions.values())
        obs, *_ = env.step(actions)
        if not env.agents:
            break


@pytest.mark.parametrize(
    "make",
    [
        lambda: gym.make("steer_env/Herding-v0", n_dogs=2),
        lambda: gym.make_vec(
            "steer_env/Herding-v0", num_envs=2, vectorization_mode="vector_entry_point", n_dogs=2
        ),
        lambda: make_sb3_vec_env("steer_env/Herding-v0", n_envs=2, n_dogs=2),
    ],
    ids=["make", "make_vec", "sb3"],
)
def test_the_single_dog_forms_refuse_several_dogs(make):
    """Herding-v0 in every form steps one learned dog; several dogs are herding_v0's."""
    with pytest.raises(ValueError, match=r"n_dogs must be 1, got 2 .*herding_v0"):
        make()
