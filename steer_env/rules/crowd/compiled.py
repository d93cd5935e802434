"""The compiled stages of the crowd navigation rules (:mod:`steer_env.rules.crowd`) and the
entry points a :class:`~steer_env.engine.batch.Batch` of these rules calls.

:func:`step` runs, over blocks of environments, the engine's shared stages (the humans'
strategy, the robots' forces and motion: :func:`steer_env.engine.step.scripted_forces` and
:func:`~steer_env.engine.step.move`), then these rules' :func:`settle` (collisions, goals,
rewards, episode end, the outcome) and :func:`observe_rows` (the engine's egocentric
observation plus the goal). A new episode is placed by :func:`reset_env`.
"""

from __future__ import annotations

import math

import numpy as np

from steer_env.core.jit import engine_inline_kernel, engine_kernel, kernel
from steer_env.core.streams import uniform_draw
from steer_env.core.vecmath import length, to_local, to_world
from steer_env.engine.egocentric import OTHER_WIDTH, SELF_WIDTH
from steer_env.engine.step import (
    BLOCK,
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
from steer_env.rules.crowd import (
    CANDIDATE_DRAWS,
    CIRCLE_CROSSING,
    GOAL_OFFSET,
    HUMAN,
    HUMAN_CANDIDATES,
    RESET_DRAWS_PER_VEHICLE,
    ROBOT,
    SQUARE_CROSSING,
)


# --------------------------------------------------------------------------- the start
@engine_kernel
def human_candidate(world, key, counter, draw):
    """One candidate ``(sx, sy, gx, gy)`` start and goal of a human in ``world``'s
    scenario, from draws ``draw .. draw + CANDIDATE_DRAWS - 1`` (see the rules' module
    docstring)."""
    u0 = uniform_draw(key, counter, draw)
    u1 = uniform_draw(key, counter, draw + 1)
    u2 = uniform_draw(key, counter, draw + 2)
    w = world.square_width
    if world.scenario_code == CIRCLE_CROSSING:
        angle = 2.0 * math.pi * u0
        noise = world.human_noise
        sx = world.circle_radius * math.cos(angle) + (2.0 * u1 - 1.0) * noise
        sy = world.circle_radius * math.sin(angle) + (2.0 * u2 - 1.0) * noise
        return sx, sy, -sx, -sy
    if world.scenario_code == SQUARE_CROSSING:
        u3 = uniform_draw(key, counter, draw + 3)
        u4 = uniform_draw(key, counter, draw + 4)
        sign = 1.0 if u0 < 0.5 else -1.0
        return u1 * w / 2.0 * sign, (u2 - 0.5) * w, -u3 * w / 2.0 * sign, (u4 - 0.5) * w
    # Parallel traffic: two streams along y, each starting within the first half of its way.
    way = 1.0 if u0 < 0.5 else -1.0
    x = (u1 - 0.5) * w / 2.0
    return x, way * (u2 - 1.0) * w / 2.0, x, way * w / 2.0


@engine_kernel
def start_clearance(pos, goal, vehicles, world, i, sx, sy, gx, gy):
    """How far a start ``(sx, sy)`` and goal ``(gx, gy)`` of vehicle ``i`` keep from every
    start and goal of the vehicles placed before it (rows ``0 .. i - 1``), beyond
    ``discomfort_distance`` between bodies: >= 0 means clear."""
    clearance = np.inf
    for j in range(i):
        reach = vehicles[i].radius + vehicles[j].radius + world.discomfort_distance
        d = min(length(sx - pos[j, 0], sy - pos[j, 1]), length(gx - goal[j, 0], gy - goal[j, 1]))
        clearance = min(clearance, d - reach)
    return clearance


@engine_kernel
def reset_env(e, state, vehicles, world, agent_index):
    """A new episode in environment ``e``, drawn from its stream: the robots on their
    circle, each human's start and goal, then the obstacles (see the rules' module
    docstring). Robots come before the humans in the roster."""
    pos = state.position[e]
    vel = state.velocity[e]
    head = state.heading[e]
    goal = state.goal[e]
    n = pos.shape[0]
    key = state.key[e]
    counter = state.counter[e]
    start_obstacles(e, state, world)
    n_robots = 0
    for i in range(n):
        if vehicles[i].team == ROBOT:
            n_robots += 1
    k = 0
    for i in range(n):
        if vehicles[i].team == ROBOT:
            angle = -0.5 * math.pi + 2.0 * math.pi * k / n_robots
            pos[i, 0] = world.robot_distance * math.cos(angle)
            pos[i, 1] = world.robot_distance * math.sin(angle)
            goal[i, 0] = -pos[i, 0]
            goal[i, 1] = -pos[i, 1]
            k += 1
            continue
        base = i * RESET_DRAWS_PER_VEHICLE
        clearance = vehicles[i].radius + world.obstacle_gap
        best = -np.inf
        for c in range(HUMAN_CANDIDATES):
            sx, sy, gx, gy = human_candidate(world, key, counter, base + CANDIDATE_DRAWS * c)
            if not (
                clear_of_obstacles(state.obstacles, e, sx, sy, clearance)
                and clear_of_obstacles(state.obstacles, e, gx, gy, clearance)
            ):
                continue
            room = start_clearance(pos, goal, vehicles, world, i, sx, sy, gx, gy)
            if room > best:
                best = room
                pos[i, 0], pos[i, 1], goal[i, 0], goal[i, 1] = sx, sy, gx, gy
            if room >= 0.0:
                break
        if best == -np.inf:
            # No candidate clear of a fixed layout: the first one, pushed out below.
            pos[i, 0], pos[i, 1], goal[i, 0], goal[i, 1] = human_candidate(
                world, key, counter, base
            )
    for i in range(n):
        push_out_of_obstacles(e, i, state, vehicles)
        vel[i, 0] = 0.0
        vel[i, 1] = 0.0
        dx = goal[i, 0] - pos[i, 0]
        dy = goal[i, 1] - pos[i, 1]
        d = length(dx, dy)
        head[i, 0] = dx / d if d > 0.0 else 1.0
        head[i, 1] = dy / d if d > 0.0 else 0.0
        state.wander[e, i, 0] = 1.0
        state.wander[e, i, 1] = 0.0
        state.alive[e, i] = True
        state.capture_step[e, i] = -1
    drawn = n * RESET_DRAWS_PER_VEHICLE
    placed = place_obstacles(e, state, vehicles, world, key, counter, drawn, 0.0, 0.0, -1.0)
    if placed > 0:
        clear_goals(e, state, vehicles, world)
    state.counter[e] = counter + np.uint64(drawn + placed)
    state.steps[e] = 0
    episode = state.episode[e]
    episode.robot_steps = 0
    episode.danger_steps = 0
    episode.danger_gap = 0.0
    for a in range(agent_index.shape[0]):
        i = agent_index[a]
        state.potential[e, a] = -world.progress_scale * goal_distance(
            state.position, state.goal, e, i
        )


@engine_kernel
def clear_goals(e, state, vehicles, world):
    """Leave out (radius 0) each obstacle placed this episode that comes within
    ``obstacle_gap`` of a vehicle's body standing at its goal: every goal stays
    reachable."""
    obstacles = state.obstacles
    goal = state.goal
    for o in range(obstacles.shape[1]):
        r = obstacles[e, o, 2]
        if not r > 0.0:
            continue
        for j in range(goal.shape[1]):
            d = length(goal[e, j, 0] - obstacles[e, o, 0], goal[e, j, 1] - obstacles[e, o, 1])
            if d < r + vehicles[j].radius + world.obstacle_gap:
                obstacles[e, o, 2] = 0.0
                break


# --------------------------------------------------------------------------- rules
@engine_inline_kernel
def goal_distance(pos, goal, e, i):
    """Vehicle ``i``'s distance to its goal in environment ``e``, m."""
    return length(pos[e, i, 0] - goal[e, i, 0], pos[e, i, 1] - goal[e, i, 1])


@engine_kernel
def closest_gap(before, b, pos, alive, vehicles, e, i):
    """The closest gap ``(gap, touched)`` between robot ``i``'s body and another's during
    the step (swept: :func:`~steer_env.engine.step.swept_distance`): the least over the
    humans in the game (inf: none), and whether it touched any vehicle in the game."""
    gap = np.inf
    touched = False
    for j in range(pos.shape[1]):
        if j == i or not alive[e, j]:
            continue
        d = swept_distance(before, b, pos, e, i, j) - vehicles[i].radius - vehicles[j].radius
        touched |= d <= 0.0
        if vehicles[j].team == HUMAN:
            gap = min(gap, d)
    return gap, touched


@engine_kernel
def settle(e0, m, state, active, vehicles, world, before, agent_index, draws, results, env_results):
    """Collisions, goals, episode end, rewards and the outcome of the environments of the
    block after their move (for inactive ones: zero rewards, not done, and the gaps and
    goal distances of their current state)."""
    pos, alive, goal = state.position, state.alive, state.goal
    k = agent_index.shape[0]
    for b in range(m):
        e = e0 + b
        res_env = env_results[e]
        if not active[e]:
            # Not stepped (restarted instead): what its current state measures (after a
            # reset, the start the infos of a reset report).
            left = 0
            for a in range(k):
                i = agent_index[a]
                res = results[e, a]
                clear_agent(res)
                res.gap = start_gap(pos, alive, vehicles, e, i)
                res.goal_distance = goal_distance(pos, goal, e, i)
                left += 1 if alive[e, i] else 0
            res_env.done = False
            res_env.timed_out = False
            res_env.is_success = False
            res_env.collisions = 0
            res_env.robots_left = left
            clear_outcome(res_env)
            continue
        state.counter[e] += np.uint64(draws)
        state.steps[e] += 1
        steps = state.steps[e]
        episode = state.episode[e]
        collisions = 0
        for a in range(k):
            i = agent_index[a]
            res = results[e, a]
            res.goal_distance = goal_distance(pos, goal, e, i)
            if not alive[e, i]:
                # At its goal since an earlier step: nothing more happens to this robot.
                clear_agent(res)
                res.gap = np.inf
                res.terminated = True
                continue
            gap, touched = closest_gap(before, b, pos, alive, vehicles, e, i)
            res.gap = gap
            res.collided = touched
            res.arrived = not touched and res.goal_distance <= world.goal_radius
            collisions += 1 if touched else 0
            episode.robot_steps += 1
            if not touched and not res.arrived and gap < world.discomfort_distance:
                episode.danger_steps += 1
                episode.danger_gap += gap
        left = 0
        for a in range(k):
            i = agent_index[a]
            if alive[e, i] and results[e, a].arrived:
                alive[e, i] = False
                state.capture_step[e, i] = steps
            left += 1 if alive[e, i] else 0
        success = collisions == 0 and left == 0
        timed_out = not success and collisions == 0 and steps >= world.time_limit
        done = success or timed_out or collisions > 0
        res_env.done = done
        res_env.timed_out = timed_out
        res_env.is_success = success
        res_env.collisions = collisions
        res_env.robots_left = left
        if done:
            res_env.goal_step = steps if success else -1
            res_env.collision_rate = 1.0 if collisions > 0 else 0.0
            res_env.timeout_rate = 1.0 if timed_out else 0.0
            res_env.navigation_time = steps * world.dt if success else -1.0
            robot_steps = max(episode.robot_steps, 1)
            res_env.discomfort_frequency = episode.danger_steps / robot_steps
            danger = episode.danger_steps
            res_env.danger_distance = episode.danger_gap / danger if danger > 0 else 0.0
        else:
            clear_outcome(res_env)
        for a in range(k):
            left_at = state.capture_step[e, agent_index[a]]
            if left_at < 0 or left_at == steps:  # in the game on this step
                settle_agent(results[e, a], world, state.potential, e, a, done)


@engine_inline_kernel
def settle_agent(res, world, potentials, e, a, done):
    """The reward terms of a robot in the game on this step (its gap, goal distance,
    arrival and collision measured): CrowdNav's terms and the progress shaping."""
    res.goal = world.success_reward if res.arrived else 0.0
    res.collision = -world.collision_penalty if res.collided else 0.0
    discomfort = 0.0
    if not res.collided and not res.arrived and res.gap < world.discomfort_distance:
        discomfort = (res.gap - world.discomfort_distance) * world.discomfort_factor * world.dt
    res.discomfort = discomfort
    terminated = done or res.arrived
    # phi = 0 in terminal states: the progress terms of an episode sum (discounted by
    # shaping_gamma) to exactly -phi(start), whatever the robot does.
    new = 0.0 if terminated else -world.progress_scale * res.goal_distance
    res.progress = world.shaping_gamma * new - potentials[e, a]
    potentials[e, a] = new
    res.reward = res.goal + res.collision + res.discomfort + res.progress
    res.terminated = terminated


@engine_inline_kernel
def clear_agent(res):
    """A robot's result fields before they are measured (or with nothing to measure)."""
    res.reward = 0.0
    res.goal = 0.0
    res.collision = 0.0
    res.discomfort = 0.0
    res.progress = 0.0
    res.terminated = False
    res.arrived = False
    res.collided = False


@engine_kernel
def start_gap(pos, alive, vehicles, e, i):
    """The gap between robot ``i``'s body and the nearest human's where they stand (inf:
    none, or the robot is out of the game)."""
    if not alive[e, i]:
        return np.inf
    gap = np.inf
    for j in range(pos.shape[1]):
        if vehicles[j].team == HUMAN and alive[e, j]:
            d = length(pos[e, j, 0] - pos[e, i, 0], pos[e, j, 1] - pos[e, i, 1])
            gap = min(gap, d - vehicles[i].radius - vehicles[j].radius)
    return gap


@engine_inline_kernel
def clear_outcome(res_env):
    """The outcome fields of a step that does not end the episode."""
    res_env.goal_step = -1
    res_env.collision_rate = 0.0
    res_env.timeout_rate = 0.0
    res_env.navigation_time = -1.0
    res_env.discomfort_frequency = 0.0
    res_env.danger_distance = 0.0


# --------------------------------------------------------------------------- observation
@engine_kernel
def observe_rows(envs, state, vehicles, world, agent_index, obs, work):
    """Observations of every learned robot of environments ``envs`` into ``obs[envs]``:
    the egocentric head (:func:`~steer_env.engine.step.observe_egocentric`), the offset to
    its goal in its frame, then the nearest obstacles; all clipped to [-1, 1]."""
    pos, vel, head = state.position, state.velocity, state.heading
    goal_at = SELF_WIDTH + OTHER_WIDTH * (world.observed_teammates + world.observed_opponents)
    diag = world.diagonal
    for q in range(envs.shape[0]):
        e = envs[q]
        observe_egocentric(
            e, pos, vel, head, state.alive, state.steps, vehicles, world, agent_index, obs, work
        )  # fmt: skip
        for a in range(agent_index.shape[0]):
            i = agent_index[a]
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
    robot slot, then one per human slot), the observer's goal and the observed obstacles.
    Used by the classic robots, which act from observations."""
    world = worlds[0]
    goal_at = SELF_WIDTH + OTHER_WIDTH * (world.observed_teammates + world.observed_opponents)
    diag = world.diagonal
    for e in range(obs.shape[0]):
        px, py, hx, hy = decode_egocentric(obs, e, state, vehicles, world)
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
            env_results,
        )  # fmt: skip
        observe_rows(all_envs[e0 : e0 + m], state, vehicles, world, agent_index, obs, work)
