"""agents.stats against values computed by hand (formulas in the module docstrings)."""

import math

import numpy as np
import pytest

from agents import stats

T975_DF3 = 3.182446305284263  # Student t quantile, 0.975, 3 degrees of freedom


def test_wilson_interval_hand_values():
    # k = 8, n = 10, z = 1.96: p = 0.8, z^2/n = 0.38416, denominator 1.38416
    # centre = (0.8 + 0.19208) / 1.38416 = 0.716738
    # half = 1.96 / 1.38416 * sqrt(0.016 + 0.009604) = 0.226580
    p, lo, hi = stats.wilson_interval(8, 10)
    assert p == 0.8
    assert lo == pytest.approx(0.716738 - 0.226580, abs=1e-5)
    assert hi == pytest.approx(0.716738 + 0.226580, abs=1e-5)
    # k = 0: lower bound 0, upper bound z^2/n / (1 + z^2/n) = 0.38416 / 1.38416
    p, lo, hi = stats.wilson_interval(0, 10)
    assert (p, lo) == (0.0, 0.0)
    assert hi == pytest.approx(0.38416 / 1.38416, abs=1e-9)
    # symmetric: k = n mirrors k = 0
    _, lo, hi = stats.wilson_interval(10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(1 - 0.38416 / 1.38416, abs=1e-9)


def test_wilson_interval_rejects_bad_input():
    for args in ((11, 10), (-1, 10), (0, 0), (1.5, 10)):
        with pytest.raises(ValueError):
            stats.wilson_interval(*args)


def test_paired_difference_hand_values():
    # d = a - b = [1, 0, 0, 1]: mean 0.5, s = sqrt(4 * 0.25 / 3) = sqrt(1/3)
    mean, lo, hi = stats.paired_difference([1, 1, 0, 1], [0, 1, 0, 0])
    half = T975_DF3 * math.sqrt(1 / 3) / 2
    assert mean == 0.5
    assert lo == pytest.approx(0.5 - half, abs=1e-9)
    assert hi == pytest.approx(0.5 + half, abs=1e-9)
    # no spread: the interval is the point
    assert tuple(stats.paired_difference([2.0, 3.0], [1.0, 2.0])) == (1.0, 1.0, 1.0)
    # one pair: no interval
    m, lo, hi = stats.paired_difference([1.0], [0.0])
    assert m == 1.0 and math.isnan(lo) and math.isnan(hi)
    # large n: the t interval is the normal one
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=2000), rng.normal(size=2000)
    d = a - b
    m, lo, hi = stats.paired_difference(a, b)
    assert hi - m == pytest.approx(1.96 * d.std(ddof=1) / math.sqrt(2000), rel=2e-3)
    with pytest.raises(ValueError):
        stats.paired_difference([1, 2], [1])


def test_restricted_and_event_means():
    times = [2.0, 5.0, 99.0, 3.0]  # the 3rd and 4th are censored (no capture)
    events = [True, True, False, False]
    np.testing.assert_allclose(stats.restricted_times(times, events, 10.0), [2, 5, 10, 10])
    assert stats.restricted_mean(times, events, 10.0) == 6.75
    assert stats.event_mean(times, events) == 3.5
    assert math.isnan(stats.event_mean([1.0], [False]))


def test_survival_curve_kaplan_meier_hand_values():
    # events at 1, 2, 2, 4; one censored at 3 (mid-way) and one at the horizon 10
    # S(1) = 5/6; S(2) = 5/6 * (1 - 2/5) = 1/2; S(4) = 1/2 * (1 - 1/2) = 1/4
    t, s = stats.survival_curve([1, 2, 2, 3, 4, 10], [1, 1, 1, 0, 1, 0], 10.0)
    np.testing.assert_allclose(t, [0, 1, 2, 4, 10])
    np.testing.assert_allclose(s, [1, 5 / 6, 1 / 2, 1 / 4, 1 / 4])
    assert stats.survival_median([1, 2, 2, 3, 4, 10], [1, 1, 1, 0, 1, 0], 10.0) == 2.0


def test_survival_curve_is_fraction_free_with_horizon_censoring():
    times = np.array([1.0, 2.0, 3.0, 10.0, 10.0])
    events = np.array([1, 1, 1, 0, 0], dtype=bool)
    t, s = stats.survival_curve(times, events, 10.0)
    np.testing.assert_allclose(t, [0, 1, 2, 3, 10])
    np.testing.assert_allclose(s, [1, 0.8, 0.6, 0.4, 0.4])
    for x in (0.5, 1.0, 2.5, 9.9):  # S(x) = fraction not captured by x
        assert s[np.searchsorted(t, x, side="right") - 1] == pytest.approx(
            np.mean(~(events & (times <= x)))
        )
    assert stats.survival_median(times, events, 10.0) == 3.0
    # fewer than half captured: the median lies beyond the horizon
    assert stats.survival_median([1.0, 10, 10], [1, 0, 0], 10.0) == math.inf
    # a capture exactly at the horizon ends the curve there
    t, s = stats.survival_curve([10.0], [True], 10.0)
    np.testing.assert_allclose(t, [0, 10])
    np.testing.assert_allclose(s, [1, 0])
    # restricted mean = area under the survival curve
    t, s = stats.survival_curve(times, events, 10.0)
    area = float(np.sum(np.diff(t) * s[:-1]))
    assert area == pytest.approx(stats.restricted_mean(times, events, 10.0))
