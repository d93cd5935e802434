"""The numpy-side plumbing of :mod:`steer_env.core.arrays` and its fast paths: the fast path
of :func:`rows` gives what the general path gives (same lead shape, same values row by row)
for contiguous, strided, read-only and broadcast operands, and the in-place shortcut of
:func:`steer_env.physics.integrate` gives bit for bit what the general path gives."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steer_env import behaviors, physics
from steer_env.core.arrays import _general_rows, rows

#: How an operand is laid out in memory; all are float64 ndarrays (the fast path's inputs).
LAYOUTS = ("contiguous", "strided", "read-only", "broadcast", "fortran")


def laid_out(values: np.ndarray, layout: str) -> np.ndarray:
    """``values`` (copied) in the given memory layout, same shape and values."""
    if layout == "contiguous":
        return values.copy()
    if layout == "strided":
        big = np.zeros((2 * values.shape[0], *values.shape[1:])) if values.ndim else None
        if big is None:
            return values.copy()
        big[::2] = values
        return big[::2]
    if layout == "read-only":
        a = values.copy()
        a.setflags(write=False)
        return a
    if layout == "broadcast":  # zero strides along the rows: every row the first one
        return np.broadcast_to(values[:1], values.shape) if values.ndim else values.copy()
    return np.asfortranarray(values)


@st.composite
def operands(draw):
    """A list of ``(array, core)`` operands of one ``n``: per-vehicle rows, single vectors /
    scalars, in any layout (plus now and then a wrong-length operand or a non-float64 one,
    which must leave the fast path and give the general path's answer or error)."""
    n = draw(st.integers(1, 5))
    k = draw(st.integers(1, 7))
    forms = ("rows", "rows", "one") + (() if draw(st.booleans()) else ("other-n", "int", "list"))
    ops = []
    for _ in range(k):
        core = draw(st.integers(0, 1))
        form = draw(st.sampled_from(forms))
        rows_n = {"rows": n, "other-n": n + draw(st.integers(1, 2))}.get(form)
        shape = ((rows_n,) if rows_n is not None else ()) + ((2,) if core else ())
        seed = draw(st.integers(0, 2**32 - 1))
        values = np.random.default_rng(seed).uniform(-5.0, 5.0, shape)
        if form == "int":
            x = np.round(values).astype(np.int64)
        elif form == "list":
            x = values.tolist()
        else:
            x = laid_out(values, draw(st.sampled_from(LAYOUTS)))
        ops.append((x, core))
    return ops


@settings(max_examples=400, deadline=None)
@given(ops=operands())
def test_rows_fast_path_matches_the_general_path(ops):
    try:
        want = _general_rows(tuple(ops), None)
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e))):
            rows(*ops)
        return
    got = rows(*ops)
    assert got[0] == want[0] and got[1] == want[1]
    n = want[1]
    for g, w, (_, core) in zip(got[2], want[2], ops, strict=True):
        assert g.dtype == np.float64 and g.ndim == w.ndim == 1 + core
        assert g.shape[0] in (1, n) and g.shape[1:] == w.shape[1:]
        # Rows broadcast the same way: a one-row operand is the same value for every row.
        np.testing.assert_array_equal(
            np.broadcast_to(g, (n, *g.shape[1:])), np.broadcast_to(w, (n, *w.shape[1:]))
        )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_seek_is_the_same_for_every_layout_and_for_lists(layout):
    rng = np.random.default_rng(3)
    p, v = rng.uniform(-5, 5, (4, 2)), rng.uniform(-1, 1, (4, 2))
    t, ms = np.array([3.0, -2.0]), rng.uniform(0.5, 2.0, 4)
    args = (laid_out(p, layout), v, laid_out(t, layout), laid_out(ms, layout))
    want = behaviors.seek(*(np.array(a).tolist() for a in args))  # the general path
    np.testing.assert_array_equal(behaviors.seek(*args), want)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("single", [False, True])
def test_integrate_in_place_shortcut_is_bit_identical(n, single):
    """``out`` is the inputs themselves (the shortcut), against fresh outputs from list
    inputs (the general path); ``single``: one vehicle as ``(2,)`` vectors (no shortcut)."""
    rng = np.random.default_rng(n)
    shape = (2,) if single else (n, 2)
    p, v = rng.uniform(-5, 5, shape), rng.uniform(-1, 1, shape)
    h = np.broadcast_to([0.0, 1.0], shape).copy()
    f = rng.uniform(-3, 3, shape)
    mass, ms, mf = (rng.uniform(0.5, 2, shape[:-1]) for _ in range(3))
    want = physics.integrate(
        p.tolist(), v.tolist(), h.tolist(), f, mass.tolist(), ms, mf.tolist(), 0.1
    )
    state = (p, v, h)
    got = physics.integrate(p, v, h, f, mass, ms, mf, 0.1, out=state)
    assert got is state
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
