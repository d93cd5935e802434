"""Neighbour search: both back ends agree, groups stay separate, the view cone and the
inclusive radius match hand computations, and bad arguments are rejected."""

from __future__ import annotations

import numpy as np
import pytest

from steer_env.neighbors import DENSE_MAX, Neighbors, find_neighbors


def pair_table(nb: Neighbors) -> dict[tuple[int, int], tuple[float, float, float]]:
    """{(i, j): (offset_x, offset_y, distance)}, checking that no pair is repeated."""
    table = {
        (int(i), int(j)): (*o, d)
        for i, j, o, d in zip(nb.i, nb.j, nb.offset, nb.distance, strict=True)
    }
    assert len(table) == len(nb.i), "duplicate pairs"
    return table


def assert_same(a: Neighbors, b: Neighbors) -> None:
    ta, tb = pair_table(a), pair_table(b)
    assert ta.keys() == tb.keys()
    assert a.n_vehicles == b.n_vehicles
    for key, value in ta.items():
        np.testing.assert_allclose(value, tb[key], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(a.count(), b.count())


def brute_force(position, radius):
    """The definition, with plain loops."""
    flat = position.reshape(-1, position.shape[-1])
    n = position.shape[-2]
    out = set()
    for a in range(flat.shape[0]):
        for b in range(flat.shape[0]):
            if a != b and a // n == b // n and np.sum((flat[b] - flat[a]) ** 2) <= radius**2:
                out.add((a, b))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_dense_and_kdtree_agree_on_random_flocks(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    pos = rng.uniform(0, 10, (n, 2))
    radius = float(rng.uniform(0.5, 4.0))
    dense = find_neighbors(pos, radius, method="dense")
    kd = find_neighbors(pos, radius, method="kdtree")
    assert_same(dense, kd)
    assert set(pair_table(dense)) == brute_force(pos, radius)
    flat = pos.reshape(-1, 2)
    np.testing.assert_allclose(dense.offset, flat[dense.j] - flat[dense.i])
    np.testing.assert_allclose(dense.distance, np.hypot(*dense.offset.T))
    assert np.all(dense.i != dense.j)
    assert np.all(dense.distance <= radius)


@pytest.mark.parametrize("seed", range(3))
def test_grouped_input_keeps_groups_apart(seed):
    rng = np.random.default_rng(100 + seed)
    e, n = 7, 25
    # All groups overlap in space: only the grouping keeps them apart.
    pos = rng.uniform(0, 5, (e, n, 2))
    dense = find_neighbors(pos, 1.5, method="dense")
    kd = find_neighbors(pos, 1.5, method="kdtree")
    assert_same(dense, kd)
    assert dense.n_vehicles == e * n
    for nb in (dense, kd):
        np.testing.assert_array_equal(nb.i // n, nb.j // n)
    assert set(pair_table(dense)) == brute_force(pos, 1.5)
    # Same as searching each group alone, with indices shifted by the group's offset.
    for g in range(e):
        alone = find_neighbors(pos[g], 1.5, method="dense")
        mine = dense.i // n == g
        assert set(zip(dense.i[mine] - g * n, dense.j[mine] - g * n, strict=True)) == set(
            zip(alone.i, alone.j, strict=True)
        )


def test_grouped_input_with_more_leading_axes():
    rng = np.random.default_rng(5)
    pos = rng.uniform(0, 3, (2, 3, 10, 2))
    dense = find_neighbors(pos, 1.0, method="dense")
    kd = find_neighbors(pos, 1.0, method="kdtree")
    assert_same(dense, kd)
    np.testing.assert_array_equal(dense.i // 10, dense.j // 10)


def test_radius_is_inclusive_on_a_lattice():
    # Integer lattice: nearest neighbours at exactly 1.0, diagonals at sqrt(2).
    xs, ys = np.meshgrid(np.arange(5.0), np.arange(4.0))
    pos = np.stack((xs.ravel(), ys.ravel()), axis=-1)
    for method in ("dense", "kdtree"):
        nb = find_neighbors(pos, 1.0, method=method)
        np.testing.assert_allclose(nb.distance, 1.0)
        count = nb.count().reshape(4, 5)
        assert count[1, 1] == 4 and count[0, 0] == 2 and count[0, 2] == 3
        assert len(nb.i) == 2 * (4 * 4 + 3 * 5)  # horizontal + vertical links, both ways
    grouped = np.stack((pos, pos + 0.5))
    assert_same(
        find_neighbors(grouped, 1.0, method="dense"), find_neighbors(grouped, 1.0, method="kdtree")
    )


def test_auto_picks_a_back_end_and_matches():
    rng = np.random.default_rng(9)
    small = rng.uniform(0, 10, (DENSE_MAX, 2))
    big = rng.uniform(0, 30, (DENSE_MAX + 50, 2))
    for pos in (small, big):
        assert_same(find_neighbors(pos, 2.0), find_neighbors(pos, 2.0, method="dense"))


def test_view_angle_hand_example():
    # Boid 0 at the origin faces +x. Others: ahead, 45 deg left, 90 deg left, behind,
    # 30 deg right and coincident.
    pos = np.array(
        [
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0],
            [-1.0, 0.0],
            [np.cos(-0.5), np.sin(-0.5)],
            [0.0, 0.0],
        ]
    )
    heading = np.tile([1.0, 0.0], (7, 1))
    for method in ("dense", "kdtree"):
        seen = {
            float(a): set(nb.j[nb.i == 0].tolist())
            for a in (2 * np.pi / 3, 2 * np.pi, 0.5, 1.2)
            for nb in [find_neighbors(pos, 2.0, heading, view_angle=a, method=method)]
        }
        assert seen[2 * np.pi / 3] == {1, 2, 5, 6}  # +-60 deg: ahead, 45 left, 28.6 right
        assert seen[2 * np.pi] == {1, 2, 3, 4, 5, 6}
        assert seen[0.5] == {1, 6}  # +-14 deg: straight ahead and the coincident boid
        assert seen[1.2] == {1, 5, 6}  # +-34.4 deg: ahead, 28.6 right
        # Without a view angle everything within the radius is seen.
        nb = find_neighbors(pos, 2.0, method=method)
        assert set(nb.j[nb.i == 0].tolist()) == {1, 2, 3, 4, 5, 6}


def test_view_angle_is_directional():
    # a faces b; b faces away from a: a sees b, b does not see a.
    pos = np.array([[0.0, 0.0], [1.0, 0.0]])
    heading = np.array([[1.0, 0.0], [1.0, 0.0]])
    nb = find_neighbors(pos, 2.0, heading, view_angle=np.pi)
    assert list(zip(nb.i.tolist(), nb.j.tolist(), strict=True)) == [(0, 1)]
    np.testing.assert_array_equal(nb.count(), [1, 0])


def test_view_angle_backends_agree_on_random_flocks():
    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 8, (4, 60, 2))
    ang = rng.uniform(-np.pi, np.pi, (4, 60))
    heading = np.stack((np.cos(ang), np.sin(ang)), axis=-1)
    for view in (0.3, 2.0, 4.5):
        a = find_neighbors(pos, 2.0, heading, view_angle=view, method="dense")
        b = find_neighbors(pos, 2.0, heading, view_angle=view, method="kdtree")
        assert_same(a, b)
        h = heading.reshape(-1, 2)[a.i]
        cos = (h * a.offset).sum(axis=1) / a.distance
        assert np.all(cos >= np.cos(view / 2) - 1e-12)


def test_count_and_sum_hand_example():
    nb = Neighbors(
        i=np.array([0, 0, 2]),
        j=np.array([1, 2, 0]),
        offset=np.array([[1.0, 0.0], [0.0, 2.0], [0.0, -2.0]]),
        distance=np.array([1.0, 2.0, 2.0]),
        n_vehicles=4,
    )
    np.testing.assert_array_equal(nb.count(), [2, 0, 1, 0])
    np.testing.assert_allclose(nb.sum(nb.offset), [[1.0, 2.0], [0.0, 0.0], [0.0, -2.0], [0, 0]])
    np.testing.assert_allclose(nb.sum(nb.distance), [3.0, 0.0, 2.0, 0.0])
    np.testing.assert_allclose(nb.sum(np.ones((3, 3))), [[2] * 3, [0] * 3, [1] * 3, [0] * 3])
    np.testing.assert_allclose(nb.gather(np.arange(8.0).reshape(4, 2)), [[2, 3], [4, 5], [0, 1]])


def test_no_neighbours():
    for method in ("dense", "kdtree"):
        nb = find_neighbors([[0.0, 0.0], [10.0, 0.0]], 1.0, method=method)
        assert nb.i.shape == (0,) and nb.offset.shape == (0, 2)
        np.testing.assert_array_equal(nb.count(), [0, 0])
        np.testing.assert_array_equal(nb.sum(nb.offset), np.zeros((2, 2)))
        single = find_neighbors([[0.0, 0.0]], 1.0, method=method)
        assert single.n_vehicles == 1 and len(single.i) == 0


@pytest.mark.parametrize("radius", [0.0, -1.0, np.nan, np.inf])
def test_bad_radius(radius):
    with pytest.raises(ValueError, match="radius"):
        find_neighbors(np.zeros((3, 2)), radius)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(method="brute"), "method"),
        (dict(position=np.zeros((3, 3))), "position"),
        (dict(position=np.zeros(2)), "position"),
        (dict(view_angle=1.0), "heading"),
        (dict(view_angle=0.0, heading=np.tile([1.0, 0.0], (3, 1))), "view_angle"),
        (dict(view_angle=7.0, heading=np.tile([1.0, 0.0], (3, 1))), "view_angle"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = dict(position=np.zeros((3, 2)), radius=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        find_neighbors(**args)
