"""Scripted strategies as data: classic behaviours with weights and parameters, combined by
one of Buckland's three methods.

A :class:`Strategy` is what a scripted vehicle does, written as data rather than code::

    Strategy(
        [
            Behavior("wall_avoidance", weight=3.0, feeler_length=2.0),
            Behavior("evade", weight=1.0, threat_range=8.0, prediction_time=3.0),
            Behavior("wander", weight=1.0, wander_radius=1.0, wander_distance=2.0,
                     wander_jitter=8.0, active_beyond=8.0),
        ],
        combination="prioritized",
    )

Behaviours are listed in priority order (most important first). Every behaviour of
:mod:`steer_env.behaviors` is available by name (:data:`~steer_env.engine.layout.BEHAVIOR_KINDS`);
its parameters are the fields of :data:`~steer_env.engine.layout.BEHAVIOR` and default to
the library's defaults (the alternative forms of :mod:`steer_env.core.options`, such as
``separation_form="buckland"``, by name). ``target`` says relative to whom it steers (the
nearest opponent by default; see :data:`~steer_env.engine.layout.TARGET_NAMES`).
``active_beyond`` (m) makes a behaviour act only while the nearest opponent is farther than
that (the classic evader wanders only while unthreatened), ``active_within`` (m) only while
it is at most that far (a sheep flocks only while a dog is near). ``neighbor_count`` makes
separation, alignment and cohesion topological: only the ``k`` nearest neighbours within
``neighbor_radius`` count (Strömbom's local centre of mass), ties by vehicle index.
``wander_speed`` is wander's desired speed as a fraction of max speed (a grazing sheep
ambles).

Offset pursuit steers to a point fixed in the target's frame (``offset_forward``,
``offset_side``; forward is the target's direction of motion, the world x axis while it
stands still). With ``offset_spread`` the teammates in the game spread around the target:
a vehicle's offset is rotated by ``2 pi rank / team_size``, where ``team_size`` is 1 + its
teammates in the game and ``rank`` the number of them whose bearing from the target comes
before its own, counterclockwise from the target's backward direction turned clockwise by
half a slot (``pi / team_size``; ties by distance to the target, then position). Both come
from what the vehicle observes (its roster index would not: observations order teammates
nearest first), and the pursuers take the free bearings nearest to where they already are
instead of crossing each other (:func:`steer_env.engine.step.spread_rank`).

The engine compiles the table (:func:`encode`) and runs it for the scripted vehicles of
every environment; the classic baselines in :mod:`agents.evaluation.scripted` run the very same
strategies from their observations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.core.options import OPTIONS, option_code
from steer_env.engine import layout

#: Parameter defaults (the library's defaults where it has one). ``inf`` means "no limit".
DEFAULTS: Mapping[str, float | bool | str] = {
    "probability": 1.0,
    "active_beyond": -1.0,
    "active_within": math.inf,
    "threat_range": math.inf,
    "prediction_time": math.inf,
    "slowing_radius": 1.0,
    "max_deceleration": math.inf,
    "wander_radius": 1.0,
    "wander_distance": 2.0,
    "wander_jitter": 8.0,
    "wander_speed": 1.0,
    "feeler_length": 2.0,
    "side_angle": math.pi / 4,
    "side_scale": 0.5,
    "neighbor_radius": 3.0,
    "neighbor_count": 0,
    "view_angle": 2 * math.pi,  # rad: flocking's field of view (all around by default)
    "min_distance": 1e-3,
    "offset_forward": 0.0,
    "offset_side": 0.0,
    "offset_spread": False,
    "detection_length": 2.0,
    "braking_weight": 0.2,
    "hide_distance": 1.0,
    "time_horizon": 2.0,
    "look_ahead": 2.0,
    "path_prediction": 0.5,
    "path_loop": False,
    "flow_radius": 5.0,
    "flow_clockwise": False,
    "flow_gain": 1.0,
    "flow_prediction": 0.5,
    # The alternative forms of steer_env.core.options (by name; the first is the default).
    "separation_form": "reynolds",
    "wander_form": "seek",
    "prediction_form": "buckland",
}

#: The target each behaviour steers relative to unless told otherwise.
DEFAULT_TARGET = {
    "seek": "nearest_opponent",
    "flee": "nearest_opponent",
    "arrive": "nearest_opponent",
    "pursuit": "nearest_opponent",
    "evade": "nearest_opponent",
    "wander": "none",
    "wall_avoidance": "none",
    "separation": "teammates",
    "alignment": "teammates",
    "cohesion": "teammates",
    "obstacle_avoidance": "none",
    "interpose": "nearest_opponent",  # between it and the nearest teammate
    "hide": "nearest_opponent",
    "offset_pursuit": "nearest_opponent",
    "follow_path": "none",
    "unaligned_collision_avoidance": "everyone",
    "flow_field": "arena_center",
}

_FLAGS = ("offset_spread", "path_loop", "flow_clockwise")
#: The largest magnitude of a finite weight or parameter: the bound of the tasks'
#: configuration weights and forces, within which every product the step forms stays far
#: below float64's range (a weight of 1e308 times a force is not finite).
MAGNITUDE_MAX = 1e6
#: Parameters that may be infinite (no limit).
_MAY_BE_INF = (
    "threat_range",
    "prediction_time",
    "max_deceleration",
    "active_within",
    "neighbor_radius",
)


@dataclass(frozen=True)
class Behavior:
    """One classic behaviour of a strategy: its name, weight and parameters."""

    kind: str
    weight: float = 1.0
    target: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __init__(
        self, kind: str, weight: float = 1.0, target: str | None = None, **params: Any
    ) -> None:
        if kind not in layout.BEHAVIOR_KINDS:
            raise ValueError(
                f"unknown behavior {kind!r}; accepted: {', '.join(layout.BEHAVIOR_KINDS)}"
            )
        target = DEFAULT_TARGET[kind] if target is None else target
        if target not in layout.TARGET_NAMES:
            raise ValueError(
                f"{kind}: unknown target {target!r}; accepted: {', '.join(layout.TARGET_NAMES)}"
            )
        unknown = sorted(set(params) - set(DEFAULTS))
        if unknown:
            raise ValueError(
                f"{kind}: unknown parameter(s) {', '.join(map(repr, unknown))}; accepted: "
                f"{', '.join(DEFAULTS)}"
            )
        weight = _number(f"{kind}.weight", weight)
        if not 0 <= weight <= MAGNITUDE_MAX:
            raise ValueError(f"{kind}.weight must be in [0, {MAGNITUDE_MAX:g}], got {weight!r}")
        for name, value in params.items():
            if name in OPTIONS:
                option_code(name, value, f"{kind}.{name}")
                continue
            if name in _FLAGS:
                if not isinstance(value, bool | np.bool_):
                    raise ValueError(f"{kind}.{name} must be True or False, got {value!r}")
                continue
            v = _number(f"{kind}.{name}", value, allow_inf=name in _MAY_BE_INF)
            if math.isfinite(v) and abs(v) > MAGNITUDE_MAX:
                raise ValueError(
                    f"{kind}.{name} must be at most {MAGNITUDE_MAX:g} in magnitude"
                    f"{' (or inf)' if name in _MAY_BE_INF else ''}, got {value!r}"
                )
            if name == "probability" and not 0 < v <= 1:
                raise ValueError(f"{kind}.probability must be in (0, 1], got {value!r}")
            if name == "neighbor_count" and (v != int(v) or not 0 <= v <= 10**6):
                raise ValueError(
                    f"{kind}.neighbor_count must be an integer in [0, 1000000] (0: every "
                    f"neighbour within neighbor_radius), got {value!r}"
                )
            if name == "wander_speed" and not 0 < v <= 1:
                raise ValueError(f"{kind}.wander_speed must be in (0, 1], got {value!r}")
            if name == "view_angle" and not 0 < v <= 2 * math.pi:
                raise ValueError(f"{kind}.view_angle must be in (0, 2*pi] radians, got {value!r}")
            if name not in ("active_beyond", "offset_forward", "offset_side") and v < 0:
                raise ValueError(f"{kind}.{name} must be >= 0, got {value!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "params", dict(params))

    def value(self, name: str) -> Any:
        """A parameter's value (its default when not given)."""
        return self.params.get(name, DEFAULTS[name])


def _number(name: str, value: Any, allow_inf: bool = False) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


@dataclass(frozen=True)
class Strategy:
    """Behaviours in priority order, combined by ``combination``: ``"prioritized"``
    (Buckland's prioritized truncated running sum), ``"weighted_sum"`` (weighted truncated
    sum) or ``"dithered"`` (prioritized dithering; each behaviour's ``probability``)."""

    behaviors: tuple[Behavior, ...]
    combination: str = "prioritized"
    name: str = ""

    def __init__(
        self, behaviors: Sequence[Behavior], combination: str = "prioritized", name: str = ""
    ) -> None:
        behaviors = tuple(behaviors)
        if not behaviors:
            raise ValueError("a strategy needs at least one behavior")
        for b in behaviors:
            if not isinstance(b, Behavior):
                raise ValueError(f"strategy behaviors must be Behavior objects, got {b!r}")
        if combination not in layout.COMBINATION_NAMES:
            raise ValueError(
                f"unknown combination {combination!r}; accepted: "
                f"{', '.join(layout.COMBINATION_NAMES)}"
            )
        object.__setattr__(self, "behaviors", behaviors)
        object.__setattr__(self, "combination", combination)
        object.__setattr__(self, "name", name)

    @property
    def draws(self) -> int:
        """Random draws per step: two per wander, one per behaviour when dithering."""
        n = 2 * sum(b.kind == "wander" for b in self.behaviors)
        if self.combination == "dithered":
            n += len(self.behaviors)
        return n

    def wander_radius(self) -> float:
        """The first wander's radius (the start target is placed on that circle)."""
        for b in self.behaviors:
            if b.kind == "wander":
                return float(b.value("wander_radius"))
        return 0.0


def encode(
    strategies: Sequence[Strategy],
) -> tuple[NDArray[np.void], NDArray[np.void]]:
    """The compiled table of ``strategies``: ``(S, B)`` :data:`~layout.BEHAVIOR` records (B
    the longest strategy) and ``(S,)`` :data:`~layout.STRATEGY` records."""
    s_count = max(len(strategies), 1)
    width = max((len(s.behaviors) for s in strategies), default=1)
    table = np.zeros((s_count, width), dtype=layout.BEHAVIOR)
    info = np.zeros(s_count, dtype=layout.STRATEGY)
    for s, strategy in enumerate(strategies):
        info[s]["combination"] = layout.COMBINATION_NAMES.index(strategy.combination)
        info[s]["n_behaviors"] = len(strategy.behaviors)
        for k, b in enumerate(strategy.behaviors):
            row = table[s, k]
            row["kind"] = layout.BEHAVIOR_KINDS.index(b.kind)
            row["target"] = layout.TARGET_NAMES.index(b.target)
            row["weight"] = b.weight
            for name in DEFAULTS:
                value = b.value(name)
                if name == "view_angle":
                    # The record holds what the neighbour test compares with (in_view).
                    row["view_cos"] = math.cos(value / 2)
                else:
                    row[name] = option_code(name, value) if name in OPTIONS else value
    return table, info
