"""herding_v0: a PettingZoo ``ParallelEnv`` of the herding task with several learned dogs.

``n_dogs`` learned dogs (default 1; pass ``n_dogs=2``...) herd a flock of ``n_sheep``
scripted sheep into the pen (task: :mod:`steer_env.tasks.herding`; the single-dog
Gymnasium form is ``steer_env/Herding-v0``). Every dog gets the team's success reward and
its own shaping term, and sees the other dogs in its observation. :func:`vector_env` is
the native batched form (``E`` environments in one compiled call), and
``steer_env.envs.sb3.TeamSB3VecEnv(vector_env(E, n_dogs=2), role="dog")`` its
stable-baselines3 ``VecEnv`` with one slot per dog (parameter sharing), which ``python
train.py --env herding --set n_dogs=2`` trains one policy on.

>>> from steer_env.envs import herding_v0
>>> env = herding_v0.parallel_env(n_dogs=2)
>>> obs, infos = env.reset(seed=0)
>>> env.agents
['dog_0', 'dog_1']

================== ===================================================================
agents             ``dog_0..D-1``; nobody leaves the game before the episode ends
action space       ``Box(-1, 1, (2,), float32)`` per dog: steering force in the dog's
                   frame (forward, side) in units of its max force; magnitude clipped to 1
observation space  ``Box(-1, 1, (24 + 5 (D' + K) + 4 L,), float32)`` per dog, in its frame: own
                   velocity, walls, time, ``D' = n_dogs - 1`` slots for the other dogs and
                   ``K = min(observed_sheep, n_sheep)`` for the nearest sheep (nearest
                   first), the pen's offset, the flock's summary and Strömbom's target
                   point (54 values for two dogs)
reward             per dog: ``success_reward`` (the same for every dog) on the step the
                   flock is penned, plus the dog's own potential-based shaping (the
                   flock's progress, shared, minus the dog's distance to Strömbom's
                   target point, its own)
episode end        at least ``success_fraction`` of the sheep in the pen, or
                   ``time_limit`` steps (``max_cycles``): both terminations;
                   ``truncations`` are always False
obstacles          none by default; ``obstacles=[(x, y, r), ...]`` or ``n_obstacles=N``
                   (placed at each reset from the seed): no body overlaps one, the
                   ``L = observed_obstacles`` nearest are observed, the scripted side
                   avoids them (the Gymnasium env's obstacle arguments)
infos              per dog, the same keys at reset and every step: ``reward_success``,
                   ``reward_shaping``, ``penned``, ``flock_distance``, and at the end
                   ``is_success``, ``pen_step``, ``penned_fraction``, ``cohesion``,
                   ``fragmentation``, ``polarisation``, ``dog_path``,
                   ``control_efficiency`` (see ``steer_env/Herding-v0``)
state              ``state()``: every vehicle's position, velocity and in-game flag
================== ===================================================================

The observation of a dog, in its frame (``D`` other-dog slots, then ``K`` sheep slots):

========================== ======================================================================== === ===
Index                      Observation                                                              Min Max
========================== ======================================================================== === ===
0, 1                       own velocity (forward, side) / max speed                                 -1  1
2, 3                       offset to the nearest point of the west wall / arena_size                -1  1
4, 5                       ... east wall                                                            -1  1
6, 7                       ... south wall                                                           -1  1
8, 9                       ... north wall                                                           -1  1
10                         elapsed time: 2 * step / time_limit - 1                                  -1  1
11 + 5k + 0, 1             dog k position relative to the agent / arena diagonal                    -1  1
11 + 5k + 2, 3             dog k velocity relative to the agent / (sum of max speeds)               -1  1
11 + 5k + 4                1 if slot k holds a dog, 0 if it is padding                              0   1
11 + 5D + 5k + 0, 1        sheep k position relative to the agent / arena diagonal                  -1  1
11 + 5D + 5k + 2, 3        sheep k velocity relative to the agent / (sum of max speeds)             -1  1
11 + 5D + 5k + 4           1 if slot k holds a sheep, 0 if it is padding                            0   1
11 + 5D + 5K, 12 + 5D + 5K offset to the pen's centre / arena diagonal                              -1  1
13 + 5D + 5K, 14 + 5D + 5K offset to the flock's centre (mean position) / arena diagonal            -1  1
15 + 5D + 5K, 16 + 5D + 5K flock's mean velocity relative to the agent / (sum of max speeds)        -1  1
17 + 5D + 5K               mean distance of the sheep to the flock centre / arena_size              0   1
18 + 5D + 5K, 19 + 5D + 5K offset to the sheep farthest from the flock centre / arena diagonal      -1  1
20 + 5D + 5K               fraction of the sheep inside the pen                                     0   1
21 + 5D + 5K, 22 + 5D + 5K offset to Strömbom's collect or drive point / arena diagonal             -1  1
23 + 5D + 5K               1 while Strömbom's dog would collect a straggler, 0 while it would drive 0   1
24 + 5D + 5K + 4k + 0, 1   offset to obstacle k's nearest edge point / arena diagonal               -1  1
24 + 5D + 5K + 4k + 2      obstacle k's radius / arena_size                                         0   1
24 + 5D + 5K + 4k + 3      1 if slot k holds an obstacle, 0 if it is padding                        0   1
========================== ======================================================================== === ===

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.herding.HerdingConfig` (see ``steer_env/Herding-v0``'s
table), plus ``render_mode`` (``None``, ``"rgb_array"``, ``"human"``) and ``max_cycles``
(PettingZoo's name for ``time_limit``).

Bad actions (a dog missing, an unknown name, a wrong shape, NaN or inf) raise
``ValueError`` naming the agent, and nothing is simulated.
"""

from __future__ import annotations

from steer_env.envs.parallel import TaskParallelEnv, UnknownAgentError, module_functions
from steer_env.envs.team_vector import TeamVectorEnv
from steer_env.tasks.herding import HERDING


class HerdingParallelEnv(TaskParallelEnv):
    """PettingZoo ``ParallelEnv`` of the herding task (see the module docstring)."""

    task = HERDING


class HerdingVectorEnv(TeamVectorEnv):
    """``num_envs`` herding environments in one batch (:mod:`steer_env.envs.team_vector`).

    Its infos are the parallel env's, batched: each dog's reward terms
    (``reward_success``, ``reward_shaping``) ``(E, k)``, what the environment measured
    (``penned``, ``flock_distance`` and the outcome keys) ``(E,)``, plus
    ``in_game (E, k)`` and ``done (E,)``; the same keys and shapes at reset. On the
    step that starts an environment's next episode they are that episode's reset infos."""

    task = HERDING


parallel_env, raw_env, env, vector_env = module_functions(HerdingParallelEnv, HerdingVectorEnv)


__all__ = [
    "HerdingParallelEnv",
    "HerdingVectorEnv",
    "UnknownAgentError",
    "env",
    "parallel_env",
    "raw_env",
    "vector_env",
]
