"""Counter-based random streams, one per environment, drawn for many environments at once.

A batched simulation of ``E`` environments must give every environment the same random
numbers it would get if it ran alone (so ``gym.make_vec`` reproduces ``E`` single envs
seeded the same way), without a Python loop over ``E`` generators in ``step``. Each
environment therefore owns a 64-bit ``key`` and a draw ``counter``; draw ``c`` of stream
``key`` is the SplitMix64 output for state ``key + (c + 1) * GAMMA`` (Steele, Lea and
Flood 2014, "Fast splittable pseudorandom number generators").

The formulas are the scalar kernels of :mod:`steer_env.core.streams` (``mix``,
``uniform_draw``); the functions here run them over arrays in compiled loops. ``GAMMA``,
``_M1`` and ``_M2`` are re-exported from there.

Keys come from seeds (:func:`key_from_seed`) or from a :class:`numpy.random.Generator`
(the environment's ``np_random``); nothing here touches global or time-based state.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.core.arrays import LOOPS

_REEXPORTED = {"GAMMA": "GAMMA", "_M1": "M1", "_M2": "M2", "_SEED_SALT": "SEED_SALT"}


def __getattr__(name: str) -> Any:
    # The constants live in the core; importing it imports numba, so on first use only.
    if name in _REEXPORTED:
        from steer_env.core import streams

        return getattr(streams, _REEXPORTED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def reduce_seed(seed: int) -> int:
    """A non-negative Python int as a 64-bit seed.

    Seeds below ``2**64`` are returned unchanged (their keys are those of earlier
    releases). Larger seeds are reduced to the first 8 bytes (little-endian) of the
    BLAKE2b hash of their little-endian bytes, personalised ``b"steer-env-seed"``: distinct
    large seeds collide only as often as a 64-bit cryptographic hash does (and a large seed
    meets a particular small one with probability ``2**-64``)."""
    if seed < 0:
        raise ValueError(f"seeds must be non-negative integers, got {seed}")
    if seed < 2**64:
        return seed
    data = seed.to_bytes((seed.bit_length() + 7) // 8, "little")
    digest = hashlib.blake2b(data, digest_size=8, person=b"steer-env-seed").digest()
    return int.from_bytes(digest, "little")


def _as_seed_array(seed: Any) -> NDArray[np.uint64]:
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool | np.bool_):
        return np.array([reduce_seed(int(seed))], dtype=np.uint64)
    if isinstance(seed, list | tuple):
        return np.array([reduce_seed(int(s)) for s in seed], dtype=np.uint64)
    arr = np.atleast_1d(np.asarray(seed))
    if arr.dtype == object:
        return np.array([reduce_seed(int(s)) for s in arr.reshape(-1)], dtype=np.uint64)
    return arr.astype(np.uint64).reshape(-1)


def key_from_seed(seed: int | NDArray[np.integer]) -> NDArray[np.uint64]:
    """Stream keys for non-negative integer seeds (one per seed): SplitMix64's mix of
    ``seed ^ SEED_SALT``. Any non-negative Python int is accepted (see
    :func:`reduce_seed`)."""
    s = _as_seed_array(seed)
    out = np.empty(s.shape[0], dtype=np.uint64)
    LOOPS.key_from_seed(s, out)
    return out


def key_from_generator(rng: np.random.Generator, n: int = 1) -> NDArray[np.uint64]:
    """``n`` stream keys drawn from a numpy Generator."""
    return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)


def uniform(
    key: NDArray[np.uint64], counter: NDArray[np.uint64], count: int
) -> NDArray[np.float64]:
    """``(E, count)`` floats uniform in ``[0, 1)``: draws ``counter[e] .. counter[e] + count - 1``
    of stream ``key[e]``. The caller advances ``counter`` by ``count``."""
    key = np.ascontiguousarray(key, dtype=np.uint64).reshape(-1)
    counter = np.ascontiguousarray(np.broadcast_to(counter, key.shape), dtype=np.uint64)
    out = np.empty((key.shape[0], int(count)))
    LOOPS.uniform(key, counter, int(count), out)
    return out
