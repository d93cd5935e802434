"""The compiled stages of the herding rules (:mod:`steer_env.rules.herding`) and the
entry points a :class:`~steer_env.engine.batch.Batch` of these rules calls.

:func:`step` runs, over blocks of environments, the engine's shared stages (the sheep's
strategy, the dogs' forces and motion: :func:`steer_env.engine.step.scripted_forces` and
:func:`~steer_env.engine.step.move`), then these rules' :func:`settle` (the pen, rewards,
episode end, the outcome) and :func:`observe_rows` (the engine's egocentric observation
plus the pen and the flock). A new episode is placed by :func:`reset_env`.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.behaviors import shepherd_target
from steer_env.core.jit import engine_inline_kernel, engine_kernel
from steer_env.core.physics import MIN_HEADING_SPEED
from steer_env.core.streams import uniform_draw
from steer_env.core.vecmath import length, to_local
from steer_env.engine.egocentric import OTHER_WIDTH, SELF_WIDTH
from steer_env.engine.step import (
    BLOCK,
    clear_of_obstacles,
    clip_unit,
    move,
    observe_egocentric,
    observe_obstacles,
    place_obstacles,
    push_out_of_obstacles,
    scripted_forces,
    start_obstacles,
    start_wander,
)
from steer_env.rules.herding import (
    FLOCK_CENTRE,
    FLOCK_FARTHEST,
    FLOCK_PENNED,
    FLOCK_SPREAD,
    FLOCK_VELOCITY,
    FLOCK_WIDTH,
    PEN_OFFSET,
    PEN_WIDTH,
    RESET_DRAWS_PER_ENV,
    RESET_DRAWS_PER_VEHICLE,
    SHEEP,
    START_CANDIDATES,
    TARGET_COLLECTING,
    TARGET_OFFSET,
)


# --------------------------------------------------------------------------- the flock
@engine_kernel
def flock_summary(e, pos, vel, vehicles, world):
    """The flock of environment ``e``: ``(cx, cy, vx, vy, spread, farthest, penned)``, its
    centre (mean position, m), mean velocity (m/s), mean distance of the sheep to the centre
    (m), the index of the sheep farthest from the centre and the number of sheep in the pen."""
    n = pos.shape[1]
    cx = 0.0
    cy = 0.0
    vx = 0.0
    vy = 0.0
    count = 0
    penned = 0
    r = world.pen_radius
    for j in range(n):
        if vehicles[j].team != SHEEP:
            continue
        cx += pos[e, j, 0]
        cy += pos[e, j, 1]
        vx += vel[e, j, 0]
        vy += vel[e, j, 1]
        count += 1
        if length(pos[e, j, 0] - world.pen_x, pos[e, j, 1] - world.pen_y) <= r:
            penned += 1
    c = max(count, 1)
    cx /= c
    cy /= c
    vx /= c
    vy /= c
    spread = 0.0
    farthest = -1
    far_d = -1.0
    for j in range(n):
        if vehicles[j].team != SHEEP:
            continue
        d = length(pos[e, j, 0] - cx, pos[e, j, 1] - cy)
        spread += d
        if d > far_d:
            far_d = d
            farthest = j
    return cx, cy, vx, vy, spread / c, farthest, penned


@engine_kernel
def potential_of(world, distance, spread, penned_fraction):
    """Shaping potential of a flock whose centre is ``distance`` m from the pen's, whose
    sheep are ``spread`` m from the centre on average and ``penned_fraction`` of which are
    penned: ``shaping_scale * (penned_weight * penned_fraction - (distance + spread_weight *
    spread) / diagonal)``."""
    away = (distance + world.spread_weight * spread) / world.diagonal
    return world.shaping_scale * (world.penned_weight * penned_fraction - away)


@engine_kernel
def dog_potential(world, flock_potential, dog_x, dog_y, tx, ty):
    """A dog's shaping potential: the flock's, minus ``shaping_scale * target_weight *
    |dog - t| / diagonal`` for Strömbom's target point ``t`` (the dog is drawn towards where
    the heuristic would go; the potential's differences leave the optimal policy
    unchanged)."""
    near = length(dog_x - tx, dog_y - ty) / world.diagonal
    return flock_potential - world.shaping_scale * world.target_weight * near


@engine_kernel
def strombom_point(world, cx, cy, far_x, far_y):
    """Strömbom's target ``(tx, ty, collecting)`` for a flock centred at ``(cx, cy)`` whose
    farthest sheep is at ``(far_x, far_y)``, driven to the pen
    (:func:`steer_env.core.behaviors.shepherd_target`)."""
    return shepherd_target(
        cx, cy, far_x, far_y, world.pen_x, world.pen_y,
        world.collect_distance, world.collect_offset, world.drive_distance,
    )  # fmt: skip


@engine_kernel
def find_root(parent, j):
    """The root of ``j`` in the union-find forest ``parent`` (halving the path)."""
    while parent[j] != j:
        parent[j] = parent[parent[j]]
        j = parent[j]
    return j


@engine_kernel
def largest_group(e, pos, vehicles, radius, parent, size):
    """The number of sheep in the largest group of environment ``e`` whose members are
    linked by chains of sheep at most ``radius`` m apart (connected components;
    ``parent`` (n,) int64 and ``size`` (n,) float64 are working space)."""
    n = pos.shape[1]
    for j in range(n):
        parent[j] = j
        size[j] = 0.0
    for p in range(n):
        if vehicles[p].team != SHEEP:
            continue
        for q in range(p + 1, n):
            if vehicles[q].team != SHEEP:
                continue
            if length(pos[e, q, 0] - pos[e, p, 0], pos[e, q, 1] - pos[e, p, 1]) <= radius:
                a = find_root(parent, p)
                b = find_root(parent, q)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    best = 0.0
    for j in range(n):
        if vehicles[j].team != SHEEP:
            continue
        root = find_root(parent, j)
        size[root] += 1.0
        best = max(best, size[root])
    return best


@engine_kernel
def polarisation(e, vel, vehicles):
    """``|mean of the unit velocities|`` of the moving sheep of environment ``e`` (1: all
    heading the same way; 0 when none moves)."""
    sx = 0.0
    sy = 0.0
    count = 0
    for j in range(vel.shape[1]):
        if vehicles[j].team != SHEEP:
            continue
        speed = length(vel[e, j, 0], vel[e, j, 1])
        if speed > MIN_HEADING_SPEED:
            sx += vel[e, j, 0] / speed
            sy += vel[e, j, 1] / speed
            count += 1
    if count == 0:
        return 0.0
    return length(sx, sy) / count


# --------------------------------------------------------------------------- rules
@engine_kernel
def settle(
    e0, m, state, active, vehicles, world, before, agent_index, draws, results, env_results,
    parent, size,
):  # fmt: skip
    """The pen, episode end, rewards and outcome of the environments of the block after
    their move (for inactive ones: zero rewards, not done, and the pen count and flock
    distance of their current state). ``parent`` and ``size`` are ``(n,)``
    working space."""
    pos, vel = state.position, state.velocity
    k = agent_index.shape[0]
    n_sheep = 0
    for j in range(pos.shape[1]):
        if vehicles[j].team == SHEEP:
            n_sheep += 1
    for b in range(m):
        e = e0 + b
        res_env = env_results[e]
        if not active[e]:
            # Not stepped (restarted instead): zero rewards, not done, and what its current
            # state measures (after a reset, the start the infos of a reset report).
            cx, cy, _, _, _, _, penned = flock_summary(e, pos, vel, vehicles, world)
            res_env.penned = penned
            res_env.flock_distance = length(cx - world.pen_x, cy - world.pen_y)
            res_env.done = False
            res_env.timed_out = False
            res_env.is_success = False
            clear_outcome(res_env)
            for a in range(k):
                res = results[e, a]
                res.reward = 0.0
                res.success = 0.0
                res.shaping = 0.0
                res.terminated = False
            continue
        state.counter[e] += np.uint64(draws)
        state.steps[e] += 1
        steps = state.steps[e]
        episode = state.episode[e]
        for a in range(k):
            i = agent_index[a]
            episode.dog_path += length(
                pos[e, i, 0] - before[i, 0, b], pos[e, i, 1] - before[i, 1, b]
            )
        cx, cy, _, _, spread, far, penned = flock_summary(e, pos, vel, vehicles, world)
        distance = length(cx - world.pen_x, cy - world.pen_y)
        success = penned >= world.penned_needed
        timed_out = steps >= world.time_limit
        done = success or timed_out
        res_env.done = done
        res_env.timed_out = timed_out
        res_env.is_success = success
        res_env.penned = penned
        res_env.flock_distance = distance
        if done:
            res_env.pen_step = steps if success else -1
            res_env.cohesion = spread
            res_env.fragmentation = largest_group(
                e, pos, vehicles, world.group_radius, parent, size
            ) / max(n_sheep, 1)
            res_env.polarisation = polarisation(e, vel, vehicles)
            res_env.dog_path = episode.dog_path
            progress = episode.start_distance - distance
            ran = episode.dog_path
            res_env.control_efficiency = progress / ran if ran > 0 else 0.0
        else:
            clear_outcome(res_env)
        keeps = world.shaping and (world.terminal_potential or not done)
        flock_phi = potential_of(world, distance, spread, penned / max(n_sheep, 1))
        tx, ty, _ = strombom_point(world, cx, cy, pos[e, far, 0], pos[e, far, 1])
        reward_success = world.success_reward if success else 0.0
        for a in range(k):
            res = results[e, a]
            shaping = 0.0
            if world.shaping:
                i = agent_index[a]
                new = dog_potential(world, flock_phi, pos[e, i, 0], pos[e, i, 1], tx, ty)
                new = new if keeps else 0.0
                # phi = 0 in terminal states: the shaping terms of an episode sum
                # (discounted by shaping_gamma) to exactly -phi(start). With
                # terminal_potential the final state keeps its phi, and they sum to
                # gamma^T phi(final) - phi(start).
                shaping = world.shaping_gamma * new - state.potential[e, a]
                state.potential[e, a] = new
            res.success = reward_success
            res.shaping = shaping
            res.reward = reward_success + shaping
            res.terminated = done


@engine_inline_kernel
def clear_outcome(res_env):
    """The outcome fields of a step that does not end the episode."""
    res_env.pen_step = -1
    res_env.cohesion = 0.0
    res_env.fragmentation = 0.0
    res_env.polarisation = 0.0
    res_env.dog_path = 0.0
    res_env.control_efficiency = 0.0


@engine_kernel
def observe_rows(envs, state, vehicles, world, agent_index, obs, work):
    """Observations of every learned dog of environments ``envs`` into ``obs[envs]``: the
    egocentric head (:func:`~steer_env.engine.step.observe_egocentric`), then the pen and
    the flock in the dog's frame, Strömbom's target point and the nearest obstacles; all
    clipped to their bounds."""
    pos, vel, head = state.position, state.velocity, state.heading
    pen_at = SELF_WIDTH + OTHER_WIDTH * (world.observed_teammates + world.observed_opponents)
    flock_at = pen_at + PEN_WIDTH
    target_at = flock_at + FLOCK_WIDTH
    diag = world.diagonal
    for q in range(envs.shape[0]):
        e = envs[q]
        observe_egocentric(
            e, pos, vel, head, state.alive, state.steps, vehicles, world, agent_index, obs, work
        )  # fmt: skip
        cx, cy, fvx, fvy, spread, far, penned = flock_summary(e, pos, vel, vehicles, world)
        n_sheep = 0
        for j in range(pos.shape[1]):
            if vehicles[j].team == SHEEP:
                n_sheep += 1
        tx, ty, collecting = strombom_point(world, cx, cy, pos[e, far, 0], pos[e, far, 1])
        for a in range(agent_index.shape[0]):
            i = agent_index[a]
            row = obs[e, a]
            hx, hy = head[e, i, 0], head[e, i, 1]
            px, py = pos[e, i, 0], pos[e, i, 1]
            f, s = to_local(world.pen_x - px, world.pen_y - py, hx, hy)
            row[pen_at + PEN_OFFSET] = clip_unit(f / diag)
            row[pen_at + PEN_OFFSET + 1] = clip_unit(s / diag)
            f, s = to_local(cx - px, cy - py, hx, hy)
            row[flock_at + FLOCK_CENTRE] = clip_unit(f / diag)
            row[flock_at + FLOCK_CENTRE + 1] = clip_unit(s / diag)
            scale = vehicles[i].speed_scale
            f, s = to_local(fvx - vel[e, i, 0], fvy - vel[e, i, 1], hx, hy)
            row[flock_at + FLOCK_VELOCITY] = clip_unit(f / scale)
            row[flock_at + FLOCK_VELOCITY + 1] = clip_unit(s / scale)
            row[flock_at + FLOCK_SPREAD] = min(spread / world.arena_size, 1.0)
            f, s = to_local(pos[e, far, 0] - px, pos[e, far, 1] - py, hx, hy)
            row[flock_at + FLOCK_FARTHEST] = clip_unit(f / diag)
            row[flock_at + FLOCK_FARTHEST + 1] = clip_unit(s / diag)
            row[flock_at + FLOCK_PENNED] = penned / max(n_sheep, 1)
            f, s = to_local(tx - px, ty - py, hx, hy)
            row[target_at + TARGET_OFFSET] = clip_unit(f / diag)
            row[target_at + TARGET_OFFSET + 1] = clip_unit(s / diag)
            row[target_at + TARGET_COLLECTING] = 1.0 if collecting else 0.0
    observe_obstacles(envs, state, world, agent_index, obs, work)


@engine_kernel
def start_candidate(key, counter, draw, lo, span):
    """One uniform start candidate ``(x, y)`` in ``[lo, lo + span]^2`` from draws ``draw``
    and ``draw + 1``."""
    return (
        lo + span * uniform_draw(key, counter, draw),
        lo + span * uniform_draw(key, counter, draw + 1),
    )


@engine_kernel
def reset_env(e, state, vehicles, world, agent_index):
    """A new episode in environment ``e``, drawn from its stream: the flock's centre, then
    each vehicle in order (see the rules' module docstring)."""
    pos = state.position[e]
    vel = state.velocity[e]
    head = state.heading[e]
    wt = state.wander[e]
    n = pos.shape[0]
    key = state.key[e]
    counter = state.counter[e]
    margin = world.start_margin
    half = world.half_size
    two_pi = 2.0 * math.pi
    # The flock's square, inside the walls, away from the pen.
    side = min(world.start_spread, world.arena_size - 2.0 * margin)
    lo = -half + margin + side / 2.0
    span = world.arena_size - 2.0 * margin - side
    best = -1.0
    fx = 0.0
    fy = 0.0
    for c in range(START_CANDIDATES):
        cx, cy = start_candidate(key, counter, 2 * c, lo, span)
        d = length(cx - world.pen_x, cy - world.pen_y)
        if d > best:
            best = d
            fx, fy = cx, cy
        if d >= world.flock_pen_distance:
            fx, fy = cx, cy
            break
    lo_v = -half + margin
    span_v = world.arena_size - 2.0 * margin
    start_obstacles(e, state, world)
    for i in range(n):
        base = RESET_DRAWS_PER_ENV + i * RESET_DRAWS_PER_VEHICLE
        if vehicles[i].team == SHEEP:
            x, y = start_candidate(key, counter, base, -side / 2.0, side)
            pos[i, 0] = fx + x
            pos[i, 1] = fy + y
        else:
            best = -1.0
            clearance = vehicles[i].radius + world.obstacle_gap
            for c in range(START_CANDIDATES):
                x, y = start_candidate(key, counter, base + 2 * c, lo_v, span_v)
                if not clear_of_obstacles(state.obstacles, e, x, y, clearance):
                    continue
                d = length(x - fx, y - fy)
                if d > best:
                    best = d
                    pos[i, 0] = x
                    pos[i, 1] = y
                if d >= world.dog_start_distance:
                    pos[i, 0] = x
                    pos[i, 1] = y
                    break
            if best < 0.0:
                # No candidate clear of the obstacles: the first one, pushed out below.
                pos[i, 0], pos[i, 1] = start_candidate(key, counter, base, lo_v, span_v)
        push_out_of_obstacles(e, i, state, vehicles)
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
        angle = two_pi * uniform_draw(key, counter, base + 2 * START_CANDIDATES)
        head[i, 0] = math.cos(angle)
        head[i, 1] = math.sin(angle)
        wander_angle = two_pi * uniform_draw(key, counter, base + 2 * START_CANDIDATES + 1)
        wt[i, 0] = math.cos(wander_angle)
        wt[i, 1] = math.sin(wander_angle)
        state.alive[e, i] = True
        state.capture_step[e, i] = -1
    drawn = RESET_DRAWS_PER_ENV + n * RESET_DRAWS_PER_VEHICLE
    placed = place_obstacles(
        e, state, vehicles, world, key, counter, drawn, world.pen_x, world.pen_y, world.pen_radius
    )
    state.counter[e] = counter + np.uint64(drawn + placed)
    state.steps[e] = 0
    cx, cy, _, _, spread, far, penned = flock_summary(
        e, state.position, state.velocity, vehicles, world
    )
    distance = length(cx - world.pen_x, cy - world.pen_y)
    state.episode[e].dog_path = 0.0
    state.episode[e].start_distance = distance
    state.episode[e].start_penned = penned
    n_sheep = 0
    for j in range(n):
        if vehicles[j].team == SHEEP:
            n_sheep += 1
    flock_phi = potential_of(world, distance, spread, penned / max(n_sheep, 1))
    tx, ty, _ = strombom_point(world, cx, cy, pos[far, 0], pos[far, 1])
    for a in range(agent_index.shape[0]):
        i = agent_index[a]
        phi = dog_potential(world, flock_phi, pos[i, 0], pos[i, 1], tx, ty)
        state.potential[e, a] = phi if world.shaping else 0.0


# --------------------------------------------------------------------------- entry points
@engine_kernel
def reset(state, vehicles, behaviors, strategies, worlds, agent_index, envs, obs, work):
    """New episodes in environments ``envs``; their observations go to ``obs[envs]``.
    ``work`` is the batch's :class:`~steer_env.engine.step.StepWork`."""
    world = worlds[0]
    for q in range(envs.shape[0]):
        e = envs[q]
        reset_env(e, state, vehicles, world, agent_index)
        start_wander(e, state, vehicles, behaviors, strategies)
    observe_rows(envs, state, vehicles, world, agent_index, obs, work)


@engine_kernel
def observe(state, vehicles, worlds, agent_index, envs, obs, work):
    """Observations of environments ``envs`` into ``obs[envs]`` (``work``: as for
    :func:`reset`)."""
    world = worlds[0]
    observe_rows(envs, state, vehicles, world, agent_index, obs, work)


@engine_kernel
def step(
    state,
    active,
    vehicles,
    behaviors,
    strategies,
    worlds,
    scene,
    agent_index,
    draws,
    actions,
    results,
    env_results,
    obs,
    work,
):
    """Advance the active environments by one step (the arguments of
    :func:`steer_env.rules.pursuit_evasion.compiled.step`, with these rules' records)."""
    world = worlds[0]
    num_envs = state.position.shape[0]
    size = min(BLOCK, num_envs)
    force, before, scratch = work.force, work.before, work.strategy
    dist, order, all_envs = work.distance, work.order, work.env_index
    for e0 in range(0, num_envs, size):
        m = min(size, num_envs - e0)
        scripted_forces(
            e0, m, state, active, vehicles, behaviors, strategies, world, scene, scratch, force
        )
        move(e0, m, state, active, vehicles, world, actions, force, before)
        settle(
            e0, m, state, active, vehicles, world, before, agent_index, draws, results,
            env_results, order, dist,
        )  # fmt: skip
        observe_rows(all_envs[e0 : e0 + m], state, vehicles, world, agent_index, obs, work)
