"""TEMPORARY stand-in."""

import math

from steer_env.core.jit import kernel

TINY = 1e-12


@kernel
def length(x, y):
    s = x * x + y * y
    if 1e-290 <= s <= 1e300:
        return math.sqrt(s)
    return math.hypot(x, y)


@kernel
def set_magnitude(x, y, magnitude):
    n = length(x, y)
    if n > TINY:
        return x / n * magnitude, y / n * magnitude
    return 0.0, 0.0


@kernel
def normalize(x, y):
    n = length(x, y)
    if n > TINY:
        return x / n, y / n
    return 0.0, 0.0


@kernel
def truncate(x, y, max_length):
    n = length(x, y)
    if n > max_length:
        return x / n * max_length, y / n * max_length
    return x, y


@kernel
def to_world(x, y, hx, hy):
    return x * hx - y * hy, x * hy + y * hx


@kernel
def to_local(x, y, hx, hy):
    return x * hx + y * hy, -x * hy + y * hx
