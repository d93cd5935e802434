"""Pursuit-evasion rules: pursuers capture evaders (Pursuit-v0, Evasion-v0, team pursuit).

* **Teams**: ``pursuer`` and ``evader``; any number of each, any of them learned.
* **Who leaves the game**: an evader whose centre came within ``capture_radius`` of a
  pursuer's during the step (closest approach of the linear relative motion, so fast
  vehicles cannot pass through each other).
* **Rewards** (named terms): ``capture`` (``capture_reward`` to every learned pursuer per
  evader captured on the step, minus it to a captured learned evader), ``escape``
  (``escape_reward`` to a learned evader still in the game at the time limit), ``shaping``
  (potential-based, ``shaping_gamma * phi(s') - phi(s)`` with ``phi = -/+ shaping_scale *
  d / diagonal`` for a pursuer/evader, ``d`` the distance to its nearest opponent, ``phi
  = 0`` in terminal states).
* **Episode end**: every evader captured, the first capture (``end_on_first_capture``) or
  ``time_limit`` steps.
* **Start**: vehicles placed in roster order, uniformly inside the walls, each at least
  ``min_start_distance`` from every opponent already placed (the farthest of
  :data:`START_CANDIDATES` candidates when none is) and clear of a fixed obstacle layout,
  at rest, random headings; then the obstacles placed per episode, around them
  (:class:`~steer_env.engine.layout.ObstacleField`).
* **Observation**: :data:`FEATURES`, egocentric: own velocity, the walls, elapsed time,
  then the nearest teammates and opponents in the game, each relative position, relative
  velocity and a presence flag, then the nearest obstacles.

This module is plain Python; the compiled stages are :mod:`.compiled`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.egocentric import (  # noqa: F401  (the positions, importable from the rules too)
    EAST_WALL,
    NORTH_WALL,
    OBSTACLES,
    OTHER,
    OTHER_POSITION,
    OTHER_PRESENT,
    OTHER_VELOCITY,
    OTHER_WIDTH,
    SELF,
    SELF_WIDTH,
    SOUTH_WALL,
    TIME,
    VELOCITY_FORWARD,
    VELOCITY_SIDE,
    WEST_WALL,
    other_rows,
)
from steer_env.engine.features import FeatureGroup, FeatureTable
from steer_env.engine.layout import OBSTACLE_WORLD_FIELDS, ObstacleField, world_record

#: The teams, by code (``VEHICLE.team``).
TEAMS = ("pursuer", "evader")
PURSUER, EVADER = 0, 1

#: Candidate start positions drawn per vehicle to respect ``min_start_distance``.
START_CANDIDATES = 16
#: Random draws per vehicle at reset: ``START_CANDIDATES`` (x, y) pairs, heading, wander.
RESET_DRAWS_PER_VEHICLE = 2 * START_CANDIDATES + 2

# --------------------------------------------------------------------------- observation
#: The nearest teammates in the game (``observed_teammates`` slots), then the nearest
#: opponents (``observed_opponents``), nearest first, empty slots all zero: the engine's
#: egocentric observation (:mod:`steer_env.engine.egocentric`).
TEAMMATE = FeatureGroup("teammate", OTHER, "observed_teammates", other_rows("teammate", "a"))
OPPONENT = FeatureGroup("opponent", OTHER, "observed_opponents", other_rows("opponent", "an"))
FEATURES = FeatureTable((SELF, TEAMMATE, OPPONENT, OBSTACLES))

# --------------------------------------------------------------------------- records
#: The world record the compiled stages read. ``dt`` and ``half_size`` are the engine's
#: (motion and walls); the rest are these rules'.
WORLD = np.dtype(
    [
        ("dt", "f8"),  # s
        ("half_size", "f8"),  # m, the arena is [-half_size, half_size]^2
        ("arena_size", "f8"),  # m
        ("diagonal", "f8"),  # m
        ("capture_radius", "f8"),  # m
        ("time_limit", "i8"),  # steps; reaching it ends the episode (terminal)
        ("end_on_first_capture", "?"),  # else: when every evader is captured
        ("capture_reward", "f8"),
        ("escape_reward", "f8"),
        ("shaping", "?"),
        ("shaping_scale", "f8"),
        ("shaping_gamma", "f8"),
        ("observed_teammates", "i8"),
        ("observed_opponents", "i8"),
        ("start_margin", "f8"),  # m from the walls at the start
        ("min_start_distance", "f8"),  # m from every opponent already placed
        *OBSTACLE_WORLD_FIELDS,
    ],
    align=True,
)

#: Reward terms, each a field of :data:`AGENT_RESULT`; ``reward`` is their sum.
REWARD_TERMS = ("capture", "escape", "shaping")

AGENT_RESULT = np.dtype(
    [
        ("reward", "f8"),
        ("capture", "f8"),  # reward term: capture_reward per capture (pursuers), minus it (evader)
        ("escape", "f8"),  # reward term: escape_reward for an evader in the game at the end
        ("shaping", "f8"),  # reward term: potential-based shaping
        ("distance", "f8"),  # m to the nearest opponent after the step
        ("terminated", "?"),  # the agent's episode is over (it left the game or the env ended)
        ("captured", "?"),  # an evader agent captured on this step
    ],
    align=True,
)

ENV_RESULT = np.dtype(
    [
        ("done", "?"),  # the episode ended on this step
        ("captures", "i8"),  # evaders captured on this step
        ("timed_out", "?"),  # the episode reached time_limit on this step
    ],
    align=True,
)


#: What these rules keep over an episode (``State.episode``).
EPISODE = np.dtype(
    [
        ("captures", "i8"),  # evaders captured so far in the episode
    ],
    align=True,
)


@dataclass(frozen=True)
class World:
    """Arena, episode and reward parameters shared by every environment of a batch."""

    dt: float
    arena_size: float
    capture_radius: float
    time_limit: int
    end_on_first_capture: bool
    shaping: bool
    shaping_scale: float
    shaping_gamma: float
    observed_teammates: int
    observed_opponents: int
    start_margin: float
    min_start_distance: float
    capture_reward: float = 1.0
    escape_reward: float = 1.0
    obstacles: ObstacleField = field(default_factory=ObstacleField)

    @property
    def observed_obstacles(self) -> int:
        return self.obstacles.observed

    @property
    def rules(self) -> ModuleType:
        """The rules these parameters are for (this module)."""
        return importlib.import_module(__name__)

    def record(self) -> NDArray[np.void]:
        """The :data:`WORLD` record (a length-1 array) the compiled step reads."""
        return world_record(self, WORLD)

    @property
    def obs_dim(self) -> int:
        return FEATURES.size(self)


def load_compiled() -> ModuleType:
    """The compiled stages and entry points (imported on first use: numba's import costs
    ~0.3 s that ``import steer_env`` need not pay)."""
    return importlib.import_module(f"{__name__}.compiled")


# --------------------------------------------------------------------------- outcomes and infos
def ended_with_capture(captures: Any, captured: Any) -> Any:
    """Whether the step that ended an episode captured the learned agent's target: an
    evader was captured in the environment (``captures > 0``) or the agent itself was
    (``captured``). Python scalars or arrays alike."""
    return (captures > 0) | captured


def step_info(
    distance: Any, capture: Any, escape: Any, shaping: Any, is_success: Any, capture_step: Any
) -> dict[str, Any]:
    """The info of every step and reset of a single-agent task of these rules, the same
    keys always: the distance to the nearest opponent (m), the reward's terms, the outcome
    (``is_success``, False before the final step) and the step of capture (-1 unless the
    episode ended in one). Python scalars in the single env, ``(num_envs,)`` arrays in the
    native vector env."""
    return {
        "distance": distance,
        "reward_capture": capture,
        "reward_escape": escape,
        "reward_shaping": shaping,
        "is_success": is_success,
        "capture_step": capture_step,
    }


def team_agent_info(
    distance: float,
    capture: float,
    escape: float,
    shaping: float,
    captured: bool,
    captures: int,
    team: dict[str, Any],
) -> dict[str, Any]:
    """One agent's info in a team env of these rules, the same keys at reset and every
    step: its distance and reward terms, whether it was captured, the team's captures on
    this step and the team metrics (each agent gets its own copy of ``capture_steps``)."""
    return {
        "distance": distance,
        "reward_capture": capture,
        "reward_escape": escape,
        "reward_shaping": shaping,
        "captured": captured,
        "captures": captures,
        **team,
        "capture_steps": team["capture_steps"].copy(),
    }


def draw_overlay(renderer: Any, batch: Any, env: int) -> None:
    """What these rules add to a frame of environment ``env`` (under the strategies'
    overlays and the vehicles): the capture radius around each pursuer in the game."""
    from steer_env.rendering import ROLE_COLORS

    alive = batch.state.alive[env]
    radius = batch.world.capture_radius
    for i in np.flatnonzero(batch.is_team("pursuer") & alive):
        renderer.circle(batch.state.position[env, i], radius, ROLE_COLORS["pursuer"], width=1)
