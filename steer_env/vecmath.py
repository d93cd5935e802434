"""Vector helpers over arrays of 2-D vectors, safe at zero length.

Every function takes arrays whose last axis has length 2 (``(..., 2)``) and broadcasts over
the leading axes, so one call handles one vehicle, a flock, or a batch of environments.
Scalar-per-vector arguments (lengths, magnitudes) have the leading shape ``(...)`` and
broadcast the same way.

Zero vectors never produce NaN or a division warning: truncating, normalising or setting
the magnitude of a zero vector returns a zero vector.

The local frame of a vehicle follows Buckland's convention (*Programming Game AI by
Example*, ch. 3, ``PointToWorldSpace`` / ``VectorToWorldSpace``): the local x axis is the
vehicle's heading (forward) and the local y axis is the heading rotated +90 degrees (side,
to the left in a y-up world).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

#: Lengths below this are treated as zero when dividing by a length.
TINY = 1e-12


#: Arrays with at most this many vectors take :func:`numpy.hypot` directly (cheapest there).
_HYPOT_MAX = 256
# Sums of squares outside [_SQ_MIN, _SQ_MAX] may have lost precision to underflow or overflow.
_SQ_MIN = 1e-290
_SQ_MAX = 1e300


def length(v: ArrayLike) -> Array:
    """Euclidean length of each vector: ``(..., 2) -> (...)``.

    Accurate for any finite input, without warnings: vectors whose squared length would
    overflow (components beyond ~1e150) or underflow are measured with :func:`numpy.hypot`.
    """
    v = np.asarray(v, dtype=np.float64)
    x = v[..., 0]
    y = v[..., 1]
    if x.size <= _HYPOT_MAX:
        return np.hypot(x, y)
    # Large arrays: sqrt(x*x + y*y) is about twice as fast as hypot. Squares that overflow
    # (components beyond ~1e154) or underflow (below ~1e-145) are redone with hypot.
    with np.errstate(over="ignore", under="ignore"):
        s = x * x
        s += y * y
    if not (s.max() <= _SQ_MAX and s.min() >= _SQ_MIN):
        bad = ~(s <= _SQ_MAX) | (s < _SQ_MIN)
        bad &= (x != 0) | (y != 0)
        if bad.any():
            np.sqrt(s, out=s)
            s[bad] = np.hypot(x[bad], y[bad])
            return s
    np.sqrt(s, out=s)
    return s


def _safe_scale(v: Array, factor: Array) -> Array:
    return v * factor[..., None]


def normalize(v: ArrayLike) -> Array:
    """Unit vectors in the direction of ``v``; zero vectors stay zero."""
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    inv = np.divide(1.0, n, out=np.zeros_like(n), where=n > TINY)
    return _safe_scale(v, inv)


def set_magnitude(v: ArrayLike, magnitude: ArrayLike) -> Array:
    """Vectors along ``v`` with length ``magnitude``; zero vectors stay zero."""
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    factor = np.divide(
        np.asarray(magnitude, dtype=np.float64),
        n,
        out=np.zeros(np.broadcast(n, magnitude).shape),
        where=n > TINY,
    )
    return _safe_scale(v, factor)


def truncate(v: ArrayLike, max_length: ArrayLike) -> Array:
    """Scale down every vector longer than ``max_length`` to that length.

    Vectors already within the limit (including zero vectors) are returned unchanged.
    ``max_length`` must be >= 0.
    """
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    max_length = np.asarray(max_length, dtype=np.float64)
    factor = np.divide(
        max_length, n, out=np.ones(np.broadcast(n, max_length).shape), where=n > max_length
    )
    return _safe_scale(v, factor)


def perp(v: ArrayLike) -> Array:
    """``v`` rotated +90 degrees: ``(x, y) -> (-y, x)``."""
    v = np.asarray(v, dtype=np.float64)
    return np.stack((-v[..., 1], v[..., 0]), axis=-1)


def vector_to_local(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Express world-frame vectors in the frame whose x axis is the unit ``heading``.

    Returns ``(forward, side)`` components. ``heading`` must be unit length.
    """
    v = np.asarray(vector, dtype=np.float64)
    h = np.asarray(heading, dtype=np.float64)
    forward = v[..., 0] * h[..., 0] + v[..., 1] * h[..., 1]
    side = -v[..., 0] * h[..., 1] + v[..., 1] * h[..., 0]
    return np.stack((forward, side), axis=-1)


def vector_to_world(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Inverse of :func:`vector_to_local`: local ``(forward, side)`` to world ``(x, y)``."""
    v = np.asarray(vector, dtype=np.float64)
    h = np.asarray(heading, dtype=np.float64)
    x = v[..., 0] * h[..., 0] - v[..., 1] * h[..., 1]
    y = v[..., 0] * h[..., 1] + v[..., 1] * h[..., 0]
    return np.stack((x, y), axis=-1)


def point_to_local(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """World points expressed in the local frame at ``origin`` facing ``heading``."""
    return vector_to_local(np.asarray(point, dtype=np.float64) - origin, heading)


def point_to_world(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """Local points (frame at ``origin`` facing ``heading``) expressed in world coordinates
    (Buckland's ``PointToWorldSpace``)."""
    return vector_to_world(point, heading) + np.asarray(origin, dtype=np.float64)


def heading_from(
    velocity: ArrayLike, previous_heading: ArrayLike, min_speed: float = 1e-8
) -> Array:
    """Unit heading along ``velocity``, or ``previous_heading`` where the speed is below
    ``min_speed`` (so a stopped vehicle keeps facing where it faced)."""
    velocity = np.asarray(velocity, dtype=np.float64)
    speed = length(velocity)
    moving = speed > min_speed
    inv = np.divide(1.0, speed, out=np.zeros_like(speed), where=moving)
    return np.where(moving[..., None], velocity * inv[..., None], previous_heading)
