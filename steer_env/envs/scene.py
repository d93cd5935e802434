"""Drawing one pursuit/evasion environment: reads the simulation state, never changes it."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from steer_env import behaviors
from steer_env.envs import opponents
from steer_env.envs.simulation import Simulation

#: Positions kept per vehicle for the trails.
TRAIL_LENGTH = 30


def draw(renderer, sim: Simulation, env: int, trails) -> NDArray[np.uint8] | None:
    """Draw environment ``env`` of ``sim`` with ``renderer`` (a
    :class:`steer_env.rendering.Renderer`) and return its frame (``None`` in human mode).

    Shows the arena, trails, the capture radius around each pursuer, the debug overlays of
    the scripted behaviours (pursuit's predicted intercept point, the evaders' wander circle
    and target and threat range, the pursuers' separation radius) and the vehicles as
    triangles coloured by role, the learned agent outlined.
    """
    from steer_env.rendering import ROLE_COLORS

    cfg = sim.cfg
    pos = sim.position[env]
    vel = sim.velocity[env]
    head = sim.heading[env]
    debug = ROLE_COLORS["debug"]
    renderer.begin_frame()

    for i in range(sim.n_vehicles):
        role = "pursuer" if sim.is_pursuer[i] else "evader"
        renderer.polyline(trails.get(i), ROLE_COLORS[role], width=1)

    for i in sim.pursuers:
        renderer.circle(pos[i], cfg.capture_radius, ROLE_COLORS["pursuer"], width=1)

    scripted_pursuers = [i for i in sim.pursuers if i != Simulation.AGENT]
    scripted_evaders = [i for i in sim.evaders if i != Simulation.AGENT]
    if scripted_pursuers:
        idx = np.asarray(scripted_pursuers)
        k, _ = opponents.nearest(sim.position[env : env + 1], idx, sim.evaders)
        target = sim.evaders[k[0]]
        aim = behaviors.pursuit_target(
            pos[idx],
            vel[idx],
            sim.max_speed[idx],
            pos[target],
            vel[target],
            cfg.max_prediction_time,
        )
        for a, p in zip(aim, pos[idx], strict=True):
            renderer.line(p, a, debug, width=1)
            renderer.point(a, debug, size_px=4)
        if len(idx) > 1:
            for p in pos[idx]:
                renderer.circle(p, cfg.separation_radius, debug, width=1)
    if scripted_evaders:
        idx = np.asarray(scripted_evaders)
        centre = pos[idx] + head[idx] * cfg.wander_distance
        target = behaviors.wander_world_target(
            pos[idx], head[idx], sim.wander_target[env, idx], cfg.wander_distance
        )
        for c, t, p in zip(centre, target, pos[idx], strict=True):
            renderer.circle(c, cfg.wander_radius, debug, width=1)
            renderer.point(t, debug, size_px=4)
            renderer.circle(p, cfg.threat_range, ROLE_COLORS["evader"], width=1)

    colors = [ROLE_COLORS["pursuer"] if p else ROLE_COLORS["evader"] for p in sim.is_pursuer]
    renderer.vehicles(pos, head, sim.radius * 1.6, colors)
    agent = Simulation.AGENT
    renderer.circle(pos[agent], sim.radius[agent] * 2.2, ROLE_COLORS["agent"], width=2)
    renderer.text(f"t = {int(sim.steps[env])}/{cfg.time_limit}", (8, 8))
    return renderer.finish()
