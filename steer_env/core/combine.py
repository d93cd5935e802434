"""Scalar kernels for combining steering forces (Buckland, *Programming Game AI by Example*,
ch. 3, "Combining Steering Behaviors").

A caller combines a variable list of behaviours per vehicle by calling these once per
behaviour, in priority order, on a running total ``(tx, ty)``.
"""

from __future__ import annotations

from steer_env.core.behaviors import FORCE_EPS
from steer_env.core.jit import inline_kernel, kernel
from steer_env.core.vecmath import length, truncate

#: Prioritized combination adds nothing once less than this budget (N) is left.
BUDGET_EPS = 1e-12


@kernel
def budget_left(tx, ty, max_force):
    """The force budget still unspent: ``max_force - |total|`` (N)."""
    return max_force - length(tx, ty)


@inline_kernel
def accumulate(tx, ty, fx, fy, max_force):
    """Buckland's ``AccumulateForce``: add ``f`` to the running total ``t`` whole if it fits
    in the remaining budget ``max_force - |t|``, else cut to that budget. Returns
    ``(tx, ty, added_anything)``; ``added_anything`` is False (and ``t`` unchanged) when no
    more than :data:`BUDGET_EPS` was left, so lower priorities can be skipped."""
    remaining = budget_left(tx, ty, max_force)
    if not remaining > BUDGET_EPS:
        return tx, ty, False
    ax, ay = truncate(fx, fy, remaining)
    return tx + ax, ty + ay, True


@kernel
def weighted_add(tx, ty, fx, fy, weight):
    """One term of Buckland's ``CalculateWeightedSum``: ``t + weight * f`` (truncate the
    total to ``max_force`` with :func:`~steer_env.core.vecmath.truncate` at the end)."""
    return tx + weight * fx, ty + weight * fy


@kernel
def dither_candidate(fx, fy, weight, probability, draw):
    """One behaviour of Buckland's ``CalculateDithered``: it is considered when the uniform
    ``draw`` in ``[0, 1)`` is below ``probability`` and wins if its scaled force
    ``weight * f / probability`` is non-zero (longer than :data:`FORCE_EPS`); dividing by the
    probability keeps the expected contribution equal to the weighted force. Returns
    ``(sx, sy, wins)``; the first winner in priority order is then truncated to
    ``max_force``."""
    scale = weight / probability
    sx = fx * scale
    sy = fy * scale
    return sx, sy, draw < probability and length(sx, sy) > FORCE_EPS
