"""The engine's compiled stages: ``E`` environments of ``n`` vehicles, ``k`` of them learned.

Every formula of steering and motion comes from :mod:`steer_env.core` (the one definition
that the numpy library :mod:`steer_env.behaviors` is built from too); this module only
decides *who* steers relative to *whom*, in which order, and what the arena does. Its
stages are shared by every task; a task's rules (:mod:`steer_env.rules`) run after them:

1. **Scripted vehicles** run their strategy (:func:`scripted_forces`; a table row of
   :data:`~layout.BEHAVIOR` records): each behaviour's force, towards the target its
   record names, combined by the strategy's method (Buckland's weighted truncated sum,
   prioritized running sum or prioritized dithering).
2. **Learned agents** give an action in their own frame, in units of their max force; its
   magnitude is clipped to 1 (:func:`move`).
3. Every vehicle in the game moves by :func:`steer_env.core.physics.integrate`; the arena's
   walls then stop it (inelastic: the outward velocity is cancelled) (:func:`move`).
4. The task's **rules**: who leaves the game, rewards and episode end, then the
   **observations** (each rules package's ``compiled.step`` calls 1-3, then its own).

Teams are codes (``VEHICLE.team``) whose names the rules give: the stages only ask
whether two vehicles are on the same team. Environments are independent: the result for
one does not depend on the others or on ``E``. Work is done in blocks of environments,
one stage at a time over the block, which keeps the loop bodies short (the CPU overlaps
independent environments).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

from steer_env.core import behaviors as cb
from steer_env.core.combine import accumulate, dither_candidate, weighted_add
from steer_env.core.jit import engine_inline_kernel, engine_kernel, flat_rows, index, lowest_bit
from steer_env.core.physics import MIN_HEADING_SPEED, circle_contact, integrate
from steer_env.core.streams import uniform_draw
from steer_env.core.vecmath import (
    length,
    length_at_least,
    root_above,
    root_below,
    root_is_length,
    squared_length,
    to_local,
    to_world,
    truncate,
)
from steer_env.engine.egocentric import (
    EAST_WALL,
    NORTH_WALL,
    OBSTACLE_OFFSET,
    OBSTACLE_PRESENT,
    OBSTACLE_RADIUS,
    OBSTACLE_WIDTH,
    OTHER_POSITION,
    OTHER_PRESENT,
    OTHER_VELOCITY,
    OTHER_WIDTH,
    SELF_WIDTH,
    SOUTH_WALL,
    TIME,
    VELOCITY_FORWARD,
    VELOCITY_SIDE,
    WEST_WALL,
)
from steer_env.engine.grid import (
    GRID_MIN,
    NEAREST_PER_CELL,
    Grid,
    build,
    grid_work,
    keep_nearest,
    nearest_in_grid,
)
from steer_env.engine.layout import (
    ALIGNMENT,
    ARENA_CENTER,
    ARRIVE,
    BEHAVIOR_KINDS,
    COHESION,
    COMBINATION_NAMES,
    DITHERED,
    EACH_OPPONENT,
    EVADE,
    FLEE,
    FLOW_FIELD,
    FOLLOW_PATH,
    GOAL,
    HIDE,
    INTERPOSE,
    LEARNED,
    NEAREST_TEAMMATE,
    OBSTACLE_AVOIDANCE,
    OFFSET_PURSUIT,
    PRIORITIZED,
    PURSUIT,
    SEEK,
    SEPARATION,
    TARGET_NAMES,
    TEAMMATES,
    UNALIGNED_COLLISION_AVOIDANCE,
    WALL_AVOIDANCE,
    WANDER,
    WEIGHTED_SUM,
)

#: Environments per block of :func:`step`.
BLOCK = 256

# --------------------------------------------------------------------------- what is compiled
#: The behaviour kinds of each branch of :func:`raw_forces`.
FLOCKING_KINDS = (SEPARATION, ALIGNMENT, COHESION)
SINGLE_TARGET_KINDS = (SEEK, FLEE, ARRIVE, PURSUIT, EVADE)
SCENE_KINDS = tuple(
    k
    for k in range(len(BEHAVIOR_KINDS))
    if k not in (WANDER, WALL_AVOIDANCE, *FLOCKING_KINDS, *SINGLE_TARGET_KINDS)
)


def compiled_constants(
    kinds: Iterable[int],
    targets: Iterable[int],
    combinations: Iterable[int],
    topological: bool,
    gridded: bool = True,
) -> dict[str, Any]:
    """The constants the stages branch on, for strategies whose behaviours are of
    ``kinds`` and steer relative to ``targets``, combined by ``combinations`` (codes of
    :mod:`~steer_env.engine.layout`), with or without ``topological`` flocking (a
    ``neighbor_count``), in environments of more than
    :data:`~steer_env.engine.grid.GRID_MIN` vehicles or not (``gridded``): :data:`KINDS`,
    :data:`TARGETS`, :data:`COMBINATIONS`, :data:`TOPOLOGICAL`, :data:`GRIDDED` and
    whether any kind of each branch of :func:`raw_forces` is among them (``FLOCKING``,
    ``SINGLE_TARGET``, ``SCENE``)."""
    kinds = tuple(sorted({int(k) for k in kinds}))
    return {
        "KINDS": kinds,
        "TARGETS": tuple(sorted({int(t) for t in targets})),
        "COMBINATIONS": tuple(sorted({int(c) for c in combinations})),
        "TOPOLOGICAL": bool(topological),
        "GRIDDED": bool(gridded),
        "FLOCKING": any(k in kinds for k in FLOCKING_KINDS),
        "SINGLE_TARGET": any(k in kinds for k in SINGLE_TARGET_KINDS),
        "SCENE": any(k in kinds for k in SCENE_KINDS),
    }


def table_constants(
    behaviors: np.ndarray, strategies: np.ndarray, n_vehicles: int
) -> dict[str, Any]:
    """:func:`compiled_constants` of a strategy table (``(S, B)``
    :data:`~steer_env.engine.layout.BEHAVIOR`, ``(S,)``
    :data:`~steer_env.engine.layout.STRATEGY`: :func:`steer_env.engine.strategy.encode`)
    in environments of ``n_vehicles``: the kinds, targets and combination methods of its
    behaviours, whether a flocking one has a ``neighbor_count``, and whether the searches
    run on grids."""
    used = behaviors[np.arange(behaviors.shape[1]) < strategies["n_behaviors"][:, None]]
    flocking = np.isin(used["kind"], FLOCKING_KINDS)
    return compiled_constants(
        used["kind"].tolist(),
        used["target"].tolist(),
        strategies["combination"][strategies["n_behaviors"] > 0].tolist(),
        bool(np.any(used["neighbor_count"][flocking] > 0)),
        n_vehicles > GRID_MIN,
    )


#: What the stages below are compiled for: every behaviour kind, target and combination
#: method, and the grids. A batch runs copies of them compiled for the ones its strategies
#: use (:func:`steer_env.core.jit.specialise` with :func:`table_constants`): numba prunes
#: a branch on a constant before typing it, so a Pursuit step compiles the evader's three
#: behaviours instead of all seventeen, and no grid.
_EVERY = compiled_constants(
    range(len(BEHAVIOR_KINDS)), range(len(TARGET_NAMES)), range(len(COMBINATION_NAMES)), True
)
KINDS: tuple[int, ...] = _EVERY["KINDS"]
TARGETS: tuple[int, ...] = _EVERY["TARGETS"]
COMBINATIONS: tuple[int, ...] = _EVERY["COMBINATIONS"]
TOPOLOGICAL: bool = _EVERY["TOPOLOGICAL"]
#: Whether the searches over the vehicles of an environment may run on grids
#: (:mod:`steer_env.engine.grid`: above :data:`~steer_env.engine.grid.GRID_MIN` vehicles).
GRIDDED: bool = _EVERY["GRIDDED"]
FLOCKING: bool = _EVERY["FLOCKING"]
SINGLE_TARGET: bool = _EVERY["SINGLE_TARGET"]
SCENE: bool = _EVERY["SCENE"]


class StrategyScratch(NamedTuple):
    """Working arrays of :func:`scripted_forces` for a block of ``m`` environments (the
    stages cannot allocate: see :data:`~steer_env.core.jit.engine_kernel`)."""

    vectors: np.ndarray  #: (2, 2, m): one behaviour's raw force, the running total (N, x/y rows)
    near_d: np.ndarray  #: (m,) distance to the nearest opponent in the game (m)
    near_j: np.ndarray  #: (m,) int64 index of that opponent (-1: none)
    is_open: np.ndarray  #: (m,) bool: prioritized: budget left; dithered: none chosen yet
    rank_d: np.ndarray  #: (n,) m: a topological neighbourhood's nearest distances, sorted
    rank_j: np.ndarray  #: (n,) int64: their vehicle indices


def strategy_scratch(m: int, n: int) -> StrategyScratch:
    """A :class:`StrategyScratch` for blocks of up to ``m`` environments of ``n`` vehicles."""
    return StrategyScratch(
        np.zeros((2, 2, m)),
        np.zeros(m),
        np.zeros(m, dtype=np.int64),
        np.zeros(m, dtype=np.bool_),
        np.zeros(n),
        np.zeros(n, dtype=np.int64),
    )


class StepWork(NamedTuple):
    """Working arrays of :func:`step` for ``E`` environments of ``n`` vehicles, made once by
    the caller (:func:`step_work`; the rules' ``reset`` and ``observe`` use its
    ``distance`` and ``order``). The entry points compile without numba's reference
    counting, so they cannot allocate them; in exchange an entry converts each array
    argument without making a reference-counted copy of its descriptor (a Pursuit step's 22
    arrays: 0.13 us instead of 0.72 us, most of a single env's compiled step), and numba
    compiles none of its array constructors."""

    force: np.ndarray  #: (n, 2, B) N: each vehicle's steering force in the block
    before: np.ndarray  #: (n, 2, B) m: positions before the move (the swept capture test)
    strategy: StrategyScratch  #: the strategies' working arrays for a block
    distance: np.ndarray  #: (max(n, M),) m: the observation slots' distances
    order: np.ndarray  #: (max(n, M),) int64: the observation slots' order
    env_index: np.ndarray  #: (E,) int64: 0 .. E - 1
    #: (E, k, M) int64: each learned agent's obstacle rows, its slots' rows first, nearest
    #: first, at its last observation (:func:`observe_obstacles` ranks them anew from
    #: there: a permutation of ``0 .. M - 1`` whatever it holds, so only a head start)
    obstacle_order: np.ndarray
    #: one environment's grids of the vehicles (:mod:`steer_env.engine.grid`): the nearest
    #: vehicles of the observation, and the rules' searches for pairs
    grid: Grid


def step_work(env_index: np.ndarray, n: int, m: int = 0, k: int = 1, teams: int = 2) -> StepWork:
    """A :class:`StepWork` for :func:`step` on the ``E`` environments ``env_index`` (the
    caller's ``(E,)`` int64 ``0 .. E - 1``) of ``n`` vehicles of ``teams`` teams, ``k`` of
    them learned, and ``m`` obstacle rows, in blocks of ``B = min(BLOCK, E)``
    environments."""
    size = min(BLOCK, env_index.shape[0])
    return StepWork(
        np.zeros((n, 2, size)),
        np.zeros((n, 2, size)),
        strategy_scratch(size, n),
        np.zeros(max(n, m)),
        np.zeros(max(n, m), dtype=np.int64),
        env_index,
        np.broadcast_to(np.arange(m, dtype=np.int64), (env_index.shape[0], k, m)).copy(),
        grid_work(n, teams),
    )


# --------------------------------------------------------------------------- queries
@engine_inline_kernel
def is_candidate(vehicles, i, j, want_opponent):
    """Whether vehicle ``j`` counts in vehicle ``i``'s nearest-opponent (``want_opponent``)
    or nearest-teammate queries: another vehicle, of the other team or of its own (whether
    it is in the game is the caller's test)."""
    return j != i and (vehicles[j].team != vehicles[i].team) == want_opponent


@engine_inline_kernel
def nearest_of(pos, alive, vehicles, e, i, want_opponent):
    """Index and distance of the nearest vehicle of environment ``e`` in the game that is
    an opponent of ``i`` (``want_opponent``) or a teammate of ``i``; ``(-1, inf)`` if there
    is none."""
    best = -1
    best_d = np.inf
    px, py = pos[e, i, 0], pos[e, i, 1]
    for j in range(pos.shape[1]):
        if not alive[e, j] or not is_candidate(vehicles, i, j, want_opponent):
            continue
        d = length(pos[e, j, 0] - px, pos[e, j, 1] - py)
        if d < best_d:
            best_d = d
            best = j
    return best, best_d


@engine_inline_kernel
def nearest_in_block(pos, alive, vehicles, e0, m, i, want_opponent, near_d, near_j):
    """:func:`nearest_of` for vehicle ``i`` of every environment ``e0 + b`` of the block,
    into ``near_d[b]`` / ``near_j[b]``. One pass over the block per candidate vehicle,
    whose team is checked once, so the loop body is a distance and a select."""
    for b in range(m):
        near_d[b] = np.inf
        near_j[b] = -1
    for j in range(pos.shape[1]):
        if not is_candidate(vehicles, i, j, want_opponent):
            continue
        for b in range(m):
            e = e0 + b
            d = length(pos[e, j, 0] - pos[e, i, 0], pos[e, j, 1] - pos[e, i, 1])
            closer = alive[e, j] & (d < near_d[b])
            near_d[b] = d if closer else near_d[b]
            near_j[b] = j if closer else near_j[b]


@engine_kernel
def swept_distance(before, b, pos, e, p, q):
    """Closest approach of vehicles ``p`` and ``q`` of environment ``e`` during the step,
    assuming linear relative motion from ``before[:, :, b]`` to ``pos[e]`` (so fast vehicles
    cannot pass through)."""
    r0x = before[q, 0, b] - before[p, 0, b]
    r0y = before[q, 1, b] - before[p, 1, b]
    dx = (pos[e, q, 0] - pos[e, p, 0]) - r0x
    dy = (pos[e, q, 1] - pos[e, p, 1]) - r0y
    dd = dx * dx + dy * dy
    t = -(r0x * dx + r0y * dy) / dd if dd > 1e-18 else 0.0
    t = min(max(t, 0.0), 1.0)
    return length(r0x + dx * t, r0y + dy * t)


@engine_kernel
def target_point(pos, alive, vehicles, e, i, target, near_j):
    """The single point a seek/flee/arrive behaviour of vehicle ``i`` aims at, and whether
    there is one."""
    if target == ARENA_CENTER:
        return 0.0, 0.0, True
    j = near_j
    if NEAREST_TEAMMATE in TARGETS and target == NEAREST_TEAMMATE:
        j, _ = nearest_of(pos, alive, vehicles, e, i, False)
    if j < 0:
        return 0.0, 0.0, False
    return pos[e, j, 0], pos[e, j, 1], True


@engine_inline_kernel
def flock_candidate(b, e, i, j, alive, vehicles, team):
    """Whether vehicle ``j`` may be one of vehicle ``i``'s (of ``team``) flocking
    neighbours for behaviour record ``b``: another vehicle in the game, of ``i``'s team
    when ``b.target`` is ``teammates``. :func:`in_neighborhood` then tests where it is."""
    if j == i or not alive[e, j]:
        return False
    return b.target != TEAMMATES or vehicles[j].team == team


@engine_inline_kernel
def in_neighborhood(b, ox, oy, d, hx, hy):
    """Whether a candidate at offset ``(ox, oy)``, ``d`` m away, is a flocking neighbour
    of a vehicle heading ``(hx, hy)``: within ``b.neighbor_radius`` and in view
    (:func:`steer_env.core.behaviors.in_view`)."""
    return d <= b.neighbor_radius and cb.in_view(ox, oy, d, hx, hy, b.view_cos)


@engine_inline_kernel
def flock_force(kind, b, e, i, pos, vel, head, alive, vehicles, rank):
    """Separation, alignment or cohesion of vehicle ``i`` over its neighbours in the game
    (teammates or everyone, per ``b.target``) within ``b.neighbor_radius``; ``rank`` is
    :func:`kth_nearest`'s working space."""
    px, py = pos[e, i, 0], pos[e, i, 1]
    team = vehicles[i].team
    sx = 0.0
    sy = 0.0
    # An int64, not a literal 0: numba would first type the calls below with the literal
    # and compile a second version of each finishing kernel.
    count = np.int64(0)
    # Topological neighbourhoods (neighbor_count k > 0) take the k nearest: the k-th
    # smallest distance of the candidates (ties: the lower index) bounds who counts.
    # kth_nearest leaves each candidate's distance in rank[0] (inf: not a candidate), which
    # the pass below reads instead of testing and measuring again.
    limit_d = np.inf
    limit_j = pos.shape[1]
    topological = b.neighbor_count > 0
    if TOPOLOGICAL and topological:
        limit_d, limit_j = kth_nearest(b, e, i, pos, head, alive, vehicles, b.neighbor_count, rank)
    rank_d = rank[0]
    hx, hy = head[e, i, 0], head[e, i, 1]
    for j in range(pos.shape[1]):
        if TOPOLOGICAL and topological:
            d = rank_d[j]
            if d == np.inf:
                continue
            ox = pos[e, j, 0] - px
            oy = pos[e, j, 1] - py
        else:
            if not flock_candidate(b, e, i, j, alive, vehicles, team):
                continue
            ox = pos[e, j, 0] - px
            oy = pos[e, j, 1] - py
            d = length(ox, oy)
            if not in_neighborhood(b, ox, oy, d, hx, hy):
                continue
        if d > limit_d or (d == limit_d and j > limit_j):
            continue
        count += 1
        if SEPARATION in KINDS and kind == SEPARATION:
            qx, qy = cb.separation_push(ox, oy, d, i, j, b.min_distance)
        elif ALIGNMENT in KINDS and kind == ALIGNMENT:
            qx, qy = head[e, j, 0], head[e, j, 1]
        else:
            qx, qy = ox, oy
        sx += qx
        sy += qy
    vx, vy, ms = vel[e, i, 0], vel[e, i, 1], vehicles[i].max_speed
    if SEPARATION in KINDS and kind == SEPARATION:
        return cb.separation_finish(sx, sy, count, vx, vy, ms, b.separation_form)
    if COHESION in KINDS and kind == COHESION:
        return cb.cohesion_finish(sx, sy, count, vx, vy, ms)
    return cb.steer_towards(sx, sy, count, vx, vy, ms)


#: Up to this many vehicles per environment :func:`kth_nearest` ranks the candidates by
#: counting (every candidate against every other: branch-free, so the compiler vectorises it;
#: 74 ns for the 15th of 25 against 276 ns by insertion); above it, by insertion into a
#: sorted list (as fast at 100 vehicles and ``k = 15``, and it does not grow as ``n^2``).
COUNT_SELECT_MAX = 64


@engine_kernel
def kth_nearest(b, e, i, pos, head, alive, vehicles, k, rank):
    """Distance and index of vehicle ``i``'s ``k``-th nearest flocking neighbour (the
    candidates :func:`flock_candidate` and :func:`in_neighborhood` accept), ordered by
    distance then index; ``(inf, n)`` when there are fewer than ``k`` of them (every one
    counts). ``rank`` (``(rank_d, rank_j)``, ``(n,)`` each) is working space: one pass
    writes each vehicle's distance (``inf``: not a candidate), then the ``k``-th is the
    candidate that exactly ``k - 1`` others precede (see :data:`COUNT_SELECT_MAX`)."""
    n = pos.shape[1]
    rank_d, rank_j = rank
    px, py = pos[e, i, 0], pos[e, i, 1]
    team = vehicles[i].team
    hx, hy = head[e, i, 0], head[e, i, 1]
    candidates = 0
    for j in range(n):
        rank_d[j] = np.inf
        if not flock_candidate(b, e, i, j, alive, vehicles, team):
            continue
        ox = pos[e, j, 0] - px
        oy = pos[e, j, 1] - py
        d = length(ox, oy)
        if in_neighborhood(b, ox, oy, d, hx, hy):
            rank_d[j] = d
            candidates += 1
    if candidates < k:
        return np.inf, n
    if n <= COUNT_SELECT_MAX:
        for j in range(n):
            d = rank_d[j]
            if d == np.inf:
                continue
            ahead = 0
            for q in range(n):
                dq = rank_d[q]
                ahead += (dq < d) | ((dq == d) & (q < j))
            if ahead == k - 1:
                return d, j
    # Insertion: rank_j keeps the k nearest so far sorted by (distance, index); the indices
    # rising, an equal distance ranks after the ones kept.
    kept = 0
    for j in range(n):
        d = rank_d[j]
        if d == np.inf:
            continue
        if kept == k:
            if d >= rank_d[rank_j[k - 1]]:
                continue
            kept -= 1  # the last kept drops out
        p = kept
        while p > 0 and rank_d[rank_j[p - 1]] > d:
            rank_j[p] = rank_j[p - 1]
            p -= 1
        rank_j[p] = j
        kept += 1
    return rank_d[rank_j[k - 1]], rank_j[k - 1]


@engine_inline_kernel
def single_target_force(rec, e, i, pos, vel, alive, vehicles, goal, near_j):
    """Seek, flee, arrive, pursuit or evade of vehicle ``i`` of environment ``e`` relative
    to the one target its record names (zero force when there is none): a vehicle, the
    arena's centre or the vehicle's own ``goal[e, i]`` (both at rest)."""
    kind = rec.kind
    px, py = pos[e, i, 0], pos[e, i, 1]
    vx, vy = vel[e, i, 0], vel[e, i, 1]
    ms = vehicles[i].max_speed
    if (
        EVADE in KINDS
        and EACH_OPPONENT in TARGETS
        and kind == EVADE
        and rec.target == EACH_OPPONENT
    ):
        return evade_each(rec, e, i, pos, vel, alive, vehicles)
    if rec.target == ARENA_CENTER:
        tx, ty, tvx, tvy, tms = 0.0, 0.0, 0.0, 0.0, 0.0
    elif GOAL in TARGETS and rec.target == GOAL:
        tx, ty, tvx, tvy, tms = goal[e, i, 0], goal[e, i, 1], 0.0, 0.0, 0.0
    else:
        j = near_j
        if NEAREST_TEAMMATE in TARGETS and rec.target == NEAREST_TEAMMATE:
            j, _ = nearest_of(pos, alive, vehicles, e, i, False)
        if j < 0:
            return 0.0, 0.0
        tx, ty, tvx, tvy = pos[e, j, 0], pos[e, j, 1], vel[e, j, 0], vel[e, j, 1]
        tms = vehicles[j].max_speed
    if PURSUIT in KINDS and kind == PURSUIT:
        return cb.pursuit(
            px, py, vx, vy, ms, tx, ty, tvx, tvy, rec.prediction_time, tms, rec.prediction_form
        )
    if EVADE in KINDS and kind == EVADE:
        return cb.evade(
            px, py, vx, vy, ms, tx, ty, tvx, tvy, rec.threat_range, rec.prediction_time, tms,
            rec.prediction_form,
        )  # fmt: skip
    if SEEK in KINDS and kind == SEEK:
        return cb.seek(px, py, vx, vy, tx, ty, ms)
    if FLEE in KINDS and kind == FLEE:
        return cb.flee(px, py, vx, vy, tx, ty, ms, rec.threat_range)
    if ARRIVE in KINDS:
        return cb.arrive(px, py, vx, vy, tx, ty, ms, rec.slowing_radius, rec.max_deceleration)
    return 0.0, 0.0


# Inlined into its one caller, scripted_forces. As a call (once per behaviour of a
# strategy, the whole state among its arguments), a single Pursuit env stepped at 0.90 of
# the previous release's speed instead of 1.09 (python -m benchmarks.versus --paired); the
# step's first compile takes 12.5 s instead of 10.4 s.
@engine_inline_kernel
def raw_forces(
    rec, i, e0, m, state, active, vehicles, world, scene, near_d, near_j, draw, raw, rank
):
    """The unweighted force of behaviour record ``rec`` for vehicle ``i`` in every
    environment of the block into ``raw[:, b]`` (``b = e - e0``). The kind is dispatched once
    per block, so each loop body is one small kernel call. Wander takes its noise from
    draws ``draw, draw + 1`` of each environment's stream and advances its target in the
    active environments where the vehicle is in the game. ``near_d`` / ``near_j``: each
    environment's nearest opponent; ``rank`` is the working space of :func:`kth_nearest`."""
    kind = rec.kind
    pos, vel, head, wander, alive = (
        state.position,
        state.velocity,
        state.heading,
        state.wander,
        state.alive,
    )
    ms = vehicles[i].max_speed
    if WANDER in KINDS and kind == WANDER:
        jitter_dt = rec.wander_jitter * world.dt
        wander_speed = rec.wander_speed
        for b in range(m):
            e = e0 + b
            if not active[e] or not alive[e, i]:
                continue
            key, counter = state.key[e], state.counter[e]
            nx = 2.0 * uniform_draw(key, counter, draw) - 1.0
            ny = 2.0 * uniform_draw(key, counter, draw + 1) - 1.0
            raw[0, b], raw[1, b], wander[e, i, 0], wander[e, i, 1] = cb.wander(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                ms * wander_speed,
                wander[e, i, 0],
                wander[e, i, 1],
                nx,
                ny,
                rec.wander_radius,
                rec.wander_distance,
                jitter_dt,
                rec.wander_form,
            )
    elif WALL_AVOIDANCE in KINDS and kind == WALL_AVOIDANCE:
        h = world.half_size
        # Loop-invariant locals, so the feelers' cosine and sine are computed once per block.
        feeler, side_angle, side_scale = rec.feeler_length, rec.side_angle, rec.side_scale
        for b in range(m):
            e = e0 + b
            raw[0, b], raw[1, b] = cb.wall_avoidance(
                pos[e, i, 0],
                pos[e, i, 1],
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                ms,
                -h,
                -h,
                h,
                h,
                feeler,
                side_angle,
                side_scale,
            )
    elif FLOCKING and kind in FLOCKING_KINDS:
        # A pass over the vehicles per environment: skipped where the behaviour does not act
        # (its active_beyond / active_within window excludes the nearest opponent's distance;
        # scripted_forces then discards the force anyway), so a sheep that no dog is near does
        # not look for its neighbours.
        beyond, within = rec.active_beyond, rec.active_within
        for b in range(m):
            if near_d[b] > beyond and near_d[b] <= within:
                raw[0, b], raw[1, b] = flock_force(
                    kind, rec, e0 + b, i, pos, vel, head, alive, vehicles, rank
                )
            else:
                raw[0, b] = 0.0
                raw[1, b] = 0.0
    elif SINGLE_TARGET and kind in SINGLE_TARGET_KINDS:
        for b in range(m):
            raw[0, b], raw[1, b] = single_target_force(
                rec, e0 + b, i, pos, vel, alive, vehicles, state.goal, near_j[b]
            )
    elif SCENE:
        for b in range(m):
            raw[0, b], raw[1, b] = scene_force(
                rec, e0 + b, i, pos, vel, head, alive, vehicles, state.obstacles[e0 + b],
                scene, near_j[b],
            )  # fmt: skip


@engine_inline_kernel
def scene_force(rec, e, i, pos, vel, head, alive, vehicles, obstacles, scene, near_j):
    """The behaviours that involve the scene (obstacles, path, flow field) or more than one
    other vehicle: obstacle avoidance, hide, follow path, flow field, interpose, offset
    pursuit, unaligned collision avoidance. ``obstacles`` are environment ``e``'s ``(M, 3)``
    circles ``(x, y, radius)`` (``State.obstacles[e]``; radius 0: none); ``scene`` is
    ``(path,)``, a ``(P, 2)`` polyline, possibly empty."""
    kind = rec.kind
    path = scene[0]
    px, py = pos[e, i, 0], pos[e, i, 1]
    vx, vy = vel[e, i, 0], vel[e, i, 1]
    hx, hy = head[e, i, 0], head[e, i, 1]
    veh = vehicles[i]
    ms = veh.max_speed
    if OBSTACLE_AVOIDANCE in KINDS and kind == OBSTACLE_AVOIDANCE:
        if obstacles.shape[0] == 0:
            return 0.0, 0.0
        return cb.obstacle_avoidance(
            px,
            py,
            vx,
            vy,
            hx,
            hy,
            ms,
            veh.radius,
            obstacles,
            rec.detection_length,
            rec.braking_weight,
        )
    if FOLLOW_PATH in KINDS and kind == FOLLOW_PATH:
        if path.shape[0] < 2:
            return 0.0, 0.0
        return cb.follow_path(
            px, py, vx, vy, ms, path, rec.path_prediction, rec.look_ahead, rec.path_loop
        )
    if FLOW_FIELD in KINDS and kind == FLOW_FIELD:
        # Reynolds samples the field a little ahead of the vehicle; the vortex circles the
        # arena centre (or the target the record names).
        cx, cy, found = target_point(pos, alive, vehicles, e, i, rec.target, near_j)
        if not found:
            return 0.0, 0.0
        spin = -1.0 if rec.flow_clockwise else 1.0
        fvx, fvy = cb.vortex_field(
            px + vx * rec.flow_prediction,
            py + vy * rec.flow_prediction,
            cx,
            cy,
            rec.flow_radius,
            spin,
            rec.flow_gain,
        )
        return cb.flow_field_following(px, py, vx, vy, ms, fvx, fvy)
    if UNALIGNED_COLLISION_AVOIDANCE in KINDS and kind == UNALIGNED_COLLISION_AVOIDANCE:
        soonest = np.inf
        other = -1
        for j in range(pos.shape[1]):
            if j == i or not alive[e, j]:
                continue
            if rec.target == TEAMMATES and vehicles[j].team != veh.team:
                continue
            dx = pos[e, j, 0] - px
            dy = pos[e, j, 1] - py
            if not length(dx, dy) <= rec.neighbor_radius:
                continue
            t = cb.approach_time(
                dx,
                dy,
                vel[e, j, 0] - vx,
                vel[e, j, 1] - vy,
                veh.radius + vehicles[j].radius,
                rec.time_horizon,
            )
            if t < soonest:
                soonest = t
                other = j
        if other < 0:
            return 0.0, 0.0
        return cb.collision_response(
            px,
            py,
            vx,
            vy,
            hx,
            hy,
            ms,
            pos[e, other, 0],
            pos[e, other, 1],
            vel[e, other, 0],
            vel[e, other, 1],
            soonest,
        )
    # The rest steer relative to a vehicle: the target (nearest opponent by default).
    j = near_j
    if NEAREST_TEAMMATE in TARGETS and rec.target == NEAREST_TEAMMATE:
        j, _ = nearest_of(pos, alive, vehicles, e, i, False)
    if j < 0:
        return 0.0, 0.0
    if HIDE in KINDS and kind == HIDE:
        return cb.hide(
            px,
            py,
            vx,
            vy,
            ms,
            pos[e, j, 0],
            pos[e, j, 1],
            vel[e, j, 0],
            vel[e, j, 1],
            obstacles[:, 0:2],
            obstacles[:, 2],
            rec.slowing_radius,
            rec.hide_distance,
        )
    if INTERPOSE in KINDS and kind == INTERPOSE:
        # Between the target and the nearest teammate: a bodyguard.
        q, _ = nearest_of(pos, alive, vehicles, e, i, False)
        if q < 0:
            return 0.0, 0.0
        return cb.interpose(
            px,
            py,
            vx,
            vy,
            ms,
            pos[e, j, 0],
            pos[e, j, 1],
            vel[e, j, 0],
            vel[e, j, 1],
            pos[e, q, 0],
            pos[e, q, 1],
            vel[e, q, 0],
            vel[e, q, 1],
            rec.slowing_radius,
        )
    if OFFSET_PURSUIT in KINDS and kind == OFFSET_PURSUIT:
        # The target's frame: its direction of motion (its heading), or the world axes while
        # it stands still (its heading is then not observable).
        fx, fy = target_forward(vel, e, j)
        ox, oy = rec.offset_forward, rec.offset_side
        if rec.offset_spread:
            rank, size = spread_rank(pos, alive, vehicles, e, i, j, fx, fy)
            if size > 1:
                # Teammates take the offset rotated to evenly spread bearings around the
                # target, in the order of their bearings (see spread_rank).
                angle = 2.0 * math.pi * rank / size
                c, s_ = math.cos(angle), math.sin(angle)
                ox, oy = c * ox - s_ * oy, s_ * ox + c * oy
        return cb.offset_pursuit(
            px,
            py,
            vx,
            vy,
            ms,
            pos[e, j, 0],
            pos[e, j, 1],
            vel[e, j, 0],
            vel[e, j, 1],
            fx,
            fy,
            ox,
            oy,
            rec.slowing_radius,
        )
    return 0.0, 0.0


@engine_inline_kernel
def target_forward(vel, e, j):
    """Unit forward direction of vehicle ``j``'s frame for offset pursuit: along its
    velocity, or the world x axis while it stands still (a vehicle's heading is its
    direction of motion once it moves, but a standing one's is not observable)."""
    speed = length(vel[e, j, 0], vel[e, j, 1])
    if speed > MIN_HEADING_SPEED:
        return vel[e, j, 0] / speed, vel[e, j, 1] / speed
    return 1.0, 0.0


@engine_inline_kernel
def spread_bearing(pos, e, q, j, bx, by, shift):
    """Bearing of vehicle ``q`` seen from vehicle ``j``, counterclockwise from the direction
    ``(bx, by)`` plus ``shift``, in ``[0, 2 pi)``, and its distance."""
    dx = pos[e, q, 0] - pos[e, j, 0]
    dy = pos[e, q, 1] - pos[e, j, 1]
    a = math.atan2(bx * dy - by * dx, bx * dx + by * dy) + shift
    two_pi = 2.0 * math.pi
    if a < 0.0:
        a += two_pi
    if a >= two_pi:
        a -= two_pi
    return a, length(dx, dy)


@engine_inline_kernel
def spread_rank(pos, alive, vehicles, e, i, j, fx, fy):
    """Rank and team size of pursuer ``i`` for a spread offset pursuit of target ``j``
    (forward ``(fx, fy)``), from what ``i``'s observation shows (every teammate is observed;
    the roster order is not): ``team_size`` is 1 + its teammates in the game, and ``rank``
    the number of them whose bearing from the target comes before its own, counterclockwise
    from the target's backward direction turned clockwise by half a slot (``pi /
    team_size``), ties broken by distance to the target, then by x, then by y. So the
    pursuers take the spread bearings in the order they already stand around the target,
    each the free one nearest to where it is, instead of crossing each other; and a pursuer
    on its bearing sits mid-slot, not on the cut where its rank would flip."""
    team = vehicles[i].team
    n = pos.shape[1]
    size = 1
    for q in range(n):
        if q != i and alive[e, q] and vehicles[q].team == team:
            size += 1
    if size == 1:
        return 0, 1
    shift = math.pi / size
    a_i, d_i = spread_bearing(pos, e, i, j, -fx, -fy, shift)
    x_i, y_i = pos[e, i, 0], pos[e, i, 1]
    rank = 0
    for q in range(n):
        if q == i or not alive[e, q] or vehicles[q].team != team:
            continue
        a_q, d_q = spread_bearing(pos, e, q, j, -fx, -fy, shift)
        x_q, y_q = pos[e, q, 0], pos[e, q, 1]
        if a_q != a_i:
            before = a_q < a_i
        elif d_q != d_i:
            before = d_q < d_i
        elif x_q != x_i:
            before = x_q < x_i
        else:
            before = y_q < y_i
        if before:
            rank += 1
    return rank, size


@engine_kernel
def evade_each(b, e, i, pos, vel, alive, vehicles):
    """Evade every opponent within ``threat_range``, each force weighted by the inverse of
    its distance (nearer threats count more), normalised by the total weight."""
    px, py = pos[e, i, 0], pos[e, i, 1]
    vx, vy = vel[e, i, 0], vel[e, i, 1]
    ms = vehicles[i].max_speed
    team = vehicles[i].team
    sx = 0.0
    sy = 0.0
    total = 0.0
    for j in range(pos.shape[1]):
        if j == i or not alive[e, j] or vehicles[j].team == team:
            continue
        d = length(pos[e, j, 0] - px, pos[e, j, 1] - py)
        if not d <= b.threat_range:
            continue
        w = 1.0 / max(d, 1e-3)
        fx, fy = cb.evade(
            px,
            py,
            vx,
            vy,
            ms,
            pos[e, j, 0],
            pos[e, j, 1],
            vel[e, j, 0],
            vel[e, j, 1],
            b.threat_range,
            b.prediction_time,
            vehicles[j].max_speed,
            b.prediction_form,
        )
        sx += w * fx
        sy += w * fy
        total += w
    if total <= 0.0:
        return 0.0, 0.0
    return sx / total, sy / total


# --------------------------------------------------------------------------- stages
@engine_kernel
def scripted_forces(
    e0, m, state, active, vehicles, behaviors, strategies, world, scene, scratch, force
):
    """Combined steering forces ``force[i, :, b]`` of the scripted vehicles of environments
    ``e0 .. e0 + m - 1`` (``b = e - e0``) that are active and in the game; zero for the
    others. ``scratch`` is a :class:`StrategyScratch` of at least ``m`` columns.

    The block index is the last axis of every working array, and each combination method
    has its own loop over the block: short, branch-light loop bodies over consecutive
    memory, which the CPU overlaps across environments."""
    pos, alive = state.position, state.alive
    n = pos.shape[1]
    raw = scratch.vectors[0]
    total = scratch.vectors[1]
    near_d = scratch.near_d
    near_j = scratch.near_j
    rank = (scratch.rank_d, scratch.rank_j)  # topological neighbourhoods' working space
    is_open = scratch.is_open  # prioritized: budget left; dithered: none chosen
    for i in range(n):
        s = vehicles[i].strategy
        if s == LEARNED:
            continue
        strat = strategies[s]
        method = strat.combination
        mf = vehicles[i].max_force
        nearest_in_block(pos, alive, vehicles, e0, m, i, True, near_d, near_j)
        for b in range(m):
            e = e0 + b
            total[0, b] = 0.0
            total[1, b] = 0.0
            is_open[b] = active[e] and alive[e, i]
        draw = vehicles[i].draw_offset
        for k in range(strat.n_behaviors):
            rec = behaviors[s, k]
            raw_forces(
                rec,
                i,
                e0,
                m,
                state,
                active,
                vehicles,
                world,
                scene,
                near_d,
                near_j,
                draw,
                raw,
                rank,
            )
            if rec.kind == WANDER:
                draw += 2
            # active_beyond / active_within: the behaviour acts only while the nearest
            # opponent is farther than / at most that far (the classic evader wanders only
            # while unthreatened; a sheep flocks only while a dog is near).
            beyond = rec.active_beyond
            within = rec.active_within
            w = rec.weight
            # These two loops compute every environment's sum and keep it where the
            # behaviour acts (a select rather than a branch), so the compiler vectorises them.
            if PRIORITIZED in COMBINATIONS and method == PRIORITIZED:
                for b in range(m):
                    acts = is_open[b] & (near_d[b] > beyond) & (near_d[b] <= within)
                    tx, ty, left = accumulate(
                        total[0, b], total[1, b], w * raw[0, b], w * raw[1, b], mf
                    )
                    total[0, b] = tx if acts else total[0, b]
                    total[1, b] = ty if acts else total[1, b]
                    is_open[b] = left if acts else is_open[b]
            elif WEIGHTED_SUM in COMBINATIONS and method == WEIGHTED_SUM:
                for b in range(m):
                    acts = is_open[b] & (near_d[b] > beyond) & (near_d[b] <= within)
                    tx, ty = weighted_add(total[0, b], total[1, b], raw[0, b], raw[1, b], w)
                    total[0, b] = tx if acts else total[0, b]
                    total[1, b] = ty if acts else total[1, b]
            elif DITHERED in COMBINATIONS:
                probability = rec.probability
                for b in range(m):
                    e = e0 + b
                    pick = uniform_draw(state.key[e], state.counter[e], draw)
                    if is_open[b] and near_d[b] > beyond and near_d[b] <= within:
                        fx, fy, wins = dither_candidate(raw[0, b], raw[1, b], w, probability, pick)
                        if wins:
                            total[0, b] = fx
                            total[1, b] = fy
                            is_open[b] = False
                draw += 1
        if PRIORITIZED in COMBINATIONS and method == PRIORITIZED:
            for b in range(m):
                force[i, 0, b] = total[0, b]
                force[i, 1, b] = total[1, b]
        else:
            for b in range(m):
                force[i, 0, b], force[i, 1, b] = truncate(total[0, b], total[1, b], mf)


@engine_kernel
def wall(p, v, limit):
    """The arena's inelastic wall along one axis: clamp ``p`` into ``[-limit, limit]`` and
    cancel a velocity pointing out. Returns ``(p, v)``."""
    if p > limit:
        return limit, (0.0 if v > 0 else v)
    if p < -limit:
        return -limit, (0.0 if v < 0 else v)
    return p, v


@engine_kernel
def move(e0, m, state, active, vehicles, world, actions, force, before):
    """Learned agents' forces from their actions, then one physics step, the walls and the
    obstacles (:func:`~steer_env.core.physics.circle_contact`) for every vehicle in the
    game of the active environments; positions before the step go to ``before[i, :, b]``.

    The walls clamp first, then each obstacle stops the move where it first touched it
    (:func:`obstacle_contact`). Obstacles keep a gap of at least a vehicle's diameter from
    the walls and from each other (the tasks' configs check it), so neither can push a
    vehicle into the other."""
    pos, vel, head = state.position, state.velocity, state.heading
    obstacles = state.obstacles
    n = pos.shape[1]
    dt = world.dt
    for i in range(n):
        a = vehicles[i].agent
        mf = vehicles[i].max_force
        if a < 0:
            continue
        for b in range(m):
            e = e0 + b
            # The action is in the agent's frame, in units of its max force, magnitude <= 1.
            lx, ly = truncate(actions[e, a, 0], actions[e, a, 1], 1.0)
            wx, wy = to_world(lx, ly, head[e, i, 0], head[e, i, 1])
            force[i, 0, b] = wx * mf
            force[i, 1, b] = wy * mf
    for i in range(n):
        veh = vehicles[i]
        limit = world.half_size - veh.radius
        for b in range(m):
            e = e0 + b
            px, py = pos[e, i, 0], pos[e, i, 1]
            before[i, 0, b] = px
            before[i, 1, b] = py
            if not active[e] or not state.alive[e, i]:
                continue
            px, py, vx, vy, hx, hy = integrate(
                px,
                py,
                vel[e, i, 0],
                vel[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
                force[i, 0, b],
                force[i, 1, b],
                veh.mass,
                veh.max_speed,
                veh.max_force,
                dt,
            )
            pos[e, i, 0], wvx = wall(px, vx, limit)
            pos[e, i, 1], wvy = wall(py, vy, limit)
            if wvx != vx or wvy != vy:
                # A wall took away part of the velocity: the heading follows what is left.
                speed = length(wvx, wvy)
                if speed > MIN_HEADING_SPEED:
                    hx = wvx / speed
                    hy = wvy / speed
            vel[e, i, 0] = wvx
            vel[e, i, 1] = wvy
            head[e, i, 0] = hx
            head[e, i, 1] = hy
        if obstacles.shape[1] > 0:
            # A pass of its own, so an empty arena's loop above stays as short as before.
            for b in range(m):
                e = e0 + b
                if not (active[e] and state.alive[e, i]):
                    continue
                near = near_obstacles(e, i, b, state, veh.radius, before)
                if near != 0:
                    obstacle_contact(e, i, b, state, veh.radius, before, near)


@engine_inline_kernel
def within_reach(table, o, px, py, reach):
    """Whether obstacle ``o`` of an environment's obstacles seen as
    :func:`~steer_env.core.jit.flat_rows` ``table`` (radius 0: none) has its edge within
    ``reach`` m of ``(px, py)``: one squared distance, no branch."""
    r = table[3 * o + 2]
    ox = px - table[3 * o]
    oy = py - table[3 * o + 1]
    near = r + reach
    return (r > 0.0) & (ox * ox + oy * oy < near * near)


@engine_inline_kernel
def move_reach(state, e, i, b, radius, before):
    """How far from where vehicle ``i`` (body ``radius`` m) ended its move from
    ``before[i, :, b]`` an obstacle's edge can be and still have been touched: its radius
    plus the move's length."""
    px, py = state.position[e, i, 0], state.position[e, i, 1]
    return radius + length(px - before[i, 0, b], py - before[i, 1, b])


#: Rows of an obstacle table that :func:`near_obstacles` tells apart (one bit each).
MASK_ROWS = 64
#: :func:`near_obstacles`' answer when a row past :data:`MASK_ROWS` may be near.
ALL_ROWS = np.uint64(0xFFFFFFFFFFFFFFFF)


@engine_inline_kernel
def near_obstacles(e, i, b, state, radius, before):
    """Which obstacles of environment ``e`` vehicle ``i`` may have touched in its move
    (:func:`within_reach` of :func:`move_reach`): bit ``o`` for row ``o`` of the first
    :data:`MASK_ROWS`, every bit when a row past them may have; 0 for none. One pass
    without a branch over the :func:`~steer_env.core.jit.flat_rows` table (vector code),
    inlined in :func:`move`: most moves touch nothing, and then that is all they cost."""
    px, py = state.position[e, i, 0], state.position[e, i, 1]
    reach = move_reach(state, e, i, b, radius, before)
    table = flat_rows(state.obstacles[e])
    m = state.obstacles.shape[1]
    near = np.uint64(0)
    for o in range(min(m, MASK_ROWS)):
        near |= np.uint64(within_reach(table, o, px, py, reach)) << np.uint64(o)
    beyond = False
    for o in range(MASK_ROWS, m):
        beyond |= within_reach(table, o, px, py, reach)
    return ALL_ROWS if beyond else near


@engine_kernel
def obstacle_contact(e, i, b, state, radius, before, near):
    """The obstacles of environment ``e`` stop vehicle ``i`` (body ``radius`` m), which
    moved from ``before[i, :, b]`` to where it is, one obstacle after another
    (:func:`~steer_env.core.physics.circle_contact`); when they took away part of its
    velocity, its heading follows what is left, as at a wall. ``near`` is
    :func:`near_obstacles`' answer: until a contact moves the vehicle, the rows whose bit
    is clear are out of reach, and are passed over (from one set bit to the next)."""
    obstacles = state.obstacles
    pos, vel, head = state.position, state.velocity, state.heading
    px, py = pos[e, i, 0], pos[e, i, 1]
    vx, vy = vel[e, i, 0], vel[e, i, 1]
    reach = move_reach(state, e, i, b, radius, before)
    table = flat_rows(obstacles[e])
    m = obstacles.shape[1]
    moved = False
    o = 0
    while o < m:
        if o < MASK_ROWS and not moved:
            ahead = near >> np.uint64(o)
            if ahead == np.uint64(0):
                o = MASK_ROWS
                continue
            o += lowest_bit(ahead)
        if within_reach(table, o, px, py, reach):
            x, y, vx, vy, _ = circle_contact(
                before[i, 0, b], before[i, 1, b], px, py, vx, vy,
                table[3 * o], table[3 * o + 1], table[3 * o + 2] + radius,
            )  # fmt: skip
            moved |= (x != px) | (y != py)
            px, py = x, y
        o += 1
    pos[e, i, 0] = px
    pos[e, i, 1] = py
    if vx != vel[e, i, 0] or vy != vel[e, i, 1]:
        speed = length(vx, vy)
        if speed > MIN_HEADING_SPEED:
            head[e, i, 0] = vx / speed
            head[e, i, 1] = vy / speed
        vel[e, i, 0] = vx
        vel[e, i, 1] = vy


@engine_kernel
def start_wander(e, state, vehicles, behaviors, strategies):
    """Scale each scripted wanderer's start target (a unit vector from :func:`reset_env`)
    onto its wander circle."""
    for i in range(state.position.shape[1]):
        s = vehicles[i].strategy
        if s == LEARNED:
            continue
        for k in range(strategies[s].n_behaviors):
            if behaviors[s, k].kind == WANDER:
                r = behaviors[s, k].wander_radius
                state.wander[e, i, 0] *= r
                state.wander[e, i, 1] *= r
                break


# --------------------------------------------------------------------------- obstacles
#: Candidate circles drawn per obstacle placed at reset (each a centre and a radius).
OBSTACLE_CANDIDATES = 16
#: Random draws per obstacle placed at reset.
OBSTACLE_DRAWS = 3 * OBSTACLE_CANDIDATES


@engine_kernel
def clear_of_obstacles(obstacles, e, x, y, clearance):
    """Whether the point ``(x, y)`` is at least ``clearance`` m from the edge of every
    obstacle of environment ``e``."""
    for o in range(obstacles.shape[1]):
        r = obstacles[e, o, 2]
        if r > 0.0 and length(x - obstacles[e, o, 0], y - obstacles[e, o, 1]) < r + clearance:
            return False
    return True


@engine_kernel
def start_obstacles(e, state, world):
    """The start of a reset of environment ``e``: with obstacles placed per episode
    (``world.n_obstacles``), the last episode's are cleared (the vehicles are placed
    first, then :func:`place_obstacles` places the new ones around them); a fixed layout
    stays, and the vehicles' start candidates keep clear of it."""
    if world.n_obstacles > 0:
        clear_obstacles(e, state)


@engine_kernel
def clear_obstacles(e, state):
    """Every obstacle row of environment ``e`` emptied (radius 0)."""
    for o in range(state.obstacles.shape[1]):
        state.obstacles[e, o, 2] = 0.0


@engine_kernel
def push_out_of_obstacles(e, i, state, vehicles):
    """Vehicle ``i`` of environment ``e`` moved out of any obstacle its body overlaps,
    along the radius (a start position that no candidate could keep clear)."""
    obstacles = state.obstacles
    x, y = state.position[e, i, 0], state.position[e, i, 1]
    for o in range(obstacles.shape[1]):
        r = obstacles[e, o, 2]
        if r > 0.0:
            x, y, _, _, _ = circle_contact(
                x, y, x, y, 0.0, 0.0, obstacles[e, o, 0], obstacles[e, o, 1],
                r + vehicles[i].radius,
            )  # fmt: skip
    state.position[e, i, 0] = x
    state.position[e, i, 1] = y


@engine_inline_kernel
def apart_from_placed(obstacles, count, x, y, radius, gap):
    """Whether a circle of ``radius`` m at ``(x, y)`` keeps ``gap`` m from each of the
    first ``count`` rows of ``obstacles`` ``(M, 3)`` (radius 0: none), as ``length``
    tells: a branch-free pass over their :func:`~steer_env.core.jit.flat_rows` that
    compares squares (:func:`~steer_env.core.vecmath.root_above`, vector code), again
    with ``length`` itself when a comparison was too close to settle that way."""
    table = flat_rows(obstacles)
    apart = True
    settled = True
    for q in range(count):
        r = table[3 * q + 2]
        s = squared_length(x - table[3 * q], y - table[3 * q + 1])
        far = root_above(s, radius + r + gap)
        settled &= far | root_below(s, radius + r + gap) | (not r > 0.0)
        apart &= (not r > 0.0) | far
    if not settled:
        apart = True
        for q in range(count):
            r = obstacles[q, 2]
            if r > 0.0:
                d = length(x - obstacles[q, 0], y - obstacles[q, 1])
                apart &= d >= radius + r + gap
    return apart


@engine_kernel
def place_obstacles(e, state, vehicles, world, key, counter, first, keep_x, keep_y, keep_r):
    """Place ``world.n_obstacles`` obstacles in environment ``e`` from draws ``first``
    onwards of its stream (:data:`OBSTACLE_DRAWS` per obstacle) and return how many draws
    that took (0 without obstacles placed per episode: the stream is as it was).

    Each obstacle takes the first of :data:`OBSTACLE_CANDIDATES` candidates (a radius
    uniform in ``[obstacle_radius_min, obstacle_radius_max]``, a centre uniform where the
    circle keeps ``obstacle_gap`` m from the walls) that keeps ``obstacle_gap`` m from the
    obstacles already placed, from every vehicle's body and from the circle of radius
    ``keep_r`` around ``(keep_x, keep_y)`` (the rules' area kept clear; ``keep_r < 0``:
    none). With no such candidate its row stays empty (radius 0).

    Every candidate is tested against every row: those not placed yet are empty
    (:func:`clear_obstacles` here, as in :func:`start_obstacles`), so the test's loop has
    the same length for all candidates and runs as one vector pass."""
    count = world.n_obstacles
    if count == 0:
        return 0
    clear_obstacles(e, state)
    obstacles = state.obstacles
    m = obstacles.shape[1]
    pos = state.position
    gap = world.obstacle_gap
    r_min, r_span = world.obstacle_radius_min, world.obstacle_radius_max - world.obstacle_radius_min
    half = world.half_size
    for o in range(count):
        base = first + o * OBSTACLE_DRAWS
        for c in range(OBSTACLE_CANDIDATES):
            r = r_min + r_span * uniform_draw(key, counter, base + 3 * c + 2)
            room = half - r - gap
            if room <= 0.0:
                continue
            x = -room + 2.0 * room * uniform_draw(key, counter, base + 3 * c)
            y = -room + 2.0 * room * uniform_draw(key, counter, base + 3 * c + 1)
            ok = keep_r < 0.0 or length_at_least(x - keep_x, y - keep_y, r + keep_r + gap)
            ok = ok and apart_from_placed(obstacles[e], m, x, y, r, gap)
            for j in range(pos.shape[1]):
                if ok:
                    ok = length_at_least(
                        x - pos[e, j, 0], y - pos[e, j, 1], r + vehicles[j].radius + gap
                    )
            if ok:
                obstacles[e, o, 0] = x
                obstacles[e, o, 1] = y
                obstacles[e, o, 2] = r
                break
    return count * OBSTACLE_DRAWS


@engine_inline_kernel
def observe_obstacles(envs, state, world, agent_index, obs, work):
    """The ``observed_obstacles`` obstacles of each environment of ``envs`` nearest to each
    learned agent's body, nearest first (ties: the lower row), into the last
    ``OBSTACLE_WIDTH * observed_obstacles`` positions of ``obs[e, a]``: the offset to the
    nearest point of the obstacle's edge in the agent's frame, its radius and a presence
    flag; padding slots all zero. One call for every environment of a block; ``work`` is
    the batch's :class:`StepWork`. Inlined, so that a world without obstacle slots pays
    one test, not a call that passes every array of the state and the working arrays
    (about 80 ns of a single environment's compiled step)."""
    if world.observed_obstacles > 0:
        observe_obstacle_rows(envs, state, world, agent_index, obs, work)


@engine_kernel
def observe_obstacle_rows(envs, state, world, agent_index, obs, work):
    """:func:`observe_obstacles` of a world with obstacle slots."""
    slots = world.observed_obstacles
    pos, head, obstacles = state.position, state.heading, state.obstacles
    dist, ranked = work.distance, work.obstacle_order
    start = obs.shape[2] - OBSTACLE_WIDTH * slots
    diag, inv_arena = world.diagonal, 1.0 / world.arena_size
    for q_ in range(envs.shape[0]):
        e = envs[q_]
        for a in range(agent_index.shape[0]):
            i = index(agent_index[a])
            observe_obstacle_slots(
                pos[e, i, 0], pos[e, i, 1], head[e, i, 0], head[e, i, 1], obstacles[e],
                obs[e, a], dist, ranked[e, a], slots, start, diag, inv_arena,
            )  # fmt: skip


@engine_inline_kernel
def nearer(da, a, db, b):
    """Whether row ``a`` at distance ``da`` comes before row ``b`` at ``db``: by distance,
    then row (no branch)."""
    return (da < db) | ((da == db) & (a < b))


@engine_inline_kernel
def slots_still_nearest(dist, ranked, top, m):
    """Whether the first ``top`` rows of ``ranked`` are, in order, the ``top`` nearest of
    the ``m`` rows by (``dist``, row) (:func:`nearer`): they are in order, and no more
    than ``top`` rows come no later than the last of them (a branch-free count over every
    row, which runs as vector code)."""
    ordered = True
    for q in range(1, top):
        ordered &= nearer(dist[ranked[q - 1]], ranked[q - 1], dist[ranked[q]], ranked[q])
    last = ranked[top - 1]
    bound = dist[last]
    count = 0
    for o in range(m):
        count += nearer(dist[o], o, bound, last) | (o == last)
    return ordered & (count == top)


@engine_inline_kernel
def insert_ranked(dist, ranked, o, t):
    """Row ``o`` into ``ranked[: t + 1]``, whose first ``t`` rows are in (``dist``, row)
    order: those after it move one place on (position ``t`` is free to take one)."""
    while t > 0 and nearer(dist[o], o, dist[ranked[t - 1]], ranked[t - 1]):
        ranked[t] = ranked[t - 1]
        t -= 1
    ranked[t] = o


@engine_inline_kernel
def rank_obstacles(dist, ranked, top):
    """The first ``top`` (at least 1) of the rows ``ranked`` made the ``top`` nearest by
    (``dist``, row) (:func:`nearer`), in order, from the order they hold (the agent's
    last observation's, which its move seldom changes): an insertion sort of those, then
    one pass over the others, each nearer than the last of them taking its place among
    them (the row it displaces takes its own). The rest stay a permutation of the other
    rows, in no particular order: only the first ``top`` are ever read."""
    for s_ in range(1, top):
        insert_ranked(dist, ranked, ranked[s_], s_)
    for s_ in range(top, ranked.shape[0]):
        o = ranked[s_]
        if nearer(dist[o], o, dist[ranked[top - 1]], ranked[top - 1]):
            ranked[s_] = ranked[top - 1]
            insert_ranked(dist, ranked, o, top - 1)


@engine_inline_kernel
def observe_obstacle_slots(
    px, py, hx, hy, obstacles, row, dist, ranked, slots, start, diag, inv_arena
):
    """:func:`observe_obstacles` of one agent at ``(px, py)`` heading ``(hx, hy)`` among
    ``obstacles`` ``(M, 3)``, into its observation ``row``. ``dist`` (at least ``M`` long)
    takes each obstacle's distance (``inf``: an empty row); ``ranked`` (a permutation of
    the rows) holds them by distance, then row, as far as the slots go: the agent's last
    observation left them there, and a move seldom changes which obstacles are nearest,
    so mostly :func:`slots_still_nearest` confirms them and nothing is sorted."""
    m = obstacles.shape[0]
    # Every distance first: a branch-free loop over the flat table (vector code), with
    # the fast path of ``length``, which is the length unless a square left its range.
    table = flat_rows(obstacles)
    exact = True
    for o in range(m):
        r = table[3 * o + 2]
        s = squared_length(table[3 * o] - px, table[3 * o + 1] - py)
        exact &= root_is_length(s)
        d = math.sqrt(s) - r
        dist[o] = d if r > 0.0 else np.inf
    if not exact:
        for o in range(m):
            r = obstacles[o, 2]
            d = length(obstacles[o, 0] - px, obstacles[o, 1] - py) - r
            dist[o] = d if r > 0.0 else np.inf
    top = min(slots, m)
    if not (m > 0 and slots_still_nearest(dist, ranked, top, m)):
        rank_obstacles(dist, ranked, top)
    # (Indices through index(): the slot's place and the row it shows are never negative.)
    for q in range(slots):
        at = start + OBSTACLE_WIDTH * q
        o = index(ranked[q] if q < m else 0)
        if not (q < m and dist[o] < np.inf):
            for f_ in range(OBSTACLE_WIDTH):
                row[index(at + f_)] = 0.0
            continue
        ox = obstacles[o, 0] - px
        oy = obstacles[o, 1] - py
        r = obstacles[o, 2]
        centre = dist[o] + r
        # The nearest point of the edge: the centre's offset shortened by the radius,
        # in units of the diagonal (one division for the slot).
        scale = (centre - r) / (centre * diag) if centre > 0.0 else 0.0
        f, s = to_local(ox * scale, oy * scale, hx, hy)
        row[index(at + OBSTACLE_OFFSET)] = clip_unit(f)
        row[index(at + OBSTACLE_OFFSET + 1)] = clip_unit(s)
        row[index(at + OBSTACLE_RADIUS)] = min(r * inv_arena, 1.0)
        row[index(at + OBSTACLE_PRESENT)] = 1.0


@engine_kernel
def decode_egocentric(obs, e, state, vehicles, world):
    """The inverse of :func:`observe_egocentric` for agent 0 of one row ``obs[e]``: the
    world-frame scene that observation shows, into environment ``e`` of ``state``
    (vehicle 0 the observer, then one vehicle per teammate slot, then one per opponent
    slot; empty slots leave the game). Returns the observer's pose ``(px, py, hx, hy)``,
    which the rules' decoders go on from (:func:`decode_obstacles`, a task's own groups).

    The wall offsets fix the observer's pose: east minus west offset is the world x axis
    seen from the agent (times ``arena_size``), north minus south the y axis, and the mean
    of each opposite pair is minus the agent's position. Observed vehicles' headings follow
    their velocities (the observation carries no heading)."""
    arena, diag = world.arena_size, world.diagonal
    pos, vel, head, alive = state.position, state.velocity, state.heading, state.alive
    n = pos.shape[1]
    wx, wy = obs[e, WEST_WALL] * arena, obs[e, WEST_WALL + 1] * arena
    ex, ey = obs[e, EAST_WALL] * arena, obs[e, EAST_WALL + 1] * arena
    sx, sy = obs[e, SOUTH_WALL] * arena, obs[e, SOUTH_WALL + 1] * arena
    nx, ny = obs[e, NORTH_WALL] * arena, obs[e, NORTH_WALL + 1] * arena
    # World x axis in the agent's frame is (hx, -hy); world y axis is (hy, hx).
    hx = (ex - wx) + (ny - sy)
    hy = -(ey - wy) + (nx - sx)
    hn = length(hx, hy)
    hx, hy = (hx / hn, hy / hn) if hn > 0.0 else (1.0, 0.0)
    head[e, 0, 0] = hx
    head[e, 0, 1] = hy
    west = to_world(wx, wy, hx, hy)[0]
    east = to_world(ex, ey, hx, hy)[0]
    south = to_world(sx, sy, hx, hy)[1]
    north = to_world(nx, ny, hx, hy)[1]
    px = -(west + east) / 2.0
    py = -(south + north) / 2.0
    pos[e, 0, 0] = px
    pos[e, 0, 1] = py
    ms = vehicles[0].max_speed
    vx, vy = to_world(obs[e, VELOCITY_FORWARD] * ms, obs[e, VELOCITY_SIDE] * ms, hx, hy)
    vel[e, 0, 0] = vx
    vel[e, 0, 1] = vy
    alive[e, 0] = True
    scale = vehicles[0].speed_scale
    for j in range(1, n):
        at = SELF_WIDTH + OTHER_WIDTH * (j - 1)
        alive[e, j] = obs[e, at + OTHER_PRESENT] > 0.5
        rx, ry = to_world(
            obs[e, at + OTHER_POSITION] * diag, obs[e, at + OTHER_POSITION + 1] * diag, hx, hy
        )
        pos[e, j, 0] = px + rx
        pos[e, j, 1] = py + ry
        ux, uy = to_world(
            obs[e, at + OTHER_VELOCITY] * scale, obs[e, at + OTHER_VELOCITY + 1] * scale, hx, hy
        )
        vel[e, j, 0] = vx + ux
        vel[e, j, 1] = vy + uy
        speed = length(vel[e, j, 0], vel[e, j, 1])
        if speed > MIN_HEADING_SPEED:
            head[e, j, 0] = vel[e, j, 0] / speed
            head[e, j, 1] = vel[e, j, 1] / speed
        else:
            head[e, j, 0] = hx
            head[e, j, 1] = hy
    return px, py, hx, hy


@engine_kernel
def decode_obstacles(obs, e, px, py, hx, hy, world, obstacles):
    """The inverse of :func:`observe_obstacles` for one row ``obs[e]`` of an observer at
    ``(px, py)`` heading ``(hx, hy)``: each observed obstacle into row ``q`` of
    ``obstacles[e]`` (the centre lies ``radius`` m beyond the observed edge point, away
    from the observer), padding slots and the rows beyond them empty."""
    slots = world.observed_obstacles
    start = obs.shape[1] - OBSTACLE_WIDTH * slots
    diag, arena = world.diagonal, world.arena_size
    for o in range(obstacles.shape[1]):
        obstacles[e, o, 2] = 0.0
    for q in range(min(slots, obstacles.shape[1])):
        at = start + OBSTACLE_WIDTH * q
        if not obs[e, at + OBSTACLE_PRESENT] > 0.5:
            continue
        ox, oy = to_world(
            obs[e, at + OBSTACLE_OFFSET] * diag, obs[e, at + OBSTACLE_OFFSET + 1] * diag, hx, hy
        )
        r = obs[e, at + OBSTACLE_RADIUS] * arena
        d = length(ox, oy)
        ux, uy = (ox / d, oy / d) if d > 0.0 else (hx, hy)
        obstacles[e, q, 0] = px + ox + ux * r
        obstacles[e, q, 1] = py + oy + uy * r
        obstacles[e, q, 2] = r


# --------------------------------------------------------------------------- observation
@engine_kernel
def clip_unit(x):
    """``x`` clipped to [-1, 1]."""
    return min(max(x, -1.0), 1.0)


@engine_inline_kernel
def observe_egocentric(e, pos, vel, head, alive, steps, vehicles, world, agent_index, obs, work):
    """The egocentric observations (:mod:`steer_env.engine.egocentric`) of every learned
    agent of environment ``e`` into the head of ``obs[e, a]`` (self, then the slots): own
    velocity, walls, time, then the nearest teammates and opponents in the game in slots
    (nearest first; ties: the lower index) with presence flags; all in [-1, 1]. ``work``
    is the batch's :class:`StepWork`: up to :data:`~steer_env.engine.grid.GRID_MIN`
    vehicles, each agent passes over the others; above it, over the cells of a grid of
    each team's vehicles in the game (:func:`~steer_env.engine.grid.nearest_in_grid`)."""
    n = pos.shape[1]
    dist, order, grid = work.distance, work.order, work.grid
    gridded = n > GRID_MIN
    teams = grid.geometry.shape[0]
    if GRIDDED and gridded:
        for j in range(n):
            grid.key[j] = vehicles[j].team if alive[e, j] else -1
        build(pos, e, teams, 0.0, NEAREST_PER_CELL, grid)
    half, arena, diag = world.half_size, world.arena_size, world.diagonal
    elapsed = clip_unit(2.0 * float(steps[e]) / float(world.time_limit) - 1.0)
    for a in range(agent_index.shape[0]):
        i = agent_index[a]
        veh = vehicles[i]
        row = obs[e, a]
        hx, hy = head[e, i, 0], head[e, i, 1]
        px, py = pos[e, i, 0], pos[e, i, 1]
        f, s = to_local(vel[e, i, 0], vel[e, i, 1], hx, hy)
        row[VELOCITY_FORWARD] = clip_unit(f / veh.max_speed)
        row[VELOCITY_SIDE] = clip_unit(s / veh.max_speed)
        # Offsets to the nearest point of the west, east, south and north walls.
        f, s = to_local(-half - px, 0.0, hx, hy)
        row[WEST_WALL] = clip_unit(f / arena)
        row[WEST_WALL + 1] = clip_unit(s / arena)
        f, s = to_local(half - px, 0.0, hx, hy)
        row[EAST_WALL] = clip_unit(f / arena)
        row[EAST_WALL + 1] = clip_unit(s / arena)
        f, s = to_local(0.0, -half - py, hx, hy)
        row[SOUTH_WALL] = clip_unit(f / arena)
        row[SOUTH_WALL + 1] = clip_unit(s / arena)
        f, s = to_local(0.0, half - py, hx, hy)
        row[NORTH_WALL] = clip_unit(f / arena)
        row[NORTH_WALL + 1] = clip_unit(s / arena)
        row[TIME] = elapsed
        base = SELF_WIDTH
        for group in range(2):
            opponents = group == 1
            slots = world.observed_opponents if opponents else world.observed_teammates
            if slots == 0:
                continue
            count = 0
            if GRIDDED and gridded:
                for t in range(teams):
                    if (t != veh.team) == opponents:
                        count = nearest_in_grid(
                            pos, e, grid, t, i, px, py, slots, dist, order, count
                        )
            else:
                # Nearest first: an insertion into the ``slots`` kept so far (a vehicle no
                # nearer than the last of a full list cannot take a slot: one compare, so a
                # big group costs a distance per vehicle, not a sort). The first one's
                # distance waits until a second one needs comparing with it (with a single
                # opponent, as in Pursuit, no distance is computed: the square root sat on
                # the path to every slot value).
                measured = False  # dist[0] holds the first one's distance
                for j in range(n):
                    if not alive[e, j] or not is_candidate(vehicles, i, j, opponents):
                        continue
                    if count == 0:
                        order[0] = j
                        count = 1
                        continue
                    if not measured:
                        first = order[0]
                        dist[0] = length(pos[e, first, 0] - px, pos[e, first, 1] - py)
                        measured = True
                    d = length(pos[e, j, 0] - px, pos[e, j, 1] - py)
                    count = keep_nearest(dist, order, count, slots, d, j)
            scale = veh.speed_scale
            for q in range(slots):
                at = base + OTHER_WIDTH * q
                if q >= count:
                    for f_ in range(OTHER_WIDTH):
                        row[at + f_] = 0.0
                    continue
                j = order[q]
                f, s = to_local(pos[e, j, 0] - px, pos[e, j, 1] - py, hx, hy)
                row[at + OTHER_POSITION] = clip_unit(f / diag)
                row[at + OTHER_POSITION + 1] = clip_unit(s / diag)
                f, s = to_local(vel[e, j, 0] - vel[e, i, 0], vel[e, j, 1] - vel[e, i, 1], hx, hy)
                row[at + OTHER_VELOCITY] = clip_unit(f / scale)
                row[at + OTHER_VELOCITY + 1] = clip_unit(s / scale)
                row[at + OTHER_PRESENT] = 1.0
            base += OTHER_WIDTH * slots


# --------------------------------------------------------------------------- entry points
@engine_kernel
def distances(state, vehicles, agent_index, out):
    """Distance from each learned agent to its nearest opponent in the game into ``out``
    ``(E, k)`` (``inf`` when none is left)."""
    for e in range(state.position.shape[0]):
        for a in range(agent_index.shape[0]):
            i = agent_index[a]
            out[e, a] = nearest_of(state.position, state.alive, vehicles, e, i, True)[1]


@engine_kernel
def forces_of(
    state, active, vehicles, behaviors, strategies, worlds, scene, scratch, columns, force
):
    """Combined strategy forces ``force[e, i]`` of every scripted vehicle of every active
    environment (the first stage of :func:`step`, on its own); ``scratch`` is a
    :func:`strategy_scratch` of ``E`` environments, ``columns`` an ``(n, 2, E)`` working
    array."""
    world = worlds[0]
    num_envs, n = state.position.shape[0], state.position.shape[1]
    # np.int64(0), not 0: a literal first block would compile its own scripted_forces.
    scripted_forces(
        np.int64(0),
        num_envs,
        state,
        active,
        vehicles,
        behaviors,
        strategies,
        world,
        scene,
        scratch,
        columns,
    )
    for e in range(num_envs):
        for i in range(n):
            force[e, i, 0] = columns[i, 0, e]
            force[e, i, 1] = columns[i, 1, e]
