"""Combining steering forces: Buckland's three methods (*Programming Game AI by Example*,
ch. 3, "Combining Steering Behaviors").

Each takes a sequence of forces, each ``(..., 2)`` N, in **priority order** (most important
first), with one weight per force, and returns a single force of magnitude at most
``max_force`` (``(...)`` N). A force may also be given as a zero-argument callable; the
prioritized methods then call it only if some vehicle still needs it, which is how
Buckland's running sum saves work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from steer_env import vecmath

Array = NDArray[np.float64]
Force = ArrayLike | Callable[[], ArrayLike]


def _value(force: Force) -> Array:
    return np.asarray(force() if callable(force) else force, dtype=np.float64)


def _check_weights(forces: Sequence[Force], weights: Sequence[float], name: str) -> None:
    if len(forces) != len(weights):
        raise ValueError(
            f"{name} needs one weight per force: got {len(forces)} forces and "
            f"{len(weights)} weights"
        )


def weighted_sum(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """``truncate(sum_k weights[k] * forces[k], max_force)`` (Buckland's
    ``CalculateWeightedSum``)."""
    _check_weights(forces, weights, "weighted_sum")
    if len(forces) == 0:
        raise ValueError("weighted_sum needs at least one force")
    total = sum(w * _value(f) for f, w in zip(forces, weights, strict=True))
    return vecmath.truncate(total, max_force)


def prioritized(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """Prioritized weighted truncated running sum (Buckland's ``CalculatePrioritized`` with
    ``AccumulateForce``).

    Forces are added in priority order; each weighted force is added whole while it fits in
    the remaining budget ``max_force - |sum so far|`` and is cut to the remaining budget
    otherwise; once the budget is spent, lower priorities are ignored. The result never
    exceeds ``max_force``.
    """
    _check_weights(forces, weights, "prioritized")
    max_force = np.asarray(max_force, dtype=np.float64)
    total: Array | None = None
    for force, weight in zip(forces, weights, strict=True):
        if total is not None:
            remaining = max_force - vecmath.length(total)
            if not np.any(remaining > 1e-12):
                break
        f = weight * _value(force)
        if total is None:
            total = vecmath.truncate(f, max_force)
            continue
        remaining = np.maximum(remaining, 0.0)
        total = total + vecmath.truncate(f, remaining)
    if total is None:
        raise ValueError("prioritized needs at least one force")
    return total


def dithered(
    forces: Sequence[Force],
    weights: Sequence[float],
    probabilities: Sequence[float],
    max_force: ArrayLike,
    rng: np.random.Generator,
) -> Array:
    """Prioritized dithering (Buckland's ``CalculateDithered``).

    For each vehicle independently, behaviours are considered in priority order; behaviour
    ``k`` is considered with probability ``probabilities[k]`` (one uniform draw per vehicle
    and behaviour from ``rng``). The first considered behaviour with a non-zero force wins:
    the result is ``truncate(weights[k] * force_k / probabilities[k], max_force)``
    (dividing by the probability keeps the expected contribution equal to the weighted
    force). Vehicles for which no behaviour wins get zero force.
    """
    _check_weights(forces, weights, "dithered")
    if len(forces) == 0:
        raise ValueError("dithered needs at least one force")
    if len(probabilities) != len(forces):
        raise ValueError(
            f"dithered needs one probability per force: got {len(forces)} forces and "
            f"{len(probabilities)} probabilities"
        )
    probs = np.asarray(probabilities, dtype=np.float64)
    if np.any(~np.isfinite(probs)) or np.any(probs <= 0) or np.any(probs > 1):
        raise ValueError(f"probabilities must be in (0, 1], got {list(probabilities)}")
    values = [_value(f) for f in forces]
    shape = np.broadcast_shapes(*(v.shape for v in values))
    draws = rng.random((len(values), *shape[:-1]))
    result = np.zeros(shape)
    decided = np.zeros(shape[:-1], dtype=bool)
    for k, (v, w, pk) in enumerate(zip(values, weights, probs, strict=True)):
        f = np.broadcast_to(v * (w / pk), shape)
        win = ~decided & (draws[k] < pk) & (vecmath.length(f) > 1e-12)
        result = np.where(win[..., None], f, result)
        decided |= win
    return vecmath.truncate(result, max_force)
