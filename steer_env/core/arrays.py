"""Numpy-side plumbing between the array API and the compiled loops (no formulas here).

:func:`rows` broadcasts operands against each other and flattens them to the row layout of
:mod:`steer_env.core.loops` without copying where it can; :data:`LOOPS` imports that module
(and with it numba) on first use, so ``import steer_env`` stays free of numba.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]


class _LazyLoops:
    """Attribute access imports :mod:`steer_env.core.loops` once and caches each loop."""

    def __getattr__(self, name: str) -> Any:
        from steer_env.core import loops

        value = getattr(loops, name)
        setattr(self, name, value)
        return value


#: The compiled loops, imported on first use.
LOOPS: Any = _LazyLoops()


def f64(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=np.float64)


def rows(
    *operands: tuple[ArrayLike, int], lead: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], int, list[Array]]:
    """Broadcast ``(array, core_ndim)`` operands over their leading axes.

    ``core_ndim`` is 1 for 2-D vectors (last axis of length 2) and 0 for per-vehicle
    scalars. ``lead`` optionally widens the broadcast to that leading shape.
    Returns ``(lead_shape, n, arrays)`` where each array is C-contiguous, writable
    float64 of shape ``(n, *core)`` or ``(1, *core)`` (the same value for every row)."""
    arrays = []
    leads = []
    for x, core in operands:
        a = np.asarray(x, dtype=np.float64)
        if core and (a.ndim < core or a.shape[-1] != 2):
            raise ValueError(f"expected vectors with a last axis of length 2, got shape {a.shape}")
        arrays.append(a)
        leads.append(a.shape[: a.ndim - core])
    want = leads[0] if lead is None else tuple(lead)
    if any(shape != want for shape in leads):
        want = np.broadcast_shapes(want, *leads)
    lead = want
    n = prod(lead)
    out = []
    for a, shape, (_, core) in zip(arrays, leads, operands, strict=True):
        tail = a.shape[a.ndim - core :]
        if shape == lead:
            r = a.reshape((n, *tail))
        elif prod(shape) == 1:
            r = a.reshape((1, *tail))
        else:
            r = np.broadcast_to(a, (*lead, *tail)).reshape((n, *tail))
        if not r.flags.c_contiguous:
            r = np.ascontiguousarray(r)
        if not r.flags.writeable:
            # One compiled specialisation per loop: numba types read-only arrays apart.
            r = r.copy()
        out.append(r)
    return lead, n, out


def vectors_out(lead: tuple[int, ...], n: int) -> tuple[Array, Array]:
    """A fresh ``(n, 2)`` result buffer and its ``(*lead, 2)`` view."""
    buf = np.empty((n, 2))
    return buf, buf.reshape((*lead, 2))


def none_to_inf(x: ArrayLike | None) -> ArrayLike:
    """Optional limits of the API (None: no limit) as the kernels' ``inf``."""
    return np.inf if x is None else x
