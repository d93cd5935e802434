"""A uniform grid over the vehicles of one environment, for the searches whose cost would
otherwise grow with the square of the vehicles: each learned agent's nearest vehicles
(:func:`steer_env.engine.step.observe_egocentric`) and a task's pairs within a distance
(the flocking rules' collisions and groups).

:func:`build` sorts the vehicles it is given a key for (a team code, say; ``-1``: left
out) into one grid per key, cell by cell (a counting sort). Each key's grid covers the
bounding box of its vehicles with square cells of a size the caller bounds from below (the
distance a pair search needs) and from the density (vehicles per cell), and never more
cells than :data:`CELLS_PER_VEHICLE` per vehicle, so a build costs a pass over the vehicles
and the cells however they are spread.

The searches give exactly what a pass over every vehicle gives, ties included: a vehicle's
cell is ``floor((x - x0) / size)``, a monotone function of its position, so a vehicle
outside the cells searched is at least as far as their edge (less :func:`margin`, a bound
on the rounding of those sums); a search stops or skips cells only on that bound.

Working space: :class:`Grid` (:func:`grid_work`), made once by the caller, as every array
the compiled stages use.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from steer_env.core.jit import engine_inline_kernel, engine_kernel
from steer_env.core.vecmath import length

#: At most this many cells per vehicle of a key (plus a row): bounds the cells a build
#: clears and a sparse grid's cells, however far apart the vehicles are.
CELLS_PER_VEHICLE = 16
#: Up to this many vehicles per environment the searches pass over every vehicle (building
#: a grid costs more than it saves).
GRID_MIN = 32
#: A key with at most this many vehicles is searched by a pass over them, not cell by cell
#: (a few predators far from the agent: the rings would cross every empty cell to them).
LINEAR_MAX = 16
#: Vehicles per cell :func:`nearest_in_grid`'s grids aim at (square cells over the key's
#: bounding box).
NEAREST_PER_CELL = 2.0
#: A pair search (:func:`forward_cells`) looks this many cells away at most: its cells must
#: be at least ``distance / PAIR_REACH`` m.
PAIR_REACH = 2

# Columns of Grid.geometry and Grid.shape.
X0, Y0, SIZE, INV = 0, 1, 2, 3
NX, NY, FIRST, COUNT = 0, 1, 2, 3


class Grid(NamedTuple):
    """One environment's grids, one per key (working space of :func:`build`; the key
    ``t``'s cells are ``FIRST .. FIRST + NX * NY - 1`` of ``shape[t]``, cell ``(ix, iy)``
    being ``FIRST + ix + NX * iy``)."""

    geometry: np.ndarray  #: (T, 4) float64: x0, y0 (m: the cells' lower corner), size (m), 1 / size
    shape: np.ndarray  #: (T, 4) int64: cells along x and y, first cell, vehicles
    start: np.ndarray  #: (cells + 1,) int64: cell c holds items[start[c] : start[c + 1]]
    items: np.ndarray  #: (n,) int64: the vehicles with a key, cell by cell, ascending in a cell
    key: np.ndarray  #: (n,) int64: the caller's key of each vehicle (-1: not in a grid)
    cell: np.ndarray  #: (n,) int64: each vehicle's cell (-1: not in a grid)
    near: np.ndarray  #: (cells,) int64: the cells :func:`forward_cells` lists


def max_cells(n: int, keys: int) -> int:
    """The most cells :func:`build` makes for ``n`` vehicles under ``keys`` keys: a key of
    ``c >= 1`` vehicles has at most ``(sqrt(CELLS_PER_VEHICLE * c) + 1) ** 2 <= (sqrt(
    CELLS_PER_VEHICLE) + 1) ** 2 * c`` cells."""
    side = math.isqrt(CELLS_PER_VEHICLE - 1) + 1  # the square root, rounded up
    return (side + 1) ** 2 * n + keys


def grid_work(n: int, keys: int) -> Grid:
    """A :class:`Grid` for ``n`` vehicles under keys ``0 .. keys - 1``."""
    return Grid(
        np.zeros((keys, 4)),
        np.zeros((keys, 4), dtype=np.int64),
        np.zeros(max_cells(n, keys) + 1, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.zeros((2 * PAIR_REACH + 1) * (PAIR_REACH + 1), dtype=np.int64),
    )


@engine_kernel
def build(pos, e, keys, min_size, per_cell, grid):
    """Sort the vehicles of environment ``e`` with a key (``grid.key[j]`` in ``0 .. keys -
    1``, set by the caller; ``-1``: left out) into one grid per key. A key's cells are
    square, at least ``min_size`` m, at least the size that holds ``per_cell`` vehicles
    on average over its vehicles' bounding box (0: no such bound), and at most
    :data:`CELLS_PER_VEHICLE` per vehicle (plus a row)."""
    n = pos.shape[1]
    geo, shape, start, items, key, cell = (
        grid.geometry,
        grid.shape,
        grid.start,
        grid.items,
        grid.key,
        grid.cell,
    )
    # The bounding boxes: x0, y0 in geometry, x1, y1 in size and inv for now.
    for t in range(keys):
        geo[t, X0] = np.inf
        geo[t, Y0] = np.inf
        geo[t, SIZE] = -np.inf
        geo[t, INV] = -np.inf
        shape[t, COUNT] = 0
    for j in range(n):
        t = key[j]
        if t < 0:
            continue
        x, y = pos[e, j, 0], pos[e, j, 1]
        geo[t, X0] = min(geo[t, X0], x)
        geo[t, Y0] = min(geo[t, Y0], y)
        geo[t, SIZE] = max(geo[t, SIZE], x)
        geo[t, INV] = max(geo[t, INV], y)
        shape[t, COUNT] += 1
    first = 0
    for t in range(keys):
        count = shape[t, COUNT]
        shape[t, FIRST] = first
        if count == 0:
            shape[t, NX] = 0
            shape[t, NY] = 0
            continue
        w = geo[t, SIZE] - geo[t, X0]
        h = geo[t, INV] - geo[t, Y0]
        # At most `most` cells along an axis: the extent over most - 1 cells fits.
        most = int(math.sqrt(CELLS_PER_VEHICLE * count)) + 1
        size = max(min_size, max(w, h) / (most - 1))
        if per_cell > 0.0:
            size = max(size, math.sqrt(w * h * per_cell / count))
        if not size > 0.0:
            size = 1.0  # every vehicle at one point: one cell
        inv = 1.0 / size
        nx = min(int(w * inv) + 1, most)
        ny = min(int(h * inv) + 1, most)
        geo[t, SIZE] = size
        geo[t, INV] = inv
        shape[t, NX] = nx
        shape[t, NY] = ny
        first += nx * ny
    # Counting sort: start[c] counts cell c, then (prefix sums) ends there, then (each
    # vehicle placed from the last) starts there.
    for c in range(first + 1):
        start[c] = 0
    for j in range(n):
        t = key[j]
        if t < 0:
            cell[j] = -1
            continue
        nx = shape[t, NX]
        ix = cell_index(pos[e, j, 0], geo[t, X0], geo[t, INV], nx)
        iy = cell_index(pos[e, j, 1], geo[t, Y0], geo[t, INV], shape[t, NY])
        c = shape[t, FIRST] + ix + nx * iy
        cell[j] = c
        start[c] += 1
    for c in range(1, first):
        start[c] += start[c - 1]
    start[first] = start[first - 1] if first > 0 else 0
    for j in range(n - 1, -1, -1):
        c = cell[j]
        if c >= 0:
            start[c] -= 1
            items[start[c]] = j


@engine_inline_kernel
def cell_index(x, x0, inv, cells):
    """The cell along one axis of a coordinate ``x`` of a grid from ``x0`` with ``cells``
    cells of size ``1 / inv``: ``floor((x - x0) * inv)``, clamped to the grid."""
    f = min(max((x - x0) * inv, 0.0), cells - 1.0)
    return int(f)


@engine_inline_kernel
def margin(geo, shape, t, px, py):
    """How much nearer than the edge of the cells searched around ``(px, py)`` a vehicle
    outside them may seem, from the rounding of the sums that place it and the edge: far
    more than that (a billionth of the magnitudes involved)."""
    return 1e-9 * (
        abs(px)
        + abs(py)
        + abs(geo[t, X0])
        + abs(geo[t, Y0])
        + (shape[t, NX] + shape[t, NY]) * geo[t, SIZE]
    )


@engine_inline_kernel
def keep_nearest(dist, order, count, slots, d, j):
    """Keep vehicle ``j`` at distance ``d`` among the ``count`` nearest kept so far in
    ``dist`` / ``order`` (sorted by distance, then index; at most ``slots``): it enters
    if the list is not full or it precedes the last. Returns the new count."""
    if count == slots:
        last = slots - 1
        if not (d < dist[last] or (d == dist[last] and j < order[last])):
            return count
        q = last  # the last kept drops out
    else:
        q = count
        count += 1
    while q > 0 and (dist[q - 1] > d or (dist[q - 1] == d and order[q - 1] > j)):
        dist[q] = dist[q - 1]
        order[q] = order[q - 1]
        q -= 1
    dist[q] = d
    order[q] = j
    return count


@engine_inline_kernel
def keep_span(pos, e, grid, begin, end, skip, px, py, slots, dist, order, count):
    """:func:`keep_nearest` for each vehicle of ``grid.items[begin:end]`` but ``skip``."""
    for s in range(begin, end):
        j = grid.items[s]
        if j != skip:
            d = length(pos[e, j, 0] - px, pos[e, j, 1] - py)
            count = keep_nearest(dist, order, count, slots, d, j)
    return count


@engine_inline_kernel
def nearest_in_grid(pos, e, grid, t, skip, px, py, slots, dist, order, count):
    """Keep (:func:`keep_nearest`) the vehicles of key ``t`` but ``skip`` nearest to
    ``(px, py)`` among the ``count`` of ``dist`` / ``order``; returns the new count. The
    result is that of a pass over every vehicle of the key: cells are searched in rings
    around the point's cell, a cell only when it may hold a vehicle that enters, until the
    list is full and its last is nearer than any cell not searched."""
    geo, shape, start = grid.geometry, grid.shape, grid.start
    nx, ny, first, members = shape[t, NX], shape[t, NY], shape[t, FIRST], shape[t, COUNT]
    if members == 0:
        return count
    if members <= LINEAR_MAX:
        # Every cell, cell by cell: the key's vehicles are one run of items.
        return keep_span(pos, e, grid, start[first], start[first + nx * ny], skip, px, py,
                         slots, dist, order, count)  # fmt: skip
    x0, y0, size = geo[t, X0], geo[t, Y0], geo[t, SIZE]
    slack = margin(geo, shape, t, px, py)
    cx = cell_index(px, x0, geo[t, INV], nx)
    cy = cell_index(py, y0, geo[t, INV], ny)
    r = 0
    while True:
        lo_x, hi_x, lo_y, hi_y = cx - r, cx + r, cy - r, cy + r
        for iy in range(max(lo_y, 0), min(hi_y, ny - 1) + 1):
            # The ring: whole rows at its top and bottom, its two ends in between.
            edge = (iy == lo_y) | (iy == hi_y)
            stride = 1 if edge else hi_x - lo_x
            for ix in range(lo_x, hi_x + 1, stride):
                if ix < 0 or ix >= nx:
                    continue
                if count == slots:
                    # Skip the cell if all of it is farther than the last kept.
                    left = x0 + ix * size
                    low = y0 + iy * size
                    gx = max(max(left - px, px - (left + size)), 0.0)
                    gy = max(max(low - py, py - (low + size)), 0.0)
                    reach = dist[slots - 1] + slack
                    if gx * gx + gy * gy > reach * reach:
                        continue
                c = first + ix + nx * iy
                count = keep_span(pos, e, grid, start[c], start[c + 1], skip, px, py, slots,
                                  dist, order, count)  # fmt: skip
        # The nearest a vehicle outside the rings searched can be.
        bound = np.inf
        if lo_x > 0:
            bound = min(bound, px - (x0 + lo_x * size))
        if hi_x < nx - 1:
            bound = min(bound, x0 + (hi_x + 1) * size - px)
        if lo_y > 0:
            bound = min(bound, py - (y0 + lo_y * size))
        if hi_y < ny - 1:
            bound = min(bound, y0 + (hi_y + 1) * size - py)
        if bound == np.inf:
            return count  # every cell searched
        if count == slots and dist[slots - 1] < bound - slack:
            return count
        r += 1


@engine_inline_kernel
def forward_cells(grid, t, c, distance):
    """The cells of key ``t``'s grid after cell ``c`` (above it, or to its right on its
    row) that may hold a vehicle within ``distance`` of one in ``c``, into ``grid.near``;
    returns how many. Each pair of cells within reach is listed once, from its first
    (lower row, then left) cell. The cells must be at least ``distance / PAIR_REACH``
    (:func:`build`'s ``min_size``)."""
    geo, shape = grid.geometry, grid.shape
    nx, ny, first = shape[t, NX], shape[t, NY], shape[t, FIRST]
    size = geo[t, SIZE]
    reach = distance + margin(geo, shape, t, 0.0, 0.0)
    ix = (c - first) % nx
    iy = (c - first) // nx
    count = 0
    for dy in range(PAIR_REACH + 1):
        for dx in range(-PAIR_REACH, PAIR_REACH + 1):
            if (dy == 0 and dx <= 0) or ix + dx < 0 or ix + dx >= nx or iy + dy >= ny:
                continue
            # Two vehicles of cells dx, dy apart are more than (|dx| - 1, |dy| - 1) cells
            # apart along the axes.
            gap = length(max(abs(dx) - 1, 0) * size, max(dy - 1, 0) * size)
            if gap <= reach:
                grid.near[count] = c + dx + nx * dy
                count += 1
    return count
