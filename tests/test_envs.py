"""Pursuit-v0 and Evasion-v0 as single Gymnasium environments."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import warnings
import weakref

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

import steer_env
from steer_env import vecmath
from steer_env.tasks import TASKS, TEAM_TASKS

IDS = ["steer_env/Pursuit-v0", "steer_env/Evasion-v0"]


def rollout(env, seed: int, actions: np.ndarray) -> dict[str, list]:
    obs, _ = env.reset(seed=seed)
    out = {"obs": [obs], "reward": [], "terminated": [], "truncated": []}
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out["obs"].append(obs)
        out["reward"].append(r)
        out["terminated"].append(term)
        out["truncated"].append(trunc)
        if term or trunc:
            obs, _ = env.reset()
            out["obs"].append(obs)
    return out


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_env_checker_passes_without_warnings(env_id):
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_env_checker_passes_without_warnings(env_id):
    from stable_baselines3.common.env_checker import check_env

    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_no_time_limit_wrapper_is_registered(env_id):
    """The env ends its episodes itself at time_limit, and its spec says so; Gymnasium adds
    no TimeLimit of its own (one would cut episodes of a longer explicit time_limit)."""
    env = gym.make(env_id)
    assert env.spec.max_episode_steps == 100
    assert env.unwrapped.config.time_limit == 100
    wrapper = env
    while isinstance(wrapper, gym.Wrapper):
        assert not isinstance(wrapper, gym.wrappers.TimeLimit)
        wrapper = wrapper.env


def test_time_limit_terminates_exactly_at_the_limit():
    # A pursuer applying no force never reaches an evader that starts 6+ m away and flees.
    env = gym.make("steer_env/Pursuit-v0")
    env.reset(seed=0)
    for step in range(1, 101):
        _, _, term, trunc, _ = env.step(np.zeros(2, dtype=np.float32))
        assert not trunc
        assert term == (step == 100)


def test_make_with_module_prefix_in_fresh_process():
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('steer_env:steer_env/Pursuit-v0')\n"
        "obs, _ = env.reset(seed=1)\n"
        "print(obs.shape, env.unwrapped.config.time_limit)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(16,) 100"


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory_different_seed_different_start(env_id):
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(250, 2)).astype(np.float32)
    a = rollout(gym.make(env_id), 3, actions)
    b = rollout(gym.make(env_id), 3, actions)
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]))
    c = rollout(gym.make(env_id), 4, actions[:1])
    assert not np.array_equal(a["obs"][0], c["obs"][0])


def test_unseeded_reset_keys_the_episode_from_np_random():
    """Without a seed, the first episode comes from np_random, including a generator the user
    set (or one Gymnasium created when np_random was read before reset)."""
    envs = [steer_env.PursuitEnv() for _ in range(3)]
    envs[0].np_random = np.random.default_rng(1)
    envs[1].np_random = np.random.default_rng(2)
    envs[2].np_random = np.random.default_rng(1)
    first = [env.reset()[0] for env in envs]
    assert not np.array_equal(first[0], first[1])
    np.testing.assert_array_equal(first[0], first[2])
    lazy_a, lazy_b = steer_env.PursuitEnv(), steer_env.PursuitEnv()
    _ = lazy_a.np_random, lazy_b.np_random  # created lazily, OS-seeded
    assert not np.array_equal(lazy_a.reset()[0], lazy_b.reset()[0])


def test_heading_follows_the_velocity_along_a_wall():
    env = gym.make("steer_env/Pursuit-v0")
    env.reset(seed=0)
    sim = env.unwrapped.batch.state
    limit = env.unwrapped.config.half_size - env.unwrapped.radii[0]
    sim.position[0, 0] = [limit - 0.01, 0.0]
    sim.velocity[0, 0] = [2.0, 2.0]
    sim.heading[0, 0] = [np.sqrt(0.5), np.sqrt(0.5)]
    obs, *_ = env.step(np.zeros(2, dtype=np.float32))
    # The east wall stopped the x motion: the vehicle slides north and faces north.
    assert sim.velocity[0, 0, 0] == 0.0 and sim.velocity[0, 0, 1] > 0
    np.testing.assert_allclose(sim.heading[0, 0], [0.0, 1.0], atol=1e-12)
    assert obs[1] == pytest.approx(0.0, abs=1e-6)  # no side velocity in its own frame


@pytest.mark.parametrize("env_id", IDS)
def test_observation_in_space_and_egocentric(env_id):
    env = gym.make(env_id)
    obs, _ = env.reset(seed=5)
    base = env.unwrapped
    for _ in range(30):
        obs, _, term, trunc, _ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        if term or trunc:
            obs, _ = env.reset()
    # Own velocity in the agent's frame: the heading follows the velocity, so side ~ 0.
    v = base.velocities[0]
    if np.linalg.norm(v) > 1e-6:
        assert obs[0] == pytest.approx(np.linalg.norm(v) / base.max_speeds[0], abs=1e-5)
        assert obs[1] == pytest.approx(0.0, abs=1e-5)
    # Nearest opponent's relative position, rotated into the agent's frame.
    rel = base.positions[1:] - base.positions[0]
    nearest = rel[np.argmin(np.linalg.norm(rel, axis=1))]
    local = vecmath.vector_to_local(nearest, base.headings[0]) / base.config.diagonal
    np.testing.assert_allclose(obs[11:13], local, atol=1e-6)
    assert obs[15] == 1.0  # slot present
    # Walls: the offset to the nearest point of each wall, in the agent's frame / arena size.
    half, x, y = base.config.half_size, *base.positions[0]
    walls = np.array([[-half - x, 0.0], [half - x, 0.0], [0.0, -half - y], [0.0, half - y]])
    local_walls = vecmath.vector_to_local(walls, base.headings[0]) / base.config.arena_size
    np.testing.assert_allclose(obs[2:10], local_walls.reshape(-1), atol=1e-6)
    assert obs[10] == pytest.approx(2 * base.elapsed_steps / base.config.time_limit - 1)


def test_padded_slots_are_masked():
    env = gym.make("steer_env/Pursuit-v0", max_observed_opponents=3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (11 + 5 * 3,)
    np.testing.assert_array_equal(obs[16:], 0.0)
    assert obs[15] == 1.0


def test_action_magnitude_is_clipped_to_max_force():
    env = gym.make("steer_env/Pursuit-v0", reward_shaping=False)
    results = []
    for action in ([1.0, 1.0], [np.sqrt(0.5), np.sqrt(0.5)], [3.0, 3.0]):
        env.reset(seed=11)
        base = env.unwrapped
        v0 = base.velocities[0]
        env.step(np.asarray(action, dtype=np.float32))
        results.append(base.velocities[0] - v0)
    dv_max = base.max_forces[0] / base.masses[0] * base.config.dt
    # From rest, (1, 1) accelerates by exactly max_force / mass * dt, not 1.41 times that.
    assert np.linalg.norm(results[0]) == pytest.approx(dv_max, rel=1e-6)
    np.testing.assert_allclose(results[0], results[1], atol=1e-6)
    np.testing.assert_allclose(results[0], results[2], atol=1e-12)


def test_action_is_in_agent_frame():
    env = gym.make("steer_env/Pursuit-v0")
    env.reset(seed=2)
    base = env.unwrapped
    heading = base.headings[0]
    env.step(np.array([1.0, 0.0], dtype=np.float32))  # full force forward from rest
    direction = base.velocities[0] / np.linalg.norm(base.velocities[0])
    np.testing.assert_allclose(direction, heading, atol=1e-9)
    env.reset(seed=2)
    env.step(np.array([0.0, 1.0], dtype=np.float32))  # full force to the left
    direction = base.velocities[0] / np.linalg.norm(base.velocities[0])
    np.testing.assert_allclose(direction, vecmath.perp(heading), atol=1e-9)


@pytest.mark.parametrize("env_id", IDS)
def test_speed_limits_and_arena_bounds_hold_over_long_random_rollouts(env_id):
    env = gym.make(env_id, time_limit=400, max_episode_steps=400)
    base = env.unwrapped
    rng = np.random.default_rng(1)
    env.reset(seed=0)
    half = base.config.half_size
    for _ in range(3000):
        # Saturating actions drive the agent into the walls as often as possible.
        action = np.sign(rng.normal(size=2)).astype(np.float32)
        _, _, term, trunc, _ = env.step(action)
        speeds = np.linalg.norm(base.velocities, axis=1)
        assert np.all(speeds <= base.max_speeds * (1 + 1e-12))
        limit = half - base.radii[:, None]
        assert np.all(np.abs(base.positions) <= limit + 1e-12)
        if term or trunc:
            env.reset()


def _place(env, agent_xy, opponent_xy):
    sim = env.unwrapped.batch.state
    sim.position[0, 0] = agent_xy
    sim.position[0, 1:] = opponent_xy
    sim.velocity[0] = 0.0


def test_pursuit_capture_terminates_with_success_and_step():
    env = gym.make("steer_env/Pursuit-v0", reward_shaping=False)
    env.reset(seed=0)
    _place(env, [0.0, 0.0], [[0.5, 0.0]])
    _obs, reward, term, trunc, info = env.step(np.zeros(2, dtype=np.float32))
    assert term and not trunc
    assert reward == 1.0
    terms = (info["reward_capture"], info["reward_escape"], info["reward_shaping"])
    assert terms == (1.0, 0.0, 0.0)
    assert info["is_success"] is True
    assert info["capture_step"] == 1


def test_capture_is_detected_along_the_step_not_only_at_its_end():
    env = gym.make(
        "steer_env/Pursuit-v0",
        reward_shaping=False,
        capture_radius=0.08,
        opponent_max_force=1e-6,
    )
    env.reset(seed=0)
    sim = env.unwrapped.batch.state
    # Head-on at a closing speed of 6 m/s: 0.5 m apart before the step, 0.1 m apart (on the
    # other side) after it; only a check along the step sees them pass through each other.
    sim.position[0] = [[-0.25, 0.0], [0.25, 0.0]]
    sim.velocity[0] = [[3.0, 0.0], [-3.0, 0.0]]
    sim.heading[0] = [[1.0, 0.0], [-1.0, 0.0]]
    _, reward, term, _, _ = env.step(np.zeros(2, dtype=np.float32))
    end = sim.position[0, 1] - sim.position[0, 0]
    assert end[0] < 0 and np.linalg.norm(end) > 0.08
    assert term and reward == 1.0


def test_pursuit_time_limit_terminates_without_success():
    env = gym.make("steer_env/Pursuit-v0", time_limit=20)
    env.reset(seed=0)
    base = env.unwrapped
    assert np.linalg.norm(base.positions[1] - base.positions[0]) >= base.config.min_start_distance
    for t in range(20):
        _, _reward, term, trunc, info = env.step(np.zeros(2, dtype=np.float32))
        if t < 19:
            assert not (term or trunc)
    # The time limit is part of the task (observed, and the end of it): a termination.
    assert term and not trunc
    assert info["is_success"] is False
    assert info["capture_step"] == -1


def test_evasion_capture_gives_minus_one_and_no_success():
    env = gym.make("steer_env/Evasion-v0", reward_shaping=False)
    env.reset(seed=0)
    _place(env, [0.0, 0.0], [[0.5, 0.0], [8.0, 8.0]])
    _, reward, term, trunc, info = env.step(np.zeros(2, dtype=np.float32))
    assert term and not trunc
    assert reward == -1.0
    assert info["is_success"] is False and info["capture_step"] == 1


def test_evasion_survival_earns_plus_one_on_the_last_step():
    env = gym.make("steer_env/Evasion-v0", reward_shaping=False, time_limit=5)
    env.reset(seed=0)
    rewards = []
    for _ in range(5):
        _, reward, term, trunc, info = env.step(np.zeros(2, dtype=np.float32))
        rewards.append(reward)
    assert term and not trunc
    assert rewards == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert info["reward_escape"] == 1.0
    assert info["is_success"] is True and info["capture_step"] == -1


@pytest.mark.parametrize("env_id,sign", [(IDS[0], -1.0), (IDS[1], 1.0)])
def test_shaping_is_potential_based(env_id, sign):
    gamma = 0.9
    env = gym.make(env_id, shaping_gamma=gamma, shaping_scale=2.0)
    _, info = env.reset(seed=4)
    diag = env.unwrapped.config.diagonal
    phi = sign * 2.0 * info["distance"] / diag
    rng = np.random.default_rng(0)
    while True:
        _, reward, term, trunc, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        phi_next = 0.0 if term else sign * 2.0 * info["distance"] / diag
        assert info["reward_shaping"] == pytest.approx(gamma * phi_next - phi, abs=1e-12)
        terms = info["reward_capture"] + info["reward_escape"] + info["reward_shaping"]
        assert reward == pytest.approx(terms)
        phi = phi_next
        if term or trunc:
            break


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_shaping_changes_every_return_by_a_constant_of_the_start_state(env_id, seed):
    """Ng et al.'s invariance, exactly: with the learner's discount equal to
    ``shaping_gamma`` and a zero potential at every terminal state (capture or time
    limit), an episode's shaped return is its unshaped return minus phi(s_0), whatever the
    policy did."""
    gamma = 0.97
    returns = []
    for shaping in (True, False):
        env = gym.make(env_id, shaping_gamma=gamma, reward_shaping=shaping, time_limit=60)
        _, info = env.reset(seed=seed)
        start_distance = info["distance"]
        rng = np.random.default_rng(seed)
        total, discount = 0.0, 1.0
        while True:
            _, reward, term, trunc, _ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
            total += discount * reward
            discount *= gamma
            if term or trunc:
                break
        returns.append(total)
    sign = -1.0 if env_id == IDS[0] else 1.0
    phi0 = sign * start_distance / env.unwrapped.config.diagonal
    assert returns[0] - returns[1] == pytest.approx(-phi0, abs=1e-12)


def test_episode_length_on_every_path():
    """time_limit is the task's episode length on every path; Gymnasium's
    max_episode_steps keeps its meaning (an outer cut, a truncation) on every path too."""
    import gymnasium as gym

    def length(env):
        env.reset(seed=0)
        steps = 0
        while True:
            steps += 1
            _, _, term, trunc, _ = env.step(np.zeros(2, dtype=np.float32))
            if term or trunc:
                return steps, bool(term), bool(trunc)

    def vec_length(venv):
        venv.reset(seed=0)
        for steps in range(1, 1000):
            _, _, term, trunc, _ = venv.step(np.zeros((1, 2), dtype=np.float32))
            if term[0] or trunc[0]:
                return steps, bool(term[0]), bool(trunc[0])

    pid = "steer_env/Pursuit-v0"
    far = {"capture_radius": 0.01, "opponent_max_speed": 0.01, "agent_max_speed": 0.01}
    assert length(gym.make(pid, **far)) == (100, True, False)
    assert length(gym.make(pid, time_limit=150, **far)) == (150, True, False)
    assert length(gym.make(pid, max_episode_steps=60, **far)) == (60, False, True)
    assert length(gym.make(pid, max_episode_steps=130, **far)) == (100, True, False)
    for mode in ("vector_entry_point", "sync"):
        assert vec_length(gym.make_vec(pid, 1, vectorization_mode=mode, **far)) == (
            100,
            True,
            False,
        )
        venv = gym.make_vec(pid, 1, vectorization_mode=mode, max_episode_steps=60, **far)
        assert vec_length(venv) == (60, False, True)
        venv = gym.make_vec(pid, 1, vectorization_mode=mode, time_limit=140, **far)
        assert vec_length(venv) == (140, True, False)


def test_shaping_off_gives_sparse_reward():
    env = gym.make("steer_env/Pursuit-v0", reward_shaping=False)
    env.reset(seed=0)
    for _ in range(50):
        _, reward, term, trunc, _info = env.step(np.ones(2, dtype=np.float32))
        assert reward == (1.0 if term else 0.0)
        if term or trunc:
            break


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"capture_radiuss": 1.0}, "got an unexpected keyword argument 'capture_radiuss'"),
        ({"capture_radius": -1.0}, "capture_radius must be a number in (0, 10000]"),
        ({"dt": 0.0}, "dt must be a number in (0, 1]"),
        ({"n_opponents": 0}, "n_opponents must be an integer in [1, 32]"),
        ({"n_opponents": 1.5}, "n_opponents must be an integer"),
        ({"agent_max_speed": float("nan")}, "agent_max_speed"),
        ({"reward_shaping": "yes"}, "reward_shaping must be True or False"),
        ({"arena_size": 5.0, "min_start_distance": 6.0}, "min_start_distance must be below"),
        ({"feeler_length": 20.0}, "feeler_length must be below half the arena_size"),
        ({"capture_radius": 20.0}, "capture_radius must be smaller than half the arena_size"),
        ({"min_start_distance": 0.5}, "min_start_distance must exceed capture_radius"),
        ({"n_opponents": float("inf")}, "n_opponents must be an integer in [1, 32], got inf"),
        ({"dt": float("nan")}, "dt must be a number in (0, 1], got nan"),
        ({"dt": 10**400}, "dt must be a number in (0, 1], got 1000"),
        ({"agent_mass": 5e-324}, "agent_mass must be a number in [0.001, 1e+06]"),
        ({"opponent_mass": 1e-300}, "opponent_mass must be a number in [0.001, 1e+06]"),
        ({"agent_max_force": 1e300}, "agent_max_force must be a number in (0, 1e+06]"),
        ({"opponent_max_speed": 1e308}, "opponent_max_speed must be a number in (0, 1000]"),
        ({"wall_weight": 1e308}, "wall_weight must be a number in [0, 1e+06]"),
        ({"wander_radius": 1e308}, "wander_radius must be a number in (0, 10000]"),
    ],
)
def test_bad_configuration_raises_value_error_naming_the_argument(kwargs, fragment):
    with pytest.raises(ValueError) as err:
        gym.make("steer_env/Pursuit-v0", **kwargs)
    assert fragment in str(err.value)


def test_numpy_scalars_are_accepted_as_arguments():
    env = gym.make("steer_env/Pursuit-v0", n_opponents=np.int64(2), dt=np.float32(0.05))
    assert env.unwrapped.config.n_opponents == 2
    assert env.observation_space.shape == (21,)


def test_bad_render_mode_is_rejected():
    # Gymnasium warns about the unknown mode first; the env then refuses it.
    with (
        pytest.warns(UserWarning, match="render_mode='ascii'"),
        pytest.raises(ValueError, match="render_mode must be None or one of"),
    ):
        gym.make("steer_env/Pursuit-v0", render_mode="ascii")


@pytest.mark.parametrize(
    "action,fragment",
    [
        (np.zeros(3, dtype=np.float32), "action must have shape (2,)"),
        (np.zeros((1, 2), dtype=np.float32), "action must have shape (2,)"),
        (np.array([np.nan, 0.0], dtype=np.float32), "action must be finite"),
        (np.array([np.inf, 0.0], dtype=np.float32), "action must be finite"),
    ],
)
def test_bad_actions_raise_value_error(action, fragment):
    env = steer_env.PursuitEnv()
    env.reset(seed=0)
    before = env.positions
    with pytest.raises(ValueError) as err:
        env.step(action)
    assert fragment in str(err.value)
    np.testing.assert_array_equal(env.positions, before)  # the state is untouched


def test_step_before_reset_is_gymnasiums_error():
    with pytest.raises(ResetNeeded):
        steer_env.PursuitEnv().step(np.zeros(2, dtype=np.float32))
    with pytest.raises(ResetNeeded):
        gym.make("steer_env/Pursuit-v0").step(np.zeros(2, dtype=np.float32))


@pytest.mark.parametrize("name", list(TEAM_TASKS))
def test_render_before_reset_is_the_same_error_as_step_before_reset(name):
    """Every front end refuses ``render()`` before ``reset()`` as it refuses ``step()``
    (Gymnasium's ``ResetNeeded`` for the native vector env, as ``gym.make``'s env raises
    it; the PettingZoo and team vector forms their own), instead of drawing an arena that
    holds no episode; after ``reset()`` each renders."""
    import importlib

    makers = []
    if name in TASKS:
        env_id = TASKS[name].env_id
        makers.append((lambda: gym.make_vec(env_id, num_envs=2, render_mode="rgb_array",
                                             vectorization_mode="vector_entry_point"),
                       ResetNeeded, "Cannot call render() before calling reset()"))  # fmt: skip
        makers.append((lambda: gym.make(env_id, render_mode="rgb_array"), ResetNeeded, "render"))
    module = importlib.import_module(TEAM_TASKS[name].env_module)
    makers.append((lambda: module.parallel_env(render_mode="rgb_array"), RuntimeError,
                   "call reset() before render()"))  # fmt: skip
    makers.append((lambda: module.vector_env(num_envs=2, render_mode="rgb_array"), RuntimeError,
                   "call reset() before render()"))  # fmt: skip
    for make, error, text in makers:
        env = make()
        with pytest.raises(error, match=re.escape(text)):
            env.render()
        env.reset(seed=0)
        frames = env.render()
        for frame in frames if isinstance(frames, tuple) else (frames,):
            assert frame.shape == (600, 600, 3) and frame.dtype == np.uint8 and frame.any()
        env.close()


def test_documented_state_is_read_only_copies():
    env = gym.make("steer_env/Evasion-v0")
    env.reset(seed=0)
    base = env.unwrapped
    assert base.agent_index == 0
    assert base.positions.shape == (3, 2) and base.velocities.shape == (3, 2)
    assert base.is_pursuer.tolist() == [False, True, True]
    assert base.max_speeds.shape == base.max_forces.shape == base.masses.shape == (3,)
    p = base.positions
    p[:] = 99.0
    assert not np.any(base.positions == 99.0)


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_array_frames_shape_not_blank_and_deterministic(env_id):
    pytest.importorskip("pygame")

    def frames(seed):
        env = gym.make(env_id, render_mode="rgb_array")
        env.reset(seed=seed)
        out = [env.render()]
        for a in np.random.default_rng(0).uniform(-1, 1, (10, 2)).astype(np.float32):
            env.step(a)
            out.append(env.render())
        env.close()
        return out

    a, b, c = frames(1), frames(1), frames(2)
    assert a[0].dtype == np.uint8 and a[0].ndim == 3 and a[0].shape[2] == 3
    assert a[0].shape[0] == a[0].shape[1]  # square arena
    for f in a:
        assert len(np.unique(f.reshape(-1, 3), axis=0)) > 3  # not blank
    assert not np.array_equal(a[0], a[-1])  # things move
    for fa, fb in zip(a, b, strict=True):
        np.testing.assert_array_equal(fa, fb)
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("env_id", ["steer_env/Pursuit-v0", "steer_env/Herding-v0"])
def test_a_single_env_lets_its_arrays_go_with_it(env_id):
    """The single env's step holds its arrays in compiled code (steer_env.core.jit.bind):
    they must go when the env goes, however many steps it took."""
    env = gym.make(env_id)
    env.reset(seed=0)
    for _ in range(3):
        env.step(env.action_space.sample())
    position = weakref.ref(env.unwrapped.batch.state.position)
    observations = weakref.ref(env.unwrapped.batch._buffers[0])
    env.close()
    del env
    gc.collect()
    assert position() is None and observations() is None
