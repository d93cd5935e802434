"""Vehicle physics: the Euler step's invariants, seek convergence and input validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from steer_env import Vehicles, behaviors, vecmath
from steer_env.physics import MIN_HEADING_SPEED, VehicleParams, integrate


def norm(a):
    return np.hypot(a[..., 0], a[..., 1])


def random_state(rng, n):
    angle = rng.uniform(-np.pi, np.pi, n)
    heading = np.stack((np.cos(angle), np.sin(angle)), axis=-1)
    max_speed = 10.0 ** rng.uniform(-1, 1, n)
    velocity = heading * (max_speed * rng.uniform(0, 1, n))[:, None]
    velocity[rng.random(n) < 0.1] = 0.0
    return dict(
        position=rng.uniform(-100, 100, (n, 2)),
        velocity=velocity,
        heading=heading,
        mass=10.0 ** rng.uniform(-1, 1, n),
        max_speed=max_speed,
        max_force=10.0 ** rng.uniform(-2, 2, n),
    )


def random_force(rng, n):
    """Forces from zero through ordinary to absurdly large magnitudes (up to 1e200 N)."""
    scale = 10.0 ** rng.choice([-3, 0, 1, 3, 6, 12, 100, 200], size=n)
    force = rng.normal(size=(n, 2)) * scale[:, None]
    force[rng.random(n) < 0.05] = 0.0
    return force


# --- seek
def test_seek_converges_to_max_speed_towards_a_distant_target():
    target = np.array([3000.0, -4000.0])
    flock = Vehicles.create(
        position=[[0.0, 0.0], [10.0, 0.0], [-5.0, 5.0]],
        velocity=[[0.0, 0.0], [-1.0, 0.0], [0.0, 2.0]],
        mass=[1.0, 2.0, 0.5],
        max_speed=[2.0, 1.0, 3.0],
        max_force=[1.0, 5.0, 0.5],
    )
    for _ in range(2000):
        flock.step(behaviors.seek(flock.position, flock.velocity, target, flock.max_speed), 0.05)
    speed = flock.speed
    np.testing.assert_allclose(speed, flock.max_speed, atol=1e-6)
    assert np.all(speed <= flock.max_speed * (1 + 1e-12))
    to_target = vecmath.normalize(target - flock.position)
    cosine = (flock.velocity * to_target).sum(axis=1) / speed
    assert np.all(cosine > 0.999)
    np.testing.assert_allclose(flock.heading, flock.velocity / speed[:, None], atol=1e-12)


def test_seek_hand_example():
    # desired = 2 * unit(3, 4) = (1.2, 1.6); minus velocity (1, 0).
    np.testing.assert_allclose(behaviors.seek([0.0, 0.0], [1.0, 0.0], [3.0, 4.0], 2.0), [0.2, 1.6])


# --- integrate: the classic Euler step
def test_integrate_hand_example():
    p, v, h = integrate(
        np.array([[1.0, 1.0]]),
        np.array([[1.0, 0.0]]),
        np.array([[1.0, 0.0]]),
        np.array([[0.0, 10.0]]),  # truncated to max_force = 2 -> (0, 2)
        mass=np.array([2.0]),
        max_speed=np.array([5.0]),
        max_force=np.array([2.0]),
        dt=0.5,
    )
    # a = (0, 1); v = (1, 0.5); p = (1, 1) + 0.5 * v
    np.testing.assert_allclose(v, [[1.0, 0.5]])
    np.testing.assert_allclose(p, [[1.5, 1.25]])
    np.testing.assert_allclose(h, [[1.0, 0.5]] / np.sqrt(1.25))


def test_integrate_invariants_over_long_random_rollouts():
    rng = np.random.default_rng(12345)
    n = 300
    s = random_state(rng, n)
    p, v, h = s["position"], s["velocity"], s["heading"]
    mass, max_speed, max_force = s["mass"], s["max_speed"], s["max_force"]
    for _ in range(400):
        dt = float(rng.choice([1e-3, 0.01, 0.1, 0.5]))
        force = random_force(rng, n)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p_new, v_new, h_new = integrate(p, v, h, force, mass, max_speed, max_force, dt)
        for a in (p_new, v_new, h_new):
            assert np.all(np.isfinite(a))
        speed = norm(v_new)
        assert np.all(speed <= max_speed * (1 + 1e-12))
        # The change of velocity never exceeds max_force / mass * dt: the speed truncation is
        # a projection onto a disc that holds the old velocity, so it cannot lengthen it.
        dv_max = max_force / mass * dt
        assert np.all(norm(v_new - v) <= dv_max * (1 + 1e-9) + 1e-12 * max_speed)
        np.testing.assert_allclose(p_new, p + v_new * dt, rtol=1e-12, atol=1e-12)
        moving = speed > MIN_HEADING_SPEED
        np.testing.assert_allclose(norm(h_new), 1.0, rtol=1e-12)
        np.testing.assert_allclose(
            h_new[moving], v_new[moving] / speed[moving, None], rtol=1e-12, atol=1e-15
        )
        np.testing.assert_array_equal(h_new[~moving], h[~moving])
        p, v, h = p_new, v_new, h_new


def test_integrate_velocity_change_before_the_speed_limit():
    """With a speed limit that never binds, dv is exactly truncate(force, max_force)/mass*dt."""
    rng = np.random.default_rng(7)
    n = 500
    for _ in range(50):
        s = random_state(rng, n)
        force = random_force(rng, n)
        dt = float(rng.uniform(1e-3, 1.0))
        big = np.full(n, 1e300)
        _, v_new, _ = integrate(
            s["position"], s["velocity"], s["heading"], force, s["mass"], big, s["max_force"], dt
        )
        dv = v_new - s["velocity"]
        expected = vecmath.truncate(force, s["max_force"]) / s["mass"][:, None] * dt
        scale = np.maximum(norm(s["velocity"]), 1.0)[:, None]
        np.testing.assert_allclose(dv / scale, expected / scale, rtol=1e-9, atol=1e-13)
        dv_max = s["max_force"] / s["mass"] * dt
        assert np.all(norm(dv) <= dv_max * (1 + 1e-12) + 1e-13 * scale[:, 0])
        # Forces within the limit act whole: a = F / m.
        weak = norm(force) <= s["max_force"]
        np.testing.assert_allclose(
            dv[weak], force[weak] / s["mass"][weak, None] * dt, rtol=1e-9, atol=1e-13
        )


def test_huge_force_is_truncated_not_lost():
    # |F| = 1e200 N squares to inf in a naive norm; it must still act as max_force.
    _, v, h = integrate(
        np.zeros((1, 2)),
        np.zeros((1, 2)),
        np.array([[1.0, 0.0]]),
        np.array([[0.0, 1e200]]),
        mass=np.array([1.0]),
        max_speed=np.array([10.0]),
        max_force=np.array([2.0]),
        dt=0.5,
    )
    np.testing.assert_allclose(v, [[0.0, 1.0]])
    np.testing.assert_allclose(h, [[0.0, 1.0]])


def test_zero_force_leaves_velocity_unchanged():
    rng = np.random.default_rng(3)
    s = random_state(rng, 100)
    _, v_new, _ = integrate(
        s["position"],
        s["velocity"],
        s["heading"],
        np.zeros((100, 2)),
        s["mass"],
        s["max_speed"],
        s["max_force"],
        0.1,
    )
    np.testing.assert_array_equal(v_new, s["velocity"])


def test_heading_is_kept_when_the_velocity_becomes_zero():
    heading = np.array([[0.6, 0.8], [0.0, -1.0]])
    velocity = np.array([[1.0, 0.0], [0.0, 2.0]])
    # Exactly cancel the velocity of vehicle 0 (dv = -1) and nearly cancel vehicle 1's.
    force = np.array([[-2.0, 0.0], [0.0, -4.0 + 1e-9]])
    _, v, h = integrate(
        np.zeros((2, 2)),
        velocity,
        heading,
        force,
        mass=np.ones(2),
        max_speed=np.full(2, 5.0),
        max_force=np.full(2, 10.0),
        dt=0.5,
    )
    assert np.all(norm(v) <= MIN_HEADING_SPEED)
    assert norm(v)[0] == 0.0
    np.testing.assert_array_equal(h, heading)
    # The same with a Vehicles set stepping in place.
    flock = Vehicles.create(
        position=np.zeros((2, 2)), velocity=velocity, heading=heading, max_speed=5.0, max_force=10.0
    )
    flock.step(force, 0.5)
    np.testing.assert_array_equal(flock.heading, heading)


@pytest.mark.parametrize("seed", range(5))
def test_integrate_in_place_equals_out_of_place(seed):
    rng = np.random.default_rng(seed)
    n = 64 if seed % 2 else 1000  # both vecmath.length code paths
    s = random_state(rng, n)
    force = random_force(rng, n)
    args = (s["mass"], s["max_speed"], s["max_force"], 0.07)
    p0, v0, h0 = s["position"], s["velocity"], s["heading"]
    fresh = integrate(p0.copy(), v0.copy(), h0.copy(), force, *args)
    p, v, h = p0.copy(), v0.copy(), h0.copy()
    result = integrate(p, v, h, force, *args, out=(p, v, h))
    assert result[0] is p and result[1] is v and result[2] is h
    other = (np.empty_like(p0), np.empty_like(v0), np.empty_like(h0))
    result2 = integrate(p0, v0, h0, force, *args, out=other)
    for a, b, c in zip(fresh, (p, v, h), result2, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # out=None must not modify its inputs.
    np.testing.assert_array_equal(p0, s["position"])
    np.testing.assert_array_equal(v0, s["velocity"])


def test_vehicles_step_matches_integrate_and_broadcasts_a_single_force():
    flock = Vehicles.create(position=[[0.0, 0.0], [1.0, 1.0]], max_speed=2.0, max_force=4.0)
    flock.step([1.0, 0.0], 0.5)
    np.testing.assert_allclose(flock.velocity, [[0.5, 0.0], [0.5, 0.0]])
    np.testing.assert_allclose(flock.position, [[0.25, 0.0], [1.25, 1.0]])
    snap = flock.snapshot()
    snap["position"][:] = 99.0
    assert not np.any(flock.position == 99.0)


def test_vehicles_create_defaults_and_copies():
    pos = np.array([[0.0, 0.0], [1.0, 2.0]])
    vel = np.array([[0.0, 0.0], [0.0, -1.0]])
    flock = Vehicles.create(position=pos, velocity=vel)
    np.testing.assert_allclose(flock.heading, [[1.0, 0.0], [0.0, -1.0]])
    np.testing.assert_allclose(flock.side, [[0.0, 1.0], [1.0, 0.0]])
    pos[:] = 5.0
    np.testing.assert_allclose(flock.position, [[0.0, 0.0], [1.0, 2.0]])
    assert len(flock) == 2 and len(flock.params) == 2
    with pytest.raises(ValueError):
        flock.params.mass[0] = 2.0  # read-only


# --- validation
GOOD = dict(position=[[0.0, 0.0], [1.0, 0.0]])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(position=[0.0, 0.0]), "position"),
        (dict(position=[[0.0, 0.0, 0.0]]), "position"),
        (dict(position=np.zeros((0, 2))), "position"),
        (dict(position=[[np.nan, 0.0]]), "position"),
        (dict(position=[[np.inf, 0.0]]), "position"),
        (dict(GOOD, velocity=[[0.0, 0.0]]), "velocity"),
        (dict(GOOD, velocity=[[0.0, 0.0], [np.nan, 0.0]]), "velocity"),
        (dict(GOOD, velocity=[[0.0, 0.0], [2.0, 0.0]], max_speed=1.0), "velocity"),
        (dict(GOOD, heading=[[1.0, 0.0]]), "heading"),
        (dict(GOOD, heading=[[1.0, 0.0], [1.0, 1.0]]), "heading"),
        (dict(GOOD, heading=[[0.0, 0.0], [1.0, 0.0]]), "heading"),
        (dict(GOOD, mass=[1.0, 2.0, 3.0]), "mass"),
        (dict(GOOD, mass=[[1.0, 2.0]]), "mass"),
        (dict(GOOD, max_speed=[1.0]), "max_speed"),
        (dict(GOOD, max_force=np.ones((2, 2))), "max_force"),
        (dict(GOOD, radius=[1.0, 1.0, 1.0]), "radius"),
    ]
    + [
        (dict(GOOD, **{name: bad}), name)
        for name in ("mass", "max_speed", "max_force", "radius")
        for bad in (0.0, -1.0, np.nan, np.inf, -np.inf, [1.0, 0.0], [1.0, np.nan])
    ],
)
def test_vehicles_create_rejects_bad_input_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Vehicles.create(**kwargs)


def test_velocity_above_max_speed_message_names_both():
    with pytest.raises(ValueError, match="velocity") as info:
        Vehicles.create(position=[[0.0, 0.0]], velocity=[[3.0, 4.0]], max_speed=[4.9])
    assert "max_speed" in str(info.value)
    Vehicles.create(position=[[0.0, 0.0]], velocity=[[3.0, 4.0]], max_speed=[5.0])  # at the limit


@pytest.mark.parametrize(
    ("args", "kwargs", "name"),
    [
        ((0,), {}, "n"),
        ((-3,), {}, "n"),
        ((2.5,), {}, "n"),
        ((True,), {}, "n"),
        ((2,), dict(mass=[1.0]), "mass"),
        ((2,), dict(mass=0.0), "mass"),
        ((2,), dict(max_speed=-1.0), "max_speed"),
        ((2,), dict(max_speed=np.inf), "max_speed"),
        ((2,), dict(max_force=np.nan), "max_force"),
        ((2,), dict(max_force=[1.0, 2.0, 3.0]), "max_force"),
        ((2,), dict(radius=0.0), "radius"),
        ((2,), dict(radius=[1.0, -1.0]), "radius"),
    ],
)
def test_vehicle_params_create_rejects_bad_input(args, kwargs, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        VehicleParams.create(*args, **kwargs)


def test_vehicle_params_accepts_scalars_and_arrays():
    params = VehicleParams.create(3, mass=2.0, max_speed=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(params.mass, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(params.max_speed, [1.0, 2.0, 3.0])
    assert len(params) == 3


@pytest.mark.parametrize("dt", [0.0, -0.1, np.nan, np.inf])
def test_step_rejects_bad_dt(dt):
    flock = Vehicles.create(**GOOD)
    before = flock.snapshot()
    with pytest.raises(ValueError, match="dt"):
        flock.step(np.zeros((2, 2)), dt)
    np.testing.assert_array_equal(flock.position, before["position"])


def test_step_rejects_a_force_of_the_wrong_shape():
    flock = Vehicles.create(**GOOD)
    with pytest.raises(ValueError, match="steering_force"):
        flock.step(np.zeros((3, 2)), 0.1)
