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


class NotFast(Exception):
    """Raised by the compiled entries of :mod:`steer_env.core.loops` when the operands do not
    have the layouts they take; the caller then takes the general path (:func:`rows`)."""


def f64(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=np.float64)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of two shapes (``np.broadcast_shapes`` costs ~10 us a call)."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    off = len(a) - len(b)
    for k, d in enumerate(b):
        o = out[off + k]
        if d != o:
            if o == 1:
                out[off + k] = d
            elif d != 1:
                raise ValueError(f"shapes {a} and {b} cannot be broadcast together")
    return tuple(out)


_F64 = np.dtype(np.float64)
_ND = np.ndarray
_PAIR = (2,)


def float64_arrays(*operands: object) -> bool:
    """Whether every operand is a float64 :class:`numpy.ndarray` (not a subclass): what the
    compiled entries of :mod:`steer_env.core.loops` take. Dtypes compare with ``==``: arrays
    made by compiled code loaded from numba's cache carry an equal float64 dtype object of
    their own (unpickled), not numpy's."""
    # A loop rather than all() over a generator, which costs more per call.
    for x in operands:  # noqa: SIM110
        if type(x) is not _ND or x.dtype != _F64:  # type: ignore[attr-defined]
            return False
    return True


def rows(
    *operands: tuple[ArrayLike, int], lead: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], int, list[Array]]:
    """Broadcast ``(array, core_ndim)`` operands over their leading axes.

    ``core_ndim`` is 1 for 2-D vectors (last axis of length 2) and 0 for per-vehicle
    scalars. ``lead`` optionally widens the broadcast to that leading shape.
    Returns ``(lead_shape, n, arrays)`` where each array is C-contiguous, writable
    float64 of shape ``(n, *core)`` or ``(1, *core)`` (the same value for every row).

    Fast path (about a hundred ns per operand), taken without ``lead`` when every operand
    is a float64 ndarray that is one vector / scalar (``(2,)`` / ``()``) or one row per
    vehicle (``(n, 2)`` / ``(n,)``), all with the same ``n``: operands are passed as they
    are, read-only or strided ones included (numba then compiles a variant for them once).
    """
    if lead is None:
        out: list[Array] = []
        append = out.append
        vec: tuple[int, ...] | None = None  # (n, 2) and (n,) once an operand has given n
        one: tuple[int, ...] | None = None
        for x, core in operands:
            # float64_arrays(x), inline (a call per operand is measurable here).
            if type(x) is not _ND or x.dtype != _F64:
                break
            shape = x.shape
            if core:
                if shape == vec:
                    append(x)
                elif shape == _PAIR:
                    append(x[None])
                elif vec is None and len(shape) == 2 and shape[1] == 2:
                    vec, one = shape, shape[:1]
                    append(x)
                else:
                    break
            elif shape == one:
                append(x)
            elif not shape:
                append(x[None])
            elif vec is None and len(shape) == 1:
                vec, one = (shape[0], 2), shape
                append(x)
            else:
                break
        else:
            if one is None:
                return (), 1, out
            return one, one[0], out
    return _general_rows(operands, lead)


def _general_rows(
    operands: tuple[tuple[ArrayLike, int], ...], lead: tuple[int, ...] | None
) -> tuple[tuple[int, ...], int, list[Array]]:
    """:func:`rows` for any broadcastable operands: copies where the layout needs it."""
    arrays = []
    leads = []
    for x, core in operands:
        a = np.asarray(x, dtype=np.float64)
        shape = a.shape
        if core and (len(shape) < core or shape[-1] != 2):
            raise ValueError(f"expected vectors with a last axis of length 2, got shape {shape}")
        arrays.append(a)
        leads.append(shape[:-1] if core else shape)
    want = leads[0] if lead is None else tuple(lead)
    for shape in leads:
        if shape != want:
            want = _broadcast(want, shape)
    lead = want
    n = prod(lead)
    out = []
    for a, shape, (_, core) in zip(arrays, leads, operands, strict=True):
        if shape == lead and len(shape) == 1:
            r = a  # already (n, *core): the common case, no view needed
        elif shape == lead:
            r = a.reshape((n, 2) if core else n)
        elif prod(shape) == 1:
            r = a.reshape((1, 2) if core else 1)
        else:
            full = (*lead, 2) if core else lead
            r = np.broadcast_to(a, full).reshape((n, 2) if core else n)
        flags = r.flags
        if not flags.c_contiguous:
            r = np.ascontiguousarray(r)
        elif not flags.writeable:
            # One compiled specialisation per loop: numba types read-only arrays apart.
            r = r.copy()
        out.append(r)
    return lead, n, out


def vectors_out(lead: tuple[int, ...], n: int) -> tuple[Array, Array]:
    """A fresh ``(n, 2)`` result buffer and its ``(*lead, 2)`` view."""
    buf = np.empty((n, 2))
    if len(lead) == 1:
        return buf, buf
    return buf, buf.reshape((*lead, 2))


def none_to_inf(x: ArrayLike | None) -> ArrayLike:
    """Optional limits of the API (None: no limit) as the kernels' ``inf``."""
    return np.inf if x is None else x
