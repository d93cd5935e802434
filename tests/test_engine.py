"""The engine: any number of learned agents, strategies as data, masks, and the library's
formulas at work inside the compiled step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steer_env import behaviors, combine
from steer_env.engine import layout
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.engine.layout import ObstacleField
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.envs import streams
from steer_env.rules.pursuit_evasion import World
from steer_env.tasks import get_task
from steer_env.tasks.pursuit_evasion import classic_evader, classic_pursuer

#: A fixed layout of two obstacles, in every environment.
TWO_OBSTACLES = ObstacleField(layout=((0.0, 0.0, 2.0), (6.0, -4.0, 1.5)))


def _world(**changes):
    values = dict(
        dt=0.1,
        arena_size=25.0,
        capture_radius=0.8,
        time_limit=200,
        end_on_first_capture=False,
        shaping=True,
        shaping_scale=1.0,
        shaping_gamma=0.99,
        observed_teammates=2,
        observed_opponents=1,
        start_margin=0.3,
        min_start_distance=8.0,
    )
    values.update(changes)
    return World(**values)


def _team_batch(num_envs=6, specialise=False, **world):
    """Three learned pursuers against one scripted classic evader (1.3x faster)."""
    cfg = get_task("pursuit").default_config
    pursuer = VehicleSpec("pursuer", None, 1.0, 3.0, 6.0, 0.3)
    evader = VehicleSpec("evader", classic_evader(cfg), 1.0, 3.9, 10.0, 0.3)
    return Batch(
        [pursuer, pursuer, pursuer, evader], _world(**world), num_envs, specialise=specialise
    )


def _keys(n, start=0):
    return streams.key_from_seed(np.arange(start, start + n, dtype=np.uint64))


def test_several_learned_agents_have_their_own_actions_observations_and_rewards():
    batch = _team_batch()
    assert batch.n_agents == 3 and list(batch.agent_index) == [0, 1, 2]
    obs = batch.reset(None, _keys(6))
    assert obs.shape == (6, 3, 11 + 5 * 2 + 5 * 1)
    # Teammate slots hold the two other pursuers, the opponent slot the evader.
    np.testing.assert_array_equal(obs[:, :, 11 + 4], 1.0)
    np.testing.assert_array_equal(obs[:, :, 16 + 4], 1.0)
    np.testing.assert_array_equal(obs[:, :, 21 + 4], 1.0)
    actions = np.zeros((6, 3, 2))
    actions[:, 0] = (1.0, 0.0)  # only agent 0 accelerates
    before = batch.state.velocity.copy()
    result = batch.step(actions)
    assert result.reward.shape == (6, 3) and result.observation.shape == obs.shape
    moved = np.linalg.norm(batch.state.velocity - before, axis=-1)
    assert np.all(moved[:, 0] > 0) and np.all(moved[:, 1:3] == 0)
    # Every observation stays in the Box.
    assert np.all(np.abs(result.observation) <= 1.0)


def test_a_captured_evader_leaves_the_game_and_the_episode_ends_when_none_is_left():
    batch = _team_batch(num_envs=2, end_on_first_capture=False)
    batch.reset(None, _keys(2))
    state = batch.state
    # Env 0: pursuer 1 sits on the evader; env 1: nobody is close.
    state.position[0] = [[-10, -10], [5.0, 5.0], [10, -10], [5.3, 5.0]]
    state.position[1] = [[-10, -10], [0.0, 10.0], [10, -10], [5.0, 5.0]]
    state.velocity[:] = 0.0
    result = batch.step(np.zeros((2, 3, 2)))
    assert result.done.tolist() == [True, False]
    assert result.captures.tolist() == [1, 0]
    assert not state.alive[0, 3] and state.alive[1, 3]
    assert state.capture_step[0, 3] == 1
    # The team capture reward goes to every pursuer.
    np.testing.assert_array_equal(result.reward_capture[0], [1.0, 1.0, 1.0])
    assert np.all(result.terminated[0]) and not np.any(result.terminated[1])


def test_inactive_environments_are_left_exactly_as_they_were():
    batch = _team_batch(num_envs=4)
    batch.reset(None, _keys(4))
    snapshot = [a.copy() for a in batch.state]
    active = np.array([True, False, True, False])
    result = batch.step(np.ones((4, 3, 2)) * 0.5, active)
    for before, after in zip(snapshot, batch.state, strict=True):
        np.testing.assert_array_equal(before[~active], after[~active])
    assert not np.array_equal(snapshot[0][active], batch.state.position[active])
    assert np.all(result.reward[~active] == 0.0) and not result.done[~active].any()


def test_a_pickled_or_copied_batch_steps_with_the_code_already_compiled():
    """Pickle and deepcopy hand back writeable arrays; the copy must restore read-only tables
    so its arguments have the original's types (else a second ~30 s compile of the step)."""
    import copy
    import pickle

    from steer_env.engine import step as engine_step
    from steer_env.rules.pursuit_evasion import compiled as rules_step

    def dispatcher(name):
        return getattr(rules_step if name in Batch._RULES_ENTRIES else engine_step, name)

    for specialise in (False, True):
        batch = _team_batch(num_envs=2, specialise=specialise)
        batch.reset(None, _keys(2))
        actions = np.full((2, 3, 2), 0.5)
        batch.step(actions)
        # The general stages, or the copies compiled for the batch's strategies.
        assert (batch._entry("step") is dispatcher("step")) is not specialise
        compiled_before = {name: batch._entry(name).signatures for name in batch._entries}
        clones = (pickle.loads(pickle.dumps(batch)), copy.deepcopy(batch))
        batch.step(actions)
        for clone in clones:
            assert not clone.vehicles.flags.writeable
            assert not any(table.flags.writeable for table in clone.scene)
            clone.step(actions)
            np.testing.assert_array_equal(clone.state.position, batch.state.position)
            for name in clone._entries:
                assert clone._entry(name) is batch._entry(name), name
                assert clone._entry(name).signatures == compiled_before[name], name


def test_every_caller_of_the_strategy_stage_shares_one_compiled_version():
    """forces_of and step call scripted_forces with an int64 first block; a literal 0 would
    make numba compile (~10 s cold) a second, Literal[int](0) version of the whole stage."""
    import numba
    from numba import types

    from steer_env.engine import step as compiled

    batch = _team_batch(num_envs=2)
    batch.reset(None, _keys(2))
    uncached_caller = numba.njit(compiled.forces_of.py_func)  # type inference runs here
    force = np.zeros((2, batch.n_vehicles, 2))
    args = (batch.state, batch._every, batch.vehicles, batch._behaviors)
    scratch = compiled.strategy_scratch(2, batch.n_vehicles)
    columns = np.zeros((batch.n_vehicles, 2, 2))
    uncached_caller(*args, batch._strategy_info, batch._world, batch.scene, scratch, columns, force)
    assert np.all(np.isfinite(force)) and np.any(force != 0.0)
    assert {sig[0] for sig in compiled.scripted_forces.signatures} == {types.int64}


def test_environments_are_independent_of_the_batch_they_are_in():
    """Env i of a batch of 5 steps exactly like a batch of 1 keyed the same way."""
    big = _team_batch(num_envs=5)
    big.reset(None, _keys(5, start=40))
    small = _team_batch(num_envs=1)
    small.reset(None, _keys(1, start=43))
    rng = np.random.default_rng(0)
    for _ in range(60):
        a = rng.uniform(-1, 1, (5, 3, 2))
        big.step(a)
        small.step(a[3:4])
    np.testing.assert_array_equal(big.state.position[3], small.state.position[0])


def test_engine_strategy_forces_equal_the_numpy_library_on_the_same_state():
    """The scripted opponents run the library's formulas: for random states, the classic
    pursuers' combined force in the engine equals the numpy API's prioritized sum of wall
    avoidance, separation and pursuit."""
    task = get_task("evasion")
    cfg = task.default_config
    batch = Batch(task.roster(cfg), task.world(cfg), 64)
    batch.reset(None, _keys(64))
    rng = np.random.default_rng(3)
    state = batch.state
    state.position[:] = rng.uniform(-12, 12, state.position.shape)
    state.velocity[:] = rng.uniform(-2, 2, state.velocity.shape)
    heading = rng.normal(size=state.heading.shape)
    state.heading[:] = heading / np.linalg.norm(heading, axis=-1, keepdims=True)
    force = batch.scripted_forces()
    p, v, h = state.position[:, 1:], state.velocity[:, 1:], state.heading[:, 1:]
    ms, mf = cfg.opponent_max_speed, cfg.opponent_max_force
    half = cfg.arena_size / 2
    wall = behaviors.wall_avoidance(p, v, h, ms, (-half, -half, half, half), cfg.feeler_length)
    from steer_env.neighbors import find_neighbors

    near = find_neighbors(p, cfg.separation_radius, method="dense")
    sep = behaviors.separation(v, np.full(p.shape[:-1], ms), near).reshape(p.shape)
    target = np.broadcast_to(state.position[:, :1], p.shape)
    target_v = np.broadcast_to(state.velocity[:, :1], p.shape)
    chase = behaviors.pursuit(p, v, ms, target, target_v, cfg.max_prediction_time)
    expected = np.stack(
        [
            combine.prioritized(
                [wall[:, k], sep[:, k], chase[:, k]],
                [cfg.wall_weight, cfg.separation_weight, cfg.pursuit_weight],
                mf,
            )
            for k in range(p.shape[1])
        ],
        axis=1,
    )
    np.testing.assert_allclose(force[:, 1:], expected, atol=1e-9)
    np.testing.assert_array_equal(force[:, 0], 0.0)  # the learned agent


@pytest.mark.parametrize("combination", ["weighted_sum", "prioritized", "dithered"])
def test_every_combination_method_respects_max_force(combination):
    strategy = Strategy(
        [
            Behavior("wall_avoidance", 2.0, probability=0.8),
            Behavior("evade", 1.0, probability=0.5),
            Behavior("wander", 1.0, probability=0.9),
        ],
        combination=combination,
    )
    evader = VehicleSpec("evader", strategy, 1.0, 3.0, 4.0, 0.3)
    pursuer = VehicleSpec(
        "pursuer", classic_pursuer(get_task("pursuit").default_config), 1, 3, 6, 0.3
    )
    batch = Batch([pursuer, evader, evader], _world(observed_teammates=0), 16)
    batch.reset(None, _keys(16))
    for _ in range(50):
        force = batch.scripted_forces()
        assert np.all(np.linalg.norm(force, axis=-1) <= 6.0 + 1e-9)
        assert np.all(np.linalg.norm(force[:, 1:], axis=-1) <= 4.0 + 1e-9)
        batch.step(np.zeros((16, 0, 2)))


def test_dithering_is_reproducible_from_the_stream_keys():
    strategy = Strategy(
        [Behavior("seek", 1.0, probability=0.5), Behavior("wander", 1.0, probability=0.5)],
        combination="dithered",
    )
    runs = []
    for _ in range(2):
        b = Batch(
            [
                VehicleSpec("pursuer", strategy, 1, 3, 6, 0.3),
                VehicleSpec("evader", None, 1, 3, 6, 0.3),
            ],
            _world(observed_teammates=0),
            8,
        )
        b.reset(None, _keys(8))
        for _ in range(30):
            b.step(np.zeros((8, 1, 2)))
        runs.append(b.state.position.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize(
    "make,fragment",
    [
        (lambda: Behavior("teleport"), "unknown behavior 'teleport'"),
        (lambda: Behavior("seek", target="moon"), "unknown target 'moon'"),
        (lambda: Behavior("wander", wander_radiu=1.0), "unknown parameter(s) 'wander_radiu'"),
        (lambda: Behavior("seek", weight=-1.0), "seek.weight must be in [0, 1e+06]"),
        (lambda: Behavior("seek", weight=1e308), "seek.weight must be in [0, 1e+06]"),
        (lambda: Behavior("wander", wander_radius=1e300), "wander.wander_radius must be at most"),
        (lambda: Behavior("evade", threat_range=-1e9), "at most 1e+06 in magnitude (or inf)"),
        (lambda: Behavior("evade", threat_range=float("nan")), "evade.threat_range"),
        (lambda: Behavior("seek", probability=0.0), "seek.probability must be in (0, 1]"),
        (lambda: Strategy([Behavior("seek")], combination="average"), "unknown combination"),
        (lambda: Strategy([]), "at least one behavior"),
    ],
)
def test_bad_strategies_are_clear_errors(make, fragment):
    with pytest.raises(ValueError) as err:
        make()
    assert fragment in str(err.value)


@pytest.mark.parametrize("combination", ["prioritized", "weighted_sum"])
def test_largest_accepted_weights_and_parameters_keep_the_state_finite(combination):
    """Every behaviour at the largest weight a Behavior accepts, and its numeric parameters
    at the largest finite magnitude, steer a real env without a NaN or an inf."""
    import gymnasium as gym

    import steer_env  # noqa: F401
    from steer_env.engine.strategy import MAGNITUDE_MAX

    top = MAGNITUDE_MAX
    behaviors = [
        Behavior("seek", weight=top),
        Behavior("pursuit", weight=top, prediction_time=top),
        Behavior("wander", weight=top, wander_radius=top, wander_distance=top, wander_jitter=top),
        Behavior("wall_avoidance", weight=top, feeler_length=top),
        Behavior("obstacle_avoidance", weight=top, detection_length=top, braking_weight=top),
        Behavior("arrive", weight=top, slowing_radius=top),
    ]
    env = gym.make(
        "steer_env/Evasion-v0",
        opponent_strategy=Strategy(behaviors, combination=combination),
        n_obstacles=4,
    )
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        world = env.unwrapped
        assert np.isfinite(obs).all() and np.isfinite(reward)
        assert np.isfinite(world.positions).all() and np.isfinite(world.velocities).all()
        if terminated or truncated:
            obs, _ = env.reset()


def test_layout_names_every_behaviour_of_the_library():
    public = {
        "seek",
        "flee",
        "arrive",
        "pursuit",
        "evade",
        "wander",
        "separation",
        "alignment",
        "cohesion",
        "wall_avoidance",
        "obstacle_avoidance",
        "interpose",
        "hide",
        "offset_pursuit",
        "follow_path",
        "unaligned_collision_avoidance",
    }
    assert public <= set(layout.BEHAVIOR_KINDS)
    for name in public:
        assert callable(getattr(behaviors, name))


@pytest.mark.parametrize("kind", layout.BEHAVIOR_KINDS)
def test_every_behaviour_of_the_library_runs_in_a_strategy(kind):
    """Each classic behaviour is available to scripted vehicles: forces finite and within
    max force, vehicles inside the arena, with obstacles and a path in the scene."""
    params = {"offset_spread": True, "offset_forward": -2.0} if kind == "offset_pursuit" else {}
    strategy = Strategy([Behavior("wall_avoidance", 2.0), Behavior(kind, 1.0, **params)])
    mover = VehicleSpec("evader", strategy, 1.0, 3.0, 5.0, 0.3)
    chaser = VehicleSpec("pursuer", strategy, 1.0, 3.0, 5.0, 0.3)
    batch = Batch(
        [chaser, chaser, mover, mover],
        _world(
            observed_teammates=0,
            capture_radius=0.1,
            min_start_distance=1.0,
            obstacles=TWO_OBSTACLES,
        ),
        8,
        path=[[-8.0, -8.0], [8.0, -8.0], [8.0, 8.0]],
    )
    batch.reset(None, _keys(8))
    moved = 0.0
    for _ in range(40):
        before = batch.state.position.copy()
        force = batch.scripted_forces()
        assert np.all(np.isfinite(force))
        assert np.all(np.linalg.norm(force, axis=-1) <= 5.0 + 1e-9)
        batch.step(np.zeros((8, 0, 2)))
        moved += float(np.abs(batch.state.position - before).sum())
        assert np.all(np.abs(batch.state.position) <= 12.5)
        edge = np.linalg.norm(
            batch.state.position[:, :, None, :] - batch.state.obstacles[:, None, :, :2], axis=-1
        )
        assert np.all(edge - batch.state.obstacles[:, None, :, 2] >= 0.3 - 1e-9)
    assert moved > 0


def _every_kind_batch(strategy, specialise):
    mover = VehicleSpec("evader", strategy, 1.0, 3.0, 5.0, 0.3)
    chaser = VehicleSpec("pursuer", strategy, 1.0, 3.0, 5.0, 0.3)
    return Batch(
        [VehicleSpec("pursuer", None, 1.0, 3.0, 5.0, 0.3), chaser, mover, mover],
        _world(capture_radius=0.1, min_start_distance=1.0, obstacles=TWO_OBSTACLES),
        8,
        path=[[-8.0, -8.0], [8.0, -8.0], [8.0, 8.0]],
        specialise=specialise,
    )


def _run(batch):
    """Forces, observations, rewards and positions of a seeded run of ``batch``."""
    batch.reset(None, _keys(8, start=3))
    rng = np.random.default_rng(5)
    seen = []
    for _ in range(30):
        seen.append(batch.scripted_forces())
        result = batch.step(rng.uniform(-1.0, 1.0, (8, 1, 2)))
        seen += [result.observation, result.reward, batch.state.position.copy()]
    return seen


# Each kind on its own (beside wall avoidance), then the targets, combinations and
# topological flocking of the tasks' strategies.
_SPECIALISED = [
    *[
        Strategy([Behavior("wall_avoidance", 2.0), Behavior(kind, 1.0)])
        for kind in layout.BEHAVIOR_KINDS
    ],
    Strategy(
        [
            Behavior("evade", target="each_opponent", threat_range=6.0, probability=0.7),
            Behavior("offset_pursuit", offset_forward=-2.0, offset_spread=True),
            Behavior("seek", target="nearest_teammate", probability=0.5),
            Behavior("cohesion", neighbor_count=2, probability=0.9),
            Behavior("flow_field", target="arena_center"),
        ],
        "dithered",
    ),
    Strategy(
        [Behavior("separation", neighbor_count=1), Behavior("hide"), Behavior("wander")],
        "weighted_sum",
    ),
]


@pytest.mark.parametrize("strategy", _SPECIALISED, ids=lambda s: "+".join(
    b.kind for b in s.behaviors[-2:]) + "-" + s.combination)  # fmt: skip
def test_a_batch_compiled_for_its_strategies_matches_the_general_stages(strategy):
    """The stages compiled for the behaviours a batch's strategies use (what the envs run)
    give every force, observation, reward and position of the general stages, bit for bit,
    for every behaviour kind; the copies see only the kinds, targets and combinations of
    the batch."""
    from steer_env.engine import step as engine_step

    general, specialised = _every_kind_batch(strategy, False), _every_kind_batch(strategy, True)
    for got, want in zip(_run(specialised), _run(general), strict=True):
        np.testing.assert_array_equal(got, want)
    copy = specialised._entry("forces_of")
    assert (
        copy is not engine_step.forces_of and general._entry("forces_of") is engine_step.forces_of
    )
    seen = copy.py_func.__globals__["scripted_forces"].py_func.__globals__
    assert seen["KINDS"] == tuple(
        sorted({layout.BEHAVIOR_KINDS.index(b.kind) for b in strategy.behaviors})
    )
    assert seen["COMBINATIONS"] == (layout.COMBINATION_NAMES.index(strategy.combination),)


def test_each_env_compiles_its_step_for_its_scripted_strategies():
    import gymnasium as gym

    import steer_env  # noqa: F401
    from steer_env.engine import step as engine_step
    from steer_env.envs import team_pursuit_v0

    def kinds(batch):
        copy = batch._entry("step").py_func.__globals__["scripted_forces"]
        return {layout.BEHAVIOR_KINDS[k] for k in copy.py_func.__globals__["KINDS"]}

    pursuit = gym.make("steer_env/Pursuit-v0").unwrapped.batch
    assert kinds(pursuit) == {"wall_avoidance", "evade", "wander"}
    naive = gym.make_vec("steer_env/Evasion-v0", 2, opponent_strategy="naive").unwrapped.batch
    assert kinds(naive) == {"wall_avoidance", "seek"}
    team = team_pursuit_v0.vector_env(2).batch
    assert kinds(team) == {"wall_avoidance", "evade", "flow_field"}
    # A batch built directly runs the general stages unless asked.
    direct = _team_batch()
    assert direct._entry("forces_of") is engine_step.forces_of
    assert tuple(range(len(layout.BEHAVIOR_KINDS))) == engine_step.KINDS


def test_flow_field_keeps_a_vehicle_circling_the_centre():
    strategy = Strategy([Behavior("flow_field", flow_radius=5.0, flow_gain=1.0)])
    evader = VehicleSpec("evader", strategy, 1.0, 3.0, 10.0, 0.3)
    batch = Batch([evader], _world(observed_teammates=0, observed_opponents=0), 4)
    batch.reset(None, _keys(4))
    angles = []
    for t in range(300):
        batch.step(np.zeros((4, 0, 2)))
        if t >= 200:
            p = batch.state.position
            angles.append(np.arctan2(p[:, 0, 1], p[:, 0, 0]))
    radius = np.linalg.norm(batch.state.position[:, 0], axis=-1)
    assert np.all(np.abs(radius - 5.0) < 1.0)  # orbiting near the preferred radius
    turned = np.unwrap(np.array(angles), axis=0)
    assert np.all(turned[-1] - turned[0] > 1.0)  # counter-clockwise, steadily


def test_the_opponents_strategy_is_chosen_through_the_env_configuration():
    import gymnasium as gym

    import steer_env  # noqa: F401

    def capture_rate(**kwargs):
        venv = gym.make_vec("steer_env/Evasion-v0", 64, **kwargs)
        venv.reset(seed=0)
        caught = np.zeros(64, dtype=bool)
        finished = np.zeros(64, dtype=bool)
        for _ in range(101):
            _, _, terminated, _, info = venv.step(np.zeros((64, 2), dtype=np.float32))
            new = terminated & ~finished
            caught[new] = info["capture_step"][new] >= 0
            finished |= terminated
        return caught.mean()

    classic, naive = capture_rate(), capture_rate(opponent_strategy="naive")
    assert classic != naive  # the naive pursuers really drive the opponents
    custom = Strategy([Behavior("wall_avoidance", 3.0), Behavior("seek", 1.0)], "weighted_sum")
    env = gym.make("steer_env/Evasion-v0", opponent_strategy=custom)
    env.reset(seed=0)
    assert env.unwrapped.batch.strategies == (custom,)
    with pytest.raises(ValueError, match="not one of the evaders' strategies"):
        gym.make("steer_env/Pursuit-v0", opponent_strategy="naive")
    with pytest.raises(ValueError, match="opponent_strategy must be None"):
        gym.make("steer_env/Pursuit-v0", opponent_strategy=3)


@pytest.mark.parametrize("view_angle", [None, 2.0, 4.5])
@pytest.mark.parametrize("kind", ["separation", "cohesion", "alignment"])
def test_engine_flocking_forces_equal_the_library(kind, view_angle):
    """A scripted flock's separation, cohesion and alignment in the engine are the
    library's ``behaviors.separation`` / ``cohesion`` / ``alignment`` over
    ``find_neighbors`` of the same radius and field of view (one neighbour rule:
    ``core.behaviors.in_view``), to rounding."""
    from steer_env.neighbors import find_neighbors

    radius = 6.0
    view = {} if view_angle is None else {"view_angle": view_angle}
    boid = VehicleSpec(
        "evader",
        Strategy([Behavior(kind, 1.0, target="everyone", neighbor_radius=radius, **view)]),
        1.0,
        3.0,
        50.0,
        0.3,
    )
    batch = Batch([boid] * 7, _world(observed_teammates=0, min_start_distance=1.0), 4)
    batch.reset(None, _keys(4))
    rng = np.random.default_rng(5)
    state = batch.state
    state.position[:] = rng.uniform(-8, 8, state.position.shape)
    state.velocity[:] = rng.uniform(-2, 2, state.velocity.shape)
    speed = np.linalg.norm(state.velocity, axis=-1, keepdims=True)
    state.heading[:] = state.velocity / speed
    got = batch.scripted_forces()
    fewer = 0
    for e in range(4):
        pos, vel, head = state.position[e], state.velocity[e], state.heading[e]
        nb = find_neighbors(pos, radius, heading=head, view_angle=view_angle)
        fewer += len(find_neighbors(pos, radius).i) - len(nb.i)
        if kind == "cohesion":
            want = behaviors.cohesion(vel, 3.0, nb)
        elif kind == "separation":
            want = behaviors.separation(vel, 3.0, nb)
        else:
            want = behaviors.alignment(vel, head, 3.0, nb)
        np.testing.assert_allclose(got[e], want, rtol=1e-12, atol=1e-12)
    # A narrower view really drops neighbours (so the cone is tested, not bypassed).
    assert (fewer > 0) == (view_angle is not None)


def test_view_angle_is_validated_by_name():
    with pytest.raises(ValueError, match=r"cohesion.view_angle must be in \(0, 2\*pi\]"):
        Behavior("cohesion", view_angle=7.0)
    with pytest.raises(ValueError, match="view_angle"):
        Behavior("separation", view_angle=0.0)


# --------------------------------------------------------------------------- obstacle kernels
@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    m=st.integers(1, 20),
)
def test_ranking_obstacles_puts_the_nearest_rows_first_in_order_from_any_start(data, m):
    """The observation's slots: from any permutation, the first ``top`` rows become the
    ``top`` nearest by (distance, row), the whole stays a permutation, and the check that
    skips the ranking accepts exactly an order whose first ``top`` rows are those."""
    from steer_env.engine.step import rank_obstacles, slots_still_nearest

    dist = np.array(
        data.draw(
            st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.5, 7.0, np.inf]), min_size=m, max_size=m)
        )
    )
    ranked = np.array(data.draw(st.permutations(range(m))), dtype=np.int64)
    top = data.draw(st.integers(1, m))
    nearest = sorted(range(m), key=lambda o: (dist[o], o))[:top]
    start = ranked.copy()
    assert slots_still_nearest(dist, start, top, m) == (start[:top].tolist() == nearest)
    rank_obstacles(dist, ranked, top)
    assert sorted(ranked.tolist()) == list(range(m))
    assert ranked[:top].tolist() == nearest
    assert slots_still_nearest(dist, ranked, top, m)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.floats(-12, 12), st.floats(-12, 12), st.sampled_from([0.0, 1.0, 1.7, 2.0])),
        min_size=1,
        max_size=16,
    ),
    radius=st.floats(0.5, 2.0),
    gap=st.floats(0.0, 2.0),
    data=st.data(),
)
def test_placing_an_obstacle_keeps_its_gap_exactly_as_the_length_tells(rows, radius, gap, data):
    """The placement's test compares squares where that settles it; its answer is the
    length's, also for a candidate exactly at the gap (or an ulp inside it) from a row."""
    import math

    from steer_env.core.vecmath import length
    from steer_env.engine.step import apart_from_placed

    table = np.zeros((16, 3))
    table[: len(rows)] = rows
    count = data.draw(st.integers(0, len(rows)))
    q = data.draw(st.integers(0, len(rows) - 1))
    angle = data.draw(st.floats(0.0, 2.0 * math.pi))
    reach = radius + table[q, 2] + gap
    at = data.draw(st.sampled_from([reach, math.nextafter(reach, 0.0), reach * 1.5, reach * 0.5]))
    x = table[q, 0] + at * math.cos(angle)
    y = table[q, 1] + at * math.sin(angle)
    want = all(
        length(x - table[k, 0], y - table[k, 1]) >= radius + table[k, 2] + gap
        for k in range(count)
        if table[k, 2] > 0.0
    )
    assert apart_from_placed(table, count, x, y, radius, gap) == want
