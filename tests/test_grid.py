"""The grids of :mod:`steer_env.engine.grid` give what a pass over every vehicle gives, to
the bit and in the same order: each agent's nearest vehicles, and the flocking rules'
collisions and groups, against references written here in numpy, for flocks of 1 to 256
(below and above ``GRID_MIN``), with ties (vehicles on a lattice, some on one point),
vehicles out of the game and query points outside the grid."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steer_env.engine import grid as grids
from steer_env.engine.egocentric import OTHER_PRESENT, OTHER_WIDTH, SELF_WIDTH
from steer_env.envs import flocking_v0
from steer_env.rules.flocking import BOID
from steer_env.rules.flocking import compiled as flocking

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LAYOUTS = ("lattice", "dense", "spread", "two_clusters")


def _positions(rng, n, layout):
    """``(n, 2)`` positions in the 40 m arena: on a 0.25 m lattice of a 4 m square (many
    equal distances, some vehicles on one point), a dense flock, spread over the arena or
    two flocks far apart."""
    if layout == "lattice":
        return rng.integers(-8, 9, (n, 2)) * 0.25
    if layout == "dense":
        return rng.normal(0.0, 1.5, (n, 2))
    if layout == "spread":
        return rng.uniform(-19.8, 19.8, (n, 2))
    side = np.where(rng.random(n) < 0.5, -15.0, 15.0)
    return rng.normal(0.0, 1.0, (n, 2)) + side[:, None]


def _distance(dx, dy):
    """The engine's distance (:func:`steer_env.core.vecmath.length` on finite, moderate
    offsets)."""
    return np.sqrt(dx * dx + dy * dy)


def _flock(n_boids, n_predators):
    """The vehicle records and the world record of a flocking batch."""
    batch = flocking_v0.vector_env(1, n_boids=n_boids, n_predators=n_predators).batch
    return batch.vehicles, batch.world.record()


# --------------------------------------------------------------------------- nearest
@SETTINGS
@given(
    n=st.integers(1, 256),
    layout=st.sampled_from(LAYOUTS),
    slots=st.integers(1, 12),
    opponents=st.booleans(),
    free_point=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_nearest_in_grid_is_a_pass_over_every_vehicle(
    n, layout, slots, opponents, free_point, seed
):
    rng = np.random.default_rng(seed)
    pos = _positions(rng, n, layout)[None].copy()
    alive = rng.random(n) < rng.uniform(0.3, 1.0)
    team = (rng.random(n) < rng.uniform(0.0, 0.5)).astype(np.int64)  # team 1 often small
    grid = grids.grid_work(n, 2)
    grid.key[:] = np.where(alive, team, -1)
    grids.build(pos, 0, 2, 0.0, grids.NEAREST_PER_CELL, grid)
    # The query: a vehicle (in the game or not) or any point of the arena.
    i = int(rng.integers(n))
    px, py = rng.uniform(-25.0, 25.0, 2) if free_point else pos[0, i]
    skip = -1 if free_point else i
    dist = np.zeros(n)
    order = np.zeros(n, dtype=np.int64)
    count = 0
    for t in range(2):
        if (t != team[i]) == opponents:
            count = grids.nearest_in_grid(pos, 0, grid, t, skip, px, py, slots, dist, order, count)
    others = (team != team[i]) if opponents else (team == team[i])
    j = np.flatnonzero(alive & others & (np.arange(n) != skip))
    d = _distance(pos[0, j, 0] - px, pos[0, j, 1] - py)
    ranked = np.lexsort((j, d))[:slots]  # nearest first, ties: the lower index
    assert count == len(ranked)
    assert order[:count].tolist() == j[ranked].tolist()
    assert dist[:count].tolist() == d[ranked].tolist()


def test_a_grid_covers_its_vehicles_cell_by_cell():
    rng = np.random.default_rng(0)
    for layout in LAYOUTS:
        pos = _positions(rng, 200, layout)[None].copy()
        grid = grids.grid_work(200, 2)
        grid.key[:] = rng.integers(-1, 2, 200)
        grids.build(pos, 0, 2, 0.5, 0.0, grid)
        for t in range(2):
            x0, y0, size, inv = grid.geometry[t]
            nx, ny, first, count = grid.shape[t]
            members = np.flatnonzero(grid.key == t)
            assert count == len(members) and size >= 0.5 and inv == 1.0 / size
            assert nx * ny <= grids.max_cells(count, 1)
            held = grid.items[grid.start[first] : grid.start[first + nx * ny]]
            assert sorted(held.tolist()) == members.tolist()
            for c in range(first, first + nx * ny):
                inside = grid.items[grid.start[c] : grid.start[c + 1]]
                assert np.all(np.diff(inside) > 0) and np.all(grid.cell[inside] == c)
                ix, iy = (c - first) % nx, (c - first) // nx
                x = pos[0, inside, 0]
                y = pos[0, inside, 1]
                assert np.all((x >= x0 + ix * size - 1e-9) & (x <= x0 + (ix + 1) * size + 1e-9))
                assert np.all((y >= y0 + iy * size - 1e-9) & (y <= y0 + (iy + 1) * size + 1e-9))


# --------------------------------------------------------------------------- observations
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_boids=st.sampled_from([5, 31, 40, 256]),
    n_predators=st.integers(0, 3),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_observed_slots_are_the_nearest_in_the_game_ties_to_the_lower_index(
    n_boids, n_predators, layout, seed
):
    """Every boid's observation: its boid and predator slots hold the nearest of each in
    the game, by distance then index (on a 0.25 m lattice many are equally far)."""
    rng = np.random.default_rng(seed)
    venv = flocking_v0.vector_env(1, n_boids=n_boids, n_predators=n_predators)
    venv.reset(seed=0)
    batch = venv.batch
    n = batch.n_vehicles
    state = batch.state
    state.position[0] = _positions(rng, n, layout)
    state.velocity[0] = rng.uniform(-1.0, 1.0, (n, 2))
    state.alive[0] = rng.random(n) < 0.8
    obs = batch.observe()[0]
    team = batch.vehicles["team"]
    pos, vel, head = state.position[0], state.velocity[0], state.heading[0]
    near = batch.world.observation_range
    k_boids, k_predators = batch.world.observed_teammates, batch.world.observed_opponents
    for a, i in enumerate(batch.agent_index):
        base = SELF_WIDTH
        for want, slots in ((team[i], k_boids), (1 - team[i], k_predators)):
            j = np.flatnonzero(state.alive[0] & (team == want) & (np.arange(n) != i))
            d = _distance(pos[j, 0] - pos[i, 0], pos[j, 1] - pos[i, 1])
            nearest = j[np.lexsort((j, d))[:slots]]
            rows = obs[a, base : base + OTHER_WIDTH * slots].reshape(slots, OTHER_WIDTH)
            assert rows[:, OTHER_PRESENT].tolist() == [1.0] * len(nearest) + [0.0] * (
                slots - len(nearest)
            )
            offset = pos[nearest] - pos[i]
            h = head[i]
            # Slot positions are in the near field: offset / (observation_range + distance).
            scale = near + _distance(offset[:, 0], offset[:, 1])
            forward = (offset @ h) / scale
            side = (offset[:, 1] * h[0] - offset[:, 0] * h[1]) / scale
            np.testing.assert_allclose(rows[: len(nearest), 0], forward, atol=1e-6)
            np.testing.assert_allclose(rows[: len(nearest), 1], side, atol=1e-6)
            moving = (vel[nearest] - vel[i]) @ h / batch.vehicles["speed_scale"][i]
            np.testing.assert_allclose(rows[: len(nearest), 2], np.clip(moving, -1, 1), atol=1e-6)
            assert not rows[len(nearest) :].any()
            base += OTHER_WIDTH * slots


# --------------------------------------------------------------------------- flocking rules
def _swept(before, after, p, q):
    """The closest approach of vehicles ``p`` and ``q`` moving linearly from ``before`` to
    ``after`` (``(n, 2)`` each), written as the engine's swept test is."""
    r0x = before[q, 0] - before[p, 0]
    r0y = before[q, 1] - before[p, 1]
    dx = (after[q, 0] - after[p, 0]) - r0x
    dy = (after[q, 1] - after[p, 1]) - r0y
    dd = dx * dx + dy * dy
    t = -(r0x * dx + r0y * dy) / dd if dd > 1e-18 else 0.0
    t = min(max(t, 0.0), 1.0)
    return float(_distance(r0x + dx * t, r0y + dy * t))


@SETTINGS
@given(
    n_boids=st.integers(1, 256),
    n_predators=st.integers(0, 2),
    layout=st.sampled_from(LAYOUTS),
    move=st.sampled_from([0.0, 0.05, 0.3, 2.0]),
    radius=st.sampled_from([0.0, 0.1, 0.2, 0.6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_contacts_are_those_of_every_pair(n_boids, n_predators, layout, move, radius, seed):
    rng = np.random.default_rng(seed)
    vehicles, _ = _flock(n_boids, n_predators)
    vehicles = vehicles.copy()
    vehicles["radius"] = radius * rng.uniform(0.5, 1.0, len(vehicles))
    n = len(vehicles)
    after = _positions(rng, n, layout)
    before = after + rng.uniform(-move, move, (n, 2))
    alive = rng.random(n) < rng.uniform(0.5, 1.0)
    touched = np.full(n, 7.0)
    grid = grids.grid_work(n, 2)
    count, closest = flocking.contacts(
        np.ascontiguousarray(before[:, :, None]),
        0,
        after[None].copy(),
        alive[None].copy(),
        vehicles,
        0,
        touched,
        grid,
    )
    boids = np.flatnonzero(alive & (vehicles["team"] == BOID))
    want = np.zeros(n)
    least = np.inf
    for s, p in enumerate(boids):
        for q in boids[s + 1 :]:
            d = _swept(before, after, p, q)
            least = min(least, d)
            if d <= vehicles["radius"][p] + vehicles["radius"][q]:
                want[p] = want[q] = 1.0
    assert touched.tolist() == want.tolist()
    assert count == int(want.sum())
    assert closest == least


@pytest.mark.parametrize("spacing", [1.0, 5.0])
def test_a_sparse_flock_finds_its_least_separation_beyond_the_grid_cells(spacing):
    """48 boids on a lattice of ``spacing`` m, standing still: no pair touches, and the
    least separation (farther than any pair of neighbouring cells reaches) is the
    spacing, as every pair measures it."""
    vehicles, _ = _flock(48, 1)
    n = len(vehicles)
    x, y = np.meshgrid(np.arange(8.0), np.arange(6.0))
    pos = np.zeros((n, 2))
    pos[:48] = np.stack([x.ravel(), y.ravel()], axis=1) * spacing - (16.0, 12.0)
    pos[48] = (18.0, 18.0)
    touched = np.zeros(n)
    count, closest = flocking.contacts(
        np.ascontiguousarray(pos[:, :, None]),
        0,
        pos[None].copy(),
        np.ones((1, n), dtype=bool),
        vehicles,
        0,
        touched,
        grids.grid_work(n, 2),
    )
    assert count == 0 and not touched.any()
    assert closest == spacing


def _components(pos, members, link):
    """The connected components of ``members`` (centres at most ``link`` apart linked),
    by a breadth-first search over the matrix of distances."""
    p = pos[members]
    d = _distance(p[:, None, 0] - p[None, :, 0], p[:, None, 1] - p[None, :, 1])
    seen = np.zeros(len(members), dtype=bool)
    sizes = []
    for s in range(len(members)):
        if seen[s]:
            continue
        seen[s] = True
        todo, size = deque([s]), 0
        while todo:
            u = todo.popleft()
            size += 1
            for v in np.flatnonzero((d[u] <= link) & ~seen):
                seen[v] = True
                todo.append(v)
        sizes.append(size)
    return sizes


@SETTINGS
@given(
    n_boids=st.integers(1, 256),
    n_predators=st.integers(0, 2),
    layout=st.sampled_from(LAYOUTS),
    link=st.sampled_from([0.25, 0.5, 0.7, 2.5, 6.0]),
    in_goal=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_groups_are_the_connected_components_of_the_links(
    n_boids, n_predators, layout, link, in_goal, seed
):
    """Lattice links of 0.25, 0.5 and 2.5 m put pairs exactly at the link distance."""
    rng = np.random.default_rng(seed)
    vehicles, world = _flock(n_boids, n_predators)
    world = world.copy()
    world["link_distance"] = link
    world["route_length"] = 0.0  # the goal region around the origin, where the flocks are
    n = len(vehicles)
    pos = _positions(rng, n, layout)[None].copy()
    alive = (rng.random(n) < rng.uniform(0.5, 1.0))[None].copy()
    parent = np.zeros(n, dtype=np.int64)
    size = np.zeros(n)
    got = flocking.groups(
        pos, alive, vehicles, world[0], 0, in_goal, parent, size, grids.grid_work(n, 2)
    )
    members = alive[0] & (vehicles["team"] == BOID)
    if in_goal:
        members &= _distance(pos[0, :, 0], pos[0, :, 1]) <= world["goal_radius"][0]
    sizes = _components(pos[0], np.flatnonzero(members), link)
    assert got == (int(members.sum()), max(sizes, default=0), sizes.count(1))


@pytest.mark.parametrize("n_boids", [8, 200])
def test_the_hunters_catch_each_boid_they_reach(n_boids):
    """Every boid that a predator in the game comes within the catch radius of (swept)
    leaves the game, whatever the flock's size."""
    rng = np.random.default_rng(1)
    venv = flocking_v0.vector_env(1, n_boids=n_boids, n_predators=3)
    venv.reset(seed=0)
    batch = venv.batch
    n = batch.n_vehicles
    before = rng.uniform(-1.5, 1.5, (n, 2))
    after = before + rng.uniform(-0.3, 0.3, (n, 2))
    state = batch.state
    state.position[0] = after
    state.alive[0] = True
    state.alive[0, -1] = False  # a predator out of the game catches nobody
    hunters = np.zeros(n, dtype=np.int64)
    caught = flocking.catch(
        np.ascontiguousarray(before[:, :, None]),
        0,
        state,
        batch.vehicles,
        batch.world.record()[0],
        0,
        5,
        hunters,
    )
    team = batch.vehicles["team"]
    predators = np.flatnonzero(team != BOID)[:-1]
    reached = [
        i
        for i in np.flatnonzero(team == BOID)
        if any(_swept(before, after, i, p) <= batch.world.catch_radius for p in predators)
    ]
    assert caught == len(reached) > 0
    assert np.flatnonzero(~state.alive[0, team == BOID]).tolist() == reached
    assert (state.capture_step[0, reached] == 5).all()
