"""Neighbour queries for flocking: which vehicles each vehicle can see.

The result is a list of directed pairs ``(i, j)``: vehicle ``j`` is a neighbour of vehicle
``i`` (``j != i``). Flocking behaviours reduce over those pairs with ``np.bincount``, so
their cost is linear in the number of pairs and no ``N x N`` matrix is ever built for a
large flock.

Two back ends:

* ``"dense"``: all pairwise distances, ``O(N^2)`` memory; the fastest for small groups
  (and the only one that handles many independent small groups in one call).
* ``"kdtree"``: :class:`scipy.spatial.cKDTree` ``query_pairs``; ``O(N log N + pairs)``.

``method="auto"`` uses the dense path while a group has at most :data:`DENSE_MAX`
vehicles. Positions shaped ``(..., n, 2)`` are independent groups (for example one per
environment); pair indices then refer to the flattened ``(prod(...) * n,)`` vehicles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree

from steer_env import vecmath

Array = NDArray[np.float64]

#: Largest group handled by the dense back end under ``method="auto"``.
DENSE_MAX = 192


@dataclass(frozen=True)
class Neighbors:
    """Directed neighbour pairs over ``n_vehicles`` (flattened) vehicles.

    Attributes:
        i: ``(P,)`` int, the observing vehicle.
        j: ``(P,)`` int, the neighbour it sees.
        offset: ``(P, 2)`` m, ``position[j] - position[i]``.
        distance: ``(P,)`` m, ``|offset|``.
        n_vehicles: number of vehicles the indices refer to.
    """

    i: NDArray[np.intp]
    j: NDArray[np.intp]
    offset: Array
    distance: Array
    n_vehicles: int

    def count(self) -> NDArray[np.intp]:
        """``(n_vehicles,)`` number of neighbours of each vehicle."""
        return np.bincount(self.i, minlength=self.n_vehicles)

    def sum(self, values: Array) -> Array:
        """Sum per observing vehicle of ``values`` (``(P,)`` or ``(P, 2)``)."""
        if values.ndim == 1:
            return np.bincount(self.i, weights=values, minlength=self.n_vehicles)
        out = np.empty((self.n_vehicles, values.shape[1]))
        for k in range(values.shape[1]):
            out[:, k] = np.bincount(self.i, weights=values[:, k], minlength=self.n_vehicles)
        return out


def _dense_pairs(position: Array, radius: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    n = position.shape[-2]
    groups = position.reshape(-1, n, 2)
    diff = groups[:, None, :, :] - groups[:, :, None, :]
    d2 = np.einsum("gabk,gabk->gab", diff, diff)
    within = d2 <= radius * radius
    idx = np.arange(n)
    within[:, idx, idx] = False
    g, a, b = np.nonzero(within)
    return g * n + a, g * n + b


def _kdtree_pairs(position: Array, radius: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    n = position.shape[-2]
    flat = position.reshape(-1, 2)
    if position.ndim > 2:
        # Independent groups: translate each group far from the others so one tree serves all.
        lo = flat.min(axis=0)
        extent = float(np.max(flat.max(axis=0) - lo)) + 2.0 * radius + 1.0
        shift = np.repeat(np.arange(flat.shape[0] // n), n) * extent
        flat = flat - lo
        flat = np.column_stack((flat[:, 0] + shift, flat[:, 1]))
    pairs = cKDTree(flat).query_pairs(radius, output_type="ndarray")
    a = np.concatenate((pairs[:, 0], pairs[:, 1]))
    b = np.concatenate((pairs[:, 1], pairs[:, 0]))
    return a, b


def find_neighbors(
    position: ArrayLike,
    radius: float,
    heading: ArrayLike | None = None,
    view_angle: float | None = None,
    method: str = "auto",
) -> Neighbors:
    """Directed pairs of vehicles closer than ``radius`` metres (inclusive).

    Args:
        position: ``(..., n, 2)`` m; leading axes are independent groups.
        radius: neighbourhood radius, m, > 0.
        heading: ``(..., n, 2)`` unit headings; needed only with ``view_angle``.
        view_angle: optional field of view, radians in ``(0, 2 pi]``, centred on the
            heading: ``j`` is seen by ``i`` only if the angle between ``heading[i]`` and
            ``position[j] - position[i]`` is at most ``view_angle / 2`` (Reynolds' and
            OpenSteer's view cone). Coincident vehicles are always seen.
        method: ``"auto"``, ``"dense"`` or ``"kdtree"``.
    """
    pos = np.asarray(position, dtype=np.float64)
    if pos.ndim < 2 or pos.shape[-1] != 2:
        raise ValueError(f"position must have shape (..., n, 2), got {pos.shape}")
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    if method not in ("auto", "dense", "kdtree"):
        raise ValueError(f"method must be 'auto', 'dense' or 'kdtree', got {method!r}")
    n = pos.shape[-2]
    if method == "auto":
        method = "dense" if n <= DENSE_MAX else "kdtree"
    i, j = _dense_pairs(pos, radius) if method == "dense" else _kdtree_pairs(pos, radius)
    flat = pos.reshape(-1, 2)
    offset = flat[j] - flat[i]
    distance = vecmath.length(offset)
    if view_angle is not None:
        if heading is None:
            raise ValueError("heading is required when view_angle is given")
        if not (0 < view_angle <= 2 * np.pi):
            raise ValueError(f"view_angle must be in (0, 2*pi] radians, got {view_angle!r}")
        h = np.asarray(heading, dtype=np.float64).reshape(-1, 2)[i]
        along = np.einsum("pk,pk->p", h, offset)
        visible = (along >= np.cos(view_angle / 2) * distance) | (distance <= vecmath.TINY)
        i, j, offset, distance = i[visible], j[visible], offset[visible], distance[visible]
    return Neighbors(i=i, j=j, offset=offset, distance=distance, n_vehicles=flat.shape[0])
