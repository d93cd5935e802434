"""Property-based and hand-checked tests of steer_env.vecmath.

Every property runs with floating-point errors raised (overflow, division by zero, invalid
operations) and with warnings turned into errors, so a NaN, an inf or a RuntimeWarning
anywhere fails the test. Underflow alone is allowed: rounding a product far below the
smallest normal double to zero is the correct result, not an error.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from steer_env import vecmath

#: Applied to every property below (no deadline: the first call may compile/warm caches).
prop = settings(deadline=None, max_examples=150)

# Components span zero, subnormals, tiny, ordinary and huge magnitudes (up to 1e300, where a
# naive x*x + y*y overflows).
component = st.one_of(
    st.just(0.0),
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e-6, max_value=1e-6, allow_nan=False, allow_infinity=False),
    st.sampled_from([5e-324, -5e-324, 1e-200, 1e-160, 1e154, 1e160, 1e200, -1e300]),
)
moderate = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def vectors(elements=component, max_n: int = 6):
    """Arrays of shape (n, 2) with n >= 1 (also exercises the batched code paths)."""
    return hnp.arrays(np.float64, st.tuples(st.integers(1, max_n), st.just(2)), elements=elements)


def big_vectors(elements=component):
    """300 vectors: more than vecmath's small-array threshold (256), to cover the large-array
    code path of vecmath.length."""
    n = 300
    return vectors(elements, 8).map(lambda v: np.resize(v, (n, 2)))


# Limits and magnitudes: zero or 1e-6..1e6 (with vectors up to 1e300 long, limit / length then
# stays a normal double, so results keep full precision).
limits = st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=1e6))
angles = st.floats(min_value=-np.pi, max_value=np.pi, allow_nan=False)


@contextmanager
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", under="ignore"):
            yield


def assert_finite(a):
    assert np.all(np.isfinite(a)), a


def unit(angle):
    return np.array([np.cos(angle), np.sin(angle)])


# --- length
@prop
@given(vectors())
def test_length_is_exact_and_finite(v):
    with strict():
        n = vecmath.length(v)
    assert_finite(n)
    np.testing.assert_allclose(n, np.hypot(v[:, 0], v[:, 1]), rtol=1e-15, atol=0)


@prop
@given(st.sampled_from([1.0, 1e-3, 1e160, 1e300]), st.integers(0, 1))
def test_length_large_array_path_handles_overflowing_squares(scale, which):
    rng = np.random.default_rng(0)
    v = rng.normal(size=(1000, 2))
    v[which::2] *= scale  # mix ordinary and huge vectors in one large array
    with strict():
        n = vecmath.length(v)
    np.testing.assert_allclose(n, np.hypot(v[:, 0], v[:, 1]), rtol=1e-15)


# --- truncate
@prop
@given(vectors(), limits)
def test_truncate_is_finite_and_within_the_limit(v, max_length):
    with strict():
        t = vecmath.truncate(v, max_length)
    assert_finite(t)
    assert np.all(np.hypot(t[:, 0], t[:, 1]) <= max_length * (1 + 1e-12))


@prop
@given(vectors(), limits)
def test_truncate_keeps_short_vectors_and_direction(v, max_length):
    with strict():
        t = vecmath.truncate(v, max_length)
    n = np.hypot(v[:, 0], v[:, 1])
    short = n <= max_length
    np.testing.assert_array_equal(t[short], v[short])
    long_ = ~short & (max_length > 0)
    # Long vectors are scaled down to exactly max_length along the same direction.
    np.testing.assert_allclose(np.hypot(t[long_, 0], t[long_, 1]), max_length, rtol=1e-12)
    cross = t[long_, 0] * v[long_, 1] - t[long_, 1] * v[long_, 0]
    dot = t[long_, 0] * v[long_, 0] + t[long_, 1] * v[long_, 1]
    assert np.all(dot >= 0)
    np.testing.assert_allclose(cross / n[long_], 0.0, atol=1e-9 * max_length)


def test_truncate_zero_vector_and_zero_limit():
    with strict():
        np.testing.assert_array_equal(vecmath.truncate([0.0, 0.0], 1.0), [0.0, 0.0])
        np.testing.assert_array_equal(vecmath.truncate([3.0, 4.0], 0.0), [0.0, 0.0])
        np.testing.assert_allclose(vecmath.truncate([3.0, 4.0], 2.5), [1.5, 2.0])
        # Per-vector limits broadcast over the leading axes.
        out = vecmath.truncate([[3.0, 4.0], [3.0, 4.0]], [10.0, 1.0])
    np.testing.assert_allclose(out, [[3.0, 4.0], [0.6, 0.8]])


# --- normalize / set_magnitude
@prop
@given(vectors())
def test_normalize_is_unit_or_zero(v):
    with strict():
        u = vecmath.normalize(v)
    assert_finite(u)
    n = np.hypot(v[:, 0], v[:, 1])
    nu = np.hypot(u[:, 0], u[:, 1])
    np.testing.assert_allclose(nu[n > vecmath.TINY], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(u[n <= vecmath.TINY], 0.0)


@prop
@given(vectors(), limits)
def test_set_magnitude_is_finite_with_the_requested_length(v, magnitude):
    with strict():
        s = vecmath.set_magnitude(v, magnitude)
    assert_finite(s)
    n = np.hypot(v[:, 0], v[:, 1])
    ns = np.hypot(s[:, 0], s[:, 1])
    nonzero = n > vecmath.TINY
    np.testing.assert_allclose(ns[nonzero], magnitude, rtol=1e-12)
    np.testing.assert_array_equal(s[~nonzero], 0.0)
    # Same direction as the input.
    dot = (s * v).sum(axis=1)
    assert np.all(dot[nonzero] >= 0)


@settings(deadline=None, max_examples=40)
@given(big_vectors(), limits)
def test_large_arrays_take_the_same_safe_path(v, magnitude):
    with strict():
        s = vecmath.set_magnitude(v, magnitude)
        t = vecmath.truncate(v, magnitude)
        u = vecmath.normalize(v)
    for a in (s, t, u):
        assert_finite(a)
    n = np.hypot(v[:, 0], v[:, 1])
    nonzero = n > vecmath.TINY
    np.testing.assert_allclose(np.hypot(s[:, 0], s[:, 1])[nonzero], magnitude, rtol=1e-12)
    assert np.all(np.hypot(t[:, 0], t[:, 1]) <= magnitude * (1 + 1e-12))
    np.testing.assert_allclose(np.hypot(u[:, 0], u[:, 1])[nonzero], 1.0, rtol=1e-12)


def test_zero_vectors_give_zero_without_warnings():
    z = np.zeros((4, 2))
    with strict():
        for out in (
            vecmath.normalize(z),
            vecmath.set_magnitude(z, 3.0),
            vecmath.truncate(z, 0.0),
            vecmath.truncate(z, 1.0),
            vecmath.length(z),
        ):
            np.testing.assert_array_equal(out, 0.0)


def test_set_magnitude_hand_example():
    np.testing.assert_allclose(vecmath.set_magnitude([3.0, 4.0], 10.0), [6.0, 8.0])
    np.testing.assert_allclose(vecmath.normalize([[0.0, -2.0]]), [[0.0, -1.0]])


# --- frames
@prop
@given(vectors(moderate), angles)
def test_rotation_preserves_length_and_round_trips(v, angle):
    h = unit(angle)
    with strict():
        local = vecmath.vector_to_local(v, h)
        back = vecmath.vector_to_world(local, h)
    scale = np.maximum(np.hypot(v[:, 0], v[:, 1]), 1.0)
    np.testing.assert_allclose(
        np.hypot(local[:, 0], local[:, 1]) / scale, np.hypot(v[:, 0], v[:, 1]) / scale, atol=1e-14
    )
    np.testing.assert_allclose(back / scale[:, None], v / scale[:, None], atol=1e-14)


@prop
@given(vectors(moderate), vectors(moderate, 1), angles)
def test_point_round_trip_local_world(points, origin, angle):
    h = unit(angle)
    o = origin[0]
    with strict():
        local = vecmath.point_to_local(points, o, h)
        back = vecmath.point_to_world(local, o, h)
        local_again = vecmath.point_to_local(vecmath.point_to_world(points, o, h), o, h)
    scale = max(1.0, float(np.abs(points).max()), float(np.abs(o).max()))
    np.testing.assert_allclose(back / scale, points / scale, atol=1e-14)
    np.testing.assert_allclose(local_again / scale, points / scale, atol=1e-14)
    # Distances to the origin are preserved by the change of frame.
    np.testing.assert_allclose(
        np.hypot(local[:, 0], local[:, 1]) / scale,
        np.hypot(*(points - o).T) / scale,
        atol=1e-14,
    )


def test_local_frame_convention_hand_example():
    # Vehicle at (1, 1) facing +y: its forward axis is world +y, its side (left) is world -x.
    origin, heading = np.array([1.0, 1.0]), np.array([0.0, 1.0])
    np.testing.assert_allclose(vecmath.point_to_local([1.0, 3.0], origin, heading), [2.0, 0.0])
    np.testing.assert_allclose(vecmath.point_to_local([0.0, 1.0], origin, heading), [0.0, 1.0])
    np.testing.assert_allclose(vecmath.point_to_world([2.0, 1.0], origin, heading), [0.0, 3.0])
    np.testing.assert_allclose(vecmath.vector_to_world([1.0, 0.0], heading), heading)
    np.testing.assert_allclose(vecmath.perp([1.0, 0.0]), [0.0, 1.0])
    np.testing.assert_allclose(vecmath.perp(heading), vecmath.vector_to_world([0, 1], heading))


@prop
@given(vectors(moderate), angles)
def test_perp_is_a_quarter_turn(v, angle):
    p = vecmath.perp(v)
    np.testing.assert_allclose((p * v).sum(axis=1), 0.0, atol=1e-9 * max(1.0, np.abs(v).max()))
    np.testing.assert_array_equal(vecmath.perp(vecmath.perp(v)), -v)


def test_heading_from_keeps_previous_heading_when_stopped():
    prev = np.array([[0.6, 0.8], [0.6, 0.8], [0.6, 0.8]])
    vel = np.array([[0.0, 0.0], [1e-10, 0.0], [0.0, -2.0]])
    with strict():
        h = vecmath.heading_from(vel, prev)
    np.testing.assert_allclose(h, [[0.6, 0.8], [0.6, 0.8], [0.0, -1.0]])


@pytest.mark.parametrize("shape", [(2,), (3, 2), (2, 3, 2)])
def test_functions_broadcast_over_leading_axes(shape):
    rng = np.random.default_rng(1)
    v = rng.normal(size=shape)
    assert vecmath.length(v).shape == shape[:-1]
    assert vecmath.normalize(v).shape == shape
    assert vecmath.truncate(v, 0.5).shape == shape
    assert vecmath.set_magnitude(v, 2.0).shape == shape
