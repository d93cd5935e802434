"""TEST-ONLY ORACLE: the pure-numpy implementations steer-env shipped before the core kernels.

Not production code and not imported by the package. These are the array formulations of
``vecmath``, ``physics.integrate``, ``behaviors`` and ``combine`` (whole-array numpy
expressions, masks and reductions), kept verbatim as an independent reference that
``tests/test_oracle.py`` compares the kernel-based API against on random inputs. They were
written separately from the scalar kernels of ``steer_env.core`` (different structure,
different code), so agreement is evidence rather than tautology.

Deliberate differences from the API (documented in tests/test_oracle.py): ``length`` here
uses ``numpy.hypot`` for small arrays (last-bit differences from ``sqrt(x*x + y*y)``), and
``prioritized`` stops for every vehicle only once no vehicle has budget left.
"""

# ruff: noqa

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from steer_env.neighbors import Neighbors

Array = NDArray[np.float64]
Force = ArrayLike | Callable[[], ArrayLike]


# ---- vecmath
#: Lengths below this are treated as zero when dividing by a length.
TINY = 1e-12


#: Arrays with at most this many vectors take :func:`numpy.hypot` directly (cheapest there).
_HYPOT_MAX = 256
# Sums of squares outside [_SQ_MIN, _SQ_MAX] may have lost precision to underflow or overflow.
_SQ_MIN = 1e-290
_SQ_MAX = 1e300


def length(v: ArrayLike) -> Array:
    """Euclidean length of each vector: ``(..., 2) -> (...)``.

    Accurate for any finite input, without warnings: vectors whose squared length would
    overflow (components beyond ~1e150) or underflow are measured with :func:`numpy.hypot`.
    """
    v = np.asarray(v, dtype=np.float64)
    x = v[..., 0]
    y = v[..., 1]
    if x.size <= _HYPOT_MAX:
        return np.hypot(x, y)
    # Large arrays: sqrt(x*x + y*y) is about twice as fast as hypot. Squares that overflow
    # (components beyond ~1e154) or underflow (below ~1e-145) are redone with hypot.
    with np.errstate(over="ignore", under="ignore"):
        s = x * x
        s += y * y
    if not (s.max() <= _SQ_MAX and s.min() >= _SQ_MIN):
        bad = ~(s <= _SQ_MAX) | (s < _SQ_MIN)
        bad &= (x != 0) | (y != 0)
        if bad.any():
            np.sqrt(s, out=s)
            s[bad] = np.hypot(x[bad], y[bad])
            return s
    np.sqrt(s, out=s)
    return s


def _safe_scale(v: Array, factor: Array) -> Array:
    return v * factor[..., None]


def normalize(v: ArrayLike) -> Array:
    """Unit vectors in the direction of ``v``; zero vectors stay zero."""
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    inv = np.divide(1.0, n, out=np.zeros_like(n), where=n > TINY)
    return _safe_scale(v, inv)


def set_magnitude(v: ArrayLike, magnitude: ArrayLike) -> Array:
    """Vectors along ``v`` with length ``magnitude``; zero vectors stay zero."""
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    factor = np.divide(
        np.asarray(magnitude, dtype=np.float64),
        n,
        out=np.zeros(np.broadcast(n, magnitude).shape),
        where=n > TINY,
    )
    return _safe_scale(v, factor)


def truncate(v: ArrayLike, max_length: ArrayLike) -> Array:
    """Scale down every vector longer than ``max_length`` to that length.

    Vectors already within the limit (including zero vectors) are returned unchanged.
    ``max_length`` must be >= 0.
    """
    v = np.asarray(v, dtype=np.float64)
    n = length(v)
    max_length = np.asarray(max_length, dtype=np.float64)
    factor = np.divide(
        max_length, n, out=np.ones(np.broadcast(n, max_length).shape), where=n > max_length
    )
    return _safe_scale(v, factor)


def perp(v: ArrayLike) -> Array:
    """``v`` rotated +90 degrees: ``(x, y) -> (-y, x)``."""
    v = np.asarray(v, dtype=np.float64)
    return np.stack((-v[..., 1], v[..., 0]), axis=-1)


def vector_to_local(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Express world-frame vectors in the frame whose x axis is the unit ``heading``.

    Returns ``(forward, side)`` components. ``heading`` must be unit length.
    """
    v = np.asarray(vector, dtype=np.float64)
    h = np.asarray(heading, dtype=np.float64)
    forward = v[..., 0] * h[..., 0] + v[..., 1] * h[..., 1]
    side = -v[..., 0] * h[..., 1] + v[..., 1] * h[..., 0]
    return np.stack((forward, side), axis=-1)


def vector_to_world(vector: ArrayLike, heading: ArrayLike) -> Array:
    """Inverse of :func:`vector_to_local`: local ``(forward, side)`` to world ``(x, y)``."""
    v = np.asarray(vector, dtype=np.float64)
    h = np.asarray(heading, dtype=np.float64)
    x = v[..., 0] * h[..., 0] - v[..., 1] * h[..., 1]
    y = v[..., 0] * h[..., 1] + v[..., 1] * h[..., 0]
    return np.stack((x, y), axis=-1)


def point_to_local(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """World points expressed in the local frame at ``origin`` facing ``heading``."""
    return vector_to_local(np.asarray(point, dtype=np.float64) - origin, heading)


def point_to_world(point: ArrayLike, origin: ArrayLike, heading: ArrayLike) -> Array:
    """Local points (frame at ``origin`` facing ``heading``) expressed in world coordinates
    (Buckland's ``PointToWorldSpace``)."""
    return vector_to_world(point, heading) + np.asarray(origin, dtype=np.float64)


def heading_from(
    velocity: ArrayLike, previous_heading: ArrayLike, min_speed: float = 1e-8
) -> Array:
    """Unit heading along ``velocity``, or ``previous_heading`` where the speed is below
    ``min_speed`` (so a stopped vehicle keeps facing where it faced)."""
    velocity = np.asarray(velocity, dtype=np.float64)
    speed = length(velocity)
    moving = speed > min_speed
    inv = np.divide(1.0, speed, out=np.zeros_like(speed), where=moving)
    return np.where(moving[..., None], velocity * inv[..., None], previous_heading)


# ---- physics
#: Speeds below this (m/s) do not change a vehicle's heading.
MIN_HEADING_SPEED = 1e-8


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
    no temporaries beyond a few ``(...)``-shaped scalars are then allocated per call.

    Guarantees: ``|velocity_new - velocity| <= max_force / mass * dt`` (before the speed
    truncation, and after it too when the old velocity was within ``max_speed``: scaling
    onto the speed disc is a projection, which cannot move the velocity further from the old
    one), ``|velocity_new| <= max_speed``, and a zero force leaves the velocity unchanged (up
    to the speed limit). Forces of any finite size are truncated correctly (the norm does
    not overflow).
    """
    if out is None:
        out = (np.empty_like(position), np.empty_like(velocity), np.empty_like(heading))
    p_out, v_out, h_out = out

    # force -> truncated to max_force, divided by mass, times dt: one scale per vehicle.
    # length stays exact for huge forces (a naive sqrt(fx*fx + fy*fy) overflows to
    # inf beyond ~1e154 N and would turn the force into zero).
    f_norm = length(steering_force)
    scale = np.divide(max_force, f_norm, out=np.ones_like(f_norm), where=f_norm > max_force)
    scale *= dt
    scale /= mass
    dv = steering_force * scale[..., None]
    if v_out is velocity:
        v_out += dv
    else:
        np.add(velocity, dv, out=v_out)

    speed = length(v_out)
    too_fast = speed > max_speed
    if np.any(too_fast):
        shrink = np.divide(max_speed, speed, out=np.ones_like(speed), where=too_fast)
        v_out *= shrink[..., None]
        speed *= shrink

    if p_out is position:
        p_out += v_out * dt
    else:
        np.multiply(v_out, dt, out=p_out)
        p_out += position

    # Heading: the unit velocity where moving; elsewhere the previous heading is kept.
    moving = speed > MIN_HEADING_SPEED
    if h_out is not heading:
        np.copyto(h_out, heading)
    np.divide(v_out, speed[..., None], out=h_out, where=moving[..., None])
    return p_out, v_out, h_out


# ---- behaviors
_GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))


def _f(x: ArrayLike) -> Array:
    return np.asarray(x, dtype=np.float64)


def _per_vehicle(value: ArrayLike, n: int) -> Array:
    """A per-vehicle scalar, flattened to ``(n,)`` to match flattened neighbour pairs."""
    return np.broadcast_to(_f(value).reshape(-1), (n,))


def _masked(force: Array, active: Array) -> Array:
    return np.where(active[..., None], force, 0.0)


# --- seek / flee / arrive
def seek(
    position: ArrayLike, velocity: ArrayLike, target: ArrayLike, max_speed: ArrayLike
) -> Array:
    """Steer towards ``target`` at full speed.

    ``desired = max_speed * (target - position) / |target - position|``;
    returns ``desired - velocity``. At the target itself the desired velocity is zero
    (the force brakes).
    """
    desired = set_magnitude(_f(target) - _f(position), max_speed)
    v = _f(velocity)
    if desired.shape == v.shape:
        desired -= v  # desired is a fresh array: reuse it
        return desired
    return desired - v


def flee(
    position: ArrayLike,
    velocity: ArrayLike,
    threat: ArrayLike,
    max_speed: ArrayLike,
    panic_distance: ArrayLike | None = None,
) -> Array:
    """Steer directly away from ``threat`` at full speed (the mirror of :func:`seek`).

    With ``panic_distance`` (m), vehicles farther than that from the threat get zero force
    (Buckland's ``PanicDistance``).
    """
    away = _f(position) - _f(threat)
    force = set_magnitude(away, max_speed) - _f(velocity)
    if panic_distance is None:
        return force
    return _masked(force, length(away) <= _f(panic_distance))


def arrive(
    position: ArrayLike,
    velocity: ArrayLike,
    target: ArrayLike,
    max_speed: ArrayLike,
    slowing_radius: ArrayLike,
    max_deceleration: ArrayLike | None = None,
) -> Array:
    """Seek that slows down inside ``slowing_radius`` (m) and stops at the target.

    Reynolds' ramp: ``desired_speed = max_speed * min(1, d / slowing_radius)`` where ``d``
    is the distance to the target, so the desired velocity shrinks linearly to zero at the
    target and the vehicle comes to rest there without orbiting.

    With the steering force ``desired - velocity``, the velocity follows the desired one
    with a lag of ``mass`` seconds (``dv/dt = (desired - v) / mass`` while the force is not
    truncated), so the ramp stops the vehicle on the target without overshoot when

    1. the vehicle can brake as hard as the ramp asks:
       ``max_speed**2 / slowing_radius <= max_force / mass``, and
    2. the ramp is no steeper than that lag allows (critical damping):
       ``slowing_radius >= 4 * mass * max_speed``,

    with a time step well below ``mass`` (the tests use ``dt <= mass / 10``). A shorter
    radius makes the approach underdamped: the vehicle overshoots and comes back.

    When ``max_force`` is too weak for condition 1, pass ``max_deceleration`` (m/s^2) to
    also cap the desired speed at the braking speed ``sqrt(2 * max_deceleration * d)``.
    Because of the same lag the vehicle rides slightly above that curve, so choose
    ``max_deceleration <= max_force / (2 * mass)`` (half the vehicle's real braking); with
    condition 2 this keeps arrive overshoot-free from any start at or below the braking
    speed. (``max_deceleration = max_force / mass`` overshoots.)
    """
    offset = _f(target) - _f(position)
    d = length(offset)
    speed = _f(max_speed) * np.minimum(1.0, d / _f(slowing_radius))
    if max_deceleration is not None:
        speed = np.minimum(speed, np.sqrt(2.0 * _f(max_deceleration) * d))
    desired = set_magnitude(offset, speed)
    return desired - _f(velocity)


# --- pursuit / evade
def predict_position(
    position: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
) -> Array:
    """Where a target will be after the look-ahead time ``T = d / (max_speed + target_speed)``
    (Buckland's estimate: the time to close the distance ``d`` if both moved head-on),
    capped at ``max_prediction_time`` seconds when given."""
    tp = _f(target_position)
    tv = _f(target_velocity)
    d = length(tp - _f(position))
    look_ahead = d / (_f(max_speed) + length(tv))
    if max_prediction_time is not None:
        look_ahead = np.minimum(look_ahead, _f(max_prediction_time))
    return tp + tv * look_ahead[..., None]


def pursuit_target(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
) -> Array:
    """The point :func:`pursuit` seeks: the target's predicted position, or its current
    position when it is ahead and coming straight at the pursuer (directions of motion
    within ~18 degrees of opposite, Buckland's ``RelativeHeading < -0.95`` test, taken from
    the two velocities, so a stopped pursuer always predicts), where prediction only adds
    error."""
    p = _f(position)
    tp = _f(target_position)
    tv = _f(target_velocity)
    heading = normalize(velocity)
    target_heading = normalize(tv)
    to_target = tp - p
    ahead = np.einsum("...k,...k->...", to_target, heading) > 0
    head_on = np.einsum("...k,...k->...", heading, target_heading) < -0.95
    predicted = predict_position(p, max_speed, tp, tv, max_prediction_time)
    direct = ahead & head_on
    return np.where(direct[..., None], np.broadcast_to(tp, predicted.shape), predicted)


def pursuit(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
) -> Array:
    """Seek the target's predicted future position (Reynolds' pursuit; see
    :func:`pursuit_target` for the prediction)."""
    aim = pursuit_target(
        position, velocity, max_speed, target_position, target_velocity, max_prediction_time
    )
    return seek(position, velocity, aim, max_speed)


def evade(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    threat_position: ArrayLike,
    threat_velocity: ArrayLike,
    threat_range: ArrayLike | None = None,
    max_prediction_time: ArrayLike | None = None,
) -> Array:
    """Flee the threat's predicted future position (Reynolds' evasion, the mirror of
    :func:`pursuit`, with the same look-ahead). Threats farther than ``threat_range`` (m)
    are ignored (zero force), as in Buckland's ``Evade``."""
    predicted = predict_position(
        position, max_speed, threat_position, threat_velocity, max_prediction_time
    )
    force = flee(position, velocity, predicted, max_speed)
    if threat_range is None:
        return force
    d = length(_f(threat_position) - _f(position))
    return _masked(force, d <= _f(threat_range))


# --- wander
def wander(
    position: ArrayLike,
    velocity: ArrayLike,
    heading: ArrayLike,
    max_speed: ArrayLike,
    wander_target: ArrayLike,
    *,
    radius: float,
    distance: float,
    jitter: float,
    dt: float,
    rng: np.random.Generator | None = None,
    noise: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """Buckland's wander: a target jittered on a circle projected ahead of the vehicle.

    ``wander_target`` (``(..., 2)``, m, in the vehicle's local frame, relative to the
    circle's centre) is the state. Each call adds a random displacement uniform in
    ``[-jitter*dt, jitter*dt]`` per axis (``jitter`` in m/s, Buckland's
    ``WanderJitterPerSec``), projects the result back onto the circle of ``radius`` m, and
    places the circle ``distance`` m ahead of the vehicle. The vehicle seeks that point.
    Because the target moves by at most ``jitter * dt * sqrt(2)`` per step, the heading
    changes smoothly.

    Randomness comes only from ``rng`` (a :class:`numpy.random.Generator`) or from
    ``noise``, pre-drawn uniform values in ``[-1, 1]`` of shape ``(..., 2)``: give exactly
    one of them.

    Returns ``(force, new_wander_target)``.
    """
    target = _f(wander_target)
    if (rng is None) == (noise is None):
        raise ValueError("wander needs exactly one of rng (a numpy Generator) or noise")
    if noise is None:
        noise = rng.uniform(-1.0, 1.0, size=target.shape)
    moved = target + _f(noise) * (jitter * dt)
    on_circle = set_magnitude(moved, radius)
    # A target jittered exactly onto the centre has no direction: restart it straight ahead.
    degenerate = length(moved) <= TINY
    if np.any(degenerate):
        on_circle = np.where(degenerate[..., None], np.array([radius, 0.0]), on_circle)
    local = on_circle + np.array([distance, 0.0])
    world = point_to_world(local, position, heading)
    return seek(position, velocity, world, max_speed), on_circle


def wander_world_target(
    position: ArrayLike, heading: ArrayLike, wander_target: ArrayLike, distance: float
) -> Array:
    """World position of the wander target (for debug drawing)."""
    local = _f(wander_target) + np.array([distance, 0.0])
    return point_to_world(local, position, heading)


# --- flocking
def _pair_tiebreak(i: NDArray[np.intp], j: NDArray[np.intp]) -> Array:
    """Unit push for vehicle ``i`` away from a coincident ``j``: antisymmetric in (i, j) and
    deterministic, so two boids on the same spot separate instead of producing NaN."""
    lo = np.minimum(i, j).astype(np.float64)
    hi = np.maximum(i, j).astype(np.float64)
    angle = _GOLDEN_ANGLE * (lo * 7919.0 + hi)
    sign = np.where(i < j, 1.0, -1.0)
    return np.stack((np.cos(angle), np.sin(angle)), axis=-1) * sign[:, None]


def separation(
    velocity: ArrayLike,
    max_speed: ArrayLike,
    neighbors: Neighbors,
    min_distance: float = 1e-3,
) -> Array:
    """Steer away from neighbours, each weighted by the inverse of its distance.

    Push direction: ``sum_j -offset_ij / d_ij**2`` (Buckland's ``Separation``: unit vector
    away from each neighbour divided by its distance), with ``d_ij`` floored at
    ``min_distance`` m so the weight stays finite. Coincident neighbours (``d == 0``, where
    OpenSteer divides by zero) push along a deterministic, antisymmetric direction.
    The desired velocity is ``max_speed`` along the push; vehicles without neighbours get
    zero force. ``velocity`` is ``(N, 2)`` flattened like ``neighbors``.
    """
    v = _f(velocity).reshape(-1, 2)
    weight = np.maximum(neighbors.distance, min_distance)
    weight *= weight
    np.divide(-1.0, weight, out=weight)  # -1 / d**2
    push = neighbors.offset * weight[:, None]
    if neighbors.distance.size and neighbors.distance.min() <= TINY:
        coincident = neighbors.distance <= TINY
        tb = _pair_tiebreak(neighbors.i[coincident], neighbors.j[coincident])
        push[coincident] = tb / min_distance
    total = neighbors.sum(push)
    ms = _per_vehicle(max_speed, v.shape[0])
    force = set_magnitude(total, ms) - v
    return _masked(force, neighbors.count() > 0)


def alignment(
    velocity: ArrayLike,
    heading: ArrayLike,
    max_speed: ArrayLike,
    neighbors: Neighbors,
) -> Array:
    """Steer to match the neighbours' average heading, at full speed.

    ``desired = max_speed * normalize(mean_j heading_j)`` (Reynolds 1987; Buckland averages
    headings rather than velocities, so stopped neighbours still count). Vehicles without
    neighbours get zero force. Arrays are ``(N, 2)`` flattened like ``neighbors``.
    """
    v = _f(velocity).reshape(-1, 2)
    h = _f(heading).reshape(-1, 2)
    mean_heading = neighbors.sum(neighbors.gather(h))
    ms = _per_vehicle(max_speed, v.shape[0])
    force = set_magnitude(mean_heading, ms) - v
    return _masked(force, neighbors.count() > 0)


def cohesion(
    velocity: ArrayLike,
    max_speed: ArrayLike,
    neighbors: Neighbors,
) -> Array:
    """Seek the centre of mass of the neighbours (Reynolds 1987). Vehicles without neighbours
    get zero force. ``velocity`` is ``(N, 2)`` flattened like ``neighbors``."""
    v = _f(velocity).reshape(-1, 2)
    count = neighbors.count()
    mean_offset = neighbors.sum(neighbors.offset) / np.maximum(count, 1)[:, None]
    ms = _per_vehicle(max_speed, v.shape[0])
    force = set_magnitude(mean_offset, ms) - v
    return _masked(force, count > 0)


# --- walls and obstacles
def feelers(
    position: ArrayLike,
    heading: ArrayLike,
    length: float,
    side_angle: float = np.pi / 4,
    side_scale: float = 0.5,
) -> Array:
    """Tips of Buckland's three wall feelers, ``(..., 3, 2)`` m: one ``length`` m straight
    ahead and two of ``length * side_scale`` m at +/- ``side_angle`` radians."""
    p = _f(position)
    h = _f(heading)
    c, s = np.cos(side_angle), np.sin(side_angle)
    left = vector_to_world(np.array([c, s]), h)
    right = vector_to_world(np.array([c, -s]), h)
    dirs = np.stack(
        (h * length, left * (length * side_scale), right * (length * side_scale)), axis=-2
    )
    return p[..., None, :] + dirs


def wall_avoidance(
    position: ArrayLike,
    velocity: ArrayLike,
    heading: ArrayLike,
    max_speed: ArrayLike,
    bounds: ArrayLike,
    feeler_length: float,
    side_angle: float = np.pi / 4,
    side_scale: float = 0.5,
) -> Array:
    """Stay inside the axis-aligned box ``bounds = (xmin, ymin, xmax, ymax)`` (m).

    Detection uses Buckland's three feelers (:func:`feelers`), plus a heading-independent
    margin: a wall closer to the vehicle than the side feelers' length
    (``feeler_length * side_scale``) counts as touched whichever way the vehicle faces.
    (Feelers alone are blind while a slow vehicle near a wall faces inwards for a moment,
    and a lower-priority force pulling outwards then walks it out of the box step by step.)

    The response is Reynolds' *containment*: for each wall touched, the desired velocity
    keeps its component along the wall and points away from the wall at ``max_speed``, so
    the steering force ``desired - velocity`` first cancels the motion towards the wall and
    then pushes back. Vehicles touching no wall get zero force.

    Used alone, or first in :func:`steer_env.combine.prioritized` with other behaviours
    below it, this keeps vehicles inside the box (started inside it, at least
    ``feeler_length * side_scale`` from the walls) when ``feeler_length`` is at least
    ``sqrt(2) * max_speed**2 * mass / (2 * min(max_force, max_speed)) + max_speed * dt``:
    the braking distance at the deceleration the force guarantees while moving outwards
    (``min(max_force, max_speed) / mass``), times ``sqrt(2)`` for corners, where two walls
    share the force, plus one step of travel. The box must be wider and taller than
    ``2 * feeler_length * side_scale``.
    """
    xmin, ymin, xmax, ymax = (float(b) for b in np.asarray(bounds, dtype=np.float64))
    p = _f(position)
    v = _f(velocity)
    tips = feelers(p, heading, feeler_length, side_angle, side_scale)  # (..., 3, 2)
    lo = np.array([xmin, ymin])
    hi = np.array([xmax, ymax])
    margin = feeler_length * side_scale
    over_lo = ((lo - tips).max(axis=-2) > 0) | (p - lo < margin)  # (..., 2): per axis
    over_hi = ((tips - hi).max(axis=-2) > 0) | (hi - p < margin)
    ms = _f(max_speed)[..., None]
    desired = np.where(over_lo, ms, np.where(over_hi, -ms, v))
    return np.where(over_lo | over_hi, desired - v, 0.0)


def obstacle_avoidance(
    position: ArrayLike,
    velocity: ArrayLike,
    heading: ArrayLike,
    max_speed: ArrayLike,
    radius: ArrayLike,
    obstacle_center: ArrayLike,
    obstacle_radius: ArrayLike,
    min_detection_length: float,
    braking_weight: float = 0.2,
) -> Array:
    """Buckland's detection-box obstacle avoidance for circular obstacles.

    The box extends ahead of the vehicle ``min_detection_length * (1 + speed / max_speed)``
    m long and ``2 * radius`` wide. Of the obstacles (centres ``(M, 2)``, radii ``(M,)``)
    whose circle, grown by the vehicle's radius, crosses the box, the one whose boundary
    is nearest along the heading is avoided: a lateral force away from its centre line,
    stronger the closer it is, plus a braking force along the heading scaled by
    ``braking_weight``. Lateral strength is ``max_speed * (R - |y|) / R * (1 + (L - x) / L)``
    for an obstacle at local ``(x, y)`` with grown radius ``R``; an obstacle dead ahead is
    passed on the left (+side). Zero force when the box is clear.

    The lateral push fades to zero at the grown radius, so combine it first in
    :func:`steer_env.combine.prioritized` with a large weight (Buckland's default is 10
    against 1 for seek): with equal weights a seek towards a target behind the obstacle
    outweighs the faded push and the vehicle grazes into the obstacle.
    """
    p = _f(position)
    h = _f(heading)
    centers = _f(obstacle_center).reshape(-1, 2)
    radii = _f(obstacle_radius).reshape(-1)
    if centers.shape[0] == 0:
        return np.zeros(np.broadcast_shapes(p.shape, _f(velocity).shape))
    speed = length(velocity)
    box = min_detection_length * (1.0 + speed / _f(max_speed))  # (...)
    local = point_to_local(centers, p[..., None, :], h[..., None, :])  # (..., M, 2)
    lx, ly = local[..., 0], local[..., 1]
    # Obstacle radii grown by the vehicle's (a scalar radius broadcasts to every vehicle).
    grown = np.broadcast_to(radii + _f(radius)[..., None], lx.shape)  # (..., M)
    hit = (lx + grown >= 0) & (lx - grown <= box[..., None]) & (np.abs(ly) < grown)
    half_chord = np.sqrt(np.maximum(grown * grown - ly * ly, 0.0))
    near_x = np.where(lx - half_chord > 0, lx - half_chord, lx + half_chord)
    near_x = np.where(hit, near_x, np.inf)
    k = np.argmin(near_x, axis=-1)
    any_hit = np.take_along_axis(hit, k[..., None], axis=-1)[..., 0]
    ox = np.take_along_axis(lx, k[..., None], axis=-1)[..., 0]
    oy = np.take_along_axis(ly, k[..., None], axis=-1)[..., 0]
    orad = np.take_along_axis(grown, k[..., None], axis=-1)[..., 0]
    multiplier = 1.0 + np.clip(box - ox, 0.0, None) / box
    away = np.where(oy > 0, -1.0, 1.0)
    lateral = away * _f(max_speed) * (orad - np.abs(oy)) / orad * multiplier
    braking = -braking_weight * speed * np.clip((box - (ox - orad)) / box, 0.0, 1.0)
    force = vector_to_world(np.stack((braking, lateral), axis=-1), h)
    return _masked(force, any_hit)


# --- group tactics
def interpose(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    a_position: ArrayLike,
    a_velocity: ArrayLike,
    b_position: ArrayLike,
    b_velocity: ArrayLike,
    slowing_radius: ArrayLike,
) -> Array:
    """Arrive at the midpoint between two moving agents ``a`` and ``b``, predicted ``T``
    seconds ahead where ``T`` is the time to reach today's midpoint at ``max_speed``
    (Buckland's ``Interpose``)."""
    ap, bp = _f(a_position), _f(b_position)
    mid = 0.5 * (ap + bp)
    t = length(mid - _f(position)) / _f(max_speed)
    future_mid = 0.5 * (ap + _f(a_velocity) * t[..., None] + bp + _f(b_velocity) * t[..., None])
    return arrive(position, velocity, future_mid, max_speed, slowing_radius)


def hiding_spots(
    hunter_position: ArrayLike,
    obstacle_center: ArrayLike,
    obstacle_radius: ArrayLike,
    distance_from_boundary: float,
) -> Array:
    """``(..., M, 2)`` points behind each obstacle as seen from the hunter, each
    ``distance_from_boundary`` m beyond the obstacle's edge (Buckland's
    ``GetHidingPosition``)."""
    c = _f(obstacle_center).reshape(-1, 2)
    r = _f(obstacle_radius).reshape(-1)
    hunter = _f(hunter_position)[..., None, :]
    away = normalize(c - hunter)
    return c + away * (r + distance_from_boundary)[..., None]


def hide(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    hunter_position: ArrayLike,
    hunter_velocity: ArrayLike,
    obstacle_center: ArrayLike,
    obstacle_radius: ArrayLike,
    slowing_radius: ArrayLike,
    distance_from_boundary: float = 1.0,
) -> Array:
    """Arrive at the nearest hiding spot (:func:`hiding_spots`) behind an obstacle; with no
    obstacles, evade the hunter (Buckland's ``Hide``)."""
    centers = _f(obstacle_center).reshape(-1, 2)
    if centers.shape[0] == 0:
        return evade(position, velocity, max_speed, hunter_position, hunter_velocity)
    spots = hiding_spots(hunter_position, centers, obstacle_radius, distance_from_boundary)
    p = _f(position)
    spots = np.broadcast_to(
        spots, (*np.broadcast_shapes(p.shape[:-1], spots.shape[:-2]), *spots.shape[-2:])
    )
    d = length(spots - p[..., None, :])
    k = np.argmin(d, axis=-1)
    best = np.take_along_axis(spots, k[..., None, None], axis=-2)[..., 0, :]
    return arrive(position, velocity, best, max_speed, slowing_radius)


def offset_pursuit(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    leader_position: ArrayLike,
    leader_velocity: ArrayLike,
    leader_heading: ArrayLike,
    offset: ArrayLike,
    slowing_radius: ArrayLike,
) -> Array:
    """Keep station at ``offset`` (m, in the leader's local frame: forward, side) from a
    leader: arrive at the predicted offset point, with :func:`predict_position`'s
    look-ahead (Buckland's ``OffsetPursuit``)."""
    world = point_to_world(offset, leader_position, leader_heading)
    predicted = predict_position(position, max_speed, world, leader_velocity)
    return arrive(position, velocity, predicted, max_speed, slowing_radius)


# --- path following
def path_target(
    position: ArrayLike,
    velocity: ArrayLike,
    path: ArrayLike,
    prediction_time: float,
    look_ahead: float,
    loop: bool = False,
) -> Array:
    """The point :func:`follow_path` steers to: project the vehicle's predicted position
    (``prediction_time`` s ahead) onto the polyline ``path`` (``(M, 2)`` m, ``M >= 2``), then
    move ``look_ahead`` m further along the path (wrapping when ``loop``, clamped at the
    end otherwise)."""
    pts = _f(path).reshape(-1, 2)
    if loop:
        pts = np.concatenate((pts, pts[:1]), axis=0)
    a, b = pts[:-1], pts[1:]
    seg = b - a
    seg_len = length(seg)
    cum = np.concatenate(([0.0], np.cumsum(seg_len)))
    total = cum[-1]
    future = _f(position) + _f(velocity) * prediction_time
    rel = future[..., None, :] - a  # (..., S, 2)
    t = np.einsum("...sk,sk->...s", rel, seg) / np.maximum(seg_len * seg_len, TINY)
    t = np.clip(t, 0.0, 1.0)
    proj = a + seg * t[..., None]
    dist = length(future[..., None, :] - proj)
    k = np.argmin(dist, axis=-1)
    s = cum[k] + np.take_along_axis(t, k[..., None], axis=-1)[..., 0] * seg_len[k] + look_ahead
    s = np.mod(s, total) if loop else np.minimum(s, total)
    m = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, len(seg_len) - 1)
    frac = (s - cum[m]) / np.maximum(seg_len[m], TINY)
    return a[m] + seg[m] * frac[..., None]


def follow_path(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    path: ArrayLike,
    prediction_time: float = 0.5,
    look_ahead: float = 2.0,
    loop: bool = False,
) -> Array:
    """Reynolds' path following, as a moving target on the path.

    The vehicle arrives at :func:`path_target` with a slowing radius of ``look_ahead``: in
    mid-path the target stays ``look_ahead`` m ahead so the vehicle cruises at full speed,
    and an open path's end is approached as :func:`arrive` does, stopping on its last point.
    """
    aim = path_target(position, velocity, path, prediction_time, look_ahead, loop)
    return arrive(position, velocity, aim, max_speed, look_ahead)


# --- unaligned collision avoidance
def unaligned_collision_avoidance(
    position: ArrayLike,
    velocity: ArrayLike,
    heading: ArrayLike,
    max_speed: ArrayLike,
    radius: ArrayLike,
    neighbors: Neighbors,
    time_horizon: float,
) -> Array:
    """Reynolds' unaligned collision avoidance (OpenSteer's ``steerToAvoidNeighbors``).

    For each vehicle, predict the time of closest approach ``t`` to each neighbour under
    constant velocities; among neighbours with ``0 < t <= time_horizon`` s whose predicted
    separation is below the sum of the radii, take the soonest. Steer sideways away from
    where that neighbour will be and adjust speed: slow down if it is ahead now, speed up
    if it is behind. Zero force when no collision is predicted. Arrays are ``(N, ...)``
    flattened like ``neighbors`` (build them with a radius of about
    ``2 * max_speed * time_horizon``).
    """
    p = _f(position).reshape(-1, 2)
    v = _f(velocity).reshape(-1, 2)
    h = _f(heading).reshape(-1, 2)
    r = _per_vehicle(radius, p.shape[0])
    ms = _per_vehicle(max_speed, p.shape[0])
    i, j = neighbors.i, neighbors.j
    dp = neighbors.offset
    dv = v[j] - v[i]
    dv2 = np.einsum("pk,pk->p", dv, dv)
    t = np.divide(-np.einsum("pk,pk->p", dp, dv), dv2, out=np.zeros_like(dv2), where=dv2 > 1e-12)
    miss = dp + dv * t[:, None]
    threat = (t > 0) & (t <= time_horizon) & (length(miss) < r[i] + r[j])
    soonest = np.full(p.shape[0], np.inf)
    np.minimum.at(soonest, i[threat], t[threat])
    chosen = threat & (t == soonest[i])
    # One threat per vehicle: keep the first pair of each i among ties.
    ci = i[chosen]
    first = np.unique(ci, return_index=True)[1]
    idx = np.nonzero(chosen)[0][first]
    who = i[idx]
    future_other = p[j[idx]] + v[j[idx]] * t[idx, None]
    future_self = p[who] + v[who] * t[idx, None]
    rel_local = vector_to_local(future_other - future_self, h[who])
    side = np.where(rel_local[:, 1] > 0, -1.0, 1.0)
    ahead = vector_to_local(p[j[idx]] - p[who], h[who])[:, 0] > 0
    forward = np.where(ahead, -0.5, 0.5)
    force = np.zeros_like(p)
    force[who] = vector_to_world(np.stack((forward, side), axis=-1), h[who]) * ms[who, None]
    return force


# ---- combine
Force = ArrayLike | Callable[[], ArrayLike]


def _value(force: Force) -> Array:
    return np.asarray(force() if callable(force) else force, dtype=np.float64)


def _check_weights(forces: Sequence[Force], weights: Sequence[float], name: str) -> None:
    if len(forces) != len(weights):
        raise ValueError(
            f"{name} needs one weight per force: got {len(forces)} forces and "
            f"{len(weights)} weights"
        )


def weighted_sum(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """``truncate(sum_k weights[k] * forces[k], max_force)`` (Buckland's
    ``CalculateWeightedSum``)."""
    _check_weights(forces, weights, "weighted_sum")
    if len(forces) == 0:
        raise ValueError("weighted_sum needs at least one force")
    total = sum(w * _value(f) for f, w in zip(forces, weights, strict=True))
    return truncate(total, max_force)


def prioritized(forces: Sequence[Force], weights: Sequence[float], max_force: ArrayLike) -> Array:
    """Prioritized weighted truncated running sum (Buckland's ``CalculatePrioritized`` with
    ``AccumulateForce``).

    Forces are added in priority order; each weighted force is added whole while it fits in
    the remaining budget ``max_force - |sum so far|`` and is cut to the remaining budget
    otherwise; once the budget is spent, lower priorities are ignored. The result never
    exceeds ``max_force``.
    """
    _check_weights(forces, weights, "prioritized")
    max_force = np.asarray(max_force, dtype=np.float64)
    total: Array | None = None
    for force, weight in zip(forces, weights, strict=True):
        if total is not None:
            remaining = max_force - length(total)
            if not np.any(remaining > 1e-12):
                break
        f = weight * _value(force)
        if total is None:
            total = truncate(f, max_force)
            continue
        remaining = np.maximum(remaining, 0.0)
        total = total + truncate(f, remaining)
    if total is None:
        raise ValueError("prioritized needs at least one force")
    return total


def dithered(
    forces: Sequence[Force],
    weights: Sequence[float],
    probabilities: Sequence[float],
    max_force: ArrayLike,
    rng: np.random.Generator,
) -> Array:
    """Prioritized dithering (Buckland's ``CalculateDithered``).

    For each vehicle independently, behaviours are considered in priority order; behaviour
    ``k`` is considered with probability ``probabilities[k]`` (one uniform draw per vehicle
    and behaviour from ``rng``). The first considered behaviour with a non-zero force wins:
    the result is ``truncate(weights[k] * force_k / probabilities[k], max_force)``
    (dividing by the probability keeps the expected contribution equal to the weighted
    force). Vehicles for which no behaviour wins get zero force.
    """
    _check_weights(forces, weights, "dithered")
    if len(forces) == 0:
        raise ValueError("dithered needs at least one force")
    if len(probabilities) != len(forces):
        raise ValueError(
            f"dithered needs one probability per force: got {len(forces)} forces and "
            f"{len(probabilities)} probabilities"
        )
    probs = np.asarray(probabilities, dtype=np.float64)
    if np.any(~np.isfinite(probs)) or np.any(probs <= 0) or np.any(probs > 1):
        raise ValueError(f"probabilities must be in (0, 1], got {list(probabilities)}")
    values = [_value(f) for f in forces]
    shape = np.broadcast_shapes(*(v.shape for v in values))
    draws = rng.random((len(values), *shape[:-1]))
    result = np.zeros(shape)
    decided = np.zeros(shape[:-1], dtype=bool)
    for k, (v, w, pk) in enumerate(zip(values, weights, probs, strict=True)):
        f = np.broadcast_to(v * (w / pk), shape)
        win = ~decided & (draws[k] < pk) & (length(f) > 1e-12)
        result = np.where(win[..., None], f, result)
        decided |= win
    return truncate(result, max_force)
