"""evasion_v0: the PettingZoo form of ``steer_env/Evasion-v0``, one learned evader.

The evasion task (:mod:`steer_env.tasks.pursuit_evasion`) as a PettingZoo ``ParallelEnv``
with one agent, ``"evader_0"``, fleeing ``n_opponents`` scripted pursuers: the same task,
arguments, rewards, infos and episodes as the Gymnasium env (the Gymnasium env's page
documents them). From the same seed and actions, ``parallel_env(**cfg)`` and
``gym.make("steer_env/Evasion-v0", **cfg)`` give equal observations, rewards,
terminations and infos, step by step. This form is for multi-agent libraries (PettingZoo
wrappers, TorchRL's ``PettingZooWrapper``, RLlib's multi-agent API) that take any
``ParallelEnv`` with one agent or several; :func:`vector_env` is its native batched form
(``E`` environments in one compiled call, :mod:`steer_env.envs.team_vector`).

>>> from steer_env.envs import evasion_v0
>>> env = evasion_v0.parallel_env()
>>> obs, infos = env.reset(seed=0)
>>> env.agents, obs["evader_0"].shape
(['evader_0'], (21,))

================== ===================================================================
agents             ``evader_0``; it plays until the episode ends (the first capture ends it)
action space       ``Box(-1, 1, (2,), float32)``: steering force in the evader's frame
                   (forward, side) in units of ``agent_max_force``; magnitude clipped to 1
observation space  ``Box(-1, 1, (11 + 5 K + 4 L,), float32)``, egocentric, ``K =
                   max_observed_opponents or n_opponents`` pursuer slots (21 values by
                   default); the table below
reward             ``-1`` on the step the evader is captured, ``+1`` on the last step
                   when it survives ``time_limit`` steps, plus the potential-based shaping
                   (``reward_shaping=False`` turns it off)
episode end        a capture, or ``time_limit`` steps (``max_cycles``): both
                   terminations (time is observed); ``truncations`` are always False
obstacles          none by default; ``obstacles=[(x, y, r), ...]`` or ``n_obstacles=N``
                   (placed at each reset from the seed): no body overlaps one, the
                   ``L = observed_obstacles`` nearest are observed, the scripted side
                   avoids them (the Gymnasium env's obstacle arguments)
infos              the Gymnasium env's: ``distance``, ``reward_capture``,
                   ``reward_escape``, ``reward_shaping``, ``is_success``,
                   ``capture_step``, the same keys at reset and every step
state              ``state()``: every vehicle's position, velocity and in-game flag
================== ===================================================================

The observation of the evader, in its frame (``K`` pursuer slots, nearest first):

=================== =============================================================== === ===
Index               Observation                                                     Min Max
=================== =============================================================== === ===
0, 1                own velocity (forward, side) / max speed                        -1  1
2, 3                offset to the nearest point of the west wall / arena_size       -1  1
4, 5                ... east wall                                                   -1  1
6, 7                ... south wall                                                  -1  1
8, 9                ... north wall                                                  -1  1
10                  elapsed time: 2 * step / time_limit - 1                         -1  1
11 + 5k + 0, 1      opponent k position relative to the agent / arena diagonal      -1  1
11 + 5k + 2, 3      opponent k velocity relative to the agent / (sum of max speeds) -1  1
11 + 5k + 4         1 if slot k holds an opponent, 0 if it is padding               0   1
11 + 5K + 4k + 0, 1 offset to obstacle k's nearest edge point / arena diagonal      -1  1
11 + 5K + 4k + 2    obstacle k's radius / arena_size                                0   1
11 + 5K + 4k + 3    1 if slot k holds an obstacle, 0 if it is padding               0   1
=================== =============================================================== === ===

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.config.TaskConfig` (``steer_env/Evasion-v0``'s table),
plus ``render_mode`` (``None``, ``"rgb_array"``, ``"human"``) and ``max_cycles``
(PettingZoo's name for ``time_limit``; giving both with different values is an error).
Bad actions (missing, an unknown name, a wrong shape, NaN or inf) raise ``ValueError``
naming the agent, and nothing is simulated.
"""

from __future__ import annotations

from steer_env.envs.parallel import TaskParallelEnv, UnknownAgentError, module_functions
from steer_env.envs.team_vector import TeamVectorEnv
from steer_env.tasks.pursuit_evasion import EVASION


class EvasionParallelEnv(TaskParallelEnv):
    """PettingZoo ``ParallelEnv`` of the evasion task (see the module docstring)."""

    task = EVASION


class EvasionVectorEnv(TeamVectorEnv):
    """``num_envs`` evasion environments in one batch (:mod:`steer_env.envs.team_vector`).

    Its infos hold the Gymnasium env's keys: the agent's own values (``distance``,
    ``reward_capture``, ``reward_escape``, ``reward_shaping``) as ``(E, k)`` arrays, the
    outcome (``is_success``, ``capture_step``) as ``(E,)`` ones, plus ``in_game (E, k)``
    and ``done (E,)``; the same keys and shapes at reset."""

    task = EVASION


parallel_env, raw_env, env, vector_env = module_functions(EvasionParallelEnv, EvasionVectorEnv)


__all__ = [
    "EvasionParallelEnv",
    "EvasionVectorEnv",
    "UnknownAgentError",
    "env",
    "parallel_env",
    "raw_env",
    "vector_env",
]
