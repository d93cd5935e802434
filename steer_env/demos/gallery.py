"""Behaviour gallery: small scenes that show each steering behaviour with debug overlays.

Run a scene in a window, or render it headless to a GIF / MP4 / PNG::

    python -m steer_env.demos.gallery flocking
    python -m steer_env.demos.gallery pursuit-evade --out pursuit.gif --steps 300 --seed 3
    python -m steer_env.demos.gallery --list

Each scene is a function ``rng -> Scene`` that builds :class:`~steer_env.physics.Vehicles`,
steps them with the library's behaviours at ``DT`` seconds and draws them with
:class:`~steer_env.rendering.Renderer`, along with what the behaviour is "thinking": seek
targets and desired velocities, arrive's slowing radius, the wander circle, pursuit's
predicted intercept point, a boid's neighbourhood, wall feelers, obstacle detection boxes,
path-following look-ahead targets. All randomness comes from
``numpy.random.default_rng(seed)``, so a seed always gives the same frames.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from steer_env import behaviors, cli, combine, vecmath
from steer_env.neighbors import Neighbors, find_neighbors
from steer_env.physics import Vehicles
from steer_env.rendering import (
    ANIMATION_EXTENSIONS,
    ROLE_COLORS,
    AnimationOutputError,
    PygameNotInstalled,
    Renderer,
    Trails,
    check_animation_path,
    write_animation,
)

#: Simulation time step, seconds.
DT = 1.0 / 30.0

Array = NDArray[np.float64]
Bounds = tuple[float, float, float, float]

C = ROLE_COLORS
HUD_BOX = (*ROLE_COLORS["background"], 190)
ARRIVE_GAIN = 5.0
FLOCK_WEIGHTS = [6.0, 1.5, 1.0, 0.5, 1.0]


@dataclass
class Scene:
    """One gallery scene: world ``bounds`` (m), a ``step()`` advancing the simulation by
    :data:`DT`, and a ``draw(renderer)`` drawing the current state (between the renderer's
    ``begin_frame`` and ``finish``). ``caption`` explains the overlays; ``vehicles`` is the
    simulated state and ``info`` holds scene data (targets, obstacles, path) for tests."""

    title: str
    caption: str
    bounds: Bounds
    step: Callable[[], None]
    draw: Callable[[Renderer], None]
    vehicles: Vehicles
    info: dict = field(default_factory=dict)


# --- helpers
def _uniform_points(rng: np.random.Generator, n: int, bounds: Bounds, margin: float) -> Array:
    xmin, ymin, xmax, ymax = bounds
    lo = np.array([xmin + margin, ymin + margin])
    hi = np.array([xmax - margin, ymax - margin])
    return rng.uniform(lo, hi, size=(n, 2))


def _random_velocity(rng: np.random.Generator, n: int, speed: float) -> Array:
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n)
    return speed * np.stack((np.cos(angle), np.sin(angle)), axis=1)


def _cross(r: Renderer, at: Array, size: float, color: tuple[int, int, int]) -> None:
    at = np.asarray(at, dtype=np.float64)
    d = np.array([[size, size], [size, -size]])
    r.line(at - d, at + d, color)


def _trails(r: Renderer, trails: Trails, color: tuple[int, int, int] = C["trail"]) -> None:
    for k in range(trails.n_vehicles):
        r.polyline(trails.get(k), color)


def _wall_force(v: Vehicles, bounds: Bounds, feeler: float) -> Array:
    return behaviors.wall_avoidance(
        v.position, v.velocity, v.heading, v.max_speed, bounds, feeler_length=feeler
    )


# --- scenes
def scene_seek(rng: np.random.Generator) -> Scene:
    """Four vehicles of different agility seek one target that jumps every 2.5 s; seek
    arrives at full speed, overshoots and circles the target."""
    bounds: Bounds = (0.0, 0.0, 40.0, 30.0)
    n = 4
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 3.0),
        velocity=_random_velocity(rng, n, 3.0),
        max_speed=[5.0, 7.0, 9.0, 6.0],
        max_force=[6.0, 12.0, 9.0, 16.0],
        radius=0.7,
    )
    state = {"target": _uniform_points(rng, 1, bounds, 5.0)[0], "t": 0}
    trails = Trails(40)
    trails.reset(v.position)

    def step() -> None:
        state["t"] += 1
        if state["t"] % 75 == 0:
            state["target"] = _uniform_points(rng, 1, bounds, 5.0)[0]
        force = behaviors.seek(v.position, v.velocity, state["target"], v.max_speed)
        v.step(force, DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        target = state["target"]
        _trails(r, trails)
        desired = vecmath.set_magnitude(target - v.position, v.max_speed)
        r.line(v.position, v.position + 0.5 * desired, C["debug"])
        r.line(v.position, v.position + 0.5 * v.velocity, C["velocity"])
        r.circle(target, 0.6, C["target"])
        _cross(r, target, 0.4, C["target"])
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "seek",
        "violet: desired velocity (max speed to target), white: velocity",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_flee(rng: np.random.Generator) -> Scene:
    """Vehicles flee a moving threat while within its panic distance, brake otherwise, and
    stay in the box with wall avoidance (prioritized: walls first)."""
    bounds: Bounds = (0.0, 0.0, 40.0, 30.0)
    n = 14
    panic = 8.0
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 2.0),
        max_speed=7.0,
        max_force=14.0,
        radius=0.6,
    )
    phase = rng.uniform(0.0, 2.0 * np.pi, size=2)
    state = {"t": 0.0}

    def threat() -> Array:
        t = state["t"]
        return np.array(
            [20.0 + 13.0 * np.sin(0.45 * t + phase[0]), 15.0 + 9.0 * np.sin(0.7 * t + phase[1])]
        )

    def step() -> None:
        state["t"] += DT
        th = threat()
        forces = [
            _wall_force(v, bounds, 4.0),
            behaviors.flee(v.position, v.velocity, th, v.max_speed, panic_distance=panic),
            -v.velocity,
        ]
        v.step(combine.prioritized(forces, [1.0, 1.0, 0.6], v.max_force), DT)

    def draw(r: Renderer) -> None:
        th = threat()
        r.circle(th, panic, (*C["pursuer"], 28), 0)
        r.circle(th, panic, C["pursuer"])
        r.point(th, C["pursuer"], 6)
        scared = vecmath.length(v.position - th) <= panic
        colors = [C["evader"] if s else C["boid"] for s in scared]
        away = vecmath.set_magnitude(v.position - th, v.max_speed)
        r.line(v.position[scared], v.position[scared] + 0.4 * away[scared], C["debug"])
        r.vehicles(v.position, v.heading, v.radius, colors)

    return Scene(
        "flee",
        "red circle: panic distance; blue: fleeing, violet: flee direction",
        bounds,
        step,
        draw,
        v,
        {"threat": threat, "panic_distance": panic},
    )


def scene_arrive(rng: np.random.Generator) -> Scene:
    """One vehicle arrives at a target: full speed outside the slowing radius, a linear ramp
    down to rest inside it. The target moves once the vehicle has rested there for 1 s."""
    bounds: Bounds = (0.0, 0.0, 40.0, 30.0)
    slowing = 6.0
    v = Vehicles.create(
        position=_uniform_points(rng, 1, bounds, 4.0), max_speed=8.0, max_force=10.0, radius=0.8
    )

    def new_target() -> Array:
        for _ in range(100):
            t = _uniform_points(rng, 1, bounds, 4.0)[0]
            if vecmath.length(t - v.position[0]) > 12.0:
                break
        return t

    state = {"target": new_target(), "since": 0, "rest": 0, "arrivals": 0}
    trails = Trails(90)
    trails.reset(v.position)

    def step() -> None:
        at_rest = vecmath.length(state["target"] - v.position[0]) < 0.05 and v.speed[0] < 0.05
        state["rest"] = state["rest"] + 1 if at_rest else 0
        state["since"] += 1
        if state["rest"] >= 30 or state["since"] >= 300:
            state["arrivals"] += state["rest"] >= 30
            state["target"], state["since"], state["rest"] = new_target(), 0, 0
        force = behaviors.arrive(
            v.position,
            v.velocity,
            state["target"],
            v.max_speed,
            slowing,
            max_deceleration=v.max_force / v.mass,
        )
        # Weight 5 (Buckland scales every weight by a "steering force tweaker"): the raw
        # force desired - velocity tracks the ramp with a 1 s lag and would overshoot.
        v.step(combine.weighted_sum([force], [ARRIVE_GAIN], v.max_force), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        target = state["target"]
        r.circle(target, slowing, (*C["debug"], 24), 0)
        r.circle(target, slowing, C["debug"])
        _cross(r, target, 0.5, C["target"])
        _trails(r, trails)
        r.line(v.position, v.position + 0.5 * v.velocity, C["velocity"])
        r.vehicles(v.position, v.heading, v.radius, C["agent"])
        px = r.world_to_screen(v.position[0])
        r.text(f"{v.speed[0]:.1f} m/s", (int(px[0]) + 12, int(px[1]) + 8), size_px=_font(r))

    return Scene(
        "arrive",
        "violet circle: slowing radius (speed ramps down to 0 at the target)",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_wander(rng: np.random.Generator) -> Scene:
    """Ten wanderers; the yellow one shows its wander circle and jittered target."""
    bounds: Bounds = (0.0, 0.0, 60.0, 45.0)
    n = 10
    w_radius, w_distance, w_jitter = 1.6, 3.0, 10.0
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 5.0),
        velocity=_random_velocity(rng, n, 2.0),
        max_speed=5.0,
        max_force=8.0,
        radius=0.7,
    )
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n)
    state = {"wt": w_radius * np.stack((np.cos(angle), np.sin(angle)), axis=1)}
    trails = Trails(60)
    trails.reset(v.position)

    def step() -> None:
        wf, state["wt"] = behaviors.wander(
            v.position,
            v.velocity,
            v.heading,
            v.max_speed,
            state["wt"],
            radius=w_radius,
            distance=w_distance,
            jitter=w_jitter,
            dt=DT,
            rng=rng,
        )
        force = combine.prioritized([_wall_force(v, bounds, 5.0), wf], [1.0, 1.0], v.max_force)
        v.step(force, DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        _trails(r, trails)
        p, h = v.position[0], v.heading[0]
        center = vecmath.point_to_world([w_distance, 0.0], p, h)
        target = behaviors.wander_world_target(p, h, state["wt"][0], w_distance)
        r.line(p, center, C["debug"])
        r.circle(center, w_radius, C["debug"])
        r.line(p, target, C["agent"])
        r.point(target, C["agent"], 4)
        colors = [C["agent"]] + [C["boid"]] * (n - 1)
        r.vehicles(v.position, v.heading, v.radius, colors)

    return Scene(
        "wander",
        "violet: wander circle ahead of the vehicle; yellow dot: jittered wander target",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_pursuit_evade(rng: np.random.Generator) -> Scene:
    """A pursuer seeks the evader's predicted position; the evader evades within 15 m and
    wanders otherwise. A capture respawns the evader far away."""
    bounds: Bounds = (0.0, 0.0, 50.0, 40.0)
    v = Vehicles.create(
        position=np.array([[8.0, 8.0], [38.0, 30.0]]) + rng.uniform(-3.0, 3.0, size=(2, 2)),
        velocity=_random_velocity(rng, 2, 2.0),
        max_speed=[7.0, 6.0],
        max_force=[10.0, 14.0],
        radius=[0.9, 0.8],
    )
    state = {"wt": np.array([1.5, 0.0]), "captures": 0}
    trails = Trails(60)
    trails.reset(v.position)

    def aim() -> Array:
        p, vel = v.position, v.velocity
        return behaviors.pursuit_target(p[0], vel[0], v.max_speed[0], p[1], vel[1], 2.0)

    def step() -> None:
        p, vel, h, ms = v.position, v.velocity, v.heading, v.max_speed
        walls = _wall_force(v, bounds, 4.0)
        chase = behaviors.seek(p[0], vel[0], aim(), ms[0])
        escape = behaviors.evade(p[1], vel[1], ms[1], p[0], vel[0], threat_range=15.0)
        wf, state["wt"] = behaviors.wander(
            p[1], vel[1], h[1], ms[1], state["wt"],
            radius=1.5, distance=3.0, jitter=8.0, dt=DT, rng=rng,
        )  # fmt: skip
        f0 = combine.prioritized([walls[0], chase], [1.0, 1.0], v.max_force[0])
        f1 = combine.prioritized([walls[1], escape, wf], [1.0, 1.0, 0.5], v.max_force[1])
        v.step(np.stack((f0, f1)), DT)
        if vecmath.length(v.position[0] - v.position[1]) < v.radius.sum():
            state["captures"] += 1
            for _ in range(100):
                spot = _uniform_points(rng, 1, bounds, 4.0)[0]
                if vecmath.length(spot - v.position[0]) > 20.0:
                    break
            v.position[1] = spot
            v.velocity[1] = 0.0
            trails.reset(v.position)
        else:
            trails.push(v.position)

    def draw(r: Renderer) -> None:
        intercept = aim()
        r.polyline(trails.get(0), C["pursuer"])
        r.polyline(trails.get(1), C["evader"])
        r.circle(v.position[1], 15.0, (*C["evader"], 18), 0)
        r.line(v.position[0], intercept, C["debug"])
        _cross(r, intercept, 0.6, C["debug"])
        r.line(v.position[1], v.position[1] + 0.5 * v.velocity[1], C["velocity"])
        r.vehicles(v.position, v.heading, v.radius, [C["pursuer"], C["evader"]])
        size = _font(r)
        r.text(f"captures: {state['captures']}", (6, r.height - 2 * size - 6), size_px=size)

    return Scene(
        "pursuit-evade",
        "violet cross: pursuer's predicted intercept; blue disc: evader's threat range",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_flocking(rng: np.random.Generator, n: int = 300) -> Scene:
    """``n`` boids: separation (within 1.8 m) + alignment + cohesion (within 5 m) as a
    weighted sum, with wall avoidance weighted heavily so the flock stays in the box."""
    bounds: Bounds = (0.0, 0.0, 80.0, 60.0)
    view, personal = 5.0, 1.8
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 3.0),
        velocity=_random_velocity(rng, n, 3.0),
        max_speed=8.0,
        max_force=14.0,
        radius=0.5,
    )
    state: dict = {"nb": find_neighbors(v.position, view)}

    def step() -> None:
        nb = find_neighbors(v.position, view)
        close = nb.distance <= personal
        near = Neighbors(nb.i[close], nb.j[close], nb.offset[close], nb.distance[close], n)
        state["nb"] = nb
        forces = [
            _wall_force(v, bounds, 4.0),
            behaviors.separation(v.velocity, v.max_speed, near),
            behaviors.alignment(v.velocity, v.heading, v.max_speed, nb),
            behaviors.cohesion(v.velocity, v.max_speed, nb),
            v.heading * v.max_speed[:, None] - v.velocity,  # cruise at top speed
        ]
        v.step(combine.weighted_sum(forces, FLOCK_WEIGHTS, v.max_force), DT)

    def draw(r: Renderer) -> None:
        nb = state["nb"]
        mine = nb.j[nb.i == 0]
        p0 = v.position[0]
        r.circle(p0, view, (*C["debug"], 30), 0)
        r.circle(p0, view, C["debug"])
        r.line(np.broadcast_to(p0, (mine.size, 2)), v.position[mine], C["neighbor"])
        colors = np.tile(np.array(C["boid"]), (n, 1))
        colors[mine] = C["neighbor"]
        colors[0] = C["agent"]
        r.vehicles(v.position, v.heading, v.radius, colors)

    return Scene(
        "flocking",
        f"{n} boids; yellow: one boid, its {view:g} m neighbourhood and neighbours (green)",
        bounds,
        step,
        draw,
        v,
        state,
    )


def _nearest_neighbors(position: Array, k: int) -> Neighbors:
    """Each vehicle's ``k`` nearest others (a topological neighbourhood), ties by index."""
    n = position.shape[0]
    offset = position[None, :, :] - position[:, None, :]
    distance = np.linalg.norm(offset, axis=2)
    np.fill_diagonal(distance, np.inf)
    k = min(k, n - 1)
    j = np.argsort(distance, axis=1, kind="stable")[:, :k]
    i = np.repeat(np.arange(n), k)
    j = j.ravel()
    return Neighbors(i, j, offset[i, j], distance[i, j], n)


def scene_herding(rng: np.random.Generator, n: int = 30) -> Scene:
    """Strömbom's dog herds ``n`` sheep into a pen. A sheep separates from sheep within
    1 m, flees the dog within 12 m and, while the dog is that near, seeks the centre of its
    15 nearest (a topological neighbourhood); otherwise it grazes (a slow wander). The dog
    arrives at :func:`~steer_env.behaviors.shepherd_target`: behind the straggler when the
    flock is spread (collect), behind the flock as seen from the pen otherwise (drive).
    A penned flock is scattered again."""
    bounds: Bounds = (0.0, 0.0, 60.0, 45.0)
    pen, pen_radius = np.array([50.0, 35.0]), 7.0
    r_a, r_s, k = 1.0, 12.0, 15
    spread_limit, collect, drive = r_a * n ** (2.0 / 3.0), 2.0 * r_a, r_a * np.sqrt(n)
    v = Vehicles.create(
        position=np.zeros((n + 1, 2)),
        velocity=np.zeros((n + 1, 2)),
        max_speed=[4.5] + [3.0] * n,
        max_force=[9.0] + [6.0] * n,
        radius=[0.8] + [0.45] * n,
    )
    state: dict = {"wander": np.tile([1.0, 0.0], (n, 1)), "penned": 0, "scatters": 0}
    trails = Trails(90)

    def scatter() -> None:
        centre = np.array([rng.uniform(14.0, 30.0), rng.uniform(10.0, 22.0)])
        v.position[1:] = centre + rng.uniform(-8.0, 8.0, size=(n, 2))
        v.position[0] = [4.0, 4.0]
        v.velocity[:] = 0.0
        trails.reset(v.position[:1])

    def plan() -> tuple[Array, Array, bool]:
        sheep = v.position[1:]
        centre = sheep.mean(axis=0)
        farthest = sheep[np.argmax(vecmath.length(sheep - centre))]
        target, collecting = behaviors.shepherd_target(
            centre, farthest, pen, spread_limit, collect, drive
        )
        return centre, target, bool(collecting)

    def step() -> None:
        p, vel, ms = v.position, v.velocity, v.max_speed
        sheep, svel = p[1:], vel[1:]
        walls = _wall_force(v, bounds, 3.0)
        _, target, _ = plan()
        dog = behaviors.arrive(p[0], vel[0], target, ms[0], 4.0)
        near_dog = vecmath.length(sheep - p[0]) <= r_s
        nb = find_neighbors(sheep, r_a)
        graze, state["wander"] = behaviors.wander(
            sheep, svel, v.heading[1:], 0.1 * ms[1:], state["wander"],
            radius=0.5, distance=1.0, jitter=2.0, dt=DT, rng=rng,
        )  # fmt: skip
        flock = behaviors.cohesion(svel, ms[1:], _nearest_neighbors(sheep, k))
        herd = [
            walls[1:],
            behaviors.separation(svel, ms[1:], nb),
            behaviors.flee(sheep, svel, p[0], ms[1:], r_s),
            np.where(near_dog[:, None], flock, 0.0),
            np.where(near_dog[:, None], 0.0, graze),
        ]
        sheep_force = combine.weighted_sum(herd, [4.0, 2.0, 1.0, 1.05, 1.0], v.max_force[1:])
        dog_force = combine.prioritized([walls[0], dog], [1.0, 1.0], v.max_force[0])
        v.step(np.vstack((dog_force, sheep_force)), DT)
        state["penned"] = int(np.sum(vecmath.length(v.position[1:] - pen) <= pen_radius))
        if state["penned"] == n:
            state["scatters"] += 1
            scatter()
        else:
            trails.push(v.position[:1])

    def draw(r: Renderer) -> None:
        centre, target, collecting = plan()
        r.circle(pen, pen_radius, (*C["pen"], 40), 0)
        r.circle(pen, pen_radius, C["pen"])
        r.circle(v.position[0], r_s, (*C["dog"], 16), 0)
        r.polyline(trails.get(0), C["trail"])
        r.line(v.position[0], target, C["debug"])
        _cross(r, target, 0.7, C["debug"])
        _cross(r, centre, 0.7, C["target"])
        colors = [C["dog"]] + [C["sheep"]] * n
        r.vehicles(v.position, v.heading, v.radius, colors)
        size = _font(r)
        words = "collecting" if collecting else "driving"
        r.text(f"{words}; penned {state['penned']}/{n}", (6, r.height - 2 * size - 6), size_px=size)

    scatter()
    return Scene(
        "herding",
        "green: the pen; violet cross: the dog's target (collect or drive); white cross: the "
        "flock's centre; red disc: the range within which sheep react to the dog",
        bounds,
        step,
        draw,
        v,
        state,
    )


def _place_obstacles(
    rng: np.random.Generator, n: int, region: Bounds, gap: float
) -> tuple[Array, Array]:
    centers: list[Array] = []
    radii: list[float] = []
    for _ in range(2000):
        if len(centers) == n:
            break
        rad = float(rng.uniform(1.4, 3.2))
        c = _uniform_points(rng, 1, region, rad)[0]
        if all(
            vecmath.length(c - o) > rad + ro + gap for o, ro in zip(centers, radii, strict=True)
        ):
            centers.append(c)
            radii.append(rad)
    return np.array(centers).reshape(-1, 2), np.array(radii)


def scene_obstacle_avoidance(rng: np.random.Generator) -> Scene:
    """Vehicles cross a field of circular obstacles towards goals on the far side, with
    Buckland's detection box (prioritized: walls, obstacles, then seek)."""
    bounds: Bounds = (0.0, 0.0, 60.0, 40.0)
    n = 6
    min_box = 4.0
    centers, radii = _place_obstacles(rng, 12, (11.0, 1.0, 49.0, 39.0), 4.5)
    side = np.where(np.arange(n) % 2 == 0, 0, 1)
    x0 = np.where(side == 0, 4.0, 56.0)
    y0 = np.linspace(6.0, 34.0, n) + rng.uniform(-2.0, 2.0, size=n)
    v = Vehicles.create(
        position=np.stack((x0, y0), axis=1),
        velocity=np.stack((np.where(side == 0, 2.0, -2.0), np.zeros(n)), axis=1),
        max_speed=6.0,
        max_force=12.0,
        radius=0.8,
    )

    def goal_for(s: NDArray[np.intp]) -> Array:
        gx = np.where(s == 0, 56.0, 4.0)
        return np.stack((gx, rng.uniform(5.0, 35.0, size=np.size(s))), axis=1)

    state = {"side": side, "goal": goal_for(side)}
    trails = Trails(45)
    trails.reset(v.position)

    def box_length() -> Array:
        return min_box * (1.0 + v.speed / v.max_speed)

    def step() -> None:
        reached = vecmath.length(state["goal"] - v.position) < 3.0
        if np.any(reached):
            state["side"] = np.where(reached, 1 - state["side"], state["side"])
            state["goal"] = np.where(reached[:, None], goal_for(state["side"]), state["goal"])
        p, vel, h, ms = v.position, v.velocity, v.heading, v.max_speed
        forces = [
            _wall_force(v, bounds, 4.0),
            behaviors.obstacle_avoidance(p, vel, h, ms, v.radius, centers, radii, min_box),
            behaviors.seek(p, vel, state["goal"], ms),
        ]
        v.step(combine.prioritized(forces, [1.0, 2.0, 0.5], v.max_force), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        p, h = v.position, v.heading
        length = box_length()
        local = vecmath.point_to_local(centers, p[:, None, :], h[:, None, :])  # (n, M, 2)
        grown = radii + v.radius[:, None]
        seen = (
            (local[..., 0] + grown >= 0)
            & (local[..., 0] - grown <= length[:, None])
            & (np.abs(local[..., 1]) < grown)
        )
        detected = np.any(seen, axis=0)
        r.circle(centers[~detected], radii[~detected], C["obstacle"], 0)
        if np.any(detected):
            r.circle(centers[detected], radii[detected], C["obstacle"], 0)
            r.circle(centers[detected], radii[detected], C["warning"], 2)
        _trails(r, trails)
        for k in range(n):
            corners = np.array(
                [[0.0, v.radius[k]], [length[k], v.radius[k]],
                 [length[k], -v.radius[k]], [0.0, -v.radius[k]]]
            )  # fmt: skip
            color = C["warning"] if np.any(seen[k]) else C["debug"]
            r.polyline(vecmath.point_to_world(corners, p[k], h[k]), color, closed=True)
        for g in state["goal"]:
            _cross(r, g, 0.5, C["target"])
        r.vehicles(p, h, v.radius, C["agent"])

    return Scene(
        "obstacle-avoidance",
        "boxes: detection boxes (red when an obstacle is inside); crosses: goals",
        bounds,
        step,
        draw,
        v,
        {"obstacle_center": centers, "obstacle_radius": radii, "state": state},
    )


def scene_wall_avoidance(rng: np.random.Generator) -> Scene:
    """Fast wanderers kept inside the box by Buckland's three feelers."""
    bounds: Bounds = (0.0, 0.0, 40.0, 30.0)
    n = 6
    feeler = 5.0
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 6.0),
        velocity=_random_velocity(rng, n, 6.0),
        max_speed=9.0,
        max_force=16.0,
        radius=0.7,
    )
    angle = rng.uniform(-0.5, 0.5, size=n)
    state = {"wt": 1.2 * np.stack((np.cos(angle), np.sin(angle)), axis=1)}
    trails = Trails(45)
    trails.reset(v.position)

    def step() -> None:
        wf, state["wt"] = behaviors.wander(
            v.position, v.velocity, v.heading, v.max_speed, state["wt"],
            radius=1.2, distance=4.0, jitter=6.0, dt=DT, rng=rng,
        )  # fmt: skip
        forces = [_wall_force(v, bounds, feeler), wf]
        v.step(combine.prioritized(forces, [1.0, 1.0], v.max_force), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        _trails(r, trails)
        tips = behaviors.feelers(v.position, v.heading, feeler).reshape(-1, 2)
        xmin, ymin, xmax, ymax = bounds
        out = (tips[:, 0] < xmin) | (tips[:, 0] > xmax) | (tips[:, 1] < ymin) | (tips[:, 1] > ymax)
        starts = np.repeat(v.position, 3, axis=0)
        r.line(starts[~out], tips[~out], C["debug"])
        if np.any(out):
            r.line(starts[out], tips[out], C["warning"], 2)
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "wall-avoidance",
        "feelers: violet inside, red when poking through a wall",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_path_following(rng: np.random.Generator) -> Scene:
    """Vehicles of different top speeds follow a closed path (follow_path, loop=True)."""
    bounds: Bounds = (0.0, 0.0, 60.0, 40.0)
    m = 11
    theta = np.linspace(0.0, 2.0 * np.pi, m, endpoint=False) + rng.uniform(-0.15, 0.15, m)
    scale = rng.uniform(0.65, 1.0, size=m)
    path = np.stack((30.0 + 25.0 * scale * np.cos(theta), 20.0 + 16.0 * scale * np.sin(theta)), 1)
    n = 5
    prediction, look_ahead = 0.5, 3.0
    start = path[rng.choice(m, size=n, replace=False)] + rng.uniform(-4.0, 4.0, size=(n, 2))
    v = Vehicles.create(
        position=start,
        max_speed=np.linspace(4.0, 8.0, n),
        max_force=10.0,
        radius=0.7,
    )
    trails = Trails(40)
    trails.reset(v.position)

    def step() -> None:
        force = behaviors.follow_path(
            v.position, v.velocity, v.max_speed, path, prediction, look_ahead, loop=True
        )
        v.step(force, DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        r.polyline(path, C["path"], 3, closed=True)
        r.point(path, C["path"], 4)
        _trails(r, trails)
        future = v.position + v.velocity * prediction
        aim = behaviors.path_target(v.position, v.velocity, path, prediction, look_ahead, True)
        r.line(v.position, future, C["velocity"])
        r.line(future, aim, C["debug"])
        r.point(future, C["velocity"], 2)
        r.point(aim, C["debug"], 3)
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "path-following",
        "white: predicted position in 0.5 s; violet: target 3 m further along the path",
        bounds,
        step,
        draw,
        v,
        {"path": path},
    )


def _circuit(t: float, center: Array, radii: Array, rates: Array, phase: Array) -> Array:
    """A point on a Lissajous circuit at time ``t`` s (for scripted movers)."""
    return center + radii * np.sin(rates * t + phase)


def scene_interpose(rng: np.random.Generator) -> Scene:
    """A bodyguard interposes between two agents circling the box: it arrives at their
    midpoint predicted as far ahead as it takes to reach today's midpoint."""
    bounds: Bounds = (0.0, 0.0, 50.0, 36.0)
    center = np.array([25.0, 18.0])
    phase = rng.uniform(0.0, 2.0 * np.pi, size=(2, 2))
    radii = np.array([[19.0, 12.0], [17.0, 13.0]])
    rates = np.array([[0.35, 0.5], [0.45, 0.3]])
    v = Vehicles.create(
        position=center + rng.uniform(-3.0, 3.0, size=(1, 2)),
        max_speed=9.0,
        max_force=14.0,
        radius=0.8,
    )
    state = {"t": 0.0}

    def movers(t: float) -> tuple[Array, Array]:
        pos = _circuit(t, center, radii, rates, phase)
        vel = radii * rates * np.cos(rates * t + phase)
        return pos, vel

    trails = Trails(45)
    trails.reset(np.vstack((v.position, movers(0.0)[0])))

    def step() -> None:
        state["t"] += DT
        (a, b), (va, vb) = movers(state["t"])
        force = behaviors.interpose(
            v.position, v.velocity, v.max_speed, a, va, b, vb, slowing_radius=3.0
        )
        v.step(force, DT)
        trails.push(np.vstack((v.position, movers(state["t"])[0])))

    def draw(r: Renderer) -> None:
        (a, b), (va, vb) = movers(state["t"])
        r.polyline(trails.get(1), C["trail"])
        r.polyline(trails.get(2), C["trail"])
        r.polyline(trails.get(0), C["agent"])
        r.line(a, b, C["debug"])
        _cross(r, 0.5 * (a + b), 0.6, C["debug"])
        heading = vecmath.normalize(np.stack((va, vb)))
        r.vehicles(np.stack((a, b)), heading, 0.8, C["evader"])
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "interpose",
        "yellow: bodyguard; violet: the line between the two blue agents, its midpoint",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_hide(rng: np.random.Generator) -> Scene:
    """Three vehicles hide behind obstacles from a hunter that circles the field: each
    arrives at the nearest spot behind an obstacle as seen from the hunter."""
    bounds: Bounds = (0.0, 0.0, 50.0, 36.0)
    centers, radii = _place_obstacles(rng, 5, (8.0, 6.0, 42.0, 30.0), 5.0)
    center = np.array([25.0, 18.0])
    phase = rng.uniform(0.0, 2.0 * np.pi, size=2)
    v = Vehicles.create(
        position=_uniform_points(rng, 3, bounds, 4.0),
        max_speed=7.0,
        max_force=12.0,
        radius=0.7,
    )
    state = {"t": 0.0}

    def hunter(t: float) -> tuple[Array, Array]:
        radii_h, rates = np.array([20.0, 14.0]), np.array([0.3, 0.45])
        pos = _circuit(t, center, radii_h, rates, phase)
        return pos, radii_h * rates * np.cos(rates * t + phase)

    trails = Trails(45)
    trails.reset(v.position)

    def step() -> None:
        state["t"] += DT
        hp, hv = hunter(state["t"])
        force = behaviors.hide(
            v.position, v.velocity, v.max_speed, hp, hv, centers, radii, slowing_radius=3.0
        )
        walls = _wall_force(v, bounds, 3.0)
        v.step(combine.prioritized([walls, force], [1.0, 1.0], v.max_force), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        hp, hv = hunter(state["t"])
        r.circle(centers, radii, C["obstacle"], 0)
        spots = behaviors.hiding_spots(hp, centers, radii, 1.0)
        for spot in spots:
            _cross(r, spot, 0.5, C["debug"])
        _trails(r, trails)
        r.vehicles(hp[None], vecmath.normalize(hv)[None], 0.9, C["pursuer"])
        r.vehicles(v.position, v.heading, v.radius, C["evader"])

    return Scene(
        "hide",
        "red: hunter; violet crosses: hiding spots behind each obstacle; blue: hiders",
        bounds,
        step,
        draw,
        v,
        {"obstacle_center": centers, "obstacle_radius": radii, "state": state},
    )


def scene_offset_pursuit(rng: np.random.Generator) -> Scene:
    """Four followers keep a V formation behind a leader that follows a closed path, each
    arriving at its offset point in the leader's frame, predicted ahead."""
    bounds: Bounds = (0.0, 0.0, 60.0, 45.0)
    offsets = np.array([[-3.0, 3.0], [-3.0, -3.0], [-6.0, 6.0], [-6.0, -6.0]])
    theta = np.linspace(0.0, 2.0 * np.pi, 24, endpoint=False) + rng.uniform(0.0, 2.0 * np.pi)
    path = np.stack((30.0 + 18.0 * np.cos(theta), 22.5 + 12.0 * np.sin(theta)), axis=1)
    start = path[0]
    v = Vehicles.create(
        position=np.vstack((start, start + rng.uniform(-8.0, 8.0, size=(4, 2)))),
        max_speed=[4.0, 7.0, 7.0, 7.0, 7.0],
        max_force=[6.0, 12.0, 12.0, 12.0, 12.0],
        radius=0.7,
    )
    trails = Trails(50)
    trails.reset(v.position)

    def step() -> None:
        p, vel, h, ms = v.position, v.velocity, v.heading, v.max_speed
        lead = behaviors.follow_path(p[0], vel[0], ms[0], path, 0.5, 3.0, loop=True)
        follow = behaviors.offset_pursuit(
            p[1:], vel[1:], ms[1:], p[0], vel[0], h[0], offsets, slowing_radius=2.0
        )
        v.step(np.vstack((lead, follow)), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        r.polyline(path, C["path"], 1, closed=True)
        _trails(r, trails)
        spots = vecmath.point_to_world(offsets, v.position[0], v.heading[0])
        r.line(np.broadcast_to(v.position[0], spots.shape), spots, C["debug"])
        for spot in spots:
            _cross(r, spot, 0.4, C["debug"])
        colors = [C["agent"]] + [C["boid"]] * 4
        r.vehicles(v.position, v.heading, v.radius, colors)

    return Scene(
        "offset-pursuit",
        "yellow: leader on its path; violet crosses: the followers' offsets in its frame",
        bounds,
        step,
        draw,
        v,
        {"offsets": offsets, "path": path},
    )


def scene_collision_avoidance(rng: np.random.Generator) -> Scene:
    """Twelve vehicles cross a circle to the opposite side; unaligned collision avoidance
    (prioritized above seek) steers each away from where a neighbour will be."""
    bounds: Bounds = (0.0, 0.0, 40.0, 40.0)
    n, horizon = 12, 1.5
    angle = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False) + rng.uniform(-0.1, 0.1, n)
    ring = np.stack((np.cos(angle), np.sin(angle)), axis=1)
    center = np.array([20.0, 20.0])
    v = Vehicles.create(
        position=center + 16.0 * ring,
        velocity=-2.0 * ring,
        max_speed=5.0,
        max_force=10.0,
        radius=0.8,
    )
    state = {"goal": center - 16.0 * ring}
    trails = Trails(80)
    trails.reset(v.position)

    def step() -> None:
        reached = vecmath.length(state["goal"] - v.position) < 1.0
        state["goal"] = np.where(reached[:, None], 2.0 * center - state["goal"], state["goal"])
        nb = find_neighbors(v.position, 2.0 * 5.0 * horizon)
        avoid = behaviors.unaligned_collision_avoidance(
            v.position, v.velocity, v.heading, v.max_speed, v.radius, nb, horizon
        )
        go = behaviors.arrive(v.position, v.velocity, state["goal"], v.max_speed, 3.0)
        v.step(combine.prioritized([avoid, go], [2.0, 1.0], v.max_force), DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        _trails(r, trails)
        r.line(v.position, v.position + horizon * v.velocity, C["debug"])
        for g in state["goal"]:
            _cross(r, g, 0.4, C["target"])
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "collision-avoidance",
        f"violet: where each vehicle will be in {horizon:g} s; crosses: goals",
        bounds,
        step,
        draw,
        v,
        state,
    )


def scene_flow_field(rng: np.random.Generator) -> Scene:
    """Ten vehicles follow a vortex flow field (arrows), sampled a little ahead of each."""
    bounds: Bounds = (0.0, 0.0, 50.0, 40.0)
    center, orbit = np.array([25.0, 20.0]), 12.0
    n = 10
    v = Vehicles.create(
        position=_uniform_points(rng, n, bounds, 4.0),
        max_speed=6.0,
        max_force=8.0,
        radius=0.7,
    )
    xs, ys = np.meshgrid(np.arange(2.5, 50.0, 5.0), np.arange(2.5, 40.0, 5.0))
    grid = np.stack((xs.ravel(), ys.ravel()), axis=1)
    arrows = 1.6 * behaviors.vortex_field(grid, center, orbit)
    trails = Trails(60)
    trails.reset(v.position)

    def field(points: Array) -> Array:
        return behaviors.vortex_field(points, center, orbit)

    def step() -> None:
        force = behaviors.flow_field_following(
            v.position, v.velocity, v.max_speed, field, prediction_time=0.5
        )
        v.step(force, DT)
        trails.push(v.position)

    def draw(r: Renderer) -> None:
        r.line(grid, grid + arrows, C["trail"])
        r.point(grid + arrows, C["trail"], 2)
        r.circle(center, orbit, C["path"])
        _trails(r, trails, C["debug"])
        r.vehicles(v.position, v.heading, v.radius, C["agent"])

    return Scene(
        "flow-field",
        f"grey: the vortex field; green: its preferred orbit ({orbit:g} m)",
        bounds,
        step,
        draw,
        v,
        {"center": center, "orbit": orbit},
    )


SCENES: dict[str, Callable[[np.random.Generator], Scene]] = {
    "seek": scene_seek,
    "flee": scene_flee,
    "arrive": scene_arrive,
    "wander": scene_wander,
    "pursuit-evade": scene_pursuit_evade,
    "flocking": scene_flocking,
    "obstacle-avoidance": scene_obstacle_avoidance,
    "wall-avoidance": scene_wall_avoidance,
    "path-following": scene_path_following,
    "interpose": scene_interpose,
    "hide": scene_hide,
    "offset-pursuit": scene_offset_pursuit,
    "collision-avoidance": scene_collision_avoidance,
    "flow-field": scene_flow_field,
    "herding": scene_herding,
}

#: Names accepted by :func:`render_behavior` and the command line.
BEHAVIORS: tuple[str, ...] = tuple(SCENES)

#: Each behavior of :mod:`steer_env.behaviors` and the scene that shows it (the still
#: ``<scene>.png`` that ``--stills`` writes is its picture on the library page).
BEHAVIOR_SCENES: dict[str, str] = {
    "seek": "seek",
    "flee": "flee",
    "arrive": "arrive",
    "pursuit": "pursuit-evade",
    "evade": "pursuit-evade",
    "wander": "wander",
    "separation": "flocking",
    "alignment": "flocking",
    "cohesion": "flocking",
    "wall_avoidance": "wall-avoidance",
    "obstacle_avoidance": "obstacle-avoidance",
    "interpose": "interpose",
    "hide": "hide",
    "offset_pursuit": "offset-pursuit",
    "follow_path": "path-following",
    "unaligned_collision_avoidance": "collision-avoidance",
    "flow_field_following": "flow-field",
    "shepherd_target": "herding",
}

#: Simulation steps before a scene's still is taken (``--stills`` without ``--steps``).
STILL_STEPS: dict[str, int] = {name: 150 for name in SCENES} | {
    "arrive": 60,
    "collision-avoidance": 75,
    "pursuit-evade": 90,
    "seek": 50,
}
#: Colours of a still's palette: the scenes draw few colours, so a PNG stays small.
STILL_COLORS = 64


# --- running
def _font(r: Renderer) -> int:
    return max(11, r.width // 32)


def _check_args(name: str, steps: int, seed: int) -> None:
    if name not in SCENES:
        raise ValueError(f"unknown behavior {name!r}; choose from {', '.join(BEHAVIORS)}")
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")


def make_scene(name: str, seed: int) -> Scene:
    """Build scene ``name`` with ``numpy.random.default_rng(seed)``."""
    _check_args(name, 1, seed)
    return SCENES[name](np.random.default_rng(seed))


def _draw_frame(scene: Scene, r: Renderer, step: int) -> None:
    r.begin_frame()
    scene.draw(r)
    size = _font(r)
    r.text(f"{scene.title}   t = {step * DT:5.2f} s", (6, 5), size_px=size, background=HUD_BOX)
    r.text(scene.caption, (6, r.height - size - 3), size_px=size, background=HUD_BOX)


def iter_frames(
    name: str,
    steps: int,
    seed: int,
    size: int = 480,
    render_mode: str = "rgb_array",
    fps: float = 30,
) -> Iterator[np.ndarray | None]:
    """Step scene ``name`` ``steps`` times, yielding one frame after each step: an
    ``(H, W, 3)`` uint8 array in ``"rgb_array"`` mode, None in ``"human"`` mode (where the
    iteration also stops when the window is closed). ``size`` is the frame width in px."""
    _check_args(name, steps, seed)
    scene = make_scene(name, seed)
    r = Renderer(scene.bounds, size, render_mode, fps, title=f"steer-env gallery: {name}")
    try:
        for k in range(1, steps + 1):
            scene.step()
            _draw_frame(scene, r, k)
            yield r.finish()
            if r.quit_requested:
                break
    finally:
        r.close()


def render_still(name: str, steps: int, seed: int, size: int = 320) -> np.ndarray:
    """Scene ``name`` after ``steps`` steps, drawn without the title and caption lines: one
    ``(H, W, 3)`` uint8 frame (``W = size``), the behavior's picture in the docs."""
    _check_args(name, steps, seed)
    scene = make_scene(name, seed)
    for _ in range(steps):
        scene.step()
    r = Renderer(scene.bounds, size, "rgb_array")
    try:
        r.begin_frame()
        scene.draw(r)
        return r.finish()
    finally:
        r.close()


def write_stills(
    folder: str | os.PathLike[str], seed: int, size: int, steps: int | None
) -> list[str]:
    """Write ``<scene>.png`` for every scene into ``folder`` (created when missing), each
    after ``steps`` steps (default :data:`STILL_STEPS`), quantized to
    :data:`STILL_COLORS` colours; returns the paths written."""
    from PIL import Image

    from steer_env.cli import atomic_output

    os.makedirs(folder, exist_ok=True)
    written = []
    for name in SCENES:
        frame = render_still(name, steps or STILL_STEPS[name], seed, size)
        image = Image.fromarray(frame).quantize(STILL_COLORS, method=Image.Quantize.MEDIANCUT)
        path = os.path.join(folder, f"{name}.png")
        with atomic_output(path) as tmp:
            image.save(tmp, format="PNG", optimize=True)
        written.append(path)
    return written


def render_behavior(name: str, steps: int, seed: int, size: int = 480) -> list[np.ndarray]:
    """Render ``steps`` frames of scene ``name`` headless: a list of ``(H, W, 3)`` uint8
    arrays (``W = size``), one after each simulation step."""
    return [f for f in iter_frames(name, steps, seed, size) if f is not None]


# --- command line
OUTPUT_EXTENSIONS = ANIMATION_EXTENSIONS
PROG = "python -m steer_env.demos.gallery"


def _parser() -> argparse.ArgumentParser:
    p = cli.OneLineParser(
        prog=PROG,
        description="Show a steering behaviour in a window, or render it to a GIF/MP4/PNG.",
    )
    p.add_argument("behavior", nargs="?", metavar="BEHAVIOR", help=", ".join(BEHAVIORS))
    p.add_argument(
        "--out",
        metavar="FILE",
        help="write FILE (.gif, .mp4, or .png for the last frame) instead of opening a window",
    )
    p.add_argument(
        "--steps",
        type=cli.int_in(1, 100_000),
        default=None,
        help="default 300 (--stills: each scene's own, 60 to 150)",
    )
    cli.add_seed(p, 0, "seed of the scene")
    cli.add_fps(p, 30)
    cli.add_width(p, 480)
    cli.add_alias(p, "--size", "--width")
    p.add_argument("--list", action="store_true", help="list the behaviors and exit")
    p.add_argument(
        "--stills",
        metavar="DIR",
        help="write one PNG per scene into DIR (no title or caption; --width default 320)",
    )
    p.set_defaults(width=None)  # 480, or 320 for --stills
    return p


def _fail(message: str, status: int = 1) -> int:
    return cli.fail(PROG, message, status)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.list:
        print("\n".join(BEHAVIORS))
        return 0
    if args.stills is not None:
        if args.behavior is not None or args.out is not None:
            return _fail("--stills writes every scene: give no BEHAVIOR and no --out", 2)
        if os.path.exists(args.stills) and not os.path.isdir(args.stills):
            return _fail(f"--stills {args.stills!r} is not a directory", 2)
        try:
            paths = write_stills(args.stills, args.seed, args.width or 320, args.steps)
        except PygameNotInstalled as exc:
            return _fail(str(exc))
        except (OSError, RuntimeError, ValueError) as exc:
            return _fail(f"{type(exc).__name__}: {exc}")
        print("\n".join(f"wrote {p}" for p in paths))
        return 0
    args.steps = 300 if args.steps is None else args.steps
    args.width = 480 if args.width is None else args.width
    if args.behavior is None:
        return _fail(f"BEHAVIOR is required; choose from {', '.join(BEHAVIORS)}", 2)
    if args.behavior not in SCENES:
        return _fail(f"unknown behavior {args.behavior!r}; choose from {', '.join(BEHAVIORS)}", 2)
    try:
        if args.out is None:
            for _ in iter_frames(
                args.behavior, args.steps, args.seed, args.width, "human", args.fps
            ):
                pass
            return 0
        check_animation_path(args.out)
        # Missing folders are created, as by every command that writes a file here.
        if os.path.isdir(args.out):
            return _fail(f"--out {args.out!r} is a directory", 2)
        write_animation(
            args.out, iter_frames(args.behavior, args.steps, args.seed, args.width), args.fps
        )
    except AnimationOutputError as exc:
        return _fail(str(exc), 2)
    except PygameNotInstalled as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except (OSError, RuntimeError, ValueError) as exc:  # pygame.error is a RuntimeError
        return _fail(f"{type(exc).__name__}: {exc}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
