"""TEMPORARY stand-in."""

import numpy as np

from steer_env.core.jit import kernel

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_INV_2_53 = 1.0 / 9007199254740992.0


@kernel
def uniform_draw(key, counter, j):
    z = key + (counter + np.uint64(j) + _ONE) * GAMMA
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    return float(z >> _S11) * _INV_2_53
