"""The alternative forms of separation, wander and the pursuit/evade look-ahead: closed
forms of each, the same numbers from the engine as from the numpy API,
clear errors for bad option values, and the measurement command."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steer_env import behaviors, combine
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy, encode
from steer_env.envs import streams
from steer_env.neighbors import find_neighbors
from steer_env.rules.pursuit_evasion import World

finite = st.floats(-20.0, 20.0, allow_nan=False)
angle = st.floats(0.0, 2.0 * math.pi, allow_nan=False)


# --- separation
@settings(max_examples=50, deadline=None)
@given(d=st.floats(0.01, 2.9), a=angle, vx=finite, vy=finite)
def test_buckland_separation_of_one_neighbour_is_the_unit_vector_away_over_d(d, a, vx, vy):
    u = np.array([math.cos(a), math.sin(a)])
    nb = find_neighbors([[0.0, 0.0], d * u], 3.0, method="dense")
    force = behaviors.separation([[vx, vy], [0.0, 0.0]], 3.0, nb, separation_form="buckland")
    np.testing.assert_allclose(force[0], -u / d, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(force[1], u / d, rtol=1e-12, atol=1e-12)


def test_buckland_separation_sums_the_neighbours_and_near_ones_push_harder():
    nb = find_neighbors([[0.0, 0.0], [2.0, 0.0], [0.0, 0.5]], 3.0, method="dense")
    v = np.zeros((3, 2))
    force = behaviors.separation(v, 3.0, nb, separation_form="buckland")
    np.testing.assert_allclose(force[0], [-1.0 / 2.0, -1.0 / 0.5])
    # Reynolds' form (the default) asks for max speed along the same push, whatever d.
    reynolds = behaviors.separation(v, 3.0, nb)
    np.testing.assert_allclose(reynolds[0], 3.0 * force[0] / np.linalg.norm(force[0]))
    np.testing.assert_array_equal(
        reynolds, behaviors.separation(v, 3.0, nb, separation_form="reynolds")
    )
    far = find_neighbors([[0.0, 0.0], [2.9, 0.0]], 3.0, method="dense")
    near = find_neighbors([[0.0, 0.0], [0.1, 0.0]], 3.0, method="dense")
    v2 = np.zeros((2, 2))
    assert np.linalg.norm(behaviors.separation(v2, 3.0, far)[0]) == pytest.approx(
        np.linalg.norm(behaviors.separation(v2, 3.0, near)[0])
    )
    ratio = np.linalg.norm(
        behaviors.separation(v2, 3.0, near, separation_form="buckland")[0]
    ) / np.linalg.norm(behaviors.separation(v2, 3.0, far, separation_form="buckland")[0])
    assert ratio == pytest.approx(29.0)


def test_buckland_separation_without_neighbours_is_zero():
    nb = find_neighbors([[0.0, 0.0], [5.0, 0.0]], 3.0, method="dense")
    force = behaviors.separation([[1.0, 2.0], [0.0, 0.0]], 3.0, nb, separation_form="buckland")
    np.testing.assert_array_equal(force, 0.0)


# --- wander
@settings(max_examples=50, deadline=None)
@given(
    px=finite, py=finite, h=angle, w=angle, radius=st.floats(0.1, 3.0),
    distance=st.floats(0.0, 5.0), vx=finite, vy=finite,
)  # fmt: skip
def test_wander_offset_is_the_world_target_minus_the_position(
    px, py, h, w, radius, distance, vx, vy
):
    heading = [math.cos(h), math.sin(h)]
    target = [radius * math.cos(w), radius * math.sin(w)]
    kw = dict(radius=radius, distance=distance, jitter=0.0, dt=0.1, noise=[0.0, 0.0])
    force, new = behaviors.wander(
        [px, py], [vx, vy], heading, 3.0, target, wander_form="offset", **kw
    )
    np.testing.assert_allclose(new, target, atol=1e-12)
    world = behaviors.wander_world_target([px, py], heading, new, distance)
    np.testing.assert_allclose(force, world - np.array([px, py]), atol=1e-9)
    # Closed form: the local point (distance + wx, wy) turned into the heading's frame.
    local = np.array([distance + target[0], target[1]])
    assert np.linalg.norm(force) == pytest.approx(np.linalg.norm(local), abs=1e-9)
    # The default still seeks that point.
    seek_force, _ = behaviors.wander([px, py], [vx, vy], heading, 3.0, target, **kw)
    np.testing.assert_allclose(seek_force, behaviors.seek([px, py], [vx, vy], world, 3.0))


def test_wander_offset_hand_example():
    # Heading +y, target (1, 0) -> (1, 1) as in the seek hand example: local (3, 1) is the
    # world offset (-1, 3), returned as is.
    force, _ = behaviors.wander(
        [[0.0, 0.0]], [[0.0, 1.0]], [[0.0, 1.0]], 1.0, [[1.0, 0.0]], radius=np.sqrt(2.0),
        distance=2.0, jitter=10.0, dt=0.1, noise=[[0.0, 1.0]], wander_form="offset",
    )  # fmt: skip
    np.testing.assert_allclose(force, [[-1.0, 3.0]])


# --- pursuit / evade look-ahead
@settings(max_examples=50, deadline=None)
@given(
    tx=finite, ty=finite, tvx=st.floats(-3, 3), tvy=st.floats(-3, 3),
    tms=st.floats(0.5, 10.0), cap=st.floats(0.1, 100.0),
)  # fmt: skip
def test_seed_look_ahead_is_the_distance_over_the_target_max_speed(tx, ty, tvx, tvy, tms, cap):
    p = np.array([1.0, -2.0])
    t, tv = np.array([tx, ty]), np.array([tvx, tvy])
    d = np.linalg.norm(t - p)
    got = behaviors.predict_position(
        p, 3.0, t, tv, cap, prediction_form="seed", target_max_speed=tms
    )
    np.testing.assert_allclose(got, t + tv * min(d / tms, cap), rtol=1e-12, atol=1e-9)
    buckland = behaviors.predict_position(p, 3.0, t, tv, cap)
    speed = np.linalg.norm(tv)
    np.testing.assert_allclose(buckland, t + tv * min(d / (3.0 + speed), cap), atol=1e-9)


def test_pursuit_and_evade_with_the_seed_look_ahead_seek_and_flee_that_point():
    p, v = np.array([0.0, 0.0]), np.array([1.0, 0.0])
    t, tv = np.array([6.0, 0.0]), np.array([0.0, 2.0])  # crossing, not head-on
    ahead = t + tv * 6.0 / 4.0  # d / target max speed = 6 / 4 s
    kw = dict(prediction_form="seed", target_max_speed=4.0)
    np.testing.assert_allclose(behaviors.pursuit_target(p, v, 3.0, t, tv, **kw), ahead)
    np.testing.assert_allclose(
        behaviors.pursuit(p, v, 3.0, t, tv, **kw), behaviors.seek(p, v, ahead, 3.0)
    )
    np.testing.assert_allclose(
        behaviors.evade(p, v, 3.0, t, tv, **kw), behaviors.flee(p, v, ahead, 3.0)
    )
    # Buckland's look-ahead (the default) is d / (3 + 2) = 1.2 s.
    np.testing.assert_allclose(behaviors.pursuit_target(p, v, 3.0, t, tv), t + tv * 1.2)
    # A target that cannot move is not extrapolated.
    np.testing.assert_allclose(
        behaviors.predict_position(p, 3.0, t, tv, prediction_form="seed", target_max_speed=0.0),
        t,
    )


# --- bad values
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda nb: behaviors.separation(np.zeros((2, 2)), 1.0, nb, separation_form="bucklnd"),
         "separation_form"),
        (lambda nb: behaviors.wander([0, 0], [1, 0], [1, 0], 1.0, [1, 0], radius=1, distance=2,
                                     jitter=1, dt=0.1, noise=[0, 0], wander_form="arrive"),
         "wander_form"),
        (lambda nb: behaviors.pursuit([0, 0], [1, 0], 1.0, [3, 0], [0, 1], prediction_form=1),
         "prediction_form"),
        (lambda nb: behaviors.evade([0, 0], [1, 0], 1.0, [3, 0], [0, 1], prediction_form="see"),
         "prediction_form"),
        (lambda nb: behaviors.predict_position([0, 0], 1.0, [3, 0], [0, 1],
                                               prediction_form="seed"),
         "target_max_speed"),
    ],
)  # fmt: skip
def test_bad_option_values_name_the_parameter_and_the_accepted_values(call, name):
    nb = find_neighbors([[0.0, 0.0], [1.0, 0.0]], 2.0)
    with pytest.raises(ValueError) as err:
        call(nb)
    assert name in str(err.value)
    if name != "target_max_speed":
        assert "must be one of" in str(err.value)


@pytest.mark.parametrize(
    "kind,name,accepted",
    [
        ("separation", "separation_form", "'reynolds', 'buckland'"),
        ("wander", "wander_form", "'seek', 'offset'"),
        ("pursuit", "prediction_form", "'buckland', 'seed'"),
    ],
)
def test_bad_options_of_a_strategy_are_clear_errors(kind, name, accepted):
    with pytest.raises(ValueError, match=f"{kind}.{name} must be one of {accepted}, got 'x'"):
        Behavior(kind, **{name: "x"})
    with pytest.raises(ValueError, match=f"{kind}.{name} must be one of"):
        Behavior(kind, **{name: 1.0})


def test_options_encode_as_codes_and_default_to_todays_forms():
    plain = Strategy([Behavior("separation"), Behavior("wander"), Behavior("pursuit")])
    chosen = Strategy(
        [
            Behavior("separation", separation_form="buckland"),
            Behavior("wander", wander_form="offset"),
            Behavior("pursuit", prediction_form="seed"),
        ]
    )
    table, _ = encode([plain, chosen])
    for k, name in enumerate(("separation_form", "wander_form", "prediction_form")):
        assert table[0][name].tolist() == [0, 0, 0]
        assert table[1][k][name] == 1


# --- the engine runs the same forms
def _world():
    return World(
        dt=0.1, arena_size=25.0, capture_radius=0.1, time_limit=100, end_on_first_capture=False,
        shaping=False, shaping_scale=1.0, shaping_gamma=0.99, observed_teammates=0,
        observed_opponents=0, start_margin=0.3, min_start_distance=1.0,
    )  # fmt: skip


def _random_state(batch, seed):
    rng = np.random.default_rng(seed)
    s = batch.state
    s.position[:] = rng.uniform(-4, 4, s.position.shape)
    s.velocity[:] = rng.uniform(-2, 2, s.velocity.shape)
    h = rng.normal(size=s.heading.shape)
    s.heading[:] = h / np.linalg.norm(h, axis=-1, keepdims=True)
    return s


def test_engine_separation_buckland_and_seed_look_ahead_equal_the_numpy_api():
    """Pursuers: Buckland separation and pursuit with the seed look-ahead; evaders: evade
    with the seed look-ahead (weighted sums truncated to max force, as the numpy API)."""
    pursue = Strategy(
        [
            Behavior("separation", 0.7, "teammates", neighbor_radius=3.0,
                     separation_form="buckland"),
            Behavior("pursuit", 1.0, prediction_time=2.0, prediction_form="seed"),
        ],
        "weighted_sum",
    )  # fmt: skip
    flee = Strategy([Behavior("evade", 1.0, prediction_time=2.0, prediction_form="seed")])
    pursuer = VehicleSpec("pursuer", pursue, 1.0, 3.0, 6.0, 0.3)
    evader = VehicleSpec("evader", flee, 1.0, 3.9, 50.0, 0.3)
    n_env = 32
    batch = Batch([pursuer, pursuer, pursuer, evader], _world(), n_env)
    batch.reset(None, streams.key_from_seed(np.arange(n_env, dtype=np.uint64)))
    s = _random_state(batch, 5)
    force = batch.scripted_forces()
    p, v = s.position[:, :3], s.velocity[:, :3]
    near = find_neighbors(p, 3.0, method="dense")
    sep = behaviors.separation(v, 3.0, near, separation_form="buckland").reshape(p.shape)
    e_p, e_v = s.position[:, 3:], s.velocity[:, 3:]
    chase = behaviors.pursuit(
        p, v, 3.0, e_p, e_v, 2.0, prediction_form="seed", target_max_speed=3.9
    )
    expected = combine.weighted_sum([sep, chase], [0.7, 1.0], 6.0)
    np.testing.assert_allclose(force[:, :3], expected, atol=1e-9)
    # The evader evades the nearest pursuer, whose max speed is 3.0 m/s.
    dist = np.linalg.norm(p - e_p, axis=-1)
    k = np.argmin(dist, axis=1)
    rows = np.arange(n_env)
    away = behaviors.evade(
        e_p[:, 0], e_v[:, 0], 3.9, p[rows, k], v[rows, k], None, 2.0, prediction_form="seed",
        target_max_speed=3.0,
    )  # fmt: skip
    np.testing.assert_allclose(force[:, 3], away, atol=1e-9)
    assert not np.allclose(away, behaviors.evade(e_p[:, 0], e_v[:, 0], 3.9, p[rows, k],
                                                 v[rows, k], None, 2.0))  # fmt: skip


def test_engine_wander_offset_equals_the_numpy_api():
    """With zero jitter the wander target only moves with the vehicle, so one step of the
    engine's wander is the numpy API's with zero noise."""
    strategy = Strategy(
        [Behavior("wander", wander_radius=1.5, wander_distance=2.5, wander_jitter=0.0,
                  wander_form="offset")],
        "weighted_sum",
    )  # fmt: skip
    batch = Batch([VehicleSpec("evader", strategy, 1.0, 3.0, 100.0, 0.3)], _world(), 16)
    batch.reset(None, streams.key_from_seed(np.arange(16, dtype=np.uint64)))
    s = _random_state(batch, 7)
    w = np.random.default_rng(8).uniform(0, 2 * np.pi, 16)
    s.wander[:, 0] = 1.5 * np.stack((np.cos(w), np.sin(w)), axis=-1)
    target = s.wander[:, 0].copy()
    force = batch.scripted_forces()
    expected, _ = behaviors.wander(
        s.position[:, 0], s.velocity[:, 0], s.heading[:, 0], 3.0, target, radius=1.5,
        distance=2.5, jitter=0.0, dt=0.1, noise=np.zeros((16, 2)), wander_form="offset",
    )  # fmt: skip
    np.testing.assert_allclose(force[:, 0], expected, atol=1e-9)


# --- the measurement command
def test_the_fidelity_command_runs_and_prints_the_table(capsys, tmp_path):
    import json

    from benchmarks import fidelity

    out_json = tmp_path / "fidelity.json"
    assert fidelity.main(["--episodes", "20", "--env", "evasion", "--variants", "default",
                          "separation buckland", "--json", str(out_json)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "| steer_env/Evasion-v0 | separation buckland |" in out
    data = json.loads(out_json.read_text())
    assert data["command"].startswith("python -m benchmarks.fidelity --episodes 20")
    assert [r["variant"] for r in data["rows"]] == ["default", "separation buckland"]
    default = data["rows"][0]
    assert default["minus_default"]["mean"] == 0.0
    assert 0.0 <= default["capture_rate"]["lo"] <= default["capture_rate"]["mean"] <= 1.0
    caught = fidelity.captures(fidelity.get_task("evasion"), 20, 1_000_000)
    assert caught.dtype == bool and caught.shape == (20,)
