"""The team task's native batched form and its SB3 parameter-sharing adapter.

The reference is the PettingZoo ``ParallelEnv`` (itself checked by PettingZoo's own tests
in ``test_team_pursuit.py``): env ``i`` of a batch seeded ``s`` must be the ParallelEnv
seeded ``s + i``, step for step, through autoresets.
"""

from __future__ import annotations

import numpy as np
import pytest

from steer_env.envs import team_pursuit_v0
from steer_env.envs.sb3 import TeamSB3VecEnv, make_team_sb3_vec_env

CONFIGS = [
    {"learned": "pursuers", "time_limit": 60},
    {"learned": "evaders", "n_evaders": 2, "time_limit": 60},
    {"learned": "both", "n_pursuers": 2, "n_evaders": 3, "time_limit": 60},
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c["learned"])
def test_env_i_of_the_batch_is_the_parallel_env_seeded_seed_plus_i(cfg):
    num_envs, steps, seed = 4, 150, 10
    venv = team_pursuit_v0.vector_env(num_envs, **cfg)
    first, _ = venv.reset(seed=seed)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1.5, 1.5, (steps, num_envs, venv.n_agents, 2))
    trace = []
    ended = np.zeros(num_envs, dtype=bool)
    restarts = np.zeros(num_envs, dtype=int)
    for t in range(steps):
        obs, rew, term, trunc, info = venv.step(actions[t])
        assert not trunc.any()
        trace.append((obs, rew, term, ended.copy(), info["in_game"]))
        restarts += ended
        ended = info["done"]
    assert (restarts >= 1).all(), restarts  # every env went through an autoreset

    for i in range(num_envs):
        env = team_pursuit_v0.parallel_env(**cfg)
        names = env.possible_agents
        assert names == venv.possible_agents
        obs, _ = env.reset(seed=seed + i)
        for a, name in enumerate(names):
            np.testing.assert_array_equal(obs[name], first[i, a])
        for t, (b_obs, b_rew, b_term, b_restart, b_in_game) in enumerate(trace):
            if b_restart[i]:  # NEXT_STEP: this step started the env's next episode
                obs, _ = env.reset()
                assert not b_term[i].any() and not b_rew[i].any()
                for a, name in enumerate(names):
                    np.testing.assert_array_equal(obs[name], b_obs[i, a])
                continue
            live = list(env.agents)
            obs, rew, term, _, _ = env.step({n: actions[t, i, names.index(n)] for n in live})
            for name in live:
                a = names.index(name)
                np.testing.assert_array_equal(obs[name], b_obs[i, a], err_msg=f"{t=} {name}")
                assert rew[name] == b_rew[i, a]
                assert term[name] == b_term[i, a]
            assert [n in env.agents for n in names] == b_in_game[i].tolist()


def test_env_i_of_the_batch_draws_the_parallel_env_seeded_seed_plus_i():
    """Frames too (trails included), through autoresets: a restarted env's trail starts
    from its new position, as after the parallel env's ``reset()``."""
    num_envs, steps, seed, cfg = 2, 70, 3, {"time_limit": 20, "render_mode": "rgb_array"}
    venv = team_pursuit_v0.vector_env(num_envs, **cfg)
    venv.reset(seed=seed)
    singles = [team_pursuit_v0.parallel_env(**cfg) for _ in range(num_envs)]
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    names = venv.possible_agents
    actions = np.random.default_rng(1).uniform(-1, 1, (steps, num_envs, venv.n_agents, 2))
    ended = np.zeros(num_envs, dtype=bool)
    restarts = np.zeros(num_envs, dtype=int)
    for t in range(steps):
        _, _, _, _, info = venv.step(actions[t])
        restarts += ended
        frames = venv.render()
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP: this step started env i's next episode
                env.reset()
            else:
                env.step({n: actions[t, i, names.index(n)] for n in env.agents})
            np.testing.assert_array_equal(frames[i], env.render(), err_msg=f"env {i} t {t}")
        ended = info["done"]
    assert (restarts >= 2).all(), restarts  # every env went through autoresets


def test_bad_actions_name_the_agent_and_env_and_simulate_nothing():
    venv = team_pursuit_v0.vector_env(3, learned="both", n_evaders=2)
    venv.reset(seed=1)
    before = venv.batch.state.position.copy()
    act = np.zeros((3, 5, 2))
    act[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"'evader_0' in env 2 must be finite"):
        venv.step(act)
    with pytest.raises(ValueError, match=r"shape \(3, 5, 2\)"):
        venv.step(np.zeros((3, 4, 2)))
    with pytest.raises(ValueError, match="numbers of shape"):
        venv.step([["x"]])
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": [True]})
    np.testing.assert_array_equal(venv.batch.state.position, before)
    assert not venv.batch.state.steps.any()


def test_departed_agents_actions_are_ignored_whatever_they_hold():
    venv = team_pursuit_v0.vector_env(
        1, learned="evaders", n_evaders=3, speed_ratio=0.5, time_limit=400
    )
    venv.reset(seed=3)
    for _ in range(400):
        act = np.zeros((1, 3, 2))
        out = ~venv.in_game()[0]
        act[0, out] = np.nan  # allowed: those agents are out of the game
        _, rew, term, _, info = venv.step(act)
        assert np.isfinite(rew).all()
        assert term[0, out].all() and not rew[0, out].any()
        if info["done"][0]:
            break
    assert (info["capture_step"] >= 0).any()  # slow evaders were caught one by one


DEPARTED_CFG = {"learned": "evaders", "n_evaders": 3, "speed_ratio": 0.5, "time_limit": 400}


def _departed_fill(kind: str, shape: tuple[int, ...], rng: np.random.Generator):
    """What a caller may send for an agent that left the game."""
    return {"zeros": np.zeros(shape), "nan": np.full(shape, np.nan)}.get(
        kind, rng.uniform(-50.0, 50.0, shape)
    )


@pytest.mark.parametrize("form", ["parallel_env", "vector_env"])
@pytest.mark.parametrize("kind", ["nan", "large"])
def test_both_forms_ignore_a_departed_agents_action_the_same_way(form, kind):
    """An episode in which evaders are caught one by one, replayed with the departed
    evaders' actions zero and then anything else (NaN, out-of-range numbers): the same
    observations, rewards, terminations and infos step by step, in both forms."""

    def play(fill: str):
        rng = np.random.default_rng(7)
        fills = np.random.default_rng(8)
        trace = []
        departed = 0  # agent-steps sent for agents out of the game
        if form == "vector_env":
            venv = team_pursuit_v0.vector_env(1, **DEPARTED_CFG)
            venv.reset(seed=3)
            for _ in range(400):
                act = rng.uniform(-1, 1, (1, 3, 2))
                out = ~venv.in_game()[0]
                act[0, out] = _departed_fill(fill, (int(out.sum()), 2), fills)
                departed += int(out.sum())
                obs, rew, term, _, info = venv.step(act)
                trace.append((obs, rew, term, info["distance"], info["captured"]))
                if info["done"][0]:
                    break
            return trace, departed
        env = team_pursuit_v0.parallel_env(**DEPARTED_CFG)
        env.reset(seed=3)
        while env.agents:
            moves = rng.uniform(-1, 1, (3, 2))
            act = {}
            for a, name in enumerate(env.possible_agents):
                if name in env.agents:
                    act[name] = moves[a]
                else:
                    departed += 1
                    if fill != "zeros":
                        act[name] = _departed_fill(fill, (2,), fills)
            obs, rew, term, _, info = env.step(act)
            trace.append((obs, rew, term, info))
        return trace, departed

    (reference, departed), (other, _) = play("zeros"), play(kind)
    assert departed > 20  # evaders caught one by one: many steps with departed agents
    assert len(reference) == len(other) > 1
    for t, (want, got) in enumerate(zip(reference, other, strict=True)):
        for w, g in zip(want, got, strict=True):
            if isinstance(w, dict):
                assert w.keys() == g.keys(), t
                for name in w:
                    for key in w[name] if isinstance(w[name], dict) else [None]:
                        a = w[name] if key is None else w[name][key]
                        b = g[name] if key is None else g[name][key]
                        np.testing.assert_array_equal(a, b, err_msg=f"step {t} {name} {key}")
            else:
                np.testing.assert_array_equal(w, g, err_msg=f"step {t}")


# ----------------------------------------------------------------------- the SB3 adapter
def test_adapter_slots_follow_the_parallel_env_with_sb3_episode_semantics():
    num_envs, seed = 3, 5
    venv = make_team_sb3_vec_env(num_envs, seed=seed, time_limit=40)
    assert isinstance(venv, TeamSB3VecEnv) and venv.num_envs == num_envs * 3
    obs = venv.reset()
    envs = [team_pursuit_v0.parallel_env(time_limit=40) for _ in range(num_envs)]
    ref = [env.reset(seed=seed + e)[0] for e, env in enumerate(envs)]
    for e in range(num_envs):
        for j in range(3):
            np.testing.assert_array_equal(obs[3 * e + j], ref[e][f"pursuer_{j}"])
    rng = np.random.default_rng(1)
    finished = 0
    for _ in range(130):
        act = rng.uniform(-1, 1, (venv.num_envs, 2)).astype(np.float32)
        obs, rew, done, infos = venv.step(act)
        for e, env in enumerate(envs):
            o, r, term, _, _ = env.step({f"pursuer_{j}": act[3 * e + j] for j in range(3)})
            for j in range(3):
                s, name = 3 * e + j, f"pursuer_{j}"
                assert rew[s] == np.float32(r[name]) and done[s] == term[name]
                if done[s]:
                    np.testing.assert_array_equal(infos[s]["terminal_observation"], o[name])
                    assert infos[s]["TimeLimit.truncated"] is False
                    captured = infos[s]["is_success"]
                    assert captured == (env.batch.state.capture_step[0, -1] >= 0)
                else:
                    np.testing.assert_array_equal(obs[s], o[name])
            if not env.agents:  # SB3: the returned observation is the next episode's
                finished += 1
                o, _ = env.reset()
                for j in range(3):
                    np.testing.assert_array_equal(obs[3 * e + j], o[f"pursuer_{j}"])
    assert finished >= num_envs


def test_adapter_agents_that_leave_play_a_zero_filler_until_their_env_ends():
    cfg = {"learned": "evaders", "n_evaders": 3, "speed_ratio": 0.5, "time_limit": 300}
    venv = make_team_sb3_vec_env(1, seed=3, role="evader", **cfg)
    ref = team_pursuit_v0.parallel_env(**cfg)
    ref.reset(seed=3)
    venv.reset()
    left: set[int] = set()
    saw_filler = False
    for _ in range(300):
        obs, rew, done, infos = venv.step(np.zeros((3, 2), dtype=np.float32))
        live = list(ref.agents)
        o, *_ = ref.step(dict.fromkeys(live, np.zeros(2)))
        env_over = not ref.agents
        for s in range(3):
            name = f"evader_{s}"
            if s in left:  # filler: zero observation and reward, done only at the env's end
                saw_filler = True
                assert rew[s] == 0 and done[s] == env_over
                if not env_over:
                    assert not obs[s].any()
                else:
                    assert infos[s]["departed"] is True and "is_success" not in infos[s]
            elif name not in ref.agents:  # left on this step
                assert done[s]
                np.testing.assert_array_equal(infos[s]["terminal_observation"], o[name])
                assert infos[s]["is_success"] is bool(ref.batch.state.capture_step[0, 3 + s] < 0)
                if not env_over:
                    left.add(s)
                    assert not obs[s].any()
        if env_over:
            break
    assert saw_filler


def test_adapter_trains_ppo_and_a_frozen_opponent_acts_for_the_other_role():
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    pursuers = PPO(
        "MlpPolicy",
        VecMonitor(make_team_sb3_vec_env(4, seed=0)),
        n_steps=32,
        batch_size=128,
        n_epochs=1,
        seed=0,
    )
    pursuers.learn(384)
    # The observation layout does not depend on which roles are learned, so the pursuers'
    # policy acts against learned evaders too.
    evaders = make_team_sb3_vec_env(2, seed=0, role="evader", learned="both", opponent=pursuers)
    assert evaders.num_envs == 2
    obs = evaders.reset()
    assert obs.shape == (2, pursuers.observation_space.shape[0])
    for _ in range(5):
        obs, rew, _, _ = evaders.step(np.zeros((2, 2), dtype=np.float32))
        assert np.isfinite(rew).all()


def test_adapter_errors_name_the_problem():
    with pytest.raises(ValueError, match="opponent"):
        make_team_sb3_vec_env(2, learned="both")
    with pytest.raises(ValueError, match="role 'evader' is not learned"):
        make_team_sb3_vec_env(2, role="evader")
    with pytest.raises(ValueError, match="role must be one of"):
        make_team_sb3_vec_env(2, role="hunter")
    venv = make_team_sb3_vec_env(2, seed=0)
    venv.reset()
    with pytest.raises(ValueError, match=r"actions must have shape \(6, 2\)"):
        venv.step(np.zeros((2, 2)))


def test_adapter_same_seed_same_rollout_and_seeds_per_environment():
    def rollout():
        venv = make_team_sb3_vec_env(2, seed=7)
        out = [venv.reset()]
        for _ in range(50):
            out.append(venv.step(np.full((6, 2), 0.3, dtype=np.float32))[0])
        return np.stack(out)

    np.testing.assert_array_equal(rollout(), rollout())
    assert make_team_sb3_vec_env(2).seed(7) == [7, 7, 7, 8, 8, 8]


def test_adapter_renders_one_tile_per_environment(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    venv = make_team_sb3_vec_env(2, seed=0, render_mode="rgb_array")
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2 and frames[0].shape == (600, 600, 3)
    assert venv.render().shape == (1200, 600, 3)  # SB3 tiles 2 frames in 2 rows
    assert venv.metadata["render_fps"] == team_pursuit_v0.TeamPursuitEnv.metadata["render_fps"]
