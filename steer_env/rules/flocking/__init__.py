"""Flocking rules: a flock of boids migrates across the field to a goal region while
scripted predators hunt it (Flocking-v0, flocking_v0).

* **Teams**: ``boid`` and ``predator``. The learned boids are the first of the flock's
  boids (all of them in the PettingZoo form, one in the Gymnasium form); the others run
  Reynolds' flock (:mod:`steer_env.tasks.flocking`), the predators pursuit of the nearest
  boid.
* **Catch**: a boid whose centre comes within ``catch_radius`` of a predator's during the
  step (closest approach of the linear relative motion:
  :func:`~steer_env.engine.step.swept_distance`) is caught and leaves the game.
* **Collision**: a boid whose body touched another boid's during the step (the same swept
  test, against the sum of the radii).
* **Groups**: two boids in the game are linked when their centres are at most
  ``link_distance`` apart; a group is a connected component of that graph.
* **Success**: the largest group of the boids inside the goal region (centre within
  ``goal_radius`` of the goal, links among those boids only) holds at least
  ``success_fraction`` of the flock (``n_boids``, caught boids included).
* **Episode end**: success, every learned boid caught, too few boids left in the game to
  succeed, or ``time_limit`` steps (a time-out).
* **Rewards** (named terms, each learned boid its own): ``success`` (``success_reward`` to
  every boid in the game on the step the flock succeeds), ``progress``
  (``shaping_gamma * phi(s') - phi(s)`` with ``phi = -progress_scale * d`` for the
  distance ``d`` to the goal's centre; ``phi = 0`` once the flock succeeds, a caught boid
  and a time-out keeping theirs), ``collision`` (``-collision_penalty`` on a step it
  touches another boid) and ``caught`` (``-caught_penalty`` on the step it is caught).
* **Start**: the flock's centre at ``(-route_length / 2, 0)``, the goal's at
  ``(route_length / 2, 0)``. Each boid takes the first of :data:`START_CANDIDATES` points
  uniform in the start disc (radius ``start_radius``) whose body keeps ``start_gap``
  between bodies from every boid already placed (the roomiest one if none does); each
  predator a point uniform in the square of side ``predator_zone`` around the field's
  centre. Every vehicle starts at rest, the boids facing the goal, the predators the
  flock. Obstacles placed per episode come last, around the starts, clear of the goal.
* **Observation**: :data:`FEATURES`, in the boid's frame: the egocentric head every task
  shares (own velocity, walls, time, the nearest other boids and the nearest predators in
  slots: :mod:`steer_env.engine.egocentric`), the offset to the goal's centre, then the
  nearest obstacles. The slots' positions are in the near field: offset /
  (``observation_range`` + distance), so the few metres where catches and collisions
  happen span most of [-1, 1].
* **Outcome** (at the end of each episode, :data:`ENV_RESULT`): the arrival step and
  time, the fraction of the flock inside the goal region, the boids caught, collisions per
  boid-minute, the least distance between two boids, the polarisation, the largest
  group's fraction and the neighbour loss rate (:data:`OUTCOME`).

This module is plain Python; the compiled stages are :mod:`.compiled`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.egocentric import OBSTACLES, OTHER, SELF, other_rows
from steer_env.engine.features import Feature, FeatureGroup, FeatureTable
from steer_env.engine.layout import OBSTACLE_WORLD_FIELDS, ObstacleField, world_record

#: The teams, by code (``VEHICLE.team``).
TEAMS = ("boid", "predator")
BOID, PREDATOR = 0, 1

#: Candidate start points drawn per vehicle at reset.
START_CANDIDATES = 16
#: Random draws per vehicle at reset (two per candidate).
RESET_DRAWS_PER_VEHICLE = 2 * START_CANDIDATES

# --------------------------------------------------------------------------- observation
#: What a slot's position means here: the egocentric slot's offset rescaled to
#: offset / (``observation_range`` + distance) (the compiled ``to_near_field``).
NEAR_FIELD = "/ (observation_range + distance)"
#: One observed boid or predator: the egocentric slot, its position in the near field.
NEAR_OTHER = tuple(
    replace(f, meaning=f.meaning.replace("/ arena diagonal", NEAR_FIELD)) for f in OTHER
)


def _near_rows(who: str) -> tuple[tuple[int, str], ...]:
    rows = other_rows(who, "a")
    return ((2, f"{who} k offset from the agent {NEAR_FIELD}"), *rows[1:])


#: The nearest other boids (``observed_teammates`` slots) and predators
#: (``observed_opponents``), nearest first, empty slots all zero.
BOID_SLOTS = FeatureGroup("boid", NEAR_OTHER, "observed_teammates", _near_rows("boid"))
PREDATOR_SLOTS = FeatureGroup("predator", NEAR_OTHER, "observed_opponents", _near_rows("predator"))
#: Where the flock must go.
GOAL = FeatureGroup(
    "goal",
    (
        Feature("offset_forward", "goal centre offset, forward / arena diagonal"),
        Feature("offset_side", "goal centre offset, side / arena diagonal"),
    ),
    rows=((2, "offset to the goal region's centre / arena diagonal"),),
)
FEATURES = FeatureTable((SELF, BOID_SLOTS, PREDATOR_SLOTS, GOAL, OBSTACLES))

# Positions the compiled writer and decoder use (constants there), from the group's start.
GOAL_OFFSET = GOAL.index("offset_forward")

# --------------------------------------------------------------------------- records
#: The world record the compiled stages read. ``dt`` and ``half_size`` are the engine's;
#: ``observed_teammates`` / ``observed_opponents`` the egocentric observation's (nearest
#: boids / predators).
WORLD = np.dtype(
    [
        ("dt", "f8"),  # s
        ("half_size", "f8"),  # m
        ("arena_size", "f8"),  # m
        ("diagonal", "f8"),  # m
        ("time_limit", "i8"),  # steps
        ("n_boids", "i8"),  # the flock, caught boids included
        ("route_length", "f8"),  # m from the start disc's centre to the goal's
        ("start_radius", "f8"),  # m
        ("start_gap", "f8"),  # m between bodies at the start
        ("predator_zone", "f8"),  # m: side of the predators' start square
        ("goal_radius", "f8"),  # m
        ("catch_radius", "f8"),  # m between centres
        ("link_distance", "f8"),  # m between centres
        ("success_fraction", "f8"),
        ("success_reward", "f8"),
        ("progress_scale", "f8"),  # per m of distance to the goal's centre
        ("shaping_gamma", "f8"),
        ("collision_penalty", "f8"),
        ("caught_penalty", "f8"),
        ("observed_teammates", "i8"),
        ("observed_opponents", "i8"),
        ("observation_range", "f8"),  # m: the slots' positions / (this + distance)
        *OBSTACLE_WORLD_FIELDS,
    ],
    align=True,
)

#: Reward terms, each a field of :data:`AGENT_RESULT`; ``reward`` is their sum.
REWARD_TERMS = ("success", "progress", "collision", "caught")

AGENT_RESULT = np.dtype(
    [
        ("reward", "f8"),
        ("success", "f8"),  # reward term: success_reward on the step the flock succeeds
        ("progress", "f8"),  # reward term: potential-based progress to the goal
        ("collision", "f8"),  # reward term: -collision_penalty on a step it touches a boid
        ("caught", "f8"),  # reward term: -caught_penalty on the step it is caught
        ("goal_distance", "f8"),  # m from its centre to the goal's after the step
        ("terminated", "?"),  # it left the game (caught) or the episode ended
        ("was_caught", "?"),  # it was caught on this step
        ("touched", "?"),  # it touched another boid on this step
    ],
    align=True,
)

ENV_RESULT = np.dtype(
    [
        ("done", "?"),  # the episode ended on this step
        ("timed_out", "?"),  # it reached time_limit on this step without success
        ("is_success", "?"),  # the largest group in the goal region holds enough boids
        ("collisions", "i8"),  # boids that touched another boid on this step
        ("catches", "i8"),  # boids caught on this step
        ("boids_left", "i8"),  # boids in the game after the step
        # The outcome, written on the step that ends the episode (zero before):
        ("arrival_step", "i8"),  # the step of success; -1 unless success
        ("arrival_time", "f8"),  # s to success; -1 unless success
        ("arrival_fraction", "f8"),  # boids in the goal region at the end / n_boids
        ("boids_caught", "f8"),  # boids caught in the episode
        ("collision_rate", "f8"),  # boid-steps touching another boid per boid-minute
        ("min_separation", "f8"),  # m: least centre distance of two boids (-1: never two)
        ("polarization", "f8"),  # mean over steps of |mean heading| of the boids
        ("largest_group", "f8"),  # mean over steps of the largest group / n_boids
        ("neighbor_loss_rate", "f8"),  # boid-steps with no boid within link_distance
    ],
    align=True,
)

#: What these rules keep over an episode (``State.episode``).
EPISODE = np.dtype(
    [
        ("boid_steps", "i8"),  # boid-steps in the game so far
        ("contact_steps", "i8"),  # of those, touching another boid
        ("isolated_steps", "i8"),  # of those, with no boid within link_distance
        ("caught", "i8"),  # boids caught so far
        ("measured_steps", "i8"),  # steps measured (polarisation, groups)
        ("polarization_sum", "f8"),
        ("group_sum", "f8"),  # largest groups, over n_boids, summed
        ("min_separation", "f8"),  # m (inf: never two boids)
    ],
    align=True,
)

#: The outcome's fields (of :data:`ENV_RESULT`) every info reports at episode end, and
#: the comparisons average per agent (the arrival time is the comparisons' time among
#: successes).
OUTCOME = (
    "arrival_fraction",
    "boids_caught",
    "collision_rate",
    "min_separation",
    "polarization",
    "largest_group",
    "neighbor_loss_rate",
)


@dataclass(frozen=True)
class World:
    """Arena, start, episode and reward parameters shared by every environment of a
    batch."""

    dt: float
    arena_size: float
    time_limit: int
    n_boids: int
    route_length: float
    start_radius: float
    start_gap: float
    predator_zone: float
    goal_radius: float
    catch_radius: float
    link_distance: float
    success_fraction: float
    observed_teammates: int
    observed_opponents: int
    observation_range: float = 5.0
    success_reward: float = 1.0
    progress_scale: float = 0.0
    shaping_gamma: float = 1.0
    collision_penalty: float = 0.0
    caught_penalty: float = 0.0
    obstacles: ObstacleField = field(default_factory=ObstacleField)

    @property
    def observed_obstacles(self) -> int:
        return self.obstacles.observed

    @property
    def rules(self) -> ModuleType:
        """The rules these parameters are for (this module)."""
        return importlib.import_module(__name__)

    @property
    def goal(self) -> tuple[float, float]:
        """The goal region's centre, m."""
        return self.route_length / 2.0, 0.0

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
    """What these rules add to a frame of environment ``env``: the goal region (a ring of
    ``goal_radius``) and the start disc (a point at its centre)."""
    from steer_env.rendering import ROLE_COLORS

    world = batch.world
    renderer.circle(world.goal, world.goal_radius, ROLE_COLORS["goal"], width=2)
    renderer.point((-world.route_length / 2.0, 0.0), ROLE_COLORS["trail"], size_px=3)
