"""Counter-based random streams (SplitMix64), one draw at a time.

Draw ``c`` of the stream with 64-bit ``key`` is the SplitMix64 output for the state
``key + (c + 1) * GAMMA`` (Steele, Lea and Flood 2014, "Fast splittable pseudorandom number
generators"), turned into a float in ``[0, 1)`` from its top 53 bits. Any draw of any stream
costs the same few integer operations, so many environments draw in parallel without
sharing a generator. :mod:`steer_env.envs.streams` evaluates it over arrays.
"""

from __future__ import annotations

import numpy as np

from steer_env.core.jit import kernel

#: SplitMix64's increment (the odd integer nearest 2**64 / golden ratio).
GAMMA = np.uint64(0x9E3779B97F4A7C15)
#: SplitMix64's two finaliser multipliers (Stafford's "Mix13" variant).
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
#: XOR-ed into a seed before mixing, so seed 0 does not give key 0.
SEED_SALT = np.uint64(0x5EED5EED5EED5EED)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
#: 2**-53: maps the top 53 bits of a draw onto [0, 1).
INV_2_53 = 1.0 / 9007199254740992.0


@kernel
def mix(z):
    """SplitMix64's finaliser of a uint64 ``z`` (wrapping arithmetic)."""
    z = (z ^ (z >> _S30)) * M1
    z = (z ^ (z >> _S27)) * M2
    return z ^ (z >> _S31)


@kernel
def key_from_seed64(seed):
    """The stream key of a 64-bit seed: ``mix(seed ^ SEED_SALT)``."""
    return mix(seed ^ SEED_SALT)


@kernel
def uniform_draw(key, counter, j):
    """Draw ``counter + j`` (``j >= 0``) of stream ``key``: a float uniform in ``[0, 1)``."""
    z = mix(key + (counter + np.uint64(j) + _ONE) * GAMMA)
    return float(z >> _S11) * INV_2_53
