"""TEMPORARY stand-in."""

from steer_env.core.jit import kernel
from steer_env.core.vecmath import length, truncate


@kernel
def accumulate(tx, ty, fx, fy, max_force):
    remaining = max_force - length(tx, ty)
    if remaining <= 1e-12:
        return tx, ty, False
    ax, ay = truncate(fx, fy, remaining)
    return tx + ax, ty + ay, True
