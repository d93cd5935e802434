"""Scalar 2-D vector kernels (a vector is two floats ``x, y``).

Zero vectors never produce NaN: truncating, normalising or setting the magnitude of a zero
vector gives a zero vector. The local frame of a vehicle follows Buckland's convention
(*Programming Game AI by Example*, ch. 3, ``VectorToWorldSpace``): local x is the heading
(forward), local y the heading rotated +90 degrees (side, to the left in a y-up world).
"""

from __future__ import annotations

import math

from steer_env.core.jit import inline_kernel, kernel

#: Lengths below this are treated as zero when dividing by a length.
TINY = 1e-12
# Sums of squares outside [SQ_MIN, SQ_MAX] may have lost precision to underflow or overflow.
SQ_MIN = 1e-290
SQ_MAX = 1e300


@inline_kernel
def squared_length(x: float, y: float) -> float:
    """``x*x + y*y``: the sum of squares of :func:`length`'s fast path."""
    return x * x + y * y


@inline_kernel
def root_is_length(s: float) -> bool:
    """Whether ``sqrt(s)`` of a :func:`squared_length` ``s`` is the :func:`length` (``s``
    in ``[SQ_MIN, SQ_MAX]``, where no square underflowed or overflowed)."""
    return (s >= SQ_MIN) & (s <= SQ_MAX)


#: Relative margin of :func:`root_above` and :func:`root_below`: far wider than the
#: rounding of a square root and of a product, so what they settle holds for
#: ``math.sqrt`` too.
ROOT_MARGIN = 1e-6
#: Thresholds at or beyond which :func:`root_above` and :func:`root_below` settle nothing.
ROOT_T_MAX = 1e150


@inline_kernel
def root_above(s: float, t: float) -> bool:
    """Whether ``math.sqrt(s) > t`` for certain, known without the root: ``s`` (a
    :func:`squared_length` in :func:`root_is_length`'s range) exceeds the square of
    ``0 < t < ROOT_T_MAX`` widened by :data:`ROOT_MARGIN`. False settles nothing."""
    q = t * (1.0 + ROOT_MARGIN)
    return root_is_length(s) & (t > 0.0) & (t < ROOT_T_MAX) & (s > q * q)


@inline_kernel
def root_below(s: float, t: float) -> bool:
    """Whether ``math.sqrt(s) < t`` for certain, known without the root: ``s`` is below
    the square of ``t`` narrowed by :data:`ROOT_MARGIN` (the conditions of
    :func:`root_above`). False settles nothing."""
    q = t * (1.0 - ROOT_MARGIN)
    return root_is_length(s) & (t > 0.0) & (t < ROOT_T_MAX) & (s < q * q)


@kernel
def length(x: float, y: float) -> float:
    """Euclidean length ``sqrt(x**2 + y**2)``, accurate for any finite input.

    Fast path ``sqrt(x*x + y*y)``. When the sum of squares overflowed (components beyond
    ~1e150), underflowed (below ~1e-145) or is not finite, the length is recomputed without
    intermediate overflow as ``big * sqrt(1 + (small / big)**2)`` (``big``, ``small`` the
    larger and smaller magnitude; within 2 ulp), so ``length(1e200, 0) == 1e200``. An
    infinite component gives ``inf``.

    The rare path has no call and no early return, so the compiler can still vectorise a
    loop over vectors that calls this (it then computes both paths and selects). A loop
    that needs only the fast path's speed takes :func:`squared_length` and
    :func:`root_is_length` itself, and comes back here when one sum is out of range."""
    s = squared_length(x, y)
    if root_is_length(s):
        return math.sqrt(s)
    ax = abs(x)
    ay = abs(y)
    big = max(ax, ay)
    small = min(ax, ay)
    q = small / big
    r = big * math.sqrt(1.0 + q * q)
    if big == math.inf:
        r = big
    if not big > 0.0:
        r = big + small  # both zero: 0 (a NaN component: nan)
    return r


@inline_kernel
def length_at_least(x: float, y: float, t: float) -> bool:
    """``length(x, y) >= t``, mostly without the root (:func:`root_above`,
    :func:`root_below`): the same answer, for any input."""
    s = squared_length(x, y)
    if root_above(s, t):
        return True
    if root_below(s, t):
        return False
    return length(x, y) >= t


@kernel
def normalize(x: float, y: float) -> tuple[float, float]:
    """Unit vector along ``(x, y)``; ``(0, 0)`` when its length is at most :data:`TINY`."""
    n = length(x, y)
    inv = 1.0 / n if n > TINY else 0.0
    return x * inv, y * inv


@kernel
def scale_to(x: float, y: float, n: float, magnitude: float) -> tuple[float, float]:
    """:func:`set_magnitude` for a caller that already has ``n = length(x, y)`` (so the
    length is computed once): ``magnitude * (x, y) / n``; ``(0, 0)`` when ``n <= TINY``."""
    if not n > TINY:
        return 0.0, 0.0
    # Unit vector first, then the magnitude: magnitude / n alone can overflow or go
    # subnormal (and lose digits) where the result itself is representable.
    return x / n * magnitude, y / n * magnitude


@kernel
def set_magnitude(x: float, y: float, magnitude: float) -> tuple[float, float]:
    """``magnitude * (x, y) / |(x, y)|``; ``(0, 0)`` when ``|(x, y)| <= TINY``."""
    return scale_to(x, y, length(x, y), magnitude)


@kernel
def truncate(x: float, y: float, max_length: float) -> tuple[float, float]:
    """``(x, y)`` scaled down to ``max_length`` when longer, unchanged otherwise
    (``max_length >= 0``)."""
    n = length(x, y)
    if n > max_length:
        return x / n * max_length, y / n * max_length  # see set_magnitude for the order
    return x, y


@kernel
def perp(x: float, y: float) -> tuple[float, float]:
    """``(x, y)`` rotated +90 degrees: ``(-y, x)``."""
    return -y, x


@kernel
def to_local(x: float, y: float, hx: float, hy: float) -> tuple[float, float]:
    """World vector ``(x, y)`` in the frame whose x axis is the unit heading ``(hx, hy)``:
    ``(forward, side) = (x*hx + y*hy, -x*hy + y*hx)``."""
    return x * hx + y * hy, -x * hy + y * hx


@kernel
def to_world(x: float, y: float, hx: float, hy: float) -> tuple[float, float]:
    """Inverse of :func:`to_local`: local ``(forward, side)`` to world
    ``(x*hx - y*hy, x*hy + y*hx)``."""
    return x * hx - y * hy, x * hy + y * hx


@kernel
def heading_from(
    vx: float, vy: float, hx: float, hy: float, min_speed: float
) -> tuple[float, float]:
    """Unit heading along the velocity ``(vx, vy)``, or the previous heading ``(hx, hy)``
    when the speed is at most ``min_speed`` (a stopped vehicle keeps facing where it
    faced)."""
    speed = length(vx, vy)
    if speed > min_speed:
        return vx / speed, vy / speed
    return hx, hy
