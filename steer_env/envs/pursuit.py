"""Pursuit-v0: the learned agent is a pursuer chasing scripted evaders."""

from __future__ import annotations

from typing import ClassVar

from steer_env.envs.base import SteerEnv
from steer_env.tasks import Task
from steer_env.tasks.pursuit_evasion import PURSUIT


class PursuitEnv(SteerEnv):
    """
    ## Description

    A vehicle with Reynolds' simple vehicle model (point mass, max speed, max force) chases
    scripted evaders in a square walled arena. The learned agent chooses a steering force;
    the evaders use the classic behaviours (Reynolds 1999): evade the nearest pursuer with
    prediction, avoid the walls, and wander when not threatened, combined by Buckland's
    prioritized truncated running sum. Every vehicle moves by the same physics step
    (:func:`steer_env.physics.integrate`, run by the compiled engine); the walls stop any
    vehicle that reaches them.

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

    ``Box(-1, 1, (11 + 5 * K + 4 * L,), float32)``, egocentric (in the agent's frame), with ``K =
    max_observed_opponents or n_opponents`` opponent slots, nearest first, and ``L`` obstacle
    slots (``observed_obstacles``; K = 1, L = 0 and 16 values by default):

    | Index | Observation | Min | Max |
    |-------|-------------|-----|-----|
    | 0, 1 | own velocity (forward, side) / max speed | -1 | 1 |
    | 2, 3 | offset to the nearest point of the west wall / arena_size | -1 | 1 |
    | 4, 5 | ... east wall | -1 | 1 |
    | 6, 7 | ... south wall | -1 | 1 |
    | 8, 9 | ... north wall | -1 | 1 |
    | 10 | elapsed time: 2 * step / time_limit - 1 | -1 | 1 |
    | 11 + 5k + 0, 1 | opponent k position relative to the agent / arena diagonal | -1 | 1 |
    | 11 + 5k + 2, 3 | opponent k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 11 + 5k + 4 | 1 if slot k holds an opponent, 0 if it is padding | 0 | 1 |
    | 11 + 5K + 4k + 0, 1 | offset to obstacle k's nearest edge point / arena diagonal | -1 | 1 |
    | 11 + 5K + 4k + 2 | obstacle k's radius / arena_size | 0 | 1 |
    | 11 + 5K + 4k + 3 | 1 if slot k holds an obstacle, 0 if it is padding | 0 | 1 |

    ## Obstacles

    The arena is empty by default. ``obstacles=[(x, y, radius), ...]`` fixes a layout of
    circular obstacles; ``n_obstacles=N`` places ``N`` anew at each reset from the seed
    (radii uniform in ``[obstacle_radius_min, obstacle_radius_max]``, each at least
    ``obstacle_gap`` from the walls, the other obstacles and every vehicle's start).
    No vehicle's body ever overlaps one: like a wall, an obstacle stops a vehicle where it
    first touches it and takes away the velocity pointing into it. The nearest
    ``observed_obstacles`` are in the observation, and the scripted vehicles add Reynolds'
    obstacle avoidance (Buckland's detection box) right after wall avoidance.

    ## Rewards

    * ``capture``: +1 on the step a pursuer's centre comes within ``capture_radius`` of an
      evader's (checked along the whole step, so fast vehicles cannot pass through).
    * ``shaping`` (when ``reward_shaping=True``): potential-based term
      ``shaping_gamma * phi(s') - phi(s)`` with ``phi = -shaping_scale * d / diagonal``,
      ``d`` the distance to the nearest evader and ``phi = 0`` in every terminal state
      (capture or time limit), so an episode's shaped return is its unshaped return minus
      ``phi(s_0)`` exactly (Ng, Harada and Russell 1999): it speeds learning without
      changing the optimal policy when ``shaping_gamma`` equals the learner's discount
      (``train.py`` sets it so).

    The terms are reported in ``info["reward_capture"]``, ``info["reward_escape"]`` and
    ``info["reward_shaping"]``.

    ## Starting State

    The agent starts uniformly in the arena, every evader uniformly at least
    ``min_start_distance`` from it (the farthest of 16 uniform candidates if none is that
    far); all at rest with random headings.

    ## Episode End

    * Termination: capture (``info["is_success"] = True``).
    * Termination: ``time_limit`` steps (default 100, i.e. 10 s) have passed. The time limit
      is part of the task (time is observed and the episode's end is known to the agent),
      so it is reported as a termination, not a truncation: value bootstrapping stops there.
      Without a capture on that step this is a miss (``info["is_success"] = False``).
    * ``truncated`` is always ``False`` unless an outer wrapper cuts the episode
      (``gym.make(..., max_episode_steps=N)`` adds Gymnasium's ``TimeLimit(N)``).

    ``env.spec.max_episode_steps`` is ``time_limit``: every episode lasts at most that long.

    ## Info

    Every ``info``, from ``reset`` on, holds the same keys (flat, fixed types):

    | Key | Type | Meaning |
    |---|---|---|
    | ``distance`` | float | m from the agent to the nearest opponent |
    | ``reward_capture`` | float | the capture term of this step's reward (0.0 at reset) |
    | ``reward_escape`` | float | the escape term |
    | ``reward_shaping`` | float | the shaping term |
    | ``is_success`` | bool | on the final step, the outcome; ``False`` before it |
    | ``capture_step`` | int | on the final step, the step of capture; ``-1`` otherwise |

    ## Arguments

    ``gym.make("steer_env/Pursuit-v0", render_mode=None, **kwargs)`` accepts every field of
    :class:`steer_env.tasks.config.TaskConfig`, validated at construction: unknown names and
    values outside these ranges raise ``ValueError`` naming the argument. The ranges are
    physical bounds within which every configuration simulates with finite state.

    | Argument | Accepted | Pursuit-v0 / Evasion-v0 default |
    |---|---|---|
    | ``n_opponents`` | integer in [1, 32] | 1 evader / 2 pursuers |
    | ``arena_size`` | [2, 10^4] m | 25 |
    | ``dt`` | (0, 1] s | 0.1 |
    | ``time_limit`` | integer in [1, 10^7] steps | 100 |
    | ``capture_radius`` | (0, arena_size / 2) m | 0.8 |
    | ``min_start_distance`` | (capture_radius, arena_size - 2 vehicle_radius) m | 6 |
    | ``vehicle_radius`` | (0, arena_size / 4) m | 0.3 |
    | ``agent_max_speed``, ``opponent_max_speed`` | (0, 1000] m/s | 3, 3 |
    | ``agent_max_force``, ``opponent_max_force`` | (0, 10^6] N | 6, 10 / 6, 6 |
    | ``agent_mass``, ``opponent_mass`` | [0.001, 10^6] kg | 1, 1 |
    | ``max_observed_opponents`` | integer in [0, 32]; 0 = n_opponents | 0 |
    | ``reward_shaping`` | True / False | True |
    | ``shaping_scale`` | [0, 10^6] | 1 |
    | ``shaping_gamma`` | (0, 1]: set it to the learner's discount | 0.99 |
    | ``wall_weight`` | [0, 10^6] | 3 |
    | ``evade_weight``, ``wander_weight`` | [0, 10^6] | 1, 1 |
    | ``pursuit_weight``, ``separation_weight`` | [0, 10^6] | 1, 1 |
    | ``feeler_length`` | (0, arena_size / 2) m | 2 |
    | ``threat_range`` | (0, 10^5] m | 8 |
    | ``wander_radius`` | (0, 10^4] m | 1 |
    | ``wander_distance`` | [0, 10^4] m | 2 |
    | ``wander_jitter`` | [0, 10^6] m/s | 8 |
    | ``separation_radius`` | (0, 10^5] m | 3 |
    | ``max_prediction_time`` | (0, 10^6] s | 3 |
    | ``opponent_strategy`` | a name of the opponents' strategies, or a ``Strategy`` | classic |
    | ``obstacles`` | ``None`` or ``(x, y, radius)`` circles, m; gaps >= 2 vehicle_radius | None |
    | ``n_obstacles`` | integer in [0, 64]: circles placed at each reset from the seed | 0 |
    | ``obstacle_radius_min``, ``obstacle_radius_max`` | (0, 10^4] m, min <= max | 1, 2 |
    | ``obstacle_gap`` | [2 vehicle_radius, 10^4] m | 1 |
    | ``observed_obstacles`` | integer in [-1, 64]; -1 = min(obstacles, 4) | -1 |
    | ``obstacle_weight`` | [0, 10^6] | 6 |
    | ``detection_length`` | (0, 10^4] m | 4 |

    The episode length is ``time_limit``. ``gym.make(..., max_episode_steps=N)`` and
    ``gym.make_vec(..., max_episode_steps=N)`` keep Gymnasium's meaning: an episode still
    running after ``N`` steps is truncated (``truncated=True``), the task unchanged.

    ``render_mode``: ``"human"`` (a pygame window at 10 fps) or ``"rgb_array"`` (an
    ``(H, W, 3)`` uint8 frame, headless), both needing ``pip install "steer-env[render]"``.

    The unwrapped env exposes read-only copies of the state: ``positions``, ``velocities``,
    ``headings`` (``(n, 2)``), ``is_pursuer``, ``max_speeds``, ``max_forces``, ``masses``,
    ``radii`` (``(n,)``), ``agent_index`` (always 0) and ``elapsed_steps``.

    ## Version History

    * v0: initial release.

    >>> import gymnasium as gym
    >>> import steer_env
    >>> env = gym.make("steer_env/Pursuit-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (16,)
    """

    task: ClassVar[Task] = PURSUIT


#: The ``vector_entry_point`` of ``steer_env/Pursuit-v0`` (``gym.make_vec``).
make_pursuit_vector = PursuitEnv.vector_env
