"""The classic steering behaviours as pure functions over arrays.

Every behaviour returns a **steering force** ``(..., 2)``: Reynolds' *desired velocity minus
current velocity* (Reynolds 1999, "Steering Behaviors For Autonomous Characters", GDC).
It is a force request in newtons; :func:`steer_env.physics.integrate` truncates it to the
vehicle's ``max_force``. Nothing is mutated; stateful behaviours (wander) return their new
state.

Shapes: positions, velocities and headings are ``(..., 2)``; per-vehicle scalars such as
``max_speed`` are ``(...)``; targets broadcast against positions, so ``seek(p, v, [3, 4], s)``
seeks one point with every vehicle. Units: m, s, m/s, N (see :mod:`steer_env.physics`).

Where the literature offers variants, this module picks (and says so in each docstring)
Reynolds' definitions, with the parameters of Buckland's *Programming Game AI by Example*
(2005, ch. 3) where Reynolds leaves them open. Where the variants differ in a way that matters,
the other one is an option by name: ``separation_form`` (:func:`separation`),
``wander_form`` (:func:`wander`) and ``prediction_form`` (:func:`pursuit`, :func:`evade`,
:func:`predict_position`); :mod:`steer_env.core.options` lists them, and the README's
"Fidelity to the classic behaviors" gives what each does to the scripted teams. Inputs are
not validated here (hot path; the option names are): :class:`steer_env.physics.Vehicles`
and the environments validate once at construction.

Every formula is a scalar kernel of :mod:`steer_env.core.behaviors`; the functions here
broadcast their arguments and run those kernels over them in compiled loops. Flocking over
neighbour pairs (:func:`separation`, :func:`alignment`, :func:`cohesion`,
:func:`unaligned_collision_avoidance`) is one compiled loop over the pairs of a
:class:`~steer_env.neighbors.Neighbors` plus one over the vehicles.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from steer_env.core.arrays import LOOPS, NotFast, float64_arrays, none_to_inf, rows, vectors_out
from steer_env.core.options import PREDICTION_SEED, option_code
from steer_env.neighbors import Neighbors

Array = NDArray[np.float64]


def _c(a: np.ndarray) -> np.ndarray:
    """C-contiguous and writable (the one array layout the compiled loops are built for)."""
    if not a.flags.c_contiguous or not a.flags.writeable:
        return a.copy()
    return a


def _per_vehicle(value: ArrayLike, n: int) -> Array:
    """A per-vehicle scalar, flattened to ``(n,)`` to match flattened neighbour pairs (or
    ``(1,)`` when it is the same for every vehicle)."""
    a = np.asarray(value, dtype=np.float64).reshape(-1)
    return a if a.shape[0] in (1, n) else np.broadcast_to(a, (n,))


def _flock_operands(
    velocity: ArrayLike, max_speed: ArrayLike, neighbors: Neighbors
) -> tuple[Array, Array, Array]:
    v = _c(np.asarray(velocity, dtype=np.float64).reshape(-1, 2))
    ms = _c(_per_vehicle(max_speed, v.shape[0]))
    return v, ms, np.empty((neighbors.n_vehicles, 2))


def _prediction(prediction_form: str, target_max_speed: ArrayLike | None) -> tuple[int, object]:
    """The kernel code of ``prediction_form`` and the target max speed operand it needs."""
    form = option_code("prediction_form", prediction_form)
    if form == PREDICTION_SEED and target_max_speed is None:
        raise ValueError("prediction_form='seed' needs target_max_speed (m/s)")
    return form, none_to_inf(target_max_speed)


def _pursuit(
    position, velocity, max_speed, target_position, target_velocity, max_t, aim_only,
    prediction_form, target_max_speed,
):  # fmt: skip
    form, tms = _prediction(prediction_form, target_max_speed)
    lead, n, (p, v, ms, tp, tv, mt, tm) = rows(
        (position, 1),
        (velocity, 1),
        (max_speed, 0),
        (target_position, 1),
        (target_velocity, 1),
        (none_to_inf(max_t), 0),
        (tms, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.pursuit(p, v, ms, tp, tv, mt, tm, form, aim_only, buf)
    return out


def _follow(position, velocity, max_speed, path, prediction_time, look_ahead, loop, aim_only):
    pts = _c(np.asarray(path, dtype=np.float64).reshape(-1, 2))
    if pts.shape[0] < 2:
        raise ValueError(f"path needs at least 2 points, got {pts.shape[0]}")
    lead, n, (p, v, ms) = rows((position, 1), (velocity, 1), (max_speed, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.follow_path(
        p, v, ms, pts, float(prediction_time), float(look_ahead), bool(loop), aim_only, buf
    )
    return out


# --- seek / flee / arrive
def seek(
    position: ArrayLike, velocity: ArrayLike, target: ArrayLike, max_speed: ArrayLike
) -> Array:
    """Steer towards ``target`` at full speed.

    ``desired = max_speed * (target - position) / |target - position|``;
    returns ``desired - velocity``. At the target itself the desired velocity is zero
    (the force brakes).
    """
    if float64_arrays(position, velocity, target, max_speed):
        try:
            return LOOPS.seek_entry(position, velocity, target, max_speed)
        except NotFast:
            pass
    lead, n, (p, v, t, ms) = rows((position, 1), (velocity, 1), (target, 1), (max_speed, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.seek(p, v, t, ms, buf)
    return out


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
    lead, n, (p, v, t, ms, pd) = rows(
        (position, 1), (velocity, 1), (threat, 1), (max_speed, 0), (none_to_inf(panic_distance), 0)
    )
    buf, out = vectors_out(lead, n)
    LOOPS.flee(p, v, t, ms, pd, buf)
    return out


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

    with a time step well below ``mass`` (the tests use ``dt <= mass / 10``), and when the
    vehicle enters the slowing radius from outside, at most at ``max_speed`` along the
    ramp's curve. A vehicle started inside the radius faster than the ramp allows there is
    not covered: it may overshoot. A shorter radius makes the approach underdamped: the
    vehicle overshoots and comes back.

    When ``max_force`` is too weak for condition 1, pass ``max_deceleration`` (m/s^2) to
    also cap the desired speed at the braking speed ``sqrt(2 * max_deceleration * d)``.
    Because of the same lag the vehicle rides slightly above that curve, so choose
    ``max_deceleration <= max_force / (2 * mass)`` (half the vehicle's real braking); with
    condition 2 this keeps arrive overshoot-free from any start at or below the braking
    speed. (``max_deceleration = max_force / mass`` overshoots.)
    """
    lead, n, (p, v, t, ms, sr, md) = rows(
        (position, 1),
        (velocity, 1),
        (target, 1),
        (max_speed, 0),
        (slowing_radius, 0),
        (none_to_inf(max_deceleration), 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.arrive(p, v, t, ms, sr, md, buf)
    return out


# --- pursuit / evade
def predict_position(
    position: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
    *,
    prediction_form: str = "buckland",
    target_max_speed: ArrayLike | None = None,
) -> Array:
    """Where a target will be after the look-ahead time ``T``, capped at
    ``max_prediction_time`` seconds when given: ``target_position + target_velocity * T``.

    ``prediction_form`` chooses ``T`` before the cap: ``"buckland"`` (default),
    ``T = d / (max_speed + target_speed)`` (Buckland's ``Pursuit``: the time to close the
    distance ``d`` if both moved head-on); ``"seed"``, ``T = d / target_max_speed`` (the
    seed document's ``pursue``/``evade``; needs ``target_max_speed``, m/s; a target that
    cannot move gets ``T = 0``). Between equal vehicles at full speed the seed's look-ahead
    is twice Buckland's.
    """
    form, tms = _prediction(prediction_form, target_max_speed)
    lead, n, (p, ms, tp, tv, mt, tm) = rows(
        (position, 1),
        (max_speed, 0),
        (target_position, 1),
        (target_velocity, 1),
        (none_to_inf(max_prediction_time), 0),
        (tms, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.predict_position(p, ms, tp, tv, mt, tm, form, buf)
    return out


def pursuit_target(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
    *,
    prediction_form: str = "buckland",
    target_max_speed: ArrayLike | None = None,
) -> Array:
    """The point :func:`pursuit` seeks: the target's predicted position
    (:func:`predict_position`), or its current position when it is ahead and coming
    straight at the pursuer (directions of motion within ~18 degrees of opposite,
    Buckland's ``RelativeHeading < -0.95`` test, taken from the two velocities, so a
    stopped pursuer always predicts), where prediction only adds error."""
    return _pursuit(
        position, velocity, max_speed, target_position, target_velocity, max_prediction_time,
        True, prediction_form, target_max_speed,
    )  # fmt: skip


def pursuit(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    target_position: ArrayLike,
    target_velocity: ArrayLike,
    max_prediction_time: ArrayLike | None = None,
    *,
    prediction_form: str = "buckland",
    target_max_speed: ArrayLike | None = None,
) -> Array:
    """Seek the target's predicted future position (Reynolds' pursuit; see
    :func:`pursuit_target` for the point and :func:`predict_position` for
    ``prediction_form``)."""
    return _pursuit(
        position, velocity, max_speed, target_position, target_velocity, max_prediction_time,
        False, prediction_form, target_max_speed,
    )  # fmt: skip


def evade(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    threat_position: ArrayLike,
    threat_velocity: ArrayLike,
    threat_range: ArrayLike | None = None,
    max_prediction_time: ArrayLike | None = None,
    *,
    prediction_form: str = "buckland",
    target_max_speed: ArrayLike | None = None,
) -> Array:
    """Flee the threat's predicted future position (Reynolds' evasion, the mirror of
    :func:`pursuit`, with the same look-ahead; ``target_max_speed`` is the threat's). Threats
    farther than ``threat_range`` (m) are ignored (zero force), as in Buckland's ``Evade``.
    """
    form, tms = _prediction(prediction_form, target_max_speed)
    lead, n, (p, v, ms, tp, tv, tr, mt, tm) = rows(
        (position, 1),
        (velocity, 1),
        (max_speed, 0),
        (threat_position, 1),
        (threat_velocity, 1),
        (none_to_inf(threat_range), 0),
        (none_to_inf(max_prediction_time), 0),
        (tms, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.evade(p, v, ms, tp, tv, tr, mt, tm, form, buf)
    return out


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
    wander_form: str = "seek",
) -> tuple[Array, Array]:
    """Buckland's wander: a target jittered on a circle projected ahead of the vehicle.

    ``wander_target`` (``(..., 2)``, m, in the vehicle's local frame, relative to the
    circle's centre) is the state. Each call adds a random displacement uniform in
    ``[-jitter*dt, jitter*dt]`` per axis (``jitter`` in m/s, Buckland's
    ``WanderJitterPerSec``), projects the result back onto the circle of ``radius`` m, and
    places the circle ``distance`` m ahead of the vehicle. With ``wander_form="seek"``
    (default) the vehicle seeks that point (Reynolds' desired velocity at ``max_speed``,
    minus the velocity); with ``wander_form="offset"`` the force is the offset from the
    vehicle to the point itself (Buckland's ``Wander`` and the seed document return
    ``target_world - position``, a force of ``distance +/- radius`` N that ignores
    ``max_speed``). Because the target moves by at most ``jitter * dt * sqrt(2)`` per step,
    the heading changes smoothly.

    Randomness comes only from ``rng`` (a :class:`numpy.random.Generator`) or from
    ``noise``, pre-drawn uniform values in ``[-1, 1]`` of shape ``(..., 2)``: give exactly
    one of them.

    Returns ``(force, new_wander_target)``.
    """
    form = option_code("wander_form", wander_form)
    if (rng is None) == (noise is None):
        raise ValueError("wander needs exactly one of rng (a numpy Generator) or noise")
    if noise is None:
        noise = rng.uniform(-1.0, 1.0, size=np.shape(wander_target))
    lead, n, (p, v, h, ms, wt, nz) = rows(
        (position, 1), (velocity, 1), (heading, 1), (max_speed, 0), (wander_target, 1), (noise, 1)
    )
    buf, force = vectors_out(lead, n)
    wbuf, new_target = vectors_out(lead, n)
    LOOPS.wander(p, v, h, ms, wt, nz, float(radius), float(distance), jitter * dt, form, buf, wbuf)
    return force, new_target


def wander_world_target(
    position: ArrayLike, heading: ArrayLike, wander_target: ArrayLike, distance: float
) -> Array:
    """World position of the wander target (for debug drawing)."""
    lead, n, (p, h, wt) = rows((position, 1), (heading, 1), (wander_target, 1))
    buf, out = vectors_out(lead, n)
    LOOPS.wander_world_target(p, h, wt, float(distance), buf)
    return out


def shepherd_target(
    centre: ArrayLike,
    farthest: ArrayLike,
    goal: ArrayLike,
    spread_limit: ArrayLike,
    collect_offset: ArrayLike,
    drive_offset: ArrayLike,
) -> tuple[Array, NDArray[np.bool_]]:
    """Strömbom's sheepdog target (Strömbom et al. 2014, "Solving the shepherding problem:
    heuristics for herding autonomous, interacting agents", J. R. Soc. Interface 11).

    ``centre`` is the flock's centre of mass, ``farthest`` the sheep farthest from it and
    ``goal`` where the flock must go. While that sheep is more than ``spread_limit`` m from
    the centre (the paper's ``r_a N^(2/3)``) the dog **collects**: it aims
    ``collect_offset`` m (``r_a``) beyond the straggler on the line from the centre through
    it. Otherwise it **drives**: it aims ``drive_offset`` m (``r_a sqrt(N)``) behind the
    centre on the line from the goal through the centre. Steer to the point with
    :func:`arrive` or :func:`seek`.

    Returns ``(target (..., 2), collecting (...))``.
    """
    lead, n, (c, f, g, lim, co, do) = rows(
        (centre, 1),
        (farthest, 1),
        (goal, 1),
        (spread_limit, 0),
        (collect_offset, 0),
        (drive_offset, 0),
    )
    buf, out = vectors_out(lead, n)
    collecting = np.empty(n, dtype=np.bool_)
    LOOPS.shepherd_target(c, f, g, lim, co, do, buf, collecting)
    return out, collecting.reshape(lead)


def separation(
    velocity: ArrayLike,
    max_speed: ArrayLike,
    neighbors: Neighbors,
    min_distance: float = 1e-3,
    *,
    separation_form: str = "reynolds",
) -> Array:
    """Steer away from neighbours, each weighted by the inverse of its distance.

    Push: ``s = sum_j -offset_ij / d_ij**2`` (Buckland's ``Separation``: unit vector away
    from each neighbour divided by its distance), with ``d_ij`` floored at ``min_distance``
    m so the weight stays finite. Coincident neighbours (``d == 0``, where OpenSteer divides
    by zero) push along a deterministic, antisymmetric direction. Vehicles without
    neighbours get zero force. ``velocity`` is ``(N, 2)`` flattened like ``neighbors``.

    ``separation_form`` turns the push into the force:

    * ``"reynolds"`` (default): the desired velocity is ``max_speed`` along ``s``, the force
      ``desired - velocity``. The 1/d weights only set the direction: one neighbour at the
      edge of the neighbourhood pushes as hard as one at arm's length.
    * ``"buckland"``: the force is ``s`` itself (Buckland returns the sum), so a lone
      neighbour at ``d`` m pushes with ``1 / d`` N straight away from it and near
      neighbours dominate; combine it with a weight that makes ``weight / d`` comparable
      to the other forces at the distances that matter. ``max_speed`` and ``velocity``
      are unused. The combination truncates it to the max force as usual.
    """
    form = option_code("separation_form", separation_form)
    v, ms, out = _flock_operands(velocity, max_speed, neighbors)
    LOOPS.separation(
        neighbors.i, neighbors.j, _c(neighbors.offset), _c(neighbors.distance), v, ms,
        float(min_distance), form, out,
    )  # fmt: skip
    return out


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
    v, ms, out = _flock_operands(velocity, max_speed, neighbors)
    h = _c(np.asarray(heading, dtype=np.float64).reshape(-1, 2))
    LOOPS.alignment(neighbors.i, neighbors.j, v, h, ms, out)
    return out


def cohesion(
    velocity: ArrayLike,
    max_speed: ArrayLike,
    neighbors: Neighbors,
) -> Array:
    """Seek the centre of mass of the neighbours (Reynolds 1987). Vehicles without neighbours
    get zero force. ``velocity`` is ``(N, 2)`` flattened like ``neighbors``."""
    v, ms, out = _flock_operands(velocity, max_speed, neighbors)
    LOOPS.cohesion(neighbors.i, _c(neighbors.offset), v, ms, out)
    return out


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
    lead, n, (p, h) = rows((position, 1), (heading, 1))
    buf = np.empty((n, 3, 2))
    LOOPS.feelers(p, h, float(length), float(side_angle), float(side_scale), buf)
    return buf.reshape((*lead, 3, 2))


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
    b = _c(np.asarray(bounds, dtype=np.float64).reshape(4))
    lead, n, (p, v, h, ms) = rows((position, 1), (velocity, 1), (heading, 1), (max_speed, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.wall_avoidance(
        p, v, h, ms, b, float(feeler_length), float(side_angle), float(side_scale), buf
    )
    return out


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
    centers = np.asarray(obstacle_center, dtype=np.float64).reshape(-1, 2)
    radii = np.asarray(obstacle_radius, dtype=np.float64).reshape(-1)
    if radii.shape[0] != centers.shape[0]:
        raise ValueError(
            f"obstacle_radius must have one radius per obstacle_center ({centers.shape[0]}), "
            f"got {radii.shape[0]}"
        )
    circles = np.column_stack((centers, radii))
    lead, n, (p, v, h, ms, r) = rows(
        (position, 1), (velocity, 1), (heading, 1), (max_speed, 0), (radius, 0)
    )
    buf, out = vectors_out(lead, n)
    LOOPS.obstacle_avoidance(
        p, v, h, ms, r, circles, float(min_detection_length), float(braking_weight), buf
    )
    return out


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
    lead, n, (p, v, ms, ap, av, bp, bv, sr) = rows(
        (position, 1),
        (velocity, 1),
        (max_speed, 0),
        (a_position, 1),
        (a_velocity, 1),
        (b_position, 1),
        (b_velocity, 1),
        (slowing_radius, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.interpose(p, v, ms, ap, av, bp, bv, sr, buf)
    return out


def hiding_spots(
    hunter_position: ArrayLike,
    obstacle_center: ArrayLike,
    obstacle_radius: ArrayLike,
    distance_from_boundary: float,
) -> Array:
    """``(..., M, 2)`` points behind each obstacle as seen from the hunter, each
    ``distance_from_boundary`` m beyond the obstacle's edge (Buckland's
    ``GetHidingPosition``)."""
    centers = _c(np.asarray(obstacle_center, dtype=np.float64).reshape(-1, 2))
    radii = _c(np.asarray(obstacle_radius, dtype=np.float64).reshape(-1))
    lead, n, (hp,) = rows((hunter_position, 1))
    buf = np.empty((n, radii.shape[0], 2))
    LOOPS.hiding_spots(hp, centers, radii, float(distance_from_boundary), buf)
    return buf.reshape((*lead, radii.shape[0], 2))


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
    centers = _c(np.asarray(obstacle_center, dtype=np.float64).reshape(-1, 2))
    radii = _c(np.asarray(obstacle_radius, dtype=np.float64).reshape(-1))
    lead, n, (p, v, ms, hp, hv, sr) = rows(
        (position, 1),
        (velocity, 1),
        (max_speed, 0),
        (hunter_position, 1),
        (hunter_velocity, 1),
        (slowing_radius, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.hide(p, v, ms, hp, hv, centers, radii, sr, float(distance_from_boundary), buf)
    return out


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
    lead, n, (p, v, ms, lp, lv, lh, off, sr) = rows(
        (position, 1),
        (velocity, 1),
        (max_speed, 0),
        (leader_position, 1),
        (leader_velocity, 1),
        (leader_heading, 1),
        (offset, 1),
        (slowing_radius, 0),
    )
    buf, out = vectors_out(lead, n)
    LOOPS.offset_pursuit(p, v, ms, lp, lv, lh, off, sr, buf)
    return out


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
    return _follow(position, velocity, 1.0, path, prediction_time, look_ahead, loop, True)


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
    return _follow(position, velocity, max_speed, path, prediction_time, look_ahead, loop, False)


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
    p = _c(np.asarray(position, dtype=np.float64).reshape(-1, 2))
    v = _c(np.asarray(velocity, dtype=np.float64).reshape(-1, 2))
    h = _c(np.asarray(heading, dtype=np.float64).reshape(-1, 2))
    n = p.shape[0]
    ms = _c(_per_vehicle(max_speed, n))
    r = _c(_per_vehicle(radius, n))
    out = np.empty((n, 2))
    LOOPS.unaligned_collision_avoidance(
        neighbors.i, neighbors.j, _c(neighbors.offset), p, v, h, ms, r, float(time_horizon), out
    )
    return out


# --- flow fields
def flow_field_following(
    position: ArrayLike,
    velocity: ArrayLike,
    max_speed: ArrayLike,
    field_velocity: ArrayLike | Callable[[Array], ArrayLike],
    prediction_time: float = 0.0,
) -> Array:
    """Reynolds' flow field following (Reynolds 1999, "Steering Behaviors For Autonomous
    Characters", section "Flow Field Following").

    The desired velocity is the field's vector at the vehicle's predicted position
    ``position + velocity * prediction_time`` (s; Reynolds samples "a little ahead"),
    scaled to ``max_speed``; the steering force is ``desired - velocity``. A zero field
    vector gives a desired velocity of zero (the force brakes).

    ``field_velocity`` is either a callable mapping ``(..., 2)`` points (m) to ``(..., 2)``
    field vectors (any units: only their direction is used), for example
    :func:`vortex_field` with its other arguments bound, or an already sampled ``(..., 2)``
    array of field vectors (``prediction_time`` is then unused).
    """
    if callable(field_velocity):
        sample_at = np.asarray(position, dtype=np.float64)
        if prediction_time:
            sample_at = sample_at + np.asarray(velocity, dtype=np.float64) * prediction_time
        field_velocity = field_velocity(sample_at)
    lead, n, (p, v, ms, fv) = rows(
        (position, 1), (velocity, 1), (max_speed, 0), (field_velocity, 1)
    )
    buf, out = vectors_out(lead, n)
    LOOPS.flow_field_following(p, v, ms, fv, buf)
    return out


def vortex_field(
    points: ArrayLike,
    center: ArrayLike,
    radius: ArrayLike,
    clockwise: bool = False,
    gain: float = 1.0,
) -> Array:
    """A flow field that circles ``center``: ``(..., 2)`` points (m) to ``(..., 2)`` field
    vectors of length between 1 and ``sqrt(1 + gain**2)``.

    Each vector is the unit tangent ``perp(r_hat)`` (counter-clockwise; negated when
    ``clockwise``), where ``r_hat`` is the unit vector from the centre to the point, plus a
    radial correction ``gain * clip((radius - d) / radius, -1, 1) * r_hat`` towards the
    preferred ``radius`` m at distance ``d``: outwards inside it, inwards outside it (at 45
    degrees at most with ``gain = 1``). A vehicle following it
    (:func:`flow_field_following`) therefore spirals onto an orbit near ``radius`` instead
    of drifting out of the vortex or into a corner. At the centre ``r_hat`` is taken as +x,
    so the field is finite everywhere.
    """
    lead, n, (p, c, r) = rows((points, 1), (center, 1), (radius, 0))
    buf, out = vectors_out(lead, n)
    LOOPS.vortex_field(p, c, r, -1.0 if clockwise else 1.0, float(gain), buf)
    return out
