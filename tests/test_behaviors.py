"""The steering behaviours, tested by what they make vehicles do.

Each test runs the real physics (:class:`steer_env.Vehicles`) and asserts an outcome that
fails if the behaviour were wrong; where a property could hold by accident, a control run
without the behaviour (or with parameters outside its documented conditions) shows that the
assertion can fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from steer_env import Vehicles, behaviors, combine, vecmath
from steer_env.neighbors import find_neighbors


def norm(a):
    return np.hypot(a[..., 0], a[..., 1])


def unit(angle):
    angle = np.asarray(angle, dtype=float)
    return np.stack((np.cos(angle), np.sin(angle)), axis=-1)


def polarization(heading):
    return float(norm(vecmath.normalize(heading).mean(axis=0)))


def rms_spread(position):
    return float(np.sqrt(((position - position.mean(axis=0)) ** 2).sum(axis=1).mean()))


def min_pair_distance(position):
    d = norm(position[:, None, :] - position[None, :, :])
    d[np.diag_indices(len(position))] = np.inf
    return float(d.min())


# --- seek / flee
def test_seek_at_the_target_brakes():
    force = behaviors.seek([[1.0, 2.0]], [[0.5, -0.5]], [1.0, 2.0], 3.0)
    np.testing.assert_allclose(force, [[-0.5, 0.5]])


def test_flee_increases_the_distance_every_step():
    threat = np.array([0.0, 0.0])
    start = np.array([[1.0, 0.5], [-2.0, 0.1], [0.3, -0.2]])
    flock = Vehicles.create(position=start, max_speed=[1.0, 2.0, 0.5], max_force=[1.0, 3.0, 0.2])
    distance = [norm(flock.position - threat)]
    for _ in range(400):
        flock.step(behaviors.flee(flock.position, flock.velocity, threat, flock.max_speed), 0.05)
        distance.append(norm(flock.position - threat))
    distance = np.array(distance)
    assert np.all(np.diff(distance, axis=0) > 0)
    # Flee runs straight away: every vehicle ends up at max speed, radially outwards.
    np.testing.assert_allclose(flock.speed, flock.max_speed, rtol=1e-6)
    np.testing.assert_allclose(flock.heading, vecmath.normalize(flock.position - threat), atol=1e-9)


def test_flee_panic_distance():
    pos = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [5.0, 5.0]])
    vel = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    force = behaviors.flee(pos, vel, [0.0, 0.0], 2.0, panic_distance=2.0)
    np.testing.assert_allclose(force[0], [2.0, 0.0])  # inside: full flee
    np.testing.assert_array_equal(force[1], [0.0, 0.0])  # outside
    np.testing.assert_allclose(force[2], [-1.0, 2.0])  # exactly at the panic distance
    np.testing.assert_array_equal(force[3], [0.0, 0.0])
    np.testing.assert_allclose(
        behaviors.flee(pos, vel, [0.0, 0.0], 2.0)[1], [2.0, -1.0]
    )  # without a panic distance everyone flees


# --- arrive
def _arrive_rollout(n, rng, *, mass, max_speed, max_force, slowing, start, v0, md, dt, seconds):
    """Straight-line approaches from random directions; returns (min signed distance along
    the approach direction, final distance, final speed), each (n,)."""
    direction = unit(rng.uniform(-np.pi, np.pi, n))
    target = rng.uniform(-5, 5, (n, 2))
    flock = Vehicles.create(
        position=target - direction * start[:, None],
        velocity=direction * v0[:, None],
        mass=mass,
        max_speed=max_speed,
        max_force=max_force,
    )
    signed_min = np.full(n, np.inf)
    for _ in range(int(seconds / dt)):
        force = behaviors.arrive(
            flock.position, flock.velocity, target, flock.max_speed, slowing, md
        )
        flock.step(force, dt)
        signed = ((target - flock.position) * direction).sum(axis=1)
        signed_min = np.minimum(signed_min, signed)
    return signed_min, norm(target - flock.position), flock.speed


def test_arrive_stops_on_the_target_without_overshoot_when_feasible():
    rng = np.random.default_rng(1)
    n = 60
    mass = rng.uniform(0.2, 2.0, n)
    max_speed = rng.uniform(0.5, 3.0, n)
    # Documented conditions: slowing >= 4 * mass * max_speed (critical damping) and
    # max_speed**2 / slowing <= max_force / mass (brakes as hard as the ramp asks).
    slowing = 4.0 * mass * max_speed * rng.choice([1.0, 1.5, 2.0], n)
    max_force = mass * max_speed**2 / slowing * rng.choice([1.0, 2.0, 5.0], n)
    start = slowing * rng.uniform(1.0, 3.0, n)
    v0 = max_speed * rng.choice([0.0, 1.0], n)  # from rest or at full speed
    args = dict(mass=mass, max_speed=max_speed, start=start, v0=v0, dt=0.02)
    signed_min, dist, speed = _arrive_rollout(
        n,
        np.random.default_rng(2),
        max_force=max_force,
        slowing=slowing,
        md=None,
        seconds=250.0,
        **args,
    )
    assert np.all(signed_min > -1e-9), signed_min.min()
    assert np.all(dist < 0.05)
    assert np.all(speed < 0.01)

    # Control: a ramp steeper than critical damping (still within the braking condition)
    # overshoots, so the assertion above can fail.
    short = 0.25 * 4.0 * mass * max_speed
    signed_min, _, _ = _arrive_rollout(
        n,
        np.random.default_rng(2),
        max_force=mass * max_speed**2 / short,
        slowing=short,
        md=None,
        seconds=250.0,
        **args,
    )
    assert np.all(signed_min < -1e-3)


def test_arrive_with_max_deceleration_handles_a_weak_max_force():
    rng = np.random.default_rng(3)
    n = 40
    mass = rng.uniform(0.5, 2.0, n)
    max_speed = rng.uniform(0.5, 2.0, n)
    slowing = 4.0 * mass * max_speed * rng.uniform(1.0, 2.0, n)
    # Too weak to brake along the ramp: max_force / mass < max_speed**2 / slowing.
    max_force = mass * max_speed**2 / slowing * rng.uniform(0.2, 0.8, n)
    md = 0.5 * max_force / mass  # as documented: half the real braking
    start = np.maximum(slowing, max_speed**2 / (2 * md)) * rng.uniform(1.0, 2.0, n)
    args = dict(
        mass=mass,
        max_speed=max_speed,
        max_force=max_force,
        slowing=slowing,
        start=start,
        v0=max_speed,
        dt=0.05,
    )
    signed_min, dist, speed = _arrive_rollout(
        n, np.random.default_rng(4), md=md, seconds=400.0, **args
    )
    assert np.all(signed_min > -1e-9), signed_min.min()
    assert np.all(dist < 0.05)
    assert np.all(speed < 0.01)
    # Controls: without the cap, or with the full max_force / mass, many overshoot.
    for bad_md in (None, max_force / mass):
        signed_min, _, _ = _arrive_rollout(
            n, np.random.default_rng(4), md=bad_md, seconds=150.0, **args
        )
        assert np.mean(signed_min < -0.1) > 0.25


# --- pursuit / evade
def _steps_to_capture(use_pursuit: bool) -> int:
    dt = 0.05
    target, target_velocity = np.array([[30.0, -20.0]]), np.array([[0.0, 2.0]])  # crossing
    chaser = Vehicles.create(position=[[0.0, 0.0]], max_speed=3.0, max_force=3.0)
    for k in range(1, 5000):
        if use_pursuit:
            force = behaviors.pursuit(
                chaser.position, chaser.velocity, chaser.max_speed, target, target_velocity
            )
        else:
            force = behaviors.seek(chaser.position, chaser.velocity, target, chaser.max_speed)
        chaser.step(force, dt)
        target = target + target_velocity * dt
        if norm(chaser.position - target)[0] < 0.5:
            return k
    raise AssertionError("no capture")


def test_pursuit_intercepts_sooner_than_seek():
    pursuit_steps = _steps_to_capture(True)
    seek_steps = _steps_to_capture(False)
    assert pursuit_steps < 0.9 * seek_steps, (pursuit_steps, seek_steps)


def test_pursuit_target_prediction_hand_example():
    # Target 10 m ahead, moving sideways at 1 m/s; pursuer max speed 4: T = 10 / (4 + 1) = 2.
    aim = behaviors.pursuit_target([0.0, 0.0], [1.0, 0.0], 4.0, [10.0, 0.0], [0.0, 1.0])
    np.testing.assert_allclose(aim, [10.0, 2.0])
    # Head-on and ahead: aim at the target's current position.
    aim = behaviors.pursuit_target([0.0, 0.0], [1.0, 0.0], 4.0, [10.0, 0.0], [-1.0, 0.0])
    np.testing.assert_allclose(aim, [10.0, 0.0])
    # Prediction capped by max_prediction_time.
    aim = behaviors.pursuit_target([0.0, 0.0], [1.0, 0.0], 4.0, [10.0, 0.0], [0.0, 1.0], 0.5)
    np.testing.assert_allclose(aim, [10.0, 0.5])


def test_evade_outruns_a_slower_pursuer():
    dt = 0.05
    evader = Vehicles.create(position=[[4.0, 1.0]], max_speed=2.0, max_force=2.0)
    hunter = Vehicles.create(position=[[0.0, 0.0]], max_speed=1.5, max_force=2.0)
    distance = []
    for _ in range(800):
        evade = behaviors.evade(
            evader.position, evader.velocity, evader.max_speed, hunter.position, hunter.velocity
        )
        chase = behaviors.pursuit(
            hunter.position, hunter.velocity, hunter.max_speed, evader.position, evader.velocity
        )
        evader.step(evade, dt)
        hunter.step(chase, dt)
        distance.append(norm(evader.position - hunter.position)[0])
    distance = np.array(distance)
    assert distance[-1] > distance[0] + 15.0
    assert np.all(np.diff(distance[100:]) > 0)  # once under way, the gap only grows


def test_evade_threat_range_and_prediction():
    pos = np.array([[0.0, 0.0], [0.0, 0.0]])
    vel = np.zeros((2, 2))
    threat = np.array([[3.0, 0.0], [10.0, 0.0]])
    threat_vel = np.array([[0.0, 1.0], [0.0, 1.0]])
    force = behaviors.evade(pos, vel, 2.0, threat, threat_vel, threat_range=5.0)
    np.testing.assert_array_equal(force[1], [0.0, 0.0])
    # Flee the predicted position: T = 3 / (2 + 1) = 1 -> (3, 1).
    np.testing.assert_allclose(force[0], -2.0 * np.array([3.0, 1.0]) / np.sqrt(10.0))
    unlimited = behaviors.evade(pos, vel, 2.0, threat, threat_vel)
    assert norm(unlimited[1]) > 0


# --- wander
WANDER = dict(radius=1.0, distance=2.0, jitter=5.0)


def _wander_rollout(seed=None, noise_seed=None, n=20, steps=600, dt=0.05):
    start_heading = unit(np.linspace(0, 2 * np.pi, n, endpoint=False))
    flock = Vehicles.create(
        position=np.zeros((n, 2)), velocity=2.0 * start_heading, max_speed=2.0, max_force=1.0
    )
    target = np.tile([WANDER["radius"], 0.0], (n, 1))
    rng = None if seed is None else np.random.default_rng(seed)
    noise_rng = None if noise_seed is None else np.random.default_rng(noise_seed)
    traj, targets, headings = [], [target], [flock.heading.copy()]
    for _ in range(steps):
        kwargs = dict(rng=rng) if rng is not None else dict(noise=noise_rng.uniform(-1, 1, (n, 2)))
        force, target = behaviors.wander(
            flock.position,
            flock.velocity,
            flock.heading,
            flock.max_speed,
            target,
            dt=dt,
            **WANDER,
            **kwargs,
        )
        flock.step(force, dt)
        traj.append(flock.position.copy())
        targets.append(target)
        headings.append(flock.heading.copy())
    return np.array(traj), np.array(targets), np.array(headings), flock


def test_wander_is_reproducible_from_the_generator_seed():
    a = _wander_rollout(seed=11)[0]
    b = _wander_rollout(seed=11)[0]
    c = _wander_rollout(seed=12)[0]
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(a - c)) > 1.0


def test_wander_noise_path_equals_rng_path():
    # Drawing the noise as wander does (uniform in [-1, 1], shape of the target) from the
    # same seed reproduces the rng= trajectory exactly.
    a, ta, _, _ = _wander_rollout(seed=21)
    b, tb, _, _ = _wander_rollout(noise_seed=21)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ta, tb)


def test_wander_target_stays_on_the_circle_and_moves_by_the_jitter():
    dt = 0.05
    _, targets, _, _ = _wander_rollout(seed=5, dt=dt)
    r = WANDER["radius"]
    np.testing.assert_allclose(norm(targets), r, rtol=1e-12)
    # A jitter of at most jitter*dt*sqrt(2) per step, projected back onto the circle, moves
    # the target by at most eps * r / (r - eps).
    eps = WANDER["jitter"] * dt * np.sqrt(2.0)
    step = norm(np.diff(targets, axis=0))
    assert step.max() <= eps * r / (r - eps) + 1e-12
    assert step.max() > 0.2 * eps  # the target does move


def test_wander_turns_smoothly():
    dt, mass, max_speed, max_force = 0.05, 1.0, 2.0, 1.0
    _, _, headings, flock = _wander_rollout(seed=8, dt=dt, steps=1500)
    r, d = WANDER["radius"], WANDER["distance"]
    # The wander point lies inside the cone of half-angle asin(r / d) around the heading, so
    # the velocity is a convex mix of the old one and a desired velocity whose forward part
    # is at least max_speed * cos(asin(r / d)): the speed never drops below that ...
    min_speed = max_speed * np.sqrt(1.0 - (r / d) ** 2)
    assert np.all(flock.speed >= min_speed * (1 - 1e-12))
    # ... and one step changes the velocity by at most max_force / mass * dt, so the heading
    # turns by at most asin(max_force * dt / (mass * min_speed)) per step.
    bound = np.arcsin(max_force * dt / (mass * min_speed))
    cos_turn = np.clip((headings[1:] * headings[:-1]).sum(axis=-1), -1.0, 1.0)
    turn = np.arccos(cos_turn)
    assert turn.max() <= bound + 1e-9
    assert turn.max() > 0.5 * bound  # the bound is not vacuous: wander does turn hard
    # Over the run every vehicle turns through a wide range of directions.
    total_turn = np.abs(np.unwrap(np.arctan2(headings[..., 1], headings[..., 0]), axis=0))
    assert np.all(total_turn.max(axis=0) > np.pi / 2)


def test_wander_needs_exactly_one_source_of_noise():
    args = ([[0.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]], 1.0, [[1.0, 0.0]])
    kw = dict(radius=1.0, distance=2.0, jitter=1.0, dt=0.1)
    with pytest.raises(ValueError, match="exactly one"):
        behaviors.wander(*args, **kw)
    with pytest.raises(ValueError, match="exactly one"):
        behaviors.wander(*args, **kw, rng=np.random.default_rng(0), noise=[[0.0, 0.0]])


def test_wander_hand_example():
    # Heading +y; target (1, 0) jittered by noise (0, 1) * jitter*dt = (0, 1) -> (1, 1),
    # projected onto radius sqrt(2) -> unchanged; local point (1 + 2, 1) -> world (-1, 3).
    force, new_target = behaviors.wander(
        [[0.0, 0.0]],
        [[0.0, 1.0]],
        [[0.0, 1.0]],
        1.0,
        [[1.0, 0.0]],
        radius=np.sqrt(2.0),
        distance=2.0,
        jitter=10.0,
        dt=0.1,
        noise=[[0.0, 1.0]],
    )
    np.testing.assert_allclose(new_target, [[1.0, 1.0]])
    np.testing.assert_allclose(force, [[-1.0, 3.0]] / np.sqrt(10.0) - [[0.0, 1.0]])
    world = behaviors.wander_world_target([[0.0, 0.0]], [[0.0, 1.0]], new_target, 2.0)
    np.testing.assert_allclose(world, [[-1.0, 3.0]])


# --- flocking
def _random_flock(seed, n, side, speed=1.0):
    rng = np.random.default_rng(seed)
    heading = unit(rng.uniform(-np.pi, np.pi, n))
    return rng.uniform(0, side, (n, 2)), heading * speed, heading


@pytest.mark.parametrize("seed", range(3))
def test_alignment_polarizes_a_random_flock(seed):
    pos, vel, heading = _random_flock(seed, 50, 10.0)
    flock = Vehicles.create(position=pos, velocity=vel, heading=heading, max_force=2.0)
    before = polarization(flock.heading)
    assert before < 0.3
    for _ in range(200):
        nb = find_neighbors(flock.position, 6.0)
        flock.step(behaviors.alignment(flock.velocity, flock.heading, flock.max_speed, nb), 0.1)
    assert polarization(flock.heading) > 0.9
    # Control: without alignment the headings stay as disordered as they were.
    still = Vehicles.create(position=pos, velocity=vel, heading=heading, max_force=2.0)
    for _ in range(200):
        still.step(np.zeros_like(vel), 0.1)
    assert polarization(still.heading) < 0.3


def test_alignment_hand_example():
    nb = find_neighbors([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [50.0, 50.0]], 2.0)
    heading = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    vel = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.3, 0.0]])
    force = behaviors.alignment(vel, heading, 2.0, nb)
    np.testing.assert_allclose(force[0], [0.0, 2.0])  # both neighbours face +y
    # Vehicle 1 sees 0 (+x) and 2 (+y): mean heading along (1, 1).
    np.testing.assert_allclose(force[1], 2.0 * np.array([1.0, 1.0]) / np.sqrt(2.0))
    np.testing.assert_array_equal(force[3], [0.0, 0.0])  # no neighbours, no force


def test_cohesion_contracts_the_flock():
    pos, _, _ = _random_flock(4, 60, 20.0)
    flock = Vehicles.create(position=pos)
    before = rms_spread(flock.position)
    for _ in range(300):
        nb = find_neighbors(flock.position, 8.0)
        flock.step(behaviors.cohesion(flock.velocity, flock.max_speed, nb), 0.1)
    assert rms_spread(flock.position) < 0.1 * before


def test_cohesion_hand_example():
    nb = find_neighbors([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]], 2.5)
    force = behaviors.cohesion(np.zeros((3, 2)), 1.0, nb)
    np.testing.assert_allclose(force[0], np.array([1.0, 1.0]) / np.sqrt(2.0))  # centre (1, 1)


def test_separation_spreads_a_crowd_and_keeps_it_apart():
    rng = np.random.default_rng(2)
    pos = rng.uniform(0, 3, (40, 2))
    pos[1] = pos[0]  # two boids on exactly the same spot
    flock = Vehicles.create(position=pos)
    assert min_pair_distance(flock.position) == 0.0
    history = []
    for _ in range(600):
        nb = find_neighbors(flock.position, 2.0)
        force = behaviors.separation(flock.velocity, flock.max_speed, nb)
        assert np.all(np.isfinite(force))
        flock.step(force, 0.1)
        history.append(min_pair_distance(flock.position))
    history = np.array(history)
    assert np.all(history[200:] > 1.5)
    assert history[-1] > 1.5


def test_separation_of_coincident_boids_is_finite_and_opposite():
    nb = find_neighbors([[1.0, 1.0], [1.0, 1.0], [9.0, 9.0]], 1.0)
    force = behaviors.separation(np.zeros((3, 2)), 2.0, nb)
    assert np.all(np.isfinite(force))
    np.testing.assert_allclose(norm(force[:2]), 2.0)
    np.testing.assert_allclose(force[0], -force[1])
    np.testing.assert_array_equal(force[2], [0.0, 0.0])
    # Pushed apart, they separate.
    flock = Vehicles.create(position=[[1.0, 1.0], [1.0, 1.0]])
    for _ in range(20):
        nb = find_neighbors(flock.position, 1.0)
        flock.step(behaviors.separation(flock.velocity, flock.max_speed, nb), 0.1)
    assert norm(flock.position[0] - flock.position[1]) > 0.1


def test_separation_hand_example():
    nb = find_neighbors([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0]], 2.0)
    force = behaviors.separation(np.zeros((3, 2)), 1.0, nb)
    # Vehicle 0: push -(2,0)/4 - (0,1)/1 = (-0.5, -1) -> unit * max_speed.
    np.testing.assert_allclose(force[0], np.array([-0.5, -1.0]) / np.sqrt(1.25))
    # Weighted by 1 / distance: the nearer neighbour dominates.
    assert abs(force[0, 1]) > abs(force[0, 0])


# --- walls and obstacles
def test_feelers_hand_example():
    tips = behaviors.feelers([[1.0, 1.0]], [[0.0, 1.0]], 2.0)
    s = np.sqrt(0.5)
    np.testing.assert_allclose(tips, [[[1.0, 3.0], [1.0 - s, 1.0 + s], [1.0 + s, 1.0 + s]]])


def test_obstacle_avoidance_gets_around_an_obstacle_without_touching_it():
    dt, center, radius = 0.05, np.array([[15.0, 0.0]]), np.array([3.0])
    lanes = np.array([0.0, 0.3, -1.0, 2.5])  # dead ahead, slightly off, off, grazing
    start = np.stack((np.zeros(4), lanes), axis=-1)
    target = np.stack((np.full(4, 30.0), lanes), axis=-1)

    def run(avoid: bool):
        flock = Vehicles.create(
            position=start, velocity=[[2.0, 0.0]] * 4, max_speed=2.0, max_force=2.0, radius=0.5
        )
        clearance = np.full(4, np.inf)
        reached = np.zeros(4, dtype=bool)
        for _ in range(1200):
            seek = behaviors.seek(flock.position, flock.velocity, target, flock.max_speed)
            if avoid:
                dodge = behaviors.obstacle_avoidance(
                    flock.position,
                    flock.velocity,
                    flock.heading,
                    flock.max_speed,
                    flock.radius,
                    center,
                    radius,
                    min_detection_length=5.0,
                )
                force = combine.prioritized([dodge, seek], [10.0, 1.0], flock.max_force)
            else:
                force = seek
            flock.step(force, dt)
            clearance = np.minimum(clearance, norm(flock.position - center) - radius)
            reached |= norm(flock.position - target) < 0.5
        return clearance, reached

    clearance, reached = run(avoid=True)
    assert np.all(clearance > 0.0), clearance
    assert np.all(reached)
    clearance, reached = run(avoid=False)
    assert np.all(clearance < 0.0)  # seek alone ploughs through the obstacle


def test_obstacle_avoidance_hand_cases():
    kw = dict(min_detection_length=4.0)
    p, v, h = [[0.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]
    # Obstacle ahead, slightly to the left: pushed right (-y), braked (-x).
    f = behaviors.obstacle_avoidance(p, v, h, 1.0, 0.5, [[3.0, 0.5]], [1.0], **kw)
    assert f[0, 1] < 0 and f[0, 0] < 0
    # Dead ahead: passed on the left (+y).
    f = behaviors.obstacle_avoidance(p, v, h, 1.0, 0.5, [[3.0, 0.0]], [1.0], **kw)
    assert f[0, 1] > 0
    # Beyond the detection box (4 * (1 + 1) = 8 m), beside it, or behind: no force.
    for c in ([[12.0, 0.0]], [[3.0, 2.0]], [[-5.0, 0.0]]):
        f = behaviors.obstacle_avoidance(p, v, h, 1.0, 0.5, c, [1.0], **kw)
        np.testing.assert_array_equal(f, [[0.0, 0.0]])
    # No obstacles at all.
    f = behaviors.obstacle_avoidance(p, v, h, 1.0, 0.5, np.zeros((0, 2)), np.zeros(0), **kw)
    np.testing.assert_array_equal(f, [[0.0, 0.0]])


def test_obstacle_avoidance_needs_one_radius_per_centre():
    p, v, h = [[0.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]
    with pytest.raises(ValueError, match=r"one radius per obstacle_center \(2\), got 1"):
        behaviors.obstacle_avoidance(p, v, h, 1.0, 0.5, [[3.0, 0.5], [5.0, 0.0]], [1.0], 4.0)


@pytest.mark.parametrize(
    ("max_speed", "max_force", "mass", "dt"),
    [(2.0, 1.5, 1.0, 0.05), (1.5, 6.0, 0.5, 0.02), (1.75, 10.0, 0.4, 0.05)],
)
def test_wall_avoidance_keeps_vehicles_in_the_box(max_speed, max_force, mass, dt):
    rng = np.random.default_rng(0)
    n, side = 60, 30.0
    bounds = (0.0, 0.0, side, side)
    # The documented condition on the feeler length.
    feeler = np.sqrt(2.0) * max_speed**2 * mass / (2.0 * min(max_force, max_speed)) + max_speed * dt

    def run(avoid: bool, mode: str):
        flock = Vehicles.create(
            position=rng.uniform(0.25 * side, 0.75 * side, (n, 2)),
            velocity=unit(rng.uniform(-np.pi, np.pi, n)) * max_speed,
            mass=mass,
            max_speed=max_speed,
            max_force=max_force,
        )
        wander_target = np.tile([1.0, 0.0], (n, 1))
        worst = np.inf
        for k in range(int(120 / dt)):
            if k % int(4 / dt) == 0:  # a new target outside the box every 4 s
                target = rng.uniform(-10 * side, 11 * side, (n, 2))
            if mode == "seek":
                other = behaviors.seek(flock.position, flock.velocity, target, flock.max_speed)
            else:
                other, wander_target = behaviors.wander(
                    flock.position,
                    flock.velocity,
                    flock.heading,
                    flock.max_speed,
                    wander_target,
                    radius=1.0,
                    distance=2.0,
                    jitter=20.0,
                    dt=dt,
                    rng=rng,
                )
            if avoid:
                wall = behaviors.wall_avoidance(
                    flock.position, flock.velocity, flock.heading, flock.max_speed, bounds, feeler
                )
                force = combine.prioritized([wall, other], [1.0, 1.0], flock.max_force)
            else:
                force = other
            flock.step(force, dt)
            inside = np.minimum(flock.position, side - flock.position).min()
            worst = min(worst, inside)
        return worst

    for mode in ("seek", "wander"):
        assert run(True, mode) > 0.0, mode
    assert run(False, "seek") < -10.0  # control: without the walls they leave


def test_wall_avoidance_hand_cases():
    bounds = (0.0, 0.0, 10.0, 10.0)
    # Heading for the right wall at full speed: desired (-1, vy) -> force (-2, 0).
    f = behaviors.wall_avoidance([[9.0, 5.0]], [[1.0, 0.0]], [[1.0, 0.0]], 1.0, bounds, 2.0)
    np.testing.assert_allclose(f, [[-2.0, 0.0]])
    # Mid-box: nothing.
    f = behaviors.wall_avoidance([[5.0, 5.0]], [[1.0, 0.0]], [[1.0, 0.0]], 1.0, bounds, 2.0)
    np.testing.assert_array_equal(f, [[0.0, 0.0]])
    # Near the bottom wall but facing inwards: the margin still pushes it in (+y).
    f = behaviors.wall_avoidance([[5.0, 0.5]], [[0.0, 0.2]], [[0.0, 1.0]], 1.0, bounds, 2.0)
    np.testing.assert_allclose(f, [[0.0, 0.8]])
    # Corner: both walls.
    f = behaviors.wall_avoidance([[9.5, 9.5]], [[0.6, 0.8]], [[0.6, 0.8]], 1.0, bounds, 2.0)
    np.testing.assert_allclose(f, [[-1.6, -1.8]])


# --- group tactics
def test_interpose_reaches_the_midpoint_of_two_stationary_agents():
    a, b = np.array([[10.0, 0.0]]), np.array([[0.0, 8.0]])
    agent = Vehicles.create(position=[[-5.0, -5.0]], mass=0.5, max_speed=2.0, max_force=4.0)
    for _ in range(2000):
        force = behaviors.interpose(
            agent.position,
            agent.velocity,
            agent.max_speed,
            a,
            np.zeros((1, 2)),
            b,
            np.zeros((1, 2)),
            slowing_radius=4.0,
        )
        agent.step(force, 0.05)
    assert norm(agent.position - (a + b) / 2)[0] < 0.05
    assert agent.speed[0] < 0.01


def _segment_hits_circle(p0, p1, center, radius):
    seg = p1 - p0
    t = np.clip(((center - p0) * seg).sum() / (seg * seg).sum(), 0.0, 1.0)
    return norm(p0 + t * seg - center) < radius


def test_hide_puts_an_obstacle_between_hunter_and_vehicle():
    hunter = np.array([[0.0, 0.0]])
    centers = np.array([[5.0, 5.0], [-8.0, 2.0], [3.0, -9.0]])
    radii = np.array([1.5, 2.0, 1.0])
    starts = np.array([[6.0, 1.0], [-3.0, 0.5], [0.0, -4.0]])
    hider = Vehicles.create(position=starts, mass=0.5, max_speed=2.0, max_force=4.0)
    assert not any(
        _segment_hits_circle(hunter[0], p, c, r)
        for p in starts
        for c, r in zip(centers, radii, strict=True)
    )
    for _ in range(2000):
        force = behaviors.hide(
            hider.position,
            hider.velocity,
            hider.max_speed,
            hunter,
            np.zeros((1, 2)),
            centers,
            radii,
            slowing_radius=4.0,
        )
        hider.step(force, 0.05)
    assert np.all(hider.speed < 0.01)
    for k, p in enumerate(hider.position):
        # Behind the obstacle nearest to where it started (one per vehicle here).
        assert _segment_hits_circle(hunter[0], p, centers[k], radii[k])
    spots = behaviors.hiding_spots(hunter, centers, radii, 1.0)[0]
    np.testing.assert_allclose(hider.position, spots, atol=0.05)


def test_hide_without_obstacles_evades():
    f = behaviors.hide(
        [[1.0, 0.0]],
        [[0.0, 0.0]],
        1.0,
        [[0.0, 0.0]],
        [[0.0, 0.0]],
        np.zeros((0, 2)),
        np.zeros(0),
        2.0,
    )
    np.testing.assert_allclose(f, [[1.0, 0.0]])


def test_offset_pursuit_keeps_station_behind_a_moving_leader():
    dt, mass, max_speed, max_force = 0.05, 0.5, 2.0, 4.0
    slowing = 4.0 * mass * max_speed
    leader_p, leader_v = np.array([[0.0, 0.0]]), np.array([[1.0, 0.5]])
    leader_h = vecmath.normalize(leader_v)
    offset = np.array([-2.0, 1.5])  # 2 m behind, 1.5 m to the leader's left
    follower = Vehicles.create(
        position=[[10.0, -10.0]], mass=mass, max_speed=max_speed, max_force=max_force
    )
    for _ in range(3000):
        force = behaviors.offset_pursuit(
            follower.position,
            follower.velocity,
            follower.max_speed,
            leader_p,
            leader_v,
            leader_h,
            offset,
            slowing,
        )
        follower.step(force, dt)
        leader_p = leader_p + leader_v * dt
    slot = vecmath.point_to_world(offset, leader_p, leader_h)
    np.testing.assert_allclose(follower.velocity, leader_v, atol=1e-6)
    # Steady state: arrive must ask for the leader's speed u, so the follower trails its
    # predicted aim point by slowing * u / max_speed; with the look-ahead T = e / (s + u)
    # the lag behind the slot is e = slowing * u / s * (s + u) / (s + 2 u), along the motion.
    u, s = norm(leader_v)[0], max_speed
    lag = slowing * u / s * (s + u) / (s + 2 * u)
    np.testing.assert_allclose(follower.position - slot, -lag * leader_h, atol=1e-6)
    assert lag < 2.0


def _distance_to_polyline(p, pts):
    a, b = pts[:-1], pts[1:]
    seg = b - a
    t = np.clip(((p[:, None, :] - a) * seg).sum(-1) / (seg * seg).sum(-1), 0, 1)
    return norm(p[:, None, :] - (a + seg * t[..., None])).min(axis=1)


def test_follow_path_loops_around_a_closed_path():
    angles = np.linspace(0, 2 * np.pi, 9)[:-1]
    path = 10.0 * unit(angles)  # octagon, ~61 m around
    closed = np.concatenate((path, path[:1]))
    flock = Vehicles.create(
        position=[[3.0, -2.0], [-12.0, 0.0]], mass=0.5, max_speed=2.0, max_force=4.0
    )
    dist, angle = [], []
    for _ in range(3000):
        force = behaviors.follow_path(
            flock.position, flock.velocity, flock.max_speed, path, look_ahead=2.0, loop=True
        )
        flock.step(force, 0.05)
        dist.append(_distance_to_polyline(flock.position, closed))
        angle.append(np.arctan2(flock.position[:, 1], flock.position[:, 0]))
    dist = np.array(dist)
    progress = np.unwrap(np.array(angle), axis=0)
    settled = slice(400, None)  # after 20 s
    assert np.all(dist[settled] < 1.0)
    # Progress: counter-clockwise (the path's order), more than three laps in the 130 s left.
    assert np.all(progress[-1] - progress[400] > 3 * 2 * np.pi)
    assert np.all(np.diff(progress[settled], axis=0) > 0)


def test_follow_path_stops_at_the_end_of_an_open_path():
    path = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [20.0, 15.0]])
    flock = Vehicles.create(
        position=[[-3.0, 2.0], [12.0, 1.0]], mass=0.5, max_speed=2.0, max_force=4.0
    )
    for _ in range(2000):
        force = behaviors.follow_path(
            flock.position, flock.velocity, flock.max_speed, path, look_ahead=4.0
        )
        flock.step(force, 0.05)
    assert np.all(norm(flock.position - path[-1]) < 0.05)
    assert np.all(flock.speed < 0.01)


def test_path_target_hand_example():
    path = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]
    # On the first leg at x = 2, no prediction: look 3 m further -> (5, 0).
    aim = behaviors.path_target([[2.0, 1.0]], [[0.0, 0.0]], path, 0.0, 3.0)
    np.testing.assert_allclose(aim, [[5.0, 0.0]])
    # Around the corner: x = 9 + 3 -> 2 m up the second leg.
    aim = behaviors.path_target([[9.0, -1.0]], [[0.0, 0.0]], path, 0.0, 3.0)
    np.testing.assert_allclose(aim, [[10.0, 2.0]])
    # Clamped at the end of an open path; wrapped on a loop (closing leg back to the start).
    aim = behaviors.path_target([[10.0, 9.0]], [[0.0, 0.0]], path, 0.0, 3.0)
    np.testing.assert_allclose(aim, [[10.0, 10.0]])
    aim = behaviors.path_target([[10.0, 9.0]], [[0.0, 0.0]], path, 0.0, 3.0, loop=True)
    np.testing.assert_allclose(aim, [[10.0, 10.0]] + 2.0 * np.array([[-1.0, -1.0]]) / np.sqrt(2))


# --- unaligned collision avoidance
@pytest.mark.parametrize("angle", [0.0, -np.pi / 4])
def test_unaligned_collision_avoidance_prevents_a_crossing_collision(angle):
    dt, horizon = 0.05, 4.0
    # Vehicle 0 heads north through the origin; vehicle 1 crosses it, both due there at 10 s.
    d1 = unit(angle)
    start = np.array([[0.0, -15.0], -15.0 * d1])
    velocity = np.array([[0.0, 1.5], 1.5 * d1])
    goal = np.array([[0.0, 100.0], 100.0 * d1])
    radius = np.array([1.0, 1.0])

    def run(avoid: bool):
        pair = Vehicles.create(
            position=start, velocity=velocity, max_speed=1.5, max_force=2.0, radius=radius
        )
        closest = np.inf
        for _ in range(int(30 / dt)):
            seek = behaviors.seek(pair.position, pair.velocity, goal, pair.max_speed)
            if avoid:
                nb = find_neighbors(pair.position, 2 * 1.5 * horizon)
                dodge = behaviors.unaligned_collision_avoidance(
                    pair.position,
                    pair.velocity,
                    pair.heading,
                    pair.max_speed,
                    pair.radius,
                    nb,
                    horizon,
                )
                force = combine.prioritized([dodge, seek], [1.0, 1.0], pair.max_force)
            else:
                force = seek
            pair.step(force, dt)
            closest = min(closest, norm(pair.position[0] - pair.position[1]))
        return closest

    assert run(False) < radius.sum()  # without it they collide
    assert run(True) > radius.sum()


def test_unaligned_collision_avoidance_ignores_safe_neighbours():
    # Parallel, side by side, same velocity: no approach, no force.
    pos = np.array([[0.0, 0.0], [0.0, 3.0]])
    vel = np.array([[1.0, 0.0], [1.0, 0.0]])
    nb = find_neighbors(pos, 10.0)
    f = behaviors.unaligned_collision_avoidance(pos, vel, vel, 1.0, 1.0, nb, 5.0)
    np.testing.assert_array_equal(f, 0.0)
