"""Crowd navigation: learned robots cross a crowd of scripted pedestrians to their goals.

The registry entry :data:`CROWD` (task name ``crowd``) has two front ends: the Gymnasium
env ``steer_env/Crowd-v0`` (one learned robot, :mod:`steer_env.envs.crowd`) and the
PettingZoo module :mod:`steer_env.envs.crowd_v0` (``n_robots`` learned robots). The rules
are :mod:`steer_env.rules.crowd`.

The defaults are CrowdNav's (Chen et al. 2019, the ``circle_crossing`` test of
``crowd_nav/configs/env.config``): a robot from ``(0, -4)`` to ``(0, 4)`` through 5 humans
that start on a circle of radius 4 m and walk to the opposite point; every body 0.3 m in
radius, everyone's preferred (top) speed 1 m/s, a step of 0.25 s and a 25 s time limit;
reward +1 at the goal, -0.25 for a collision, the discomfort penalty inside 0.2 m; the
robot invisible to the humans. The robot here is a force-driven vehicle (top speed 1 m/s,
4 N on 1 kg: full speed from rest in one step) rather than a velocity-commanded one.

**The humans** are written with the classic behaviours (:func:`pedestrian`), combined by
Buckland's prioritized running sum, in this order:

=============================== ============================================ ==========
behaviour                        acts on                                      weight
=============================== ============================================ ==========
obstacle avoidance               the obstacles, when there are any            6
unaligned collision avoidance    the humans within ``avoid_radius`` (and the  2
                                 robots, when ``visible``) whose predicted
                                 closest approach within ``time_horizon`` s
                                 brings their bodies together
separation                       the same neighbours within                   1
                                 ``separation_radius``
arrive                           its own goal                                 1
=============================== ============================================ ==========

**The robots' baselines** run strategies of the same library from the robot's
observation (:class:`agents.evaluation.scripted.ScriptedPolicy`): ``classic``, the
humans' own model with every vehicle it sees as a neighbour, and ``seek``, a straight line
to the goal at full speed.

Every parameter is a field of :class:`CrowdConfig`; ``gym.make`` and ``parallel_env``
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
from steer_env.rules import crowd as rules
from steer_env.rules.crowd import OUTCOME, SCENARIOS, World
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
    RewardTermInfos,
    TaskSpec,
    check_role,
)

#: The combination methods a crowd's strategies may use.
COMBINATIONS = ("prioritized", "weighted_sum", "dithered")


@dataclass(frozen=True)
@with_obstacles
class CrowdConfig(ObstacleConfig):
    """Parameters of the crowd navigation task (units: m, s, kg, N). Ranges in
    :data:`RANGES`."""

    n_humans: int = 5  #: scripted pedestrians
    n_robots: int = 1  #: learned robots
    scenario: str = "circle_crossing"  #: the humans' starts and goals (:data:`SCENARIOS`)
    visible: bool = False  #: the humans see the robots (CrowdNav's results: invisible)
    arena_size: float = 14.0  #: side of the walled square, m (the walls are out of the way)
    dt: float = 0.25  #: physics and decision step, s
    time_limit: int = 100  #: episode length, steps (25 s; reaching it is a time-out)
    robot_distance: float = 4.0  #: robots start this far from the centre, goals opposite, m
    circle_radius: float = 4.0  #: circle_crossing: the humans' circle, m
    square_width: float = 10.0  #: square_crossing's square, parallel_traffic's way, m
    human_noise: float = 0.5  #: circle_crossing: start offset in x and in y, at most, m
    vehicle_radius: float = 0.3  #: body radius of every robot and human, m
    goal_radius: float = 0.3  #: a robot whose centre is this near its goal reached it, m
    robot_max_speed: float = 1.0  #: m/s (CrowdNav's v_pref)
    robot_max_force: float = 4.0  #: N
    robot_mass: float = 1.0  #: kg
    human_max_speed: float = 1.0  #: m/s (CrowdNav's v_pref)
    human_max_force: float = 2.0  #: N
    human_mass: float = 1.0  #: kg
    # The humans' strategy.
    avoid_weight: float = 2.0  #: weight of unaligned collision avoidance
    avoid_radius: float = 4.0  #: neighbours considered for collision avoidance, m
    time_horizon: float = 2.0  #: collision avoidance's look-ahead, s
    separation_weight: float = 1.0  #: weight of separation
    separation_radius: float = 1.0  #: separation neighbourhood, m
    arrive_weight: float = 1.0  #: weight of arrive at the goal
    slowing_radius: float = 1.0  #: arrive slows down within this of the goal, m
    combination: str = "prioritized"  #: Buckland's combination of the humans' behaviours
    #: The humans' strategy: ``None`` for the pedestrians above (:func:`pedestrian`), or any
    #: :class:`~steer_env.engine.strategy.Strategy` (classic behaviours as data)
    human_strategy: Any = None
    # Observation.
    #: human slots, the nearest first (padding beyond n_humans); a policy trained on one crowd
    #: size plays any other with the same slots
    observed_humans: int = 5
    max_observed_robots: int = -1  #: other-robot slots; -1 means n_robots - 1
    # Rewards (CrowdNav's, plus a progress shaping term).
    success_reward: float = 1.0  #: on the step a robot reaches its goal
    collision_penalty: float = 0.25  #: subtracted on the step a robot collides
    discomfort_distance: float = 0.2  #: gap between bodies below which a robot is too close, m
    discomfort_factor: float = 0.5  #: the discomfort penalty's factor
    progress_scale: float = 0.1  #: progress potential per m of distance to the goal (0: none)
    shaping_gamma: float = 0.99  #: discount of the progress term: the learner's gamma
    # Obstacles in a crowd (the other obstacle fields: ObstacleConfig).
    obstacle_radius_min: float = 0.3  #: m
    obstacle_radius_max: float = 0.8  #: m
    obstacle_gap: float = 0.6  #: m
    detection_length: float = 1.5  #: humans and the classic robot: detection box's length, m

    @property
    def half_size(self) -> float:
        return self.arena_size / 2.0

    @property
    def observed_robots(self) -> int:
        return self.n_robots - 1 if self.max_observed_robots < 0 else self.max_observed_robots


_LENGTH: Range = (float, 0.0, 1e4, False)
RANGES: dict[str, Range] = field_ranges(
    CrowdConfig,
    {
        **{
            name: r
            for name, r in COMMON_RANGES.items()
            if name in {f.name for f in dataclasses.fields(CrowdConfig)}
        },
        "n_humans": (int, 1, 1000, True),
        "n_robots": (int, 1, 16, True),
        "robot_distance": _LENGTH,
        "circle_radius": _LENGTH,
        "square_width": _LENGTH,
        "human_noise": (float, 0.0, 1e4, True),
        "goal_radius": _LENGTH,
        "robot_max_speed": SPEED,
        "robot_max_force": FORCE,
        "robot_mass": MASS,
        "human_max_speed": SPEED,
        "human_max_force": FORCE,
        "human_mass": MASS,
        "avoid_weight": WEIGHT,
        "avoid_radius": _LENGTH,
        "time_horizon": (float, 0.0, 1e4, False),
        "separation_weight": WEIGHT,
        "separation_radius": _LENGTH,
        "arrive_weight": WEIGHT,
        "slowing_radius": _LENGTH,
        "observed_humans": (int, 0, 1000, True),
        "max_observed_robots": (int, -1, 15, True),
        "success_reward": WEIGHT,
        "collision_penalty": WEIGHT,
        "discomfort_distance": (float, 0.0, 1e4, True),
        "discomfort_factor": WEIGHT,
        "progress_scale": WEIGHT,
    },
)
FIELDS = tuple(f.name for f in dataclasses.fields(CrowdConfig))


def _check(name: str, value: Any) -> Any:
    if name == "obstacles":
        return check_obstacle_layout(value)
    if name == "visible":
        return check_flag(name, value)
    if name == "human_strategy":
        if value is None or isinstance(value, Strategy):
            return value
        raise ValueError(f"human_strategy must be None or a Strategy, got {value!r}")
    if name in ("scenario", "combination"):
        accepted = SCENARIOS if name == "scenario" else COMBINATIONS
        if value not in accepted:
            raise ValueError(f"{name} must be one of {', '.join(accepted)}, got {value!r}")
        return value
    return check_number(name, value, *RANGES[name])


def check_geometry(cfg: CrowdConfig) -> None:
    """The rules that tie the config's lengths together: ``ValueError`` naming the
    argument otherwise."""
    half = cfg.half_size
    if cfg.vehicle_radius * 4 >= cfg.arena_size:
        raise ValueError(
            f"vehicle_radius must be below arena_size / 4 ({cfg.arena_size / 4:g} m), "
            f"got {cfg.vehicle_radius!r}"
        )
    inner = half - cfg.vehicle_radius
    # The farthest a start or goal may lie from the centre along x or y.
    reaches = {
        "robot_distance": cfg.robot_distance,
        "circle_radius": cfg.circle_radius + cfg.human_noise,  # (and human_noise)
        "square_width": cfg.square_width / 2,
    }
    for name, reach in reaches.items():
        if reach > inner + 1e-9:
            raise ValueError(
                f"{name} puts starts or goals {reach:g} m from the centre along an axis: "
                f"every start and goal must lie inside the walls (at most {inner:g} m: "
                f"arena_size / 2 - vehicle_radius), got {name}={getattr(cfg, name)!r}"
            )
    if cfg.observed_robots > cfg.n_robots - 1:
        raise ValueError(
            f"max_observed_robots must be -1 or at most n_robots - 1 ({cfg.n_robots - 1}), "
            f"got {cfg.max_observed_robots!r}"
        )


def make_crowd_config(
    defaults: CrowdConfig, overrides: dict[str, Any], max_cycles: Any = None
) -> CrowdConfig:
    """``defaults`` with ``overrides`` (and PettingZoo's ``max_cycles`` for
    ``time_limit``), every value and the combination validated."""
    overrides = time_limit_alias(dict(overrides), "max_cycles", max_cycles)
    values = check_overrides(overrides, FIELDS, _check)
    cfg = dataclasses.replace(defaults, **values)
    check_geometry(cfg)
    check_obstacles(cfg)
    return cfg


# --------------------------------------------------------------------------- strategies
def pedestrian(cfg: CrowdConfig, neighbours: str | None = None) -> Strategy:
    """The humans' model (the module docstring's table): obstacle avoidance, unaligned
    collision avoidance and separation among ``neighbours`` (``"teammates"``: the other
    humans; ``"everyone"``: the robots too; by default as ``visible`` says), then arrive
    at the goal."""
    who = neighbours or ("everyone" if cfg.visible else "teammates")
    return Strategy(
        [
            *obstacle_avoidance(cfg),
            Behavior(
                "unaligned_collision_avoidance",
                cfg.avoid_weight,
                target=who,
                neighbor_radius=cfg.avoid_radius,
                time_horizon=cfg.time_horizon,
            ),
            Behavior(
                "separation",
                cfg.separation_weight,
                target=who,
                neighbor_radius=cfg.separation_radius,
            ),
            Behavior("arrive", cfg.arrive_weight, target="goal", slowing_radius=cfg.slowing_radius),
        ],
        combination=cfg.combination,
        name="pedestrian",
    )


def classic_robot(cfg: CrowdConfig) -> Strategy:
    """The classic robot: the humans' own model, with every vehicle it observes as a
    neighbour."""
    strategy = pedestrian(cfg, "everyone")
    return dataclasses.replace(strategy, name="classic robot")


def seek_robot(cfg: CrowdConfig) -> Strategy:
    """A straight line to the goal at full speed (seek), blind to the crowd."""
    return Strategy([Behavior("seek", 1.0, target="goal")], name="seek robot")


# --------------------------------------------------------------------------- the task
@dataclass(frozen=True)
class CrowdTask(TaskSpec, RewardTermInfos):
    """The crowd navigation task's registry entry (see the module docstring)."""

    rules_package = rules
    final_keys = ("is_success", "goal_step", "navigation_time", *OUTCOME)

    name: str = "crowd"
    env_id: str | None = "steer_env/Crowd-v0"
    env_module: str | None = "steer_env.envs.crowd_v0"
    entry_point: str = "steer_env.envs.crowd:CrowdEnv"
    vector_entry_point: str = "steer_env.envs.crowd:make_crowd_vector"
    learned_team: str = "robot"
    #: The config value that counts the learned robots.
    agent_count: str | None = "n_robots"
    default_config: CrowdConfig = field(default_factory=CrowdConfig)
    #: The scripted robots, by name, the classic one first: strategies played from the
    #: robot's observation.
    baselines: Mapping[str, Callable[[CrowdConfig], Strategy]] = field(
        default_factory=lambda: {"classic": classic_robot, "seek": seek_robot}
    )
    metrics: Metrics = field(
        default_factory=lambda: Metrics(
            "agents",
            success_means="every robot at its goal within the time limit, without a collision",
            time_means="navigation time",
            goal={
                "criterion": "learned - classic: success CI above 0",
                "time_shorter": False,
            },
            labels={
                "rate": "success",
                "achieved": "at the goal",
                "event": "at the goal",
                "no_event": "not at the goal",
                "curve": "fraction of robots not yet at the goal",
                "title": "Crowd navigation",
            },
            time_key="goal_step",
            outcomes=OUTCOME,
        )
    )
    training: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: training.table(
            ppo=training.defaults(2_000_000, 64, CROWD_PPO),
            sac=training.defaults(200_000, 4, training.SB3_SAC),
            rllib_ppo=training.defaults(1_000_000, 32, training.RLLIB_PPO),
        )
    )

    # --- the task protocol -------------------------------------------------------------
    def config(self, max_cycles: Any = None, **overrides: Any) -> CrowdConfig:
        return make_crowd_config(self.default_config, overrides, max_cycles)

    def roster(self, cfg: CrowdConfig) -> list[VehicleSpec]:
        """The robots first (learned), then the humans."""
        robot = VehicleSpec(
            team="robot",
            strategy=None,
            mass=cfg.robot_mass,
            max_speed=cfg.robot_max_speed,
            max_force=cfg.robot_max_force,
            radius=cfg.vehicle_radius,
        )
        human = VehicleSpec(
            team="human",
            strategy=cfg.human_strategy or pedestrian(cfg),
            mass=cfg.human_mass,
            max_speed=cfg.human_max_speed,
            max_force=cfg.human_max_force,
            radius=cfg.vehicle_radius,
        )
        return [robot] * cfg.n_robots + [human] * cfg.n_humans

    def world(self, cfg: CrowdConfig) -> World:
        return World(
            dt=cfg.dt,
            arena_size=cfg.arena_size,
            time_limit=cfg.time_limit,
            scenario=cfg.scenario,
            robot_distance=cfg.robot_distance,
            circle_radius=cfg.circle_radius,
            square_width=cfg.square_width,
            human_noise=cfg.human_noise,
            goal_radius=cfg.goal_radius,
            observed_teammates=cfg.observed_robots,
            observed_opponents=cfg.observed_humans,
            success_reward=cfg.success_reward,
            collision_penalty=cfg.collision_penalty,
            discomfort_distance=cfg.discomfort_distance,
            discomfort_factor=cfg.discomfort_factor,
            progress_scale=cfg.progress_scale,
            shaping_gamma=cfg.shaping_gamma,
            obstacles=cfg.obstacle_field(),
        )

    def agent_names(self, cfg: CrowdConfig) -> list[str]:
        return [f"robot_{k}" for k in range(cfg.n_robots)]

    def baselines_of(self, role: str) -> Mapping[str, Any]:
        check_role(role, ("robot",), self.name)
        return self.baselines

    def shared_baselines(self) -> Mapping[str, Any]:
        """Several robots share the single robot's baselines (each plays its own
        observation)."""
        return self.baselines

    def is_success(self, outcome: Any, role: str | None = None) -> Any:
        """Whether every robot reached its goal without a collision (``outcome``: the
        episode's ``is_success``)."""
        if role is not None:
            check_role(role, ("robot",), self.name)
        return outcome

    def in_game(self, batch: Any) -> Any:
        """``(E, k)``: the robots not yet at their goal."""
        return batch.state.alive[:, batch.agent_index].copy()

    # --- infos ---------------------------------------------------------------------------
    def _info(self, env: Mapping[str, Any], rewards: Mapping[str, Any], ended: Any) -> dict:
        info = {f"reward_{term}": rewards[term] for term in rules.REWARD_TERMS}
        info["collisions"] = env["collisions"]
        info["robots_left"] = env["robots_left"]
        info["is_success"] = env["is_success"] & ended
        info["goal_step"] = np.where(ended, env["goal_step"], -1)
        info["navigation_time"] = np.where(ended, env["navigation_time"], -1.0)
        for key in OUTCOME:
            info[key] = np.where(ended, env[key], 0.0)
        return info

    def _reset_fields(self, batch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The step's fields after a reset: nothing has happened yet."""
        e = batch.num_envs
        zeros = np.zeros(e)
        env = {
            "collisions": np.zeros(e, dtype=np.int64),
            "robots_left": np.count_nonzero(batch.state.alive[:, batch.agent_index], axis=1),
            "is_success": np.zeros(e, dtype=bool),
            "goal_step": np.full(e, -1, dtype=np.int64),
            "navigation_time": np.full(e, -1.0),
            **{key: zeros for key in OUTCOME},
        }
        return env, {term: zeros for term in rules.REWARD_TERMS}


# --------------------------------------------------------------------------- a peer's crowd
#: The humans' strategy while a peer's model drives them (:class:`PeerCrowd`): no force of
#: their own.
PASSIVE_HUMANS = Strategy([Behavior("seek", 0.0, target="goal")], name="driven from outside")
#: CrowdNav's ORCA parameters for the humans (``crowd_nav/configs/env.config``).
NEIGHBOR_DIST = 10.0
MAX_NEIGHBORS = 10
TIME_HORIZON = 5.0
TIME_HORIZON_OBST = 5.0
#: Sides of the polygon each circular obstacle is to a peer's model (outside the circle).
OBSTACLE_SIDES = 12


def have_peer(name: str) -> bool:
    """Whether the library of the peer crowd ``name`` (of :data:`PEER_CROWDS`) is
    installed."""
    import importlib.util

    return importlib.util.find_spec(PEER_CROWDS[name].module) is not None


def _polygons(obstacles: np.ndarray) -> list[list[tuple[float, float]]]:
    """Each circle of an obstacle table (radius 0: none) as a polygon that contains it."""
    angles = 2 * np.pi * np.arange(OBSTACLE_SIDES) / OBSTACLE_SIDES
    grow = 1.0 / np.cos(np.pi / OBSTACLE_SIDES)
    return [
        [(x + r * grow * np.cos(t), y + r * grow * np.sin(t)) for t in angles]
        for x, y, r in obstacles[obstacles[:, 2] > 0]
    ]


class PeerCrowd:
    """The humans of a Crowd-v0 native vector env made with
    ``human_strategy=PASSIVE_HUMANS``, driven by a peer's crowd model instead of the
    classic behaviours: a wrapper with the vector env's ``reset`` and ``step``.

    Before each step the model is set to every environment's humans (and its robots, when
    the humans see them: ``visible``), and its new velocities become the humans' velocities
    for the step. The engine then moves them (they apply no force), so the starts,
    collisions, metrics and observations are the env's own. Each subclass is one model:
    :meth:`start` prepares an environment's episode, :meth:`velocities` gives its humans'
    velocities ``(H, 2)``."""

    #: The Python module of the model's library.
    module = ""

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        base = venv.unwrapped
        cfg = base.config
        if cfg.human_strategy is not PASSIVE_HUMANS:
            raise ValueError(
                f"{type(self).__name__} drives the humans itself: make the env with "
                "human_strategy=steer_env.tasks.crowd.PASSIVE_HUMANS"
            )
        self.config = cfg
        batch = base.batch
        self.humans = np.flatnonzero(batch.is_team("human"))
        self.robots = np.flatnonzero(batch.is_team("robot"))
        #: The vehicles the model moves or sees: the humans, then the robots if visible.
        self.seen = np.concatenate([self.humans, self.robots if cfg.visible else []]).astype(int)
        self.num_envs = base.num_envs
        self._fresh = np.ones(self.num_envs, dtype=bool)
        self._restarting = np.zeros(self.num_envs, dtype=bool)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.venv, name)

    def start(self, e: int, state: Any) -> None:
        """Prepare environment ``e``'s new episode (its starts, goals and obstacles)."""

    def velocities(self, e: int, state: Any) -> np.ndarray:
        """Environment ``e``'s humans' velocities for the coming step, ``(H, 2)`` m/s."""
        raise NotImplementedError

    def reset(self, **kwargs: Any) -> Any:
        out = self.venv.reset(**kwargs)
        self._fresh[:] = True
        self._restarting[:] = False
        return out

    def step(self, actions: Any) -> Any:
        state = self.venv.unwrapped.batch.state
        for e in range(self.num_envs):
            if self._restarting[e]:
                continue  # this step restarts it (the vector env's next-step autoreset)
            if self._fresh[e]:
                self.start(e, state)
                self._fresh[e] = False
            state.velocity[e, self.humans] = self.velocities(e, state)
        out = self.venv.step(actions)
        self._restarting = out[2] | out[3]
        self._fresh |= self._restarting
        return out

    def close(self) -> None:
        self.venv.close()


class OrcaCrowd(PeerCrowd):
    """ORCA humans (van den Berg et al. 2011, through the ``rvo2`` binding of the ``crowd``
    extra), CrowdNav's crowd model and settings: neighbours within 10 m, at most 10, time
    horizons of 5 s. Each human prefers its own goal at ``human_max_speed``, slower within a
    metre of it, as CrowdNav's ORCA humans; a robot it sees keeps its velocity; each circular
    obstacle is a polygon around it."""

    module = "rvo2"

    def __init__(self, venv: Any) -> None:
        import rvo2

        self._rvo2 = rvo2
        super().__init__(venv)
        self._sims: list[Any] = [None] * self.num_envs

    def start(self, e: int, state: Any) -> None:
        # rvo2 cannot remove obstacles: a new simulator for each episode.
        cfg = self.config
        sim = self._rvo2.PyRVOSimulator(
            cfg.dt, NEIGHBOR_DIST, MAX_NEIGHBORS, TIME_HORIZON, TIME_HORIZON_OBST,
            cfg.vehicle_radius, cfg.human_max_speed,
        )  # fmt: skip
        for _ in self.seen:
            sim.addAgent((0.0, 0.0))
        for polygon in _polygons(state.obstacles[e]):
            sim.addObstacle(polygon)
        sim.processObstacles()
        self._sims[e] = sim

    def velocities(self, e: int, state: Any) -> np.ndarray:
        cfg = self.config
        sim = self._sims[e]
        for a, i in enumerate(self.seen.tolist()):
            pos, vel = state.position[e, i], state.velocity[e, i]
            sim.setAgentPosition(a, (float(pos[0]), float(pos[1])))
            sim.setAgentVelocity(a, (float(vel[0]), float(vel[1])))
            if a < len(self.humans):
                to_goal = state.goal[e, i] - pos
                d = float(np.hypot(*to_goal))
                pref = (to_goal / d if d > 1.0 else to_goal) * cfg.human_max_speed
            else:  # a robot: ORCA expects it to keep its velocity
                pref = vel
            sim.setAgentPrefVelocity(a, (float(pref[0]), float(pref[1])))
        sim.doStep()
        return np.array([sim.getAgentVelocity(a) for a in range(len(self.humans))])


def _import_pysocialforce() -> Any:
    """``pysocialforce``, imported without the side effects of its import: it sets the root
    logger to DEBUG with a handler of its own, and opens a log file, ``file.log``, in the
    working directory; here it opens that file in a temporary one, and the root logger is
    restored."""
    import logging
    import os
    import sys
    import tempfile

    if "pysocialforce" in sys.modules:
        return sys.modules["pysocialforce"]
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    here = os.getcwd()
    # What it imports then logs at DEBUG: quiet during the import.
    logging.disable(logging.INFO)
    try:
        with tempfile.TemporaryDirectory() as elsewhere:
            os.chdir(elsewhere)
            try:
                import pysocialforce
            finally:
                os.chdir(here)
                for handler in root.handlers[:]:
                    if handler not in handlers:
                        root.removeHandler(handler)
                        handler.close()
    finally:
        logging.disable(logging.NOTSET)
        root.setLevel(level)
    return pysocialforce


class SocialForceCrowd(PeerCrowd):
    """Social-force humans (Helbing and Molnár 1995, Moussaïd et al. 2010's extended model,
    through ``pysocialforce`` of the ``crowd`` extra, with its default forces and
    parameters): each human is drawn to its goal and pushed by the others and by the
    obstacles' edges, its speed capped at 1.3 times its preferred speed
    (``human_max_speed``; the engine caps it at that), and it stops within 0.5 m of its goal,
    as the library's humans do. A robot it sees is a pedestrian walking to its own goal."""

    module = "pysocialforce"

    def __init__(self, venv: Any) -> None:
        pysocialforce = _import_pysocialforce()
        self._psf = pysocialforce
        super().__init__(venv)
        self._sims: list[Any] = [None] * self.num_envs

    def _state(self, e: int, state: Any, velocity: np.ndarray) -> np.ndarray:
        i = self.seen
        return np.concatenate([state.position[e, i], velocity, state.goal[e, i]], axis=1)

    def start(self, e: int, state: Any) -> None:
        # Each human starts at its preferred speed towards its goal: the library caps every
        # speed at a multiple of the first one.
        to_goal = state.goal[e, self.seen] - state.position[e, self.seen]
        d = np.maximum(np.linalg.norm(to_goal, axis=1, keepdims=True), 1e-9)
        first = to_goal / d * self.config.human_max_speed
        segments = [
            [x0, x1, y0, y1]
            for polygon in _polygons(state.obstacles[e])
            for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1], strict=True)
        ]
        sim = self._psf.Simulator(
            self._state(e, state, first), groups=None, obstacles=segments or None
        )
        sim.peds.step_width = self.config.dt
        self._sims[e] = sim

    def velocities(self, e: int, state: Any) -> np.ndarray:
        sim = self._sims[e]
        sim.peds.update(self._state(e, state, state.velocity[e, self.seen]), None)
        sim.peds.ped_states.clear()  # the library keeps every state: only the last is used
        sim.step_once()
        return np.array(sim.peds.vel()[: len(self.humans)])


#: The peers' crowd models, by name.
PEER_CROWDS: Mapping[str, type[PeerCrowd]] = {"orca": OrcaCrowd, "social_force": SocialForceCrowd}


#: PPO for crowd navigation: 100-step episodes whose reward comes at the end.
CROWD_PPO: Mapping[str, Any] = {
    **training.SB3_PPO,
    "n_steps": 256,
    "batch_size": 4096,
    "n_epochs": 10,
    "gamma": 0.99,
}

CROWD = register(CrowdTask(default_config=CrowdConfig()))
