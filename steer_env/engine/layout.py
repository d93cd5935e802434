"""The named structures that cross into the compiled engine, and the codes they carry.

Everything the compiled step reads or writes is one of these, so a field is addressed by
its name on both sides of the boundary (``world.capture_radius``, ``vehicles[i].max_speed``,
``results[e, a].reward``) instead of by a row number:

* a task's world record: scalar parameters of the arena, the episode and the rewards,
  defined by its rules (:data:`steer_env.rules.pursuit_evasion.WORLD`); the shared stages
  read ``dt`` and ``half_size`` of it;
* :data:`VEHICLE`: one record per vehicle of an environment: physical limits, team and
  who drives it (a learned agent or a scripted strategy).
* :data:`BEHAVIOR` and :data:`STRATEGY`: scripted strategies as data, one row per classic
  behaviour with its weight and parameters (:mod:`steer_env.engine.strategy` builds them).
* what one step returns, per learned agent and per environment, is the rules' too
  (``AGENT_RESULT`` and ``ENV_RESULT``), decoded in one place
  (:class:`steer_env.engine.batch.StepResult`).

The state itself is :class:`State`, a named tuple of arrays. Units: m, s, kg, N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

# --------------------------------------------------------------------------- codes
#: ``VEHICLE.strategy`` of a vehicle driven by a learned agent.
LEARNED = -1

#: Behaviour kinds (``BEHAVIOR.kind``): every behaviour of :mod:`steer_env.behaviors`.
SEEK = 0
FLEE = 1
ARRIVE = 2
PURSUIT = 3
EVADE = 4
WANDER = 5
WALL_AVOIDANCE = 6
SEPARATION = 7
ALIGNMENT = 8
COHESION = 9
OBSTACLE_AVOIDANCE = 10
INTERPOSE = 11
HIDE = 12
OFFSET_PURSUIT = 13
FOLLOW_PATH = 14
UNALIGNED_COLLISION_AVOIDANCE = 15
FLOW_FIELD = 16
BEHAVIOR_KINDS = (
    "seek",
    "flee",
    "arrive",
    "pursuit",
    "evade",
    "wander",
    "wall_avoidance",
    "separation",
    "alignment",
    "cohesion",
    "obstacle_avoidance",
    "interpose",
    "hide",
    "offset_pursuit",
    "follow_path",
    "unaligned_collision_avoidance",
    "flow_field",
)

#: What a behaviour steers relative to (``BEHAVIOR.target``).
NEAREST_OPPONENT = 0  #: the nearest vehicle of the other team still in the game
EACH_OPPONENT = 1  #: every opponent within ``threat_range``, weighted by 1 / distance
NEAREST_TEAMMATE = 2  #: the nearest other vehicle of the same team
TEAMMATES = 3  #: the other vehicles of the same team within ``neighbor_radius``
EVERYONE = 4  #: every other vehicle within ``neighbor_radius``
ARENA_CENTER = 5  #: the centre of the arena (a fixed point)
NO_TARGET = 6  #: behaviours that need none (wander, wall avoidance, path, obstacles)
GOAL = 7  #: the vehicle's own goal point (``State.goal``), at rest
TARGET_NAMES = (
    "nearest_opponent",
    "each_opponent",
    "nearest_teammate",
    "teammates",
    "everyone",
    "arena_center",
    "none",
    "goal",
)

#: Buckland's three combination methods (``STRATEGY.combination``).
WEIGHTED_SUM, PRIORITIZED, DITHERED = 0, 1, 2
COMBINATION_NAMES = ("weighted_sum", "prioritized", "dithered")

# --------------------------------------------------------------------------- records
VEHICLE = np.dtype(
    [
        ("mass", "f8"),  # kg
        ("max_speed", "f8"),  # m/s
        ("max_force", "f8"),  # N
        ("radius", "f8"),  # m
        ("team", "i8"),  # index of its team in the rules' TEAMS
        ("strategy", "i8"),  # row of the strategy table, or LEARNED
        ("agent", "i8"),  # index among the learned agents, or -1
        ("draw_offset", "i8"),  # first per-step random draw of its strategy
        ("speed_scale", "f8"),  # m/s: observation scale of relative velocities
    ],
    align=True,
)

BEHAVIOR = np.dtype(
    [
        ("kind", "i8"),
        ("target", "i8"),
        ("weight", "f8"),
        ("probability", "f8"),  # dithering: chance the behaviour is considered
        ("active_beyond", "f8"),  # m: acts only while the nearest opponent is farther
        (
            "active_within",
            "f8",
        ),  # m: acts only while the nearest opponent is this near (inf: always)
        ("threat_range", "f8"),  # m: flee/evade/hide ignore opponents beyond (inf: none)
        ("prediction_time", "f8"),  # s: cap on pursuit/evade look-ahead (inf: none)
        ("slowing_radius", "f8"),  # m: arrive and the behaviours built on it
        ("max_deceleration", "f8"),  # m/s^2: arrive's braking cap (inf: none)
        ("wander_radius", "f8"),  # m
        ("wander_distance", "f8"),  # m
        ("wander_jitter", "f8"),  # m/s
        ("wander_speed", "f8"),  # wander's desired speed / max speed (seek form; < 1: grazing)
        ("feeler_length", "f8"),  # m
        ("side_angle", "f8"),  # rad
        ("side_scale", "f8"),
        ("neighbor_radius", "f8"),  # m: separation/alignment/cohesion/unaligned
        ("neighbor_count", "i8"),  # flocking: only the k nearest neighbours count (0: all)
        ("view_cos", "f8"),  # separation/alignment/cohesion: cosine of half the view angle
        ("min_distance", "f8"),  # m: separation's distance floor
        ("offset_forward", "f8"),  # m: offset pursuit, in the target's frame
        ("offset_side", "f8"),  # m
        ("offset_spread", "?"),  # spread teammates by bearing (step.spread_rank)
        ("detection_length", "f8"),  # m: obstacle avoidance's box
        ("braking_weight", "f8"),
        ("hide_distance", "f8"),  # m beyond an obstacle's edge
        ("time_horizon", "f8"),  # s: unaligned collision avoidance
        ("look_ahead", "f8"),  # m: path following
        ("path_prediction", "f8"),  # s: path following
        ("path_loop", "?"),
        ("flow_radius", "f8"),  # m: radius of the vortex the flow field circles
        ("flow_clockwise", "?"),
        ("flow_gain", "f8"),  # strength of the vortex's pull towards flow_radius
        ("flow_prediction", "f8"),  # s: the field is sampled at position + velocity * this
        # Options (:mod:`steer_env.core.options`), as the index of the name there:
        ("separation_form", "i8"),  # "reynolds" (desired velocity) or "buckland" (1/d sum)
        ("wander_form", "i8"),  # "seek" the wander target or its "offset" as the force
        ("prediction_form", "i8"),  # pursuit/evade look-ahead: "buckland" or "seed"
    ],
    align=True,
)

STRATEGY = np.dtype(
    [
        ("combination", "i8"),
        ("n_behaviors", "i8"),
    ],
    align=True,
)


@dataclass(frozen=True)
class ObstacleField:
    """The circular obstacles of every environment of a batch: a fixed ``layout`` of
    ``(x, y, radius)`` circles, or ``count`` circles placed anew at each reset from the
    environment's stream (radii uniform in ``[radius_min, radius_max]``, each at least
    ``gap`` m from the walls, from the other obstacles, from every vehicle's body and from
    the area the rules keep clear). ``observed`` nearest ones are in each agent's
    observation. The default is no obstacle. Units: m."""

    layout: tuple[tuple[float, float, float], ...] = ()
    count: int = 0
    radius_min: float = 1.0
    radius_max: float = 2.0
    gap: float = 1.0
    observed: int = 0

    @property
    def slots(self) -> int:
        """Rows of each environment's obstacle table (``State.obstacles``)."""
        return len(self.layout) or self.count


#: The obstacle fields every rules' world record ends with: the shared stages place the
#: obstacles of an episode (``n_obstacles`` random ones; 0: the batch's fixed layout or
#: none) and write the ``observed_obstacles`` nearest into the observation. Each is an
#: attribute of :class:`ObstacleField` (``world.obstacles``).
OBSTACLE_WORLD_FIELDS = [
    ("n_obstacles", "i8"),  # obstacles placed at reset (0: the fixed layout, if any)
    ("obstacle_radius_min", "f8"),  # m
    ("obstacle_radius_max", "f8"),  # m
    ("obstacle_gap", "f8"),  # m, the least gap around a placed obstacle
    ("observed_obstacles", "i8"),  # obstacle slots of the observation
]
_OBSTACLE_ATTRIBUTES = {
    "n_obstacles": "count",
    "obstacle_radius_min": "radius_min",
    "obstacle_radius_max": "radius_max",
    "obstacle_gap": "gap",
    "observed_obstacles": "observed",
}


def world_record(world: object, dtype: np.dtype) -> NDArray[np.void]:
    """A rules' world record (a length-1 array of ``dtype``) from its parameters ``world``:
    every field is the attribute of that name, except the lengths the engine derives from
    ``arena_size``: ``half_size`` (the arena is ``[-half_size, half_size]^2``) and
    ``diagonal``, and the :data:`OBSTACLE_WORLD_FIELDS`, read from ``world.obstacles`` (an
    :class:`ObstacleField`; ``n_obstacles`` is 0 for a fixed layout)."""
    w = np.zeros(1, dtype=dtype)
    for name in dtype.names:
        if name in _OBSTACLE_ATTRIBUTES:
            field = world.obstacles
            w[name] = (
                0
                if name == "n_obstacles" and field.layout
                else getattr(field, _OBSTACLE_ATTRIBUTES[name])
            )
        elif name == "half_size":
            w[name] = world.arena_size / 2.0
        elif name == "diagonal":
            w[name] = world.arena_size * np.sqrt(2.0)
        else:
            w[name] = getattr(world, name)
    return w


class State(NamedTuple):
    """The batched state of ``E`` environments of ``n`` vehicles with ``k`` learned agents.

    Arrays are updated in place by the compiled step and reset."""

    position: NDArray[np.float64]  #: (E, n, 2) m
    velocity: NDArray[np.float64]  #: (E, n, 2) m/s
    heading: NDArray[np.float64]  #: (E, n, 2) unit vectors
    wander: NDArray[np.float64]  #: (E, n, 2) m, wander targets in each vehicle's frame
    alive: NDArray[np.bool_]  #: (E, n) still in the game (captured evaders leave it)
    steps: NDArray[np.int64]  #: (E,) steps taken in the episode
    capture_step: NDArray[np.int64]  #: (E, n) step an evader was captured, -1 if not
    key: NDArray[np.uint64]  #: (E,) random stream key
    counter: NDArray[np.uint64]  #: (E,) random draws taken from the stream
    potential: NDArray[np.float64]  #: (E, k) shaping potential of each learned agent
    #: (E,) what the rules keep over an episode (their ``EPISODE`` record: the pursuit rules'
    #: captures so far, the herding rules' dog path and start distance...)
    episode: NDArray[np.void]
    #: (E, M, 3) each environment's obstacles this episode, circles ``(x, y, radius)`` in m;
    #: a row of radius 0 holds none (a placement that found no room)
    obstacles: NDArray[np.float64]
    #: (E, n, 2) m: each vehicle's goal point this episode, for rules whose vehicles have
    #: one (a behaviour's ``goal`` target); zero otherwise
    goal: NDArray[np.float64]


def empty_state(
    num_envs: int,
    n_vehicles: int,
    n_agents: int,
    episode: np.dtype | None = None,
    n_obstacles: int = 0,
) -> State:
    """A zero state (headings along +x, nothing captured, ``n_obstacles`` empty obstacle
    rows) for ``num_envs`` environments; ``episode`` is the rules' per-episode record
    (``EPISODE``)."""
    e, n = int(num_envs), int(n_vehicles)
    heading = np.zeros((e, n, 2))
    heading[..., 0] = 1.0
    return State(
        position=np.zeros((e, n, 2)),
        velocity=np.zeros((e, n, 2)),
        heading=heading,
        wander=np.zeros((e, n, 2)),
        alive=np.ones((e, n), dtype=np.bool_),
        steps=np.zeros(e, dtype=np.int64),
        capture_step=np.full((e, n), -1, dtype=np.int64),
        key=np.zeros(e, dtype=np.uint64),
        counter=np.zeros(e, dtype=np.uint64),
        potential=np.zeros((e, int(n_agents))),
        episode=np.zeros(e, dtype=EMPTY_EPISODE if episode is None else episode),
        obstacles=np.zeros((e, int(n_obstacles), 3)),
        goal=np.zeros((e, n, 2)),
    )


#: The per-episode record of rules that keep nothing over an episode.
EMPTY_EPISODE = np.dtype([("steps_kept", "i8")], align=True)
