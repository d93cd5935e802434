"""The ``herding`` section of ``python -m benchmarks``: the herding task against VMAS.

* the native batch (``gym.make_vec("steer_env/Herding-v0", E)``, one compiled call per
  step: 1 learned dog and 25 scripted Strömbom sheep per env, each sheep running
  separation, flight, topological cohesion with its 15 nearest and wander; pen test,
  rewards, outcome, observations, autoreset) against VMAS ``flocking`` on the CPU (its
  defaults: 4 agents driven by the actions, 5 obstacles, 12 lidar rays, collision physics,
  10 sub-steps per env-step), ``E`` envs each, interleaved repeat by repeat. The ratio is
  in vehicle-steps per second (env-steps/s times the vehicles stepped: 26 ours, 4 VMAS's);
* the single env through ``gym.make`` and the PettingZoo ``herding_v0.parallel_env``
  (resets included), reported beside it;
* the scale: the batch of 256 envs with 25 and with 100 sheep each, interleaved; the ratio
  is the time per sheep-step at 100 sheep over that at 25.

Strömbom's dog acts in the batch (see :func:`prepare_batch`); the other rows take uniform
random actions in [-1, 1], drawn before the timed loops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import Missing, steps_for
from benchmarks.ours import timed_steps
from benchmarks.team import (
    Prepared,
    _prepare_parallel,
    _uniform,
    interleave,
    prepare_vmas_scenario,
)

SECTION = "herding"
ROW_BATCH = "Herding native vector env (25 sheep)"
ROW_VMAS = "VMAS flocking (CPU, torch)"
ROW_SINGLE = "Herding-v0 gym.make (25 sheep)"
ROW_PARALLEL = "herding_v0 parallel_env (2 dogs, 25 sheep)"
#: The scale rows: the batch of SCALE_ENVS envs at each flock size, Strömbom's dog acting.
SCALE_SHEEP = (25, 100)
SCALE_ENVS = 256


def row_scale(n_sheep: int) -> str:
    return f"Herding scale: {n_sheep} sheep per env"


#: Simulated seconds Strömbom's dog plays, untimed, before the batch's timed steps: by then
#: it works the flock (from the start it is 20 m away and most sheep are out of its range).
WARMUP_S = 60.0


def prepare_batch(
    num_envs: int, target_s: float, n_sheep: int = 25, name: str = ROW_BATCH
) -> Prepared:
    """The native batch with Strömbom's dog acting: after :data:`WARMUP_S` untimed, each
    repeat continues the episodes and times only the ``step`` calls (the dog's numpy
    ``predict`` runs between them, untimed). A sheep computes its cohesion only while a dog
    is within its detection range, so random actions, which leave the dog away from the
    flock, would time a lighter step than training sees."""
    import time

    import gymnasium as gym

    import steer_env  # noqa: F401
    from steer_env.tasks.herding import HerdingConfig, HerdingDog

    cfg = HerdingConfig(n_sheep=n_sheep)
    venv = gym.make_vec(
        "steer_env/Herding-v0",
        num_envs,
        vectorization_mode="vector_entry_point",
        n_sheep=n_sheep,
    )
    vehicles = venv.unwrapped.batch.n_vehicles
    dog = HerdingDog("strombom", cfg)
    obs, _ = venv.reset(seed=0)

    def play(k: int) -> float:
        nonlocal obs
        spent = 0.0
        for _ in range(k):
            a, _ = dog.predict(obs, deterministic=True)
            t0 = time.perf_counter()
            obs, *_ = venv.step(a)
            spent += time.perf_counter() - t0
        return spent

    warmup = round(WARMUP_S / cfg.dt)
    per_step = play(warmup) / warmup
    k = steps_for(per_step, target_s, 3, 20_000)
    return Prepared(
        name,
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / play(k),
        agents=vehicles,
        substeps=1,
        note=f"{k} steps/repeat of Strömbom's dog after {warmup} untimed; "
        f"1 dog + {vehicles - 1} scripted sheep",
        close=venv.close,
    )


def prepare_vmas(num_envs: int, target_s: float) -> Prepared | Missing:
    """VMAS ``flocking`` on the CPU with its defaults."""
    return prepare_vmas_scenario("flocking", ROW_VMAS, num_envs, target_s)


def prepare_single(target_s: float) -> Prepared:
    import gymnasium as gym

    import steer_env  # noqa: F401

    env = gym.make("steer_env/Herding-v0")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    run = timed_steps(env)
    run(_uniform(rng, (20, 2)))
    per_step = run(_uniform(rng, (200, 2))) / 200
    k = steps_for(per_step, target_s, 100, 200_000)
    actions = _uniform(rng, (k, 2))
    return Prepared(
        ROW_SINGLE,
        1,
        "env-steps/s",
        lambda r: k / run(actions),
        agents=env.unwrapped.batch.n_vehicles,
        substeps=1,
        note=f"{k} steps/repeat; resets included",
        close=env.close,
    )


def prepare_parallel(target_s: float) -> Prepared:
    from steer_env.envs import herding_v0

    p = _prepare_parallel(
        herding_v0.parallel_env(n_dogs=2), ROW_PARALLEL, target_s, "resets included"
    )
    p.agents = 27
    return p


def run(num_envs: int, repeats: int, target_s: float, add: Callable[[Any], None]) -> None:
    """Measure the batch against VMAS, then the single and parallel envs, then the scale."""
    pairs = [
        [prepare_batch(num_envs, target_s), prepare_vmas(num_envs, target_s)],
        [prepare_single(target_s)],
        [prepare_parallel(target_s)],
        [prepare_batch(SCALE_ENVS, target_s, n, row_scale(n)) for n in SCALE_SHEEP],
    ]
    for pair in pairs:
        for row in interleave(pair, repeats):
            row.section = SECTION
            add(row)
