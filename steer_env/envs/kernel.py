"""The compiled step of the pursuit/evasion simulation: one numba kernel for every env.

:class:`~steer_env.envs.simulation.Simulation` advances its ``E`` environments with one call
of :func:`step`, whatever ``E`` is: the single env (``gym.make``, ``E = 1``), the native
vector env (``gym.make_vec``) and the SB3 adapter all run this code, environment by
environment, so their trajectories are identical for identical seeds.

Why compiled: a pursuit/evasion step is a few hundred floating-point operations on 2-3
vehicles. Written as numpy array expressions it took ~550 numpy calls (each 1-4 us of
overhead, whatever the array size), which capped the single env at ~2,200 steps/s. One
kernel call does the whole step, scripted opponents, physics, walls, capture, rewards and
observations included: about 1 us for one environment (plus ~2 us to call it), 0.1-0.3 us
per environment in large batches, where :func:`step` runs each stage over a block of
environments before the next stage (short, independent loop bodies the CPU overlaps).

What it computes is defined by the numpy library, and this module is a transcription of it
(same formulas, same operation order; ``tests/test_kernel.py`` checks it against the numpy
functions on random states):

* scripted evaders: :func:`steer_env.envs.opponents.evader_forces` (wall avoidance, evade,
  wander, combined by :func:`steer_env.combine.prioritized`);
* scripted pursuers: :func:`steer_env.envs.opponents.pursuer_forces` (wall avoidance,
  separation over dense neighbour pairs, pursuit);
* the agent's force: :meth:`Simulation.agent_force`;
* physics: :func:`steer_env.physics.integrate`, then the inelastic arena walls;
* swept capture test, rewards (capture, escape, potential-based shaping) and the
  egocentric observation of :class:`~steer_env.envs.pursuit.PursuitEnv`.

Vector lengths are ``sqrt(x*x + y*y)`` (what :func:`steer_env.vecmath.length` computes; it
may use :func:`numpy.hypot`, which differs in the last bit at most). Prioritized combination
runs over the opponents of one environment at a time (exactly what ``combine.prioritized``
does for a single env), so an environment's trajectory never depends on the others.

Compilation: ``cache=True``. The first use on a machine compiles for about 10 s (8.7 s on a
2-core AMD EPYC, ``python -m benchmarks --sections compile``) and writes the machine code to
``__pycache__`` next to this file (or to ``NUMBA_CACHE_DIR``); later processes load it in
about 0.3 s. ``import steer_env`` does not import numba: the first ``Simulation`` does.
``NUMBA_DISABLE_JIT=1`` runs the same code as plain Python (slowly, with identical results).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from steer_env import physics, vecmath
from steer_env.envs import streams
from steer_env.envs.simulation import _START_CANDIDATES, OPPONENT_FEATURES, SELF_FEATURES

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

#: Lengths below this are treated as zero when dividing by a length.
TINY = vecmath.TINY
#: Prioritized combination stops when no vehicle has more budget than this (combine).
BUDGET_EPS = 1e-12
#: Speeds below this do not change a heading.
MIN_HEADING_SPEED = physics.MIN_HEADING_SPEED
#: Separation's distance floor, m (behaviors.separation's ``min_distance``).
MIN_SEPARATION = 1e-3
_GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))

# The random stream of streams.py (SplitMix64 of key + (counter + 1) * GAMMA), evaluated one
# draw at a time; tests/test_kernel.py checks it draw for draw against streams.uniform.
_GAMMA = streams.GAMMA
_M1 = streams._M1
_M2 = streams._M2
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_INV_2_53 = 1.0 / 9007199254740992.0

# Layout of the float64 parameter vector built by :func:`pack_params`.
P_DT = 0
P_HALF = 1
P_ARENA = 2
P_DIAGONAL = 3
P_CAPTURE_RADIUS = 4
P_TIME_LIMIT = 5
P_SHAPING = 6
P_SHAPING_SCALE = 7
P_SHAPING_GAMMA = 8
P_WALL_WEIGHT = 9
P_FEELER = 10
P_FEELER_SIDE = 11
P_FEELER_COS = 12
P_FEELER_SIN = 13
P_EVADE_WEIGHT = 14
P_THREAT_RANGE = 15
P_WANDER_WEIGHT = 16
P_WANDER_RADIUS = 17
P_WANDER_DISTANCE = 18
P_WANDER_STEP = 19
P_PURSUIT_WEIGHT = 20
P_SEPARATION_WEIGHT = 21
P_SEPARATION_RADIUS = 22
P_PREDICTION = 23
P_AGENT_PURSUER = 24
P_OBSERVED = 25
P_SPEED_SCALE = 26
P_START_LO = 27
P_START_SPAN = 28
P_MIN_START = 29
P_WANDER_START = 30
N_PARAMS = 31

# Rows of the per-vehicle array: mass, max_speed, max_force, radius.
V_MASS, V_MAX_SPEED, V_MAX_FORCE, V_RADIUS = 0, 1, 2, 3
# Rows of the float results: reward, capture, escape, shaping terms, distance.
R_REWARD, R_CAPTURE, R_ESCAPE, R_SHAPING, R_DISTANCE = 0, 1, 2, 3, 4
N_RESULTS = 5
# Rows of the bool results.
B_TERMINATED, B_TRUNCATED, B_CAPTURED = 0, 1, 2


def pack_params(cfg, agent_is_pursuer: bool, max_speed: np.ndarray) -> np.ndarray:
    """The float64 parameter vector of a :class:`~steer_env.envs.config.TaskConfig`. Derived
    values are computed here exactly as the numpy code computes them."""
    side_angle = np.pi / 4  # behaviors.feelers' defaults
    side_scale = 0.5
    p = np.zeros(N_PARAMS)
    p[P_DT] = cfg.dt
    p[P_HALF] = cfg.half_size
    p[P_ARENA] = cfg.arena_size
    p[P_DIAGONAL] = cfg.diagonal
    p[P_CAPTURE_RADIUS] = cfg.capture_radius
    p[P_TIME_LIMIT] = cfg.time_limit
    p[P_SHAPING] = 1.0 if cfg.reward_shaping else 0.0
    p[P_SHAPING_SCALE] = cfg.shaping_scale
    p[P_SHAPING_GAMMA] = cfg.shaping_gamma
    p[P_WALL_WEIGHT] = cfg.wall_weight
    p[P_FEELER] = cfg.feeler_length
    p[P_FEELER_SIDE] = cfg.feeler_length * side_scale
    p[P_FEELER_COS] = np.cos(side_angle)
    p[P_FEELER_SIN] = np.sin(side_angle)
    p[P_EVADE_WEIGHT] = cfg.evade_weight
    p[P_THREAT_RANGE] = cfg.threat_range
    p[P_WANDER_WEIGHT] = cfg.wander_weight
    p[P_WANDER_RADIUS] = cfg.wander_radius
    p[P_WANDER_DISTANCE] = cfg.wander_distance
    p[P_WANDER_STEP] = cfg.wander_jitter * cfg.dt
    p[P_PURSUIT_WEIGHT] = cfg.pursuit_weight
    p[P_SEPARATION_WEIGHT] = cfg.separation_weight
    p[P_SEPARATION_RADIUS] = cfg.separation_radius
    p[P_PREDICTION] = cfg.max_prediction_time
    p[P_AGENT_PURSUER] = 1.0 if agent_is_pursuer else 0.0
    p[P_OBSERVED] = cfg.observed_opponents
    p[P_SPEED_SCALE] = max_speed[0] + max_speed[1:].max()
    p[P_START_LO] = -cfg.half_size + cfg.vehicle_radius
    p[P_START_SPAN] = cfg.arena_size - 2 * cfg.vehicle_radius
    p[P_MIN_START] = cfg.min_start_distance
    p[P_WANDER_START] = cfg.wander_radius
    return p


# ------------------------------------------------------------------ vector helpers
@njit(**_JIT)
def length(x, y):
    """vecmath.length of one vector."""
    return math.sqrt(x * x + y * y)


@njit(**_JIT)
def set_magnitude(x, y, magnitude):
    """vecmath.set_magnitude: zero vectors stay zero."""
    n = length(x, y)
    factor = magnitude / n if n > TINY else 0.0
    return x * factor, y * factor


@njit(**_JIT)
def normalize(x, y):
    """vecmath.normalize."""
    n = length(x, y)
    inv = 1.0 / n if n > TINY else 0.0
    return x * inv, y * inv


@njit(**_JIT)
def truncate(x, y, max_length):
    """vecmath.truncate."""
    n = length(x, y)
    factor = max_length / n if n > max_length else 1.0
    return x * factor, y * factor


@njit(**_JIT)
def to_world(lx, ly, hx, hy):
    """vecmath.vector_to_world."""
    return lx * hx - ly * hy, lx * hy + ly * hx


@njit(**_JIT)
def to_local(x, y, hx, hy):
    """vecmath.vector_to_local."""
    return x * hx + y * hy, -x * hy + y * hx


# ------------------------------------------------------------------ behaviours
@njit(**_JIT)
def seek(px, py, vx, vy, tx, ty, max_speed):
    """behaviors.seek."""
    dx, dy = set_magnitude(tx - px, ty - py, max_speed)
    return dx - vx, dy - vy


@njit(**_JIT)
def predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time):
    """behaviors.predict_position (with a prediction cap)."""
    d = length(tpx - px, tpy - py)
    look_ahead = min(d / (max_speed + length(tvx, tvy)), max_prediction_time)
    return tpx + tvx * look_ahead, tpy + tvy * look_ahead


@njit(**_JIT)
def pursuit(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, max_prediction_time):
    """behaviors.pursuit."""
    hx, hy = normalize(vx, vy)
    thx, thy = normalize(tvx, tvy)
    ahead = (tpx - px) * hx + (tpy - py) * hy > 0
    head_on = hx * thx + hy * thy < -0.95
    ax, ay = predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time)
    if ahead and head_on:
        ax, ay = tpx, tpy
    return seek(px, py, vx, vy, ax, ay, max_speed)


@njit(**_JIT)
def evade(px, py, vx, vy, max_speed, tpx, tpy, tvx, tvy, threat_range, max_prediction_time):
    """behaviors.evade (flee the predicted position; zero beyond ``threat_range``)."""
    qx, qy = predict_position(px, py, max_speed, tpx, tpy, tvx, tvy, max_prediction_time)
    fx, fy = set_magnitude(px - qx, py - qy, max_speed)
    if length(tpx - px, tpy - py) <= threat_range:
        return fx - vx, fy - vy
    return 0.0, 0.0


@njit(**_JIT)
def wander(px, py, vx, vy, hx, hy, max_speed, wtx, wty, nx, ny, radius, distance, jitter_dt):
    """behaviors.wander with pre-drawn ``noise``: returns ``(fx, fy, new_tx, new_ty)``."""
    mx = wtx + nx * jitter_dt
    my = wty + ny * jitter_dt
    cx, cy = set_magnitude(mx, my, radius)
    if length(mx, my) <= TINY:
        cx, cy = radius, 0.0
    wx, wy = to_world(cx + distance, cy + 0.0, hx, hy)
    fx, fy = seek(px, py, vx, vy, wx + px, wy + py, max_speed)
    return fx, fy, cx, cy


@njit(**_JIT)
def wall_avoidance(px, py, vx, vy, hx, hy, max_speed, half, feeler, side, c, s):
    """behaviors.wall_avoidance in the box ``[-half, half]^2``: three feelers (``feeler`` m
    ahead, ``side`` m at +/- 45 degrees: ``c, s`` are its cosine and sine) and a margin of
    ``side`` m."""
    lx, ly = to_world(c, s, hx, hy)
    rx, ry = to_world(c, -s, hx, hy)
    t0x, t0y = px + hx * feeler, py + hy * feeler
    t1x, t1y = px + lx * side, py + ly * side
    t2x, t2y = px + rx * side, py + ry * side
    lo = -half
    # A feeler through a wall, or the wall closer than the side feelers' length (``side``).
    lo_x = max(lo - t0x, lo - t1x, lo - t2x) > 0 or px - lo < side
    lo_y = max(lo - t0y, lo - t1y, lo - t2y) > 0 or py - lo < side
    hi_x = max(t0x - half, t1x - half, t2x - half) > 0 or half - px < side
    hi_y = max(t0y - half, t1y - half, t2y - half) > 0 or half - py < side
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


@njit(**_JIT)
def pair_tiebreak(i, j):
    """behaviors._pair_tiebreak for one pair: unit push for ``i`` away from coincident ``j``."""
    lo = float(min(i, j))
    hi = float(max(i, j))
    angle = _GOLDEN_ANGLE * (lo * 7919.0 + hi)
    sign = 1.0 if i < j else -1.0
    return math.cos(angle) * sign, math.sin(angle) * sign


@njit(**_JIT)
def uniform_draw(key, counter, j):
    """streams.uniform: draw ``counter + j`` of stream ``key`` (``j >= 0``)."""
    z = key + (counter + np.uint64(j) + _ONE) * _GAMMA
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    return float(z >> _S11) * _INV_2_53


@njit(**_JIT)
def integrate(px, py, vx, vy, hx, hy, fx, fy, mass, max_speed, max_force, dt):
    """physics.integrate for one vehicle: returns the new ``(px, py, vx, vy, hx, hy)``."""
    f_norm = math.sqrt(fx * fx + fy * fy)  # forces here are bounded: no overflow
    scale = max_force / f_norm if f_norm > max_force else 1.0
    scale *= dt
    scale /= mass
    vx = vx + fx * scale
    vy = vy + fy * scale
    speed = math.sqrt(vx * vx + vy * vy)
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


@njit(**_JIT)
def wall(p, v, limit):
    """Simulation's inelastic walls along one axis: clamp ``p`` into ``[-limit, limit]`` and
    cancel a velocity pointing out. Returns ``(p, v)``."""
    if p > limit:
        return limit, (0.0 if v > 0 else v)
    if p < -limit:
        return -limit, (0.0 if v < 0 else v)
    return p, v


# ------------------------------------------------------------------ stages over a block
# ``step`` runs each stage below over a block of environments ``e0 .. e0 + m - 1`` before
# the next one: short loop bodies over independent environments let the CPU overlap them
# (and the compiler vectorise some), about 3x faster than one long body per environment.
# Scratch arrays are indexed ``[vehicle, ..., b]`` with ``b = e - e0``.
@njit(**_JIT)
def evader_forces(e0, m, state, rng, vehicle, prm, raw):
    """Raw forces ``raw[i, k, :, b]`` (k: wall avoidance, evade, wander) of the scripted
    evaders ``1..n-1`` (opponents.evader_forces, before combination); their wander targets
    advance with noise drawn from each environment's stream (whose counter advances)."""
    pos, vel, head, wt = state[0], state[1], state[2], state[3]
    n = pos.shape[1]
    ms = vehicle[V_MAX_SPEED]
    half, feeler, side = prm[P_HALF], prm[P_FEELER], prm[P_FEELER_SIDE]
    c, s = prm[P_FEELER_COS], prm[P_FEELER_SIN]
    mpt, threat_range = prm[P_PREDICTION], prm[P_THREAT_RANGE]
    radius, distance, jitter_dt = prm[P_WANDER_RADIUS], prm[P_WANDER_DISTANCE], prm[P_WANDER_STEP]
    for i in range(1, n):
        msi = ms[i]
        for b in range(m):
            e = e0 + b
            raw[i, 0, 0, b], raw[i, 0, 1, b] = wall_avoidance(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                msi,
                half,
                feeler,
                side,
                c,
                s,
            )
        # The threat is the nearest pursuer: the agent, the only one.
        for b in range(m):
            e = e0 + b
            raw[i, 1, 0, b], raw[i, 1, 1, b] = evade(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                msi,
                pos[e, 0, 0],
                pos[e, 0, 1],
                vel[e, 0, 0],
                vel[e, 0, 1],
                threat_range,
                mpt,
            )
        j = 2 * (i - 1)
        for b in range(m):
            e = e0 + b
            px, py = pos[e, i, 0], pos[e, i, 1]
            key, counter = rng[0, e], rng[1, e]
            nx = 2.0 * uniform_draw(key, counter, j) - 1.0
            ny = 2.0 * uniform_draw(key, counter, j + 1) - 1.0
            fx, fy, tx, ty = wander(
                px,
                py,
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                msi,
                wt[e, i, 0],
                wt[e, i, 1],
                nx,
                ny,
                radius,
                distance,
                jitter_dt,
            )
            if length(pos[e, 0, 0] - px, pos[e, 0, 1] - py) <= threat_range:
                fx, fy = 0.0, 0.0  # wander only while unthreatened
            raw[i, 2, 0, b], raw[i, 2, 1, b] = fx, fy
            wt[e, i, 0], wt[e, i, 1] = tx, ty
    draws = np.uint64(2 * (n - 1))
    for b in range(m):
        rng[1, e0 + b] += draws


@njit(**_JIT)
def pursuer_forces(e0, m, state, vehicle, prm, raw):
    """Raw forces of the scripted pursuers ``1..n-1`` (opponents.pursuer_forces, before
    combination): ``raw[i, k, :, b]`` with k: wall avoidance, separation, pursuit when there
    are several pursuers; wall avoidance, pursuit otherwise."""
    pos, vel, head = state[0], state[1], state[2]
    n = pos.shape[1]
    ms = vehicle[V_MAX_SPEED]
    half, feeler, side = prm[P_HALF], prm[P_FEELER], prm[P_FEELER_SIDE]
    c, s = prm[P_FEELER_COS], prm[P_FEELER_SIN]
    mpt = prm[P_PREDICTION]
    sep = n > 2
    chase = 2 if sep else 1
    r2 = prm[P_SEPARATION_RADIUS] * prm[P_SEPARATION_RADIUS]
    for i in range(1, n):
        msi = ms[i]
        for b in range(m):
            e = e0 + b
            raw[i, 0, 0, b], raw[i, 0, 1, b] = wall_avoidance(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                msi,
                half,
                feeler,
                side,
                c,
                s,
            )
        # The target is the nearest evader: the agent, the only one.
        for b in range(m):
            e = e0 + b
            raw[i, chase, 0, b], raw[i, chase, 1, b] = pursuit(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                msi,
                pos[e, 0, 0],
                pos[e, 0, 1],
                vel[e, 0, 0],
                vel[e, 0, 1],
                mpt,
            )
        if not sep:
            continue
        # behaviors.separation over find_neighbors(method="dense") pairs (i, j), j ascending.
        for b in range(m):
            e = e0 + b
            px, py = pos[e, i, 0], pos[e, i, 1]
            tx = 0.0
            ty = 0.0
            count = 0
            for j in range(1, n):
                if j == i:
                    continue
                dx = pos[e, j, 0] - px
                dy = pos[e, j, 1] - py
                if not dx * dx + dy * dy <= r2:
                    continue
                count += 1
                dist = length(dx, dy)
                if dist <= TINY:
                    bx, by = pair_tiebreak(i - 1, j - 1)
                    tx = tx + bx / MIN_SEPARATION
                    ty = ty + by / MIN_SEPARATION
                else:
                    w = max(dist, MIN_SEPARATION)
                    w = -1.0 / (w * w)
                    tx = tx + dx * w
                    ty = ty + dy * w
            fx = 0.0
            fy = 0.0
            if count > 0:
                fx, fy = set_magnitude(tx, ty, msi)
                fx = fx - vel[e, i, 0]
                fy = fy - vel[e, i, 1]
            raw[i, 1, 0, b], raw[i, 1, 1, b] = fx, fy


@njit(**_JIT)
def prioritized(raw, weights, n_forces, max_force, m, total, remaining, budget):
    """combine.prioritized over the opponents ``1..n-1`` of each environment of the block:
    ``raw[i, k, :, b]`` is the unweighted force ``k`` (priority order) of opponent ``i``;
    results go to ``total[i, :, b]``. An environment stops adding forces once none of its
    opponents has budget left (combine's ``break``: its totals, and so its budgets, do not
    change after that, so the later levels are skipped too)."""
    n = raw.shape[0]
    w = weights[0]
    for i in range(1, n):
        mf = max_force[i]
        for b in range(m):
            total[i, 0, b], total[i, 1, b] = truncate(w * raw[i, 0, 0, b], w * raw[i, 0, 1, b], mf)
    for k in range(1, n_forces):
        w = weights[k]
        for b in range(m):
            budget[b] = False
        for i in range(1, n):
            mf = max_force[i]
            for b in range(m):
                r = mf - length(total[i, 0, b], total[i, 1, b])
                remaining[i, b] = r
                if r > BUDGET_EPS:
                    budget[b] = True
        for i in range(1, n):
            for b in range(m):
                if budget[b]:
                    fx, fy = truncate(
                        w * raw[i, k, 0, b], w * raw[i, k, 1, b], max(remaining[i, b], 0.0)
                    )
                    total[i, 0, b] = total[i, 0, b] + fx
                    total[i, 1, b] = total[i, 1, b] + fy


@njit(**_JIT)
def opponent_forces(e0, m, state, rng, vehicle, prm, raw, total, remaining, budget):
    """Combined steering forces ``total[1:, :, b]`` of the scripted opponents."""
    weights = np.empty(3)
    weights[0] = prm[P_WALL_WEIGHT]
    if prm[P_AGENT_PURSUER] != 0.0:
        evader_forces(e0, m, state, rng, vehicle, prm, raw)
        weights[1] = prm[P_EVADE_WEIGHT]
        weights[2] = prm[P_WANDER_WEIGHT]
        n_forces = 3
    else:
        pursuer_forces(e0, m, state, vehicle, prm, raw)
        if state.shape[2] > 2:
            weights[1] = prm[P_SEPARATION_WEIGHT]
            weights[2] = prm[P_PURSUIT_WEIGHT]
            n_forces = 3
        else:
            weights[1] = prm[P_PURSUIT_WEIGHT]
            n_forces = 2
    prioritized(raw, weights, n_forces, vehicle[V_MAX_FORCE], m, total, remaining, budget)


@njit(**_JIT)
def move(e0, m, state, vehicle, prm, action, total, before):
    """The agent's force (Simulation.agent_force) into ``total[0]``, then one physics step
    and the walls for every vehicle; positions before the step go to ``before``."""
    pos, vel, head = state[0], state[1], state[2]
    n = pos.shape[1]
    mass, max_speed, max_force = vehicle[V_MASS], vehicle[V_MAX_SPEED], vehicle[V_MAX_FORCE]
    radius = vehicle[V_RADIUS]
    dt, half = prm[P_DT], prm[P_HALF]
    mf0 = max_force[0]
    for b in range(m):
        e = e0 + b
        lx, ly = truncate(action[e, 0], action[e, 1], 1.0)
        wx, wy = to_world(lx, ly, head[e, 0, 0], head[e, 0, 1])
        total[0, 0, b] = wx * mf0
        total[0, 1, b] = wy * mf0
    for i in range(n):
        limit = half - radius[i]
        mi, msi, mfi = mass[i], max_speed[i], max_force[i]
        for b in range(m):
            e = e0 + b
            px, py = pos[e, i, 0], pos[e, i, 1]
            before[i, 0, b], before[i, 1, b] = px, py
            px, py, vx, vy, hx, hy = integrate(
                px,
                py,
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                total[i, 0, b],
                total[i, 1, b],
                mi,
                msi,
                mfi,
                dt,
            )
            pos[e, i, 0], wvx = wall(px, vx, limit)
            pos[e, i, 1], wvy = wall(py, vy, limit)
            if wvx != vx or wvy != vy:
                # A wall took away part of the velocity: the heading follows what is left.
                speed = math.sqrt(wvx * wvx + wvy * wvy)
                if speed > MIN_HEADING_SPEED:
                    hx = wvx / speed
                    hy = wvy / speed
            vel[e, i, 0], vel[e, i, 1] = wvx, wvy
            head[e, i, 0], head[e, i, 1] = hx, hy


@njit(**_JIT)
def swept_capture(before, b, pos, agent_is_pursuer, capture_radius):
    """True if the agent and an opponent came within ``capture_radius`` during the step
    (closest approach of the linear relative motion from ``before[:, :, b]`` to ``pos``)."""
    n = pos.shape[0]
    for o in range(1, n):
        pu, ev = (0, o) if agent_is_pursuer else (o, 0)
        r0x = before[ev, 0, b] - before[pu, 0, b]
        r0y = before[ev, 1, b] - before[pu, 1, b]
        dx = (pos[ev, 0] - pos[pu, 0]) - r0x
        dy = (pos[ev, 1] - pos[pu, 1]) - r0y
        dd = dx * dx + dy * dy
        t = -(r0x * dx + r0y * dy) / dd if dd > 1e-18 else 0.0
        t = min(max(t, 0.0), 1.0)
        if length(r0x + dx * t, r0y + dy * t) <= capture_radius:
            return True
    return False


@njit(**_JIT)
def nearest_distance(pos):
    """Distance from the agent to its nearest opponent."""
    best = np.inf
    for o in range(1, pos.shape[0]):
        d = length(pos[o, 0] - pos[0, 0], pos[o, 1] - pos[0, 1])
        if d < best:
            best = d
    return best


@njit(**_JIT)
def potential(distance, prm):
    """Shaping potential from the nearest-opponent distance (Simulation._potential_of)."""
    d = distance / prm[P_DIAGONAL]
    scale = prm[P_SHAPING_SCALE]
    return -scale * d if prm[P_AGENT_PURSUER] != 0.0 else scale * d


@njit(**_JIT)
def _clip(x):
    return min(max(x, -1.0), 1.0)


@njit(**_JIT)
def observe_rows(state, steps, vehicle, prm, envs, out, dist, order):
    """Observations of environments ``envs`` into the float32 rows ``out[envs]``
    (Simulation.observe; the layout is in the env docstrings): the agent's own features for
    every env, then its opponents, nearest first."""
    pos, vel, head = state[0], state[1], state[2]
    n = pos.shape[1]
    ms0 = vehicle[V_MAX_SPEED, 0]
    half, arena, diag = prm[P_HALF], prm[P_ARENA], prm[P_DIAGONAL]
    speed_scale = prm[P_SPEED_SCALE]
    time_limit = prm[P_TIME_LIMIT]
    for k in range(envs.shape[0]):
        e = envs[k]
        row = out[e]
        hx, hy = head[e, 0, 0], head[e, 0, 1]
        px, py = pos[e, 0, 0], pos[e, 0, 1]
        f, s = to_local(vel[e, 0, 0], vel[e, 0, 1], hx, hy)
        row[0] = _clip(f / ms0)
        row[1] = _clip(s / ms0)
        # Offsets to the west, east, south and north walls.
        f, s = to_local(-half - px, 0.0, hx, hy)
        row[2] = _clip(f / arena)
        row[3] = _clip(s / arena)
        f, s = to_local(half - px, 0.0, hx, hy)
        row[4] = _clip(f / arena)
        row[5] = _clip(s / arena)
        f, s = to_local(0.0, -half - py, hx, hy)
        row[6] = _clip(f / arena)
        row[7] = _clip(s / arena)
        f, s = to_local(0.0, half - py, hx, hy)
        row[8] = _clip(f / arena)
        row[9] = _clip(s / arena)
        row[10] = _clip(2.0 * float(steps[e]) / time_limit - 1.0)
    observed = int(prm[P_OBSERVED])
    m = n - 1
    slots = min(observed, m)
    for k in range(envs.shape[0]):
        e = envs[k]
        row = out[e]
        hx, hy = head[e, 0, 0], head[e, 0, 1]
        px, py = pos[e, 0, 0], pos[e, 0, 1]
        if m == 1:
            order[0] = 1
        else:
            # Nearest first: a stable insertion sort, like argsort(kind="stable").
            for q in range(m):
                d = length(pos[e, q + 1, 0] - px, pos[e, q + 1, 1] - py)
                j = q
                while j > 0 and dist[j - 1] > d:
                    dist[j] = dist[j - 1]
                    order[j] = order[j - 1]
                    j -= 1
                dist[j] = d
                order[j] = q + 1
        for q in range(observed):
            base = SELF_FEATURES + OPPONENT_FEATURES * q
            if q >= slots:
                for f_ in range(OPPONENT_FEATURES):
                    row[base + f_] = 0.0
                continue
            o = order[q]
            f, s = to_local(pos[e, o, 0] - px, pos[e, o, 1] - py, hx, hy)
            row[base] = _clip(f / diag)
            row[base + 1] = _clip(s / diag)
            f, s = to_local(vel[e, o, 0] - vel[e, 0, 0], vel[e, o, 1] - vel[e, 0, 1], hx, hy)
            row[base + 2] = _clip(f / speed_scale)
            row[base + 3] = _clip(s / speed_scale)
            row[base + 4] = 1.0


@njit(**_JIT)
def reset_env(e, state, counts, rng, pot, prm):
    """A new episode in environment ``e`` (Simulation.reset_envs): ``n * (2K + 2)`` draws
    per env, ``K`` candidate start positions per vehicle (``2K`` draws), a heading angle and
    a wander angle. The agent takes its first candidate; each opponent the first candidate
    at least ``min_start_distance`` from the agent, or the farthest if none is."""
    pos = state[0, e]
    vel = state[1, e]
    head = state[2, e]
    wt = state[3, e]
    n = pos.shape[0]
    k = _START_CANDIDATES
    per = 2 * k + 2
    key = rng[0, e]
    counter = rng[1, e]
    lo = prm[P_START_LO]
    span = prm[P_START_SPAN]
    min_start = prm[P_MIN_START]
    two_pi = 2 * np.pi
    ax = lo + span * uniform_draw(key, counter, 0)
    ay = lo + span * uniform_draw(key, counter, 1)
    for i in range(n):
        base = i * per
        if i == 0:
            pos[0, 0], pos[0, 1] = ax, ay
        else:
            best = -1.0
            best_c = 0
            chosen = -1
            for c in range(k):
                cx = lo + span * uniform_draw(key, counter, base + 2 * c)
                cy = lo + span * uniform_draw(key, counter, base + 2 * c + 1)
                d = length(cx - ax, cy - ay)
                if d >= min_start:
                    chosen = c
                    break
                if d > best:
                    best = d
                    best_c = c
            c = chosen if chosen >= 0 else best_c
            pos[i, 0] = lo + span * uniform_draw(key, counter, base + 2 * c)
            pos[i, 1] = lo + span * uniform_draw(key, counter, base + 2 * c + 1)
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
        angle = two_pi * uniform_draw(key, counter, base + 2 * k)
        head[i, 0] = math.cos(angle)
        head[i, 1] = math.sin(angle)
        wander_angle = two_pi * uniform_draw(key, counter, base + 2 * k + 1)
        wt[i, 0] = prm[P_WANDER_START] * math.cos(wander_angle)
        wt[i, 1] = prm[P_WANDER_START] * math.sin(wander_angle)
    rng[1, e] = counter + np.uint64(n * per)
    counts[0, e] = 0
    counts[1, e] = -1
    pot[e] = potential(nearest_distance(pos), prm)


# ------------------------------------------------------------------ entry points
@njit(**_JIT)
def reset(state, counts, rng, pot, prm, envs):
    """New episodes in environments ``envs`` (their streams continue from their counters)."""
    for k in range(envs.shape[0]):
        reset_env(envs[k], state, counts, rng, pot, prm)


#: Environments per block of ``step`` (scratch of about ``n * 120 * BLOCK`` bytes).
BLOCK = 256


@njit(**_JIT)
def step(state, counts, rng, pot, vehicle, prm, action, fres, bres, obs):
    """Advance every environment by one step.

    Args (``E`` envs, ``n`` vehicles each; all arrays are updated in place):
        state: ``(4, E, n, 2)`` float64: position, velocity, heading, wander target.
        counts: ``(2, E)`` int64: steps in the episode, capture step (-1: none).
        rng: ``(2, E)`` uint64: stream key and counter.
        pot: ``(E,)`` shaping potential of the current state.
        vehicle: ``(4, n)`` mass, max speed, max force, radius.
        prm: parameters (:func:`pack_params`).
        action: ``(E, 2)`` agent actions (agent frame, units of its max force).
        fres: ``(5, E)`` out: reward, capture, escape, shaping terms, nearest distance.
        bres: ``(3, E)`` out: terminated, truncated, captured.
        obs: ``(E, obs_dim)`` float32 out: observations after the step.

    Every environment is computed on its own (the blocks only order the work), so the
    result for one environment does not depend on ``E`` or on the others.
    """
    num_envs = state.shape[1]
    n = state.shape[2]
    size = min(BLOCK, num_envs)
    raw = np.zeros((n, 3, 2, size))
    total = np.zeros((n, 2, size))
    remaining = np.zeros((n, size))
    budget = np.zeros(size, dtype=np.bool_)
    before = np.zeros((n, 2, size))
    dist = np.zeros(n)
    order = np.zeros(n, dtype=np.int64)
    agent_is_pursuer = prm[P_AGENT_PURSUER] != 0.0
    sign = 1.0 if agent_is_pursuer else -1.0
    time_limit = prm[P_TIME_LIMIT]
    capture_radius = prm[P_CAPTURE_RADIUS]
    shaping_on = prm[P_SHAPING] != 0.0
    gamma = prm[P_SHAPING_GAMMA]
    pos = state[0]
    all_envs = np.arange(num_envs)
    for e0 in range(0, num_envs, size):
        m = min(size, num_envs - e0)
        opponent_forces(e0, m, state, rng, vehicle, prm, raw, total, remaining, budget)
        move(e0, m, state, vehicle, prm, action, total, before)
        for b in range(m):
            e = e0 + b
            steps = counts[0, e] + 1
            counts[0, e] = steps
            captured = swept_capture(before, b, pos[e], agent_is_pursuer, capture_radius)
            if captured and counts[1, e] < 0:
                counts[1, e] = steps
            # Time is up at the limit whatever happened on that step (a capture on the last
            # step sets both flags, as Gymnasium's TimeLimit does); it is an escape only
            # without a capture.
            truncated = steps >= time_limit
            reward_capture = sign if captured else 0.0
            escaped = truncated and not captured
            reward_escape = 1.0 if (escaped and not agent_is_pursuer) else 0.0
            distance = nearest_distance(pos[e])
            new_potential = potential(distance, prm)
            shaping = 0.0
            if shaping_on:
                shaped_next = 0.0 if captured else gamma * new_potential
                shaping = shaped_next - pot[e]
            pot[e] = new_potential
            fres[R_REWARD, e] = reward_capture + reward_escape + shaping
            fres[R_CAPTURE, e] = reward_capture
            fres[R_ESCAPE, e] = reward_escape
            fres[R_SHAPING, e] = shaping
            fres[R_DISTANCE, e] = distance
            bres[B_TERMINATED, e] = captured
            bres[B_TRUNCATED, e] = truncated
            bres[B_CAPTURED, e] = captured
        observe_rows(state, counts[0], vehicle, prm, all_envs[e0 : e0 + m], obs, dist, order)


@njit(**_JIT)
def observe(state, steps, vehicle, prm, envs, out):
    """Observations of environments ``envs`` into the rows ``out[envs]``."""
    n = state.shape[2]
    observe_rows(state, steps, vehicle, prm, envs, out, np.zeros(n), np.zeros(n, np.int64))


@njit(**_JIT)
def distances(state, envs, out):
    """Agent-to-nearest-opponent distances of environments ``envs`` into ``out[envs]``."""
    for k in range(envs.shape[0]):
        e = envs[k]
        out[e] = nearest_distance(state[0, e])
