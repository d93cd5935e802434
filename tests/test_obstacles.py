"""Obstacles in every task's world: placement from the seed, contact like the walls, the
observation's obstacle slots, the scripted sides' obstacle avoidance, drawing, and the
configuration's errors."""

from __future__ import annotations

import importlib
import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401  (registers the ids)
from agents.evaluation.scripted import ScriptedPolicy
from steer_env.core.physics import circle_contact
from steer_env.tasks import REGISTRY

#: Rounding slack of the contact's projection onto an obstacle's edge, m.
TOLERANCE = 1e-9

ENV_IDS = ("steer_env/Pursuit-v0", "steer_env/Evasion-v0", "steer_env/Herding-v0")


def _clearances(batch, env: int = 0) -> np.ndarray:
    """Distance from every vehicle's body in the game to every obstacle's edge, m."""
    obstacles = batch.state.obstacles[env]
    present = obstacles[:, 2] > 0.0
    pos = batch.state.position[env][batch.state.alive[env]]
    radius = batch.vehicles["radius"][batch.state.alive[env]]
    centre = np.linalg.norm(pos[:, None, :] - obstacles[None, present, :2], axis=-1)
    return centre - obstacles[None, present, 2] - radius[:, None]


# --------------------------------------------------------------------------- the contact kernel
finite = st.floats(-20.0, 20.0, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(
    start=st.tuples(finite, finite),
    move=st.tuples(finite, finite),
    velocity=st.tuples(finite, finite),
    reach=st.floats(0.1, 8.0),
)
def test_contact_never_leaves_a_body_inside_and_keeps_no_inward_velocity(
    start, move, velocity, reach
):
    x0, y0 = start
    if math.hypot(x0, y0) < reach:  # the engine never starts a move inside an obstacle
        x0, y0 = (x0 / max(math.hypot(x0, y0), 1e-12)) * reach * 1.5 + 1e-3, y0 + 0.0
        if math.hypot(x0, y0) < reach:
            x0, y0 = reach * 2.0, 0.0
    x1, y1 = x0 + move[0], y0 + move[1]
    x, y, vx, vy, touched = circle_contact(x0, y0, x1, y1, *velocity, 0.0, 0.0, reach)
    assert math.hypot(x, y) >= reach - TOLERANCE
    if touched:
        nx, ny = x / reach, y / reach
        assert vx * nx + vy * ny >= -TOLERANCE * (1 + math.hypot(*velocity))
        # It stopped on the segment it moved along (where it first touched the circle)
        # or, ending inside after starting on the edge, on the edge nearest the end.
        assert math.hypot(x, y) == pytest.approx(reach, abs=TOLERANCE)
    else:
        assert (x, y, vx, vy) == (x1, y1, *velocity)
        # The segment never came closer than reach to the centre.
        dx, dy = x1 - x0, y1 - y0
        a = dx * dx + dy * dy
        t = 0.0 if a == 0 else min(max(-(x0 * dx + y0 * dy) / a, 0.0), 1.0)
        assert math.hypot(x0 + t * dx, y0 + t * dy) >= reach * (1 - TOLERANCE)


def test_a_fast_body_cannot_pass_through_a_small_obstacle_in_one_step():
    x, y, vx, vy, touched = circle_contact(-5.0, 0.0, 5.0, 0.0, 100.0, 0.0, 0.0, 0.0, 0.5)
    assert touched
    assert (x, y) == pytest.approx((-0.5, 0.0))
    assert (vx, vy) == pytest.approx((0.0, 0.0))


def test_a_body_on_the_edge_cannot_cross_the_obstacle():
    # Touching the north edge, it moves straight through to the south edge.
    x, y, vx, vy, touched = circle_contact(0.0, 1.0, 0.0, -1.0, 0.0, -20.0, 0.0, 0.0, 1.0)
    assert touched
    assert (x, y, vx, vy) == pytest.approx((0.0, 1.0, 0.0, 0.0))


def test_a_grazing_body_keeps_its_tangential_velocity():
    # Starts on the edge, moves inward and along it: pushed back out, the inward part gone.
    x, y, vx, vy, touched = circle_contact(0.0, 1.0, 0.3, 0.9, 3.0, -1.0, 0.0, 0.0, 1.0)
    assert touched
    assert math.hypot(x, y) == pytest.approx(1.0)
    assert vx * x + vy * y >= -1e-12
    assert vx > 0.0


# --------------------------------------------------------------------------- every front end
def _make(form: str, task: str, **config):
    """A one-env batch of ``task`` through front end ``form``, and a step function
    taking an action array of the batch's shape."""
    if form == "gym":
        env = gym.make(REGISTRY[task].env_id, **config)
        return env, env.unwrapped.batch
    module = importlib.import_module(REGISTRY[task].env_module)
    env = module.parallel_env(**config)
    return env, env.batch


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    task=st.sampled_from(["pursuit", "evasion", "herding", "team_pursuit"]),
    n_obstacles=st.integers(1, 16),
    dt=st.sampled_from([0.05, 0.1, 0.5, 1.0]),
    speed=st.floats(1.0, 60.0),
    force=st.floats(1.0, 400.0),
    seed=st.integers(0, 2**31),
)
def test_no_body_ever_overlaps_an_obstacle(task, n_obstacles, dt, speed, force, seed):
    config = {"n_obstacles": n_obstacles, "dt": dt, "time_limit": 60}
    if task in ("pursuit", "evasion"):
        config.update(agent_max_speed=speed, agent_max_force=force, opponent_max_speed=speed)
    elif task == "team_pursuit":
        config.update(pursuer_max_speed=speed, pursuer_max_force=force, learned="both")
    else:
        config.update(speed_ratio=speed / 2.0, dog_max_force=force, n_sheep=8)
    form = "gym" if task != "team_pursuit" else "parallel"
    env, batch = _make(form, task, **config)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    assert np.all(_clearances(batch) >= -TOLERANCE)
    for _ in range(60):
        if form == "gym":
            _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
            done = terminated or truncated
        else:
            env.step({a: rng.uniform(-1, 1, 2) for a in env.agents})
            done = not env.agents
        assert np.all(_clearances(batch) >= -TOLERANCE)
        assert np.all(
            np.linalg.norm(batch.state.velocity[0], axis=-1) <= batch.vehicles["max_speed"] + 1e-9
        )
        if done:
            break


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_seed_fixes_the_layout_and_vector_env_i_is_the_single_env_seeded_seed_plus_i(env_id):
    single = gym.make(env_id, n_obstacles=6)
    layouts = []
    for seed in (11, 12, 13):
        obs, _ = single.reset(seed=seed)
        layouts.append((single.unwrapped.batch.state.obstacles[0].copy(), obs))
    again, _ = single.reset(seed=11)
    np.testing.assert_array_equal(single.unwrapped.batch.state.obstacles[0], layouts[0][0])
    np.testing.assert_array_equal(again, layouts[0][1])
    assert not np.array_equal(layouts[0][0], layouts[1][0])
    vector = gym.make_vec(env_id, 3, vectorization_mode="vector_entry_point", n_obstacles=6)
    obs, _ = vector.reset(seed=11)
    for i, (layout, first) in enumerate(layouts):
        np.testing.assert_array_equal(vector.unwrapped.batch.state.obstacles[i], layout)
        np.testing.assert_array_equal(obs[i], first)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_placed_obstacles_keep_their_gaps_and_the_pen_clear(env_id):
    env = gym.make(env_id, n_obstacles=10)
    cfg = env.unwrapped.config
    for seed in range(20):
        env.reset(seed=seed)
        batch = env.unwrapped.batch
        obstacles = batch.state.obstacles[0]
        placed = obstacles[obstacles[:, 2] > 0]
        assert len(placed) >= 8  # the candidates rarely all fail
        assert np.all(placed[:, 2] >= cfg.obstacle_radius_min)
        assert np.all(placed[:, 2] <= cfg.obstacle_radius_max)
        # Gaps to the walls and between obstacles.
        assert np.all(
            np.abs(placed[:, :2]).max(axis=1) + placed[:, 2]
            <= cfg.half_size - cfg.obstacle_gap + 1e-9
        )
        d = np.linalg.norm(placed[:, None, :2] - placed[None, :, :2], axis=-1)
        gaps = d - placed[:, None, 2] - placed[None, :, 2]
        np.fill_diagonal(gaps, np.inf)
        assert np.all(gaps >= cfg.obstacle_gap - 1e-9)
        assert np.all(_clearances(batch) >= cfg.obstacle_gap - 1e-9)
        if hasattr(cfg, "pen_radius"):
            pen = np.linalg.norm(placed[:, :2] - (cfg.pen_x, cfg.pen_y), axis=1)
            assert np.all(pen - placed[:, 2] - cfg.pen_radius >= cfg.obstacle_gap - 1e-9)


def test_a_fixed_layout_is_every_episodes_and_no_vehicle_starts_inside_it():
    layout = [(0.0, 0.0, 4.0), (-7.0, 6.0, 2.0), (7.0, -6.0, 1.5)]
    env = gym.make("steer_env/Evasion-v0", obstacles=layout)
    for seed in range(30):
        env.reset(seed=seed)
        batch = env.unwrapped.batch
        np.testing.assert_array_equal(batch.state.obstacles[0], np.array(layout))
        assert np.all(_clearances(batch) >= batch.world.obstacles.gap - 1e-9)


def test_herding_sheep_that_start_inside_a_fixed_obstacle_are_pushed_out():
    # An obstacle under the flock's start square: sheep drawn inside it leave it at once.
    env = gym.make("steer_env/Herding-v0", obstacles=[(-20.0, -20.0, 15.0)], n_sheep=40)
    for seed in range(5):
        env.reset(seed=seed)
        assert np.all(_clearances(env.unwrapped.batch) >= -TOLERANCE)


def test_an_empty_arena_is_the_default():
    for task in REGISTRY.values():
        cfg = task.config()
        assert cfg.obstacle_count == 0 and cfg.obstacle_slots == 0
        assert task.world(cfg).obstacles.slots == 0


# --------------------------------------------------------------------------- the observation
def test_a_layout_of_64_obstacles_stops_every_body_and_fills_the_slots():
    """The contact test keeps one bit per row of the obstacle table: with the most
    obstacles a task takes (64, an 8 x 8 grid of small ones, the last row's bit the
    mask's top bit) fast vehicles are stopped as in any layout, and the slots show the
    nearest."""
    grid = [(-9.1 + 2.6 * (k % 8), -9.1 + 2.6 * (k // 8), 0.3) for k in range(64)]
    env = gym.make(
        "steer_env/Pursuit-v0", obstacles=grid, observed_obstacles=3, agent_max_speed=20.0
    )
    batch = env.unwrapped.batch
    table = batch.rules.FEATURES
    world = batch.world
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    # Start the learned pursuer below the last row's obstacle, then seek it.
    batch.state.position[0, batch.agent_index[0]] = (9.1, 7.6)
    obs = batch.observe()[0, 0]
    touched_last_row = False
    for _ in range(300):
        clear = _clearances(batch)
        assert np.all(clear >= -TOLERANCE)
        touched_last_row |= bool(np.any(clear[:, 63] < 0.01))
        p = batch.state.position[0, batch.agent_index[0]]
        edge = np.linalg.norm(np.array(grid)[:, :2] - p, axis=1) - 0.3
        for k, row in enumerate(np.argsort(edge, kind="stable")[:3]):
            radius_at = table.position(world, "obstacle", "radius", k)
            assert obs[radius_at] == pytest.approx(0.3 / world.arena_size, abs=1e-6)
            at = table.position(world, "obstacle", "offset_forward", k)
            shown = np.hypot(obs[at], obs[at + 1]) * world.arena_size * math.sqrt(2.0)
            assert shown == pytest.approx(max(edge[row], 0.0), abs=1e-4)
        # Seek the last row's obstacle (the mask's top bit), a little at random.
        h = batch.state.heading[0, batch.agent_index[0]]
        d = np.array(grid[63][:2]) - p
        local = np.array([d @ h, -d[0] * h[1] + d[1] * h[0]]) / max(np.linalg.norm(d), 1e-9)
        action = np.clip(local + rng.uniform(-0.3, 0.3, 2), -1, 1).astype(np.float32)
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
    assert touched_last_row


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_obstacle_slots_show_the_nearest_obstacles_edges_nearest_first(env_id):
    env = gym.make(env_id, n_obstacles=9, observed_obstacles=3)
    table = env.unwrapped.batch.rules.FEATURES
    world = env.unwrapped.batch.world
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=4)
    for _ in range(20):
        batch = env.unwrapped.batch
        agent = batch.agent_index[0]
        p = batch.state.position[0, agent]
        h = batch.state.heading[0, agent]
        obstacles = batch.state.obstacles[0]
        present = obstacles[obstacles[:, 2] > 0]
        edge = np.linalg.norm(present[:, :2] - p, axis=1) - present[:, 2]
        nearest = present[np.argsort(edge, kind="stable")[:3]]
        for k, (cx, cy, r) in enumerate(nearest):
            at = table.position(world, "obstacle", "offset_forward", k)
            forward, side = obs[at] * world_diagonal(world), obs[at + 1] * world_diagonal(world)
            # Back to the world frame: forward along the heading, side to its left.
            point = p + forward * h + side * np.array([-h[1], h[0]])
            towards = np.array([cx, cy]) - p
            want = p + towards * (1 - r / np.linalg.norm(towards))
            np.testing.assert_allclose(point, want, atol=1e-4)
            radius_at = table.position(world, "obstacle", "radius", k)
            assert obs[radius_at] == pytest.approx(r / world.arena_size, abs=1e-6)
            assert obs[table.position(world, "obstacle", "present", k)] == 1.0
        obs, *_ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), tie=st.booleans())
def test_the_obstacle_slots_do_not_depend_on_the_order_the_last_observation_left(seed, tie):
    """The engine starts each sort of the obstacles from the order the agent's last
    observation left (a head start, seldom changed by a move): any permutation there, the
    same slots, ties going to the lower row."""
    layout = [(-4.0, 0.0, 1.0), (4.0, 0.0, 1.0), (0.0, 4.0, 1.0), (0.0, -4.0, 1.0), (6, 6, 1)]
    config = {"obstacles": layout} if tie else {"n_obstacles": 7}
    env = gym.make("steer_env/Pursuit-v0", observed_obstacles=4, **config)
    env.reset(seed=seed)
    batch = env.unwrapped.batch
    if tie:  # the agent at the centre: four obstacles at the same distance
        batch.state.position[0, batch.agent_index[0]] = 0.0
    want = batch.observe()
    ranked = batch._working().obstacle_order
    rng = np.random.default_rng(seed)
    for _ in range(3):
        ranked[0, 0] = rng.permutation(ranked.shape[2])
        np.testing.assert_array_equal(batch.observe(), want)
    if tie:
        np.testing.assert_array_equal(ranked[0, 0][:4], [0, 1, 2, 3])


def world_diagonal(world) -> float:
    return world.arena_size * math.sqrt(2.0)


def test_padding_slots_are_zero_when_fewer_obstacles_than_slots():
    env = gym.make("steer_env/Pursuit-v0", obstacles=[(3.0, 3.0, 1.0)], observed_obstacles=3)
    obs, _ = env.reset(seed=0)
    table = env.unwrapped.batch.rules.FEATURES
    world = env.unwrapped.batch.world
    assert obs[table.position(world, "obstacle", "present", 0)] == 1.0
    start = table.offsets(world)["obstacle"]
    np.testing.assert_array_equal(obs[start + 4 :], 0.0)
    assert env.observation_space.shape == (16 + 4 * 3,)


def test_an_empty_arena_observes_what_it_did_before_obstacles():
    for env_id in ENV_IDS:
        env = gym.make(env_id)
        table = env.unwrapped.batch.rules.FEATURES
        assert table.group_names[-1] == "obstacle"
        assert (
            table.offsets(env.unwrapped.batch.world)["obstacle"] == env.observation_space.shape[0]
        )


# --------------------------------------------------------------------------- the scripted sides
def test_scripted_strategies_add_obstacle_avoidance_only_with_obstacles():
    for name, task in REGISTRY.items():
        kinds_empty = {
            b.kind for v in task.roster(task.config()) if v.strategy for b in v.strategy.behaviors
        }
        cfg = task.config(n_obstacles=4)
        kinds = {b.kind for v in task.roster(cfg) if v.strategy for b in v.strategy.behaviors}
        assert "obstacle_avoidance" not in kinds_empty, name
        assert kinds - kinds_empty == {"obstacle_avoidance"}, name


@pytest.mark.parametrize("task", ["pursuit", "evasion"])
def test_the_classic_baselines_see_the_obstacles_they_observe(task):
    """A baseline rebuilds the observed obstacles from its observation and steers around
    them with the strategy the envs' scripted side runs."""
    env = gym.make(REGISTRY[task].env_id, n_obstacles=8)
    policy = ScriptedPolicy(task, "classic", config=env.unwrapped.config)
    obs, _ = env.reset(seed=2)
    policy.predict(obs)
    view = policy._view(1)
    batch = env.unwrapped.batch
    seen = view.state.obstacles[0]
    seen = seen[seen[:, 2] > 0]
    assert len(seen) == env.unwrapped.config.obstacle_slots
    real = batch.state.obstacles[0]
    for cx, cy, r in seen:
        match = np.min(np.linalg.norm(real[:, :2] - (cx, cy), axis=1) + np.abs(real[:, 2] - r))
        assert match < 1e-3


@pytest.mark.parametrize("avoid", [True, False])
def test_the_classic_evader_steers_around_an_obstacle_it_flees_towards(avoid):
    """An evader fleeing a pursuer straight at an obstacle: with the obstacle avoidance
    the classic strategy adds, its body never touches it; without it (the empty arena's
    strategy), it runs into it."""
    from steer_env.tasks.config import TaskConfig
    from steer_env.tasks.pursuit_evasion import classic_evader

    extra = {} if avoid else {"opponent_strategy": classic_evader(TaskConfig())}
    env = gym.make("steer_env/Pursuit-v0", obstacles=[(2.0, 0.0, 2.0)], **extra)
    env.reset(seed=0)
    state = env.unwrapped.batch.state
    state.position[0, 0] = (-8.0, 0.2)  # the pursuer, behind
    state.position[0, 1] = (-5.0, 0.0)  # the evader, heading for the obstacle
    state.velocity[0, 1] = (1.0, 0.0)
    state.heading[0, 1] = (1.0, 0.0)
    clearance = []
    for _ in range(40):
        env.step(np.zeros(2, dtype=np.float32))
        clearance.append(_clearances(env.unwrapped.batch)[1].min())
    if avoid:
        assert min(clearance) > 0.1
    else:
        assert min(clearance) < 1e-6


# --------------------------------------------------------------------------- drawing
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_frames_show_the_obstacles(env_id):
    layout = [(4.0, 4.0, 3.0)] if "Herding" not in env_id else [(-20.0, 10.0, 6.0)]
    with_obstacle = gym.make(env_id, render_mode="rgb_array", obstacles=layout)
    without = gym.make(env_id, render_mode="rgb_array")
    with_obstacle.reset(seed=0)
    without.reset(seed=0)
    frame = with_obstacle.render()
    renderer = with_obstacle.unwrapped._scenes._renderers[0]
    x, y = renderer.world_to_screen(np.array([layout[0][:2]]))[0].astype(int)
    from steer_env.rendering import ROLE_COLORS

    assert tuple(frame[y, x]) == ROLE_COLORS["obstacle"]
    assert tuple(without.render()[y, x]) != ROLE_COLORS["obstacle"]


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"obstacles": [(0, 0, 1)], "n_obstacles": 3}, "not both"),
        ({"obstacles": [(0, 0, -1)]}, "obstacles must be"),
        ({"obstacles": [(0, 0)]}, "obstacles must be"),
        ({"obstacles": "many"}, "obstacles must be"),
        ({"obstacles": [(0, 0, float("nan"))]}, "obstacles must be"),
        ({"obstacles": [("1", "2", "0.5")]}, "obstacles must be"),
        ({"obstacles": [(1.0, 2.0, True)]}, "obstacles must be"),
        ({"obstacles": [(12.0, 0.0, 1.0)]}, r"obstacles\[0\]"),
        ({"obstacles": [(0, 0, 2), (4.2, 0, 2)]}, r"obstacles\[0\] and obstacles\[1\]"),
        ({"n_obstacles": 4, "obstacle_gap": 0.2}, "obstacle_gap"),
        (
            {"n_obstacles": 4, "obstacle_radius_min": 3.0, "obstacle_radius_max": 2.0},
            "obstacle_radius_min",
        ),
        ({"n_obstacles": 65}, "n_obstacles"),
        ({"n_obstacles": -1}, "n_obstacles"),
        ({"observed_obstacles": 1.5}, "observed_obstacles"),
        ({"detection_length": 0.0}, "detection_length"),
    ],
)
def test_bad_obstacle_arguments_are_named(config, message):
    with pytest.raises(ValueError, match=message):
        gym.make("steer_env/Pursuit-v0", **config)


def test_the_hiding_evader_puts_the_obstacle_between_itself_and_the_pursuer():
    """Buckland's hide: the evader goes to the spot behind the obstacle as the pursuer sees
    it, so the obstacle ends up blocking the line between them."""
    env = gym.make(  # threat_range: the pursuer stays a threat, so it keeps hiding
        "steer_env/Pursuit-v0",
        obstacles=[(0.0, 0.0, 2.0)],
        opponent_strategy="hide",
        threat_range=30.0,
    )
    env.reset(seed=0)
    state = env.unwrapped.batch.state
    state.position[0, 0] = (-7.0, 0.0)  # the pursuer, standing still
    state.position[0, 1] = (0.0, 5.0)  # the evader, above the obstacle, in plain sight
    state.velocity[0] = 0.0
    for _ in range(60):
        env.step(np.zeros(2, dtype=np.float32))
    pursuer, evader = state.position[0, 0], state.position[0, 1]
    # The distance from the obstacle's centre to the segment pursuer-evader.
    d = evader - pursuer
    t = np.clip(-pursuer @ d / (d @ d), 0.0, 1.0)
    assert np.linalg.norm(pursuer + t * d) < 2.0
    assert evader[0] > 2.0  # behind the obstacle, seen from the pursuer


def test_evasion_compares_the_hiding_evader_too():
    from steer_env.tasks import get_task

    assert list(get_task("evasion").baselines) == ["classic", "hide"]
    policy = ScriptedPolicy("evasion", "hide", config={"n_obstacles": 6})
    env = gym.make("steer_env/Evasion-v0", n_obstacles=6)
    obs, _ = env.reset(seed=1)
    action, _ = policy.predict(obs)
    assert action.shape == (2,) and np.all(np.abs(action) <= 1.0)


@pytest.mark.parametrize(
    ("module", "config"),
    [
        ("steer_env.envs.team_pursuit_v0", {"n_obstacles": 8, "learned": "both"}),
        ("steer_env.envs.herding_v0", {"n_obstacles": 6, "n_dogs": 2, "n_sheep": 10}),
        ("steer_env.envs.evasion_v0", {"obstacles": [(0.0, 0.0, 3.0)]}),
    ],
)
def test_pettingzoo_forms_with_obstacles_pass_pettingzoos_tests(module, config):
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    m = importlib.import_module(module)
    parallel_api_test(m.parallel_env(**config), num_cycles=60)
    parallel_seed_test(lambda: m.parallel_env(**config), num_cycles=30)
    # The vector form places env i's layout as the parallel env seeded seed + i.
    vector = m.vector_env(2, **config)
    vector.reset(seed=40)
    for i in range(2):
        single = m.parallel_env(**config)
        single.reset(seed=40 + i)
        np.testing.assert_array_equal(
            vector.batch.state.obstacles[i], single.batch.state.obstacles[0]
        )
