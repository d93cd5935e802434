"""Scalar kernels of the steering behaviours (one vehicle, or one neighbour pair).

Every behaviour returns a steering force ``(fx, fy)`` in N: Reynolds' *desired velocity
minus current velocity* (Reynolds 1999, "Steering Behaviors For Autonomous Characters"),
except the Buckland forms of separation and wander, chosen by the integer codes of
:mod:`steer_env.core.options` (``separation_form``, ``wander_form``; ``prediction_form``
chooses the pursuit/evade look-ahead).
Optional limits of the numpy API (``None`` there) are ``math.inf`` here. The docstrings of
:mod:`steer_env.behaviors` give the literature sources and the conditions under which each
behaviour does what it promises; the formulas are stated again here, briefly.

Flocking over neighbour pairs is split into a per-pair term (:func:`separation_push`,
:func:`pair_tiebreak`, :func:`approach_time`) and a per-vehicle finish
(:func:`steer_towards`, :func:`cohesion_finish`, :func:`collision_response`), so a loop over
a pair list and a dense loop over the vehicles of one environment share the formulas.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.jit import flat_rows, inline_kernel, kernel, lowest_bit
from steer_env.core.options import PREDICTION_SEED, SEPARATION_BUCKLAND, WANDER_OFFSET
from steer_env.core.vecmath import (
    TINY,
    length,
    normalize,
    perp,
    scale_to,
    set_magnitude,
    to_local,
    to_world,
)

#: Angle increment of the coincident-boid tie-break (the golden angle, radians).
GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))
#: Pursuit aims at the target itself when the two directions of motion have a cosine below
#: this (within ~18 degrees of opposite; Buckland's ``RelativeHeading < -0.95``).
HEAD_ON_COS = -0.95
#: Separation's default floor on a neighbour's distance, m.
MIN_SEPARATION = 1e-3
#: Forces shorter than this count as "no force" (dithered combination, N).
FORCE_EPS = 1e-12
#: Relative speeds whose square is at most this give no closest approach (UCA).
APPROACH_EPS = 1e-12


# --- seek / flee / arrive
@inline_kernel
def seek(px, py, vx, vy, tx, ty, max_speed):
    """``max_speed * (t - p) / |t - p| - v``; at the target the desired velocity is zero."""
    dx, dy = set_magnitude(tx - px, ty - py, max_speed)
    return dx - vx, dy - vy


@inline_kernel
def flee(px, py, vx, vy, tx, ty, max_speed, panic_distance):
    """``max_speed * (p - t) / |p - t| - v``; zero beyond ``panic_distance`` m (inf: none)."""
    ax = px - tx
    ay = py - ty
    d = length(ax, ay)
    if not d <= panic_distance:
        return 0.0, 0.0
    dx, dy = scale_to(ax, ay, d, max_speed)
    return dx - vx, dy - vy


@inline_kernel
def arrive(px, py, vx, vy, tx, ty, max_speed, slowing_radius, max_deceleration):
    """Desired speed ``max_speed * min(1, d / slowing_radius)``, capped at
    ``sqrt(2 * max_deceleration * d)`` unless ``max_deceleration`` is inf; desired velocity
    along ``t - p``; returns ``desired - v``."""
    ox = tx - px
    oy = ty - py
    d = length(ox, oy)
    speed = max_speed * min(1.0, d / slowing_radius)
    if max_deceleration < math.inf:
        speed = min(speed, math.sqrt(2.0 * max_deceleration * d))
    dx, dy = scale_to(ox, oy, d, speed)
    return dx - vx, dy - vy


# --- pursuit / evade
@kernel
def look_ahead_time(d, max_speed, target_speed, target_max_speed, prediction_form):
    """Look-ahead of the prediction at distance ``d``: ``d / (max_speed + target_speed)``
    (Buckland's, ``prediction_form`` 0: the time to close ``d`` if both moved head-on) or
    ``d / target_max_speed`` (the seed document's, ``prediction_form`` 1; zero for a target
    that cannot move)."""
    if prediction_form == PREDICTION_SEED:
        return d / target_max_speed if target_max_speed > 0.0 else 0.0
    return d / (max_speed + target_speed)


@kernel
def predict_position(
    px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
    prediction_form,
):  # fmt: skip
    """``tp + tv * T`` with ``T = min(look_ahead_time(...), max_prediction_time)``
    (``max_prediction_time`` inf: no cap; see :func:`look_ahead_time`)."""
    return predicted_at(
        length(tpx - px, tpy - py), max_speed, tpx, tpy, tvx, tvy, max_prediction_time,
        target_max_speed, prediction_form,
    )  # fmt: skip


@kernel
def predicted_at(
    d, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed, prediction_form
):
    """:func:`predict_position` for a caller that already has the distance ``d`` to the
    target (so it is computed once)."""
    look_ahead = min(
        look_ahead_time(d, max_speed, length(tvx, tvy), target_max_speed, prediction_form),
        max_prediction_time,
    )
    return tpx + tvx * look_ahead, tpy + tvy * look_ahead


@kernel
def pursuit_target(
    px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
    prediction_form,
):  # fmt: skip
    """The target itself when it is ahead and coming head-on (cosine of the two directions
    of motion below :data:`HEAD_ON_COS`), else :func:`predict_position`."""
    hx, hy = normalize(vx, vy)
    thx, thy = normalize(tvx, tvy)
    ahead = (tpx - px) * hx + (tpy - py) * hy > 0.0
    head_on = hx * thx + hy * thy < HEAD_ON_COS
    if ahead and head_on:
        return tpx, tpy
    return predict_position(
        px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
        prediction_form,
    )  # fmt: skip


@inline_kernel
def pursuit(
    px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
    prediction_form,
):  # fmt: skip
    """:func:`seek` of :func:`pursuit_target` (Reynolds' pursuit)."""
    ax, ay = pursuit_target(
        px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
        prediction_form,
    )  # fmt: skip
    return seek(px, py, vx, vy, ax, ay, max_speed)


@inline_kernel
def evade(
    px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, threat_range, max_prediction_time,
    target_max_speed, prediction_form,
):  # fmt: skip
    """:func:`flee` of the threat's :func:`predict_position`; zero when the threat is
    farther than ``threat_range`` m (inf: none)."""
    d = length(tpx - px, tpy - py)
    if not d <= threat_range:
        return 0.0, 0.0
    ax, ay = predicted_at(
        d, max_speed, tpx, tpy, tvx, tvy, max_prediction_time, target_max_speed,
        prediction_form,
    )  # fmt: skip
    return flee(px, py, vx, vy, ax, ay, max_speed, math.inf)


# --- wander
@kernel
def wander_step(wtx, wty, nx, ny, radius, jitter_dt):
    """Buckland's wander target update: add ``noise * jitter_dt`` (noise uniform in
    ``[-1, 1]`` per axis, ``jitter_dt = jitter * dt`` m) and project back onto the circle of
    ``radius`` m; a target jittered exactly onto the centre restarts straight ahead."""
    mx = wtx + nx * jitter_dt
    my = wty + ny * jitter_dt
    n = length(mx, my)
    if n <= TINY:
        return radius, 0.0
    return scale_to(mx, my, n, radius)


@kernel
def wander_world_target(px, py, hx, hy, wtx, wty, distance):
    """World position of the wander target: local ``wt + (distance, 0)`` from ``p``."""
    wx, wy = to_world(wtx + distance, wty, hx, hy)
    return wx + px, wy + py


@inline_kernel
def wander(
    px, py, vx, vy, hx, hy, max_speed, wtx, wty, nx, ny, radius, distance, jitter_dt,
    wander_form,
):  # fmt: skip
    """One wander step: returns ``(fx, fy, new_wtx, new_wty)`` for the target moved by
    :func:`wander_step`, ``distance`` m ahead: the force seeks it (``wander_form`` 0,
    Reynolds' desired velocity) or is the offset ``target - p`` itself (``wander_form`` 1,
    Buckland's and the seed document's ``Wander``)."""
    ox, oy = wander_step(wtx, wty, nx, ny, radius, jitter_dt)
    ax, ay = wander_world_target(px, py, hx, hy, ox, oy, distance)
    if wander_form == WANDER_OFFSET:
        return ax - px, ay - py, ox, oy
    fx, fy = seek(px, py, vx, vy, ax, ay, max_speed)
    return fx, fy, ox, oy


# --- herding
@kernel
def shepherd_target(cx, cy, fx, fy, gx, gy, spread_limit, collect_offset, drive_offset):
    """Strömbom et al. (2014, J. R. Soc. Interface 11:20140719) sheepdog's target point,
    from the flock's centre ``c``, the sheep ``f`` farthest from it and the goal ``g``.

    * **collect** while ``|f - c| > spread_limit`` (the paper's ``r_a N^(2/3)``): the point
      ``collect_offset`` (``r_a``) beyond ``f`` on the line from ``c`` through ``f``, so the
      dog pushes the straggler back towards the centre;
    * **drive** otherwise: the point ``drive_offset`` (``r_a sqrt(N)``) beyond ``c`` on the
      line from ``g`` through ``c``, behind the flock as seen from the goal.

    Returns ``(tx, ty, collecting)``. A flock centred on the goal is driven from the
    world's -x side of it (the direction is then undefined)."""
    ox = fx - cx
    oy = fy - cy
    d = length(ox, oy)
    if d > spread_limit and d > TINY:
        ux, uy = scale_to(ox, oy, d, 1.0)
        return fx + collect_offset * ux, fy + collect_offset * uy, True
    bx = cx - gx
    by = cy - gy
    db = length(bx, by)
    if db <= TINY:
        return cx - drive_offset, cy, False
    ux, uy = scale_to(bx, by, db, 1.0)
    return cx + drive_offset * ux, cy + drive_offset * uy, False


# --- flocking: per-pair terms and per-vehicle finishes
@kernel
def pair_tiebreak(i, j):
    """Unit push for vehicle ``i`` away from a coincident ``j``: direction
    ``GOLDEN_ANGLE * (min(i, j) * 7919 + max(i, j))``, sign + for ``i < j``; antisymmetric and
    deterministic, so two boids on the same spot separate instead of producing NaN."""
    lo = float(min(i, j))
    hi = float(max(i, j))
    angle = GOLDEN_ANGLE * (lo * 7919.0 + hi)
    sign = 1.0 if i < j else -1.0
    return math.cos(angle) * sign, math.sin(angle) * sign


@inline_kernel
def in_view(ox, oy, d, hx, hy, cos_half_view):
    """Whether a neighbour at offset ``(ox, oy)``, ``d = |offset|`` away, is inside the view
    cone of a vehicle heading ``(hx, hy)`` (unit): the angle between the heading and the
    offset is at most the cone's half-angle, whose cosine is ``cos_half_view`` (Reynolds'
    and OpenSteer's field of view). ``cos_half_view <= -1`` sees all around; a coincident
    neighbour (``d <= TINY``) is always seen."""
    return cos_half_view <= -1.0 or d <= TINY or hx * ox + hy * oy >= cos_half_view * d


@kernel
def separation_push(ox, oy, d, i, j, min_distance):
    """Separation term of vehicle ``i`` from neighbour ``j`` at offset ``o = p_j - p_i``,
    distance ``d``: ``-o / max(d, min_distance)**2`` (Buckland's unit vector away divided by
    the distance); coincident pairs (``d <= TINY``) push along
    ``pair_tiebreak(i, j) / min_distance``."""
    if d <= TINY:
        tx, ty = pair_tiebreak(i, j)
        return tx / min_distance, ty / min_distance
    w = max(d, min_distance)
    w = -1.0 / (w * w)
    return ox * w, oy * w


@kernel
def steer_towards(sx, sy, count, vx, vy, max_speed):
    """``set_magnitude(s, max_speed) - v`` when ``count > 0`` neighbours contributed to the
    sum ``s``, else zero (finish of separation and alignment)."""
    if count <= 0:
        return 0.0, 0.0
    dx, dy = set_magnitude(sx, sy, max_speed)
    return dx - vx, dy - vy


@kernel
def separation_finish(sx, sy, count, vx, vy, max_speed, separation_form):
    """Separation's force from the summed :func:`separation_push` ``s``: Reynolds'
    :func:`steer_towards` (``separation_form`` 0: max speed along ``s``, whatever the
    distances) or ``s`` itself (``separation_form`` 1, Buckland's ``Separation``: each
    neighbour pushes with ``1 / d``, N per 1/m); zero without neighbours."""
    if count <= 0:
        return 0.0, 0.0
    if separation_form == SEPARATION_BUCKLAND:
        return sx, sy
    return steer_towards(sx, sy, count, vx, vy, max_speed)


@kernel
def cohesion_finish(sx, sy, count, vx, vy, max_speed):
    """Seek the neighbours' centre: :func:`steer_towards` of the mean offset ``s / count``."""
    c = max(count, 1)
    return steer_towards(sx / c, sy / c, count, vx, vy, max_speed)


@kernel
def approach_time(dpx, dpy, dvx, dvy, combined_radius, time_horizon):
    """Reynolds' unaligned collision test for one pair with relative position ``dp`` and
    relative velocity ``dv`` (other minus self): the time of closest approach
    ``t = -dp.dv / |dv|**2`` when ``0 < t <= time_horizon`` and the predicted miss distance
    ``|dp + dv t|`` is below ``combined_radius``, else inf (no threat)."""
    dv2 = dvx * dvx + dvy * dvy
    if not dv2 > APPROACH_EPS:
        return math.inf
    t = -(dpx * dvx + dpy * dvy) / dv2
    if not (t > 0.0 and t <= time_horizon):
        return math.inf
    if not length(dpx + dvx * t, dpy + dvy * t) < combined_radius:
        return math.inf
    return t


@kernel
def collision_response(px, py, vx, vy, hx, hy, max_speed, opx, opy, ovx, ovy, t):
    """Steering away from the threat chosen by :func:`approach_time` (OpenSteer's
    ``steerToAvoidNeighbors``): sideways, away from where the other will be at ``t``, and
    along the heading ``-0.5`` (slow down) if it is ahead now, ``+0.5`` if behind; scaled
    by ``max_speed``."""
    rx = (opx + ovx * t) - (px + vx * t)
    ry = (opy + ovy * t) - (py + vy * t)
    _, rel_side = to_local(rx, ry, hx, hy)
    side = -1.0 if rel_side > 0.0 else 1.0
    ahead, _ = to_local(opx - px, opy - py, hx, hy)
    forward = -0.5 if ahead > 0.0 else 0.5
    fx, fy = to_world(forward, side, hx, hy)
    return fx * max_speed, fy * max_speed


# --- walls and obstacles
@kernel
def feelers(px, py, hx, hy, feeler_length, side_angle, side_scale):
    """Tips of Buckland's three feelers ``(ax, ay, lx, ly, rx, ry)``: ``feeler_length`` m
    ahead, and ``feeler_length * side_scale`` m at +/- ``side_angle`` radians."""
    c = math.cos(side_angle)
    s = math.sin(side_angle)
    lx, ly = to_world(c, s, hx, hy)
    rx, ry = to_world(c, -s, hx, hy)
    side = feeler_length * side_scale
    return (
        px + hx * feeler_length,
        py + hy * feeler_length,
        px + lx * side,
        py + ly * side,
        px + rx * side,
        py + ry * side,
    )


@kernel
def _containment_axis(p, v, lo, hi, t0, t1, t2, max_speed, margin):
    """One axis of :func:`wall_avoidance`: the force component for position ``p``, velocity
    ``v``, walls ``lo``/``hi`` and feeler tips ``t0..t2`` on that axis."""
    over_lo = max(lo - t0, lo - t1, lo - t2) > 0.0 or p - lo < margin
    over_hi = max(t0 - hi, t1 - hi, t2 - hi) > 0.0 or hi - p < margin
    if over_lo:
        return max_speed - v
    if over_hi:
        return -max_speed - v
    return 0.0


@inline_kernel
def wall_avoidance(
    px, py, vx, vy, hx, hy, max_speed, xmin, ymin, xmax, ymax, feeler_length, side_angle,
    side_scale,
):  # fmt: skip
    """Containment in the box ``[xmin, xmax] x [ymin, ymax]``: a wall counts as touched
    when a feeler tip is beyond it or the vehicle is closer to it than
    ``feeler_length * side_scale``; per touched wall the desired velocity points away from
    it at ``max_speed`` (keeping the component along it), force ``desired - v``."""
    ax, ay, lx, ly, rx, ry = feelers(px, py, hx, hy, feeler_length, side_angle, side_scale)
    margin = feeler_length * side_scale
    fx = _containment_axis(px, vx, xmin, xmax, ax, lx, rx, max_speed, margin)
    fy = _containment_axis(py, vy, ymin, ymax, ay, ly, ry, max_speed, margin)
    return fx, fy


#: Rows of an obstacle table that one bit mask of :func:`obstacle_avoidance` covers.
BOX_MASK_ROWS = 64


@inline_kernel
def box_crossings(table, first, last, px, py, hx, hy, radius, box):
    """Bit ``k - first`` for each row ``k`` in ``[first, last)`` (at most
    :data:`BOX_MASK_ROWS`) of a :func:`~steer_env.core.jit.flat_rows` table of circles
    ``(x, y, r)`` whose circle grown by ``radius`` crosses the detection box of length
    ``box`` ahead of ``(px, py)`` along the unit heading ``(hx, hy)``: one pass without a
    branch (vector code)."""
    crossing = np.uint64(0)
    for k in range(first, last):
        r = table[3 * k + 2]
        grown = r + radius
        lx, ly = to_local(table[3 * k] - px, table[3 * k + 1] - py, hx, hy)
        crosses = (r > 0.0) & (lx + grown >= 0.0) & (lx - grown <= box) & (abs(ly) < grown)
        crossing |= np.uint64(crosses) << np.uint64(k - first)
    return crossing


@inline_kernel
def nearest_crossing(table, first, crossing, px, py, hx, hy, radius, best, ox, oy, orad, found):
    """Of the rows ``first + k`` for each bit ``k`` set in ``crossing``
    (:func:`box_crossings`), lowest first, the one whose grown circle's boundary is
    nearest along the heading, if nearer than ``best`` (or the first when not ``found``):
    ``(best, ox, oy, orad, found)`` updated, with its local centre ``(ox, oy)`` and grown
    radius ``orad``."""
    while crossing != np.uint64(0):
        k = first + lowest_bit(crossing)
        crossing &= crossing - np.uint64(1)
        grown = table[3 * k + 2] + radius
        lx, ly = to_local(table[3 * k] - px, table[3 * k + 1] - py, hx, hy)
        half_chord = math.sqrt(max(grown * grown - ly * ly, 0.0))
        near_x = lx - half_chord if lx - half_chord > 0.0 else lx + half_chord
        if not found or near_x < best:
            best = near_x
            ox = lx
            oy = ly
            orad = grown
            found = True
    return best, ox, oy, orad, found


@kernel
def obstacle_avoidance(
    px, py, vx, vy, hx, hy, max_speed, radius, circles, min_detection_length, braking_weight
):  # fmt: skip
    """Buckland's detection box against circular obstacles (``circles``: a C-contiguous
    ``(M, 3)`` table of rows ``(x, y, r)``; radius 0: an empty row): box length
    ``L = min_detection_length * (1 + speed / max_speed)``; of the obstacles whose radius
    grown by ``radius`` crosses the box, the one whose boundary is nearest along the
    heading (ties: the first row), at local ``(x, y)`` with grown radius ``R``, gives the
    local force ``(-braking_weight * speed * clip((L - (x - R)) / L, 0, 1),
    -sign(y) * max_speed * (R - |y|) / R * (1 + max(L - x, 0) / L))`` (dead ahead: +side).

    Two passes over each run of :data:`BOX_MASK_ROWS` rows: the box test of every row
    into a bit mask (:func:`box_crossings`), then the rows whose bit is set, lowest first
    (:func:`nearest_crossing`; most obstacles miss the box). The first run has a pass of
    its own outside the loop over the others, whose bounds would keep its box test from
    running as vector code."""
    speed = length(vx, vy)
    box = min_detection_length * (1.0 + speed / max_speed)
    table = flat_rows(circles)
    m = circles.shape[0]
    crossing = box_crossings(table, 0, min(m, BOX_MASK_ROWS), px, py, hx, hy, radius, box)
    best, ox, oy, orad, found = nearest_crossing(
        table, 0, crossing, px, py, hx, hy, radius, math.inf, 0.0, 0.0, 0.0, False
    )
    for first in range(BOX_MASK_ROWS, m, BOX_MASK_ROWS):
        last = min(first + BOX_MASK_ROWS, m)
        crossing = box_crossings(table, first, last, px, py, hx, hy, radius, box)
        best, ox, oy, orad, found = nearest_crossing(
            table, first, crossing, px, py, hx, hy, radius, best, ox, oy, orad, found
        )
    if not found:
        return 0.0, 0.0
    multiplier = 1.0 + max(box - ox, 0.0) / box
    away = -1.0 if oy > 0.0 else 1.0
    lateral = away * max_speed * (orad - abs(oy)) / orad * multiplier
    braking = -braking_weight * speed * min(max((box - (ox - orad)) / box, 0.0), 1.0)
    return to_world(braking, lateral, hx, hy)


# --- group tactics
@kernel
def interpose(
    px, py, vx, vy, max_speed, apx, apy, avx, avy, bpx, bpy, bvx, bvy, slowing_radius
):  # fmt: skip
    """:func:`arrive` at the midpoint of ``a`` and ``b`` predicted ``T`` s ahead,
    ``T = |(a + b) / 2 - p| / max_speed`` (Buckland's ``Interpose``)."""
    t = length(0.5 * (apx + bpx) - px, 0.5 * (apy + bpy) - py) / max_speed
    mx = 0.5 * (apx + avx * t + bpx + bvx * t)
    my = 0.5 * (apy + avy * t + bpy + bvy * t)
    return arrive(px, py, vx, vy, mx, my, max_speed, slowing_radius, math.inf)


@kernel
def hiding_spot(hunter_x, hunter_y, cx, cy, r, distance_from_boundary):
    """The point ``distance_from_boundary`` m beyond the obstacle's edge, on the far side
    from the hunter: ``c + normalize(c - hunter) * (r + distance_from_boundary)``."""
    ax, ay = normalize(cx - hunter_x, cy - hunter_y)
    reach = r + distance_from_boundary
    return cx + ax * reach, cy + ay * reach


@kernel
def hide(
    px, py, vx, vy, max_speed, hunter_px, hunter_py, hunter_vx, hunter_vy, centers, radii,
    slowing_radius, distance_from_boundary,
):  # fmt: skip
    """:func:`arrive` at the nearest :func:`hiding_spot`; with no obstacles, :func:`evade`
    the hunter (Buckland's ``Hide``). Rows of radius 0 are no obstacle."""
    found = False
    best = math.inf
    bx = 0.0
    by = 0.0
    for k in range(radii.shape[0]):
        if not radii[k] > 0.0:
            continue
        sx, sy = hiding_spot(
            hunter_px, hunter_py, centers[k, 0], centers[k, 1], radii[k], distance_from_boundary
        )
        d = length(sx - px, sy - py)
        if not found or d < best:
            best = d
            bx = sx
            by = sy
            found = True
    if not found:
        return evade(
            px, py, vx, vy, max_speed, hunter_px, hunter_py, hunter_vx, hunter_vy, math.inf,
            math.inf, 0.0, 0,
        )  # fmt: skip
    return arrive(px, py, vx, vy, bx, by, max_speed, slowing_radius, math.inf)


@kernel
def offset_pursuit(
    px, py, vx, vy, max_speed, lpx, lpy, lvx, lvy, lhx, lhy, offx, offy, slowing_radius
):  # fmt: skip
    """:func:`arrive` at the leader's offset point (local ``(forward, side)`` m in the
    leader's frame) predicted with :func:`predict_position`'s look-ahead."""
    wx, wy = to_world(offx, offy, lhx, lhy)
    ax, ay = predict_position(
        px, py, max_speed, wx + lpx, wy + lpy, lvx, lvy, math.inf, 0.0, 0
    )  # fmt: skip
    return arrive(px, py, vx, vy, ax, ay, max_speed, slowing_radius, math.inf)


# --- path following
@kernel
def path_target(px, py, vx, vy, path, prediction_time, look_ahead, loop):
    """Project ``p + v * prediction_time`` onto the polyline ``path`` (``(M, 2)``, ``M >= 2``,
    closed when ``loop``), then move ``look_ahead`` m further along it (wrapping when
    ``loop``, clamped at the end otherwise)."""
    m = path.shape[0]
    n_seg = m if loop else m - 1
    fx = px + vx * prediction_time
    fy = py + vy * prediction_time
    total = 0.0
    best = math.inf
    s = 0.0
    for k in range(n_seg):
        ax = path[k, 0]
        ay = path[k, 1]
        k1 = k + 1 if k + 1 < m else 0
        sx = path[k1, 0] - ax
        sy = path[k1, 1] - ay
        seg_len = length(sx, sy)
        t = ((fx - ax) * sx + (fy - ay) * sy) / max(seg_len * seg_len, TINY)
        t = min(max(t, 0.0), 1.0)
        d = length(fx - (ax + sx * t), fy - (ay + sy * t))
        if k == 0 or d < best:
            best = d
            s = total + t * seg_len
        total += seg_len
    s += look_ahead
    s = s % total if loop else min(s, total)
    # The segment holding arc length s: the last one starting at or before it.
    cum = 0.0
    for k in range(n_seg):
        k1 = k + 1 if k + 1 < m else 0
        sx = path[k1, 0] - path[k, 0]
        sy = path[k1, 1] - path[k, 1]
        seg_len = length(sx, sy)
        if k == n_seg - 1 or cum + seg_len > s:
            frac = (s - cum) / max(seg_len, TINY)
            return path[k, 0] + sx * frac, path[k, 1] + sy * frac
        cum += seg_len
    return path[0, 0], path[0, 1]  # unreachable for M >= 2


@kernel
def follow_path(px, py, vx, vy, max_speed, path, prediction_time, look_ahead, loop):
    """:func:`arrive` at :func:`path_target` with slowing radius ``look_ahead``."""
    ax, ay = path_target(px, py, vx, vy, path, prediction_time, look_ahead, loop)
    return arrive(px, py, vx, vy, ax, ay, max_speed, look_ahead, math.inf)


# --- flow fields (Reynolds 1999, "flow field following")
@kernel
def flow_field_following(px, py, vx, vy, max_speed, fvx, fvy):
    """Desired velocity = the field's vector ``(fvx, fvy)`` (sampled at the vehicle's
    predicted position) scaled to ``max_speed``; returns ``desired - v``. A zero field
    vector brakes."""
    dx, dy = set_magnitude(fvx, fvy, max_speed)
    return dx - vx, dy - vy


@kernel
def vortex_field(px, py, cx, cy, radius, spin, gain):
    """Unit-scale flow circling ``(cx, cy)``: the tangent ``spin * perp(r_hat)`` (``spin``
    +1 counter-clockwise, -1 clockwise) plus a radial correction
    ``gain * clip((radius - d) / radius, -1, 1) * r_hat`` towards the preferred ``radius``
    m, so a follower orbits at about that radius. At the centre ``r_hat`` is +x (finite)."""
    rx = px - cx
    ry = py - cy
    d = length(rx, ry)
    if d <= TINY:
        ux = 1.0
        uy = 0.0
    else:
        ux = rx / d
        uy = ry / d
    tx, ty = perp(ux, uy)
    pull = gain * min(max((radius - d) / radius, -1.0), 1.0)
    return spin * tx + pull * ux, spin * ty + pull * uy
