"""Statistics for comparing agents on paired, seeded episodes (pure numpy/scipy functions).

Notation: ``n`` episodes; episode ``k`` ends either with a capture at time ``T_k`` (an
*event*) or at the time limit ``H`` without one (*censored*: all we know is ``T_k > H``).
Times are in seconds (capture step times ``dt``). The only censoring in these tasks is the
time limit, so every censored episode is censored exactly at ``H``.

The intervals and the survival curve come from scipy (``binomtest(...).proportion_ci``,
``ttest_rel(...).confidence_interval``, ``ecdf`` on censored data); the paired-proportion
interval, which scipy lacks, is built from scipy's Wilson intervals.

* :func:`wilson_interval` -- confidence interval of a success rate.
* :func:`paired_proportion_difference` -- difference of two success rates on the same
  episodes, Newcombe's interval for paired proportions.
* :func:`paired_difference` -- mean of per-episode differences ``a_k - b_k`` of a continuous
  measure with the paired t interval.
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
    "paired_proportion_difference",
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


def _check_confidence(confidence: float) -> float:
    if not (isinstance(confidence, float | int) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion ``p = successes / n``, computed by
    :func:`scipy.stats.binomtest` (``proportion_ci(method="wilson")``).

    With ``p = k / n`` and ``z`` the normal quantile of ``(1 + confidence) / 2``::

        centre = (p + z^2 / (2 n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
        CI     = [centre - half, centre + half]

    Unlike the Wald interval it stays inside [0, 1] and keeps close to nominal coverage for
    ``p`` near 0 or 1 (Wilson 1927; Brown, Cai and DasGupta 2001). Returns
    ``Interval(p, lo, hi)``.
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if int(successes) != successes or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n={n}], got {successes!r}")
    confidence = _check_confidence(confidence)
    ci = _sps.binomtest(int(successes), int(n)).proportion_ci(confidence, method="wilson")
    return Interval(successes / n, max(0.0, float(ci.low)), min(1.0, float(ci.high)))


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-D arrays of equal length, got {x.shape}, {y.shape}")
    if x.size == 0:
        raise ValueError("a and b must not be empty")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a and b must be finite")
    return x, y


def mean_interval(a: ArrayLike, confidence: float = 0.95) -> Interval:
    """Mean of a continuous per-episode measure with its t interval (the paired interval
    of :func:`paired_difference` against zero: ``mean -/+ t * sd / sqrt(n)``)."""
    x = np.asarray(a, dtype=np.float64)
    return paired_difference(x, np.zeros_like(x), confidence)


def paired_difference(a: ArrayLike, b: ArrayLike, confidence: float = 0.95) -> Interval:
    """Mean paired difference ``mean(a - b)`` of a continuous measure (times) over the same
    episodes, with the paired t interval of :func:`scipy.stats.ttest_rel`.

    With ``d_k = a_k - b_k`` (``k = 1..n``, the same seeded episode for both agents)::

        CI = mean(d) -/+ t_{n-1, (1 + confidence) / 2} * sd(d) / sqrt(n)

    For 0/1 outcomes use :func:`paired_proportion_difference` instead: the t interval is
    poor for binary data at small ``n``. With ``sd(d) = 0`` the interval is the point
    ``[mean, mean]``; with ``n = 1`` its bounds are ``nan``.
    """
    x, y = _pair(a, b)
    confidence = _check_confidence(confidence)
    d = x - y
    mean = float(d.mean())
    if d.size == 1:
        return Interval(mean, math.nan, math.nan)
    if float(d.std(ddof=1)) == 0.0:  # scipy returns nan for a constant difference
        return Interval(mean, mean, mean)
    ci = _sps.ttest_rel(x, y).confidence_interval(confidence)
    return Interval(mean, float(ci.low), float(ci.high))


def paired_proportion_difference(a: ArrayLike, b: ArrayLike, confidence: float = 0.95) -> Interval:
    """Difference of two success rates measured on the same episodes, ``mean(a) - mean(b)``
    for 0/1 outcomes, with Newcombe's hybrid score interval for paired proportions (Newcombe
    1998, "Improved confidence intervals for the difference between binomial proportions
    based on paired data", method 10).

    With the 2x2 table of the ``n`` pairs -- ``e`` both succeed, ``f`` only ``a``, ``g``
    only ``b``, ``h`` neither -- ``p1 = (e + f) / n``, ``p2 = (e + g) / n``, ``D = p1 - p2``,
    ``[l1, u1]`` and ``[l2, u2]`` the Wilson intervals of ``p1`` and ``p2``
    (:func:`wilson_interval`) and ``phi`` the correlation of the pairs::

        phi = max(e h - f g - n / 2, 0) / sqrt((e + f)(g + h)(e + g)(f + h))   if e h > f g
              (e h - f g) / sqrt((e + f)(g + h)(e + g)(f + h))                  otherwise
              0 when the denominator is 0
        lo  = D - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
        hi  = D + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)

    The interval always lies inside [-1, 1] and keeps close to nominal coverage for small
    ``n`` and rates near 0 or 1, where the paired t (Wald) interval on 0/1 differences is
    too narrow (for 4 discordant pairs all in one direction out of 10 it excludes 0 although
    the exact McNemar test gives p = 0.125).
    """
    x, y = _pair(a, b)
    if not (np.all((x == 0) | (x == 1)) and np.all((y == 0) | (y == 1))):
        raise ValueError("a and b must hold 0/1 outcomes")
    confidence = _check_confidence(confidence)
    n = x.size
    both = int(np.sum((x == 1) & (y == 1)))
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    neither = n - both - only_a - only_b
    p1, l1, u1 = wilson_interval(both + only_a, n, confidence)
    p2, l2, u2 = wilson_interval(both + only_b, n, confidence)
    diff = p1 - p2
    denom = math.sqrt(
        float(both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    )
    cross = both * neither - only_a * only_b
    if denom == 0.0:
        phi = 0.0
    elif cross > 0:
        phi = max(cross - n / 2.0, 0.0) / denom
    else:
        phi = cross / denom
    lo_sq = (p1 - l1) ** 2 - 2.0 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    hi_sq = (u1 - p1) ** 2 - 2.0 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    lo = diff - math.sqrt(max(lo_sq, 0.0))
    hi = diff + math.sqrt(max(hi_sq, 0.0))
    return Interval(diff, max(-1.0, lo), min(1.0, hi))


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
    """Kaplan-Meier estimate of ``S(t) = P(T > t)`` on ``[0, horizon]`` as a step function
    (computed by :func:`scipy.stats.ecdf` on :class:`scipy.stats.CensoredData`).

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
    # scipy's Kaplan-Meier estimator; its support also lists censoring times (where S does
    # not change), so S is read back at the distinct event times only.
    ev = t[e & (t <= horizon)]
    uniq = np.unique(ev)
    if uniq.size:
        data = _sps.CensoredData(uncensored=t[e], right=t[~e])
        s = np.asarray(_sps.ecdf(data).sf.evaluate(uniq), dtype=np.float64)
    else:
        s = np.empty(0)
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
    by which at least half of the episodes have ended in a capture.

    Rule, stated because software differs: when ``S`` equals 0.5 exactly over an interval
    (``[t_j, t_{j+1})``) the median is the *start* of that interval, ``t_j`` (the smallest
    ``t`` with ``S(t) <= 0.5``), not the midpoint ``(t_j + t_{j+1}) / 2`` that some packages
    report. ``inf`` if ``S`` stays above 0.5 up to ``horizon``: fewer than half of the
    episodes end in a capture within the time limit, so the median lies beyond it."""
    grid, surv = survival_curve(times, events, horizon)
    below = np.flatnonzero(surv <= 0.5 + 1e-12)
    return float(grid[below[0]]) if below.size else math.inf
