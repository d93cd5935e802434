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

from steer_env.core.arrays import LOOPS, rows, vectors_out

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


def _stacked(values: list[Array], max_force: ArrayLike) -> tuple[tuple[int, ...], Array, Array]:
    """The forces broadcast together and stacked ``(K, n, 2)``, and ``max_force`` as rows."""
    lead, n, arrays = rows(*((v, 1) for v in values), (max_force, 0))
    stack = np.empty((len(values), n, 2))
    for k, a in enumerate(arrays[:-1]):
        stack[k] = a
    return lead, stack, arrays[-1]


def weighted_sum(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """``truncate(sum_k weights[k] * forces[k], max_force)`` (Buckland's
    ``CalculateWeightedSum``)."""
    _check_weights(forces, weights, "weighted_sum")
    if len(forces) == 0:
        raise ValueError("weighted_sum needs at least one force")
    lead, stack, mf = _stacked([_value(f) for f in forces], max_force)
    buf, out = vectors_out(lead, stack.shape[1])
    LOOPS.weighted_sum(stack, np.asarray(weights, dtype=np.float64), mf, buf)
    return out


def prioritized(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """Prioritized weighted truncated running sum (Buckland's ``CalculatePrioritized`` with
    ``AccumulateForce``).

    Forces are added in priority order; each weighted force is added whole while it fits in
    the remaining budget ``max_force - |sum so far|`` and is cut to the remaining budget
    otherwise; once the budget is spent, lower priorities are ignored. The result never
    exceeds ``max_force``. (The kernel is :func:`steer_env.core.combine.accumulate`; a force
    given as a callable is evaluated only while some vehicle has budget left.)
    """
    _check_weights(forces, weights, "prioritized")
    if len(forces) == 0:
        raise ValueError("prioritized needs at least one force")
    from steer_env.core.combine import BUDGET_EPS

    total: Array | None = None
    budget: Array | None = None
    lead: tuple[int, ...] = ()
    for force, weight in zip(forces, weights, strict=True):
        if budget is not None and not np.any(budget > BUDGET_EPS):
            break
        value = _value(force)
        if total is None:
            lead, n, (f, mf) = rows((value, 1), (max_force, 0))
            total = np.zeros((n, 2))
            budget = np.empty(n)
        else:
            wider = np.broadcast_shapes(lead, value.shape[:-1])
            if wider != lead:
                # A later force widens the result: broadcast the running total to it.
                lead, n, (total, mf) = rows(
                    (total.reshape((*lead, 2)), 1), (max_force, 0), lead=wider
                )
                total = np.ascontiguousarray(np.broadcast_to(total, (n, 2)))
                budget = np.empty(n)
            f = rows((value, 1), lead=lead)[2][0]
        LOOPS.accumulate(total, f, float(weight), mf, budget)
    return total.reshape((*lead, 2))


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
    # Same draws, in the same order, as one (K, *vehicles) array from rng.
    draws = rng.random((len(values), *shape[:-1]))
    lead, stack, mf = _stacked([np.broadcast_to(v, shape) for v in values], max_force)
    n = stack.shape[1]
    flat_draws = np.ascontiguousarray(
        np.broadcast_to(draws, (len(values), *lead)).reshape(len(values), n)
    )
    buf, out = vectors_out(lead, n)
    LOOPS.dithered(stack, np.asarray(weights, dtype=np.float64), probs, flat_draws, mf, buf)
    return out
