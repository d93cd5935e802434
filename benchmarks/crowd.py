"""The ``crowd`` section of ``python -m benchmarks``: Crowd-v0's native vector env against
Gymnasium's ``SyncVectorEnv`` of the same env.

For each crowd size of :data:`CROWD_SIZES`, ``gym.make_vec("steer_env/Crowd-v0", E,
vectorization_mode=...)`` at ``--crowd-n-envs`` envs: the native batch (one compiled call
per step: the robot, every human's collision avoidance, separation and arrive, the swept
collision test, the metrics, the observations, autoresets) and ``"sync"`` (one Python
single env per environment), interleaved repeat by repeat, uniform random actions in [-1, 1]
drawn before the timed loops. Episodes end often (a random robot collides within seconds),
so the autoresets, which place a new crowd, are part of the timed loop.

CrowdNav's simulator (``crowd_sim``) and Social-Navigation-PyEnvs are not on PyPI, so no
row measures them: :data:`PEERS_NOT_INSTALLABLE` says so in the results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import Missing, steps_for
from benchmarks.team import Prepared, _loop, _uniform, interleave

SECTION = "crowd"
ENV_ID = "steer_env/Crowd-v0"
#: Humans per env of the measured crowds.
CROWD_SIZES = (5, 20)
#: The crowd simulators of the peers, and why no row measures them.
PEERS_NOT_INSTALLABLE = {
    "CrowdNav crowd_sim": "not on PyPI (installed from its repository only)",
    "Social-Navigation-PyEnvs": "not on PyPI (installed from its repository only)",
}


def row_name(mode: str, n_humans: int) -> str:
    """The row of vectorization ``mode`` (``"native"`` or ``"sync"``) with ``n_humans``."""
    what = "native vector env" if mode == "native" else "SyncVectorEnv"
    return f"Crowd-v0 {what}, {n_humans} humans"


def prepare(mode: str, num_envs: int, n_humans: int, target_s: float) -> Prepared:
    """The vector env of ``mode`` with ``n_humans`` humans, stepped with uniform actions."""
    import gymnasium as gym

    import steer_env  # noqa: F401

    vectorization = "vector_entry_point" if mode == "native" else "sync"
    venv = gym.make_vec(
        ENV_ID, num_envs=num_envs, vectorization_mode=vectorization, n_humans=n_humans
    )
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    _loop(venv.step, _uniform(rng, (2, num_envs, 2)))
    per_step = _loop(venv.step, _uniform(rng, (3, num_envs, 2))) / 3
    k = steps_for(per_step, target_s, 3, 20_000)
    actions = _uniform(rng, (k, num_envs, 2))
    return Prepared(
        row_name(mode, n_humans),
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / _loop(venv.step, actions),
        agents=1 + n_humans,
        substeps=1,
        note=f"{k} steps/repeat; autoresets (new crowds) included",
        close=venv.close,
    )


def run(num_envs: int, repeats: int, target_s: float, add: Callable[[Any], None]) -> None:
    """Each crowd size: the native batch and the SyncVectorEnv, interleaved; then a row per
    peer simulator that cannot be installed."""
    for n_humans in CROWD_SIZES:
        pair = [prepare(mode, num_envs, n_humans, target_s) for mode in ("native", "sync")]
        for row in interleave(pair, repeats):
            row.section = SECTION
            add(row)
    for peer, why in PEERS_NOT_INSTALLABLE.items():
        add(Missing(SECTION, peer, num_envs, why))
