"""The compiled stages of the pursuit-evasion rules (:mod:`steer_env.rules.pursuit_evasion`)
and the entry points a :class:`~steer_env.engine.batch.Batch` of these rules calls.

:func:`step` runs, over blocks of environments, the engine's shared stages (scripted
strategies, learned forces and motion: :func:`steer_env.engine.step.scripted_forces` and
:func:`~steer_env.engine.step.move`), then these rules' :func:`settle` (captures, rewards,
episode end) and :func:`observe_rows` (the observation of :data:`~.FEATURES`). A new episode
is placed by :func:`reset_env`.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.jit import engine_inline_kernel, engine_kernel, kernel
from steer_env.core.streams import uniform_draw
from steer_env.core.vecmath import length
from steer_env.engine.step import (
    BLOCK,
    clear_of_obstacles,
    decode_egocentric,
    decode_obstacles,
    move,
    nearest_in_block,
    nearest_of,
    observe_egocentric,
    observe_obstacles,
    place_obstacles,
    push_out_of_obstacles,
    scripted_forces,
    start_obstacles,
    start_wander,
    swept_distance,
)
from steer_env.rules.pursuit_evasion import (
    EVADER,
    PURSUER,
    RESET_DRAWS_PER_VEHICLE,
    START_CANDIDATES,
)


# --------------------------------------------------------------------------- rules
@engine_kernel
def potential_at(d, team, world):
    """Shaping potential of a vehicle of ``team`` whose nearest opponent in the game is
    ``d`` m away: ``-/+ shaping_scale * d / diagonal`` for a pursuer/evader; 0 without an
    opponent (``d`` inf)."""
    if not d < np.inf:
        return 0.0
    value = world.shaping_scale * d / world.diagonal
    return -value if team == PURSUER else value


@engine_kernel
def potential(pos, alive, vehicles, world, e, i):
    """Shaping potential of vehicle ``i`` of environment ``e`` (:func:`potential_at` of
    the distance to its nearest opponent in the game)."""
    return potential_at(nearest_of(pos, alive, vehicles, e, i, True)[1], vehicles[i].team, world)


@engine_kernel
def settle(
    e0, m, state, active, vehicles, world, before, agent_index, draws, results, env_results, near
):
    """Capture, episode end and rewards of the environments of the block after their move
    (zero rewards for inactive ones). Captures and distances take one pass over the block
    per pair of vehicles (a distance and a select each), then each environment settles;
    ``near`` is a :class:`StrategyScratch` used as working space."""
    pos, alive, steps_all = state.position, state.alive, state.steps
    capture_step = state.capture_step
    n = pos.shape[1]
    k = agent_index.shape[0]
    for b in range(m):
        e = e0 + b
        if active[e]:
            state.counter[e] += np.uint64(draws)
            steps_all[e] += 1
        env_results[e].captures = 0
    # Captures: an evader in the game that a pursuer came within capture_radius of during
    # the step (swept test) is marked with this step; each evader counts once.
    radius = world.capture_radius
    for q in range(n):
        if vehicles[q].team != EVADER:
            continue
        for p in range(n):
            if vehicles[p].team != PURSUER:
                continue
            for b in range(m):
                e = e0 + b
                steps = steps_all[e]
                caught = (
                    active[e]
                    & alive[e, q]
                    & alive[e, p]
                    & (capture_step[e, q] != steps)
                    & (swept_distance(before, b, pos, e, p, q) <= radius)
                )
                capture_step[e, q] = steps if caught else capture_step[e, q]
                env_results[e].captures += 1 if caught else 0
    # Distances after the move, before captured evaders leave (what the step ended with).
    for a in range(k):
        nearest_in_block(
            pos, alive, vehicles, e0, m, agent_index[a], True, near.near_d, near.near_j
        )
        for b in range(m):
            results[e0 + b, a].distance = near.near_d[b]
    for b in range(m):
        e = e0 + b
        if active[e]:
            state.episode[e].captures += env_results[e].captures
            settle_env(
                e,
                pos,
                alive,
                steps_all,
                capture_step,
                state.potential,
                vehicles,
                world,
                agent_index,
                results,
                env_results,
            )
        else:
            env_results[e].done = False
            env_results[e].timed_out = False
            for a in range(k):
                res = results[e, a]
                res.reward = 0.0
                res.capture = 0.0
                res.escape = 0.0
                res.shaping = 0.0
                res.terminated = False
                res.captured = False


@engine_inline_kernel
def settle_env(
    e,
    pos,
    alive,
    steps_all,
    capture_step,
    potentials,
    vehicles,
    world,
    agent_index,
    results,
    env_results,
):
    """Episode end and rewards of active environment ``e`` after its captures are known
    (``env_results[e].captures``) and its agents' distances measured: captured evaders
    leave the game."""
    n = pos.shape[1]
    steps = steps_all[e]
    captures = env_results[e].captures
    k = agent_index.shape[0]
    evaders_left = 0
    for q in range(n):
        if alive[e, q] and vehicles[q].team == EVADER:
            if capture_step[e, q] == steps:
                alive[e, q] = False
            else:
                evaders_left += 1
    timed_out = steps >= world.time_limit
    done = timed_out or evaders_left == 0 or (world.end_on_first_capture and captures > 0)
    env_results[e].done = done
    env_results[e].timed_out = timed_out
    for a in range(k):
        i = agent_index[a]
        res = results[e, a]
        was_in = capture_step[e, i] < 0 or capture_step[e, i] == steps
        if not was_in:
            # Left the game on an earlier step: nothing more happens to this agent.
            res.reward = 0.0
            res.capture = 0.0
            res.escape = 0.0
            res.shaping = 0.0
            res.terminated = True
            res.captured = False
            continue
        captured = capture_step[e, i] == steps
        capture = 0.0
        escape = 0.0
        if vehicles[i].team == PURSUER:
            capture = world.capture_reward * captures
        elif captured:
            capture = -world.capture_reward
        elif done:
            escape = world.escape_reward if timed_out else 0.0
        terminated = done or captured
        shaping = 0.0
        if world.shaping:
            # The potential of a terminal state is 0, so over any episode the shaping terms
            # sum (discounted by shaping_gamma) to exactly -phi(start): policy-invariant.
            if terminated:
                new = 0.0
            elif captures == 0:
                # Nobody left the game: the nearest opponent is the one measured above.
                new = potential_at(res.distance, vehicles[i].team, world)
            else:
                new = potential(pos, alive, vehicles, world, e, i)
            shaping = world.shaping_gamma * new - potentials[e, a]
            potentials[e, a] = new
        res.capture = capture
        res.escape = escape
        res.shaping = shaping
        res.reward = capture + escape + shaping
        res.terminated = terminated
        res.captured = captured


@engine_kernel
def observe_rows(envs, state, vehicles, world, agent_index, obs, work):
    """Observations of every learned agent of environments ``envs`` into ``obs[envs]``
    (float32): own velocity, walls, time, then the nearest teammates and opponents in the
    game in slots (nearest first) with presence flags; all in [-1, 1]. ``work`` is the
    batch's :class:`~steer_env.engine.step.StepWork`."""
    pos, vel, head = state.position, state.velocity, state.heading
    alive = state.alive
    for q in range(envs.shape[0]):
        observe_egocentric(
            envs[q],
            pos,
            vel,
            head,
            alive,
            state.steps,
            vehicles,
            world,
            agent_index,
            obs,
            work,
        )
    observe_obstacles(envs, state, world, agent_index, obs, work)


@engine_kernel
def reset_env(e, state, vehicles, world, agent_index):
    """A new episode in environment ``e``, drawn from its stream (which goes on from its
    counter): ``RESET_DRAWS_PER_VEHICLE`` draws per vehicle, ``START_CANDIDATES`` candidate
    positions, a heading angle and a wander angle. Vehicles are placed in order; each takes
    its first candidate at least ``min_start_distance`` from every opponent already placed
    (the candidate farthest from them if none is), among the candidates clear of a fixed
    obstacle layout (``obstacle_gap`` m from its edges; one pushed out of them if none is).
    The obstacles placed per episode come last, around the vehicles
    (:func:`~steer_env.engine.step.place_obstacles`), from the draws after theirs."""
    pos = state.position[e]
    vel = state.velocity[e]
    head = state.heading[e]
    wt = state.wander[e]
    n = pos.shape[0]
    per = RESET_DRAWS_PER_VEHICLE
    key = state.key[e]
    counter = state.counter[e]
    lo = -world.half_size + world.start_margin
    span = world.arena_size - 2.0 * world.start_margin
    two_pi = 2.0 * math.pi
    start_obstacles(e, state, world)
    for i in range(n):
        base = i * per
        chosen = -1
        best = -1.0
        best_c = 0
        clearance = vehicles[i].radius + world.obstacle_gap
        for c in range(START_CANDIDATES):
            cx = lo + span * uniform_draw(key, counter, base + 2 * c)
            cy = lo + span * uniform_draw(key, counter, base + 2 * c + 1)
            nearest = np.inf
            for j in range(i):
                if vehicles[j].team != vehicles[i].team:
                    nearest = min(nearest, length(cx - pos[j, 0], cy - pos[j, 1]))
            if not clear_of_obstacles(state.obstacles, e, cx, cy, clearance):
                continue
            if nearest >= world.min_start_distance:
                chosen = c
                break
            if nearest > best:
                best = nearest
                best_c = c
        c = chosen if chosen >= 0 else best_c
        pos[i, 0] = lo + span * uniform_draw(key, counter, base + 2 * c)
        pos[i, 1] = lo + span * uniform_draw(key, counter, base + 2 * c + 1)
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
    placed = place_obstacles(e, state, vehicles, world, key, counter, n * per, 0.0, 0.0, -1.0)
    state.counter[e] = counter + np.uint64(n * per + placed)
    state.steps[e] = 0
    state.episode[e].captures = 0
    for a in range(agent_index.shape[0]):
        i = agent_index[a]
        state.potential[e, a] = potential(state.position, state.alive, vehicles, world, e, i)


# --------------------------------------------------------------------------- entry points
@engine_kernel
def reset(state, vehicles, behaviors, strategies, worlds, agent_index, envs, obs, work):
    """New episodes in environments ``envs`` (indices); their observations go to
    ``obs[envs]``. ``worlds`` holds the :data:`~steer_env.rules.pursuit_evasion.WORLD`
    record (length 1); ``work`` is the batch's :class:`~steer_env.engine.step.StepWork`."""
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
    """Advance the active environments by one step.

    Args (``E`` envs, ``n`` vehicles, ``k`` learned agents; updated in place):
        state: :class:`~steer_env.engine.layout.State`.
        active: ``(E,)`` bool: environments to step; the others are left as they are
            (their results are zero, their observations rewritten from their state).
        vehicles: ``(n,)`` :data:`~steer_env.engine.layout.VEHICLE` records.
        behaviors, strategies: the strategy table (``(S, B)``
            :data:`~steer_env.engine.layout.BEHAVIOR`, ``(S,)``
            :data:`~steer_env.engine.layout.STRATEGY`).
        worlds: the :data:`~steer_env.rules.pursuit_evasion.WORLD` record (an array of
            length 1).
        scene: ``(path,)``: a ``(P, 2)`` polyline (the obstacles are ``state``'s).
        agent_index: ``(k,)`` vehicle index of each learned agent.
        draws: random draws every active environment takes per step.
        actions: ``(E, k, 2)`` in each agent's frame, units of its max force.
        results: ``(E, k)`` :data:`~steer_env.rules.pursuit_evasion.AGENT_RESULT` out.
        env_results: ``(E,)`` :data:`~steer_env.rules.pursuit_evasion.ENV_RESULT` out.
        obs: ``(E, k, obs_dim)`` float32 out.
        work: the :class:`~steer_env.engine.step.StepWork` of these ``E`` envs of ``n``
            vehicles.
    """
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
            e0,
            m,
            state,
            active,
            vehicles,
            world,
            before,
            agent_index,
            draws,
            results,
            env_results,
            scratch,
        )
        observe_rows(all_envs[e0 : e0 + m], state, vehicles, world, agent_index, obs, work)


@kernel
def decode_observations(obs, state, vehicles, worlds):
    """The inverse of :func:`~steer_env.engine.step.observe_egocentric` for agent 0:
    rebuild, from each row of ``obs`` ``(E, obs_dim)``, the world-frame state that
    observation shows, into ``state`` (vehicle 0 the observer, then one vehicle per
    teammate slot, then one per opponent slot; empty slots leave the game; the observed
    obstacles into ``state.obstacles``). Used by the classic baselines, which act from
    observations.

    The pose and the vehicles come from :func:`~steer_env.engine.step.decode_egocentric`."""
    world = worlds[0]
    for e in range(obs.shape[0]):
        px, py, hx, hy = decode_egocentric(obs, e, state, vehicles, world)
        decode_obstacles(obs, e, px, py, hx, hy, world, state.obstacles)
