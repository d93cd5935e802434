"""Scalar kernel of Reynolds' simple vehicle model (one Euler step of one vehicle).

Units: m, s, kg, N. See :func:`steer_env.physics.integrate` for the array API.
"""

from __future__ import annotations

import math

from steer_env.core.jit import inline_kernel, kernel
from steer_env.core.vecmath import length, truncate

#: Speeds below this (m/s) do not change a vehicle's heading.
MIN_HEADING_SPEED = 1e-8


@kernel
def _unit(x: float, y: float) -> tuple[float, float]:
    """Unit vector along a non-zero finite ``(x, y)``, also when its length exceeds the
    largest float (the components are scaled by the larger one first)."""
    m = max(abs(x), abs(y))
    x /= m
    y /= m
    n = length(x, y)
    return x / n, y / n


@kernel
def _overflowed_velocity(
    vx: float,
    vy: float,
    fx: float,
    fy: float,
    mass: float,
    max_speed: float,
    max_force: float,
    dt: float,
) -> tuple[float, float]:
    """``truncate(v + truncate(f, max_force) / mass * dt, max_speed)`` for inputs where the
    plain formula overflows (a force beyond ~1e308 N, or ``max_force * dt / mass`` beyond the
    largest float). Everything is measured relative to ``s = max(|v|, |dv|)`` so no product
    overflows; a velocity change too large to represent leaves the vehicle at ``max_speed``
    along the force."""
    if fx == 0.0 and fy == 0.0:
        # No force: only inf * 0 made the plain formula fail; the velocity is unchanged.
        return truncate(vx, vy, max_speed)
    ux, uy = _unit(fx, fy)
    dv = min(length(fx, fy), max_force) / mass * dt  # may be inf
    if not dv < math.inf:
        return ux * max_speed, uy * max_speed
    s = max(length(vx, vy), dv)
    wx = vx / s + ux * (dv / s)
    wy = vy / s + uy * (dv / s)
    wn = length(wx, wy)
    if wn > max_speed / s:
        return wx / wn * max_speed, wy / wn * max_speed
    return wx * s, wy * s


@inline_kernel
def integrate(
    px: float,
    py: float,
    vx: float,
    vy: float,
    hx: float,
    hy: float,
    fx: float,
    fy: float,
    mass: float,
    max_speed: float,
    max_force: float,
    dt: float,
) -> tuple[float, float, float, float, float, float]:
    """One Euler step of ``dt`` s in Reynolds' order; returns ``(px, py, vx, vy, hx, hy)``::

        force    = truncate(f, max_force)                       # N
        velocity = truncate(v + force / mass * dt, max_speed)   # m/s
        position = p + velocity * dt                            # m
        heading  = velocity / |velocity|  if |velocity| > MIN_HEADING_SPEED, else unchanged

    Never NaN or inf for finite inputs with positive finite limits: the force's length is
    overflow-safe (:func:`~steer_env.core.vecmath.length`), and a step whose velocity change
    overflows (huge forces, tiny masses) is redone relative to its own scale.
    """
    f_norm = length(fx, fy)
    # One scale per vehicle: truncation to max_force, / mass, * dt.
    scale = max_force / f_norm if f_norm > max_force else 1.0
    scale *= dt
    scale /= mass
    nvx = vx + fx * scale
    nvy = vy + fy * scale
    speed = length(nvx, nvy)
    if not (speed < math.inf and f_norm < math.inf):
        # Overflow (or inf * 0, or |f| beyond the largest float) in the plain formula:
        # redo it without large products.
        nvx, nvy = _overflowed_velocity(vx, vy, fx, fy, mass, max_speed, max_force, dt)
        speed = length(nvx, nvy)
    if speed > max_speed:
        # Unit velocity times max_speed (max_speed / speed alone can go subnormal).
        nvx = nvx / speed * max_speed
        nvy = nvy / speed * max_speed
        speed = max_speed
    px += nvx * dt
    py += nvy * dt
    if speed > MIN_HEADING_SPEED:
        hx = nvx / speed
        hy = nvy / speed
    return px, py, nvx, nvy, hx, hy
