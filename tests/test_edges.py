"""Edges: every accepted input simulates cleanly, every bad input is a clear error that
leaves the env as it was, and Gymnasium's and SB3's standard tools work on every front end.
"""

from __future__ import annotations

import copy
import math
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401
from steer_env.envs.sb3 import SB3VecEnv
from steer_env.tasks.config import _RANGES

IDS = ("steer_env/Pursuit-v0", "steer_env/Evasion-v0")


def _value(draw, name):
    kind, low, high, low_inclusive = _RANGES[name]
    if kind is int:
        return draw(st.integers(int(low), min(int(high), 4 if name == "n_opponents" else 300)))
    # Log-uniform over the whole accepted range, endpoints included.
    lo = low if low_inclusive and low > 0 else max(low, 1e-9) * (1 + 1e-9)
    lo = max(lo, 1e-9)
    exponent = draw(st.floats(math.log10(lo), math.log10(high)))
    return float(min(max(10.0**exponent, lo), high))


@st.composite
def configs(draw):
    """Configurations across the documented ranges, the cross-argument rules respected."""
    names = draw(
        st.sets(
            st.sampled_from(
                [n for n in _RANGES if n not in ("time_limit", "max_observed_opponents")]
            ),
            max_size=10,
        )
    )
    cfg = {name: _value(draw, name) for name in names}
    arena = cfg.get("arena_size", 25.0)
    half = arena / 2
    cfg["vehicle_radius"] = min(cfg.get("vehicle_radius", 0.3), arena / 4 * 0.99)
    cfg["capture_radius"] = min(cfg.get("capture_radius", 0.8), half * 0.5)
    cfg["feeler_length"] = min(cfg.get("feeler_length", 2.0), half * 0.99)
    top = arena - 2 * cfg["vehicle_radius"]
    start = cfg.get("min_start_distance", 6.0)
    cfg["min_start_distance"] = min(max(start, cfg["capture_radius"] * 1.01), top * 0.99)
    if cfg["min_start_distance"] <= cfg["capture_radius"]:
        cfg["capture_radius"] = cfg["min_start_distance"] * 0.5
    cfg["n_opponents"] = min(cfg.get("n_opponents", 2), 4)
    # Obstacles: radii in order, every gap at least a vehicle's diameter, room to place one.
    lo, hi = cfg.get("obstacle_radius_min", 1.0), cfg.get("obstacle_radius_max", 2.0)
    lo, hi = min(lo, hi, half * 0.3), min(max(lo, hi), half * 0.3)
    cfg["obstacle_radius_min"], cfg["obstacle_radius_max"] = lo, hi
    gap = max(cfg.get("obstacle_gap", 1.0), 2 * cfg["vehicle_radius"])
    cfg["obstacle_gap"] = min(gap, half * 0.6) if lo + gap >= half else gap
    if (
        cfg["obstacle_radius_min"] + cfg["obstacle_gap"] >= half
        or cfg["obstacle_gap"] < 2 * (cfg["vehicle_radius"])
    ):
        cfg["n_obstacles"] = 0
    cfg["time_limit"] = 40
    return cfg


@st.composite
def actions(draw, shape):
    """Actions of every dtype and magnitude the Box does not rule out of a Python call."""
    dtype = draw(st.sampled_from(["float16", "float32", "float64", "int8", "int32", "int64"]))
    if dtype.startswith("int"):
        values = draw(st.lists(st.integers(-100, 100), min_size=2, max_size=2))
    else:
        big = {"float16": 6e4, "float32": 3e38, "float64": 1e300}[dtype]
        values = draw(
            st.lists(
                st.floats(-big, big, allow_nan=False, allow_infinity=False, width=64),
                min_size=2,
                max_size=2,
            )
        )
    return np.broadcast_to(np.asarray(values, dtype=dtype), shape).copy()


def _check_state(base):
    """Finite state, positions in the arena, speeds within max speed."""
    state = base.batch.state
    half = base.config.half_size
    for arr in (state.position, state.velocity, state.heading, state.wander, state.potential):
        assert np.all(np.isfinite(arr))
    assert np.all(np.abs(state.position) <= half + 1e-9)
    speed = np.linalg.norm(state.velocity, axis=-1)
    assert np.all(speed <= base.batch.vehicles["max_speed"] * (1 + 1e-9))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(), env_id=st.sampled_from(IDS), data=st.data())
def test_any_accepted_configuration_and_action_simulates_cleanly(cfg, env_id, data):
    env = gym.make(env_id, **cfg)
    base = env.unwrapped
    obs, _ = env.reset(seed=data.draw(st.integers(0, 2**70)))
    assert env.observation_space.contains(obs)
    for _ in range(12):
        obs, reward, term, trunc, _ = env.step(data.draw(actions((2,))))
        assert env.observation_space.contains(obs)
        assert math.isfinite(reward)
        _check_state(base)
        if term or trunc:
            obs, _ = env.reset()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(), env_id=st.sampled_from(IDS), data=st.data())
def test_vector_env_and_sb3_adapter_simulate_cleanly(cfg, env_id, data):
    venv = gym.make_vec(env_id, 3, **cfg)
    obs, _ = venv.reset(seed=1)
    sb3 = SB3VecEnv(gym.make_vec(env_id, 3, **cfg).unwrapped)
    sb3_obs = sb3.reset()
    for _ in range(10):
        a = data.draw(actions((3, 2)))
        obs, reward, *_ = venv.step(a)
        assert venv.observation_space.contains(obs) and np.all(np.isfinite(reward))
        sb3_obs, sb3_reward, _, _ = sb3.step(a)
        assert np.all(np.abs(sb3_obs) <= 1.0) and np.all(np.isfinite(sb3_reward))
    _check_state(venv.unwrapped)


@pytest.mark.parametrize("env_id", IDS)
def test_huge_actions_are_clipped_to_max_force_not_lost(env_id):
    """[1e200, 0] is a full forward force: its length does not overflow to inf."""
    forces = []
    for action in ([1.0, 0.0], [1e200, 0.0], [1e300, 1e300]):
        env = gym.make(env_id, reward_shaping=False)
        env.reset(seed=3)
        base = env.unwrapped
        v0 = base.velocities[0]
        env.step(np.asarray(action))
        forces.append(np.linalg.norm(base.velocities[0] - v0))
    expected = 6.0 / 1.0 * 0.1  # max_force / mass * dt from rest
    np.testing.assert_allclose(forces, expected, rtol=1e-9)
    venv = gym.make_vec(env_id, 2)
    venv.reset(seed=3)
    venv.step(np.array([[1e200, 0.0], [0.0, -1e250]]))
    dv = np.linalg.norm(venv.unwrapped.batch.state.velocity[:, 0], axis=-1)
    np.testing.assert_allclose(dv, expected, rtol=1e-9)


@pytest.mark.parametrize(
    "action,fragment",
    [
        ([0.5, None], "action must be numbers of shape (2,)"),
        ([0.5, float("nan")], "action must be finite"),
        ([0.5, float("inf")], "action must be finite"),
        ([0.5], "action must have shape (2,)"),
        ("forward", "action must be numbers"),
        ([10**400, 0], "action must be"),
        (np.array([0.5 + 9j, 0.0]), "action must be real numbers"),
        (np.array([True, False]), "action must be real numbers"),
        (np.ma.masked_array([0.1, np.nan], mask=[False, True]), "none masked"),
    ],
)
def test_bad_actions_are_clear_errors_and_change_nothing(action, fragment):
    env = gym.make("steer_env/Pursuit-v0")
    env.reset(seed=0)
    before = [a.copy() for a in env.unwrapped.batch.state]
    with pytest.raises(ValueError) as err:
        env.step(action)
    assert fragment in str(err.value)
    for a, b in zip(before, env.unwrapped.batch.state, strict=True):
        np.testing.assert_array_equal(a, b)


def test_torch_tensors_are_actions_even_when_they_require_grad():
    torch = pytest.importorskip("torch")
    env = gym.make("steer_env/Pursuit-v0")
    env.reset(seed=0)
    action = torch.tensor([0.3, -0.2], requires_grad=True)
    obs, *_ = env.step(action * 2)
    assert env.observation_space.contains(obs)


@pytest.mark.parametrize("seed", [2**64 + 5, 10**30, 2**32])
def test_any_non_negative_integer_is_a_seed(seed):
    env = gym.make("steer_env/Pursuit-v0")
    a, _ = env.reset(seed=seed)
    b, _ = env.reset(seed=seed)
    np.testing.assert_array_equal(a, b)
    c, _ = env.reset(seed=seed + 1)
    assert not np.array_equal(a, c)
    venv = gym.make_vec("steer_env/Pursuit-v0", 2)
    vo, _ = venv.reset(seed=seed)
    np.testing.assert_array_equal(vo[0], a)
    np.testing.assert_array_equal(vo[1], c)
    for bad in (-1, 1.5, "7", True):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            env.reset(seed=bad)


# ------------------------------------------------------------------ standard tools
@pytest.mark.parametrize("env_id", IDS)
def test_pickle_and_deepcopy_after_render(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.render()
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    expected = env.step(np.zeros(2, dtype=np.float32))[0]
    for clone in clones:
        np.testing.assert_array_equal(clone.step(np.zeros(2, dtype=np.float32))[0], expected)
        assert clone.render().shape == (600, 600, 3)
    venv = gym.make_vec(env_id, 2, render_mode="rgb_array")
    venv.reset(seed=0)
    venv.render()
    assert len(pickle.loads(pickle.dumps(venv)).render()) == 2


def test_native_vector_env_renders_every_environment():
    venv = gym.make_vec("steer_env/Pursuit-v0", 3, render_mode="rgb_array")
    venv.reset(seed=0)
    frames = venv.render()
    assert len(frames) == 3 and all(f.shape == (600, 600, 3) for f in frames)
    assert not np.array_equal(frames[0], frames[1])  # different episodes, different frames


@pytest.mark.parametrize("mode", ["native", "sync"])
def test_gymnasium_vector_wrappers(tmp_path, mode):
    from gymnasium.wrappers import vector as wv

    mode_name = "vector_entry_point" if mode == "native" else "sync"
    venv = gym.make_vec(
        "steer_env/Pursuit-v0", 2, vectorization_mode=mode_name, render_mode="rgb_array"
    )
    venv = wv.RecordEpisodeStatistics(venv)
    venv = wv.NormalizeObservation(venv)
    venv = wv.NormalizeReward(venv)
    venv = wv.ClipAction(venv)
    venv = wv.RecordVideo(venv, str(tmp_path), episode_trigger=lambda e: e == 0, video_length=5)
    venv.reset(seed=0)
    for _ in range(8):
        venv.step(venv.action_space.sample())
    venv.close()
    assert list(tmp_path.glob("*.mp4"))


def test_native_vector_env_human_render_mode():
    venv = gym.make_vec("steer_env/Pursuit-v0", 2, render_mode="human")
    venv.reset(seed=0)
    venv.step(venv.action_space.sample())
    venv.close()


def test_single_env_wrappers(tmp_path):
    env = gym.make("steer_env/Evasion-v0", render_mode="rgb_array")
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env = gym.wrappers.NormalizeObservation(env)
    env = gym.wrappers.NormalizeReward(env)
    env = gym.wrappers.FrameStackObservation(env, 3)
    env = gym.wrappers.RecordVideo(env, str(tmp_path), episode_trigger=lambda e: True)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(env.action_space.sample())
        done = term or trunc
    env.close()
    assert "episode" in info and list(tmp_path.glob("*.mp4"))
    human = gym.wrappers.HumanRendering(gym.make("steer_env/Pursuit-v0", render_mode="rgb_array"))
    human.reset(seed=0)
    human.step(human.action_space.sample())
    human.close()


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "SameStep", "Disabled"])
def test_every_autoreset_mode_matches_sync_vector_env(autoreset_mode):
    """The native vector env follows Gymnasium's SyncVectorEnv in each autoreset mode,
    step for step (observations, rewards, flags, final observations)."""
    from gymnasium.vector import AutoresetMode

    mode = AutoresetMode(autoreset_mode)
    kwargs = {"time_limit": 7}
    native = gym.make_vec("steer_env/Pursuit-v0", 3, autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(
        "steer_env/Pursuit-v0",
        3,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )
    assert native.metadata["autoreset_mode"] == mode
    a, _ = native.reset(seed=5)
    b, _ = sync.reset(seed=5)
    np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(0)
    for _ in range(20):
        act = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
        na = native.step(act)
        sa = sync.step(act)
        for x, y in zip(na[:4], sa[:4], strict=True):
            np.testing.assert_allclose(x, y, atol=1e-6)
        if mode == AutoresetMode.SAME_STEP and "final_obs" in sa[4]:
            for i in np.flatnonzero(sa[4]["_final_obs"]):
                np.testing.assert_allclose(na[4]["final_obs"][i], sa[4]["final_obs"][i], atol=1e-6)
        done = na[2] | na[3]
        if mode == AutoresetMode.DISABLED and done.any():
            with pytest.raises(gym.error.ResetNeeded):
                native.step(act)
            native.reset(options={"reset_mask": done})
            sync.reset(options={"reset_mask": done})


def test_sb3_tools(tmp_path):
    from stable_baselines3.common.env_checker import check_env
    from stable_baselines3.common.vec_env import VecNormalize, VecVideoRecorder

    from steer_env.envs.sb3 import make_sb3_vec_env

    check_env(gym.make("steer_env/Pursuit-v0").unwrapped)
    venv = make_sb3_vec_env("steer_env/Pursuit-v0", n_envs=3, seed=0, render_mode="rgb_array")
    assert venv.metadata["render_fps"] == 10
    with pytest.raises(gym.error.ResetNeeded):  # as DummyVecEnv of gym.make envs
        venv.get_images()
    venv.reset()
    images = venv.get_images()
    assert len(images) == 3 and all(i.shape == (600, 600, 3) for i in images)
    venv = VecNormalize(venv)
    venv = VecVideoRecorder(venv, str(tmp_path), lambda step: step == 0, video_length=5)
    venv.reset()
    for _ in range(7):
        venv.step(np.zeros((3, 2), dtype=np.float32))
    venv.close()
    assert list(tmp_path.glob("*.mp4"))
