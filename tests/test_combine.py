"""Combining steering forces: weighted sum, prioritized running sum, prioritized dithering."""

from __future__ import annotations

import numpy as np
import pytest

from steer_env import combine


def norm(a):
    return np.hypot(a[..., 0], a[..., 1])


def must_not_be_called():
    raise AssertionError("a force was evaluated although the budget was spent")


# --- weighted_sum
def test_weighted_sum_hand_example():
    forces = [np.array([1.0, 0.0]), np.array([0.0, 2.0])]
    np.testing.assert_allclose(combine.weighted_sum(forces, [2.0, 0.5], 10.0), [2.0, 1.0])
    # Truncated to max_force along the sum's direction.
    np.testing.assert_allclose(
        combine.weighted_sum(forces, [2.0, 0.5], 1.0), np.array([2.0, 1.0]) / np.sqrt(5.0)
    )
    # Per vehicle, with callables and broadcasting of a shared force.
    out = combine.weighted_sum(
        [lambda: np.array([[1.0, 0.0], [0.0, 3.0]]), np.array([1.0, 1.0])],
        [1.0, -1.0],
        np.array([5.0, 1.0]),
    )
    np.testing.assert_allclose(out, [[0.0, -1.0], [-1.0, 2.0] / np.sqrt(5.0)])


# --- prioritized
def test_prioritized_hand_example():
    max_force = np.array([5.0, 5.0, 5.0])
    f1 = np.array([[3.0, 0.0], [10.0, 0.0], [3.0, 0.0]])
    f2 = np.array([[0.0, 10.0], [0.0, 10.0], [0.0, 1.0]])
    f3 = np.array([[7.0, 7.0], [7.0, 7.0], [0.0, 10.0]])
    out = combine.prioritized([f1, f2, f3], [1.0, 1.0, 1.0], max_force)
    # The budget applies to the length of the running sum (Buckland's AccumulateForce):
    # Vehicle 0: f1 whole (budget left 5 - 3 = 2), f2 cut to (0, 2); the sum (3, 2) is only
    #   sqrt(13) long, so f3 is cut to the 5 - sqrt(13) left, along (1, 1) / sqrt(2).
    # Vehicle 1: f1 alone fills the budget, cut to (5, 0): f2 and f3 ignored.
    # Vehicle 2: f1 whole, f2 whole (it fits), f3 cut to the budget left, 5 - |(3, 1)|.
    c0 = (5.0 - np.sqrt(13.0)) / np.sqrt(2.0)
    left2 = 5.0 - np.sqrt(10.0)
    np.testing.assert_allclose(out, [[3.0 + c0, 2.0 + c0], [5.0, 0.0], [3.0, 1.0 + left2]])
    # Weights scale each force before it is accumulated.
    out = combine.prioritized([f1[:1], f2[:1]], [0.5, 0.1], 5.0)
    np.testing.assert_allclose(out, [[1.5, 1.0]])


def test_prioritized_skips_callables_once_the_budget_is_spent():
    calls = []

    def lower():
        calls.append(1)
        return np.array([[0.0, 1.0], [3.0, 0.0]])

    full = np.array([[9.0, 0.0], [0.0, -9.0]])
    out = combine.prioritized([full, must_not_be_called], [1.0, 1.0], 2.0)
    np.testing.assert_allclose(out, [[2.0, 0.0], [0.0, -2.0]])
    # One vehicle still has budget: the callable is evaluated (once); it fills the budget
    # of that vehicle too ((1, 0) + (3, 0) cut to (1, 0)), so the third is skipped.
    partial = np.array([[9.0, 0.0], [1.0, 0.0]])
    out = combine.prioritized([partial, lower, must_not_be_called], [1.0, 1.0, 1.0], 2.0)
    assert calls == [1]
    np.testing.assert_allclose(out, [[2.0, 0.0], [2.0, 0.0]])
    # Zero budget from the start (max_force 0): only the first force is looked at.
    out = combine.prioritized([full, must_not_be_called], [1.0, 1.0], 0.0)
    np.testing.assert_array_equal(out, 0.0)


def test_prioritized_never_exceeds_max_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 6))
        n = 50
        forces = [rng.normal(size=(n, 2)) * 10.0 ** rng.uniform(-2, 3, (n, 1)) for _ in range(k)]
        weights = rng.uniform(0, 3, k)
        max_force = 10.0 ** rng.uniform(-2, 2, n)
        out = combine.prioritized(forces, weights, max_force)
        assert np.all(norm(out) <= max_force * (1 + 1e-12))
        # The first force is always honoured up to the budget.
        first = weights[0] * forces[0]
        fits = norm(first) <= max_force
        if k == 1:
            np.testing.assert_allclose(out[fits], first[fits])
        # And the result matches a straightforward per-vehicle loop (Buckland's AccumulateForce).
        for v in range(0, n, 7):
            total = np.zeros(2)
            for f, w in zip(forces, weights, strict=True):
                left = max_force[v] - np.hypot(*total)
                if left <= 1e-12:
                    break
                add = w * f[v]
                size = np.hypot(*add)
                total = total + (add if size <= left else add / size * left)
            np.testing.assert_allclose(out[v], total, rtol=1e-9, atol=1e-12 * max_force[v])


def test_weighted_sum_never_exceeds_max_force():
    rng = np.random.default_rng(1)
    forces = [rng.normal(size=(100, 2)) * 100 for _ in range(3)]
    max_force = rng.uniform(0.1, 50, 100)
    out = combine.weighted_sum(forces, [1.0, 2.0, 0.5], max_force)
    assert np.all(norm(out) <= max_force * (1 + 1e-12))


# --- dithered
def test_dithered_with_certain_probabilities_takes_the_first_nonzero_force():
    f1 = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    f2 = np.array([[0.0, 2.0], [0.0, 2.0], [0.0, 0.0]])
    rng = np.random.default_rng(0)
    out = combine.dithered([f1, f2], [1.0, 3.0], [1.0, 1.0], 10.0, rng)
    # Vehicle 0: f1 is zero -> f2 * 3; vehicle 1: f1 wins; vehicle 2: nothing -> zero.
    np.testing.assert_allclose(out, [[0.0, 6.0], [1.0, 0.0], [0.0, 0.0]])
    out = combine.dithered([f1, f2], [1.0, 3.0], [1.0, 1.0], 4.0, rng)
    np.testing.assert_allclose(out, [[0.0, 4.0], [1.0, 0.0], [0.0, 0.0]])  # truncated


def test_dithered_is_deterministic_for_a_seed():
    rng = np.random.default_rng(5)
    forces = [rng.normal(size=(500, 2)) for _ in range(3)]
    args = (forces, [1.0, 2.0, 3.0], [0.2, 0.5, 0.9], 100.0)
    a = combine.dithered(*args, np.random.default_rng(42))
    b = combine.dithered(*args, np.random.default_rng(42))
    c = combine.dithered(*args, np.random.default_rng(43))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_dithered_selection_frequency_matches_the_probability():
    n, p = 10_000, 0.3
    first = np.tile([1.0, 0.0], (n, 1))
    second = np.tile([0.0, 1.0], (n, 1))
    out = combine.dithered([first, second], [1.0, 1.0], [p, 1.0], 10.0, np.random.default_rng(7))
    chose_first = out[:, 0] != 0
    # Winners of the first behaviour get weight / probability, the others the second force.
    np.testing.assert_allclose(out[chose_first, 0], 1.0 / p)
    np.testing.assert_array_equal(out[chose_first, 1], 0.0)
    np.testing.assert_array_equal(out[~chose_first], np.tile([0.0, 1.0], ((~chose_first).sum(), 1)))
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(chose_first.mean() - p) < 3 * sigma
    # Dividing by the probability keeps the expected contribution equal to the weighted force.
    assert abs(out[:, 0].mean() - 1.0) < 3 * sigma / p


def test_dithered_with_no_winner_gives_zero():
    f = np.tile([1.0, 0.0], (2000, 1))
    out = combine.dithered([f], [1.0], [0.25], 10.0, np.random.default_rng(3))
    zero = norm(out) == 0
    assert 0.7 < zero.mean() < 0.8


# --- bad arguments
@pytest.mark.parametrize("probabilities", [[0.0, 1.0], [-0.1, 1.0], [1.5, 1.0], [np.nan, 1.0]])
def test_dithered_rejects_bad_probabilities(probabilities):
    with pytest.raises(ValueError, match="probabilit"):
        combine.dithered(
            [np.zeros(2), np.zeros(2)], [1.0, 1.0], probabilities, 1.0, np.random.default_rng(0)
        )


def test_length_mismatches_raise():
    forces = [np.zeros(2), np.zeros(2)]
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="weight"):
        combine.weighted_sum(forces, [1.0], 1.0)
    with pytest.raises(ValueError, match="weight"):
        combine.prioritized(forces, [1.0, 1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="weight"):
        combine.dithered(forces, [1.0], [1.0, 1.0], 1.0, rng)
    with pytest.raises(ValueError, match="probabilit"):
        combine.dithered(forces, [1.0, 1.0], [1.0], 1.0, rng)
    for fn in (combine.weighted_sum, combine.prioritized):
        with pytest.raises(ValueError, match="at least one force"):
            fn([], [], 1.0)
    with pytest.raises(ValueError, match="at least one force"):
        combine.dithered([], [], [], 1.0, rng)
