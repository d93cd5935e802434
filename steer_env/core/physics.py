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


#: A move from an obstacle's edge that comes no deeper than this fraction of the squared
#: reach inside it is a slide along the edge (rounding), not a crossing.
GRAZE = 1e-9


@kernel
def circle_contact(
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    vx: float,
    vy: float,
    cx: float,
    cy: float,
    reach: float,
) -> tuple[float, float, float, float, bool]:
    """Inelastic contact of a round body with a circular obstacle, the way the walls stop
    a vehicle: the body's centre moved from ``(x0, y0)`` to ``(x1, y1)`` with velocity
    ``(vx, vy)``; it may not come closer than ``reach`` (obstacle radius plus body radius)
    to the obstacle's centre ``(cx, cy)``. Returns ``(x, y, vx, vy, touched)``::

        entered the circle during the move  ->  stop where it first touched it
        started on its edge, ended inside   ->  pushed out along the radius (sliding)
        started on its edge, crossed it     ->  stop where it started
        touching                            ->  the velocity's inward part removed

    The swept test keeps a fast body from passing through a small obstacle in one step.
    A body that ends outside the circle without crossing it is left as it is."""
    fx = x0 - cx
    fy = y0 - cy
    dx = x1 - x0
    dy = y1 - y0
    reach2 = reach * reach
    start = fx * fx + fy * fy - reach2  # > 0: the move started outside
    ex = x1 - cx
    ey = y1 - cy
    end_inside = ex * ex + ey * ey < reach2
    x, y = x1, y1
    if start > 0.0:
        # First time t in [0, 1] at which |f + t d| = reach, if any.
        a = dx * dx + dy * dy
        b = fx * dx + fy * dy
        disc = b * b - a * start
        if not (a > 0.0 and b < 0.0 and disc >= 0.0):
            return x1, y1, vx, vy, False
        t = (-b - math.sqrt(disc)) / a
        if t > 1.0:
            return x1, y1, vx, vy, False
        x = x0 + t * dx
        y = y0 + t * dy
    elif not end_inside:
        # Started on the edge (touching since an earlier step) and ended outside: a move
        # along the edge, or one straight through the obstacle, which stops where it began.
        a = dx * dx + dy * dy
        b = fx * dx + fy * dy
        if not (a > 0.0 and b < 0.0):
            return x1, y1, vx, vy, False
        t = min(-b / a, 1.0)
        px = fx + t * dx
        py = fy + t * dy
        if px * px + py * py >= reach2 * (1.0 - GRAZE):
            return x1, y1, vx, vy, False
        x, y = x0, y0
    # On the circle: the point of it along the radius through (x, y).
    ox = x - cx
    oy = y - cy
    d = length(ox, oy)
    if d > 0.0:
        nx = ox / d
        ny = oy / d
    else:
        # Exactly at the centre: out against the direction of motion.
        speed = length(vx, vy)
        nx, ny = (-vx / speed, -vy / speed) if speed > 0.0 else (1.0, 0.0)
    x = cx + nx * reach
    y = cy + ny * reach
    inward = vx * nx + vy * ny
    if inward < 0.0:
        vx -= inward * nx
        vy -= inward * ny
    return x, y, vx, vy, True
