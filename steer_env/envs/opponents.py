"""Scripted pursuers and evaders built from the classic behaviours.

Pure functions over the batched state of ``E`` environments with ``n`` vehicles each
(arrays ``(E, n, 2)``; per-vehicle limits ``(n,)``). The environments use them for their
scripted opponents, and :mod:`agents.scripted` uses the very same functions for the classic
learned-agent baselines, so the comparison is like for like.

* **Evader**: Buckland's prioritized running sum of wall avoidance, evade (threat = the
  nearest pursuer, ignored beyond ``threat_range``) and, only while unthreatened, wander.
* **Pursuer**: prioritized running sum of wall avoidance, separation from the other
  pursuers, and pursuit of the nearest evader.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from steer_env import behaviors, combine, vecmath
from steer_env.envs.config import TaskConfig
from steer_env.neighbors import find_neighbors

Array = NDArray[np.float64]
Index = NDArray[np.intp]


def arena_bounds(cfg: TaskConfig) -> tuple[float, float, float, float]:
    """``(xmin, ymin, xmax, ymax)`` of the arena, m."""
    h = cfg.half_size
    return (-h, -h, h, h)


def nearest(position: Array, source: Index, target: Index) -> tuple[Index, Array]:
    """For every source vehicle, the index (into ``target``) of the nearest target vehicle and
    its distance: ``(E, len(source))`` each."""
    diff = position[:, target][:, None, :, :] - position[:, source][:, :, None, :]
    dist = vecmath.length(diff)
    k = np.argmin(dist, axis=-1)
    return k, np.take_along_axis(dist, k[..., None], axis=-1)[..., 0]


def pursuer_forces(
    position: Array,
    velocity: Array,
    heading: Array,
    max_speed: Array,
    max_force: Array,
    pursuers: Index,
    evaders: Index,
    cfg: TaskConfig,
) -> Array:
    """Steering forces ``(E, len(pursuers), 2)`` of scripted pursuers."""
    p = position[:, pursuers]
    v = velocity[:, pursuers]
    h = heading[:, pursuers]
    ms = max_speed[pursuers]
    k, _ = nearest(position, pursuers, evaders)
    target = evaders[k]
    tp = np.take_along_axis(position, target[..., None], axis=1)
    tv = np.take_along_axis(velocity, target[..., None], axis=1)
    wall = behaviors.wall_avoidance(p, v, h, ms, arena_bounds(cfg), cfg.feeler_length)
    chase = behaviors.pursuit(p, v, ms, tp, tv, cfg.max_prediction_time)
    forces = [wall, chase]
    weights = [cfg.wall_weight, cfg.pursuit_weight]
    if len(pursuers) > 1:
        nbrs = find_neighbors(p, cfg.separation_radius, method="dense")
        sep = behaviors.separation(v, np.broadcast_to(ms, p.shape[:-1]), nbrs)
        forces.insert(1, sep.reshape(p.shape))
        weights.insert(1, cfg.separation_weight)
    return combine.prioritized(forces, weights, max_force[pursuers])


def evader_forces(
    position: Array,
    velocity: Array,
    heading: Array,
    max_speed: Array,
    max_force: Array,
    wander_target: Array,
    noise: Array,
    evaders: Index,
    pursuers: Index,
    cfg: TaskConfig,
) -> tuple[Array, Array]:
    """Steering forces ``(E, len(evaders), 2)`` of scripted evaders and their new wander
    targets. ``wander_target`` and ``noise`` (uniform in ``[-1, 1]``) are
    ``(E, len(evaders), 2)``."""
    p = position[:, evaders]
    v = velocity[:, evaders]
    h = heading[:, evaders]
    ms = max_speed[evaders]
    k, dist = nearest(position, evaders, pursuers)
    threat = pursuers[k]
    tp = np.take_along_axis(position, threat[..., None], axis=1)
    tv = np.take_along_axis(velocity, threat[..., None], axis=1)
    threatened = dist <= cfg.threat_range
    wall = behaviors.wall_avoidance(p, v, h, ms, arena_bounds(cfg), cfg.feeler_length)
    escape = behaviors.evade(p, v, ms, tp, tv, cfg.threat_range, cfg.max_prediction_time)
    roam, new_target = behaviors.wander(
        p,
        v,
        h,
        ms,
        wander_target,
        radius=cfg.wander_radius,
        distance=cfg.wander_distance,
        jitter=cfg.wander_jitter,
        dt=cfg.dt,
        noise=noise,
    )
    roam = np.where(threatened[..., None], 0.0, roam)
    force = combine.prioritized(
        [wall, escape, roam],
        [cfg.wall_weight, cfg.evade_weight, cfg.wander_weight],
        max_force[evaders],
    )
    return force, new_target
