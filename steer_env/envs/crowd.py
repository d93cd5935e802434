"""Crowd-v0: a learned robot crosses a crowd of scripted pedestrians to its goal."""

from __future__ import annotations

from typing import Any, ClassVar

from steer_env.envs.base import SteerEnv
from steer_env.tasks.crowd import CROWD, CrowdConfig, CrowdTask


class CrowdEnv(SteerEnv):
    """
    ## Description

    CrowdNav's crowd navigation task: a robot goes from ``(0, -4)`` to its goal at ``(0,
    4)`` through ``n_humans`` (5) scripted pedestrians that start on a circle of radius 4 m
    and walk to the opposite point (``scenario="circle_crossing"``; also
    ``"square_crossing"`` and ``"parallel_traffic"``). Every body is 0.3 m in radius and
    everyone's top speed 1 m/s; a step is 0.25 s and an episode at most 25 s. The humans are
    written with the classic steering behaviours: unaligned collision avoidance and
    separation among themselves, arrive at their goal, obstacle avoidance when there are
    obstacles; by default they do not see the robot (``visible=False``, the setting of
    CrowdNav's published results), so avoiding them is the robot's job. The scripted
    baselines are the ``classic`` robot (the humans' own model, which sees everyone) and
    ``seek`` (a straight line to the goal) (:mod:`steer_env.tasks.crowd`).

    Units: metres, seconds, kilograms, newtons. The walled square is ``[-arena_size/2,
    arena_size/2]^2`` (14 m: the walls are out of the crowd's way); the agent's frame has x
    forward (along its heading) and y to its left.

    ## Action Space

    ``Box(-1, 1, (2,), float32)``: the steering force in the robot's frame, in units of its
    ``robot_max_force`` (4 N on 1 kg: full speed from rest in one step); the vector's
    magnitude is clipped to 1.

    | Num | Action        | Min | Max |
    |-----|---------------|-----|-----|
    | 0   | forward force | -1  | 1   |
    | 1   | side force    | -1  | 1   |

    ## Observation Space

    ``Box(-1, 1, (13 + 5 * K + 4 * L,), float32)``, in the robot's frame, with ``K``
    slots for the nearest humans, nearest first (``observed_humans``; padding beyond
    ``n_humans``, so a policy plays any crowd size), and ``L`` obstacle slots
    (``observed_obstacles``; K = 5, L = 0 and 38 values by default):

    | Index | Observation | Min | Max |
    |-------|-------------|-----|-----|
    | 0, 1 | own velocity (forward, side) / max speed | -1 | 1 |
    | 2, 3 | offset to the nearest point of the west wall / arena_size | -1 | 1 |
    | 4, 5 | ... east wall | -1 | 1 |
    | 6, 7 | ... south wall | -1 | 1 |
    | 8, 9 | ... north wall | -1 | 1 |
    | 10 | elapsed time: 2 * step / time_limit - 1 | -1 | 1 |
    | 11 + 5k + 0, 1 | human k position relative to the agent / arena diagonal | -1 | 1 |
    | 11 + 5k + 2, 3 | human k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 11 + 5k + 4 | 1 if slot k holds a human, 0 if it is padding | 0 | 1 |
    | 11 + 5K, 12 + 5K | offset to the robot's goal / arena diagonal | -1 | 1 |
    | 13 + 5K + 4k + 0, 1 | offset to obstacle k's nearest edge point / arena diagonal | -1 | 1 |
    | 13 + 5K + 4k + 2 | obstacle k's radius / arena_size | 0 | 1 |
    | 13 + 5K + 4k + 3 | 1 if slot k holds an obstacle, 0 if it is padding | 0 | 1 |

    ## Obstacles

    None by default. ``obstacles=[(x, y, radius), ...]`` fixes a layout; ``n_obstacles=N``
    places ``N`` anew at each reset from the seed (radii uniform in
    ``[obstacle_radius_min, obstacle_radius_max]``, 0.3 to 0.8 m, each at least
    ``obstacle_gap`` from the walls, the other obstacles and every start; one that would
    cover a goal is left out). No body ever overlaps one; the nearest
    ``observed_obstacles`` are observed; the humans and the classic robot avoid them.

    ## Rewards

    CrowdNav's, each a term of ``info``:

    * ``goal``: ``success_reward`` (1) on the step the robot's centre comes within
      ``goal_radius`` (0.3 m) of its goal.
    * ``collision``: ``-collision_penalty`` (-0.25) on the step its body touches a human's
      (the closest approach during the step, so nobody passes through anybody).
    * ``discomfort``: ``(d_min - discomfort_distance) * discomfort_factor * dt`` on a step
      whose closest gap ``d_min`` between its body and a human's is below
      ``discomfort_distance`` (0.2 m) without a collision (factor 0.5).
    * ``progress``: potential-based shaping, ``shaping_gamma * phi(s') - phi(s)`` with
      ``phi = -progress_scale * d``, ``d`` the distance to the goal, ``phi = 0`` in
      terminal states: an episode's shaped return is CrowdNav's return minus ``phi(s_0)``
      (Ng, Harada and Russell 1999), so the shaping guides exploration and leaves the
      optimal policy unchanged. ``progress_scale=0`` gives CrowdNav's reward exactly.

    ## Starting State

    The robot at rest at ``(0, -robot_distance)`` facing its goal ``(0, robot_distance)``.
    Each human takes the first of 16 candidate (start, goal) pairs of its scenario that
    keeps ``discomfort_distance`` between bodies from every start and goal already placed
    (the best one if none does), at rest, facing its goal:

    * ``circle_crossing``: on the circle of radius ``circle_radius`` (4 m) at a uniform
      angle, moved by up to ``human_noise`` (0.5 m) in x and in y; the goal opposite.
    * ``square_crossing``: a start on one side of the ``square_width`` (10 m) square, the
      goal uniform on the other side.
    * ``parallel_traffic``: two streams along the robot's path, in opposite directions.

    ## Episode End

    * Termination: the robot reaches its goal (``info["is_success"] = True``), or it
      collides (``info["collision_rate"] = 1``).
    * Termination: ``time_limit`` steps (100, i.e. 25 s), a time-out
      (``info["timeout_rate"] = 1``). Time is observed, so the limit is part of the task,
      as in the project's other envs; ``env.spec.max_episode_steps`` reports it.

    ## Info

    The same keys on every step and at reset (too close: a gap between the robot's body
    and a human's below ``discomfort_distance``):

    | Key | Type | Meaning |
    |---|---|---|
    | ``reward_goal``, ``reward_collision`` | float | the reward's terms |
    | ``reward_discomfort``, ``reward_progress`` | float | the reward's terms |
    | ``collisions`` | int | robots that collided on this step |
    | ``robots_left`` | int | robots not yet at their goal |
    | ``is_success`` | bool | on the final step: every robot at its goal, no collision |
    | ``goal_step`` | int | on the final step of a success, its step; ``-1`` otherwise |
    | ``navigation_time`` | float | on the final step of a success, s to it; ``-1`` otherwise |
    | ``collision_rate`` | float | on the final step, 1 if the episode ended in a collision |
    | ``timeout_rate`` | float | on the final step, 1 if it reached the time limit |
    | ``discomfort_frequency`` | float | on the final step, the fraction of steps too close |
    | ``danger_distance`` | float | on the final step, m, the mean gap when too close |

    Averaged over episodes, ``is_success``, ``collision_rate``, ``timeout_rate``,
    ``navigation_time`` (over the successes), ``discomfort_frequency`` and
    ``danger_distance`` are CrowdNav's metrics; ``python -m agents.compare --env crowd``
    reports them with 95% intervals.

    ## Arguments

    ``gym.make("steer_env/Crowd-v0", render_mode=None, **kwargs)`` accepts every field of
    :class:`steer_env.tasks.crowd.CrowdConfig`, validated at construction: unknown names
    and values out of range raise ``ValueError`` naming the argument.

    | Argument | Accepted | Default |
    |---|---|---|
    | ``n_humans`` | integer in [1, 1000] | 5 |
    | ``n_robots`` | integer in [1, 16] (Crowd-v0 steps one; see ``crowd_v0``) | 1 |
    | ``scenario`` | ``circle_crossing``, ``square_crossing``, ``parallel_traffic`` | circle |
    | ``visible`` | True / False: the humans see the robot | False |
    | ``arena_size`` | [2, 10^4] m | 14 |
    | ``dt`` | (0, 1] s | 0.25 |
    | ``time_limit`` | integer in [1, 10^7] steps | 100 |
    | ``robot_distance``, ``circle_radius`` | (0, 10^4] m, inside the walls | 4, 4 |
    | ``square_width`` | (0, 10^4] m, inside the walls | 10 |
    | ``human_noise`` | [0, 10^4] m | 0.5 |
    | ``vehicle_radius``, ``goal_radius`` | (0, arena_size / 4) m, (0, 10^4] m | 0.3, 0.3 |
    | ``robot_max_speed``, ``robot_max_force`` | (0, 1000] m/s, (0, 10^6] N | 1, 4 |
    | ``robot_mass`` | [0.001, 10^6] kg | 1 |
    | ``human_max_speed``, ``human_max_force``, ``human_mass`` | as the robot's | 1, 2, 1 |
    | ``avoid_weight``, ``separation_weight``, ``arrive_weight`` | [0, 10^6] | 2, 1, 1 |
    | ``avoid_radius``, ``separation_radius``, ``slowing_radius`` | (0, 10^4] m | 4, 1, 1 |
    | ``time_horizon`` | (0, 10^4] s | 2 |
    | ``combination`` | ``"prioritized"``, ``"weighted_sum"``, ``"dithered"`` | ``"prioritized"`` |
    | ``human_strategy`` | ``None`` (the pedestrians) or any ``Strategy`` | None |
    | ``observed_humans`` | integer in [0, 1000] | 5 |
    | ``max_observed_robots`` | -1 (``n_robots - 1``) or [0, n_robots - 1] | -1 |
    | ``success_reward``, ``collision_penalty`` | [0, 10^6] | 1, 0.25 |
    | ``discomfort_factor``, ``progress_scale`` | [0, 10^6] | 0.5, 0.1 |
    | ``discomfort_distance`` | [0, 10^4] m | 0.2 |
    | ``shaping_gamma`` | (0, 1] | 0.99 |
    | ``obstacles`` | ``None`` or ``(x, y, radius)`` circles, m; gaps >= 2 vehicle_radius | None |
    | ``n_obstacles`` | integer in [0, 64]: circles placed at each reset from the seed | 0 |
    | ``obstacle_radius_min``, ``obstacle_radius_max`` | (0, 10^4] m, min <= max | 0.3, 0.8 |
    | ``obstacle_gap`` | [2 vehicle_radius, 10^4] m | 0.6 |
    | ``observed_obstacles`` | integer in [-1, 64]; -1 = min(obstacles, 4) | -1 |
    | ``obstacle_weight`` | [0, 10^6] | 6 |
    | ``detection_length`` | (0, 10^4] m | 1.5 |

    ``render_mode``: ``"human"`` or ``"rgb_array"`` (``pip install "steer-env[render]"``):
    the goals, the humans and the robot.

    ## Version History

    * v0: initial release.

    >>> import gymnasium as gym
    >>> import steer_env
    >>> env = gym.make("steer_env/Crowd-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (38,)
    """

    task: ClassVar[CrowdTask] = CROWD

    def __init__(self, render_mode: str | None = None, **kwargs: object) -> None:
        super().__init__(render_mode, **kwargs)
        _check_one_robot(self.config)

    @classmethod
    def vector_env(cls, num_envs: int = 1, **kwargs: Any) -> Any:
        """``num_envs`` Crowd-v0 environments in one native batch (one learned robot
        each)."""
        venv = super().vector_env(num_envs, **kwargs)
        _check_one_robot(venv.config)
        return venv


def _check_one_robot(cfg: CrowdConfig) -> None:
    """The single-agent forms step one learned robot: ``ValueError`` for another
    ``n_robots``."""
    if cfg.n_robots != 1:
        raise ValueError(
            f"Crowd-v0 has one learned robot: n_robots must be 1, got {cfg.n_robots} "
            "(several robots: steer_env.envs.crowd_v0.parallel_env(n_robots=...))"
        )


#: The ``vector_entry_point`` of ``steer_env/Crowd-v0`` (``gym.make_vec``).
make_crowd_vector = CrowdEnv.vector_env
