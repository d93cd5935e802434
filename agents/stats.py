"""Statistics for comparing agents on paired, seeded episodes (pure numpy/scipy functions).

Notation: ``n`` episodes; episode ``k`` ends either with a capture at time ``T_k`` (an
*event*) or at the time limit ``H`` without one (*censored*: all we know is ``T_k > H``).
Times are in seconds (capture step times ``dt``). The only censoring in these tasks is the
time limit, so every censored episode is censored exactly at ``H``.

* :func:`wilson_interval` -- confidence interval of a success rate.
* :func:`paired_difference` -- mean of per-episode differences ``a_k - b_k`` with a CI.
* :func:`restricted_times` / :func:`restricted_mean` -- times with censored episodes counted
  as ``H`` (the *restricted mean time*, ``E[min(T, H)]``).
* :func:`event_mean` -- mean time among episodes with a capture only.
* :func:`survival_curve` / :func:`survival_median` -- Kaplan-Meier curve ``S(t)`` (fraction of
  episodes without a capture by time ``t``) and its median.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as _sps

__all__ = [
    "Interval",
    "event_mean",
    "paired_difference",
    "restricted_mean",
    "restricted_times",
    "survival_curve",
    "survival_median",
    "wilson_interval",
]


class Interval(NamedTuple):
    """An estimate with the bounds of its confidence interval."""

    mean: float
    lo: float
    hi: float


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(_sps.norm.ppf(0.5 + confidence / 2.0))


def wilson_interval(successes: int, n: int, z: float = 1.96) -> Interval:
    """Wilson score interval for a binomial proportion ``p = successes / n``.

    With ``p = k / n``::

        centre = (p + z^2 / (2 n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
        CI     = [centre - half, centre + half]

    ``z = 1.96`` gives a 95% interval. Unlike the Wald interval it stays inside [0, 1] and
    keeps close to nominal coverage for ``p`` near 0 or 1 (Wilson 1927; Brown, Cai and
    DasGupta 2001). Returns ``Interval(p, lo, hi)``.
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if int(successes) != successes or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n={n}], got {successes!r}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a positive number, got {z!r}")
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def paired_difference(a: ArrayLike, b: ArrayLike, confidence: float = 0.95) -> Interval:
    """Mean paired difference ``mean(a - b)`` over episodes with a ``confidence`` interval.

    With ``d_k = a_k - b_k`` (``k = 1..n``, the same seeded episode for both agents)::

        mean = sum(d_k) / n
        s    = sqrt(sum((d_k - mean)^2) / (n - 1))       (sample standard deviation)
        CI   = mean -/+ t_{n-1, (1 + confidence) / 2} * s / sqrt(n)

    the paired t interval (Student's t quantile with ``n - 1`` degrees of freedom; for the
    ``n >= 500`` episodes of a comparison it equals the normal approximation to 3 decimals).
    For 0/1 successes this is the Wald interval for the difference of paired proportions,
    which accounts for the pairing through the discordant episodes. With ``s = 0`` the
    interval is the point ``[mean, mean]``; with ``n = 1`` its bounds are ``nan``.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D arrays of equal length, got {x.shape}, {y.shape}")
    if x.size == 0:
        raise ValueError("a and b must not be empty")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a and b must be finite")
    _z(confidence)
    d = x - y
    n = d.size
    mean = float(d.mean())
    if n == 1:
        return Interval(mean, math.nan, math.nan)
    s = float(d.std(ddof=1))
    t = float(_sps.t.ppf(0.5 + confidence / 2.0, n - 1))
    half = t * s / math.sqrt(n)
    return Interval(mean, mean - half, mean + half)


def _times_events(
    times: ArrayLike, events: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    t = np.asarray(times, dtype=np.float64)
    e = np.asarray(events)
    if t.ndim != 1 or e.shape != t.shape:
        raise ValueError(f"times and events must be 1-D of equal length, got {t.shape}, {e.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("times must be finite and non-negative")
    return t, e.astype(bool)


def restricted_times(times: ArrayLike, events: ArrayLike, horizon: float) -> NDArray[np.float64]:
    """``min(T_k, H)`` per episode: the time of the event, or ``horizon`` for a censored
    episode (no event within the time limit)."""
    t, e = _times_events(times, events)
    return np.where(e, np.minimum(t, horizon), float(horizon))


def restricted_mean(times: ArrayLike, events: ArrayLike, horizon: float) -> float:
    """Restricted mean time ``E[min(T, H)] = (1/n) sum_k min(T_k, H)``, censored episodes
    counted as ``H``. It equals the area under the survival curve on ``[0, H]``."""
    return float(restricted_times(times, events, horizon).mean())


def event_mean(times: ArrayLike, events: ArrayLike) -> float:
    """Mean time over episodes with an event only (``nan`` if there is none). Conditional on
    a capture, so it is not comparable between agents that capture at different rates."""
    t, e = _times_events(times, events)
    return float(t[e].mean()) if e.any() else math.nan


def survival_curve(
    times: ArrayLike, events: ArrayLike, horizon: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Kaplan-Meier estimate of ``S(t) = P(T > t)`` on ``[0, horizon]`` as a step function.

    With distinct event times ``t_1 < ... < t_m <= horizon``, ``d_j`` events at ``t_j`` and
    ``r_j`` episodes still at risk (time ``>= t_j``)::

        S(t) = prod_{t_j <= t} (1 - d_j / r_j)

    Returns ``(t, s)`` with ``t = [0, t_1, ..., t_m, horizon]`` and ``s = [1, S(t_1), ...,
    S(t_m), S(t_m)]``; ``S`` is constant from each point to the next (plot with
    ``drawstyle="steps-post"``). When every censored episode is censored at ``horizon`` (the
    time limit, as here) ``S(t)`` is simply the fraction of episodes without a capture by
    time ``t``.
    """
    t, e = _times_events(times, events)
    if t.size == 0:
        raise ValueError("times must not be empty")
    if not (math.isfinite(horizon) and horizon > 0):
        raise ValueError(f"horizon must be a positive number, got {horizon!r}")
    ev = t[e & (t <= horizon)]
    uniq, d = np.unique(ev, return_counts=True)
    at_risk = np.array([(t >= u).sum() for u in uniq], dtype=np.float64)
    s = np.cumprod(1.0 - d / at_risk) if uniq.size else np.empty(0)
    grid = np.concatenate(([0.0], uniq, [float(horizon)]))
    last = s[-1] if s.size else 1.0
    surv = np.concatenate(([1.0], s, [last]))
    if uniq.size and uniq[-1] == horizon:  # an event exactly at the horizon: no extra point
        grid, surv = grid[:-1], surv[:-1]
    if uniq.size and uniq[0] == 0.0:
        grid, surv = grid[1:], surv[1:]
    return grid, surv


def survival_median(times: ArrayLike, events: ArrayLike, horizon: float) -> float:
    """Kaplan-Meier median: the first time ``t`` with ``S(t) <= 0.5``, i.e. the earliest time
    by which at least half of the episodes have ended in a capture; ``inf`` if fewer than
    half have by ``horizon`` (the median then lies beyond the time limit)."""
    grid, surv = survival_curve(times, events, horizon)
    below = np.flatnonzero(surv <= 0.5 + 1e-12)
    return float(grid[below[0]]) if below.size else math.inf
