"""The kernel-based numpy API against the test-only numpy oracle (tests/oracle_numpy.py), the
pure-numpy code steer-env shipped before the core kernels, on seeded random inputs.

Deliberate differences, all below the tolerance used here (1e-12 relative to the size of
the quantities): the oracle's ``length`` uses ``numpy.hypot`` on small arrays, where the
kernels use ``sqrt(x*x + y*y)`` (last-bit differences); the kernels scale vectors by one
factor where the oracle sometimes divides twice. Random inputs avoid the measure-zero
boundaries (a distance exactly at a threshold) where such last-bit differences could flip a
branch.
"""

from __future__ import annotations

import numpy as np
import oracle_numpy as oracle
import pytest

from steer_env import behaviors, combine, physics, vecmath
from steer_env.neighbors import find_neighbors

N = 400
TOL = 1e-12


def close(got, want, scale=1.0):
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL * scale)


@pytest.fixture
def state():
    rng = np.random.default_rng(1234)
    p = rng.uniform(-20, 20, (N, 2))
    v = rng.normal(0, 1.5, (N, 2))
    h = oracle.normalize(rng.normal(0, 1, (N, 2)))
    return {
        "rng": rng,
        "p": p,
        "v": v,
        "h": h,
        "t": rng.uniform(-20, 20, (N, 2)),
        "tv": rng.normal(0, 1.5, (N, 2)),
        "ms": rng.uniform(0.5, 3.0, N),
        "mf": rng.uniform(0.5, 4.0, N),
        "mass": rng.uniform(0.3, 3.0, N),
    }


def test_vecmath_matches_oracle(state):
    rng = state["rng"]
    v = rng.normal(0, 10, (N, 2)) * 10.0 ** rng.integers(-5, 5, (N, 1))
    v[:5] = 0.0
    m = rng.uniform(0, 5, N)
    h = state["h"]
    close(vecmath.length(v), oracle.length(v), 1e6)
    close(vecmath.normalize(v), oracle.normalize(v))
    close(vecmath.set_magnitude(v, m), oracle.set_magnitude(v, m), 5)
    close(vecmath.truncate(v, m), oracle.truncate(v, m), 1e6)
    close(vecmath.perp(v), oracle.perp(v))
    close(vecmath.vector_to_local(v, h), oracle.vector_to_local(v, h), 1e6)
    close(vecmath.vector_to_world(v, h), oracle.vector_to_world(v, h), 1e6)
    o = state["p"]
    close(vecmath.point_to_local(v, o, h), oracle.point_to_local(v, o, h), 1e6)
    close(vecmath.point_to_world(v, o, h), oracle.point_to_world(v, o, h), 1e6)
    close(vecmath.heading_from(v, h, 1e-3), oracle.heading_from(v, h, 1e-3))
    # Broadcasting: one vector against many, many against one scalar.
    close(vecmath.set_magnitude([3.0, 4.0], m), oracle.set_magnitude([3.0, 4.0], m), 5)
    close(vecmath.truncate(v, 2.0), oracle.truncate(v, 2.0), 1e6)


def test_integrate_matches_oracle(state):
    s = state
    f = s["rng"].normal(0, 5, (N, 2))
    args = (s["p"], s["v"], s["h"], f, s["mass"], s["ms"], s["mf"], 0.05)
    for got, want in zip(physics.integrate(*args), oracle.integrate(*args), strict=True):
        close(got, want, 20)


def test_behaviors_match_oracle(state):
    s = state
    p, v, h, t, tv, ms = s["p"], s["v"], s["h"], s["t"], s["tv"], s["ms"]
    pairs = [
        (behaviors.seek(p, v, t, ms), oracle.seek(p, v, t, ms)),
        (behaviors.flee(p, v, t, ms, 15.0), oracle.flee(p, v, t, ms, 15.0)),
        (behaviors.arrive(p, v, t, ms, 8.0), oracle.arrive(p, v, t, ms, 8.0)),
        (behaviors.arrive(p, v, t, ms, 8.0, 0.7), oracle.arrive(p, v, t, ms, 8.0, 0.7)),
        (
            behaviors.predict_position(p, ms, t, tv, 2.0),
            oracle.predict_position(p, ms, t, tv, 2.0),
        ),
        (behaviors.pursuit_target(p, v, ms, t, tv), oracle.pursuit_target(p, v, ms, t, tv)),
        (behaviors.pursuit(p, v, ms, t, tv, 3.0), oracle.pursuit(p, v, ms, t, tv, 3.0)),
        (behaviors.evade(p, v, ms, t, tv, 25.0, 3.0), oracle.evade(p, v, ms, t, tv, 25.0, 3.0)),
        (
            behaviors.wall_avoidance(p, v, h, ms, (-15, -15, 15, 15), 4.0),
            oracle.wall_avoidance(p, v, h, ms, (-15, -15, 15, 15), 4.0),
        ),
        (behaviors.feelers(p, h, 3.0), oracle.feelers(p, h, 3.0)),
        (
            behaviors.interpose(p, v, ms, t, tv, -t, v, 3.0),
            oracle.interpose(p, v, ms, t, tv, -t, v, 3.0),
        ),
        (
            behaviors.offset_pursuit(p, v, ms, t, tv, h, [-2.0, 1.0], 3.0),
            oracle.offset_pursuit(p, v, ms, t, tv, h, [-2.0, 1.0], 3.0),
        ),
        (
            behaviors.flow_field_following(p, v, ms, tv),
            oracle.seek(p, v, p + tv, ms),  # the field vector as a seek direction
        ),
    ]
    for got, want in pairs:
        close(got, want, 100)

    noise = s["rng"].uniform(-1, 1, (N, 2))
    wt = oracle.set_magnitude(s["rng"].normal(0, 1, (N, 2)), 1.5)
    kw = {"radius": 1.5, "distance": 2.0, "jitter": 3.0, "dt": 0.1, "noise": noise}
    for got, want in zip(
        behaviors.wander(p, v, h, ms, wt, **kw), oracle.wander(p, v, h, ms, wt, **kw), strict=True
    ):
        close(got, want, 100)
    close(
        behaviors.wander_world_target(p, h, wt, 2.0), oracle.wander_world_target(p, h, wt, 2.0), 100
    )


def test_obstacles_hide_and_paths_match_oracle(state):
    s = state
    p, v, h, ms = s["p"], s["v"], s["h"], s["ms"]
    rng = s["rng"]
    centers = rng.uniform(-20, 20, (12, 2))
    radii = rng.uniform(0.5, 3.0, 12)
    # 12 obstacles, and 150: more than one run of 64 rows (the box test's bit mask).
    many = (rng.uniform(-20, 20, (150, 2)), rng.uniform(0.2, 1.5, 150))
    for c, r in ((centers, radii), many):
        close(
            behaviors.obstacle_avoidance(p, v, h, ms, 0.5, c, r, 4.0),
            oracle.obstacle_avoidance(p, v, h, ms, 0.5, c, r, 4.0),
            100,
        )
    close(
        behaviors.hiding_spots(s["t"], centers, radii, 1.0),
        oracle.hiding_spots(s["t"], centers, radii, 1.0),
        100,
    )
    close(
        behaviors.hide(p, v, ms, s["t"], s["tv"], centers, radii, 3.0),
        oracle.hide(p, v, ms, s["t"], s["tv"], centers, radii, 3.0),
        100,
    )
    path = rng.uniform(-20, 20, (7, 2))
    for loop in (False, True):
        close(
            behaviors.path_target(p, v, path, 0.5, 2.0, loop),
            oracle.path_target(p, v, path, 0.5, 2.0, loop),
            100,
        )
        close(
            behaviors.follow_path(p, v, ms, path, 0.5, 2.0, loop),
            oracle.follow_path(p, v, ms, path, 0.5, 2.0, loop),
            100,
        )


def test_flocking_matches_oracle(state):
    s = state
    p, v, h, ms = s["p"], s["v"], s["h"], s["ms"]
    p = p.copy()
    p[1] = p[0]  # a coincident pair exercises the tie-break
    nb = find_neighbors(p, 5.0)
    close(behaviors.separation(v, ms, nb), oracle.separation(v, ms, nb), 1e4)
    close(behaviors.alignment(v, h, ms, nb), oracle.alignment(v, h, ms, nb), 100)
    close(behaviors.cohesion(v, ms, nb), oracle.cohesion(v, ms, nb), 100)
    nb = find_neighbors(p, 8.0)
    close(
        behaviors.unaligned_collision_avoidance(p, v, h, ms, 1.0, nb, 3.0),
        oracle.unaligned_collision_avoidance(p, v, h, ms, 1.0, nb, 3.0),
        100,
    )


def test_combine_matches_oracle(state):
    rng = state["rng"]
    forces = [rng.normal(0, 2, (N, 2)) for _ in range(3)]
    mf = state["mf"]
    w = [1.5, 1.0, 0.5]
    close(combine.weighted_sum(forces, w, mf), oracle.weighted_sum(forces, w, mf), 100)
    close(combine.prioritized(forces, w, mf), oracle.prioritized(forces, w, mf), 100)
    got = combine.dithered(forces, w, [0.5, 0.8, 1.0], mf, np.random.default_rng(7))
    want = oracle.dithered(forces, w, [0.5, 0.8, 1.0], mf, np.random.default_rng(7))
    close(got, want, 100)
