"""Herding rules: dogs bring a scripted flock of sheep into a pen (Herding-v0, herding_v0).

* **Teams**: ``dog`` and ``sheep``. The dogs are the learned agents (or scripted ones);
  the sheep run a strategy (Strömbom's sheep written with the classic behaviours:
  :mod:`steer_env.tasks.herding`). Nobody leaves the game.
* **The pen**: a circle of ``pen_radius`` m around ``(pen_x, pen_y)``. A sheep is penned
  while its centre is inside it.
* **Episode end**: at least ``success_fraction`` of the sheep are penned (a success; the
  count needed is ``ceil(success_fraction * n_sheep)``), or ``time_limit`` steps.
* **Rewards** (named terms, the same for every dog): ``success`` (``success_reward`` on
  the step the flock is penned) and ``shaping`` (potential-based, ``shaping_gamma *
  phi(s') - phi(s)`` with ``phi = shaping_scale * (penned_weight * penned_fraction -
  (d + spread_weight * spread) / diagonal)``, ``d`` the flock centre's distance to the pen
  centre and ``spread`` the sheep's mean distance to the flock centre; ``phi = 0`` in
  terminal states, unless ``terminal_potential``).
* **Start**: the flock's square (``start_spread`` m a side) is centred at the first of
  :data:`START_CANDIDATES` uniform candidates at least ``flock_pen_distance`` m from the
  pen centre (the farthest one if none is); every sheep is uniform in that square. Each
  dog takes its first candidate position at least ``dog_start_distance`` m from the flock
  centre (the farthest if none is) and clear of a fixed obstacle layout (a sheep inside
  one is pushed out). All at rest, random headings. Obstacles placed per episode come
  last, around the vehicles and clear of the pen.
* **Observation**: :data:`FEATURES`, in the dog's frame: the egocentric head every task
  shares (own velocity, walls, time, the other dogs and the nearest sheep in slots:
  :mod:`steer_env.engine.egocentric`), then the pen's offset and the flock's summary
  (centre offset and velocity, spread, the offset of the sheep farthest from the centre,
  the fraction penned), and Strömbom's target point (where his dog would go, and whether
  it would collect or drive), then the nearest obstacles.
* **Outcome** (at the end of each episode, :data:`ENV_RESULT`): whether it succeeded and
  on which step, the fraction penned, the flock's cohesion, fragmentation and
  polarisation, the dogs' path length and their control efficiency.

This module is plain Python; the compiled stages are :mod:`.compiled`.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.egocentric import OBSTACLES, OTHER, SELF, other_rows
from steer_env.engine.features import Feature, FeatureGroup, FeatureTable
from steer_env.engine.layout import OBSTACLE_WORLD_FIELDS, ObstacleField, world_record

#: The teams, by code (``VEHICLE.team``).
TEAMS = ("dog", "sheep")
DOG, SHEEP = 0, 1

#: Candidate positions drawn for the flock's centre and for each dog at reset.
START_CANDIDATES = 16
#: Random draws at reset: the flock centre's candidates, then per vehicle
#: ``START_CANDIDATES`` (x, y) pairs (a sheep uses the first), a heading and a wander angle.
RESET_DRAWS_PER_ENV = 2 * START_CANDIDATES
RESET_DRAWS_PER_VEHICLE = 2 * START_CANDIDATES + 2

# --------------------------------------------------------------------------- observation
#: The other dogs (``observed_teammates`` slots) and the nearest sheep
#: (``observed_opponents``), nearest first, empty slots all zero.
DOG_SLOTS = FeatureGroup("dog", OTHER, "observed_teammates", other_rows("dog", "a"))
SHEEP_SLOTS = FeatureGroup("sheep", OTHER, "observed_opponents", other_rows("sheep", "a"))
#: Where the flock must go.
PEN = FeatureGroup(
    "pen",
    (
        Feature("offset_forward", "pen centre offset, forward / arena diagonal"),
        Feature("offset_side", "pen centre offset, side / arena diagonal"),
    ),
    rows=((2, "offset to the pen's centre / arena diagonal"),),
)
#: The flock as a whole.
FLOCK = FeatureGroup(
    "flock",
    (
        Feature("centre_forward", "flock centre offset, forward / arena diagonal"),
        Feature("centre_side", "flock centre offset, side / arena diagonal"),
        Feature("velocity_forward", "flock mean velocity relative to the agent, forward"),
        Feature("velocity_side", "flock mean velocity relative to the agent, side"),
        Feature("spread", "mean distance of the sheep to the flock centre / arena_size", 0.0),
        Feature("farthest_forward", "offset of the sheep farthest from the centre, forward"),
        Feature("farthest_side", "offset of the sheep farthest from the centre, side"),
        Feature("penned", "fraction of the sheep inside the pen", 0.0),
    ),
    rows=(
        (2, "offset to the flock's centre (mean position) / arena diagonal"),
        (2, "flock's mean velocity relative to the agent / (sum of max speeds)"),
        (1, "mean distance of the sheep to the flock centre / arena_size"),
        (2, "offset to the sheep farthest from the flock centre / arena diagonal"),
        (1, "fraction of the sheep inside the pen"),
    ),
)
#: Where Strömbom's dog would go (:func:`steer_env.behaviors.shepherd_target`, the one
#: definition the scripted ``strombom`` dog also steers to): the heuristic's own summary of
#: the flock, in the dog's frame, and whether it says "collect" (a straggler is beyond
#: ``r_a N^(2/3)``) or "drive".
TARGET = FeatureGroup(
    "target",
    (
        Feature("target_forward", "Strömbom's target point offset, forward / arena diagonal"),
        Feature("target_side", "Strömbom's target point offset, side / arena diagonal"),
        Feature("collecting", "1 while Strömbom's dog would collect, 0 while it would drive", 0.0),
    ),
    rows=(
        (2, "offset to Strömbom's collect or drive point / arena diagonal"),
        (1, "1 while Strömbom's dog would collect a straggler, 0 while it would drive"),
    ),
)
FEATURES = FeatureTable((SELF, DOG_SLOTS, SHEEP_SLOTS, PEN, FLOCK, TARGET, OBSTACLES))

# Positions the compiled writer uses (constants there), from the start of their group.
PEN_OFFSET = PEN.index("offset_forward")
FLOCK_CENTRE = FLOCK.index("centre_forward")
FLOCK_VELOCITY = FLOCK.index("velocity_forward")
FLOCK_SPREAD = FLOCK.index("spread")
FLOCK_FARTHEST = FLOCK.index("farthest_forward")
FLOCK_PENNED = FLOCK.index("penned")
TARGET_OFFSET = TARGET.index("target_forward")
TARGET_COLLECTING = TARGET.index("collecting")
PEN_WIDTH = PEN.width
FLOCK_WIDTH = FLOCK.width

# --------------------------------------------------------------------------- records
#: The world record the compiled stages read. ``dt`` and ``half_size`` are the engine's;
#: ``observed_teammates`` / ``observed_opponents`` the egocentric observation's (other
#: dogs / nearest sheep).
WORLD = np.dtype(
    [
        ("dt", "f8"),  # s
        ("half_size", "f8"),  # m
        ("arena_size", "f8"),  # m
        ("diagonal", "f8"),  # m
        ("time_limit", "i8"),  # steps
        ("pen_x", "f8"),  # m
        ("pen_y", "f8"),  # m
        ("pen_radius", "f8"),  # m
        ("penned_needed", "i8"),  # sheep in the pen that end the episode (a success)
        ("success_reward", "f8"),
        ("shaping", "?"),
        ("shaping_scale", "f8"),
        ("shaping_gamma", "f8"),
        ("terminal_potential", "?"),  # the final state keeps its potential
        ("spread_weight", "f8"),
        ("penned_weight", "f8"),
        ("observed_teammates", "i8"),
        ("observed_opponents", "i8"),
        ("start_spread", "f8"),  # m, side of the flock's start square
        ("start_margin", "f8"),  # m from the walls at the start
        ("flock_pen_distance", "f8"),  # m, flock centre from the pen centre at the start
        ("dog_start_distance", "f8"),  # m, each dog from the flock centre at the start
        ("group_radius", "f8"),  # m, sheep this close are connected (fragmentation)
        ("collect_distance", "f8"),  # m, Strömbom's r_a N^(2/3): beyond it the dog collects
        ("collect_offset", "f8"),  # m, the collect point beyond the straggler (r_a)
        ("drive_distance", "f8"),  # m, the drive point behind the flock centre (r_a sqrt N)
        ("target_weight", "f8"),  # weight of the dog's distance to Strömbom's point
        *OBSTACLE_WORLD_FIELDS,
    ],
    align=True,
)

#: Reward terms, each a field of :data:`AGENT_RESULT`; ``reward`` is their sum.
REWARD_TERMS = ("success", "shaping")

AGENT_RESULT = np.dtype(
    [
        ("reward", "f8"),
        ("success", "f8"),  # reward term: success_reward when the flock is penned
        ("shaping", "f8"),  # reward term: potential-based shaping
        ("terminated", "?"),
    ],
    align=True,
)

ENV_RESULT = np.dtype(
    [
        ("done", "?"),  # the episode ended on this step
        ("timed_out", "?"),  # it reached time_limit on this step
        ("is_success", "?"),  # enough sheep penned on this step
        ("penned", "i8"),  # sheep in the pen after the step
        ("flock_distance", "f8"),  # m, flock centre to pen centre after the step
        # The outcome, written on the step that ends the episode (zero before):
        ("pen_step", "i8"),  # the step the flock was penned; -1 unless it was
        ("cohesion", "f8"),  # m, mean distance of the sheep to the flock centre
        ("fragmentation", "f8"),  # largest group connected within group_radius / n_sheep
        ("polarisation", "f8"),  # |mean unit velocity| of the moving sheep, in [0, 1]
        ("dog_path", "f8"),  # m run by the learned dogs in the episode (summed)
        ("control_efficiency", "f8"),  # flock centre's progress to the pen per m run
    ],
    align=True,
)

#: What these rules keep over an episode (``State.episode``).
EPISODE = np.dtype(
    [
        ("dog_path", "f8"),  # m run so far by the learned dogs (summed)
        ("start_distance", "f8"),  # m, flock centre to pen centre at the start
        ("start_penned", "i8"),  # sheep in the pen at the start
    ],
    align=True,
)

#: The outcome's fields (of :data:`ENV_RESULT`) every info reports at episode end.
OUTCOME = (
    "penned_fraction",
    "cohesion",
    "fragmentation",
    "polarisation",
    "dog_path",
    "control_efficiency",
)


@dataclass(frozen=True)
class World:
    """Arena, pen, episode and reward parameters shared by every environment of a batch."""

    dt: float
    arena_size: float
    time_limit: int
    pen_x: float
    pen_y: float
    pen_radius: float
    n_sheep: int
    success_fraction: float
    observed_teammates: int
    observed_opponents: int
    start_spread: float
    start_margin: float
    flock_pen_distance: float
    dog_start_distance: float
    group_radius: float
    collect_distance: float
    collect_offset: float
    drive_distance: float
    success_reward: float = 1.0
    shaping: bool = True
    shaping_scale: float = 1.0
    shaping_gamma: float = 0.99
    terminal_potential: bool = False
    spread_weight: float = 1.0
    penned_weight: float = 1.0
    target_weight: float = 0.0
    obstacles: ObstacleField = field(default_factory=ObstacleField)

    @property
    def observed_obstacles(self) -> int:
        return self.obstacles.observed

    @property
    def rules(self) -> ModuleType:
        """The rules these parameters are for (this module)."""
        return importlib.import_module(__name__)

    @property
    def penned_needed(self) -> int:
        """Sheep in the pen that make a success: ``ceil(success_fraction * n_sheep)``
        (at least 1; a hair of rounding slack so that 0.6 * 10 needs 6, not 7)."""
        return max(1, math.ceil(self.success_fraction * self.n_sheep - 1e-9))

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
    """What these rules add to a frame of environment ``env``: the pen, and the flock's
    centre as a small cross."""
    from steer_env.rendering import ROLE_COLORS

    world = batch.world
    pen = np.array([world.pen_x, world.pen_y])
    renderer.circle(pen, world.pen_radius, ROLE_COLORS["pen"], width=2)
    sheep = batch.is_team("sheep")
    centre = batch.state.position[env, sheep].mean(axis=0)
    renderer.point(centre, ROLE_COLORS["debug"], size_px=5)
