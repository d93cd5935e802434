"""Compiled array loops over the scalar kernels: what the numpy API runs.

Every loop takes C-contiguous float64 arrays whose first axis is either the number of rows
``n`` (one row per vehicle) or 1 (the same value for every vehicle: a broadcast); vectors
are ``(rows, 2)``, per-vehicle scalars ``(rows,)``. :mod:`steer_env.core.arrays` prepares
them from arbitrary broadcastable inputs. The loops only index and call kernels: every
formula is in the kernel modules.

Loops are compiled on first call (or loaded from the on-disk cache, see
:mod:`steer_env.core.jit`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from steer_env.core import behaviors as cb
from steer_env.core import combine as cc
from steer_env.core import physics as cp
from steer_env.core import streams as cs
from steer_env.core import vecmath as cv
from steer_env.core.arrays import NotFast
from steer_env.core.jit import kernel


@kernel
def _s(a):
    """Row step of an operand: 1 when it has one row per vehicle, 0 when broadcast."""
    return 1 if a.shape[0] > 1 else 0


# --- vecmath
@kernel
def length(v, out):
    sv = _s(v)
    for i in range(out.shape[0]):
        a = i * sv
        out[i] = cv.length(v[a, 0], v[a, 1])


@kernel
def normalize(v, out):
    sv = _s(v)
    for i in range(out.shape[0]):
        a = i * sv
        out[i, 0], out[i, 1] = cv.normalize(v[a, 0], v[a, 1])


@kernel
def set_magnitude(v, m, out):
    sv, sm = _s(v), _s(m)
    for i in range(out.shape[0]):
        a = i * sv
        out[i, 0], out[i, 1] = cv.set_magnitude(v[a, 0], v[a, 1], m[i * sm])


@kernel
def truncate(v, m, out):
    sv, sm = _s(v), _s(m)
    for i in range(out.shape[0]):
        a = i * sv
        out[i, 0], out[i, 1] = cv.truncate(v[a, 0], v[a, 1], m[i * sm])


@kernel
def perp(v, out):
    sv = _s(v)
    for i in range(out.shape[0]):
        a = i * sv
        out[i, 0], out[i, 1] = cv.perp(v[a, 0], v[a, 1])


@kernel
def to_local(v, o, h, out):
    """``to_local(v - o, h)`` per row (``o`` is a zero row for plain vectors)."""
    sv, so, sh = _s(v), _s(o), _s(h)
    for i in range(out.shape[0]):
        a, b, c = i * sv, i * so, i * sh
        out[i, 0], out[i, 1] = cv.to_local(v[a, 0] - o[b, 0], v[a, 1] - o[b, 1], h[c, 0], h[c, 1])


@kernel
def to_world(v, o, h, out):
    """``to_world(v, h) + o`` per row (``o`` is a zero row for plain vectors)."""
    sv, so, sh = _s(v), _s(o), _s(h)
    for i in range(out.shape[0]):
        a, b, c = i * sv, i * so, i * sh
        x, y = cv.to_world(v[a, 0], v[a, 1], h[c, 0], h[c, 1])
        out[i, 0] = x + o[b, 0]
        out[i, 1] = y + o[b, 1]


@kernel
def heading_from(v, h, min_speed, out):
    sv, sh = _s(v), _s(h)
    for i in range(out.shape[0]):
        a, c = i * sv, i * sh
        out[i, 0], out[i, 1] = cv.heading_from(v[a, 0], v[a, 1], h[c, 0], h[c, 1], min_speed)


# --- physics
@kernel
def integrate(p, v, h, f, mass, max_speed, max_force, dt, p_out, v_out, h_out):
    """In place allowed: each row's inputs are read before its outputs are written."""
    sp, sv, sh, sf = _s(p), _s(v), _s(h), _s(f)
    sm, ss, sx = _s(mass), _s(max_speed), _s(max_force)
    for i in range(p_out.shape[0]):
        a, b, c, d = i * sp, i * sv, i * sh, i * sf
        r = cp.integrate(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], h[c, 0], h[c, 1], f[d, 0], f[d, 1],
            mass[i * sm], max_speed[i * ss], max_force[i * sx], dt,
        )  # fmt: skip
        p_out[i, 0], p_out[i, 1], v_out[i, 0], v_out[i, 1], h_out[i, 0], h_out[i, 1] = r


# --- seek / flee / arrive / pursuit / evade
@kernel
def seek(p, v, t, ms, out):
    sp, sv, st, sm = _s(p), _s(v), _s(t), _s(ms)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * st
        out[i, 0], out[i, 1] = cb.seek(p[a, 0], p[a, 1], v[b, 0], v[b, 1], t[c, 0], t[c, 1],
                                       ms[i * sm])  # fmt: skip


@kernel
def flee(p, v, t, ms, panic, out):
    sp, sv, st, sm, sk = _s(p), _s(v), _s(t), _s(ms), _s(panic)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * st
        out[i, 0], out[i, 1] = cb.flee(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], t[c, 0], t[c, 1], ms[i * sm], panic[i * sk]
        )


@kernel
def arrive(p, v, t, ms, slowing, decel, out):
    sp, sv, st, sm, sr, sd = _s(p), _s(v), _s(t), _s(ms), _s(slowing), _s(decel)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * st
        out[i, 0], out[i, 1] = cb.arrive(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], t[c, 0], t[c, 1], ms[i * sm], slowing[i * sr],
            decel[i * sd],
        )  # fmt: skip


@kernel
def shepherd_target(c, f, g, limit, collect, drive, out, collecting):
    sc, sf, sg, sl, s1, s2 = _s(c), _s(f), _s(g), _s(limit), _s(collect), _s(drive)
    for i in range(out.shape[0]):
        a, b, k = i * sc, i * sf, i * sg
        out[i, 0], out[i, 1], collecting[i] = cb.shepherd_target(
            c[a, 0], c[a, 1], f[b, 0], f[b, 1], g[k, 0], g[k, 1], limit[i * sl],
            collect[i * s1], drive[i * s2],
        )  # fmt: skip


@kernel
def predict_position(p, ms, tp, tv, max_t, tms, form, out):
    sp, sm, sa, sb, st, sx = _s(p), _s(ms), _s(tp), _s(tv), _s(max_t), _s(tms)
    for i in range(out.shape[0]):
        a, c, d = i * sp, i * sa, i * sb
        out[i, 0], out[i, 1] = cb.predict_position(
            p[a, 0], p[a, 1], ms[i * sm], tp[c, 0], tp[c, 1], tv[d, 0], tv[d, 1], max_t[i * st],
            tms[i * sx], form,
        )  # fmt: skip


@kernel
def pursuit(p, v, ms, tp, tv, max_t, tms, form, aim_only, out):
    """:func:`cb.pursuit` per row, or :func:`cb.pursuit_target` when ``aim_only``."""
    sp, sv, sm, sa, sb, st, sx = _s(p), _s(v), _s(ms), _s(tp), _s(tv), _s(max_t), _s(tms)
    for i in range(out.shape[0]):
        a, b, c, d = i * sp, i * sv, i * sa, i * sb
        px, py, vx, vy = p[a, 0], p[a, 1], v[b, 0], v[b, 1]
        tpx, tpy, tvx, tvy = tp[c, 0], tp[c, 1], tv[d, 0], tv[d, 1]
        # Explicit arguments: numba cannot inline a call with *args.
        if aim_only:
            out[i, 0], out[i, 1] = cb.pursuit_target(
                px, py, vx, vy, ms[i * sm], tpx, tpy, tvx, tvy, max_t[i * st], tms[i * sx], form
            )
        else:
            out[i, 0], out[i, 1] = cb.pursuit(
                px, py, vx, vy, ms[i * sm], tpx, tpy, tvx, tvy, max_t[i * st], tms[i * sx], form
            )


@kernel
def evade(p, v, ms, tp, tv, threat_range, max_t, tms, form, out):
    sp, sv, sm, sa, sb = _s(p), _s(v), _s(ms), _s(tp), _s(tv)
    sr, st, sx = _s(threat_range), _s(max_t), _s(tms)
    for i in range(out.shape[0]):
        a, b, c, d = i * sp, i * sv, i * sa, i * sb
        out[i, 0], out[i, 1] = cb.evade(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], tp[c, 0], tp[c, 1], tv[d, 0],
            tv[d, 1], threat_range[i * sr], max_t[i * st], tms[i * sx], form,
        )  # fmt: skip


# --- wander
@kernel
def wander(p, v, h, ms, wt, noise, radius, distance, jitter_dt, form, out, wt_out):
    sp, sv, sh, sm, sw, sn = _s(p), _s(v), _s(h), _s(ms), _s(wt), _s(noise)
    for i in range(out.shape[0]):
        a, b, c, d, e = i * sp, i * sv, i * sh, i * sw, i * sn
        out[i, 0], out[i, 1], wt_out[i, 0], wt_out[i, 1] = cb.wander(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], h[c, 0], h[c, 1], ms[i * sm], wt[d, 0],
            wt[d, 1], noise[e, 0], noise[e, 1], radius, distance, jitter_dt, form,
        )  # fmt: skip


@kernel
def wander_world_target(p, h, wt, distance, out):
    sp, sh, sw = _s(p), _s(h), _s(wt)
    for i in range(out.shape[0]):
        a, c, d = i * sp, i * sh, i * sw
        out[i, 0], out[i, 1] = cb.wander_world_target(
            p[a, 0], p[a, 1], h[c, 0], h[c, 1], wt[d, 0], wt[d, 1], distance
        )


# --- flocking over neighbour pairs (i, j, offset = p_j - p_i, distance)
@kernel
def separation(pi, pj, offset, distance, v, ms, min_distance, form, out):
    n = out.shape[0]
    total = np.zeros((n, 2))
    count = np.zeros(n, np.int64)
    for k in range(pi.shape[0]):
        i = pi[k]
        x, y = cb.separation_push(offset[k, 0], offset[k, 1], distance[k], i, pj[k],
                                  min_distance)  # fmt: skip
        total[i, 0] += x
        total[i, 1] += y
        count[i] += 1
    sv, sm = _s(v), _s(ms)
    for i in range(n):
        a = i * sv
        out[i, 0], out[i, 1] = cb.separation_finish(
            total[i, 0], total[i, 1], count[i], v[a, 0], v[a, 1], ms[i * sm], form
        )


@kernel
def alignment(pi, pj, v, h, ms, out):
    n = out.shape[0]
    total = np.zeros((n, 2))
    count = np.zeros(n, np.int64)
    for k in range(pi.shape[0]):
        i = pi[k]
        j = pj[k]
        total[i, 0] += h[j, 0]
        total[i, 1] += h[j, 1]
        count[i] += 1
    sv, sm = _s(v), _s(ms)
    for i in range(n):
        a = i * sv
        out[i, 0], out[i, 1] = cb.steer_towards(
            total[i, 0], total[i, 1], count[i], v[a, 0], v[a, 1], ms[i * sm]
        )


@kernel
def cohesion(pi, offset, v, ms, out):
    n = out.shape[0]
    total = np.zeros((n, 2))
    count = np.zeros(n, np.int64)
    for k in range(pi.shape[0]):
        i = pi[k]
        total[i, 0] += offset[k, 0]
        total[i, 1] += offset[k, 1]
        count[i] += 1
    sv, sm = _s(v), _s(ms)
    for i in range(n):
        a = i * sv
        out[i, 0], out[i, 1] = cb.cohesion_finish(
            total[i, 0], total[i, 1], count[i], v[a, 0], v[a, 1], ms[i * sm]
        )


@kernel
def unaligned_collision_avoidance(pi, pj, offset, p, v, h, ms, radius, time_horizon, out):
    n = out.shape[0]
    soonest = np.full(n, math.inf)
    other = np.full(n, -1, np.int64)
    sr, sm = _s(radius), _s(ms)
    for k in range(pi.shape[0]):
        i = pi[k]
        j = pj[k]
        t = cb.approach_time(offset[k, 0], offset[k, 1], v[j, 0] - v[i, 0], v[j, 1] - v[i, 1],
                             radius[i * sr] + radius[j * sr], time_horizon)  # fmt: skip
        if t < soonest[i]:  # strict: the first pair wins ties
            soonest[i] = t
            other[i] = j
    for i in range(n):
        j = other[i]
        if j < 0:
            out[i, 0] = 0.0
            out[i, 1] = 0.0
        else:
            out[i, 0], out[i, 1] = cb.collision_response(
                p[i, 0], p[i, 1], v[i, 0], v[i, 1], h[i, 0], h[i, 1], ms[i * sm], p[j, 0],
                p[j, 1], v[j, 0], v[j, 1], soonest[i],
            )  # fmt: skip


# --- walls and obstacles
@kernel
def feelers(p, h, feeler_length, side_angle, side_scale, out):
    sp, sh = _s(p), _s(h)
    for i in range(out.shape[0]):
        a, c = i * sp, i * sh
        r = cb.feelers(p[a, 0], p[a, 1], h[c, 0], h[c, 1], feeler_length, side_angle, side_scale)
        out[i, 0, 0], out[i, 0, 1], out[i, 1, 0], out[i, 1, 1], out[i, 2, 0], out[i, 2, 1] = r


@kernel
def wall_avoidance(p, v, h, ms, bounds, feeler_length, side_angle, side_scale, out):
    sp, sv, sh, sm = _s(p), _s(v), _s(h), _s(ms)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * sh
        out[i, 0], out[i, 1] = cb.wall_avoidance(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], h[c, 0], h[c, 1], ms[i * sm], bounds[0],
            bounds[1], bounds[2], bounds[3], feeler_length, side_angle, side_scale,
        )  # fmt: skip


@kernel
def obstacle_avoidance(p, v, h, ms, radius, circles, min_length, braking, out):
    sp, sv, sh, sm, sr = _s(p), _s(v), _s(h), _s(ms), _s(radius)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * sh
        out[i, 0], out[i, 1] = cb.obstacle_avoidance(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], h[c, 0], h[c, 1], ms[i * sm], radius[i * sr],
            circles, min_length, braking,
        )  # fmt: skip


# --- group tactics
@kernel
def interpose(p, v, ms, ap, av, bp, bv, slowing, out):
    sp, sv, sm, s1, s2, s3, s4, sr = (
        _s(p),
        _s(v),
        _s(ms),
        _s(ap),
        _s(av),
        _s(bp),
        _s(bv),
        _s(slowing),
    )
    for i in range(out.shape[0]):
        a, b, c1, c2, c3, c4 = i * sp, i * sv, i * s1, i * s2, i * s3, i * s4
        out[i, 0], out[i, 1] = cb.interpose(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], ap[c1, 0], ap[c1, 1], av[c2, 0],
            av[c2, 1], bp[c3, 0], bp[c3, 1], bv[c4, 0], bv[c4, 1], slowing[i * sr],
        )  # fmt: skip


@kernel
def hiding_spots(hunter, centers, radii, distance, out):
    """``out`` is ``(n, M, 2)``."""
    sh = _s(hunter)
    for i in range(out.shape[0]):
        a = i * sh
        for k in range(radii.shape[0]):
            out[i, k, 0], out[i, k, 1] = cb.hiding_spot(
                hunter[a, 0], hunter[a, 1], centers[k, 0], centers[k, 1], radii[k], distance
            )


@kernel
def hide(p, v, ms, hp, hv, centers, radii, slowing, distance, out):
    sp, sv, sm, sa, sb, sr = _s(p), _s(v), _s(ms), _s(hp), _s(hv), _s(slowing)
    for i in range(out.shape[0]):
        a, b, c, d = i * sp, i * sv, i * sa, i * sb
        out[i, 0], out[i, 1] = cb.hide(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], hp[c, 0], hp[c, 1], hv[d, 0],
            hv[d, 1], centers, radii, slowing[i * sr], distance,
        )  # fmt: skip


@kernel
def offset_pursuit(p, v, ms, lp, lv, lh, off, slowing, out):
    sp, sv, sm, s1, s2, s3, s4, sr = (
        _s(p),
        _s(v),
        _s(ms),
        _s(lp),
        _s(lv),
        _s(lh),
        _s(off),
        _s(slowing),
    )
    for i in range(out.shape[0]):
        a, b, c1, c2, c3, c4 = i * sp, i * sv, i * s1, i * s2, i * s3, i * s4
        out[i, 0], out[i, 1] = cb.offset_pursuit(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], lp[c1, 0], lp[c1, 1], lv[c2, 0],
            lv[c2, 1], lh[c3, 0], lh[c3, 1], off[c4, 0], off[c4, 1], slowing[i * sr],
        )  # fmt: skip


# --- paths and flow fields
@kernel
def follow_path(p, v, ms, path, prediction_time, look_ahead, loop, aim_only, out):
    """:func:`cb.follow_path` per row, or :func:`cb.path_target` when ``aim_only``."""
    sp, sv, sm = _s(p), _s(v), _s(ms)
    for i in range(out.shape[0]):
        a, b = i * sp, i * sv
        if aim_only:
            out[i, 0], out[i, 1] = cb.path_target(
                p[a, 0], p[a, 1], v[b, 0], v[b, 1], path, prediction_time, look_ahead, loop
            )
        else:
            out[i, 0], out[i, 1] = cb.follow_path(
                p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], path, prediction_time,
                look_ahead, loop,
            )  # fmt: skip


@kernel
def flow_field_following(p, v, ms, fv, out):
    sp, sv, sm, sf = _s(p), _s(v), _s(ms), _s(fv)
    for i in range(out.shape[0]):
        a, b, c = i * sp, i * sv, i * sf
        out[i, 0], out[i, 1] = cb.flow_field_following(
            p[a, 0], p[a, 1], v[b, 0], v[b, 1], ms[i * sm], fv[c, 0], fv[c, 1]
        )


@kernel
def vortex_field(p, c, radius, spin, gain, out):
    sp, sc, sr = _s(p), _s(c), _s(radius)
    for i in range(out.shape[0]):
        a, b = i * sp, i * sc
        out[i, 0], out[i, 1] = cb.vortex_field(
            p[a, 0], p[a, 1], c[b, 0], c[b, 1], radius[i * sr], spin, gain
        )


# --- combining (forces stacked as (K, rows, 2), one weight per force)
@kernel
def weighted_sum(forces, weights, max_force, out):
    sm = _s(max_force)
    for i in range(out.shape[0]):
        tx = 0.0
        ty = 0.0
        for k in range(forces.shape[0]):
            a = i * _s(forces[k])
            tx, ty = cc.weighted_add(tx, ty, forces[k, a, 0], forces[k, a, 1], weights[k])
        out[i, 0], out[i, 1] = cv.truncate(tx, ty, max_force[i * sm])


@kernel
def accumulate(total, f, weight, max_force, budget):
    """Adds ``weight * f`` to ``total`` in place (:func:`cc.accumulate`); writes each row's
    budget left into ``budget``."""
    sf, sm = _s(f), _s(max_force)
    for i in range(total.shape[0]):
        a = i * sf
        mf = max_force[i * sm]
        tx, ty, _ = cc.accumulate(total[i, 0], total[i, 1], weight * f[a, 0], weight * f[a, 1],
                                  mf)  # fmt: skip
        total[i, 0] = tx
        total[i, 1] = ty
        budget[i] = cc.budget_left(tx, ty, mf)


@kernel
def dithered(forces, weights, probabilities, draws, max_force, out):
    sm = _s(max_force)
    for i in range(out.shape[0]):
        rx = 0.0
        ry = 0.0
        for k in range(forces.shape[0]):
            a = i * _s(forces[k])
            sx, sy, wins = cc.dither_candidate(
                forces[k, a, 0], forces[k, a, 1], weights[k], probabilities[k], draws[k, i]
            )
            if wins:
                rx = sx
                ry = sy
                break
        out[i, 0], out[i, 1] = cv.truncate(rx, ry, max_force[i * sm])


# --- random streams
@kernel
def uniform(key, counter, count, out):
    """``out[e, c]`` = draw ``counter[e] + c`` of stream ``key[e]``."""
    for e in range(key.shape[0]):
        for c in range(count):
            out[e, c] = cs.uniform_draw(key[e], counter[e], c)


@kernel
def key_from_seed(seed, out):
    for e in range(seed.shape[0]):
        out[e] = cs.key_from_seed64(seed[e])


# --- entries: the array API's operands as they are, for the common layouts
#
# An entry takes the operands of an API function unchanged and runs its loop on them when
# they have the layouts of the fast path of :func:`steer_env.core.arrays.rows`: float64
# vectors ``(n, 2)`` or ``(2,)`` and per-vehicle scalars ``(n,)`` or ``()``, at least one
# operand with rows and every such operand with the same ``n`` (any strides, read-only
# inputs included). The loop gets exactly the arrays ``rows`` would pass it (``(2,)`` and
# ``()`` as a one-row view), so results are bit for bit those of the general path.
# Anything else raises :class:`NotFast` and the caller takes the general path, which also
# gives the errors. Operands of other types never run a loop here: the helpers below pick,
# at compile time, an implementation that raises (with a placeholder of the loop's types).
# This saves the per-operand Python work of ``rows`` (the dispatcher types the arguments in C).


def _vec_n(a, n):
    """Rows of vector operand ``a`` checked against ``n`` (-1: none yet); ``n`` if one."""


def _scalar_n(a, n):
    """Rows of per-vehicle scalar operand ``a`` checked against ``n``; ``n`` if one."""


def _vec_rows(a):
    """Vector operand ``a`` as ``(rows, 2)``: itself, or ``(2,)`` as a one-row view."""


def _scalar_rows(a):
    """Per-vehicle scalar operand ``a`` as ``(rows,)``: itself, or ``()`` as a one-row view."""


def _vec_out(a, n):
    """Output ``a`` when it is a writable float64 ``(n, 2)`` array (``n`` >= 0)."""


@kernel
def _not_fast(n):
    if n > -2:  # always (n >= -1); the return gives the helpers' integer type
        raise NotFast
    return n


@kernel
def _fresh_vectors(n):
    """A new ``(n, 2)`` result when some operand had rows (``n`` >= 0)."""
    if n < 0:
        raise NotFast
    return np.empty((n, 2))


def _f64(a, ndim):
    return isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim == ndim


@overload(_vec_n, jit_options={"nogil": True})
def _vec_n_impl(a, n):
    if _f64(a, 2):

        def rows_n(a, n):
            m = a.shape[0]
            if a.shape[1] != 2 or (n >= 0 and m != n):
                raise NotFast
            return m

        return rows_n
    if _f64(a, 1):

        def one_n(a, n):
            if a.shape[0] != 2:
                raise NotFast
            return n

        return one_n
    return lambda a, n: _not_fast(n)


@overload(_scalar_n, jit_options={"nogil": True})
def _scalar_n_impl(a, n):
    if _f64(a, 1):

        def rows_n(a, n):
            m = a.shape[0]
            if n >= 0 and m != n:
                raise NotFast
            return m

        return rows_n
    if _f64(a, 0):
        return lambda a, n: n
    return lambda a, n: _not_fast(n)


@overload(_vec_rows, jit_options={"nogil": True})
def _vec_rows_impl(a):
    if _f64(a, 2):
        return lambda a: a
    if _f64(a, 1):
        return lambda a: a[None]
    return lambda a: np.empty((0, 2))  # never used: _vec_n raised


@overload(_scalar_rows, jit_options={"nogil": True})
def _scalar_rows_impl(a):
    if _f64(a, 1):
        return lambda a: a
    if _f64(a, 0):
        return lambda a: a[None]
    return lambda a: np.empty(0)  # never used: _scalar_n raised


@overload(_vec_out, jit_options={"nogil": True})
def _vec_out_impl(a, n):
    if _f64(a, 2) and a.mutable:

        def out(a, n):
            if n < 0 or a.shape[0] != n or a.shape[1] != 2:
                raise NotFast
            return a

        return out

    def not_fast(a, n):
        _not_fast(n)
        return np.empty((0, 2))

    return not_fast


@kernel
def seek_entry(p, v, t, ms):
    """:func:`seek` on the API's operands (see the section comment); returns ``(n, 2)``."""
    n = _vec_n(p, _vec_n(v, _vec_n(t, _scalar_n(ms, -1))))
    out = _fresh_vectors(n)
    seek(_vec_rows(p), _vec_rows(v), _vec_rows(t), _scalar_rows(ms), out)
    return out


@kernel
def integrate_entry(p, v, h, f, mass, max_speed, max_force, dt, p_out, v_out, h_out):
    """:func:`integrate` on the API's operands into ``(n, 2)`` outputs (which may be inputs)."""
    n = _vec_n(p, _vec_n(v, _vec_n(h, _vec_n(f, -1))))
    n = _scalar_n(mass, _scalar_n(max_speed, _scalar_n(max_force, n)))
    po, vo, ho = _vec_out(p_out, n), _vec_out(v_out, n), _vec_out(h_out, n)
    integrate(
        _vec_rows(p), _vec_rows(v), _vec_rows(h), _vec_rows(f), _scalar_rows(mass),
        _scalar_rows(max_speed), _scalar_rows(max_force), dt, po, vo, ho,
    )  # fmt: skip
