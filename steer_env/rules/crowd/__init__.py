"""Crowd navigation rules: robots cross a crowd of scripted pedestrians to their goals
(Crowd-v0, crowd_v0), measured the way CrowdNav measures.

* **Teams**: ``robot`` and ``human``. The robots are the learned agents (or a scripted
  baseline); the humans run a strategy of classic behaviours
  (:mod:`steer_env.tasks.crowd`). A robot leaves the game on the step its centre comes
  within ``goal_radius`` of its goal; humans never leave.
* **Collision**: a robot whose body touched another vehicle's in the game during the step
  (closest approach of the linear relative motion, so fast vehicles cannot pass through
  each other: :func:`~steer_env.engine.step.swept_distance`).
* **Episode end**: every robot at its goal (a success), a collision, or ``time_limit``
  steps (a time-out).
* **Rewards** (named terms, each robot its own): ``goal`` (``success_reward`` on the step
  the robot reaches its goal), ``collision`` (``-collision_penalty`` on the step it
  collides), ``discomfort`` (CrowdNav's ``(d_min - discomfort_distance) *
  discomfort_factor * dt`` on a step whose closest gap ``d_min`` to a human's body is
  below ``discomfort_distance`` without a collision) and ``progress`` (potential-based,
  ``shaping_gamma * phi(s') - phi(s)`` with ``phi = -progress_scale * d`` for the distance
  ``d`` to its goal, ``phi = 0`` in terminal states; ``progress_scale = 0`` leaves
  CrowdNav's reward).
* **Start** (:data:`SCENARIOS`): robot ``k`` of ``K`` starts on the circle of radius
  ``robot_distance`` at the angle ``-pi/2 + 2 pi k / K`` and its goal is the opposite
  point (one robot: from ``(0, -4)`` to ``(0, 4)``). Each human takes the first of
  :data:`HUMAN_CANDIDATES` candidates of its scenario whose start and goal both keep
  ``discomfort_distance`` between bodies from every start and goal already placed (the
  candidate farthest from them when none does):

  - ``circle_crossing``: a start on the circle of radius ``circle_radius`` at a uniform
    angle, moved by a uniform offset of up to ``human_noise`` m in x and in y; the goal is
    the start's opposite point (CrowdNav's scenario);
  - ``square_crossing``: a start uniform on one side (x of random sign) of the square of
    side ``square_width``, the goal uniform on the other side (CrowdNav's);
  - ``parallel_traffic``: two streams along the robots' path in opposite directions: x
    uniform in ``[-square_width/4, square_width/4]``, a start within the first half of its
    stream's way, the goal at the far end.

  Every vehicle starts at rest facing its goal. Obstacles placed per episode come last,
  around the starts; one that covers a goal is left out.
* **Observation**: :data:`FEATURES`, in the robot's frame: the egocentric head every task
  shares (own velocity, walls, time, the other robots and the nearest humans in slots:
  :mod:`steer_env.engine.egocentric`), then the offset to its goal, then the nearest
  obstacles.
* **Outcome** (at the end of each episode, :data:`ENV_RESULT`): success, collision and
  time-out (one of the three), the step of success, the discomfort frequency (steps with
  a robot closer than ``discomfort_distance`` to a human, over the robots' steps in the
  game) and the mean closest gap over those steps, CrowdNav's metrics.

This module is plain Python; the compiled stages are :mod:`.compiled`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.egocentric import OBSTACLES, OTHER, SELF, other_rows
from steer_env.engine.features import Feature, FeatureGroup, FeatureTable
from steer_env.engine.layout import OBSTACLE_WORLD_FIELDS, ObstacleField, world_record

#: The teams, by code (``VEHICLE.team``).
TEAMS = ("robot", "human")
ROBOT, HUMAN = 0, 1

#: The start scenarios (``WORLD.scenario_code`` is the index).
SCENARIOS = ("circle_crossing", "square_crossing", "parallel_traffic")
CIRCLE_CROSSING, SQUARE_CROSSING, PARALLEL_TRAFFIC = 0, 1, 2

#: Candidate (start, goal) pairs drawn per human at reset.
HUMAN_CANDIDATES = 16
#: Random draws per candidate (the most any scenario uses).
CANDIDATE_DRAWS = 5
#: Random draws per vehicle at reset (robots use none of theirs).
RESET_DRAWS_PER_VEHICLE = HUMAN_CANDIDATES * CANDIDATE_DRAWS

# --------------------------------------------------------------------------- observation
#: The other robots (``observed_teammates`` slots) and the nearest humans
#: (``observed_opponents``), nearest first, empty slots all zero.
ROBOT_SLOTS = FeatureGroup("robot", OTHER, "observed_teammates", other_rows("robot", "a"))
HUMAN_SLOTS = FeatureGroup("human", OTHER, "observed_opponents", other_rows("human", "a"))
#: Where the robot must go.
GOAL = FeatureGroup(
    "goal",
    (
        Feature("offset_forward", "goal offset, forward / arena diagonal"),
        Feature("offset_side", "goal offset, side / arena diagonal"),
    ),
    rows=((2, "offset to the robot's goal / arena diagonal"),),
)
FEATURES = FeatureTable((SELF, ROBOT_SLOTS, HUMAN_SLOTS, GOAL, OBSTACLES))

# Positions the compiled writer and decoder use (constants there), from the group's start.
GOAL_OFFSET = GOAL.index("offset_forward")

# --------------------------------------------------------------------------- records
#: The world record the compiled stages read. ``dt`` and ``half_size`` are the engine's;
#: ``observed_teammates`` / ``observed_opponents`` the egocentric observation's (other
#: robots / nearest humans).
WORLD = np.dtype(
    [
        ("dt", "f8"),  # s
        ("half_size", "f8"),  # m
        ("arena_size", "f8"),  # m
        ("diagonal", "f8"),  # m
        ("time_limit", "i8"),  # steps
        ("scenario_code", "i8"),  # index in SCENARIOS
        ("robot_distance", "f8"),  # m: robots start this far from the centre, goals opposite
        ("circle_radius", "f8"),  # m: circle_crossing's circle
        ("square_width", "f8"),  # m: square_crossing's square, parallel_traffic's way
        ("human_noise", "f8"),  # m: circle_crossing's start offset, at most, in x and y
        ("goal_radius", "f8"),  # m: a robot this near its goal has reached it
        ("success_reward", "f8"),
        ("collision_penalty", "f8"),
        ("discomfort_distance", "f8"),  # m, between bodies
        ("discomfort_factor", "f8"),
        ("progress_scale", "f8"),  # per m of distance to the goal (0: no shaping)
        ("shaping_gamma", "f8"),
        ("observed_teammates", "i8"),
        ("observed_opponents", "i8"),
        *OBSTACLE_WORLD_FIELDS,
    ],
    align=True,
)

#: Reward terms, each a field of :data:`AGENT_RESULT`; ``reward`` is their sum.
REWARD_TERMS = ("goal", "collision", "discomfort", "progress")

AGENT_RESULT = np.dtype(
    [
        ("reward", "f8"),
        ("goal", "f8"),  # reward term: success_reward on the step the robot reaches its goal
        ("collision", "f8"),  # reward term: -collision_penalty on the step it collides
        ("discomfort", "f8"),  # reward term: CrowdNav's discomfort penalty
        ("progress", "f8"),  # reward term: potential-based progress to the goal
        ("gap", "f8"),  # m: closest gap between its body and a human's during the step
        ("goal_distance", "f8"),  # m from its centre to its goal after the step
        ("terminated", "?"),  # its episode is over (it reached its goal or the env ended)
        ("arrived", "?"),  # it reached its goal on this step
        ("collided", "?"),  # it collided on this step
    ],
    align=True,
)

ENV_RESULT = np.dtype(
    [
        ("done", "?"),  # the episode ended on this step
        ("timed_out", "?"),  # it reached time_limit on this step without success
        ("is_success", "?"),  # every robot at its goal, none collided
        ("collisions", "i8"),  # robots that collided on this step
        ("robots_left", "i8"),  # robots still in the game after the step
        # The outcome, written on the step that ends the episode (zero before):
        ("goal_step", "i8"),  # the step the last robot reached its goal; -1 unless success
        ("collision_rate", "f8"),  # 1 if the episode ended in a collision (its mean: the rate)
        ("timeout_rate", "f8"),  # 1 if it ended at the time limit without success
        ("navigation_time", "f8"),  # s to success (0 unless success)
        ("discomfort_frequency", "f8"),  # too-close robot-steps / robot-steps in the game
        ("danger_distance", "f8"),  # m: mean closest gap over the too-close steps (0: none)
    ],
    align=True,
)

#: What these rules keep over an episode (``State.episode``).
EPISODE = np.dtype(
    [
        ("robot_steps", "i8"),  # robot-steps in the game so far
        ("danger_steps", "i8"),  # of those, closer than discomfort_distance to a human
        ("danger_gap", "f8"),  # m: their closest gaps, summed
    ],
    align=True,
)

#: The outcome's fields (of :data:`ENV_RESULT`) every info reports at episode end, and
#: the comparisons average per agent: CrowdNav's metrics besides the success rate and the
#: navigation time (``navigation_time``, the comparisons' mean time among successes).
OUTCOME = (
    "collision_rate",
    "timeout_rate",
    "discomfort_frequency",
    "danger_distance",
)


@dataclass(frozen=True)
class World:
    """Arena, start, episode and reward parameters shared by every environment of a
    batch."""

    dt: float
    arena_size: float
    time_limit: int
    scenario: str
    robot_distance: float
    circle_radius: float
    square_width: float
    human_noise: float
    goal_radius: float
    observed_teammates: int
    observed_opponents: int
    success_reward: float = 1.0
    collision_penalty: float = 0.25
    discomfort_distance: float = 0.2
    discomfort_factor: float = 0.5
    progress_scale: float = 0.0
    shaping_gamma: float = 1.0
    obstacles: ObstacleField = field(default_factory=ObstacleField)

    @property
    def observed_obstacles(self) -> int:
        return self.obstacles.observed

    @property
    def rules(self) -> ModuleType:
        """The rules these parameters are for (this module)."""
        return importlib.import_module(__name__)

    @property
    def scenario_code(self) -> int:
        """The scenario's index in :data:`SCENARIOS`."""
        return SCENARIOS.index(self.scenario)

    def record(self) -> NDArray[np.void]:
        """The :data:`WORLD` record (a length-1 array) the compiled step reads."""
        return world_record(self, WORLD)

    @property
    def obs_dim(self) -> int:
        return FEATURES.size(self)


def load_compiled() -> ModuleType:
    """The compiled stages and entry points (imported on first use)."""
    return importlib.import_module(f"{__name__}.compiled")


def draw_overlay(renderer: Any, batch: Any, env: int) -> None:
    """What these rules add to a frame of environment ``env``: each robot's goal (a ring
    of ``goal_radius``, filled once reached) and each human's goal as a small point."""
    from steer_env.rendering import ROLE_COLORS

    state = batch.state
    robots = np.flatnonzero(batch.is_team("robot"))
    radius = max(batch.world.goal_radius, 0.15)
    for i in robots.tolist():
        reached = not bool(state.alive[env, i])
        renderer.circle(state.goal[env, i], radius, ROLE_COLORS["goal"], width=0 if reached else 2)
    for i in np.flatnonzero(batch.is_team("human")).tolist():
        renderer.point(state.goal[env, i], ROLE_COLORS["trail"], size_px=3)
