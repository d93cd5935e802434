"""team_pursuit_v0: a PettingZoo ``ParallelEnv`` of the team pursuit task.

``N`` pursuers (default 3) chase ``M`` evaders (default 1) that are ``speed_ratio`` (1.3)
times faster, in the walled 25 m arena (task: :mod:`steer_env.tasks.team_pursuit`). The
learned agents are the roles named by ``learned``; the others run scripted strategies.
One engine :class:`~steer_env.engine.batch.Batch` of one environment runs underneath: this
module only maps dicts to arrays and back. For speed, :func:`vector_env` is the native
batched form (``E`` environments in one compiled call, :mod:`steer_env.envs.team_vector`),
and :func:`steer_env.envs.sb3.make_team_sb3_vec_env` its stable-baselines3 ``VecEnv`` with
one slot per agent of a role (parameter sharing); ``python train.py --env team_pursuit``
trains on it.

>>> from steer_env.envs import team_pursuit_v0
>>> env = team_pursuit_v0.parallel_env()
>>> obs, infos = env.reset(seed=0)
>>> env.agents
['pursuer_0', 'pursuer_1', 'pursuer_2']

================== ===================================================================
agents             ``pursuer_0..N-1`` (learned pursuers), then ``evader_0..M-1`` (learned
                   evaders); a captured evader leaves ``agents``
action space       ``Box(-1, 1, (2,), float32)`` per agent: steering force in the agent's
                   frame (forward, side) in units of its max force; magnitude clipped to 1
observation space  ``Box(-1, 1, (11 + 5 (T + O) + 4 L,), float32)`` per agent, egocentric:
                   own velocity (2), wall offsets (8), elapsed time (1), then ``T`` teammate
                   slots and ``O`` opponent slots, nearest first, each relative position
                   (2), relative velocity (2), present flag (1); ``T = max(N, M) - 1``,
                   ``O = max(N, M)`` for every agent whichever roles are learned (36
                   values by default), slots beyond the agent's teammates/opponents absent
reward (pursuer)   ``capture_reward`` for every evader the team captures on the step
                   (shared), plus shaping
reward (evader)    ``-capture_reward`` when captured, ``+escape_reward`` when still in the
                   game at the time limit, plus shaping
shaping            potential-based, ``shaping_gamma * phi(s') - phi(s)``, ``phi`` -/+ the
                   distance to the nearest opponent / arena diagonal, 0 when terminal
                   (``reward_shaping=False`` turns it off)
scripted roles     evaders: ``"flow"`` (wall avoidance, evade every pursuer within
                   ``threat_range``, the vortex flow field while none is; weighted sum);
                   pursuers: ``"reynolds"`` or ``"cooperative"`` (offset pursuit on spread
                   bearings, then pursuit); see :mod:`steer_env.tasks.team_pursuit`
episode end        every evader captured, or ``time_limit`` steps (``max_cycles``): both
                   terminations (time is observed); ``truncations`` are always False
obstacles          none by default; ``obstacles=[(x, y, r), ...]`` or ``n_obstacles=N``
                   (placed at each reset from the seed): no body overlaps one, the
                   ``L = observed_obstacles`` nearest are observed, the scripted side
                   avoids them (the Gymnasium env's obstacle arguments)
infos              the same keys at reset and every step, per agent: ``distance`` (m to
                   the nearest opponent), ``reward_capture``, ``reward_escape``,
                   ``reward_shaping`` (the reward's terms), ``captured`` (this agent),
                   team metrics ``captures`` (this step), ``evaders_captured``,
                   ``evaders_left`` and ``capture_steps`` (``(M,)`` int64: the step
                   each evader was captured, -1 while it plays)
state              ``state()``: every vehicle's position, velocity and in-game flag,
                   ``(5 (N + M),)`` float32, within ``state_space``
================== ===================================================================

The observation of an agent, in its frame (``T`` teammate slots, then ``O`` opponent
slots):

======================== =============================================================== === ===
Index                    Observation                                                     Min Max
======================== =============================================================== === ===
0, 1                     own velocity (forward, side) / max speed                        -1  1
2, 3                     offset to the nearest point of the west wall / arena_size       -1  1
4, 5                     ... east wall                                                   -1  1
6, 7                     ... south wall                                                  -1  1
8, 9                     ... north wall                                                  -1  1
10                       elapsed time: 2 * step / time_limit - 1                         -1  1
11 + 5k + 0, 1           teammate k position relative to the agent / arena diagonal      -1  1
11 + 5k + 2, 3           teammate k velocity relative to the agent / (sum of max speeds) -1  1
11 + 5k + 4              1 if slot k holds a teammate, 0 if it is padding                0   1
11 + 5T + 5k + 0, 1      opponent k position relative to the agent / arena diagonal      -1  1
11 + 5T + 5k + 2, 3      opponent k velocity relative to the agent / (sum of max speeds) -1  1
11 + 5T + 5k + 4         1 if slot k holds an opponent, 0 if it is padding               0   1
11 + 5T + 5O + 4k + 0, 1 offset to obstacle k's nearest edge point / arena diagonal      -1  1
11 + 5T + 5O + 4k + 2    obstacle k's radius / arena_size                                0   1
11 + 5T + 5O + 4k + 3    1 if slot k holds an obstacle, 0 if it is padding               0   1
======================== =============================================================== === ===

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.team_pursuit.TeamConfig` (``n_pursuers``, ``n_evaders``,
``learned`` = ``"pursuers"`` | ``"evaders"`` | ``"both"``, ``speed_ratio``, ``time_limit``,
``min_start_distance``, ``pursuer_strategy`` = ``"reynolds"`` | ``"cooperative"`` |
a Strategy, ``evader_strategy`` = ``"flow"`` | a Strategy, rewards, shaping, behaviour
weights and ranges: ``wall_weight`` 3, ``feeler_length`` 2 m (pursuers),
``evader_feeler_length`` 1 m, ``evade_weight`` 8, ``threat_range`` 5 m, ``flow_weight`` 1,
``flow_radius`` 6 m, ``flow_gain`` 1, ``flow_clockwise``, ``max_prediction_time`` 3 s,
``pursuit_weight`` 1, ``separation_weight`` 1, ``separation_radius`` 3 m,
``offset_distance`` 6 m, ``close_range`` 1 m), plus ``render_mode`` (``None``,
``"rgb_array"``, ``"human"``) and ``max_cycles`` (PettingZoo's name for ``time_limit``;
giving both with different values is an error).

Bad actions (an agent in the game missing, an unknown name, a wrong shape, NaN or inf)
raise ``ValueError`` naming the agent, and nothing is simulated. Actions for agents that
have left the game are ignored, whatever they hold (as in :func:`vector_env`, and as
batched wrappers such as TorchRL's send them); after the episode has ended a step returns
empty dicts. ``observation_space(name)`` and ``action_space(name)``
of a name that is not an agent raise ``UnknownAgentError`` (a ``KeyError`` and a
``ValueError``) listing the possible agents.
"""

from __future__ import annotations

from steer_env.envs.parallel import TaskParallelEnv, UnknownAgentError, module_functions
from steer_env.envs.team_vector import TeamVectorEnv
from steer_env.tasks import TEAM_TASKS

TASK = TEAM_TASKS["team_pursuit"]


class TeamPursuitEnv(TaskParallelEnv):
    """PettingZoo ``ParallelEnv`` of the team pursuit task (see the module docstring)."""

    task = TASK


class TeamPursuitVectorEnv(TeamVectorEnv):
    """``num_envs`` team pursuit environments in one batch (the interface:
    :mod:`steer_env.envs.team_vector`). Its infos, ``(E, k)`` per agent and ``(E,)`` per
    environment, the same keys and shapes at reset (zeros, False and -1):

    ======================= =============================================================
    ``in_game (E, k)``      the agent still plays after the step (a captured evader left)
    ``distance (E, k)``     m to the nearest opponent
    ``captured (E, k)``     the agent (an evader) has been captured
    ``reward_capture``,     the reward's terms, ``(E, k)`` each
    ``reward_escape``,
    ``reward_shaping``
    ``done (E,)``           the environment's episode ended on the step
    ``captures (E,)``       captures on this step
    ``evaders_left (E,)``   evaders still in the game
    ``capture_step (E, M)`` step each evader was captured, -1 if not
    ======================= =============================================================
    """

    task = TASK


parallel_env, raw_env, env, vector_env = module_functions(TeamPursuitEnv, TeamPursuitVectorEnv)


__all__ = [
    "TeamPursuitEnv",
    "TeamPursuitVectorEnv",
    "UnknownAgentError",
    "env",
    "parallel_env",
    "raw_env",
    "vector_env",
]
