"""Compiled neighbour-pair search on a uniform grid (cell list), and pair geometry.

:func:`grid_pairs` finds every unordered pair closer than ``radius`` (inclusive) by binning
the points of each group into square cells at least ``radius`` wide and comparing each
cell only with itself and four of its eight neighbours (a half stencil, so each pair is seen
once): ``O(N + pairs)`` for roughly uniform densities.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.behaviors import in_view
from steer_env.core.jit import kernel
from steer_env.core.vecmath import length

#: The grid has at most this many cells per point (wider cells for sparse groups).
MAX_CELLS_PER_POINT = 4.0


@kernel
def _group_grid(pos, start, n, radius):
    """Cell size, grid width/height, origin, and the points of one group sorted by cell."""
    xmin = math.inf
    ymin = math.inf
    xmax = -math.inf
    ymax = -math.inf
    for k in range(start, start + n):
        xmin = min(xmin, pos[k, 0])
        ymin = min(ymin, pos[k, 1])
        xmax = max(xmax, pos[k, 0])
        ymax = max(ymax, pos[k, 1])
    # Sparse or elongated groups: widen the cells (never below radius) so the grid has
    # O(n) cells whatever the extent.
    budget = MAX_CELLS_PER_POINT * n
    w = xmax - xmin
    h = ymax - ymin
    cell = max(radius, math.sqrt(w * h / budget), w / budget, h / budget)
    nx = int((xmax - xmin) / cell) + 1
    ny = int((ymax - ymin) / cell) + 1
    cell_of = np.empty(n, np.int64)
    counts = np.zeros(nx * ny + 1, np.int64)
    for k in range(n):
        cx = min(int((pos[start + k, 0] - xmin) / cell), nx - 1)
        cy = min(int((pos[start + k, 1] - ymin) / cell), ny - 1)
        c = cy * nx + cx
        cell_of[k] = c
        counts[c + 1] += 1
    for c in range(nx * ny):
        counts[c + 1] += counts[c]
    order = np.empty(n, np.int64)
    fill = counts[:-1].copy()
    for k in range(n):
        c = cell_of[k]
        order[fill[c]] = start + k
        fill[c] += 1
    return nx, ny, counts, order


@kernel
def _scan_group(pos, start, n, radius, a_out, b_out, m):
    """Pairs of one group within ``radius``; writes from index ``m`` when ``a_out`` is
    non-empty, else only counts. Returns the new ``m``."""
    r2 = radius * radius
    nx, ny, counts, order = _group_grid(pos, start, n, radius)
    write = a_out.shape[0] > 0
    for cy in range(ny):
        for cx in range(nx):
            c = cy * nx + cx
            for s in range(counts[c], counts[c + 1]):
                p = order[s]
                # Same cell: later points only. Then the half stencil of neighbour cells.
                for t in range(s + 1, counts[c + 1]):
                    q = order[t]
                    dx = pos[q, 0] - pos[p, 0]
                    dy = pos[q, 1] - pos[p, 1]
                    if dx * dx + dy * dy <= r2:
                        if write:
                            a_out[m] = min(p, q)
                            b_out[m] = max(p, q)
                        m += 1
                for k in range(4):
                    ox = 1 if k == 0 else k - 2  # (+1, 0), (-1, +1), (0, +1), (+1, +1)
                    oy = 0 if k == 0 else 1
                    qx = cx + ox
                    qy = cy + oy
                    if qx < 0 or qx >= nx or qy >= ny:
                        continue
                    d = qy * nx + qx
                    for t in range(counts[d], counts[d + 1]):
                        q = order[t]
                        dx = pos[q, 0] - pos[p, 0]
                        dy = pos[q, 1] - pos[p, 1]
                        if dx * dx + dy * dy <= r2:
                            if write:
                                a_out[m] = min(p, q)
                                b_out[m] = max(p, q)
                            m += 1
    return m


@kernel
def grid_pairs(pos, group_size, radius):
    """Unordered pairs ``a < b`` (flattened indices) with ``|pos[b] - pos[a]| <= radius``,
    each group of ``group_size`` consecutive points searched alone."""
    groups = pos.shape[0] // group_size
    empty = np.empty(0, np.int64)
    total = 0
    for g in range(groups):
        total = _scan_group(pos, g * group_size, group_size, radius, empty, empty, total)
    a = np.empty(total, np.int64)
    b = np.empty(total, np.int64)
    m = 0
    for g in range(groups):
        m = _scan_group(pos, g * group_size, group_size, radius, a, b, m)
    return a, b


@kernel
def directed_pairs(pos, a, b, i, j, offset, distance):
    """Both directions of the unordered pairs ``(a, b)`` into ``i``, ``j``,
    ``offset = p_j - p_i`` and ``distance = |offset|`` (``2 * len(a)`` rows each: first all
    ``(a, b)``, then all ``(b, a)``)."""
    half = a.shape[0]
    for k in range(half):
        p = a[k]
        q = b[k]
        dx = pos[q, 0] - pos[p, 0]
        dy = pos[q, 1] - pos[p, 1]
        d = length(dx, dy)
        i[k] = p
        j[k] = q
        offset[k, 0] = dx
        offset[k, 1] = dy
        distance[k] = d
        i[half + k] = q
        j[half + k] = p
        offset[half + k, 0] = -dx
        offset[half + k, 1] = -dy
        distance[half + k] = d


@kernel
def visible_pairs(heading, i, offset, distance, cos_half_view, keep):
    """``keep[k]``: whether vehicle ``i[k]`` (heading ``heading[i[k]]``) sees its neighbour at
    ``offset[k]``, ``distance[k]`` away, within the view cone of half-angle cosine
    ``cos_half_view`` (:func:`steer_env.core.behaviors.in_view`, the engine's rule too)."""
    for k in range(i.shape[0]):
        v = i[k]
        keep[k] = in_view(
            offset[k, 0], offset[k, 1], distance[k], heading[v, 0], heading[v, 1], cos_half_view
        )
