"""Herding: learned sheepdogs bring a flock of scripted sheep into a pen.

The registry entry :data:`HERDING` (task name ``herding``) has two front ends: the
Gymnasium env ``steer_env/Herding-v0`` (one learned dog, :mod:`steer_env.envs.herding`)
and the PettingZoo module :mod:`steer_env.envs.herding_v0` (``n_dogs`` learned dogs). The
rules are :mod:`steer_env.rules.herding`.

**The sheep** are Strömbom et al.'s (2014, J. R. Soc. Interface 11:20140719) written with
the classic behaviours and combined by Buckland's weighted truncated sum
(:func:`strombom_sheep`):

========================== ============================================ ================
Strömbom's term             behaviour here                              default weight
========================== ============================================ ================
repulsion from sheep        separation from the sheep within            ``rho_a`` 2.0
closer than ``r_a``         ``repulsion_distance`` (2 m)
attraction to the local     cohesion with the ``local_centre`` (15)     ``c`` 1.05
centre of mass              nearest sheep (topological), only while a
                            dog is within ``detection_range``
repulsion from the dog      flee the nearest dog within                 ``rho_s`` 1.0
                            ``detection_range`` (30 m)
angular noise, heading      wander (the vehicle's inertia keeps the     ``e`` 0.3
persistence, grazing        heading); its desired speed is
                            ``graze_speed`` (5%) of the max speed, so
                            a sheep with no dog near ambles
========================== ============================================ ================

Units: Strömbom's model moves a sheep ``delta`` = 1 m per tick; here a sheep's top speed
is 2 m/s and a step 0.5 s, so one step is one tick, and lengths keep the paper's metres
(``r_a`` = 2 m). Dogs are 1.5 times as fast as sheep (the paper's ``delta_s`` = 1.5).
Three defaults differ from the paper's, for a task in which collecting matters (the
calibration table of ``python -m agents.sweep --env herding --no-learned`` is on the env's
page): the local centre is the 15 nearest sheep, not all ``N - 1``, so that the flock can
split and leave stragglers (with 5 or 10 it splits so far that neither scripted dog pens
it in time); the flock starts grazing, scattered over a 40 m square, so the driver, which
never collects, pens it in 3.3% of episodes and Strömbom's dog in 39.9%; the field is
100 m with a 30 m detection range (the paper's 65 m range in a field this size would put
every sheep within range of the dog at all times).

**The dogs' baselines** act from the dog's observation, like every scripted agent
(:class:`HerdingDog`):

* ``strombom``: Strömbom's dog. It aims at :func:`steer_env.behaviors.shepherd_target`
  (collect the sheep farthest from the centre when it is beyond ``r_a N^(2/3)``, else drive
  from ``r_a sqrt(N)`` behind the centre, away from the pen) with arrive, and stops within
  ``3 r_a`` of a sheep, as the paper's dog does;
* ``driver``: a naive dog that always drives;
* ``flanks`` (several dogs): the dogs share the work. The dog nearest to the straggler
  collects it, the others drive; driving dogs take the drive point turned by
  ``flank_angle`` to either side of the line from the pen, by their bearing, so they close
  the flock's flanks instead of pushing one point.

Every parameter is a field of :class:`HerdingConfig`; ``gym.make`` and ``parallel_env``
take them as keyword arguments.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.rules import herding as rules
from steer_env.rules.herding import OUTCOME, World
from steer_env.tasks import Metrics, register, training
from steer_env.tasks.config import (
    COMMON_RANGES,
    FORCE,
    MASS,
    SPEED,
    WEIGHT,
    ObstacleConfig,
    Range,
    check_flag,
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
    SharedOutcomeInfos,
    TaskSpec,
    check_role,
    first_env_info,
    scalar,
)


@dataclass(frozen=True)
@with_obstacles
class HerdingConfig(ObstacleConfig):
    """Parameters of the herding task (units: m, s, kg, N). Ranges in :data:`RANGES`."""

    n_sheep: int = 25  #: sheep in the flock
    n_dogs: int = 1  #: learned dogs
    arena_size: float = 100.0  #: side of the square field, m
    dt: float = 0.5  #: physics and decision step, s
    time_limit: int = 300  #: episode length, steps (150 s; reaching it ends the episode)
    pen_x: float = 35.0  #: pen centre, m (default: near the north-east corner)
    pen_y: float = 35.0  #: m
    pen_radius: float = 12.0  #: m
    success_fraction: float = 1.0  #: fraction of the sheep that must be penned, (0, 1]
    vehicle_radius: float = 0.5  #: body radius of every vehicle, m
    sheep_max_speed: float = 2.0  #: m/s (Strömbom: 1 m per tick)
    sheep_max_force: float = 4.0  #: N
    sheep_mass: float = 1.0  #: kg
    speed_ratio: float = 1.5  #: dog max speed / sheep max speed (Strömbom: 1.5)
    dog_max_force: float = 6.0  #: N
    dog_mass: float = 1.0  #: kg
    # Strömbom's sheep.
    detection_range: float = 30.0  #: r_s: a sheep reacts to a dog this near, m
    repulsion_distance: float = 2.0  #: r_a: sheep closer than this repel, m
    local_centre: int = 15  #: n: the sheep attracted to the centre of their n nearest
    cohesion_weight: float = 1.05  #: c
    repulsion_weight: float = 2.0  #: rho_a
    flight_weight: float = 1.0  #: rho_s
    noise_weight: float = 0.3  #: e (wander)
    graze_speed: float = 0.05  #: wander's desired speed / max speed (grazing), (0, 1]
    wander_radius: float = 1.0  #: m
    wander_distance: float = 2.0  #: m
    wander_jitter: float = 4.0  #: m/s
    # The start.
    start_spread: float = 40.0  #: side of the square the flock starts in, m
    flock_pen_distance: float = 40.0  #: the flock's centre at least this far from the pen, m
    dog_start_distance: float = 20.0  #: each dog at least this far from the flock centre, m
    # Observation.
    observed_sheep: int = 5  #: sheep slots (the nearest) in each dog's observation
    max_observed_dogs: int = -1  #: other-dog slots; -1 means n_dogs - 1
    # Rewards.
    success_reward: float = 10.0  #: to every dog on the step the flock is penned
    reward_shaping: bool = True  #: add the potential-based flock term
    shaping_scale: float = 10.0  #: potential scale (see the rules)
    shaping_gamma: float = 1.0  #: discount of the shaping term (1: the potential's difference)
    terminal_potential: bool = False  #: the final state keeps its potential (see the env)
    spread_weight: float = 1.0  #: weight of the flock's spread in the potential
    penned_weight: float = 3.0  #: weight of the fraction penned in the potential
    target_weight: float = 1.0  #: weight of each dog's distance to Strömbom's target point
    # Metrics.
    group_radius: float = 5.0  #: sheep this close are one group (fragmentation), m
    # The scripted dogs.
    flank_angle: float = 0.6  #: flanks team: drive points turned this far aside, rad
    # Obstacles on a field of this size (the other obstacle fields: ObstacleConfig).
    obstacle_radius_min: float = 3.0  #: m
    obstacle_radius_max: float = 6.0  #: m
    obstacle_gap: float = 3.0  #: m
    detection_length: float = 6.0  #: sheep: detection box's least length, m

    @property
    def half_size(self) -> float:
        return self.arena_size / 2.0

    @property
    def dog_max_speed(self) -> float:
        return self.speed_ratio * self.sheep_max_speed

    @property
    def observed_dogs(self) -> int:
        return self.n_dogs - 1 if self.max_observed_dogs < 0 else self.max_observed_dogs

    @property
    def collect_distance(self) -> float:
        """Strömbom's ``f(N) = r_a N^(2/3)``: the dog collects a sheep farther than this
        from the flock's centre, m."""
        return self.repulsion_distance * self.n_sheep ** (2.0 / 3.0)

    @property
    def drive_distance(self) -> float:
        """Strömbom's drive point ``r_a sqrt(N)`` behind the flock's centre, m."""
        return self.repulsion_distance * math.sqrt(self.n_sheep)


_LENGTH: Range = (float, 0.0, 1e4, False)
RANGES: dict[str, Range] = field_ranges(
    HerdingConfig,
    {
        # The fields every task's config shares, with their common ranges.
        **{
            name: r
            for name, r in COMMON_RANGES.items()
            if name in {f.name for f in dataclasses.fields(HerdingConfig)}
        },
        "n_sheep": (int, 1, 1000, True),
        "n_dogs": (int, 1, 16, True),
        "pen_x": (float, -1e4, 1e4, True),
        "pen_y": (float, -1e4, 1e4, True),
        "pen_radius": _LENGTH,
        "success_fraction": (float, 0.0, 1.0, False),
        "sheep_max_speed": SPEED,
        "sheep_max_force": FORCE,
        "sheep_mass": MASS,
        "speed_ratio": (float, 0.0, 100.0, False),
        "dog_max_force": FORCE,
        "dog_mass": MASS,
        "detection_range": _LENGTH,
        "repulsion_distance": _LENGTH,
        "local_centre": (int, 1, 1000, True),
        "cohesion_weight": WEIGHT,
        "repulsion_weight": WEIGHT,
        "flight_weight": WEIGHT,
        "noise_weight": WEIGHT,
        "graze_speed": (float, 0.0, 1.0, False),
        "start_spread": _LENGTH,
        "flock_pen_distance": (float, 0.0, 1e4, True),
        "dog_start_distance": (float, 0.0, 1e4, True),
        "observed_sheep": (int, 1, 1000, True),
        "max_observed_dogs": (int, -1, 15, True),
        "success_reward": WEIGHT,
        "spread_weight": WEIGHT,
        "penned_weight": WEIGHT,
        "target_weight": WEIGHT,
        "group_radius": _LENGTH,
        "flank_angle": (float, 0.0, math.pi / 2, True),
    },
)
FIELDS = tuple(f.name for f in dataclasses.fields(HerdingConfig))


def _check(name: str, value: Any) -> Any:
    if name == "obstacles":
        return check_obstacle_layout(value)
    if name in ("reward_shaping", "terminal_potential"):
        return check_flag(name, value)
    return check_number(name, value, *RANGES[name])


def check_geometry(cfg: HerdingConfig) -> None:
    """The rules that tie the config's lengths together: ``ValueError`` naming the
    argument otherwise."""
    half = cfg.half_size
    if cfg.vehicle_radius * 4 >= cfg.arena_size:
        raise ValueError(
            f"vehicle_radius must be below arena_size / 4 ({cfg.arena_size / 4:g} m), "
            f"got {cfg.vehicle_radius!r}"
        )
    if cfg.pen_radius <= cfg.vehicle_radius:
        raise ValueError(
            f"pen_radius must exceed vehicle_radius ({cfg.vehicle_radius:g} m: a pen must hold "
            f"a sheep), got {cfg.pen_radius!r}"
        )
    for name in ("pen_x", "pen_y"):
        value = getattr(cfg, name)
        if abs(value) + cfg.pen_radius > half + 1e-9:
            raise ValueError(
                f"the pen must lie inside the arena: |{name}| + pen_radius must be at most "
                f"{half:g} m (half the arena_size), got {name}={value!r} with pen_radius="
                f"{cfg.pen_radius!r}"
            )
    if cfg.start_spread > cfg.arena_size - 2 * cfg.vehicle_radius:
        raise ValueError(
            f"start_spread must be at most arena_size - 2 * vehicle_radius "
            f"({cfg.arena_size - 2 * cfg.vehicle_radius:g} m), got {cfg.start_spread!r}"
        )
    if cfg.observed_dogs > cfg.n_dogs - 1:
        raise ValueError(
            f"max_observed_dogs must be -1 or at most n_dogs - 1 ({cfg.n_dogs - 1}), "
            f"got {cfg.max_observed_dogs!r}"
        )


def make_herding_config(
    defaults: HerdingConfig, overrides: dict[str, Any], max_cycles: Any = None
) -> HerdingConfig:
    """``defaults`` with ``overrides`` (and PettingZoo's ``max_cycles`` for
    ``time_limit``), every value and the combination validated."""
    overrides = time_limit_alias(dict(overrides), "max_cycles", max_cycles)
    values = check_overrides(overrides, FIELDS, _check)
    cfg = dataclasses.replace(defaults, **values)
    check_geometry(cfg)
    check_obstacles(cfg)
    return cfg


# --------------------------------------------------------------------------- the sheep
def strombom_sheep(cfg: HerdingConfig) -> Strategy:
    """Strömbom's sheep as classic behaviours (weighted truncated sum; see the module
    docstring's table)."""
    r_s = cfg.detection_range
    return Strategy(
        [
            Behavior(
                "separation",
                cfg.repulsion_weight,
                target="teammates",
                neighbor_radius=cfg.repulsion_distance,
            ),
            *obstacle_avoidance(cfg),
            Behavior("flee", cfg.flight_weight, threat_range=r_s),
            Behavior(
                "cohesion",
                cfg.cohesion_weight,
                target="teammates",
                neighbor_radius=math.inf,
                neighbor_count=cfg.local_centre,
                active_within=r_s,
            ),
            Behavior(
                "wander",
                cfg.noise_weight,
                wander_radius=cfg.wander_radius,
                wander_distance=cfg.wander_distance,
                wander_jitter=cfg.wander_jitter,
                wander_speed=cfg.graze_speed,
            ),
        ],
        combination="weighted_sum",
        name="Strömbom sheep",
    )


# --------------------------------------------------------------------------- the dogs
class HerdingDog:
    """A scripted dog of ``cfg`` with stable-baselines3's ``predict``, acting from its
    observation only (every row of a batch of observations is one dog).

    ``name`` is ``"strombom"`` (collect, then drive), ``"driver"`` (drive only) or
    ``"flanks"`` (the cooperative team: see the module docstring). Works on the
    observations of ``Herding-v0`` and of each agent of ``herding_v0``. Deterministic."""

    NAMES = ("strombom", "driver", "flanks")

    def __init__(self, name: str, cfg: HerdingConfig) -> None:
        if name not in self.NAMES:
            raise ValueError(f"unknown dog {name!r}: use one of {', '.join(self.NAMES)}")
        self.name = name
        self.config = cfg
        world = HERDING.world(cfg)
        self._world = world
        self.obs_dim = world.obs_dim
        features = rules.FEATURES
        self._at = {
            key: features.position(world, group, feature)
            for key, (group, feature) in {
                "velocity": ("self", "velocity_forward"),
                "pen": ("pen", "offset_forward"),
                "centre": ("flock", "centre_forward"),
                "farthest": ("flock", "farthest_forward"),
                "sheep": ("sheep", "position_forward"),
                "sheep_present": ("sheep", "present"),
            }.items()
        }
        if world.observed_teammates > 0:
            self._at["dog"] = features.position(world, "dog", "position_forward")
            self._at["dog_present"] = features.position(world, "dog", "present")
        self._diag = cfg.arena_size * math.sqrt(2.0)

    def _vector(self, flat: NDArray[np.float64], key: str, scale: float) -> NDArray[np.float64]:
        at = self._at[key]
        return flat[:, at : at + 2] * scale

    def predict(
        self,
        observation: NDArray[np.floating],
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        """One action per observation row (``(obs_dim,)`` or ``(..., obs_dim)``)."""
        from steer_env import behaviors

        obs = np.asarray(observation, dtype=np.float64)
        if obs.shape[-1:] != (self.obs_dim,):
            raise ValueError(
                f"{self.name} dog: observations must end with {self.obs_dim} values "
                f"(herding, this config), got shape {obs.shape}"
            )
        lead = obs.shape[:-1]
        flat = obs.reshape(-1, self.obs_dim)
        cfg = self.config
        diag = self._diag
        max_speed = cfg.dog_max_speed
        # Everything in the dog's own frame: the dog at the origin.
        velocity = self._vector(flat, "velocity", max_speed)
        pen = self._vector(flat, "pen", diag)
        centre = self._vector(flat, "centre", diag)
        farthest = self._vector(flat, "farthest", diag)
        limit = math.inf if self.name == "driver" else cfg.collect_distance
        target, collecting = behaviors.shepherd_target(
            centre, farthest, pen, limit, cfg.repulsion_distance, cfg.drive_distance
        )
        if self.name == "flanks" and "dog" in self._at:
            target = self._flank_targets(flat, target, collecting, centre, farthest, pen)
        origin = np.zeros_like(velocity)
        force = behaviors.arrive(origin, velocity, target, max_speed, cfg.drive_distance)
        # Strömbom's dog stops within 3 r_a of a sheep (it brakes: desired velocity 0).
        nearest = self._vector(flat, "sheep", diag)
        present = flat[:, self._at["sheep_present"]] > 0.5
        close = present & (np.hypot(nearest[:, 0], nearest[:, 1]) < 3 * cfg.repulsion_distance)
        force[close] = -velocity[close]
        action = force / cfg.dog_max_force
        norm = np.hypot(action[:, 0], action[:, 1])
        action /= np.maximum(norm, 1.0)[:, None]
        return action.astype(np.float32).reshape(*lead, 2), None

    def _flank_targets(
        self,
        flat: NDArray[np.float64],
        target: NDArray[np.float64],
        collecting: NDArray[np.bool_],
        centre: NDArray[np.float64],
        farthest: NDArray[np.float64],
        pen: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """The flanks team's targets: the dog nearest the straggler collects; the others
        drive from the drive point turned ``flank_angle`` towards their own side."""
        from steer_env import behaviors

        cfg = self.config
        mate = self._vector(flat, "dog", self._diag)  # the nearest other dog
        mate_here = flat[:, self._at["dog_present"]] > 0.5
        mine = np.hypot(farthest[:, 0], farthest[:, 1])
        theirs = np.hypot(farthest[:, 0] - mate[:, 0], farthest[:, 1] - mate[:, 1])
        collects = collecting & (~mate_here | (mine <= theirs))
        drive, _ = behaviors.shepherd_target(
            centre, farthest, pen, math.inf, cfg.repulsion_distance, cfg.drive_distance
        )
        arm = drive - centre
        # Which side of the line from the pen through the centre each dog is on (the dog
        # is at the origin of its frame); the other dog's side decides ties.
        axis = centre - pen
        side = _side(axis, -centre)
        side = np.where(side == 0, -_side(axis, mate - centre), side)
        side = np.where(side == 0, 1.0, side)
        angle = -side * cfg.flank_angle
        c, s = np.cos(angle), np.sin(angle)
        turned = np.stack([c * arm[:, 0] - s * arm[:, 1], s * arm[:, 0] + c * arm[:, 1]], axis=1)
        flank = centre + turned
        return np.where(collects[:, None], target, flank)


def _side(axis: NDArray[np.float64], offset: NDArray[np.float64]) -> NDArray[np.float64]:
    """The sign of the cross product ``axis x offset`` per row (+1: ``offset`` lies to the
    left of ``axis``)."""
    return np.sign(axis[:, 0] * offset[:, 1] - axis[:, 1] * offset[:, 0])


def _dog_factory(name: str) -> Callable[[HerdingConfig], HerdingDog]:
    def make(cfg: HerdingConfig) -> HerdingDog:
        return HerdingDog(name, cfg)

    make.__name__ = f"{name}_dog"
    return make


# --------------------------------------------------------------------------- the task
@dataclass(frozen=True)
class HerdingTask(TaskSpec, SharedOutcomeInfos):
    """The herding task's registry entry (see the module docstring)."""

    name: str = "herding"
    env_id: str | None = "steer_env/Herding-v0"
    env_module: str | None = "steer_env.envs.herding_v0"
    entry_point: str = "steer_env.envs.herding:HerdingEnv"
    vector_entry_point: str = "steer_env.envs.herding:make_herding_vector"
    learned_team: str = "dog"
    #: The config value that counts the learned dogs.
    agent_count: str | None = "n_dogs"
    default_config: HerdingConfig = field(default_factory=HerdingConfig)
    #: The scripted dogs, by name, the classic one first; each builds a policy
    #: (:class:`HerdingDog`) from a config.
    baselines: Mapping[str, Callable[[HerdingConfig], HerdingDog]] = field(
        default_factory=lambda: {
            "strombom": _dog_factory("strombom"),
            "driver": _dog_factory("driver"),
        }
    )
    #: The scripted teams of several dogs: each dog runs the policy on its own
    #: observation.
    team_baselines: Mapping[str, Callable[[HerdingConfig], HerdingDog]] = field(
        default_factory=lambda: {
            "strombom": _dog_factory("strombom"),
            "flanks": _dog_factory("flanks"),
        }
    )
    metrics: Metrics = field(
        default_factory=lambda: Metrics(
            "agents",
            success_means="every sheep penned (success_fraction of them) by the time limit",
            time_means="time to pen",
            goal={
                "criterion": "learned - strombom: success CI above 0 and restricted mean time "
                "to pen CI below 0",
                "time_shorter": True,
            },
            labels={
                "rate": "pen",
                "achieved": "penned",
                "event": "penned",
                "no_event": "not penned",
                "curve": "fraction of flocks not yet penned",
                "title": "Herding",
            },
            time_key="pen_step",
            outcomes=OUTCOME,
        )
    )
    training: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: training.table(
            ppo=training.defaults(15_000_000, 64, HERDING_PPO),
            sac=training.defaults(200_000, 4, training.SB3_SAC),
            rllib_ppo=training.defaults(2_000_000, 32, training.RLLIB_PPO),
        )
    )

    # --- the task protocol -------------------------------------------------------------
    def config(self, max_cycles: Any = None, **overrides: Any) -> HerdingConfig:
        return make_herding_config(self.default_config, overrides, max_cycles)

    def roster(self, cfg: HerdingConfig) -> list[VehicleSpec]:
        """The dogs first (learned), then the sheep."""
        dog = VehicleSpec(
            team="dog",
            strategy=None,
            mass=cfg.dog_mass,
            max_speed=cfg.dog_max_speed,
            max_force=cfg.dog_max_force,
            radius=cfg.vehicle_radius,
        )
        sheep = VehicleSpec(
            team="sheep",
            strategy=strombom_sheep(cfg),
            mass=cfg.sheep_mass,
            max_speed=cfg.sheep_max_speed,
            max_force=cfg.sheep_max_force,
            radius=cfg.vehicle_radius,
        )
        return [dog] * cfg.n_dogs + [sheep] * cfg.n_sheep

    def world(self, cfg: HerdingConfig) -> World:
        return World(
            dt=cfg.dt,
            arena_size=cfg.arena_size,
            time_limit=cfg.time_limit,
            pen_x=cfg.pen_x,
            pen_y=cfg.pen_y,
            pen_radius=cfg.pen_radius,
            n_sheep=cfg.n_sheep,
            success_fraction=cfg.success_fraction,
            observed_teammates=cfg.observed_dogs,
            observed_opponents=min(cfg.observed_sheep, cfg.n_sheep),
            start_spread=cfg.start_spread,
            start_margin=cfg.vehicle_radius,
            flock_pen_distance=cfg.flock_pen_distance,
            dog_start_distance=cfg.dog_start_distance,
            group_radius=cfg.group_radius,
            collect_distance=cfg.collect_distance,
            collect_offset=cfg.repulsion_distance,
            drive_distance=cfg.drive_distance,
            obstacles=cfg.obstacle_field(),
            success_reward=cfg.success_reward,
            shaping=cfg.reward_shaping,
            shaping_scale=cfg.shaping_scale,
            shaping_gamma=cfg.shaping_gamma,
            terminal_potential=cfg.terminal_potential,
            spread_weight=cfg.spread_weight,
            penned_weight=cfg.penned_weight,
            target_weight=cfg.target_weight,
        )

    def agent_names(self, cfg: HerdingConfig) -> list[str]:
        return [f"dog_{k}" for k in range(cfg.n_dogs)]

    def baselines_of(self, role: str) -> Mapping[str, Any]:
        check_role(role, ("dog",), self.name)
        return self.baselines

    def shared_baselines(self) -> Mapping[str, Any]:
        """The scripted teams of several dogs (:attr:`team_baselines`)."""
        return self.team_baselines

    def scripted_policy(self, name: str, cfg: HerdingConfig | None = None, seed: Any = 0) -> Any:
        """The scripted dog ``name`` (of :attr:`baselines` or :attr:`team_baselines`) for
        observations of ``cfg``."""
        cfg = self.default_config if cfg is None else cfg
        factory = self.baselines.get(name) or self.team_baselines.get(name)
        if factory is None:
            names = sorted({*self.baselines, *self.team_baselines})
            raise ValueError(f"unknown herding dog {name!r}: use one of {', '.join(names)}")
        return factory(cfg)

    def is_success(self, outcome: Any, role: str | None = None) -> Any:
        """Whether the flock was penned (``outcome``: the episode's ``is_success``)."""
        if role is not None:
            check_role(role, ("dog",), self.name)
        return outcome

    # --- infos ---------------------------------------------------------------------------
    def _info(self, env_results: Any, rewards: Any, ended: Any, batch: Any) -> dict[str, Any]:
        n_sheep = max(int(np.count_nonzero(batch.is_team("sheep"))), 1)
        info = {
            "reward_success": rewards["success"],
            "reward_shaping": rewards["shaping"],
            "penned": env_results["penned"],
            "flock_distance": env_results["flock_distance"],
            "is_success": env_results["is_success"] & ended,
            "pen_step": np.where(ended, env_results["pen_step"], -1),
        }
        info["penned_fraction"] = np.where(ended, env_results["penned"] / n_sheep, 0.0)
        for key in OUTCOME[1:]:
            info[key] = np.where(ended, env_results[key], 0.0)
        return info

    def _reset_fields(self, batch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The step's fields after a reset: the start the rules recorded (``EPISODE``)."""
        e = batch.num_envs
        zeros = np.zeros(e)
        start = batch.state.episode
        env = {
            "penned": start["start_penned"].copy(),
            "flock_distance": start["start_distance"].copy(),
            "is_success": np.zeros(e, dtype=bool),
            "pen_step": np.full(e, -1, dtype=np.int64),
            **{key: zeros for key in OUTCOME[1:]},
        }
        return env, {"success": zeros, "shaping": zeros}

    def reset_info(self, batch: Any) -> dict[str, Any]:
        env, rewards = self._reset_fields(batch)
        return first_env_info(self._info(env, rewards, np.zeros(1, dtype=bool), batch))

    def step_info(self, row: Any, batch: Any) -> dict[str, Any]:
        env = {name: np.asarray([getattr(row, name)]) for name in rules.ENV_RESULT.names}
        rewards = {"success": np.asarray([row.success]), "shaping": np.asarray([row.shaping])}
        return first_env_info(self._info(env, rewards, np.asarray([row.done]), batch))

    def vector_agent_info(self, result: Any, batch: Any) -> dict[str, Any]:
        """Each dog's reward terms, ``(E, k)``: the success term is the same for every dog,
        the shaping term each dog's own (its distance to Strömbom's point)."""
        if result is None:
            zeros = np.zeros((batch.num_envs, batch.n_agents))
            return {"reward_success": zeros, "reward_shaping": zeros.copy()}
        return {"reward_success": result.reward_success, "reward_shaping": result.reward_shaping}

    def vector_reset_info(self, batch: Any) -> dict[str, Any]:
        env, rewards = self._reset_fields(batch)
        return self._info(env, rewards, np.zeros(batch.num_envs, dtype=bool), batch)

    def vector_step_info(self, result: Any, batch: Any, ended: Any) -> dict[str, Any]:
        env = {name: getattr(result, name) for name in rules.ENV_RESULT.names}
        agent = self.vector_agent_info(result, batch)
        rewards = {
            "success": agent["reward_success"][:, 0],
            "shaping": agent["reward_shaping"][:, 0],
        }
        return self._info(env, rewards, ended, batch)

    def final_info(self, result: Any, batch: Any, envs: Any) -> list[dict[str, Any]]:
        info = self.vector_step_info(result, batch, result.done)
        keys = ("is_success", "pen_step", *OUTCOME)
        return [{key: scalar(info[key][e]) for key in keys} for e in np.asarray(envs).tolist()]


#: PPO for herding: episodes of 300 steps whose success comes at the end, so rollouts longer
#: than an episode and a discount whose horizon (1 / (1 - gamma) = 1,000 steps) spans it.
#: (512-step rollouts with gamma 0.995 peak near 6M timesteps and then fall.) Each rollout
#: is used for 10 epochs at 6e-4: 5 epochs at 3e-4 learned more slowly and plateaued lower.
HERDING_PPO: Mapping[str, Any] = {
    **training.SB3_PPO,
    "n_steps": 1024,
    "batch_size": 4096,
    "n_epochs": 10,
    "learning_rate": 6e-4,
    "gamma": 0.999,
    "ent_coef": 0.0,
}

HERDING = register(HerdingTask(default_config=HerdingConfig()))
