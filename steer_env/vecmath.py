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

The formulas are the scalar kernels of :mod:`steer_env.core.vecmath`, run over the arrays
by compiled loops (compiled on first use, then loaded from numba's on-disk cache).
:data:`TINY` is :data:`steer_env.core.vecmath.TINY` (``1e-12``): lengths below it are
treated as zero when dividing by a length.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from steer_env.core.arrays import LOOPS, rows, vectors_out

Array = NDArray[np.float64]

_ZERO = np.zeros((1, 2))


def __getattr__(name: str) -> Any:
    # Constants live in the core (where the kernels read them); importing it imports numba,
    # so it happens on first use rather than at ``import steer_env``.
    if name == "TINY":
        from steer_env.core.vecmath import TINY

        return TINY
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def length(v: ArrayLike) -> Array:
    """Euclidean length of each vector: ``(..., 2) -> (...)``.

    Accurate for any finite input, without warnings: ``sqrt(x*x + y*y)``, with vectors whose
    squared length would overflow (components beyond ~1e150) or underflow measured as
    ``big * sqrt(1 + (small / big)**2)`` instead (within 2 ulp of :func:`math.hypot`).
    """
    lead, n, (a,) = rows((v, 1))
    out = np.empty(n)
    LOOPS.length(a, out)
    return out.reshape(lead)[()]


def normalize(v: ArrayLike) -> Array:
    """Unit vectors in the direction of ``v``; zero vectors stay zero."""
    lead, n, (a,) = rows((v, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.normalize(a, buf)
    return out


def set_magnitude(v: ArrayLike, magnitude: ArrayLike) -> Array:
    """Vectors along ``v`` with length ``magnitude``; zero vectors stay zero."""
    lead, n, (a, m) = rows((v, 1), (magnitude, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.set_magnitude(a, m, buf)
    return out


def truncate(v: ArrayLike, max_length: ArrayLike) -> Array:
    """Scale down every vector longer than ``max_length`` to that length.

    Vectors already within the limit (including zero vectors) are returned unchanged.
    ``max_length`` must be >= 0.
    """
    lead, n, (a, m) = rows((v, 1), (max_length, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.truncate(a, m, buf)
    return out


def perp(v: ArrayLike) -> Array:
    """``v`` rotated +90 degrees: ``(x, y) -> (-y, x)``."""
    lead, n, (a,) = rows((v, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.perp(a, buf)
    return out


def vector_to_local(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Express world-frame vectors in the frame whose x axis is the unit ``heading``.

    Returns ``(forward, side)`` components: ``(x*hx + y*hy, -x*hy + y*hx)``. ``heading``
    must be unit length.
    """
    lead, n, (a, h) = rows((vector, 1), (heading, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.to_local(a, _ZERO, h, buf)
    return out


def vector_to_world(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Inverse of :func:`vector_to_local`: local ``(forward, side)`` to world ``(x, y)``."""
    lead, n, (a, h) = rows((vector, 1), (heading, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.to_world(a, _ZERO, h, buf)
    return out


def point_to_local(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """World points expressed in the local frame at ``origin`` facing ``heading``."""
    lead, n, (a, o, h) = rows((point, 1), (origin, 1), (heading, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.to_local(a, o, h, buf)
    return out


def point_to_world(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """Local points (frame at ``origin`` facing ``heading``) expressed in world coordinates
    (Buckland's ``PointToWorldSpace``)."""
    lead, n, (a, o, h) = rows((point, 1), (origin, 1), (heading, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.to_world(a, o, h, buf)
    return out


def heading_from(
    velocity: ArrayLike, previous_heading: ArrayLike, min_speed: float = 1e-8
) -> Array:
    """Unit heading along ``velocity``, or ``previous_heading`` where the speed is below
    ``min_speed`` (so a stopped vehicle keeps facing where it faced)."""
    lead, n, (v, h) = rows((velocity, 1), (previous_heading, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.heading_from(v, h, float(min_speed), buf)
    return out
