"""Validated configuration of the pursuit/evasion tasks.

Every keyword argument accepted by ``gym.make("steer_env/Pursuit-v0", ...)`` and
``gym.make("steer_env/Evasion-v0", ...)`` is a field of :class:`TaskConfig`. Unknown names
and out-of-range values raise ``ValueError`` naming the argument and what it accepts.

The ranges are physical bounds chosen so that every accepted configuration simulates with
finite state: speeds up to 1,000 m/s, forces up to 10^6 N, masses from 1 g to 1,000 t,
weights up to 10^6, an arena up to 10 km. Within them every product the step forms
(a weight times a force, a speed times a look-ahead, ...) stays far below float64's range.

Units: metres, seconds, kilograms, newtons.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from steer_env.engine.layout import ObstacleField


class ObstacleConfig:
    """The obstacle fields every task's config has (its last fields: :func:`with_obstacles`).

    Either a fixed layout (``obstacles``) or ``n_obstacles`` circles placed anew at each
    reset from the episode's seed, never both; without either the arena is empty, as
    before obstacles existed. The scripted vehicles add Reynolds' obstacle avoidance (a
    detection box) to their strategies whenever there are obstacles."""

    #: A fixed layout: a sequence of ``(x, y, radius)`` circles, m (``None``: no fixed layout)
    obstacles: Any = None
    n_obstacles: int = 0  #: circles placed at each reset from the seed (0: none)
    obstacle_radius_min: float = 1.0  #: placed obstacles' radii are uniform in [min, max], m
    obstacle_radius_max: float = 2.0  #: m
    #: least gap between an obstacle and the walls, another obstacle, a vehicle's start or
    #: the area the task keeps clear (the pen), m; at least every vehicle's diameter
    obstacle_gap: float = 1.0
    #: obstacle slots in the observation (nearest first); -1 means min(obstacles, 4)
    observed_obstacles: int = -1
    obstacle_weight: float = 6.0  #: scripted vehicles: weight of obstacle avoidance
    detection_length: float = 4.0  #: scripted vehicles: detection box's least length, m

    @property
    def obstacle_count(self) -> int:
        """Obstacles in each episode (the fixed layout's or ``n_obstacles``)."""
        return len(self.obstacles) if self.obstacles is not None else self.n_obstacles

    @property
    def obstacle_slots(self) -> int:
        """Obstacle slots of the observation."""
        if self.observed_obstacles >= 0:
            return self.observed_obstacles
        return min(self.obstacle_count, 4)

    def obstacle_field(self) -> ObstacleField:
        """The world's :class:`~steer_env.engine.layout.ObstacleField` of this config."""
        return ObstacleField(
            layout=tuple(self.obstacles or ()),
            count=0 if self.obstacles is not None else self.n_obstacles,
            radius_min=self.obstacle_radius_min,
            radius_max=self.obstacle_radius_max,
            gap=self.obstacle_gap,
            observed=self.obstacle_slots,
        )


def with_obstacles(cls: type) -> type:
    """Config class ``cls`` (an :class:`ObstacleConfig`, before ``@dataclass``) with the
    obstacle fields after its own, so each is defined once and the config's own fields
    keep their places (in its errors' lists of accepted arguments too). An obstacle field
    ``cls`` declares itself keeps its default there (a task's own obstacle sizes)."""
    own = dict(inspect.get_annotations(cls))
    for name, kind in inspect.get_annotations(ObstacleConfig).items():
        own.pop(name, None)
        own[name] = kind
        if name not in cls.__dict__:
            setattr(cls, name, getattr(ObstacleConfig, name))
    cls.__annotations__ = own
    return cls


#: The accepted ranges of :class:`ObstacleConfig`'s numbers (every task's config).
OBSTACLE_RANGES: dict[str, Range] = {}  # filled below, once Range and WEIGHT exist


def obstacle_avoidance(cfg: Any) -> list[Any]:
    """The behaviour a scripted vehicle of ``cfg``'s task adds after wall avoidance when
    the task has obstacles: Reynolds' obstacle avoidance with Buckland's detection box
    (``[]`` in an empty arena, so its strategies are as they were)."""
    if getattr(cfg, "obstacle_count", 0) == 0:
        return []
    from steer_env.engine.strategy import Behavior

    return [
        Behavior("obstacle_avoidance", cfg.obstacle_weight, detection_length=cfg.detection_length)
    ]


@dataclass(frozen=True)
@with_obstacles
class TaskConfig(ObstacleConfig):
    """Parameters of a pursuit/evasion task (see the env docstrings for defaults per task)."""

    n_opponents: int = 1  #: scripted opponents (evaders in Pursuit, pursuers in Evasion)
    arena_size: float = 25.0  #: side of the square arena, m; the arena is [-s/2, s/2]^2
    dt: float = 0.1  #: physics and decision step, s
    time_limit: int = 100  #: episode length, steps (reaching it ends the episode: terminal)
    capture_radius: float = 0.8  #: capture when a pursuer's centre is this close to an evader's, m
    min_start_distance: float = 6.0  #: initial distance between the agent and every opponent, m
    vehicle_radius: float = 0.3  #: body radius of every vehicle, m (walls and drawing)
    agent_max_speed: float = 3.0  #: m/s
    agent_max_force: float = 6.0  #: N
    agent_mass: float = 1.0  #: kg
    opponent_max_speed: float = 3.0  #: m/s
    opponent_max_force: float = 6.0  #: N
    opponent_mass: float = 1.0  #: kg
    max_observed_opponents: int = 0  #: opponent slots in the observation; 0 means n_opponents
    reward_shaping: bool = True  #: add the potential-based distance term
    shaping_scale: float = 1.0  #: potential = -/+ shaping_scale * distance / arena diagonal
    shaping_gamma: float = 0.99  #: discount of the shaping term: set it to the learner's gamma
    # Scripted opponents (Reynolds behaviours combined by Buckland's prioritized running sum).
    wall_weight: float = 3.0  #: weight of wall avoidance (first priority)
    feeler_length: float = 2.0  #: wall feeler length, m
    evade_weight: float = 1.0  #: evaders: weight of evade
    threat_range: float = 8.0  #: evaders: pursuers farther than this are ignored, m
    wander_weight: float = 1.0  #: evaders: weight of wander when unthreatened
    wander_radius: float = 1.0  #: m
    wander_distance: float = 2.0  #: m
    wander_jitter: float = 8.0  #: m/s
    pursuit_weight: float = 1.0  #: pursuers: weight of pursuit
    separation_weight: float = 1.0  #: pursuers: weight of separation from other pursuers
    separation_radius: float = 3.0  #: pursuers: separation neighbourhood, m
    max_prediction_time: float = 3.0  #: cap on pursuit/evade look-ahead, s
    #: The scripted opponents' strategy: ``None`` for the task's default, the name of a
    #: registered strategy of the opponents' role (``"classic"``, ``"naive"``), or any
    #: :class:`~steer_env.engine.strategy.Strategy` (classic behaviours as data).
    opponent_strategy: Any = None

    @property
    def observed_opponents(self) -> int:
        return self.max_observed_opponents or self.n_opponents

    @property
    def half_size(self) -> float:
        return self.arena_size / 2.0

    @property
    def diagonal(self) -> float:
        return self.arena_size * math.sqrt(2.0)


#: An accepted range: (type, low, high, low inclusive); the high end is inclusive.
Range = tuple[type, float, float, bool]

#: The physical bounds of the module docstring, one definition for every task's config.
SPEED: Range = (float, 0.0, 1e3, False)  #: m/s
FORCE: Range = (float, 0.0, 1e6, False)  #: N
MASS: Range = (float, 1e-3, 1e6, True)  #: kg: 1 g to 1,000 t
WEIGHT: Range = (float, 0.0, 1e6, True)  #: weights, scales, gains and rewards
TIME_LIMIT: Range = (int, 1, 10**7, True)  #: steps of an episode
#: Environments one batch may hold: far beyond what any machine simulates at once, small
#: enough that a mistaken count is a range error instead of an allocation of terabytes.
MAX_NUM_ENVS = 2**24
#: Fields of the same name and meaning in every task's config (the team task's
#: :class:`~steer_env.tasks.team_pursuit.TeamConfig` too).
COMMON_RANGES: dict[str, Range] = {
    "arena_size": (float, 2.0, 1e4, True),
    "dt": (float, 0.0, 1.0, False),
    "time_limit": TIME_LIMIT,
    "capture_radius": (float, 0.0, 1e4, False),
    "min_start_distance": (float, 0.0, 1e4, True),
    "vehicle_radius": (float, 0.0, 1e4, False),
    "shaping_scale": WEIGHT,
    "shaping_gamma": (float, 0.0, 1.0, False),
    "wall_weight": WEIGHT,
    "feeler_length": (float, 0.0, 1e4, False),
    "evade_weight": WEIGHT,
    "threat_range": (float, 0.0, 1e5, False),
    "pursuit_weight": WEIGHT,
    "separation_weight": WEIGHT,
    "separation_radius": (float, 0.0, 1e5, False),
    "max_prediction_time": (float, 0.0, 1e6, False),
    "wander_weight": WEIGHT,
    "wander_radius": (float, 0.0, 1e4, False),
    "wander_distance": (float, 0.0, 1e4, True),
    "wander_jitter": (float, 0.0, 1e6, True),
}


OBSTACLE_RANGES.update(
    {
        "n_obstacles": (int, 0, 64, True),
        "obstacle_radius_min": (float, 0.0, 1e4, False),
        "obstacle_radius_max": (float, 0.0, 1e4, False),
        "obstacle_gap": (float, 0.0, 1e4, True),
        "observed_obstacles": (int, -1, 64, True),
        "obstacle_weight": WEIGHT,
        "detection_length": (float, 0.0, 1e4, False),
    }
)
COMMON_RANGES.update(OBSTACLE_RANGES)


def check_obstacle_layout(value: Any) -> tuple[tuple[float, float, float], ...] | None:
    """A fixed obstacle layout (``obstacles=``) as a tuple of ``(x, y, radius)`` floats, or
    ``None``; ``ValueError`` naming ``obstacles`` otherwise."""
    if value is None:
        return None
    accepted = "a sequence of (x, y, radius) circles with finite x, y and radius > 0"
    try:
        # numpy would read "1" as 1.0 and True as 1.0: only numbers are numbers here.
        if any(
            isinstance(v, str | bytes | bool | np.bool_)
            for v in np.array(value, dtype=object).ravel().tolist()
        ):
            raise ValueError
        table = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"obstacles must be {accepted}, got {value!r}") from None
    if table.size == 0:
        table = table.reshape(0, 3)
    if table.ndim != 2 or table.shape[1] != 3:
        raise ValueError(f"obstacles must be {accepted}, got shape {table.shape}")
    if not np.all(np.isfinite(table)) or np.any(table[:, 2] <= 0):
        raise ValueError(f"obstacles must be {accepted}, got {value!r}")
    if len(table) > 64:
        raise ValueError(f"obstacles must hold at most 64 circles, got {len(table)}")
    return tuple((float(x), float(y), float(r)) for x, y, r in table)


def check_obstacles(cfg: Any) -> None:
    """The rules that tie the obstacle fields to each other and to the arena (any task's
    config): ``ValueError`` naming the argument otherwise. Every vehicle must fit through
    every gap (a gap of at least its diameter), so the walls and the obstacles never push
    a vehicle into each other."""
    widest = 2.0 * cfg.vehicle_radius
    if cfg.obstacles is not None and cfg.n_obstacles:
        raise ValueError(
            f"pass either obstacles (a fixed layout) or n_obstacles (placed per episode), "
            f"not both: got {len(cfg.obstacles)} obstacles and n_obstacles={cfg.n_obstacles}"
        )
    if cfg.obstacle_radius_min > cfg.obstacle_radius_max:
        raise ValueError(
            f"obstacle_radius_min must be at most obstacle_radius_max "
            f"({cfg.obstacle_radius_max:g} m), got {cfg.obstacle_radius_min!r}"
        )
    if cfg.n_obstacles and cfg.obstacle_gap < widest:
        raise ValueError(
            f"obstacle_gap must be at least the vehicles' diameter ({widest:g} m: every "
            f"vehicle fits through every gap), got {cfg.obstacle_gap!r}"
        )
    if cfg.n_obstacles and cfg.obstacle_radius_min + cfg.obstacle_gap >= cfg.half_size:
        raise ValueError(
            f"obstacle_radius_min + obstacle_gap must be below half the arena_size "
            f"({cfg.half_size:g} m), got {cfg.obstacle_radius_min + cfg.obstacle_gap:g}"
        )
    layout = cfg.obstacles or ()
    for k, (x, y, r) in enumerate(layout):
        room = max(abs(x), abs(y)) + r
        if room > cfg.half_size - widest:
            raise ValueError(
                f"obstacles[{k}] = ({x:g}, {y:g}, {r:g}) must leave a gap of at least the "
                f"vehicles' diameter ({widest:g} m) to the walls at +/-{cfg.half_size:g} m"
            )
        for q in range(k):
            qx, qy, qr = layout[q]
            gap = math.hypot(x - qx, y - qy) - r - qr
            if gap < widest:
                raise ValueError(
                    f"obstacles[{q}] and obstacles[{k}] are {gap:g} m apart: obstacles must "
                    f"leave a gap of at least the vehicles' diameter ({widest:g} m)"
                )


def field_ranges(config_class: type, ranges: dict[str, Range]) -> dict[str, Range]:
    """``ranges`` in the order of ``config_class``'s fields (each key must be a field)."""
    fields = [f.name for f in dataclasses.fields(config_class)]
    unknown = sorted(set(ranges) - set(fields))
    if unknown:
        raise TypeError(f"not fields of {config_class.__name__}: {', '.join(unknown)}")
    return {name: ranges[name] for name in fields if name in ranges}


# name -> accepted range of TaskConfig's numbers
_RANGES: dict[str, Range] = field_ranges(
    TaskConfig,
    {
        **COMMON_RANGES,
        "n_opponents": (int, 1, 32, True),
        "agent_max_speed": SPEED,
        "agent_max_force": FORCE,
        "agent_mass": MASS,
        "opponent_max_speed": SPEED,
        "opponent_max_force": FORCE,
        "opponent_mass": MASS,
        "max_observed_opponents": (int, 0, 32, True),
    },
)
FIELDS = tuple(f.name for f in dataclasses.fields(TaskConfig))


def _describe(low: float, high: float, low_inclusive: bool) -> str:
    lo = "[" if low_inclusive else "("
    hi = "inf)" if math.isinf(high) else f"{high:g}]"
    return f"{lo}{low:g}, {hi}"


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else ``ValueError`` naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


class UnknownArgumentError(TypeError, ValueError):
    """A keyword argument that no field of the config accepts.

    A ``TypeError``, as Python and Gymnasium's own envs raise for an unexpected keyword
    (tools such as TorchRL retry without an optional keyword on ``TypeError``), and a
    ``ValueError``, as every other configuration error here."""


def check_overrides(
    overrides: dict[str, Any], fields: tuple[str, ...], check: Callable[[str, Any], Any]
) -> dict[str, Any]:
    """``overrides`` with each value passed through ``check(name, value)``;
    :class:`UnknownArgumentError` listing the accepted ``fields`` for unknown names (every
    task's config)."""
    unknown = sorted(set(overrides) - set(fields))
    if unknown:
        # Python's own wording for one ("got an unexpected keyword argument 'x'"): tools
        # such as TorchRL recognise an optional keyword they may drop by that text.
        what = (
            f"an unexpected keyword argument {unknown[0]!r}"
            if len(unknown) == 1
            else f"unexpected keyword arguments {', '.join(map(repr, unknown))}"
        )
        raise UnknownArgumentError(f"got {what}; accepted arguments: {', '.join(fields)}")
    return {name: check(name, v) for name, v in overrides.items()}


def _check(name: str, value: Any) -> Any:
    if name == "obstacles":
        return check_obstacle_layout(value)
    if name == "opponent_strategy":
        from steer_env.engine.strategy import Strategy

        if value is None or isinstance(value, str | Strategy):
            return value
        raise ValueError(
            f"opponent_strategy must be None, a strategy name or a Strategy, got {value!r}"
        )
    if name == "reward_shaping":
        return check_flag(name, value)
    return check_number(name, value, *_RANGES[name])


def check_number(
    name: str, value: Any, kind: type, low: float, high: float, low_inclusive: bool
) -> Any:
    """``value`` as ``kind`` (int or float) if it lies in the range, else ``ValueError``
    naming ``name`` and the accepted range (shared by every task's config)."""
    accepted = (
        f"{'an integer' if kind is int else 'a number'} in {_describe(low, high, low_inclusive)}"
    )
    # numbers.Real also admits numpy scalars; bools are ints to Python but not here.
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond float64's range, such as 10**400
        raise ValueError(f"{name} must be {accepted}, got {value!r}") from None
    if not math.isfinite(as_float) or (kind is int and as_float != int(value)):
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    value = kind(value)
    ok = value <= high and (value >= low if low_inclusive else value > low)
    if not ok:
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    return value


def check_num_envs(num_envs: Any, name: str = "num_envs") -> int:
    """``num_envs`` as an int in [1, :data:`MAX_NUM_ENVS`], else ``ValueError`` naming
    ``name`` (every batched front end)."""
    try:
        return check_number(name, num_envs, int, 1, MAX_NUM_ENVS, True)
    except ValueError:
        raise ValueError(
            f"{name} must be an integer in [1, {MAX_NUM_ENVS}], got {num_envs!r}"
        ) from None


def time_limit_alias(overrides: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    """``overrides`` with ``value``, another name for ``time_limit`` (PettingZoo's
    ``max_cycles``), validated under its own ``name``; ``ValueError`` when both are given
    and disagree."""
    if value is None:
        return overrides
    steps = check_number(name, value, *TIME_LIMIT)
    if "time_limit" in overrides and overrides["time_limit"] != steps:
        raise ValueError(
            f"{name}={value!r} disagrees with time_limit={overrides['time_limit']!r}: "
            "pass only one of them"
        )
    return {**overrides, "time_limit": steps}


def explicit_fields(overrides: dict[str, Any]) -> frozenset[str]:
    """The config fields a user set explicitly (to tell a chosen ``time_limit`` from the
    default one)."""
    return frozenset(name for name in overrides if name in FIELDS)


def check_arena_geometry(cfg: Any) -> None:
    """The rules that tie the arena's lengths together (any config with ``arena_size``,
    ``half_size``, ``capture_radius``, ``vehicle_radius``, ``feeler_length`` and
    ``min_start_distance``): ``ValueError`` naming the argument otherwise."""
    if cfg.capture_radius >= cfg.half_size:
        raise ValueError(
            f"capture_radius must be smaller than half the arena_size ({cfg.half_size:g} m), "
            f"got {cfg.capture_radius!r}"
        )
    if cfg.vehicle_radius * 4 >= cfg.arena_size:
        raise ValueError(
            f"vehicle_radius must be below arena_size / 4 ({cfg.arena_size / 4:g} m), "
            f"got {cfg.vehicle_radius!r}"
        )
    if cfg.feeler_length >= cfg.half_size:
        raise ValueError(
            f"feeler_length must be below half the arena_size ({cfg.half_size:g} m), "
            f"got {cfg.feeler_length!r}"
        )
    if cfg.min_start_distance <= cfg.capture_radius:
        raise ValueError(
            f"min_start_distance must exceed capture_radius ({cfg.capture_radius:g} m), "
            f"got {cfg.min_start_distance!r}"
        )
    if cfg.min_start_distance >= cfg.arena_size - 2 * cfg.vehicle_radius:
        raise ValueError(
            "min_start_distance must be below arena_size - 2 * vehicle_radius "
            f"({cfg.arena_size - 2 * cfg.vehicle_radius:g} m), got {cfg.min_start_distance!r}"
        )


def make_config(defaults: TaskConfig, overrides: dict[str, Any]) -> TaskConfig:
    """``defaults`` with ``overrides`` applied, every value and the combination validated."""
    values = check_overrides(overrides, FIELDS, _check)
    cfg = dataclasses.replace(defaults, **values)
    check_arena_geometry(cfg)
    check_obstacles(cfg)
    return cfg
