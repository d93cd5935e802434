"""The compiled stages of the flocking rules (:mod:`steer_env.rules.flocking`) and the
entry points a :class:`~steer_env.engine.batch.Batch` of these rules calls.

:func:`step` runs, over blocks of environments, the engine's shared stages (the scripted
boids' and predators' strategies, the learned boids' forces and everyone's motion:
:func:`steer_env.engine.step.scripted_forces` and :func:`~steer_env.engine.step.move`),
then these rules' :func:`settle` (catches, collisions, groups, rewards, episode end, the
outcome) and :func:`observe_rows` (the engine's egocentric observation plus the goal). A
new episode is placed by :func:`reset_env`.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.jit import engine_inline_kernel, engine_kernel, kernel
from steer_env.core.streams import uniform_draw
from steer_env.core.vecmath import length, to_local, to_world
from steer_env.engine.egocentric import OTHER_POSITION, OTHER_WIDTH, SELF_WIDTH
from steer_env.engine.grid import COUNT, FIRST, GRID_MIN, NX, NY, SIZE, build, forward_cells, margin
from steer_env.engine.step import (
    BLOCK,
    GRIDDED,
    clear_of_obstacles,
    clip_unit,
    decode_egocentric,
    decode_obstacles,
    move,
    observe_egocentric,
    observe_obstacles,
    place_obstacles,
    push_out_of_obstacles,
    scripted_forces,
    start_obstacles,
    start_wander,
    swept_distance,
)
from steer_env.rules.flocking import (
    BOID,
    GOAL_OFFSET,
    PREDATOR,
    RESET_DRAWS_PER_VEHICLE,
    START_CANDIDATES,
)


# --------------------------------------------------------------------------- the start
@engine_kernel
def start_candidate(world, team, key, counter, draw):
    """Candidate start point ``(x, y)`` of a vehicle of ``team`` from draws ``draw`` and
    ``draw + 1``: uniform in the start disc for a boid, in the predators' square for a
    predator."""
    u0 = uniform_draw(key, counter, draw)
    u1 = uniform_draw(key, counter, draw + 1)
    if team == PREDATOR:
        return (u0 - 0.5) * world.predator_zone, (u1 - 0.5) * world.predator_zone
    r = world.start_radius * math.sqrt(u0)
    angle = 2.0 * math.pi * u1
    return -world.route_length / 2.0 + r * math.cos(angle), r * math.sin(angle)


@engine_kernel
def start_room(pos, vehicles, world, i, x, y):
    """How far a start ``(x, y)`` of vehicle ``i`` keeps from the bodies of the vehicles
    placed before it (rows ``0 .. i - 1``), beyond ``start_gap``: >= 0 means clear."""
    room = np.inf
    for j in range(i):
        reach = vehicles[i].radius + vehicles[j].radius + world.start_gap
        room = min(room, length(x - pos[j, 0], y - pos[j, 1]) - reach)
    return room


@engine_kernel
def reset_env(e, state, vehicles, world, agent_index):
    """A new episode in environment ``e``, drawn from its stream: every vehicle's start,
    then the obstacles (see the rules' module docstring)."""
    pos = state.position[e]
    vel = state.velocity[e]
    head = state.heading[e]
    n = pos.shape[0]
    key = state.key[e]
    counter = state.counter[e]
    start_obstacles(e, state, world)
    gx = world.route_length / 2.0
    sx = -gx
    for i in range(n):
        base = i * RESET_DRAWS_PER_VEHICLE
        team = vehicles[i].team
        clearance = vehicles[i].radius + world.obstacle_gap
        best = -np.inf
        for c in range(START_CANDIDATES):
            x, y = start_candidate(world, team, key, counter, base + 2 * c)
            if not clear_of_obstacles(state.obstacles, e, x, y, clearance):
                continue
            room = start_room(pos, vehicles, world, i, x, y)
            if room > best:
                best = room
                pos[i, 0], pos[i, 1] = x, y
            if room >= 0.0:
                break
        if best == -np.inf:
            # No candidate clear of a fixed layout: the first one, pushed out below.
            pos[i, 0], pos[i, 1] = start_candidate(world, team, key, counter, base)
    for i in range(n):
        push_out_of_obstacles(e, i, state, vehicles)
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
        # Boids face the goal, predators the flock's start.
        tx = gx if vehicles[i].team == BOID else sx
        dx = tx - pos[i, 0]
        dy = -pos[i, 1]
        d = length(dx, dy)
        head[i, 0] = dx / d if d > 0.0 else 1.0
        head[i, 1] = dy / d if d > 0.0 else 0.0
        state.goal[e, i, 0] = gx
        state.goal[e, i, 1] = 0.0
        state.wander[e, i, 0] = 1.0
        state.wander[e, i, 1] = 0.0
        state.alive[e, i] = True
        state.capture_step[e, i] = -1
    drawn = n * RESET_DRAWS_PER_VEHICLE
    placed = place_obstacles(
        e, state, vehicles, world, key, counter, drawn, gx, 0.0, world.goal_radius
    )
    state.counter[e] = counter + np.uint64(drawn + placed)
    state.steps[e] = 0
    episode = state.episode[e]
    episode.boid_steps = 0
    episode.contact_steps = 0
    episode.isolated_steps = 0
    episode.caught = 0
    episode.measured_steps = 0
    episode.polarization_sum = 0.0
    episode.group_sum = 0.0
    episode.min_separation = np.inf
    for a in range(agent_index.shape[0]):
        i = agent_index[a]
        state.potential[e, a] = -world.progress_scale * goal_distance(state.position, world, e, i)


# --------------------------------------------------------------------------- rules
@engine_inline_kernel
def goal_distance(pos, world, e, i):
    """Vehicle ``i``'s distance to the goal region's centre in environment ``e``, m."""
    return length(pos[e, i, 0] - world.route_length / 2.0, pos[e, i, 1])


@engine_inline_kernel
def is_boid_in_game(alive, vehicles, e, i):
    """Whether vehicle ``i`` of environment ``e`` is a boid in the game."""
    return alive[e, i] and vehicles[i].team == BOID


@engine_inline_kernel
def find(parent, i):
    """The root of ``i``'s set in the disjoint-set forest ``parent`` (path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@engine_kernel
def groups(pos, alive, vehicles, world, e, in_goal, parent, size, grid):
    """The groups of the boids in the game of environment ``e`` (of those inside the goal
    region when ``in_goal``): boids whose centres are at most ``link_distance`` apart are
    linked, a group is a connected component. Returns ``(members, largest, singles)``: the
    boids considered, the largest group's size and the groups of one boid. ``parent``
    (int64) and ``size`` (float64), ``(n,)`` each, and ``grid`` (a
    :class:`~steer_env.engine.grid.Grid`) are working space.

    Up to :data:`~steer_env.engine.grid.GRID_MIN` vehicles every pair is tested; above it,
    the pairs of nearby cells of a grid of the members, whose cells are small enough that
    the boids of one cell are all linked (:func:`link_cells`)."""
    n = pos.shape[1]
    members = 0
    for i in range(n):
        parent[i] = -1
        size[i] = 0.0
        grid.key[i] = -1
        if not is_boid_in_game(alive, vehicles, e, i):
            continue
        if in_goal and goal_distance(pos, world, e, i) > world.goal_radius:
            continue
        parent[i] = i
        grid.key[i] = 0
        members += 1
    link = world.link_distance
    if GRIDDED and n > GRID_MIN:
        link_cells(pos, e, link, parent, grid)
    else:
        for i in range(n):
            if parent[i] < 0:
                continue
            for j in range(i + 1, n):
                if parent[j] >= 0 and linked(pos, e, i, j, link):
                    union(parent, i, j)
    for i in range(n):
        if parent[i] >= 0:
            size[find(parent, i)] += 1.0
    largest = 0
    singles = 0
    for i in range(n):
        if parent[i] == i:
            largest = max(largest, int(size[i]))
            singles += 1 if size[i] == 1.0 else 0
    return members, largest, singles


@engine_inline_kernel
def linked(pos, e, i, j, link):
    """Whether boids ``i < j`` of environment ``e`` are linked: centres at most ``link``
    m apart."""
    return length(pos[e, j, 0] - pos[e, i, 0], pos[e, j, 1] - pos[e, i, 1]) <= link


@engine_inline_kernel
def union(parent, i, j):
    """Join the sets of ``i`` and ``j`` in the disjoint-set forest ``parent`` (the lower
    root becomes the root)."""
    ri = find(parent, i)
    rj = find(parent, j)
    if ri != rj:
        parent[max(ri, rj)] = min(ri, rj)


@engine_kernel
def link_cells(pos, e, link, parent, grid):
    """:func:`groups`' links over a grid of the members (``grid.key`` 0) of environment
    ``e``: the cells are at most ``link / sqrt(2)`` m where the members' spread allows, so
    the boids of a cell are all linked (a chain through its first), and two cells are
    joined by their first pair of linked boids, unless they already are. Where the cells
    are larger every pair of a cell and of two cells is tested."""
    build(pos, e, 1, link / math.sqrt(2.0) * (1.0 - 1e-6), 0.0, grid)
    start, items = grid.start, grid.items
    first = grid.shape[0, FIRST]
    cells = grid.shape[0, NX] * grid.shape[0, NY]
    # The largest offset along an axis between two boids of a cell, with rounding.
    side = grid.geometry[0, SIZE] + 2.0 * margin(grid.geometry, grid.shape, 0, 0.0, 0.0)
    whole = side * math.sqrt(2.0) < link
    for c in range(first, first + cells):
        begin, end = start[c], start[c + 1]
        if begin == end:
            continue
        a = items[begin]
        for s in range(begin + 1, end):
            if whole:
                union(parent, a, items[s])
            else:
                for s0 in range(begin, s):
                    if linked(pos, e, items[s0], items[s], link):
                        union(parent, items[s0], items[s])
        for q in range(forward_cells(grid, 0, c, link)):
            c2 = grid.near[q]
            if start[c2] == start[c2 + 1]:
                continue
            if whole and find(parent, a) == find(parent, items[start[c2]]):
                continue
            # With whole cells, one link joins them (c2's boids are joined to its first
            # when c2's turn comes).
            joined = False
            for s in range(begin, end):
                i = items[s]
                for s2 in range(start[c2], start[c2 + 1]):
                    j = items[s2]
                    if linked(pos, e, min(i, j), max(i, j), link):
                        union(parent, i, j)
                        joined = whole
                        if joined:
                            break
                if joined:
                    break


@engine_kernel
def polarization(head, alive, vehicles, e):
    """The boids' polarisation in environment ``e``: the length of their mean heading, in
    [0, 1] (0 with no boid in the game)."""
    sx = 0.0
    sy = 0.0
    count = 0
    for i in range(head.shape[1]):
        if is_boid_in_game(alive, vehicles, e, i):
            sx += head[e, i, 0]
            sy += head[e, i, 1]
            count += 1
    return length(sx, sy) / count if count > 0 else 0.0


@engine_kernel
def catch(before, b, state, vehicles, world, e, steps, hunters):
    """Take out of the game each boid that came within ``catch_radius`` of a predator in
    the game during the step (swept); returns how many were caught. ``hunters`` (int64,
    ``(n,)``) is working space: the predators in the game."""
    pos, alive = state.position, state.alive
    n = pos.shape[1]
    k = 0
    for p in range(n):
        if vehicles[p].team == PREDATOR and alive[e, p]:
            hunters[k] = p
            k += 1
    caught = 0
    for i in range(n):
        if not is_boid_in_game(alive, vehicles, e, i):
            continue
        for h in range(k):
            p = hunters[h]
            if swept_distance(before, b, pos, e, i, p) <= world.catch_radius:
                alive[e, i] = False
                state.capture_step[e, i] = steps
                caught += 1
                break
    return caught


@engine_kernel
def contacts(before, b, pos, alive, vehicles, e, touched, grid):
    """Mark in ``touched`` (``(n,)`` float64: 1 touched, 0 not) each boid in the game whose
    body touched another's during the step (swept); returns ``(count, closest)``: the boids
    that touched and the least centre distance of two boids during the step (inf: fewer
    than two). ``grid`` (a :class:`~steer_env.engine.grid.Grid`) is working space.

    Up to :data:`~steer_env.engine.grid.GRID_MIN` vehicles every pair is tested; above it,
    the pairs of nearby cells of a grid of the boids (:func:`contact_cells`), and every
    pair again only when that cannot vouch for the least distance."""
    n = pos.shape[1]
    found = False
    closest = np.inf
    if GRIDDED and n > GRID_MIN:
        found, closest = contact_cells(before, b, pos, alive, vehicles, e, touched, grid)
    if not found:
        for i in range(n):
            touched[i] = 0.0
        closest = np.inf
        for i in range(n):
            if not is_boid_in_game(alive, vehicles, e, i):
                continue
            for j in range(i + 1, n):
                if is_boid_in_game(alive, vehicles, e, j):
                    closest = touch(before, b, pos, vehicles, e, i, j, touched, closest)
    count = 0
    for i in range(n):
        count += 1 if touched[i] > 0.0 else 0
    return count, closest


@engine_inline_kernel
def touch(before, b, pos, vehicles, e, i, j, touched, closest):
    """The swept test of boids ``i < j``: marks both in ``touched`` when their bodies
    touched; returns ``closest`` lowered to their least centre distance."""
    d = swept_distance(before, b, pos, e, i, j)
    if d <= vehicles[i].radius + vehicles[j].radius:
        touched[i] = 1.0
        touched[j] = 1.0
    return min(closest, d)


@engine_kernel
def contact_cells(before, b, pos, alive, vehicles, e, touched, grid):
    """:func:`contacts` over a grid of the boids in the game of environment ``e``, whose
    cells are at least the distance two boids that touch can be apart after the step (the
    sum of the largest radii plus the largest relative move), so every pair of nearby
    cells is tested. Returns ``(found, closest)``: the least distance of the pairs tested,
    and whether it is the least of all pairs (when it is beyond what a pair of farther
    cells could reach, the caller tests every pair)."""
    n = pos.shape[1]
    radius = 0.0
    moved = 0.0
    for i in range(n):
        touched[i] = 0.0
        grid.key[i] = -1
        if is_boid_in_game(alive, vehicles, e, i):
            grid.key[i] = 0
            radius = max(radius, vehicles[i].radius)
            moved = max(
                moved, length(pos[e, i, 0] - before[i, 0, b], pos[e, i, 1] - before[i, 1, b])
            )
    # The swept distance of a pair is at least their distance after the step less their
    # relative move (at most 2 * moved).
    reach = 2.0 * radius + 2.0 * moved
    build(pos, e, 1, reach * (1.0 + 1e-6), 0.0, grid)
    start, items = grid.start, grid.items
    first = grid.shape[0, FIRST]
    closest = np.inf
    for c in range(first, first + grid.shape[0, NX] * grid.shape[0, NY]):
        begin, end = start[c], start[c + 1]
        for s in range(begin, end):
            i = items[s]
            for s2 in range(s + 1, end):
                closest = touch(before, b, pos, vehicles, e, i, items[s2], touched, closest)
        if begin == end:
            continue
        for q in range(forward_cells(grid, 0, c, reach)):
            c2 = grid.near[q]
            for s in range(begin, end):
                i = items[s]
                for s2 in range(start[c2], start[c2 + 1]):
                    j = items[s2]
                    closest = touch(
                        before, b, pos, vehicles, e, min(i, j), max(i, j), touched, closest
                    )
    # Boids of cells not tested together are more than a cell apart after the step.
    beyond = grid.geometry[0, SIZE] - 2.0 * moved - margin(grid.geometry, grid.shape, 0, 0.0, 0.0)
    return closest <= beyond or grid.shape[0, COUNT] < 2, closest


@engine_inline_kernel
def boids_in_game(alive, vehicles, e):
    """The boids in the game in environment ``e``."""
    count = 0
    for i in range(alive.shape[1]):
        count += 1 if is_boid_in_game(alive, vehicles, e, i) else 0
    return count


@engine_kernel
def settle(
    e0, m, state, active, vehicles, world, before, agent_index, draws, results, env_results,
    work,
):  # fmt: skip
    """Catches, collisions, groups, episode end, rewards and the outcome of the
    environments of the block after their move (for inactive ones: zero rewards, not done,
    and the goal distances and boids of their current state). ``work`` is the batch's
    :class:`~steer_env.engine.step.StepWork`."""
    pos, alive = state.position, state.alive
    dist, order, grid = work.distance, work.order, work.grid
    k = agent_index.shape[0]
    needed = world.success_fraction * world.n_boids - 1e-9
    for b in range(m):
        e = e0 + b
        res_env = env_results[e]
        if not active[e]:
            # Not stepped (restarted instead): what its current state measures.
            for a in range(k):
                res = results[e, a]
                clear_agent(res)
                res.goal_distance = goal_distance(pos, world, e, agent_index[a])
            res_env.done = False
            res_env.timed_out = False
            res_env.is_success = False
            res_env.collisions = 0
            res_env.catches = 0
            res_env.boids_left = boids_in_game(alive, vehicles, e)
            clear_outcome(res_env)
            continue
        state.counter[e] += np.uint64(draws)
        state.steps[e] += 1
        steps = state.steps[e]
        episode = state.episode[e]
        caught = catch(before, b, state, vehicles, world, e, steps, order)
        episode.caught += caught
        collisions, closest = contacts(before, b, pos, alive, vehicles, e, dist, grid)
        episode.min_separation = min(episode.min_separation, closest)
        learned_left = 0
        for a in range(k):
            i = agent_index[a]
            res = results[e, a]
            clear_agent(res)
            res.goal_distance = goal_distance(pos, world, e, i)
            res.was_caught = state.capture_step[e, i] == steps
            res.touched = alive[e, i] and dist[i] > 0.0
            learned_left += 1 if alive[e, i] else 0
        left, largest, singles = groups(pos, alive, vehicles, world, e, False, order, dist, grid)
        in_goal, arrived, _ = groups(pos, alive, vehicles, world, e, True, order, dist, grid)
        episode.boid_steps += left
        episode.contact_steps += collisions
        episode.isolated_steps += singles
        episode.measured_steps += 1
        episode.polarization_sum += polarization(state.heading, alive, vehicles, e)
        episode.group_sum += largest / world.n_boids
        success = arrived >= needed
        timed_out = not success and steps >= world.time_limit
        done = success or timed_out or learned_left == 0 or left < needed
        res_env.done = done
        res_env.timed_out = timed_out
        res_env.is_success = success
        res_env.collisions = collisions
        res_env.catches = caught
        res_env.boids_left = left
        if done:
            res_env.arrival_step = steps if success else -1
            res_env.arrival_time = steps * world.dt if success else -1.0
            res_env.arrival_fraction = in_goal / world.n_boids
            res_env.boids_caught = episode.caught
            minutes = episode.boid_steps * world.dt / 60.0
            res_env.collision_rate = episode.contact_steps / minutes if minutes > 0.0 else 0.0
            gap = episode.min_separation
            res_env.min_separation = gap if gap < np.inf else -1.0
            res_env.polarization = episode.polarization_sum / episode.measured_steps
            res_env.largest_group = episode.group_sum / episode.measured_steps
            boid_steps = episode.boid_steps
            isolated = episode.isolated_steps
            res_env.neighbor_loss_rate = isolated / boid_steps if boid_steps > 0 else 0.0
        else:
            clear_outcome(res_env)
        for a in range(k):
            i = agent_index[a]
            left_at = state.capture_step[e, i]
            if left_at < 0 or left_at == steps:  # in the game on this step
                settle_agent(results[e, a], world, state.potential, e, a, done, success)
            else:  # caught on an earlier step: nothing more happens to this boid
                results[e, a].terminated = True


@engine_inline_kernel
def settle_agent(res, world, potentials, e, a, done, success):
    """The reward terms of a learned boid in the game on this step (its goal distance,
    catch and contact measured)."""
    res.success = world.success_reward if success and not res.was_caught else 0.0
    res.collision = -world.collision_penalty if res.touched else 0.0
    res.caught = -world.caught_penalty if res.was_caught else 0.0
    terminated = done or res.was_caught
    # phi = 0 once the flock succeeds, its value everywhere else (a caught boid and a
    # time-out keep theirs): an episode's progress terms sum (discounted by shaping_gamma)
    # to phi(end) - phi(start), so the distance covered towards the goal is paid for even
    # without success.
    arrived = success and not res.was_caught
    new = 0.0 if arrived else -world.progress_scale * res.goal_distance
    res.progress = world.shaping_gamma * new - potentials[e, a]
    potentials[e, a] = new
    res.reward = res.success + res.progress + res.collision + res.caught
    res.terminated = terminated


@engine_inline_kernel
def clear_agent(res):
    """A learned boid's result fields before they are measured (or with nothing to
    measure)."""
    res.reward = 0.0
    res.success = 0.0
    res.progress = 0.0
    res.collision = 0.0
    res.caught = 0.0
    res.terminated = False
    res.was_caught = False
    res.touched = False


@engine_inline_kernel
def clear_outcome(res_env):
    """The outcome fields of a step that does not end the episode."""
    res_env.arrival_step = -1
    res_env.arrival_time = -1.0
    res_env.arrival_fraction = 0.0
    res_env.boids_caught = 0.0
    res_env.collision_rate = 0.0
    res_env.min_separation = 0.0
    res_env.polarization = 0.0
    res_env.largest_group = 0.0
    res_env.neighbor_loss_rate = 0.0


# --------------------------------------------------------------------------- observation
@engine_inline_kernel
def to_near_field(row, at, diag, near):
    """The slot position pair ``row[at], row[at + 1]``, written by the egocentric
    observation as offset / arena diagonal, as offset / (``near`` + distance): the
    direction kept, the length ``d / (near + d)`` in [0, 1), fine within a few ``near``
    of the boid (where catches and collisions happen), coarse far away."""
    f = row[at] * diag
    s = row[at + 1] * diag
    k = 1.0 / (near + length(f, s))
    row[at] = f * k
    row[at + 1] = s * k


@engine_inline_kernel
def from_near_field(row, at, diag, near):
    """The inverse of :func:`to_near_field`: back to offset / arena diagonal."""
    m = length(row[at], row[at + 1])
    k = near / (1.0 - m) / diag if m < 1.0 else 0.0
    row[at] = row[at] * k
    row[at + 1] = row[at + 1] * k


@engine_kernel
def observe_rows(envs, state, vehicles, world, agent_index, obs, work):
    """Observations of every learned boid of environments ``envs`` into ``obs[envs]``: the
    egocentric head (:func:`~steer_env.engine.step.observe_egocentric`), the offset to the
    goal's centre in its frame, then the nearest obstacles; all clipped to [-1, 1]."""
    pos, vel, head = state.position, state.velocity, state.heading
    slots = world.observed_teammates + world.observed_opponents
    goal_at = SELF_WIDTH + OTHER_WIDTH * slots
    diag, near = world.diagonal, world.observation_range
    for q in range(envs.shape[0]):
        e = envs[q]
        observe_egocentric(
            e, pos, vel, head, state.alive, state.steps, vehicles, world, agent_index, obs, work
        )  # fmt: skip
        for a in range(agent_index.shape[0]):
            i = agent_index[a]
            for slot in range(slots):
                at = SELF_WIDTH + OTHER_WIDTH * slot + OTHER_POSITION
                to_near_field(obs[e, a], at, diag, near)
            f, s = to_local(
                state.goal[e, i, 0] - pos[e, i, 0],
                state.goal[e, i, 1] - pos[e, i, 1],
                head[e, i, 0],
                head[e, i, 1],
            )
            obs[e, a, goal_at + GOAL_OFFSET] = clip_unit(f / diag)
            obs[e, a, goal_at + GOAL_OFFSET + 1] = clip_unit(s / diag)
    observe_obstacles(envs, state, world, agent_index, obs, work)


@kernel
def decode_observations(obs, state, vehicles, worlds):
    """The inverse of the observation for agent 0: rebuild, from each row of ``obs``
    ``(E, obs_dim)``, the scene it shows into ``state``
    (:func:`~steer_env.engine.step.decode_egocentric`: the observer, then one vehicle per
    boid slot, then one per predator slot), the goal and the observed obstacles. Used by
    the classic flocks, which act from observations."""
    world = worlds[0]
    slots = world.observed_teammates + world.observed_opponents
    goal_at = SELF_WIDTH + OTHER_WIDTH * slots
    diag, near = world.diagonal, world.observation_range
    # The engine's decoder reads slot positions as offset / arena diagonal.
    plain = obs.copy()
    for e in range(obs.shape[0]):
        for slot in range(slots):
            from_near_field(plain[e], SELF_WIDTH + OTHER_WIDTH * slot + OTHER_POSITION, diag, near)
    for e in range(obs.shape[0]):
        px, py, hx, hy = decode_egocentric(plain, e, state, vehicles, world)
        gx, gy = to_world(
            obs[e, goal_at + GOAL_OFFSET] * diag, obs[e, goal_at + GOAL_OFFSET + 1] * diag, hx, hy
        )
        state.goal[e, 0, 0] = px + gx
        state.goal[e, 0, 1] = py + gy
        decode_obstacles(obs, e, px, py, hx, hy, world, state.obstacles)


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
    all_envs = work.env_index
    for e0 in range(0, num_envs, size):
        m = min(size, num_envs - e0)
        scripted_forces(
            e0, m, state, active, vehicles, behaviors, strategies, world, scene, scratch, force
        )
        move(e0, m, state, active, vehicles, world, actions, force, before)
        settle(
            e0, m, state, active, vehicles, world, before, agent_index, draws, results,
            env_results, work,
        )  # fmt: skip
        observe_rows(all_envs[e0 : e0 + m], state, vehicles, world, agent_index, obs, work)
