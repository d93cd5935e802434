"""TEMPORARY stand-in."""

import math

from steer_env.core.jit import kernel
from steer_env.core.vecmath import TINY, length, normalize, set_magnitude, to_world

_GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))


@kernel
def seek(px, py, vx, vy, tx, ty, max_speed):
    dx, dy = set_magnitude(tx - px, ty - py, max_speed)
    return dx - vx, dy - vy


@kernel
def flee(px, py, vx, vy, tx, ty, max_speed, panic_distance):
    if length(px - tx, py - ty) > panic_distance:
        return 0.0, 0.0
    dx, dy = set_magnitude(px - tx, py - ty, max_speed)
    return dx - vx, dy - vy


@kernel
def arrive(px, py, vx, vy, tx, ty, max_speed, slowing_radius, max_deceleration):
    ox, oy = tx - px, ty - py
    d = length(ox, oy)
    speed = max_speed * min(1.0, d / slowing_radius)
    speed = min(speed, math.sqrt(2.0 * max_deceleration * d))
    dx, dy = set_magnitude(ox, oy, speed)
    return dx - vx, dy - vy


@kernel
def predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time):
    d = length(tpx - px, tpy - py)
    look_ahead = min(d / (max_speed + length(tvx, tvy)), max_prediction_time)
    return tpx + tvx * look_ahead, tpy + tvy * look_ahead


@kernel
def pursuit_target(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time):
    hx, hy = normalize(vx, vy)
    thx, thy = normalize(tvx, tvy)
    ahead = (tpx - px) * hx + (tpy - py) * hy > 0
    head_on = hx * thx + hy * thy < -0.95
    if ahead and head_on:
        return tpx, tpy
    return predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time)


@kernel
def pursuit(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time):
    ax, ay = pursuit_target(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time)
    return seek(px, py, vx, vy, ax, ay, max_speed)


@kernel
def evade(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, threat_range, max_prediction_time):
    qx, qy = predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time)
    fx, fy = set_magnitude(px - qx, py - qy, max_speed)
    if length(tpx - px, tpy - py) <= threat_range:
        return fx - vx, fy - vy
    return 0.0, 0.0


@kernel
def wander(px, py, vx, vy, hx, hy, max_speed, wtx, wty, nx, ny, radius, distance, jitter_dt):
    mx = wtx + nx * jitter_dt
    my = wty + ny * jitter_dt
    cx, cy = set_magnitude(mx, my, radius)
    if length(mx, my) <= TINY:
        cx, cy = radius, 0.0
    wx, wy = to_world(cx + distance, cy + 0.0, hx, hy)
    fx, fy = seek(px, py, vx, vy, wx + px, wy + py, max_speed)
    return fx, fy, cx, cy


@kernel
def wall_avoidance(
    px,
    py,
    vx,
    vy,
    hx,
    hy,
    max_speed,
    xmin,
    ymin,
    xmax,
    ymax,
    feeler_length,
    side_angle,
    side_scale,
):
    c, s = math.cos(side_angle), math.sin(side_angle)
    side = feeler_length * side_scale
    lx, ly = to_world(c, s, hx, hy)
    rx, ry = to_world(c, -s, hx, hy)
    t0x, t0y = px + hx * feeler_length, py + hy * feeler_length
    t1x, t1y = px + lx * side, py + ly * side
    t2x, t2y = px + rx * side, py + ry * side
    lo_x = max(xmin - t0x, xmin - t1x, xmin - t2x) > 0 or px - xmin < side
    lo_y = max(ymin - t0y, ymin - t1y, ymin - t2y) > 0 or py - ymin < side
    hi_x = max(t0x - xmax, t1x - xmax, t2x - xmax) > 0 or xmax - px < side
    hi_y = max(t0y - ymax, t1y - ymax, t2y - ymax) > 0 or ymax - py < side
    fx = 0.0
    fy = 0.0
    if lo_x:
        fx = max_speed - vx
    elif hi_x:
        fx = -max_speed - vx
    if lo_y:
        fy = max_speed - vy
    elif hi_y:
        fy = -max_speed - vy
    return fx, fy


@kernel
def pair_tiebreak(i, j):
    lo = float(min(i, j))
    hi = float(max(i, j))
    angle = _GOLDEN_ANGLE * (lo * 7919.0 + hi)
    sign = 1.0 if i < j else -1.0
    return math.cos(angle) * sign, math.sin(angle) * sign


@kernel
def separation_push(ox, oy, d, i, j, min_distance):
    if d <= TINY:
        bx, by = pair_tiebreak(i, j)
        return bx / min_distance, by / min_distance
    w = max(d, min_distance)
    w = -1.0 / (w * w)
    return ox * w, oy * w


@kernel
def steer_towards(sx, sy, count, vx, vy, max_speed):
    if count <= 0:
        return 0.0, 0.0
    fx, fy = set_magnitude(sx, sy, max_speed)
    return fx - vx, fy - vy
