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


# --- the compiled entries (steer_env.core.loops, "entries") against the general path

#: Forms of an operand of the entries: the fast forms, and ones that must leave them.
FORMS = ("rows", "rows", "one", "one-row", "other-n", "lead-2d", "int", "float32", "swapped",
         "list", "python", "bad-core")  # fmt: skip


def build(form: str, core: int, n: int, seed: int, layout: str):
    """One operand (deterministic in its arguments, so it can be built twice)."""
    rows_n = {"rows": n, "one-row": 1, "other-n": n + 1}.get(form)
    if form == "lead-2d":
        lead: tuple[int, ...] = (2, n)
    else:
        lead = (rows_n,) if rows_n is not None else ()
    shape = lead + ((3,) if form == "bad-core" else (2,) if core else ())
    values = np.random.default_rng(seed).uniform(0.5, 5.0, shape)
    if form == "int":
        return np.round(values).astype(np.int64)
    if form == "float32":
        return values.astype(np.float32)
    if form == "swapped":
        return values.astype(values.dtype.newbyteorder())
    if form == "list":
        return values.tolist()
    if form == "python":
        return float(values.flat[0]) if not core else values.tolist()
    return laid_out(values, layout)


@st.composite
def entry_operands(draw, cores):
    """Operand descriptions for an API function with these core dimensions."""
    n = draw(st.integers(0, 4))
    odd = draw(st.integers(0, 3)) == 0  # now and then operands that leave the fast path
    forms = FORMS if odd else ("rows", "rows", "one")
    return n, [
        (draw(st.sampled_from(forms)), core, draw(st.integers(0, 2**32 - 1)),
         draw(st.sampled_from(LAYOUTS)))
        for core in cores
    ]  # fmt: skip


class _General:
    """Context in which the entries always decline (the API then runs its general path)."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def __enter__(self) -> None:
        from steer_env.core.arrays import LOOPS, NotFast

        def decline(*args):
            raise NotFast

        self.mp = pytest.MonkeyPatch()
        for name in self.names:
            getattr(LOOPS, name)  # cached on LOOPS, so that setattr can restore it
            self.mp.setattr(LOOPS, name, decline)

    def __exit__(self, *exc) -> None:
        self.mp.undo()


def outcome(fn):
    """``("ok", result)`` or ``("error", type, message)`` of ``fn()``."""
    try:
        return ("ok", fn())
    except Exception as e:  # the test compares the errors themselves
        return ("error", type(e), str(e))


def assert_same_bits(got, want) -> None:
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.shape == want.shape and got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()  # bit for bit (NaN payloads, signed zeros)
    else:
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert_same_bits(g, w)


@settings(max_examples=50, deadline=None)
@given(ops=entry_operands((1, 1, 1, 0)))
def test_seek_entry_matches_the_general_path(ops):
    n, specs = ops

    def args():
        return [build(form, core, n, seed, layout) for form, core, seed, layout in specs]

    got = outcome(lambda: behaviors.seek(*args()))
    with _General("seek_entry"):
        want = outcome(lambda: behaviors.seek(*args()))
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1:] == want[1:]
    else:
        assert_same_bits(got[1], want[1])


#: Forms of ``out`` for integrate: the inputs themselves, fresh arrays in a layout, the
#: inputs in another order (aliasing), read-only, the wrong shape, a list, None.
OUT_FORMS = ("inputs", "inputs", "fresh", "shuffled", "wrong-shape", "list", "none")


@settings(max_examples=50, deadline=None)
@given(
    ops=entry_operands((1, 1, 1, 1, 0, 0, 0)),
    out_form=st.sampled_from(OUT_FORMS),
    out_layout=st.sampled_from(("contiguous", "strided", "fortran")),
)
def test_integrate_entry_matches_the_general_path(ops, out_form, out_layout):
    """Outputs, and every input afterwards (``out`` may be the inputs), bit for bit."""
    n, specs = ops

    def run():
        args = [build(form, core, n, seed, layout) for form, core, seed, layout in specs]
        lead = () if all(form == "one" for form, *_ in specs) else (n,)
        if out_form == "inputs":
            out = tuple(args[:3])
        elif out_form == "shuffled":
            out = (args[1], args[2], args[0])
        elif out_form == "fresh":
            out = tuple(laid_out(np.zeros((*lead, 2)), out_layout) for _ in range(3))
        elif out_form == "wrong-shape":
            out = tuple(np.zeros((n + 2, 2)) for _ in range(3))
        elif out_form == "list":
            out = [np.zeros((*lead, 2)) for _ in range(3)]
        else:
            out = None
        result = outcome(lambda: physics.integrate(*args, 0.05, out=out))
        after = [np.array(a, copy=True) for a in args]
        return result, after

    got, got_after = run()
    with _General("integrate_entry"):
        want, want_after = run()
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1:] == want[1:]
    else:
        assert_same_bits(got[1], want[1])
    for g, w in zip(got_after, want_after, strict=True):
        assert_same_bits(g, w)


def test_integrate_entry_declines_read_only_outputs():
    """A read-only ``out`` leaves the entry (it cannot write there) for the general path."""
    from steer_env.core.arrays import LOOPS, NotFast

    p, v, h, f = (np.ones((3, 2)) for _ in range(4))
    m = np.ones(3)
    ro = np.zeros((3, 2))
    ro.setflags(write=False)
    with pytest.raises(NotFast):
        LOOPS.integrate_entry(p, v, h, f, m, m, m, 0.1, ro, v, h)
    with pytest.raises(NotFast):  # all operands single vectors / scalars: lead shape ()
        LOOPS.seek_entry(p[0], v[0], h[0], m[0])


def test_entries_take_float64_arrays_with_a_dtype_object_of_their_own(monkeypatch):
    """Arrays returned by compiled code loaded from numba's cache carry an unpickled float64
    dtype (equal to numpy's, not the same object): seek's result fed to integrate must still
    take the entries, not the general path."""
    import pickle

    import steer_env.behaviors as behaviors_module

    p, v, h = (pickle.loads(pickle.dumps(np.ones((3, 2)))) for _ in range(3))
    m = pickle.loads(pickle.dumps(np.ones(3)))
    t = pickle.loads(pickle.dumps(np.array([3.0, 4.0])))
    assert p.dtype == np.float64
    if p.dtype is np.dtype(np.float64):
        pytest.skip("unpickling gave numpy's own dtype object here")

    def general(*args, **kwargs):
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(behaviors_module, "rows", general)
    monkeypatch.setattr(physics, "rows", general)
    f = behaviors.seek(p, v, t, m)
    physics.integrate(p, v, h, f, m, m, m, 0.1, out=(p, v, h))
