"""The crowd navigation task: CrowdNav's scenarios, rules, rewards and metrics, the
pedestrians written with the classic behaviours, its Gymnasium and PettingZoo front ends,
bad input and the baselines."""

from __future__ import annotations

import math
import os

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401
from steer_env.envs.sb3 import make_sb3_vec_env
from steer_env.rules import crowd as crowd_rules
from steer_env.tasks import REGISTRY

TASK = REGISTRY["crowd"]
ID = "steer_env/Crowd-v0"
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def _play(name, episodes, seed=1000, **kwargs):
    """Play ``episodes`` seeded episodes with the baseline ``name``: the final infos."""
    from agents.evaluation.scripted import ScriptedPolicy

    env = gym.make_vec(ID, num_envs=episodes, vectorization_mode="vector_entry_point", **kwargs)
    policy = ScriptedPolicy(ID, name, config=kwargs)
    obs, _ = env.reset(seed=seed)
    done = np.zeros(episodes, bool)
    keys = ("is_success", "goal_step", "navigation_time", *crowd_rules.OUTCOME)
    final = {key: np.zeros(episodes) for key in keys}
    for _ in range(env.unwrapped.config.time_limit + 1):
        action, _ = policy.predict(obs)
        obs, _, terminated, truncated, info = env.step(action)
        ended = (terminated | truncated) & ~done
        for key in keys:
            final[key][ended] = info[key][ended]
        done |= ended
        if done.all():
            break
    env.close()
    assert done.all()
    return final


def _positions(env):
    batch = env.unwrapped.batch
    return batch.state.position[0], batch.state.goal[0], batch.is_team("human")


# --------------------------------------------------------------------------- the start
def test_circle_crossing_is_crowdnav_s_test_case():
    """The robot from (0, -4) to (0, 4); each human within human_noise of the circle of
    radius 4 (in x and y) with its goal at the opposite point; everyone at rest, facing
    its goal; no two bodies closer than discomfort_distance at the start."""
    env = gym.make(ID)
    for seed in range(20):
        env.reset(seed=seed)
        pos, goal, human = _positions(env)
        np.testing.assert_allclose(pos[0], [0.0, -4.0], atol=1e-12)
        np.testing.assert_allclose(goal[0], [0.0, 4.0], atol=1e-12)
        np.testing.assert_allclose(goal[human], -pos[human])
        # A point of the circle lies within the square of half-side 0.5 around the start.
        r = np.linalg.norm(pos[human], axis=1)
        assert np.all(np.abs(r - 4.0) <= 0.5 * math.sqrt(2) + 1e-9)
        state = env.unwrapped.batch.state
        assert np.all(state.velocity[0] == 0.0)
        to_goal = goal - pos
        to_goal /= np.linalg.norm(to_goal, axis=1, keepdims=True)
        np.testing.assert_allclose(state.heading[0], to_goal, atol=1e-12)
        gaps = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(len(pos)) * 99
        assert gaps.min() >= 2 * 0.3 + 0.2 - 1e-9


@pytest.mark.parametrize("scenario", ["square_crossing", "parallel_traffic"])
def test_the_other_scenarios_place_starts_and_goals_as_documented(scenario):
    env = gym.make(ID, scenario=scenario, n_humans=12)
    for seed in range(10):
        env.reset(seed=seed)
        pos, goal, human = _positions(env)
        p, g = pos[human], goal[human]
        assert np.all(np.abs(p) <= 5.0 + 1e-9) and np.all(np.abs(g) <= 5.0 + 1e-9)
        if scenario == "square_crossing":
            # Start and goal on opposite sides (x of opposite signs).
            assert np.all(p[:, 0] * g[:, 0] <= 0.0)
        else:
            # Streams along y: the goal straight ahead at the far end of the way.
            np.testing.assert_array_equal(p[:, 0], g[:, 0])
            assert np.all(np.abs(p[:, 0]) <= 2.5 + 1e-9)
            assert np.all(np.abs(g[:, 1]) == 5.0)
            assert np.all(np.sign(g[:, 1]) * p[:, 1] <= 0.0)  # in the first half of the way


def test_several_robots_start_on_their_circle_and_cross():
    from steer_env.envs import crowd_v0

    env = crowd_v0.parallel_env(n_robots=3)
    env.reset(seed=0)
    pos, goal = env.batch.state.position[0], env.batch.state.goal[0]
    for k in range(3):
        angle = -math.pi / 2 + 2 * math.pi * k / 3
        np.testing.assert_allclose(pos[k], [4 * math.cos(angle), 4 * math.sin(angle)], atol=1e-12)
        np.testing.assert_allclose(goal[k], -pos[k])


# --------------------------------------------------------------------------- the rules
def _place(env, robot, humans, velocity=None):
    """Put the robot at ``robot`` and the humans at ``humans`` (the rest far away)."""
    state = env.unwrapped.batch.state
    state.position[0, 0] = robot
    state.velocity[0] = 0.0
    n = state.position.shape[1]
    for j in range(1, n):
        state.position[0, j] = humans[j - 1] if j - 1 < len(humans) else (6.0, 6.0 - j * 0.7)
        state.goal[0, j] = state.position[0, j]
    if velocity is not None:
        state.velocity[0, 0] = velocity


def test_reaching_the_goal_is_a_success_with_crowdnav_s_metrics():
    env = gym.make(ID, progress_scale=0.0)
    env.reset(seed=0)
    _place(env, (0.0, 3.9), [])
    _, reward, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["is_success"]
    assert reward == info["reward_goal"] == 1.0
    assert info["goal_step"] == 1 and info["navigation_time"] == 0.25
    assert info["collision_rate"] == 0.0 and info["timeout_rate"] == 0.0
    assert not env.unwrapped.batch.state.alive[0, 0]  # the robot left the game


def test_a_collision_ends_the_episode_with_the_penalty():
    env = gym.make(ID, progress_scale=0.0)
    env.reset(seed=0)
    _place(env, (0.0, 0.0), [(0.55, 0.0)])  # bodies 0.3 + 0.3 overlap
    _, reward, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and not info["is_success"]
    assert reward == info["reward_collision"] == -0.25
    assert info["collision_rate"] == 1.0 and info["goal_step"] == -1
    assert info["navigation_time"] == -1.0


def test_a_fast_robot_cannot_pass_through_a_human():
    """The swept test: a robot crossing a human's place within one step collides."""
    env = gym.make(ID, robot_max_speed=40.0, robot_max_force=400.0, progress_scale=0.0)
    env.reset(seed=0)
    _place(env, (-3.0, 0.0), [(0.0, 0.0)], velocity=(40.0, 0.0))
    _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert env.unwrapped.batch.state.position[0, 0, 0] > 3.0  # passed the human's place
    assert terminated and info["collision_rate"] == 1.0


def test_discomfort_is_crowdnav_s_penalty_and_counts_in_the_frequency():
    env = gym.make(ID, progress_scale=0.0, time_limit=2)
    env.reset(seed=0)
    _place(env, (0.0, 0.0), [(0.7, 0.0)])  # gap 0.1 m between bodies
    _, reward, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert not terminated
    assert reward == pytest.approx((0.1 - 0.2) * 0.5 * 0.25)
    assert reward == info["reward_discomfort"]
    _place(env, (0.0, 0.0), [(3.0, 0.0)])
    _, reward, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["timeout_rate"] == 1.0 and reward == 0.0
    assert info["discomfort_frequency"] == 0.5  # one of two steps too close
    assert info["danger_distance"] == pytest.approx(0.1)


def test_progress_shaping_sums_to_minus_the_first_potential():
    """Discounted by shaping_gamma, an episode's progress terms sum to -phi(s_0)
    (phi = -progress_scale * distance to the goal; 0 in terminal states)."""
    env = gym.make(ID, progress_scale=0.5, shaping_gamma=0.9)
    env.reset(seed=3)
    pos, goal, _ = _positions(env)
    start = -0.5 * np.linalg.norm(pos[0] - goal[0])
    rng = np.random.default_rng(1)
    total, t, terminated = 0.0, 0, False
    while not terminated:
        _, _, terminated, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        total += 0.9**t * info["reward_progress"]
        t += 1
    assert total == pytest.approx(-start, abs=1e-9)


def test_invisible_robot_is_ignored_by_the_humans_and_visible_one_is_avoided():
    """A human walking at a robot standing in its way: invisible, it walks into it (a
    collision); visible, its collision avoidance steers it round."""
    outcomes = {}
    for visible in (False, True):
        env = gym.make(ID, visible=visible, n_humans=1, progress_scale=0.0)
        env.reset(seed=0)
        state = env.unwrapped.batch.state
        state.position[0, 0] = (0.0, 0.0)
        state.position[0, 1] = (0.0, 3.0)
        state.goal[0, 1] = (0.0, -3.0)
        state.heading[0, 1] = (0.0, -1.0)
        state.velocity[0] = 0.0
        collided = False
        for _ in range(40):
            _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
            if terminated:
                collided = info["collision_rate"] == 1.0
                break
        outcomes[visible] = collided
    assert outcomes == {False: True, True: False}


def test_invariants_over_an_episode():
    env = gym.make(ID, n_humans=20, n_obstacles=4)
    space = env.observation_space
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert space.contains(obs)
        speeds = env.unwrapped.max_speeds
        while True:
            obs, reward, terminated, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
            assert space.contains(obs)
            v = np.linalg.norm(env.unwrapped.velocities, axis=1)
            assert np.all(v <= speeds + 1e-9)
            parts = sum(info[f"reward_{t}"] for t in crowd_rules.REWARD_TERMS)
            assert reward == pytest.approx(parts)
            if terminated:
                break
        ends = info["is_success"] + info["collision_rate"] + info["timeout_rate"]
        assert ends == 1.0  # exactly one of the three


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_humans=st.integers(1, 100),
    scenario=st.sampled_from(crowd_rules.SCENARIOS),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_crowd_size_and_scenario_starts_inside_the_walls(n_humans, scenario, seed):
    env = gym.make(ID, n_humans=n_humans, scenario=scenario)
    obs, _ = env.reset(seed=seed)
    assert env.observation_space.contains(obs)
    pos, goal, _ = _positions(env)
    inner = 7.0 - 0.3
    assert np.all(np.abs(pos) <= inner + 1e-9) and np.all(np.abs(goal) <= inner + 1e-9)


def test_obstacles_stay_off_every_goal():
    env = gym.make(ID, n_obstacles=12, n_humans=10)
    for seed in range(10):
        env.reset(seed=seed)
        state = env.unwrapped.batch.state
        obstacles = state.obstacles[0]
        placed = obstacles[obstacles[:, 2] > 0]
        assert len(placed) > 0
        for gx, gy in state.goal[0]:
            d = np.hypot(placed[:, 0] - gx, placed[:, 1] - gy)
            assert np.all(d >= placed[:, 2] + 0.3 + 0.6 - 1e-9)


# --------------------------------------------------------------------------- front ends
def test_gymnasium_and_sb3_checkers_pass():
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(ID).unwrapped, skip_render_check=True)
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check

    sb3_check(gym.make(ID).unwrapped, warn=True)


def test_the_observation_keeps_its_size_across_crowd_sizes():
    """The nearest observed_humans (5) are observed, padding beyond the crowd: one policy
    plays crowds of any size."""
    shapes = {gym.make(ID, n_humans=n).observation_space.shape for n in (1, 5, 20, 100)}
    assert shapes == {(38,)}
    env = gym.make(ID, n_humans=2)
    obs, _ = env.reset(seed=0)
    present = [11 + 5 * k + 4 for k in range(5)]
    np.testing.assert_array_equal(obs[present], [1, 1, 0, 0, 0])


def test_the_made_env_reports_its_time_limit():
    assert gym.make(ID).spec.max_episode_steps == 100
    assert gym.make(ID, time_limit=60).spec.max_episode_steps == 60


def test_vector_env_i_equals_a_single_env_seeded_seed_plus_i():
    venv = gym.make_vec(ID, num_envs=3, vectorization_mode="vector_entry_point", n_humans=8)
    obs_v, _ = venv.reset(seed=11)
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (60, 3, 2)).astype(np.float32)
    trace_v = [obs_v]
    for a in actions:
        trace_v.append(venv.step(a)[0])
    for i in range(3):
        env = gym.make(ID, n_humans=8)
        obs, _ = env.reset(seed=11 + i)
        assert np.array_equal(obs, trace_v[0][i])
        for t, a in enumerate(actions):
            obs, _, terminated, _, _ = env.step(a[i])
            if terminated:  # the vector env restarted it; the traces part here
                break
            assert np.array_equal(obs, trace_v[t + 1][i]), (i, t)


def test_same_seed_same_episode_and_frames():
    pytest.importorskip("pygame")
    runs = []
    for _ in range(2):
        env = gym.make(ID, render_mode="rgb_array", n_obstacles=3)
        obs, _ = env.reset(seed=4)
        rng = np.random.default_rng(0)
        trace = [obs]
        for _ in range(5):
            trace.append(env.step(rng.uniform(-1, 1, 2).astype(np.float32))[0])
        runs.append((np.array(trace), env.render()))
        env.close()
    assert np.array_equal(runs[0][0], runs[1][0])
    assert np.array_equal(runs[0][1], runs[1][1])
    green = np.array([86, 196, 116])  # the goal's ring
    assert (np.abs(runs[0][1].astype(int) - green).sum(axis=2) < 30).sum() > 20


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_humans": 0}, "n_humans"),
        ({"n_humans": 10**6}, "n_humans"),
        ({"scenario": "ring"}, "scenario"),
        ({"visible": 1}, "visible"),
        ({"circle_radius": 9.0}, "circle_radius"),
        ({"square_width": 20.0}, "square_width"),
        ({"robot_max_speed": math.nan}, "robot_max_speed"),
        ({"discomfort_distance": -1.0}, "discomfort_distance"),
        ({"combination": "sum"}, "combination"),
        ({"observed_humans": -1}, "observed_humans"),
        ({"n_robots": 2}, "n_robots"),
        ({"humans": 3}, "humans"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gym.make(ID, **kwargs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: gym.make(ID, n_robots=2),
        lambda: gym.make_vec(ID, num_envs=2, vectorization_mode="vector_entry_point", n_robots=2),
        lambda: make_sb3_vec_env(ID, n_envs=2, n_robots=2),
    ],
    ids=["make", "make_vec", "sb3"],
)
def test_the_single_robot_forms_refuse_several_robots(make):
    with pytest.raises(ValueError, match=r"n_robots must be 1, got 2 .*crowd_v0"):
        make()


def test_pettingzoo_api_and_seed_tests():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

    from steer_env.envs import crowd_v0

    parallel_api_test(crowd_v0.parallel_env(n_robots=2, n_humans=6), num_cycles=100)
    parallel_seed_test(lambda: crowd_v0.parallel_env(n_robots=2, n_humans=6), num_cycles=100)
    api_test(crowd_v0.env(n_robots=2, n_humans=6), num_cycles=50)
    parallel_api_test(crowd_v0.parallel_env(n_robots=2, n_obstacles=4), num_cycles=60)


def test_a_robot_at_its_goal_leaves_the_parallel_env():
    from steer_env.envs import crowd_v0

    env = crowd_v0.parallel_env(n_robots=2, progress_scale=0.0)
    env.reset(seed=0)
    state = env.batch.state
    state.position[0, 0] = state.goal[0, 0]
    state.position[0, 1] = (3.0, 0.0)  # out of the way (it started at robot_0's goal)
    state.velocity[0] = 0.0
    _, rewards, terminations, _, infos = env.step(
        {"robot_0": np.zeros(2, np.float32), "robot_1": np.zeros(2, np.float32)}
    )
    assert terminations == {"robot_0": True, "robot_1": False}
    assert rewards["robot_0"] == 1.0 and env.agents == ["robot_1"]
    assert infos["robot_1"]["robots_left"] == 1


def test_team_vector_env_matches_the_parallel_env():
    from steer_env.envs import crowd_v0

    venv = crowd_v0.vector_env(2, n_robots=2, n_humans=5)
    obs_v, _ = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1, 1, (20, 2, 2, 2))
    out = [venv.step(a) for a in actions]
    env = crowd_v0.parallel_env(n_robots=2, n_humans=5)
    obs, _ = env.reset(seed=6)
    assert np.array_equal(obs["robot_1"], obs_v[1, 1])
    for t, a in enumerate(actions):
        if not env.agents:
            break
        obs, rewards, *_ = env.step({name: a[1, k] for k, name in enumerate(env.agents)})
        for k, name in enumerate(("robot_0", "robot_1")):
            if name in obs:
                assert np.array_equal(obs[name], out[t][0][1, k]), (t, name)
                assert rewards[name] == out[t][1][1, k]


# --------------------------------------------------------------------------- baselines
def test_baselines_act_from_the_observation_within_the_action_bounds():
    from agents.evaluation.scripted import ScriptedPolicy

    env = gym.make(ID, n_obstacles=3)
    obs, _ = env.reset(seed=0)
    for name in TASK.baselines:
        policy = ScriptedPolicy(ID, name, config={"n_obstacles": 3})
        action, _ = policy.predict(obs)
        assert action.shape == (2,) and np.linalg.norm(action) <= 1 + 1e-6
        batch, _ = policy.predict(np.stack([obs, obs]))
        np.testing.assert_allclose(batch[0], action)


def test_the_seek_robot_heads_straight_for_its_goal():
    from agents.evaluation.scripted import ScriptedPolicy

    env = gym.make(ID, n_humans=1)
    obs, _ = env.reset(seed=0)
    _place(env, (0.0, -4.0), [(6.0, 6.0)])
    obs = env.unwrapped.batch.observe()[0, 0]
    action, _ = ScriptedPolicy(ID, "seek", config={"n_humans": 1}).predict(obs)
    # Facing the goal at rest: Reynolds' seek, desired velocity (max speed at the goal)
    # minus velocity, all forward: 1 N of the robot's 4 N.
    assert action[0] == pytest.approx(0.25, abs=1e-6) and abs(action[1]) < 1e-6


@pytest.mark.slow
def test_calibration_the_classic_robot_beats_the_seek_robot():
    """500 seeded episodes: the classic robot reaches its goal far more often than a
    straight line through the crowd, and collides less."""
    from agents.evaluation import stats

    classic = _play("classic", 500)
    seek = _play("seek", 500)
    diff = stats.paired_proportion_difference(classic["is_success"], seek["is_success"])
    assert diff.lo > 0.3, diff
    assert classic["collision_rate"].mean() < seek["collision_rate"].mean()
    ended = classic["is_success"] + classic["collision_rate"] + classic["timeout_rate"]
    np.testing.assert_array_equal(ended, 1.0)


# --------------------------------------------------------------------------- a peer's crowd
@pytest.mark.parametrize("crowd", ["orca", "social_force"])
def test_a_peer_drives_the_humans_that_apply_no_force_of_their_own(crowd):
    """Passive humans stand still; under a peer's model they walk to their goals, and the
    episode is still the env's own (its seeds, rules and metrics)."""
    from steer_env.tasks.crowd import PASSIVE_HUMANS, PEER_CROWDS, have_peer

    if not have_peer(crowd):  # (importorskip would import it here, with its side effects)
        pytest.skip(f"{PEER_CROWDS[crowd].module} is not installed")

    def human_travel(wrapped: bool) -> tuple[float, float]:
        venv = gym.make_vec(
            ID, num_envs=2, vectorization_mode="vector_entry_point", human_strategy=PASSIVE_HUMANS
        )
        env = PEER_CROWDS[crowd](venv) if wrapped else venv
        env.reset(seed=3)
        state = venv.unwrapped.batch.state
        humans = venv.unwrapped.batch.is_team("human")
        start = state.position[:, humans].copy()
        goal = state.goal[:, humans]
        for _ in range(8):
            env.step(np.zeros((2, 2), np.float32))
        moved = np.linalg.norm(state.position[:, humans] - start, axis=2)
        nearer = np.linalg.norm(start - goal, axis=2) - np.linalg.norm(
            state.position[:, humans] - goal, axis=2
        )
        return float(moved.min()), float(nearer.min())

    assert human_travel(False) == (0.0, 0.0)
    moved, nearer = human_travel(True)
    assert moved > 1.0 and nearer > 0.5  # 8 steps of 0.25 s at up to 1 m/s, goalwards


def test_a_peer_needs_the_passive_humans():
    from steer_env.tasks.crowd import OrcaCrowd

    pytest.importorskip("rvo2")
    venv = gym.make_vec(ID, num_envs=1, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="human_strategy"):
        OrcaCrowd(venv)


def test_the_peer_crowd_command_writes_its_comparison(tmp_path):
    import json
    import subprocess
    import sys

    pytest.importorskip("rvo2")
    out = tmp_path / "orca.json"
    cmd = [sys.executable, "-m", "agents.evaluation.peer_crowds", "--episodes", "12"]
    run = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    assert data["crowd"] == "orca" and data["episodes"] == 12
    assert set(data["agents"]) == {"learned", "classic", "seek"}
    bad = subprocess.run([*cmd, "--crowd", "ghosts"], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--crowd" in bad.stderr


def test_the_social_force_library_leaves_no_file_and_the_logging_as_it_was(tmp_path):
    """``pysocialforce`` opens ``file.log`` in the working directory and sets the root
    logger to DEBUG on import; the crowd imports it without either."""
    import subprocess
    import sys

    from steer_env.tasks.crowd import have_peer

    if not have_peer("social_force"):
        pytest.skip("pysocialforce is not installed")
    code = (
        "import logging\n"
        "from steer_env.tasks.crowd import _import_pysocialforce\n"
        "_import_pysocialforce()\n"
        "root = logging.getLogger()\n"
        "assert root.level == logging.WARNING and not root.handlers, (root.level, root.handlers)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == "" and list(tmp_path.iterdir()) == []
