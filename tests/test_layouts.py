"""Any action array of the right shape acts by its values, whatever its memory layout.

The compiled step's machine-code entry is fixed to the argument types of its first call, so
every batched front end must hand it the one layout it was compiled for. Each test steps
two envs side by side from the same seed: one always gets plain C-ordered float64 actions,
the other the same values in a layout drawn by hypothesis (Fortran order, a transposed or
strided view, another dtype, big-endian, read-only), in a drawn order of calls (the first
call's layout is the one that used to stick). States, observations and rewards must be
bit-identical.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import steer_env  # noqa: F401
from steer_env.envs import team_pursuit_v0
from steer_env.envs.sb3 import make_sb3_vec_env

LAYOUTS = ("c", "fortran", "transposed", "strided", "float32", "big_endian", "readonly", "list")


def in_layout(values: np.ndarray, layout: str):
    """``values`` (C-ordered float64) as an array-like of the same shape and values in
    ``layout``."""
    if layout == "c":
        return values.copy()
    if layout == "fortran":
        out = np.asfortranarray(values)
        assert not out.flags.c_contiguous
        return out
    if layout == "transposed":
        # A view whose axes are reversed in memory: the values of `values`, F-like strides.
        out = np.ascontiguousarray(values.T).T
        assert out.shape == values.shape and not out.flags.c_contiguous
        return out
    if layout == "strided":
        wide = np.zeros((*values.shape[:-1], values.shape[-1] * 2))
        wide[..., ::2] = values
        return wide[..., ::2]
    if layout == "float32":
        # float32 values that are exactly representable: the reference gets the same.
        return values.astype(np.float32)
    if layout == "big_endian":
        return values.astype(">f8")
    if layout == "readonly":
        out = values.copy()
        out.setflags(write=False)
        return out
    if layout == "list":
        return values.tolist()
    raise AssertionError(layout)


def exact_actions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random actions in [-1, 1] that float32 holds exactly (so every layout, float32
    included, carries the same values)."""
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32).astype(np.float64)


call_orders = st.lists(st.sampled_from(LAYOUTS), min_size=2, max_size=6)
SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(layouts=call_orders, seed=st.integers(0, 2**16))
def test_native_vector_env_reads_every_layout(layouts, seed):
    kwargs = dict(num_envs=4, vectorization_mode="vector_entry_point")
    ref = gym.make_vec("steer_env/Pursuit-v0", **kwargs)
    env = gym.make_vec("steer_env/Pursuit-v0", **kwargs)
    ref.reset(seed=seed)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for layout in layouts:
        a = exact_actions(rng, (4, 2))
        got, want = env.step(in_layout(a, layout)), ref.step(a)
        for g, w in zip(got[:4], want[:4], strict=True):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(
        env.unwrapped.batch.state.position, ref.unwrapped.batch.state.position
    )


@SETTINGS
@given(layouts=call_orders, seed=st.integers(0, 2**16))
def test_sb3_adapter_reads_every_layout(layouts, seed):
    ref = make_sb3_vec_env("steer_env/Evasion-v0", 4, seed=seed)
    env = make_sb3_vec_env("steer_env/Evasion-v0", 4, seed=seed)
    np.testing.assert_array_equal(env.reset(), ref.reset())
    rng = np.random.default_rng(seed)
    for layout in layouts:
        a = exact_actions(rng, (4, 2))
        env.step_async(in_layout(a, layout))
        ref.step_async(a)
        got, want = env.step_wait(), ref.step_wait()
        for g, w in zip(got[:3], want[:3], strict=True):
            np.testing.assert_array_equal(g, w)


@SETTINGS
@given(layouts=call_orders, seed=st.integers(0, 2**16))
def test_team_vector_env_reads_every_layout(layouts, seed):
    ref = team_pursuit_v0.vector_env(4, learned="both")
    env = team_pursuit_v0.vector_env(4, learned="both")
    ref.reset(seed=seed)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for layout in layouts:
        a = exact_actions(rng, (4, ref.n_agents, 2))
        got, want = env.step(in_layout(a, layout)), ref.step(a)
        for g, w in zip(got[:4], want[:4], strict=True):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(env.batch.state.position, ref.batch.state.position)


def test_swapaxes_view_of_team_actions():
    """The issue's case: actions built agent-major and handed over as a ``swapaxes`` view."""
    ref, env = team_pursuit_v0.vector_env(4), team_pursuit_v0.vector_env(4)
    ref.reset(seed=3)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(3):
        agent_major = exact_actions(rng, (ref.n_agents, 4, 2))
        view = agent_major.swapaxes(0, 1)
        assert not view.flags.c_contiguous
        got, want = env.step(view), ref.step(np.ascontiguousarray(view))
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def observation_buffer(shape: tuple[int, ...], layout: str) -> np.ndarray:
    """A buffer of ``shape`` filled with 7.0 in ``layout``."""
    if layout == "fortran":
        return np.full(shape, 7.0, dtype=np.float32, order="F")
    if layout == "strided":
        return np.full((*shape[:-1], shape[-1] * 2), 7.0, dtype=np.float32)[..., ::2]
    if layout == "big_endian":
        return np.full(shape, 7.0, dtype=">f4")
    if layout == "float64":
        return np.full(shape, 7.0)
    raise AssertionError(layout)


@pytest.mark.parametrize("layout", ["fortran", "strided", "big_endian", "float64"])
def test_observation_buffers_of_any_layout_are_filled_right(layout):
    """``Batch.reset`` and ``Batch.observe`` write into a caller's ``out`` of any layout the
    values they write into a plain one; rows they do not touch keep the caller's values."""
    kwargs = dict(num_envs=3, vectorization_mode="vector_entry_point")
    venv = gym.make_vec("steer_env/Pursuit-v0", **kwargs)
    venv.reset(seed=5)
    batch = venv.unwrapped.batch
    want = batch.observe()
    for _ in range(2):  # the first call fixes the compiled entry: both must be right
        out = observation_buffer(want.shape, layout)
        assert batch.observe(out=out) is out
        np.testing.assert_array_equal(out, want)
    partial = observation_buffer(want.shape, layout)
    batch.observe(np.array([1]), out=partial)
    np.testing.assert_array_equal(partial[1], want[1])
    assert (partial[[0, 2]] == 7.0).all()
    # reset into a buffer of that layout: the same first observations as into a plain one
    twin = gym.make_vec("steer_env/Pursuit-v0", **kwargs)
    twin.reset(seed=6)
    venv.reset(seed=6)
    fresh = observation_buffer(want.shape, layout)
    batch.reset(np.array([0, 2]), out=fresh)
    plain = twin.unwrapped.batch.reset(np.array([0, 2]))
    np.testing.assert_array_equal(fresh[[0, 2]], plain[[0, 2]])
    assert (fresh[1] == 7.0).all()


@pytest.mark.parametrize(
    "out, fragment",
    [
        (np.zeros((3, 1, 5), dtype=np.float32), "out must be a float array of shape"),
        (np.zeros((3, 1, 16), dtype=np.int64), "out must be a float array of shape"),
        ([[0.0] * 16] * 3, "out must be a float array of shape"),
    ],
)
def test_bad_observation_buffers_are_clear_errors(out, fragment):
    venv = gym.make_vec("steer_env/Pursuit-v0", num_envs=3, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=fragment):
        venv.unwrapped.batch.observe(out=out)
    frozen = np.zeros((3, 1, 16), dtype=np.float32)
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="out must be writeable"):
        venv.unwrapped.batch.observe(out=frozen)


@SETTINGS
@given(layouts=call_orders, seed=st.integers(0, 2**16))
def test_team_sb3_adapter_reads_every_layout(layouts, seed):
    from steer_env.envs.sb3 import make_team_sb3_vec_env

    ref = make_team_sb3_vec_env(2, seed=seed)
    env = make_team_sb3_vec_env(2, seed=seed)
    np.testing.assert_array_equal(env.reset(), ref.reset())
    rng = np.random.default_rng(seed)
    for layout in layouts:
        a = exact_actions(rng, (ref.num_envs, 2))
        env.step_async(in_layout(a, layout))
        ref.step_async(a)
        got, want = env.step_wait(), ref.step_wait()
        for g, w in zip(got[:3], want[:3], strict=True):
            np.testing.assert_array_equal(g, w)
