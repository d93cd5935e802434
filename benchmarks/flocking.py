"""The ``flocking`` section of ``python -m benchmarks``: flocking_v0's native batch against
VMAS ``flocking`` with the same number of agents, and its cost per boid-step as the flock
grows.

* The native batch (``flocking_v0.vector_env(E, n_boids=16)``: every boid learned, one
  scripted predator, walled arena, no obstacles; catches, swept collisions, the flock's
  groups and metrics, rewards, observations and autoresets in one compiled call per step)
  against VMAS ``flocking`` on the CPU (batched torch) with ``n_agents=16`` at the same
  ``E`` (``--flocking-n-envs``), its defaults otherwise (5 obstacles, 12 lidar rays per
  agent, collision physics, 5 physics sub-steps per env-step, never done). The two are
  interleaved repeat by repeat (ABBA), with uniform random actions in [-1, 1] per agent
  drawn before the timed loops.
* The native batch at :data:`SCALE_BOIDS` boids per environment, :data:`SCALE_ENVS`
  environments each: the time per boid-step of the largest flock over the smallest's says
  how the per-boid work (neighbour searches of the observation, the collisions and the
  groups) grows with the flock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import steps_for
from benchmarks.team import Prepared, _loop, _uniform, interleave, prepare_vmas_scenario

SECTION = "flocking"
#: Boids per environment in the comparison with VMAS (VMAS's ``n_agents``).
BOIDS = 16
#: Flock sizes of the scale rows.
SCALE_BOIDS = (16, 64, 256)
#: Environments of each scale row.
SCALE_ENVS = 64
ROW_VMAS = f"VMAS flocking (CPU, torch), {BOIDS} agents"


def row_batch(n_boids: int) -> str:
    """The native batch's row with ``n_boids`` boids per environment."""
    return f"flocking_v0 native batch (vector_env), {n_boids} boids"


def prepare_batch(num_envs: int, n_boids: int, target_s: float) -> Prepared:
    """``flocking_v0.vector_env(num_envs, n_boids=n_boids)``, every boid learned: actions
    ``(E, n_boids, 2)``, autoresets inside the timed loop."""
    from steer_env.envs import flocking_v0

    venv = flocking_v0.vector_env(num_envs, n_boids=n_boids)
    venv.reset(seed=0)
    k_agents = venv.n_agents
    rng = np.random.default_rng(0)
    _loop(venv.step, _uniform(rng, (2, num_envs, k_agents, 2)))  # load the kernel
    per_step = _loop(venv.step, _uniform(rng, (3, num_envs, k_agents, 2))) / 3
    k = steps_for(per_step, target_s, 3, 20_000)
    actions = _uniform(rng, (k, num_envs, k_agents, 2))
    predators = venv.config.n_predators
    return Prepared(
        row_batch(n_boids),
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / _loop(venv.step, actions),
        agents=venv.batch.n_vehicles,
        substeps=1,
        note=f"{k} steps/repeat; {n_boids} learned boids, {predators} scripted predator, "
        "no obstacles",
        close=venv.close,
    )


def run(num_envs: int, repeats: int, target_s: float, add: Callable[[Any], None]) -> None:
    """The native batch beside VMAS at ``num_envs`` envs, interleaved; then the scale rows,
    interleaved with each other."""
    pair = [
        prepare_batch(num_envs, BOIDS, target_s),
        prepare_vmas_scenario("flocking", ROW_VMAS, num_envs, target_s, n_agents=BOIDS),
    ]
    for row in interleave(pair, repeats):
        row.section = SECTION
        add(row)
    scale = [prepare_batch(SCALE_ENVS, n, target_s) for n in SCALE_BOIDS]
    for row in interleave(scale, repeats):
        row.section = SECTION
        add(row)
