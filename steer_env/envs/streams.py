"""Counter-based random streams, one per environment, drawn for many environments at once.

A batched simulation of ``E`` environments must give every environment the same random
numbers it would get if it ran alone (so ``gym.make_vec`` reproduces ``E`` single envs
seeded the same way), without a Python loop over ``E`` generators in ``step``. Each
environment therefore owns a 64-bit ``key`` and a draw ``counter``; draw ``c`` of stream
``key`` is the SplitMix64 output for state ``key + (c + 1) * GAMMA`` (Steele, Lea and
Flood 2014, "Fast splittable pseudorandom number generators"), which numpy evaluates for
all environments in a handful of vectorised integer operations.

Keys come from seeds (:func:`key_from_seed`) or from a :class:`numpy.random.Generator`
(the environment's ``np_random``); nothing here touches global or time-based state.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SEED_SALT = np.uint64(0x5EED5EED5EED5EED)


def _mix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def key_from_seed(seed: int | NDArray[np.integer]) -> NDArray[np.uint64]:
    """Stream keys for non-negative integer seeds (one per seed)."""
    s = np.atleast_1d(np.asarray(seed)).astype(np.uint64)
    return _mix(s ^ _SEED_SALT)


def key_from_generator(rng: np.random.Generator, n: int = 1) -> NDArray[np.uint64]:
    """``n`` stream keys drawn from a numpy Generator."""
    return rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)


def uniform(
    key: NDArray[np.uint64], counter: NDArray[np.uint64], count: int
) -> NDArray[np.float64]:
    """``(E, count)`` floats uniform in ``[0, 1)``: draws ``counter[e] .. counter[e] + count - 1``
    of stream ``key[e]``. The caller advances ``counter`` by ``count``."""
    steps = counter[:, None] + np.arange(1, count + 1, dtype=np.uint64)
    bits = _mix(key[:, None] + steps * GAMMA)
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
