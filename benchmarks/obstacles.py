"""The ``obstacles`` section of ``python -m benchmarks``: what obstacles cost the native
vector env.

For each task of ``--tasks`` (and Herding-v0), ``gym.make_vec(..., vectorization_mode=
"vector_entry_point")`` at ``--obstacle-n-envs`` envs in an empty arena and with
:data:`OBSTACLES` obstacles placed per episode (``n_obstacles``), the two interleaved
repeat by repeat (ABBA) so slow spells of a shared machine fall on both. Autoresets (which
place a new layout) happen inside the timed loop. The envs start together, so most of them
reach the time limit on the same step and reset together: a repeat steps a whole number of
episodes' worth of steps, at least one however long that takes, so every repeat holds the
same share of those resets (156 steps to a repeat with a reset every 100 would put one
burst of resets in some repeats and two in others). The ratio of the two is the cost: every
vehicle's contact test against every obstacle, the obstacle slots of the observation, the
scripted side's detection box and the placement of each new layout. ``--quick`` keeps a
repeat shorter than an episode when its time is: such a repeat times no reset, so it
leaves the placement out, and its ratio is printed but not judged against the target
(:func:`times_resets`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.common import steps_for
from benchmarks.team import Prepared, _loop, _uniform, interleave

SECTION = "obstacles"
#: Obstacles of the measured field.
OBSTACLES = 16
#: The tasks measured besides ``--tasks``.
EXTRA_ENVS = {"Herding": "steer_env/Herding-v0"}


def row_name(name: str, n_obstacles: int) -> str:
    """The row of task ``name`` with ``n_obstacles`` obstacles."""
    field = "empty arena" if n_obstacles == 0 else f"{n_obstacles} obstacles"
    return f"{name} native vector env, {field}"


def whole_episodes(steps: int, episode_steps: int, at_least_one: bool = False) -> int:
    """``steps`` rounded to the nearest whole number of episodes of ``episode_steps``
    steps, when that is at least one; otherwise one episode with ``at_least_one``, else
    ``steps``."""
    episodes = round(steps / episode_steps)
    if episodes < 1:
        return episode_steps if at_least_one else steps
    return episodes * episode_steps


def steps_whole_episodes(steps: int, episode_steps: int) -> bool:
    """Whether a repeat of ``steps`` steps holds a whole number (>= 1) of episodes."""
    return steps >= episode_steps and steps % episode_steps == 0


def times_resets(row: Any) -> bool:
    """Whether the repeats of an obstacles ``row`` each step a whole number of episodes
    (so each times its share of the synchronised resets and their new layouts)."""
    return steps_whole_episodes(row.extra["steps_per_repeat"], row.extra["episode_steps"])


def prepare(
    env_id: str,
    name: str,
    num_envs: int,
    n_obstacles: int,
    target_s: float,
    at_least_one_episode: bool = True,
) -> Prepared:
    """The native vector env of ``env_id`` with ``n_obstacles`` obstacles, stepped with
    uniform actions (the kernel loaded before the timing); each repeat steps whole
    episodes (:func:`whole_episodes`), at least one unless ``at_least_one_episode`` is
    false."""
    import gymnasium as gym

    import steer_env  # noqa: F401

    venv = gym.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", n_obstacles=n_obstacles
    )
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    _loop(venv.step, _uniform(rng, (2, num_envs, 2)))
    per_step = _loop(venv.step, _uniform(rng, (3, num_envs, 2))) / 3
    episode = venv.unwrapped.config.time_limit
    k = whole_episodes(steps_for(per_step, target_s, 3, 20_000), episode, at_least_one_episode)
    if steps_whole_episodes(k, episode):
        note = f"{k} steps/repeat; autoresets (new layouts) included"
    else:
        note = f"{k} steps/repeat, under one episode ({episode} steps): no reset timed"
    actions = _uniform(rng, (k, num_envs, 2))
    prepared = Prepared(
        row_name(name, n_obstacles),
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / _loop(venv.step, actions),
        agents=venv.unwrapped.batch.n_vehicles,
        substeps=1,
        note=note,
        extra={"steps_per_repeat": k, "episode_steps": episode},
        close=venv.close,
    )
    return prepared


def run(
    envs: dict[str, str],
    num_envs: int,
    repeats: int,
    target_s: float,
    add: Callable[[Any], None],
    quick: bool = False,
) -> None:
    """Each task of ``envs`` (name -> env id) and :data:`EXTRA_ENVS`: the empty arena and
    :data:`OBSTACLES` obstacles, interleaved. A repeat steps at least one whole episode,
    however long ``target_s`` makes it, unless ``quick``."""
    for name, env_id in {**envs, **EXTRA_ENVS}.items():
        pair = [
            prepare(env_id, name, num_envs, n, target_s, at_least_one_episode=not quick)
            for n in (0, OBSTACLES)
        ]
        for row in interleave(pair, repeats):
            row.section = SECTION
            add(row)
