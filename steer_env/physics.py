"""Vehicle physics: Reynolds' simple vehicle model, over arrays.

Units (used throughout steer-env): metres (m), seconds (s), kilograms (kg), newtons (N).

A vehicle is a point mass with a velocity, a maximum speed and a maximum steering force
(Reynolds 1999, "Steering Behaviors For Autonomous Characters", section "A Simple Vehicle
Model"). One Euler step of length ``dt`` is exactly the classic update::

    force        = truncate(steering_force, max_force)      # N
    acceleration = force / mass                             # m/s^2
    velocity     = truncate(velocity + acceleration * dt, max_speed)
    position     = position + velocity * dt
    heading      = velocity / |velocity|   (kept unchanged while |velocity| ~ 0)

The formula is the scalar kernel :func:`steer_env.core.physics.integrate` (which also
defines :data:`MIN_HEADING_SPEED`, ``1e-8`` m/s: slower vehicles keep their heading), run
over the arrays by a compiled loop. The functions here never validate their inputs (they
sit on the hot path); :class:`VehicleParams` and :class:`Vehicles` validate once, at construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from steer_env import vecmath
from steer_env.core.arrays import LOOPS, NotFast, float64_arrays, rows

Array = NDArray[np.float64]


def __getattr__(name: str) -> Any:
    # The constant lives in the core (where the kernel reads it); importing the core imports
    # numba, so it happens on first use rather than at ``import steer_env``.
    if name == "MIN_HEADING_SPEED":
        from steer_env.core.physics import MIN_HEADING_SPEED

        return MIN_HEADING_SPEED
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rows_view(a: Array, lead: tuple[int, ...], n: int) -> Array | None:
    """``a`` as an ``(n, 2)`` array sharing its memory (the compiled loop writes through
    any strides), or None if it has another shape or dtype."""
    if not float64_arrays(a):
        return None
    if a.shape == (n, 2):
        return a
    if a.shape == (*lead, 2):
        view = a.reshape(n, 2)
        return view if np.shares_memory(view, a) and view.base is not None else None
    return None


def integrate(
    position: Array,
    velocity: Array,
    heading: Array,
    steering_force: Array,
    mass: Array,
    max_speed: Array,
    max_force: Array,
    dt: float,
    out: tuple[Array, Array, Array] | None = None,
) -> tuple[Array, Array, Array]:
    """Advance vehicles by one Euler step of ``dt`` seconds.

    Arrays: ``position``, ``velocity``, ``heading``, ``steering_force`` are ``(..., 2)``;
    ``mass`` (kg), ``max_speed`` (m/s), ``max_force`` (N) are ``(...)`` or broadcastable.

    Returns ``(position, velocity, heading)``. With ``out=(p, v, h)`` the results are
    written into those arrays (which may be the inputs themselves) and they are returned;
    no temporaries are then allocated per call for C-contiguous float64 arrays.

    Guarantees: ``|velocity_new - velocity| <= max_force / mass * dt`` (before the speed
    truncation, and after it too when the old velocity was within ``max_speed``: scaling
    onto the speed disc is a projection, which cannot move the velocity further from the old
    one), ``|velocity_new| <= max_speed``, and a zero force leaves the velocity unchanged (up
    to the speed limit). Forces of any finite size are truncated correctly (the norm does
    not overflow), and no finite input with positive finite limits gives NaN or inf (a step
    whose velocity change overflows, say a force of 1e300 N on a mass of 1e-300 kg, ends at
    ``max_speed`` along the force). The formula is
    :func:`steer_env.core.physics.integrate`.
    """
    if (
        type(out) is tuple
        and len(out) == 3
        and float64_arrays(
            position, velocity, heading, steering_force, mass, max_speed, max_force, *out
        )
    ):
        # The common case in one compiled call (see steer_env.core.loops, "entries").
        try:
            LOOPS.integrate_entry(
                position, velocity, heading, steering_force, mass, max_speed, max_force,
                float(dt), *out,
            )  # fmt: skip
            return out
        except NotFast:
            pass
    lead, n, (p, v, h, f, m, ms, mf) = rows(
        (position, 1),
        (velocity, 1),
        (heading, 1),
        (steering_force, 1),
        (mass, 0),
        (max_speed, 0),
        (max_force, 0),
    )
    dt = float(dt)
    if out is not None:
        if len(out) == 3 and out[0] is p and out[1] is v and out[2] is h:
            # In place on the inputs, which :func:`rows` passed through as they are: each is
            # then a float64 ndarray of shape (n, 2), which is its own rows view.
            LOOPS.integrate(p, v, h, f, m, ms, mf, dt, p, v, h)
            return out
        views = [_rows_view(o, lead, n) for o in out]
        if all(view is not None for view in views):
            LOOPS.integrate(p, v, h, f, m, ms, mf, dt, *views)
            return out
    bufs = [np.empty((n, 2)) for _ in range(3)]
    LOOPS.integrate(p, v, h, f, m, ms, mf, dt, *bufs)
    if out is None:
        return tuple(b.reshape((*lead, 2)) for b in bufs)  # type: ignore[return-value]
    for o, b in zip(out, bufs, strict=True):
        np.copyto(o, b.reshape((*lead, 2)))
    return out


def _as_per_vehicle(name: str, value: ArrayLike, n: int) -> Array:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(
            f"{name} must be a positive number or an array of shape ({n},), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0 for every vehicle, got {arr!r}")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class VehicleParams:
    """Per-vehicle constants, validated and read-only.

    Attributes:
        mass: ``(N,)`` kg, > 0.
        max_speed: ``(N,)`` m/s, > 0.
        max_force: ``(N,)`` N, > 0.
        radius: ``(N,)`` m, > 0 (bounding circle, used by avoidance and rendering).
    """

    mass: Array
    max_speed: Array
    max_force: Array
    radius: Array

    @classmethod
    def create(
        cls,
        n: int,
        mass: ArrayLike = 1.0,
        max_speed: ArrayLike = 1.0,
        max_force: ArrayLike = 1.0,
        radius: ArrayLike = 0.5,
    ) -> VehicleParams:
        """Build parameters for ``n`` vehicles from scalars or ``(n,)`` arrays."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n must be an integer >= 1, got {n!r}")
        return cls(
            mass=_as_per_vehicle("mass", mass, n),
            max_speed=_as_per_vehicle("max_speed", max_speed, n),
            max_force=_as_per_vehicle("max_force", max_force, n),
            radius=_as_per_vehicle("radius", radius, n),
        )

    def __len__(self) -> int:
        return self.mass.shape[0]


def _as_vectors(name: str, value: ArrayLike, n: int | None) -> Array:
    arr = np.array(value, dtype=np.float64)  # a copy: the state owns its arrays
    if arr.ndim != 2 or arr.shape[1] != 2 or (n is not None and arr.shape[0] != n):
        want = "(N, 2)" if n is None else f"({n}, 2)"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


@dataclass
class Vehicles:
    """A set of ``N`` vehicles held as arrays: the state plus its :class:`VehicleParams`.

    Attributes:
        position: ``(N, 2)`` m.
        velocity: ``(N, 2)`` m/s.
        heading: ``(N, 2)`` unit vectors; follows the velocity, kept while stopped.
        params: per-vehicle mass, max speed, max force and radius.

    Example:
        >>> import numpy as np
        >>> from steer_env import Vehicles, behaviors, vecmath
        >>> flock = Vehicles.create(position=[[0.0, 0.0], [5.0, 0.0]], max_speed=2.0, max_force=4.0)
        >>> force = behaviors.seek(flock.position, flock.velocity, [10.0, 10.0], flock.max_speed)
        >>> flock.step(force, dt=0.1)
        >>> bool(np.all(vecmath.length(flock.velocity) <= flock.max_speed))
        True
    """

    position: Array
    velocity: Array
    heading: Array
    params: VehicleParams
    _scratch: dict = field(default_factory=dict, repr=False)

    @classmethod
    def create(
        cls,
        position: ArrayLike,
        velocity: ArrayLike | None = None,
        heading: ArrayLike | None = None,
        mass: ArrayLike = 1.0,
        max_speed: ArrayLike = 1.0,
        max_force: ArrayLike = 1.0,
        radius: ArrayLike = 0.5,
    ) -> Vehicles:
        """Validate and build a vehicle set.

        ``velocity`` defaults to zero; ``heading`` defaults to the direction of the velocity,
        or +x for vehicles at rest. Raises ``ValueError`` naming the offending parameter on
        wrong shapes, mismatched ``N``, non-finite values or non-positive limits.
        """
        pos = _as_vectors("position", position, None)
        n = pos.shape[0]
        if n < 1:
            raise ValueError("position must hold at least one vehicle, got shape (0, 2)")
        vel = np.zeros_like(pos) if velocity is None else _as_vectors("velocity", velocity, n)
        params = VehicleParams.create(n, mass, max_speed, max_force, radius)
        if heading is None:
            head = vecmath.heading_from(vel, np.array([1.0, 0.0]))
        else:
            head = _as_vectors("heading", heading, n)
            norms = vecmath.length(head)
            if np.any(np.abs(norms - 1.0) > 1e-6):
                raise ValueError("heading must hold unit vectors (length 1 within 1e-6)")
        speed = vecmath.length(vel)
        if np.any(speed > params.max_speed * (1 + 1e-9)):
            raise ValueError("velocity must not exceed max_speed for any vehicle")
        return cls(position=pos, velocity=vel, heading=head, params=params)

    def __len__(self) -> int:
        return self.position.shape[0]

    @property
    def mass(self) -> Array:
        return self.params.mass

    @property
    def max_speed(self) -> Array:
        return self.params.max_speed

    @property
    def max_force(self) -> Array:
        return self.params.max_force

    @property
    def radius(self) -> Array:
        return self.params.radius

    @property
    def speed(self) -> Array:
        """``(N,)`` current speeds, m/s."""
        return vecmath.length(self.velocity)

    @property
    def side(self) -> Array:
        """``(N, 2)`` unit vectors perpendicular to the heading (+90 degrees)."""
        return vecmath.perp(self.heading)

    def step(self, steering_force: ArrayLike, dt: float) -> None:
        """Apply one Euler step in place (see :func:`integrate`)."""
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a finite number of seconds > 0, got {dt!r}")
        force = np.asarray(steering_force, dtype=np.float64)
        if force.shape != self.position.shape:
            try:
                force = np.broadcast_to(force, self.position.shape)
            except ValueError:
                raise ValueError(
                    f"steering_force must have shape {self.position.shape} (or broadcast to "
                    f"it), got {force.shape}"
                ) from None
        if not np.all(np.isfinite(force)):
            raise ValueError("steering_force must be finite (no NaN or inf)")
        integrate(
            self.position,
            self.velocity,
            self.heading,
            force,
            self.params.mass,
            self.params.max_speed,
            self.params.max_force,
            dt,
            out=(self.position, self.velocity, self.heading),
        )

    def snapshot(self) -> Mapping[str, Array]:
        """Copies of the state arrays (for logging and tests)."""
        return {
            "position": self.position.copy(),
            "velocity": self.velocity.copy(),
            "heading": self.heading.copy(),
        }
