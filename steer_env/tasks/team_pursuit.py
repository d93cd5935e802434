"""Team pursuit: ``N`` pursuers (default 3) chase ``M`` faster evaders (default 1).

Every evader is faster than every pursuer (``speed_ratio``, default 1.3), so a lone
pursuer almost never captures and the team must cooperate. A captured evader leaves the
game; the episode ends when every evader is captured or at ``time_limit`` (200 steps of
0.1 s = 20 s), both terminations. Each evader starts at least ``min_start_distance``
(8 m) from every pursuer (the engine's placement: the first of 16 candidate positions that
is far enough, the farthest candidate when none is).

Which roles are learned is configuration (``learned``: ``"pursuers"``, ``"evaders"``,
``"both"`` or ``"none"`` for fully scripted play); the others run a registered strategy.
The roster is the pursuers, then the evaders, so learned pursuers are agents ``0..N-1``.

Scripted strategies (Reynolds' behaviours combined by one of Buckland's methods, every
parameter from the config):

* **flow evader** (``"flow"``), Buckland's weighted truncated sum of: wall avoidance
  (``wall_weight``, with its own short feelers ``evader_feeler_length``, so that a fleeing
  evader can run along a wall instead of being turned back into the pursuers); evade every
  pursuer within ``threat_range``, each with prediction, weighted by 1 / distance
  (``evade_weight``); and, only while no pursuer is within ``threat_range``, follow a flow
  field: a vortex around the arena centre (``flow_radius``, ``flow_gain``,
  ``flow_clockwise``), so that it circles instead of running into a corner. Evade is
  strong (``evade_weight`` 8) and short-range (5 m): the evader runs the vortex at full
  speed and dodges a pursuer only when it comes close. (The vortex and evade are never
  summed: against a pursuer ahead on the circle the two desired velocities are opposite,
  their sum is a standstill, and an evader that summed them was caught by a lone pursuer
  in about half of the episodes.)
* **Reynolds team** (``"reynolds"``): wall avoidance, separation from the other pursuers,
  pursuit of the nearest evader with prediction (prioritized; the classic pursuer);
* **cooperative team** (``"cooperative"``): wall avoidance; offset pursuit with the offset
  (``offset_distance`` behind the evader) rotated by ``2 pi rank / n`` (so the pursuers
  spread around the evader's predicted position on different bearings) while farther than
  ``close_range``; pursuit within it (prioritized). ``n`` is the pursuers in the game and
  ``rank`` a pursuer's place in their bearing order around the evader (see
  :func:`cooperative_pursuer`), both read from what the pursuer observes, so the team also
  plays from observations (:class:`agents.evaluation.scripted.ScriptedPolicy`).

Calibration (:func:`calibration`, ``python -m agents.team_calibration``): over
1,000 paired episodes (seeds 1,000,000 onwards, default settings) the Reynolds team
captures the flow evader in 6.7% [5.3, 8.4] of the episodes, a lone Reynolds pursuer in
1.7% [1.1, 2.7] and the cooperative team in 38.9% [35.9, 42.0] (95% Wilson intervals).

The factories also accept a :class:`~steer_env.tasks.config.TaskConfig` (so
``gym.make("steer_env/Pursuit-v0", opponent_strategy="flow")`` works): parameters that a
``TaskConfig`` lacks (the flow field's, the evader's feelers, the offsets') take
:class:`TeamConfig`'s defaults.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.rules.pursuit_evasion import World, team_agent_info
from steer_env.tasks import STRATEGIES, Metrics, register, training
from steer_env.tasks.config import (
    COMMON_RANGES,
    FORCE,
    MASS,
    SPEED,
    WEIGHT,
    ObstacleConfig,
    Range,
    check_arena_geometry,
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
from steer_env.tasks.protocol import Role, StrategyFactory, TaskSpec, TeamInfos, check_role
from steer_env.tasks.pursuit_evasion import classic_pursuer

#: Accepted values of ``TeamConfig.learned``.
LEARNED_ROLES = ("pursuers", "evaders", "both", "none")

#: The roles of a team task on the pursuit-evasion rules, in the order of its cross-play
#: table: rows the pursuer teams, columns the evaders.
PURSUIT_ROLES = (
    Role(
        "pursuer",
        "pursuers",
        side_word="pursuers",
        sides_key="pursuer_teams",
        strategy_key="pursuer_strategy",
        count_key="n_pursuers",
        caption="{} team",
        learned_caption="learned team",
    ),
    Role(
        "evader",
        "evaders",
        side_word="evader",
        sides_key="evaders",
        strategy_key="evader_strategy",
        count_key="n_evaders",
        caption="{}",
        learned_caption="learned evader",
    ),
)

#: ``TeamConfig.learned`` for each set of learned roles (their names in table order).
LEARNED_VALUES = {
    (): "none",
    ("pursuer",): "pursuers",
    ("evader",): "evaders",
    ("pursuer", "evader"): "both",
}


@dataclass(frozen=True)
@with_obstacles
class TeamConfig(ObstacleConfig):
    """Parameters of the team pursuit task (units: m, s, kg, N). Ranges in :data:`_RANGES`."""

    n_pursuers: int = 3  #: pursuers, [1, 16]
    n_evaders: int = 1  #: evaders, [1, 16]
    learned: str = "pursuers"  #: learned roles: "pursuers", "evaders", "both" or "none"
    speed_ratio: float = 1.3  #: evader max speed / pursuer max speed, (0, 100]
    arena_size: float = 25.0  #: side of the square arena, m
    dt: float = 0.1  #: physics and decision step, s
    time_limit: int = 200  #: episode length, steps (20 s; reaching it is a termination)
    capture_radius: float = 0.8  #: capture distance between centres, m
    min_start_distance: float = 8.0  #: start distance of each evader from every pursuer, m
    vehicle_radius: float = 0.3  #: body radius, m
    mass: float = 1.0  #: kg, every vehicle
    pursuer_max_speed: float = 3.0  #: m/s (evaders: speed_ratio times this)
    pursuer_max_force: float = 6.0  #: N
    evader_max_force: float = 10.0  #: N
    capture_reward: float = 1.0  #: to every pursuer per capture; minus it to the captured evader
    escape_reward: float = 1.0  #: to an evader still in the game at the time limit
    reward_shaping: bool = True  #: add the potential-based distance term per agent
    shaping_scale: float = 1.0  #: potential = -/+ shaping_scale * distance / arena diagonal
    shaping_gamma: float = 0.99  #: discount of the shaping term: the learner's gamma
    # Scripted roles.
    pursuer_strategy: Any = "reynolds"  #: a registered pursuer strategy name or a Strategy
    evader_strategy: Any = "flow"  #: a registered evader strategy name or a Strategy
    wall_weight: float = 3.0  #: wall avoidance (first priority)
    feeler_length: float = 2.0  #: pursuers: wall feeler length, m
    evader_feeler_length: float = 1.0  #: evaders: wall feeler length, m
    evade_weight: float = 8.0  #: evaders: evade every pursuer within threat_range
    threat_range: float = 5.0  #: evaders: pursuers beyond this are ignored, m
    flow_weight: float = 1.0  #: evaders: the vortex flow field (while unthreatened)
    flow_radius: float = 6.0  #: m, radius the vortex draws the evader to
    flow_gain: float = 1.0  #: strength of the vortex's pull towards flow_radius
    flow_clockwise: bool = False  #: direction of the vortex
    pursuit_weight: float = 1.0  #: pursuers: pursuit (and offset pursuit)
    separation_weight: float = 1.0  #: Reynolds team: separation from the other pursuers
    separation_radius: float = 3.0  #: m
    max_prediction_time: float = 3.0  #: cap on pursuit/evade look-ahead, s
    # The classic evader ("classic"): wander while unthreatened.
    wander_weight: float = 1.0  #: weight of wander
    wander_radius: float = 1.0  #: m
    wander_distance: float = 2.0  #: m
    wander_jitter: float = 8.0  #: m/s
    offset_distance: float = 6.0  #: cooperative team: offset from the evader, m
    close_range: float = 1.0  #: cooperative team: pursue directly within this distance, m

    @property
    def evader_max_speed(self) -> float:
        return self.speed_ratio * self.pursuer_max_speed

    @property
    def half_size(self) -> float:
        return self.arena_size / 2.0

    @property
    def learned_pursuers(self) -> bool:
        return self.learned in ("pursuers", "both")

    @property
    def learned_evaders(self) -> bool:
        return self.learned in ("evaders", "both")


# name -> accepted range of TeamConfig's numbers (bounds shared with the other tasks: config.py)
_RANGES: dict[str, Range] = field_ranges(
    TeamConfig,
    {
        **COMMON_RANGES,
        "n_pursuers": (int, 1, 16, True),
        "n_evaders": (int, 1, 16, True),
        "speed_ratio": (float, 0.0, 100.0, False),
        "mass": MASS,
        "pursuer_max_speed": SPEED,
        "pursuer_max_force": FORCE,
        "evader_max_force": FORCE,
        "capture_reward": WEIGHT,
        "escape_reward": WEIGHT,
        "evader_feeler_length": COMMON_RANGES["feeler_length"],
        "flow_weight": WEIGHT,
        "flow_radius": (float, 0.0, 1e4, False),
        "flow_gain": WEIGHT,
        "offset_distance": (float, 0.0, 1e4, True),
        "close_range": (float, 0.0, 1e5, True),
    },
)
_FLAGS = ("reward_shaping", "flow_clockwise")
FIELDS = tuple(f.name for f in dataclasses.fields(TeamConfig))


def _check(name: str, value: Any) -> Any:
    if name == "obstacles":
        return check_obstacle_layout(value)
    if name == "learned":
        if value not in LEARNED_ROLES:
            raise ValueError(f"learned must be one of {', '.join(LEARNED_ROLES)}, got {value!r}")
        return value
    if name in ("pursuer_strategy", "evader_strategy"):
        if isinstance(value, str | Strategy):
            return value
        raise ValueError(f"{name} must be a strategy name or a Strategy, got {value!r}")
    if name in _FLAGS:
        return check_flag(name, value)
    return check_number(name, value, *_RANGES[name])


def make_team_config(overrides: dict[str, Any], defaults: TeamConfig | None = None) -> TeamConfig:
    """``defaults`` (the task's) with ``overrides`` applied, every value and the combination
    validated: ``ValueError`` naming the argument and what it accepts."""
    values = check_overrides(overrides, FIELDS, _check)
    cfg = dataclasses.replace(defaults or TeamConfig(), **values)
    if cfg.evader_max_speed > 1e3:
        raise ValueError(
            f"speed_ratio * pursuer_max_speed must be at most 1000 m/s, got "
            f"{cfg.evader_max_speed:g}"
        )
    check_arena_geometry(cfg)
    check_obstacles(cfg)
    for role in ("pursuer", "evader"):
        chosen = getattr(cfg, f"{role}_strategy")
        if isinstance(chosen, str) and chosen not in STRATEGIES[role]:
            raise ValueError(
                f"{role}_strategy {chosen!r} is not one of the {role}s' strategies: use one "
                f"of {', '.join(STRATEGIES[role])}, or a Strategy"
            )
    return cfg


def with_max_cycles(overrides: dict[str, Any], max_cycles: int | None) -> dict[str, Any]:
    """``overrides`` with PettingZoo's ``max_cycles`` as ``time_limit``; ``ValueError``
    naming ``max_cycles`` when it is out of range or disagrees with ``time_limit``."""
    return time_limit_alias(overrides, "max_cycles", max_cycles)


_DEFAULTS = TeamConfig()


def _param(cfg: Any, name: str) -> Any:
    """``cfg.name``, or the team default when ``cfg`` (a ``TaskConfig``) has no such field."""
    return getattr(cfg, name, getattr(_DEFAULTS, name))


# ----------------------------------------------------------------------- strategies
def flow_evader(cfg: Any) -> Strategy:
    """Wall avoidance, evade every pursuer in range, and the vortex flow field while no
    pursuer is in range (weighted truncated sum)."""
    threat_range = cfg.threat_range
    return Strategy(
        [
            Behavior(
                "wall_avoidance",
                cfg.wall_weight,
                feeler_length=_param(cfg, "evader_feeler_length"),
            ),
            *obstacle_avoidance(cfg),
            Behavior(
                "evade",
                cfg.evade_weight,
                target="each_opponent",
                threat_range=threat_range,
                prediction_time=cfg.max_prediction_time,
            ),
            Behavior(
                "flow_field",
                _param(cfg, "flow_weight"),
                target="arena_center",
                flow_radius=_param(cfg, "flow_radius"),
                flow_gain=_param(cfg, "flow_gain"),
                flow_clockwise=_param(cfg, "flow_clockwise"),
                active_beyond=threat_range,
            ),
        ],
        combination="weighted_sum",
        name="flow evader",
    )


def reynolds_pursuer(cfg: Any) -> Strategy:
    """The classic pursuer of :mod:`steer_env.tasks.pursuit_evasion` (wall avoidance,
    separation from teammates, pursuit with prediction), from a team config."""
    return Strategy(classic_pursuer(cfg).behaviors, "prioritized", name="reynolds pursuer")


def cooperative_pursuer(cfg: Any) -> Strategy:
    """Wall avoidance; offset pursuit spread over the team's bearings while farther than
    ``close_range``; then pursuit (prioritized). The offset is ``offset_distance`` behind
    the evader (in its frame: forward is its direction of motion, the world x axis while it
    stands still), rotated by ``2 pi rank / team_size`` by the engine (``offset_spread``,
    :func:`steer_env.engine.step.spread_rank`): ``team_size`` is 1 + the pursuer's
    teammates in the game and ``rank`` the number of them whose bearing from the evader it
    pursues comes before its own, counterclockwise from the evader's backward direction
    turned clockwise by half a slot (``pi / team_size``), ties broken by distance, then by
    position. Every pursuer observes every teammate, so each finds from its own observation
    the ranks the engine finds from the state (the roster index would not do: observations
    order teammates nearest first). The pursuers take the free bearings nearest to where
    they already are instead of crossing each other; the half-slot turn keeps a pursuer
    that holds its bearing away from the cut, where its rank would flip."""
    close = _param(cfg, "close_range")
    return Strategy(
        [
            Behavior("wall_avoidance", cfg.wall_weight, feeler_length=cfg.feeler_length),
            *obstacle_avoidance(cfg),
            Behavior(
                "offset_pursuit",
                cfg.pursuit_weight,
                offset_forward=-_param(cfg, "offset_distance"),
                offset_spread=True,
                active_beyond=close,
            ),
            Behavior("pursuit", cfg.pursuit_weight, prediction_time=cfg.max_prediction_time),
        ],
        combination="prioritized",
        name="cooperative pursuer",
    )


STRATEGIES["evader"].update(flow=flow_evader)
STRATEGIES["pursuer"].update(reynolds=reynolds_pursuer, cooperative=cooperative_pursuer)


# ----------------------------------------------------------------------- the task
@dataclass(frozen=True)
class TeamTask(TaskSpec, TeamInfos):
    """A multi-agent task of the registry (:data:`steer_env.tasks.TEAM_TASKS`).

    Attributes:
        name: short name.
        env_module: the PettingZoo module (``parallel_env``, ``env``, ``raw_env``,
            ``vector_env``).
        default_config: the task's defaults (keyword arguments override them).
        baselines: scripted teams per role, by name (the first is *the* classic one).
        metrics: what comparisons measure (a cross-play table) and the learned team's
            goal (``reference``: the scripted team a learned one must beat).
        training: defaults per trainer (:mod:`steer_env.tasks.training`).
        roles: the two roles in the cross-play table's order (rows, columns) and their
            words (:class:`~steer_env.tasks.protocol.Role`).
        learned_values: the ``learned`` configuration value for each set of learned
            roles (role names in table order).
    """

    name: str
    env_module: str
    default_config: TeamConfig
    baselines: dict[str, tuple[str, ...]]
    env_id: str | None = None
    metrics: Metrics = dataclasses.field(default_factory=lambda: Metrics("cross_play", "", ""))
    training: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    roles: tuple[Role, Role] = PURSUIT_ROLES
    learned_values: Mapping[tuple[str, ...], str] = dataclasses.field(
        default_factory=lambda: dict(LEARNED_VALUES)
    )

    def config(self, **overrides: Any) -> TeamConfig:
        return make_team_config(overrides, self.default_config)

    def check_agents(self, cfg: TeamConfig) -> None:
        if cfg.learned == "none":
            raise ValueError(
                'learned="none" leaves no agents: use "pursuers", "evaders" or "both" '
                "(scripted play runs on the engine's Batch directly)"
            )

    def why_not_an_agent(self, name: Any, cfg: TeamConfig) -> str:
        if name in self.agent_names(dataclasses.replace(cfg, learned="both")):
            return f"is scripted in this env (learned={cfg.learned!r})"
        return "is not an agent of this env"

    def baselines_of(self, role: str) -> dict[str, StrategyFactory]:
        """The scripted teams that can play ``role``, by name, the classic one first."""
        check_role(role, tuple(self.baselines), self.name)
        return {name: STRATEGIES[role][name] for name in self.baselines[role]}

    def is_success(self, captured: Any, role: str | None = None) -> Any:
        """Whether an episode in which every evader was (``captured``) or was not captured
        is a success for ``role`` (the pursuers by default): the pursuers' when they
        captured every evader, the evaders' otherwise (a bool, or an array of them)."""
        role = "pursuer" if role is None else role
        check_role(role, tuple(self.baselines), self.name)
        return captured == (role == "pursuer")

    # --- infos -----------------------------------------------------------------------
    def team_metrics(self, batch: Any) -> dict[str, Any]:
        """What every agent's info holds of the team in environment 0: evaders captured
        and left, and the step each evader was captured at (``(M,)`` int64, -1 while it
        plays)."""
        alive = batch.state.alive[0]
        evaders = batch.is_team("evader")
        left = int(np.count_nonzero(alive & evaders))
        return {
            "evaders_captured": int(np.count_nonzero(evaders)) - left,
            "evaders_left": left,
            "capture_steps": batch.state.capture_step[0][evaders].astype(np.int64),
        }

    def agent_infos(self, rows: Any, batch: Any) -> list[dict[str, Any]]:
        team = self.team_metrics(batch)
        if rows is None:
            distance = batch.nearest_opponent_distance()[0].tolist()
            return [team_agent_info(d, 0.0, 0.0, 0.0, False, 0, team) for d in distance]
        return [
            team_agent_info(
                row.distance,
                row.capture,
                row.escape,
                row.shaping,
                bool(row.captured),
                int(row.captures),
                team,
            )
            for row in rows
        ]

    def in_game(self, batch: Any) -> NDArray[np.bool_]:
        return batch.state.capture_step[:, batch.agent_index] < 0

    def vector_infos(self, result: Any, batch: Any) -> dict[str, Any]:
        evaders = batch.is_team("evader")
        evaders_left = np.count_nonzero(batch.state.alive[:, evaders], axis=1)
        capture_step = batch.state.capture_step[:, evaders].copy()
        if result is None:
            per_agent = (batch.num_envs, batch.n_agents)
            return {
                "in_game": self.in_game(batch),
                "distance": batch.nearest_opponent_distance(),
                "captured": np.zeros(per_agent, dtype=bool),
                "reward_capture": np.zeros(per_agent),
                "reward_escape": np.zeros(per_agent),
                "reward_shaping": np.zeros(per_agent),
                "done": np.zeros(batch.num_envs, dtype=bool),
                "captures": np.zeros(batch.num_envs, dtype=np.int64),
                "evaders_left": evaders_left,
                "capture_step": capture_step,
            }
        done = result.done.copy()
        return {
            "in_game": self.in_game(batch) & ~done[:, None],
            "distance": result.distance,
            "captured": result.captured,
            "reward_capture": result.reward_capture,
            "reward_escape": result.reward_escape,
            "reward_shaping": result.reward_shaping,
            "done": done,
            "captures": result.captures,
            "evaders_left": evaders_left,
            "capture_step": capture_step,
        }

    def agent_success(self, infos: Any, role: str) -> NDArray[np.bool_]:
        """A pursuer succeeds when its team captured every evader; an evader when it was
        not captured."""
        captured = infos["captured"]
        if role == "pursuer":
            every = (infos["capture_step"] >= 0).all(axis=1)
            captured = np.broadcast_to(every[:, None], captured.shape)
        return self.is_success(captured, role)

    def opponent_choice(self, cfg: TeamConfig) -> tuple[str, tuple[str, ...]] | None:
        """The first scripted role of ``cfg`` (``learned="pursuers"``: the evaders): its
        strategy's configuration value and the named strategies of the role; ``None``
        when every role is learned."""
        learned = next(k for k, v in self.learned_values.items() if v == cfg.learned)
        for role in self.roles:
            if role.name not in learned:
                return role.strategy_key, tuple(STRATEGIES[role.name])
        return None

    def strategy_of(self, role: str, cfg: TeamConfig) -> Strategy:
        """The scripted strategy of ``role`` (``"pursuer"``/``"evader"``) in ``cfg``."""
        chosen = getattr(cfg, f"{role}_strategy")
        return chosen if isinstance(chosen, Strategy) else STRATEGIES[role][chosen](cfg)

    def roster(self, cfg: TeamConfig) -> list[VehicleSpec]:
        """Pursuers first, then evaders; the learned roles have no strategy."""
        pursuer = VehicleSpec(
            team="pursuer",
            strategy=None if cfg.learned_pursuers else self.strategy_of("pursuer", cfg),
            mass=cfg.mass,
            max_speed=cfg.pursuer_max_speed,
            max_force=cfg.pursuer_max_force,
            radius=cfg.vehicle_radius,
        )
        evader = VehicleSpec(
            team="evader",
            strategy=None if cfg.learned_evaders else self.strategy_of("evader", cfg),
            mass=cfg.mass,
            max_speed=cfg.evader_max_speed,
            max_force=cfg.evader_max_force,
            radius=cfg.vehicle_radius,
        )
        return [pursuer] * cfg.n_pursuers + [evader] * cfg.n_evaders

    def world(self, cfg: TeamConfig) -> World:
        """Episode end when every evader is captured or at the time limit. Every agent of
        either role has the same observation length, whichever roles are learned (so a
        policy trained against a script also acts against a learned opponent): teammate
        slots ``max(N, M) - 1``, opponent slots ``max(N, M)``; slots beyond a role's
        teammates or opponents are flagged absent."""
        largest = max(cfg.n_pursuers, cfg.n_evaders)
        teammates, opponents = largest - 1, largest
        return World(
            dt=cfg.dt,
            arena_size=cfg.arena_size,
            capture_radius=cfg.capture_radius,
            time_limit=cfg.time_limit,
            end_on_first_capture=False,
            shaping=cfg.reward_shaping,
            shaping_scale=cfg.shaping_scale,
            shaping_gamma=cfg.shaping_gamma,
            observed_teammates=teammates,
            observed_opponents=opponents,
            start_margin=cfg.vehicle_radius,
            min_start_distance=cfg.min_start_distance,
            capture_reward=cfg.capture_reward,
            escape_reward=cfg.escape_reward,
            obstacles=cfg.obstacle_field(),
        )

    def agent_names(self, cfg: TeamConfig) -> list[str]:
        """Names of the learned agents in roster order: ``pursuer_i``, then ``evader_j``."""
        names = []
        if cfg.learned_pursuers:
            names += [f"pursuer_{i}" for i in range(cfg.n_pursuers)]
        if cfg.learned_evaders:
            names += [f"evader_{j}" for j in range(cfg.n_evaders)]
        return names


TEAM_PURSUIT = register(
    TeamTask(
        name="team_pursuit",
        env_module="steer_env.envs.team_pursuit_v0",
        default_config=TeamConfig(),
        baselines={"pursuer": ("reynolds", "cooperative"), "evader": ("flow",)},
        roles=PURSUIT_ROLES,
        learned_values=LEARNED_VALUES,
        # The goal of a learned pursuer team against the classic evader: a capture rate of
        # at least 95% (Wilson lower bound 90%), 20 points above the cooperative team.
        metrics=Metrics(
            "cross_play",
            success_means="every evader captured by the time limit",
            time_means="time to capture",
            goal={
                "capture_rate": 0.95,
                "wilson_lower": 0.90,
                "reference": "cooperative",
                "points_above_reference": 0.20,
            },
            labels={"rate": "capture", "title": "team pursuit"},
        ),
        # The RLlib sub-envs are each a PettingZoo env (RLlib vectorizes multi-agent envs
        # with a Python loop), so fewer of them; fragments longer than the 200-step episode.
        training=training.table(
            ppo=training.defaults(1_000_000, 16, training.SB3_PPO),
            sac=training.defaults(50_000, 4, training.SB3_SAC),
            rllib_ppo=training.defaults(
                1_000_000, 8, {**training.RLLIB_PPO, "rollout_fragment_length": 256}
            ),
        ),
    )
)
