"""TEMPORARY stand-in."""

from steer_env.core.jit import kernel
from steer_env.core.vecmath import length

MIN_HEADING_SPEED = 1e-8


@kernel
def integrate(px, py, vx, vy, hx, hy, fx, fy, mass, max_speed, max_force, dt):
    f_norm = length(fx, fy)
    scale = max_force / f_norm if f_norm > max_force else 1.0
    scale *= dt
    scale /= mass
    vx = vx + fx * scale
    vy = vy + fy * scale
    speed = length(vx, vy)
    if speed > max_speed:
        shrink = max_speed / speed
        vx *= shrink
        vy *= shrink
        speed *= shrink
    px = px + vx * dt
    py = py + vy * dt
    if speed > MIN_HEADING_SPEED:
        hx = vx / speed
        hy = vy / speed
    return px, py, vx, vy, hx, hy
