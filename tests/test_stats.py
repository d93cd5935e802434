"""agents.stats against values computed by hand (formulas in the module docstrings) and
against scipy."""

import math

import numpy as np
import pytest

from agents.evaluation import stats

T975_DF3 = 3.182446305284263  # Student t quantile, 0.975, 3 degrees of freedom


def test_wilson_interval_hand_values():
    # k = 8, n = 10, z = 1.96: p = 0.8, z^2/n = 0.38416, denominator 1.38416
    # centre = (0.8 + 0.19208) / 1.38416 = 0.716738
    # half = 1.96 / 1.38416 * sqrt(0.016 + 0.009604) = 0.226580
    p, lo, hi = stats.wilson_interval(8, 10)
    assert p == 0.8
    assert lo == pytest.approx(0.716738 - 0.226580, abs=1e-5)
    assert hi == pytest.approx(0.716738 + 0.226580, abs=1e-5)
    # k = 0: lower bound 0, upper bound z^2/n / (1 + z^2/n) (z = 1.959964, the exact quantile)
    q = 1.959963984540054**2 / 10
    p, lo, hi = stats.wilson_interval(0, 10)
    assert (p, lo) == (0.0, 0.0)
    assert hi == pytest.approx(q / (1 + q), abs=1e-9)
    # symmetric: k = n mirrors k = 0
    _, lo, hi = stats.wilson_interval(10, 10)
    assert hi == 1.0
    assert lo == pytest.approx(1 - q / (1 + q), abs=1e-9)


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


# ------------------------------------------------------------------ against scipy
def test_wilson_interval_is_scipys_wilson():
    from scipy.stats import binomtest

    for k, n in ((0, 1), (3, 7), (8, 10), (250, 500), (499, 500), (1, 10_000)):
        for conf in (0.8, 0.95, 0.99):
            ci = binomtest(k, n).proportion_ci(conf, method="wilson")
            p, lo, hi = stats.wilson_interval(k, n, conf)
            assert p == k / n
            assert lo == pytest.approx(max(0.0, ci.low), abs=1e-12)
            assert hi == pytest.approx(min(1.0, ci.high), abs=1e-12)


def test_paired_difference_is_scipys_ttest_rel_interval():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(1)
    for n in (2, 5, 40):
        a, b = rng.normal(size=n), rng.normal(0.3, size=n)
        for conf in (0.9, 0.95):
            ci = ttest_rel(a, b).confidence_interval(conf)
            m, lo, hi = stats.paired_difference(a, b, conf)
            assert m == pytest.approx(float(np.mean(a - b)))
            assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)


def _product_limit(times, events, at):
    """Kaplan-Meier by its definition, evaluated at ``at`` (independent of the module)."""
    s = 1.0
    for u in sorted(set(t for t, e in zip(times, events, strict=True) if e and t <= at)):
        deaths = sum(1 for t, e in zip(times, events, strict=True) if e and t == u)
        at_risk = sum(1 for t in times if t >= u)
        s *= 1 - deaths / at_risk
    return s


def test_survival_curve_matches_scipy_ecdf_and_the_definition():
    from scipy.stats import CensoredData, ecdf

    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        times = np.round(rng.uniform(0, 12, size=n), 1)
        events = (times < 10) & (rng.random(n) < 0.8)
        times = np.where(times >= 10, 10.0, times)
        grid, surv = stats.survival_curve(times, events, 10.0)
        for x, s in zip(grid, surv, strict=True):
            assert s == pytest.approx(_product_limit(times, events, x), abs=1e-12)
        if events.any():
            sf = ecdf(CensoredData(uncensored=times[events], right=times[~events])).sf
            np.testing.assert_allclose(sf.evaluate(grid[1:]), surv[1:], atol=1e-12)


def test_kaplan_meier_median_rule_start_of_the_half_interval():
    # S = 0.5 exactly on [2, 5): the median is 2 (first t with S(t) <= 0.5), not 3.5
    times, events = [1.0, 2.0, 5.0, 10.0], [True, True, True, False]
    assert stats.survival_median(times, events, 10.0) == 2.0
    # S stays above 0.5 up to the horizon: beyond the time limit
    assert stats.survival_median([1.0, 2.0, 10.0, 10.0, 10.0], [1, 1, 0, 0, 0], 10.0) == math.inf


# ------------------------------------------------------------------ paired proportions
def _table(both, only_a, only_b, neither):
    a = [1] * both + [1] * only_a + [0] * only_b + [0] * neither
    b = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return np.array(a, float), np.array(b, float)


def _exact_coverage(n, probs, interval):
    """Probability over all 2x2 tables of ``n`` pairs (cells drawn with ``probs``: both,
    only a, only b, neither) that ``interval`` contains the true difference."""
    from scipy.stats import multinomial

    delta = probs[1] - probs[2]
    covered = 0.0
    for e in range(n + 1):
        for f in range(n + 1 - e):
            for g in range(n + 1 - e - f):
                cells = (e, f, g, n - e - f - g)
                _, lo, hi = interval(*_table(*cells))
                if lo - 1e-12 <= delta <= hi + 1e-12:
                    covered += multinomial.pmf(cells, n, probs)
    return covered


PAIRED_SETTINGS = [
    (0.3, 0.1, 0.1, 0.5),
    (0.1, 0.05, 0.25, 0.6),
    (0.0, 0.1, 0.3, 0.6),
    (0.45, 0.02, 0.08, 0.45),  # rare discordant pairs: most tables have none
    (0.8, 0.0, 0.1, 0.1),
    (0.9, 0.02, 0.05, 0.03),
]


@pytest.mark.parametrize("probs", PAIRED_SETTINGS)
def test_paired_success_interval_keeps_its_coverage_at_n10(probs):
    # exact coverage (every table of 10 pairs weighed by its probability), not a simulation
    assert _exact_coverage(10, probs, stats.paired_proportion_difference) >= 0.93


def test_paired_t_interval_on_binary_data_undercovers_at_n10():
    # the reason for the paired-proportion interval: the t interval on 0/1 differences is a
    # point when no pair is discordant, and misses the true difference far too often
    worst = min(_exact_coverage(10, p, stats.paired_difference) for p in PAIRED_SETTINGS)
    assert worst < 0.7


def test_paired_proportion_difference_hand_values():
    # no discordant pair of 10: the difference is 0 with a real interval around it
    m, lo, hi = stats.paired_proportion_difference(*_table(5, 0, 0, 5))
    assert m == 0.0 and lo < -0.1 and hi > 0.1
    # every pair discordant one way: -1 is attained, the interval is not a point
    m, lo, hi = stats.paired_proportion_difference(*_table(0, 0, 10, 0))
    assert m == -1.0 and lo == -1.0 and -1.0 < hi < 0.0
    # the n = 10 case (4 of 10 discordant, all one way): inside [-1, 1] and narrower
    # than the t interval's [-0.769, -0.031]
    m, lo4, hi4 = stats.paired_proportion_difference(*_table(2, 0, 4, 4))
    assert m == pytest.approx(-0.4) and -0.769 < lo4 < m < hi4 < 0.0
    # Newcombe's formula with the Wilson limits of scipy, phi = 0 (p1 = 0: no correlation)
    from scipy.stats import binomtest

    _, lo, hi = stats.paired_proportion_difference(*_table(0, 0, 4, 6))
    w1 = binomtest(0, 10).proportion_ci(0.95, method="wilson")
    w2 = binomtest(4, 10).proportion_ci(0.95, method="wilson")
    assert lo == pytest.approx(-0.4 - math.hypot(0.0, w2.high - 0.4), abs=1e-12)
    assert hi == pytest.approx(-0.4 + math.hypot(w1.high, 0.4 - w2.low), abs=1e-12)
    # symmetric: swapping the agents mirrors the interval
    m2, lo2, hi2 = stats.paired_proportion_difference(*reversed(_table(2, 0, 4, 4)))
    assert (m2, lo2, hi2) == pytest.approx((0.4, -hi4, -lo4))
    with pytest.raises(ValueError):
        stats.paired_proportion_difference([0.5, 1.0], [1.0, 0.0])
