"""The native batched vector env and the stable-baselines3 adapter."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode

import steer_env  # noqa: F401
from steer_env.envs.vector import SteerVectorEnv

IDS = ["steer_env/Pursuit-v0", "steer_env/Evasion-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_uses_the_native_batched_env(env_id):
    venv = gym.make_vec(env_id, num_envs=5)
    assert isinstance(venv.unwrapped, SteerVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (5, venv.single_observation_space.shape[0])
    assert obs.dtype == np.float32
    assert venv.unwrapped.config.time_limit == 100


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_reproduces_single_envs_seeded_the_same_way(env_id):
    """Env i of make_vec(reset(seed=s)) == make(reset(seed=s+i)), through several autoresets."""
    n, steps, seed = 6, 260, 17
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(steps, n, 2)).astype(np.float32)
    # Short episodes and a large capture radius: every env ends by capture and by time limit.
    kwargs = {"time_limit": 40, "capture_radius": 3.5, "min_start_distance": 4.0}

    venv = gym.make_vec(env_id, num_envs=n, **kwargs)
    v_obs = [venv.reset(seed=seed)[0]]
    v_rew, v_term, v_trunc = [], [], []
    capture_steps = []
    for t in range(steps):
        o, r, te, tr, info = venv.step(actions[t])
        capture_steps.extend(info["capture_step"][te].tolist())
        v_obs.append(o)
        v_rew.append(r)
        v_term.append(te)
        v_trunc.append(tr)
    v_obs, v_rew = np.array(v_obs), np.array(v_rew)
    v_term, v_trunc = np.array(v_term), np.array(v_trunc)
    assert v_term.any() and not v_trunc.any()
    assert min(capture_steps) == -1 and max(capture_steps) > 0  # time limits and captures

    for i in range(n):
        env = gym.make(env_id, **kwargs)
        obs, _ = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs, v_obs[0, i])
        needs_reset = False
        for t in range(steps):
            if needs_reset:
                # NEXT_STEP autoreset: this step resets env i and ignores its action.
                obs, _ = env.reset()
                reward, term, trunc = 0.0, False, False
                needs_reset = False
            else:
                obs, reward, term, trunc, _ = env.step(actions[t, i])
                needs_reset = term or trunc
            np.testing.assert_array_equal(obs, v_obs[t + 1, i], err_msg=f"env {i} step {t}")
            assert reward == v_rew[t, i]
            assert term == v_term[t, i] and trunc == v_trunc[t, i]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_env_frames_are_the_single_envs_through_autoresets(mode):
    """Env i's frame (its trails included) is that of the single env seeded ``seed + i``,
    reset where the vector env resets env i, at every step across several episodes: a
    restarted env's trail starts from its new position, as after a single env's
    ``reset()``."""
    n, steps, seed, kwargs = 2, 75, 4, {"time_limit": 20, "render_mode": "rgb_array"}
    venv = gym.make_vec("steer_env/Pursuit-v0", num_envs=n, autoreset_mode=mode,
                        vectorization_mode="vector_entry_point", **kwargs)  # fmt: skip
    venv.reset(seed=seed)
    singles = [gym.make("steer_env/Pursuit-v0", **kwargs) for _ in range(n)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    actions = np.random.default_rng(2).uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    ended = np.zeros(n, dtype=bool)
    episodes_ended = np.zeros(n, dtype=int)
    for t in range(steps):
        _, _, term, trunc, _ = venv.step(actions[t])
        episodes_ended += term | trunc
        frames = venv.render()
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP: this step restarted env i
                env.reset()
            else:
                _, _, te, tr, _ = env.step(actions[t, i])
                if (te or tr) and mode == AutoresetMode.SAME_STEP:
                    env.reset()
            np.testing.assert_array_equal(frames[i], env.render(), err_msg=f"env {i} t {t}")
        ended = (term | trunc) & (mode == AutoresetMode.NEXT_STEP)
    assert (episodes_ended >= 2).all(), episodes_ended  # every env autoreset


def test_final_step_infos_follow_the_vector_convention():
    venv = gym.make_vec("steer_env/Evasion-v0", num_envs=3, time_limit=5, reward_shaping=False)
    venv.reset(seed=0)
    zeros = np.zeros((3, 2), dtype=np.float32)
    for _ in range(4):
        _, _, term, trunc, info = venv.step(zeros)
        assert not info["is_success"].any() and (info["capture_step"] == -1).all()
    _, reward, term, trunc, info = venv.step(zeros)
    assert term.all() and not trunc.any()  # the time limit is a termination
    assert info["_is_success"].all()
    # Survivors escaped: success and +1; the caught ones got -1.
    caught = info["capture_step"] >= 0
    np.testing.assert_array_equal(info["is_success"], ~caught)
    np.testing.assert_array_equal(reward, np.where(caught, -1.0, 1.0))
    # Next step: autoreset, reward 0, not done.
    _obs, reward, term, trunc, info = venv.step(zeros)
    assert not (term | trunc).any()
    np.testing.assert_array_equal(reward, 0.0)
    assert np.all(venv.unwrapped.batch.state.steps == 0)


def test_gymnasium_sync_vector_env_batches_every_info():
    """CleanRL-style scripts wrap single envs in SyncVectorEnv: endings with and without a
    capture on the same step must batch (capture_step is an int, -1 without capture)."""
    venv = gym.make_vec(
        "steer_env/Evasion-v0",
        num_envs=8,
        vectorization_mode="sync",
        time_limit=30,
        capture_radius=3.0,
        min_start_distance=3.5,
    )
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    mixed = False
    for _ in range(200):
        _, _, done, _, info = venv.step(rng.uniform(-1, 1, (8, 2)).astype(np.float32))
        caught = info["capture_step"][done] >= 0
        mixed |= bool(caught.any() and (~caught).any())
    assert mixed


def test_reset_mask_resets_only_selected_envs():
    venv = gym.make_vec("steer_env/Pursuit-v0", num_envs=4)
    venv.reset(seed=1)
    for _ in range(3):
        venv.step(np.ones((4, 2), dtype=np.float32))
    before = venv.unwrapped.batch.state.position.copy()
    mask = np.array([True, False, True, False])
    venv.reset(options={"reset_mask": mask})
    sim = venv.unwrapped.batch.state
    np.testing.assert_array_equal(sim.steps, [0, 3, 0, 3])
    np.testing.assert_array_equal(sim.position[~mask], before[~mask])
    assert not np.allclose(sim.position[mask], before[mask])


def test_vector_seeds_as_an_integer_array_are_a_list_of_seeds():
    venv = gym.make_vec("steer_env/Pursuit-v0", num_envs=3)
    from_array, _ = venv.reset(seed=np.array([7, 0, 2**40], dtype=np.int64))
    from_list, _ = venv.reset(seed=[7, 0, 2**40])
    np.testing.assert_array_equal(from_array, from_list)
    with pytest.raises(ValueError, match="seed must be an int or a list of 3 seeds"):
        venv.reset(seed=np.arange(2))
    with pytest.raises(ValueError, match=r"seed\[1\] must be a non-negative integer"):
        venv.reset(seed=np.array([0, -1, 2]))


def test_vector_bad_input():
    with pytest.raises(ValueError, match=r"num_envs must be an integer in \[1, 16777216\]"):
        gym.make_vec("steer_env/Pursuit-v0", num_envs=0)
    with pytest.raises(ValueError, match="unexpected keyword argument 'speeed'"):
        gym.make_vec("steer_env/Pursuit-v0", num_envs=2, speeed=3)
    with pytest.raises(ValueError, match=r"max_episode_steps must be an integer in \[1, "):
        gym.make_vec("steer_env/Pursuit-v0", num_envs=2, max_episode_steps=0)
    venv = gym.make_vec("steer_env/Pursuit-v0", num_envs=2)
    with pytest.raises(ResetNeeded):
        venv.step(np.zeros((2, 2), dtype=np.float32))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2, 2\)"):
        venv.step(np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match="actions must be finite"):
        venv.step(np.array([[0.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="seed must be an int or a list of 2 seeds"):
        venv.reset(seed=[1, 2, 3])


def test_vector_invariants_over_random_rollout():
    venv = gym.make_vec("steer_env/Evasion-v0", num_envs=64)
    venv.reset(seed=3)
    sim = venv.unwrapped.batch.state
    limits = venv.unwrapped.batch.vehicles
    rng = np.random.default_rng(0)
    half = venv.unwrapped.config.half_size
    for _ in range(300):
        venv.step(np.sign(rng.normal(size=(64, 2))).astype(np.float32))
        speed = np.linalg.norm(sim.velocity, axis=-1)
        assert np.all(speed <= limits["max_speed"] * (1 + 1e-12))
        assert np.all(np.abs(sim.position) <= half - limits["radius"][:, None] + 1e-12)


# --------------------------------------------------------------------------- SB3 adapter
sb3 = pytest.importorskip("stable_baselines3")


def test_sb3_adapter_matches_single_env_with_same_step_reset():
    """Observations, rewards, ends and infos, and the frames (trails included) of each
    env, equal the single env seeded ``seed + i`` reset after each episode."""
    from steer_env.envs.sb3 import make_sb3_vec_env

    n, steps = 3, 120
    venv = make_sb3_vec_env(
        "steer_env/Pursuit-v0", n_envs=n, seed=5, time_limit=30, render_mode="rgb_array"
    )
    obs = venv.reset()
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, size=(steps, n, 2)).astype(np.float32)
    singles = []
    for i in range(n):
        env = gym.make("steer_env/Pursuit-v0", time_limit=30, render_mode="rgb_array")
        o, _ = env.reset(seed=5 + i)
        np.testing.assert_array_equal(o, obs[i])
        singles.append(env)
    finished = 0
    for t in range(steps):
        obs, rewards, dones, infos = venv.step(actions[t])
        frames = venv.get_images() if t % 10 == 0 or dones.any() else None
        for i, env in enumerate(singles):
            o, r, term, trunc, info = env.step(actions[t, i])
            assert rewards[i] == pytest.approx(r, abs=1e-6)  # SB3 rewards are float32
            assert dones[i] == (term or trunc)
            if term or trunc:
                finished += 1
                np.testing.assert_array_equal(infos[i]["terminal_observation"], o)
                assert infos[i]["TimeLimit.truncated"] == (trunc and not term)
                assert infos[i]["is_success"] == info["is_success"]
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[i], o)
            if frames is not None:
                np.testing.assert_array_equal(frames[i], env.render(), err_msg=f"env {i} t {t}")
    assert finished >= n


def test_sb3_ppo_trains_on_the_adapter():
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from steer_env.envs.sb3 import make_sb3_vec_env

    torch.set_num_threads(1)
    venv = VecMonitor(make_sb3_vec_env("steer_env/Pursuit-v0", n_envs=8, seed=0))
    model = PPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=4096)
    assert model.num_timesteps >= 4096
    assert len(model.ep_info_buffer) > 0  # episodes completed and were logged
    obs = venv.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (8, 2)
    assert np.all(np.abs(action) <= 1.0)
