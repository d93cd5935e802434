"""crowd_v0: a PettingZoo ``ParallelEnv`` of the crowd navigation task with several
learned robots.

``n_robots`` learned robots (default 1; pass ``n_robots=2``...) cross a crowd of
``n_humans`` scripted pedestrians (task: :mod:`steer_env.tasks.crowd`; the single-robot
Gymnasium form is ``steer_env/Crowd-v0``). Robot ``k`` of ``R`` starts on the circle of
radius ``robot_distance`` at the angle ``-pi/2 + 2 pi k / R`` and its goal is the opposite
point (two robots cross head-on); each sees the other robots in its observation.
:func:`vector_env` is the native batched form (``E`` environments in one compiled call),
and ``steer_env.envs.sb3.TeamSB3VecEnv(vector_env(E, n_robots=2), role="robot")`` its
stable-baselines3 ``VecEnv`` with one slot per robot (parameter sharing), which ``python
train.py --env crowd --set n_robots=2`` trains one policy on.

>>> from steer_env.envs import crowd_v0
>>> env = crowd_v0.parallel_env(n_robots=2)
>>> obs, infos = env.reset(seed=0)
>>> env.agents
['robot_0', 'robot_1']

================== ===================================================================
agents             ``robot_0..R-1``; a robot leaves ``agents`` on the step it reaches
                   its goal, every one when the episode ends
action space       ``Box(-1, 1, (2,), float32)`` per robot: steering force in the
                   robot's frame (forward, side) in units of its max force; magnitude
                   clipped to 1
observation space  ``Box(-1, 1, (13 + 5 (R' + K) + 4 L,), float32)`` per robot, in its
                   frame: own velocity, walls, time, ``R' = n_robots - 1`` slots for the
                   other robots and ``K`` for the nearest humans (nearest first), the
                   offset to its goal, then ``L`` obstacle slots (43 values for two robots)
reward             per robot, its own: CrowdNav's goal, collision and discomfort terms
                   plus its potential-based progress to its goal (see ``Crowd-v0``)
episode end        every robot at its goal (a success), any robot's collision, or
                   ``time_limit`` steps (``max_cycles``): all terminations;
                   ``truncations`` are always False
obstacles          none by default; ``obstacles=[(x, y, r), ...]`` or ``n_obstacles=N``
                   (placed at each reset from the seed): no body overlaps one, the
                   ``L = observed_obstacles`` nearest are observed, the humans avoid them
infos              per robot, the same keys at reset and every step: its reward terms
                   (``reward_goal``, ``reward_collision``, ``reward_discomfort``,
                   ``reward_progress``), ``collisions``, ``robots_left``, and at the end
                   ``is_success``, ``goal_step``, ``navigation_time``,
                   ``collision_rate``, ``timeout_rate``, ``discomfort_frequency``,
                   ``danger_distance`` (see ``steer_env/Crowd-v0``)
state              ``state()``: every vehicle's position, velocity and in-game flag
================== ===================================================================

The observation of a robot, in its frame (``R`` other-robot slots, then ``K`` human slots):

========================== ============================================================ === ===
Index                      Observation                                                  Min Max
========================== ============================================================ === ===
0, 1                       own velocity (forward, side) / max speed                     -1  1
2, 3                       offset to the nearest point of the west wall / arena_size    -1  1
4, 5                       ... east wall                                                -1  1
6, 7                       ... south wall                                               -1  1
8, 9                       ... north wall                                               -1  1
10                         elapsed time: 2 * step / time_limit - 1                      -1  1
11 + 5k + 0, 1             robot k position relative to the agent / arena diagonal      -1  1
11 + 5k + 2, 3             robot k velocity relative to the agent / (sum of max speeds) -1  1
11 + 5k + 4                1 if slot k holds a robot, 0 if it is padding                0   1
11 + 5R + 5k + 0, 1        human k position relative to the agent / arena diagonal      -1  1
11 + 5R + 5k + 2, 3        human k velocity relative to the agent / (sum of max speeds) -1  1
11 + 5R + 5k + 4           1 if slot k holds a human, 0 if it is padding                0   1
11 + 5R + 5K, 12 + 5R + 5K offset to the robot's goal / arena diagonal                  -1  1
13 + 5R + 5K + 4k + 0, 1   offset to obstacle k's nearest edge point / arena diagonal   -1  1
13 + 5R + 5K + 4k + 2      obstacle k's radius / arena_size                             0   1
13 + 5R + 5K + 4k + 3      1 if slot k holds an obstacle, 0 if it is padding            0   1
========================== ============================================================ === ===

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.crowd.CrowdConfig` (see ``steer_env/Crowd-v0``'s
table), plus ``render_mode`` (``None``, ``"rgb_array"``, ``"human"``) and ``max_cycles``
(PettingZoo's name for ``time_limit``).

Bad actions (a robot missing, an unknown name, a wrong shape, NaN or inf) raise
``ValueError`` naming the agent, and nothing is simulated.
"""

from __future__ import annotations

from steer_env.envs.parallel import TaskParallelEnv, UnknownAgentError, module_functions
from steer_env.envs.team_vector import TeamVectorEnv
from steer_env.tasks.crowd import CROWD


class CrowdParallelEnv(TaskParallelEnv):
    """PettingZoo ``ParallelEnv`` of the crowd navigation task (see the module
    docstring)."""

    task = CROWD


class CrowdVectorEnv(TeamVectorEnv):
    """``num_envs`` crowd navigation environments in one batch
    (:mod:`steer_env.envs.team_vector`).

    Its infos are the parallel env's, batched: each robot's reward terms ``(E, k)``, what
    the environment measured (``collisions``, ``robots_left`` and the outcome keys)
    ``(E,)``, plus ``in_game (E, k)`` and ``done (E,)``; the same keys and shapes at reset.
    On the step that starts an environment's next episode they are that episode's reset
    infos."""

    task = CROWD


parallel_env, raw_env, env, vector_env = module_functions(CrowdParallelEnv, CrowdVectorEnv)


__all__ = [
    "CrowdParallelEnv",
    "CrowdVectorEnv",
    "UnknownAgentError",
    "env",
    "parallel_env",
    "raw_env",
    "vector_env",
]
