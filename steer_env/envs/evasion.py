"""Evasion-v0: the learned agent is an evader fleeing scripted pursuers."""

from __future__ import annotations

from typing import ClassVar

from steer_env.envs.base import SteerEnv
from steer_env.tasks import Task
from steer_env.tasks.pursuit_evasion import EVASION


class EvasionEnv(SteerEnv):
    """
    ## Description

    A vehicle with Reynolds' simple vehicle model (point mass, max speed, max force) flees
    scripted pursuers in a square walled arena. The learned agent chooses a steering force;
    the pursuers use the classic behaviours (Reynolds 1999): pursuit of the evader with
    prediction, separation from each other, and wall avoidance, combined by Buckland's
    prioritized truncated running sum. Every vehicle moves by the same physics step
    (:func:`steer_env.physics.integrate`); the walls stop any vehicle that reaches them.

    Units: metres, seconds, kilograms, newtons. The arena is ``[-arena_size/2,
    arena_size/2]^2``; the agent's frame has x forward (along its heading) and y to its left.

    ## Action Space

    ``Box(-1, 1, (2,), float32)``: the steering force in the agent's frame, in units of its
    ``agent_max_force``. The vector's magnitude is clipped to 1, so ``(1, 1)`` is a force of
    ``agent_max_force`` at 45 degrees, not 1.41 times it.

    | Num | Action        | Min | Max |
    |-----|---------------|-----|-----|
    | 0   | forward force | -1  | 1   |
    | 1   | side force    | -1  | 1   |

    ## Observation Space

    ``Box(-1, 1, (11 + 5 * K,), float32)``, egocentric (in the agent's frame), with ``K =
    max_observed_opponents or n_opponents`` opponent slots, nearest first (K = 2 and 21 values
    by default):

    | Index        | Observation                                                     | Min | Max |
    |--------------|-----------------------------------------------------------------|-----|-----|
    | 0, 1         | own velocity (forward, side) / agent_max_speed                  | -1  | 1   |
    | 2, 3         | offset to the nearest point of the west wall / arena_size       | -1  | 1   |
    | 4, 5         | ... east wall                                                   | -1  | 1   |
    | 6, 7         | ... south wall                                                  | -1  | 1   |
    | 8, 9         | ... north wall                                                  | -1  | 1   |
    | 10           | elapsed time: 2 * step / time_limit - 1                         | -1  | 1   |
    | 11 + 5k + 0,1| opponent k position relative to the agent / arena diagonal      | -1  | 1   |
    | 11 + 5k + 2,3| opponent k velocity relative to the agent / (sum of max speeds) | -1  | 1   |
    | 11 + 5k + 4  | 1 if slot k holds an opponent, 0 if it is padding               | 0   | 1   |

    ## Rewards

    * ``capture``: -1 on the step a pursuer's centre comes within ``capture_radius`` of the
      agent's (checked along the whole step, so fast vehicles cannot pass through).
    * ``escape``: +1 on the last step when the agent survives ``time_limit`` steps.
    * ``shaping`` (when ``reward_shaping=True``): potential-based term
      ``shaping_gamma * phi(s') - phi(s)`` with ``phi = +shaping_scale * d / diagonal``,
      ``d`` the distance to the nearest pursuer and ``phi = 0`` after capture (Ng, Harada and
      Russell 1999): it speeds learning without changing the optimal policy when
      ``shaping_gamma`` equals the learner's discount.

    The terms are reported in ``info["reward_terms"]``.

    ## Starting State

    The agent starts uniformly in the arena, every pursuer uniformly at least
    ``min_start_distance`` from it (the farthest of 16 uniform candidates if none is that
    far); all at rest with random headings.

    ## Episode End

    * Termination: capture (``info["is_success"] = False``).
    * Truncation: ``time_limit`` steps (default 100, i.e. 10 s) have passed. Without a
      capture on that step this is an escape (``info["is_success"] = True``); a capture
      on the very last step sets both flags, as Gymnasium's ``TimeLimit`` does. The
      registered ``max_episode_steps`` equals ``time_limit``, so ``truncated`` always means
      time ran out.

    The final ``info`` also holds ``capture_step``: the step of capture, or ``-1`` when there
    was none (an int either way, so Gymnasium's ``SyncVectorEnv`` can batch it).

    ## Arguments

    ``gym.make("steer_env/Evasion-v0", render_mode=None, **kwargs)`` accepts every field of
    :class:`steer_env.envs.config.TaskConfig`, validated at construction (unknown names and
    out-of-range values raise ``ValueError``). Defaults for this task: 2 pursuers;
    agent max speed 3 m/s, max force 6 N, mass 1 kg; pursuer max speed 3 m/s, max force 6 N;
    arena 25 m; dt 0.1 s; time limit 100 steps; capture radius 0.8 m. To change the episode
    length pass both
    ``time_limit=N`` and ``max_episode_steps=N`` to ``gym.make``.

    ``render_mode``: ``"human"`` (a pygame window at 10 fps) or ``"rgb_array"`` (an
    ``(H, W, 3)`` uint8 frame, headless), both needing ``pip install "steer-env[render]"``.

    The unwrapped env exposes read-only copies of the state: ``positions``, ``velocities``,
    ``headings`` (``(n, 2)``), ``is_pursuer``, ``max_speeds``, ``max_forces``, ``masses``,
    ``radii`` (``(n,)``), ``agent_index`` (always 0) and ``elapsed_steps``.

    ## Version History

    * v0: initial release.

    >>> import gymnasium as gym
    >>> import steer_env
    >>> env = gym.make("steer_env/Evasion-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (21,)
    """

    task: ClassVar[Task] = EVASION
