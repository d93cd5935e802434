"""flocking_v0: a PettingZoo ``ParallelEnv`` of the flocking task, every boid a learned
agent.

``n_boids`` boids (16), all learned by default (``n_learned``: the first ``n_learned``
are learned, the others run Reynolds' boids), migrate as one flock to the goal region
while ``n_predators`` (1) scripted predators hunt them (task:
:mod:`steer_env.tasks.flocking`; the one-learned-boid Gymnasium form is
``steer_env/Flocking-v0``, whose docstring tables the rewards, the start and the
arguments). :func:`vector_env` is the native batched form (``E`` environments in one
compiled call), and ``steer_env.envs.sb3.TeamSB3VecEnv(vector_env(E), role="boid")`` its
stable-baselines3 ``VecEnv`` with one slot per boid (parameter sharing), which ``python
train.py --env flocking --set n_learned=-1`` trains one policy on.

>>> from steer_env.envs import flocking_v0
>>> env = flocking_v0.parallel_env(n_boids=4)
>>> obs, infos = env.reset(seed=0)
>>> env.agents
['boid_0', 'boid_1', 'boid_2', 'boid_3']
>>> obs["boid_0"].shape
(53,)

================== ===================================================================
agents             ``boid_0..B-1`` (``B = n_learned``, every boid by default); a boid
                   leaves ``agents`` on the step a predator catches it, every one when
                   the episode ends
action space       ``Box(-1, 1, (2,), float32)`` per boid: steering force in the boid's
                   frame (forward, side) in units of its max force; magnitude clipped
                   to 1
observation space  ``Box(-1, 1, (13 + 5 K + 5 P + 4 L,), float32)`` per boid, in its
                   frame: own velocity, walls, time, ``K = observed_boids`` (7) slots
                   for the nearest other boids and ``P = observed_predators`` (1) for
                   the nearest predators (nearest first), the offset to the goal
                   region's centre, then ``L`` obstacle slots (53 values by default)
reward             per boid, its own: ``success`` (to every boid in the game when the
                   flock succeeds), potential-based ``progress`` to the goal,
                   ``collision`` (touching another boid) and ``caught``
                   (see ``Flocking-v0``)
success            the largest group of boids inside the goal region (centres within
                   ``link_distance`` linked, connected components) holds at least
                   ``success_fraction`` (75%) of the flock
episode end        success, every learned boid caught, fewer boids left than success
                   needs, or ``time_limit`` steps (``max_cycles``): all terminations;
                   ``truncations`` are always False
obstacles          none by default; ``obstacles=[(x, y, r), ...]`` or ``n_obstacles=N``
                   (placed at each reset from the seed): no body overlaps one, the
                   ``L = observed_obstacles`` nearest are observed, the scripted
                   vehicles avoid them
infos              per boid, the same keys at reset and every step: its reward terms
                   (``reward_success``, ``reward_progress``, ``reward_collision``,
                   ``reward_caught``), ``collisions``, ``catches``, ``boids_left``,
                   and at the end ``is_success``, ``arrival_step``, ``arrival_time``,
                   ``arrival_fraction``, ``boids_caught``, ``collision_rate``,
                   ``min_separation``, ``polarization``, ``largest_group``,
                   ``neighbor_loss_rate`` (see ``steer_env/Flocking-v0``)
state              ``state()``: every vehicle's position, velocity and in-game flag
================== ===================================================================

The observation of a boid, in its frame (``K`` boid slots, then ``P`` predator slots):

========================== ================================================================= === ===
Index                      Observation                                                       Min Max
========================== ================================================================= === ===
0, 1                       own velocity (forward, side) / max speed                          -1  1
2, 3                       offset to the nearest point of the west wall / arena_size         -1  1
4, 5                       ... east wall                                                     -1  1
6, 7                       ... south wall                                                    -1  1
8, 9                       ... north wall                                                    -1  1
10                         elapsed time: 2 * step / time_limit - 1                           -1  1
11 + 5k + 0, 1             boid k offset from the agent / (observation_range + distance)     -1  1
11 + 5k + 2, 3             boid k velocity relative to the agent / (sum of max speeds)       -1  1
11 + 5k + 4                1 if slot k holds a boid, 0 if it is padding                      0   1
11 + 5K + 5k + 0, 1        predator k offset from the agent / (observation_range + distance) -1  1
11 + 5K + 5k + 2, 3        predator k velocity relative to the agent / (sum of max speeds)   -1  1
11 + 5K + 5k + 4           1 if slot k holds a predator, 0 if it is padding                  0   1
11 + 5K + 5P, 12 + 5K + 5P offset to the goal region's centre / arena diagonal               -1  1
13 + 5K + 5P + 4k + 0, 1   offset to obstacle k's nearest edge point / arena diagonal        -1  1
13 + 5K + 5P + 4k + 2      obstacle k's radius / arena_size                                  0   1
13 + 5K + 5P + 4k + 3      1 if slot k holds an obstacle, 0 if it is padding                 0   1
========================== ================================================================= === ===

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.flocking.FlockingConfig` (see ``steer_env/Flocking-v0``'s
table; ``n_learned`` is -1, every boid, by default here), plus ``render_mode`` (``None``,
``"rgb_array"``, ``"human"``) and ``max_cycles`` (PettingZoo's name for ``time_limit``).

Bad actions (a boid missing, an unknown name, a wrong shape, NaN or inf) raise
``ValueError`` naming the agent, and nothing is simulated.
"""

from __future__ import annotations

from typing import Any

from steer_env.envs.parallel import TaskParallelEnv, UnknownAgentError, module_functions
from steer_env.envs.team_vector import TeamVectorEnv
from steer_env.tasks.flocking import FLOCKING


class FlockingParallelEnv(TaskParallelEnv):
    """PettingZoo ``ParallelEnv`` of the flocking task (see the module docstring)."""

    task = FLOCKING

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("n_learned", -1)  # every boid learned unless told otherwise
        super().__init__(*args, **kwargs)


class FlockingVectorEnv(TeamVectorEnv):
    """``num_envs`` flocking environments in one batch (:mod:`steer_env.envs.team_vector`).

    Its infos are the parallel env's, batched: each learned boid's reward terms ``(E, k)``,
    what the environment measured (``collisions``, ``catches``, ``boids_left`` and the
    outcome keys) ``(E,)``, plus ``in_game (E, k)`` and ``done (E,)``; the same keys and
    shapes at reset. On the step that starts an environment's next episode they are that
    episode's reset infos."""

    task = FLOCKING

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("n_learned", -1)  # every boid learned unless told otherwise
        super().__init__(*args, **kwargs)


parallel_env, raw_env, env, vector_env = module_functions(FlockingParallelEnv, FlockingVectorEnv)


__all__ = [
    "FlockingParallelEnv",
    "FlockingVectorEnv",
    "UnknownAgentError",
    "env",
    "parallel_env",
    "raw_env",
    "vector_env",
]
