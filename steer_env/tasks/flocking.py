"""Flocking: learned boids migrate as one flock to a goal region while scripted predators
hunt them, against Reynolds' boids on the same episodes.

The registry entry :data:`FLOCKING` (task name ``flocking``) has two front ends: the
Gymnasium env ``steer_env/Flocking-v0`` (one learned boid among scripted ones,
:mod:`steer_env.envs.flocking`; the entry's defaults) and the PettingZoo module
:mod:`steer_env.envs.flocking_v0` (every boid learned by default, ``n_learned=-1``, one
policy shared by all of them; the commands play it with ``--set n_learned=-1``). The rules
are :mod:`steer_env.rules.flocking`.

**The scripted boids** (the Gymnasium form's flockmates, and the classic flocks that the
comparisons play in the learned boids' seats, from their observations) are Reynolds'
boids (Reynolds 1987, 1999) written with the library's behaviours (:func:`reynolds_boid`),
in this priority order:

=================== =========================================================== ==========
behaviour            acts on                                                     weight
=================== =========================================================== ==========
obstacle avoidance   the obstacles, when there are any                           6
evade                the nearest predator, while it is within ``evade_radius``   3
separation           the boids within ``separation_radius``                      2
seek                 the goal region's centre                                    1
alignment            the boids within ``flock_radius``                           1
cohesion             the boids within ``flock_radius``                           1
=================== =========================================================== ==========

combined by one of Buckland's three methods (``combination``; the baselines
``prioritized``, ``weighted_sum`` and ``dithered`` are the same boid under each). The
dithered boid considers each behaviour with the probability :data:`DITHER_PROBABILITY`
gives it. **The predators** pursue the nearest boid in the game (pursuit with prediction,
the look-ahead capped at ``predator_prediction`` s), avoiding obstacles when there are any.

Every parameter is a field of :class:`FlockingConfig`; ``gym.make`` and ``parallel_env``
take them as keyword arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.rules import flocking as rules
from steer_env.rules.flocking import OUTCOME, World
from steer_env.tasks import Metrics, register, training
from steer_env.tasks.config import (
    COMMON_RANGES,
    FORCE,
    MASS,
    SPEED,
    WEIGHT,
    ObstacleConfig,
    Range,
    check_number,
    check_obstacle_layout,
    check_obstacles,
    check_overrides,
    field_ranges,
    obstacle_avoidance,
    time_limit_alias,
    with_obstacles,
)
from steer_env.tasks.protocol import (
    RewardTermInfos,
    TaskSpec,
    check_role,
)

#: The combination methods a flock's strategy may use (each a baseline of its own), the
#: calibrated classic flock's first.
COMBINATIONS = ("dithered", "prioritized", "weighted_sum")
#: The probability with which the dithered boid considers each behaviour: Buckland's
#: (``Programming Game AI by Example``, 2005, the ``params.ini`` of his steering demo).
DITHER_PROBABILITY: Mapping[str, float] = {
    "obstacle_avoidance": 0.5,
    "evade": 1.0,
    "separation": 0.2,
    "seek": 0.8,
    "alignment": 0.3,
    "cohesion": 0.6,
}


@dataclass(frozen=True)
@with_obstacles
class FlockingConfig(ObstacleConfig):
    """Parameters of the flocking task (units: m, s, kg, N). Ranges in :data:`RANGES`."""

    n_boids: int = 16  #: the flock
    #: learned boids, the first of the flock (-1: every boid, the default of
    #: ``flocking_v0``; the Gymnasium form has one)
    n_learned: int = 1
    n_predators: int = 1  #: scripted predators
    arena_size: float = 40.0  #: side of the walled square, m
    dt: float = 0.1  #: physics and decision step, s
    time_limit: int = 165  #: episode length, steps (16.5 s; reaching it is a time-out)
    route_length: float = 24.0  #: from the start disc's centre to the goal's, along x, m
    start_radius: float = 3.0  #: the boids start in this disc, m
    start_gap: float = 0.2  #: least gap between bodies at the start (when there is room), m
    predator_zone: float = 12.0  #: the predators start in this square around the centre, m
    goal_radius: float = 4.0  #: the goal region's radius, m
    vehicle_radius: float = 0.2  #: body radius of every boid and predator, m
    boid_max_speed: float = 2.0  #: m/s
    boid_max_force: float = 4.0  #: N
    boid_mass: float = 1.0  #: kg
    predator_max_speed: float = 3.0  #: m/s (1.5 times the boids')
    predator_max_force: float = 4.0  #: N
    predator_mass: float = 1.0  #: kg
    predator_prediction: float = 1.0  #: the predators' pursuit looks ahead at most this, s
    catch_radius: float = 0.5  #: a boid this near a predator (centres) is caught, m
    link_distance: float = 2.5  #: boids this near each other (centres) are linked, m
    success_fraction: float = 0.75  #: success: this fraction of the flock in one group at the goal
    # Reynolds' boids (the scripted boids and the classic flocks).
    evade_weight: float = 3.0  #: weight of evade
    evade_radius: float = 6.0  #: boids evade a predator within this, m
    separation_weight: float = 2.0  #: weight of separation
    separation_radius: float = 1.0  #: separation neighbourhood, m
    seek_weight: float = 2.0  #: weight of seek to the goal's centre
    alignment_weight: float = 1.0  #: weight of alignment
    cohesion_weight: float = 1.0  #: weight of cohesion
    flock_radius: float = 4.0  #: alignment and cohesion neighbourhood, m
    combination: str = "dithered"  #: Buckland's combination of the scripted boids' behaviours
    #: The scripted boids' strategy: ``None`` for Reynolds' boid above
    #: (:func:`reynolds_boid`), or any :class:`~steer_env.engine.strategy.Strategy`
    boid_strategy: Any = None
    # Observation.
    observed_boids: int = 7  #: slots for the nearest other boids (padding beyond the flock)
    observed_predators: int = 1  #: slots for the nearest predators (padding beyond them)
    #: the slots' positions are offset / (observation_range + distance), m
    observation_range: float = 5.0
    # Rewards.
    success_reward: float = 5.0  #: to every boid in the game on the step the flock succeeds
    progress_scale: float = 0.1  #: progress potential per m of distance to the goal (0: none)
    #: discount of the progress term (1: each step pays the distance it covers)
    shaping_gamma: float = 1.0
    collision_penalty: float = 0.05  #: subtracted on each step a boid touches another
    caught_penalty: float = 8.0  #: subtracted on the step a boid is caught

    @property
    def half_size(self) -> float:
        return self.arena_size / 2.0

    @property
    def learned_boids(self) -> int:
        """The learned boids (``n_learned``, -1 resolved)."""
        return self.n_boids if self.n_learned < 0 else self.n_learned


_LENGTH: Range = (float, 0.0, 1e4, False)
RANGES: dict[str, Range] = field_ranges(
    FlockingConfig,
    {
        **{
            name: r
            for name, r in COMMON_RANGES.items()
            if name in {f.name for f in dataclasses.fields(FlockingConfig)}
        },
        "n_boids": (int, 1, 1024, True),
        "n_learned": (int, -1, 1024, True),
        "n_predators": (int, 0, 64, True),
        "route_length": _LENGTH,
        "start_radius": _LENGTH,
        "start_gap": (float, 0.0, 1e4, True),
        "predator_zone": (float, 0.0, 1e4, True),
        "goal_radius": _LENGTH,
        "boid_max_speed": SPEED,
        "boid_max_force": FORCE,
        "boid_mass": MASS,
        "predator_max_speed": SPEED,
        "predator_max_force": FORCE,
        "predator_mass": MASS,
        "predator_prediction": (float, 0.0, 1e4, True),
        "catch_radius": (float, 0.0, 1e4, True),
        "link_distance": _LENGTH,
        "success_fraction": (float, 0.0, 1.0, False),
        "evade_weight": WEIGHT,
        "evade_radius": (float, 0.0, 1e5, True),
        "seek_weight": WEIGHT,
        "alignment_weight": WEIGHT,
        "cohesion_weight": WEIGHT,
        "flock_radius": _LENGTH,
        "observed_boids": (int, 0, 1024, True),
        "observed_predators": (int, 0, 64, True),
        "observation_range": _LENGTH,
        "success_reward": WEIGHT,
        "progress_scale": WEIGHT,
        "collision_penalty": WEIGHT,
        "caught_penalty": WEIGHT,
    },
)
FIELDS = tuple(f.name for f in dataclasses.fields(FlockingConfig))


def _check(name: str, value: Any) -> Any:
    if name == "obstacles":
        return check_obstacle_layout(value)
    if name == "boid_strategy":
        if value is None or isinstance(value, Strategy):
            return value
        raise ValueError(f"boid_strategy must be None or a Strategy, got {value!r}")
    if name == "combination":
        if value not in COMBINATIONS:
            raise ValueError(f"combination must be one of {', '.join(COMBINATIONS)}, got {value!r}")
        return value
    return check_number(name, value, *RANGES[name])


def check_geometry(cfg: FlockingConfig) -> None:
    """The rules that tie the config's lengths and counts together: ``ValueError`` naming
    the argument otherwise."""
    if cfg.vehicle_radius * 4 >= cfg.arena_size:
        raise ValueError(
            f"vehicle_radius must be below arena_size / 4 ({cfg.arena_size / 4:g} m), "
            f"got {cfg.vehicle_radius!r}"
        )
    inner = cfg.half_size - cfg.vehicle_radius
    reaches = {
        "route_length": cfg.route_length / 2,
        "start_radius": cfg.route_length / 2 + cfg.start_radius,
        "goal_radius": cfg.route_length / 2 + cfg.goal_radius,
        "predator_zone": cfg.predator_zone / 2,
    }
    for name, reach in reaches.items():
        if reach > inner + 1e-9:
            raise ValueError(
                f"{name} puts starts or the goal region {reach:g} m from the centre along "
                f"an axis: they must lie inside the walls (at most {inner:g} m: "
                f"arena_size / 2 - vehicle_radius), got {name}={getattr(cfg, name)!r}"
            )
    if cfg.start_radius + cfg.goal_radius >= cfg.route_length:
        raise ValueError(
            "route_length must exceed start_radius + goal_radius "
            f"({cfg.start_radius + cfg.goal_radius:g} m: the flock starts outside the goal "
            f"region), got {cfg.route_length!r}"
        )
    if cfg.n_learned > cfg.n_boids:
        raise ValueError(
            f"n_learned must be -1 (every boid) or in [0, n_boids] ({cfg.n_boids}), "
            f"got {cfg.n_learned!r}"
        )


def make_flocking_config(
    defaults: FlockingConfig, overrides: dict[str, Any], max_cycles: Any = None
) -> FlockingConfig:
    """``defaults`` with ``overrides`` (and PettingZoo's ``max_cycles`` for
    ``time_limit``), every value and the combination validated."""
    overrides = time_limit_alias(dict(overrides), "max_cycles", max_cycles)
    values = check_overrides(overrides, FIELDS, _check)
    cfg = dataclasses.replace(defaults, **values)
    check_geometry(cfg)
    check_obstacles(cfg)
    return cfg


# --------------------------------------------------------------------------- strategies
def reynolds_boid(cfg: FlockingConfig, combination: str | None = None) -> Strategy:
    """Reynolds' boid (the module docstring's table) under ``combination`` (by default
    the config's): obstacle avoidance, evade the nearest predator while it is near,
    separation, seek the goal, alignment and cohesion."""
    method = combination or cfg.combination
    p = DITHER_PROBABILITY
    behaviors = [
        Behavior("evade", cfg.evade_weight, target="nearest_opponent",
                 active_within=cfg.evade_radius, prediction_time=cfg.predator_prediction,
                 probability=p["evade"]),
        Behavior("separation", cfg.separation_weight, target="teammates",
                 neighbor_radius=cfg.separation_radius, probability=p["separation"]),
        Behavior("seek", cfg.seek_weight, target="goal", probability=p["seek"]),
        Behavior("alignment", cfg.alignment_weight, target="teammates",
                 neighbor_radius=cfg.flock_radius, probability=p["alignment"]),
        Behavior("cohesion", cfg.cohesion_weight, target="teammates",
                 neighbor_radius=cfg.flock_radius, probability=p["cohesion"]),
    ]  # fmt: skip
    avoid = [
        Behavior(b.kind, b.weight, b.target, **{**b.params, "probability": p[b.kind]})
        for b in obstacle_avoidance(cfg)
    ]
    return Strategy([*avoid, *behaviors], combination=method, name=f"{method} boid")


def predator(cfg: FlockingConfig) -> Strategy:
    """The predators: pursuit of the nearest boid in the game (and obstacle avoidance
    when there are obstacles)."""
    pursuit = Behavior(
        "pursuit", 1.0, target="nearest_opponent", prediction_time=cfg.predator_prediction
    )
    return Strategy([*obstacle_avoidance(cfg), pursuit], name="predator")


def _baseline(combination: str) -> Callable[[FlockingConfig], Strategy]:
    def boid(cfg: FlockingConfig) -> Strategy:
        return reynolds_boid(cfg, combination)

    boid.__name__ = f"{combination}_boid"
    boid.__doc__ = f"Reynolds' boid under the {combination} combination."
    return boid


# --------------------------------------------------------------------------- the task
@dataclass(frozen=True)
class FlockingTask(TaskSpec, RewardTermInfos):
    """The flocking task's registry entry (see the module docstring)."""

    rules_package = rules
    final_keys = ("is_success", "arrival_step", "arrival_time", *OUTCOME)

    name: str = "flocking"
    env_id: str | None = "steer_env/Flocking-v0"
    env_module: str | None = "steer_env.envs.flocking_v0"
    entry_point: str = "steer_env.envs.flocking:FlockingEnv"
    vector_entry_point: str = "steer_env.envs.flocking:make_flocking_vector"
    learned_team: str = "boid"
    #: The config value that counts the learned boids.
    agent_count: str | None = "n_learned"
    default_config: FlockingConfig = field(default_factory=FlockingConfig)
    #: The classic flocks, by name, the calibrated one first: Reynolds' boid under each of
    #: Buckland's combinations, played from the learned boid's observation.
    baselines: Mapping[str, Callable[[FlockingConfig], Strategy]] = field(
        default_factory=lambda: {name: _baseline(name) for name in COMBINATIONS}
    )
    metrics: Metrics = field(
        default_factory=lambda: Metrics(
            "agents",
            success_means=(
                "at least success_fraction of the flock in one group inside the goal region "
                "within the time limit"
            ),
            time_means="arrival time",
            goal={
                "criterion": "learned - classic: success CI above 0",
                "time_shorter": False,
            },
            labels={
                "rate": "success",
                "achieved": "arrived",
                "event": "arrived",
                "no_event": "not arrived",
                "curve": "fraction of flocks not yet arrived",
                "title": "Flocking",
            },
            time_key="arrival_step",
            outcomes=OUTCOME,
        )
    )
    training: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: training.table(
            ppo=training.defaults(
                24_000_000, 16, FLOCKING_PPO, FLOCKING_CURRICULUM, FLOCKING_TRAINING_CONFIG
            ),
            sac=training.defaults(200_000, 4, training.SB3_SAC, config=FLOCKING_TRAINING_CONFIG),
            rllib_ppo=training.defaults(1_000_000, 16, training.RLLIB_PPO),
        )
    )

    # --- the task protocol -------------------------------------------------------------
    def config(self, max_cycles: Any = None, **overrides: Any) -> FlockingConfig:
        return make_flocking_config(self.default_config, overrides, max_cycles)

    def roster(self, cfg: FlockingConfig) -> list[VehicleSpec]:
        """The learned boids first, then the scripted boids, then the predators."""
        scripted = cfg.boid_strategy or reynolds_boid(cfg)
        boid = {
            "team": "boid",
            "mass": cfg.boid_mass,
            "max_speed": cfg.boid_max_speed,
            "max_force": cfg.boid_max_force,
            "radius": cfg.vehicle_radius,
        }
        hunter = VehicleSpec(
            team="predator",
            strategy=predator(cfg),
            mass=cfg.predator_mass,
            max_speed=cfg.predator_max_speed,
            max_force=cfg.predator_max_force,
            radius=cfg.vehicle_radius,
        )
        k = cfg.learned_boids
        return [
            *[VehicleSpec(strategy=None, **boid)] * k,
            *[VehicleSpec(strategy=scripted, **boid)] * (cfg.n_boids - k),
            *[hunter] * cfg.n_predators,
        ]

    def world(self, cfg: FlockingConfig) -> World:
        return World(
            dt=cfg.dt,
            arena_size=cfg.arena_size,
            time_limit=cfg.time_limit,
            n_boids=cfg.n_boids,
            route_length=cfg.route_length,
            start_radius=cfg.start_radius,
            start_gap=cfg.start_gap,
            predator_zone=cfg.predator_zone,
            goal_radius=cfg.goal_radius,
            catch_radius=cfg.catch_radius,
            link_distance=cfg.link_distance,
            success_fraction=cfg.success_fraction,
            observed_teammates=cfg.observed_boids,
            observed_opponents=cfg.observed_predators,
            observation_range=cfg.observation_range,
            success_reward=cfg.success_reward,
            progress_scale=cfg.progress_scale,
            shaping_gamma=cfg.shaping_gamma,
            collision_penalty=cfg.collision_penalty,
            caught_penalty=cfg.caught_penalty,
            obstacles=cfg.obstacle_field(),
        )

    def agent_names(self, cfg: FlockingConfig) -> list[str]:
        return [f"boid_{k}" for k in range(cfg.learned_boids)]

    def baselines_of(self, role: str) -> Mapping[str, Any]:
        check_role(role, ("boid",), self.name)
        return self.baselines

    def shared_baselines(self) -> Mapping[str, Any]:
        """Every learned boid plays the same classic boid, each from its own
        observation."""
        return self.baselines

    def is_success(self, outcome: Any, role: str | None = None) -> Any:
        """Whether the flock arrived (``outcome``: the episode's ``is_success``)."""
        if role is not None:
            check_role(role, ("boid",), self.name)
        return outcome

    def in_game(self, batch: Any) -> Any:
        """``(E, k)``: the learned boids not caught."""
        return batch.state.alive[:, batch.agent_index].copy()

    # --- infos ---------------------------------------------------------------------------
    def _info(self, env: Mapping[str, Any], rewards: Mapping[str, Any], ended: Any) -> dict:
        info = {f"reward_{term}": rewards[term] for term in rules.REWARD_TERMS}
        info["collisions"] = env["collisions"]
        info["catches"] = env["catches"]
        info["boids_left"] = env["boids_left"]
        info["is_success"] = env["is_success"] & ended
        info["arrival_step"] = np.where(ended, env["arrival_step"], -1)
        info["arrival_time"] = np.where(ended, env["arrival_time"], -1.0)
        for key in OUTCOME:
            info[key] = np.where(ended, env[key], 0.0)
        return info

    def _reset_fields(self, batch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The step's fields after a reset: nothing has happened yet."""
        e = batch.num_envs
        zeros = np.zeros(e)
        boids = batch.is_team("boid")
        env = {
            "collisions": np.zeros(e, dtype=np.int64),
            "catches": np.zeros(e, dtype=np.int64),
            "boids_left": np.count_nonzero(batch.state.alive[:, boids], axis=1),
            "is_success": np.zeros(e, dtype=bool),
            "arrival_step": np.full(e, -1, dtype=np.int64),
            "arrival_time": np.full(e, -1.0),
            **{key: zeros for key in OUTCOME},
        }
        return env, {term: zeros for term in rules.REWARD_TERMS}


#: PPO for the flock: one policy shared by every boid (a slot per boid), 300-step
#: episodes whose success comes at the end.
FLOCKING_PPO: Mapping[str, Any] = {
    **training.SB3_PPO,
    "n_steps": 128,
    "batch_size": 4096,
    "n_epochs": 10,
    "gamma": 0.99,
    # Exploration kept up: without it the flock settles on dodging the predator or on
    # rushing the goal before it finds both.
    "ent_coef": 0.01,
}

#: The first half of a PPO run pays a caught boid 2 instead of the task's 8: a flock punished
#: fully from the start learns to scatter from the predator before it learns to travel, and
#: stays short of the goal; one that has learned to travel first then learns to keep clear.
FLOCKING_CURRICULUM = ({"until": 0.5, "config": {"caught_penalty": 2.0}},)
#: Progress is paid per m covered whatever the learner's discount (the config's
#: ``shaping_gamma`` 1), so the SB3 trainers keep it instead of setting their gamma.
FLOCKING_TRAINING_CONFIG = {"shaping_gamma": 1.0}

FLOCKING = register(FlockingTask(default_config=FlockingConfig()))
