"""The task protocol: what every task of the registry provides, one learned agent or a team.

A task is its rules package (:mod:`steer_env.rules`) plus one registry entry, an object of
a :class:`TaskSpec` subclass that says:

* **who plays**: the roster (:meth:`TaskSpec.roster`: every vehicle, its team and
  limits, learned or running a strategy) and the learned agents' names
  (:meth:`TaskSpec.agent_names`);
* **how it is configured**: :meth:`TaskSpec.config` validates keyword arguments into the
  task's config dataclass (``ValueError`` naming the argument and what it accepts);
* **the world**: :meth:`TaskSpec.world`, the rules' parameters, which names the rules;
* **the front ends it has**: ``env_id`` (a Gymnasium id with one learned agent) and
  ``env_module`` (a PettingZoo module, ``parallel_env`` / ``env`` / ``vector_env``);
* **its baselines**: scripted strategies per role (:meth:`TaskSpec.baselines_of`), the
  first of each role being *the* classic one;
* **its success rule**: :meth:`TaskSpec.is_success` of an episode's outcome;
* **its metrics**: ``metrics`` (:class:`Metrics`), how ``agents.compare`` lays out its
  comparison, what its success and its time mean, and the goal of a learned side;
* **its training defaults**: ``training``, per trainer (``ppo``, ``sac``, ``rllib-ppo``)
  the budget, the envs stepped together and the hyperparameters
  (:mod:`steer_env.tasks.training`);
* **its infos**, the same keys from reset on: a single-agent task builds the Gymnasium
  env's (:meth:`SingleAgentInfos.reset_info`, :meth:`~SingleAgentInfos.step_info`, Python
  scalars), the native vector env's (``(num_envs,)`` arrays) and the outcome the SB3
  adapter reports on final steps; a team task builds each agent's infos in the PettingZoo
  env and the batched infos of its native vector env.

Front ends and commands read these; none of them branches on a task's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Strategy

#: Builds a scripted :class:`Strategy` from a task config.
StrategyFactory = Callable[[Any], Strategy]


@dataclass(frozen=True)
class Metrics:
    """What a comparison of the task measures and how it reports it.

    Attributes:
        layout: the comparison's layout: ``"agents"`` (one row per agent of the learned
            role, the learned one and the role's baselines, each against the task's
            scripted opponents; paired differences learned - each baseline) or
            ``"cross_play"`` (every side of one role, scripted or learned, against every
            side of the other; paired differences of each learned side with each
            scripted side of its role).
        success_means: what a success is, in words.
        time_means: what the measured time is (restricted at the time limit).
        goal: the goal of a learned side, as the layout reads it (its criterion and
            thresholds).
        labels: words of the layout's tables and plots: ``rate`` (the success rate's
            column, "capture"), ``achieved`` (a success in the plot's legend, "captured"),
            ``curve`` (the survival plot's y axis), ``title``, and an episode's outcome
            as ``agents.render`` prints it: ``event`` (the timed event, "captured") and
            ``no_event`` (without it, "no capture").
        time_key: the info key of the step of success at episode end, -1 without one
            (``capture_step``, ``pen_step``).
        outcomes: info keys of further per-episode outcomes (numbers at episode end) that
            the comparison averages per agent, with 95% intervals.
    """

    layout: str
    success_means: str
    time_means: str
    goal: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    time_key: str = "capture_step"
    outcomes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Role:
    """One role of a task whose comparison is the cross-play table (``metrics.layout``
    ``"cross_play"``), and the words its tables, files and captions use for it.

    Attributes:
        name: the role as the engine's team and a model's metadata name it (``"pursuer"``).
        plural: the role's agents (``"pursuers"``): a learned side's label (``"learned
            pursuers"``).
        side_word: the word after a scripted side's name in the tables (``"reynolds
            pursuers"``, ``"flow evader"``); also the key of the role's side in each cell
            and the column of ``comparison.csv`` / ``episodes.csv``.
        sides_key: the key of the role's sides (name -> label) in ``comparison.json``
            (``"pursuer_teams"``).
        strategy_key: the configuration value naming the role's scripted strategy
            (``"pursuer_strategy"``).
        count_key: the configuration value of how many agents play the role
            (``"n_pursuers"``).
        caption: an episode's caption of a scripted side, ``{}`` its name (``"{} team"``).
        learned_caption: an episode's caption of a learned side (``"learned team"``).
    """

    name: str
    plural: str
    side_word: str
    sides_key: str
    strategy_key: str
    count_key: str
    caption: str = "{}"
    learned_caption: str = "learned"


class TaskSpec(ABC):
    """The protocol every registered task implements (see the module docstring)."""

    #: Short name, accepted by every command's ``--env``.
    name: str
    #: The Gymnasium id of the task's single-agent form (``None``: it has none).
    env_id: str | None
    #: The PettingZoo module of the task's multi-agent form (``None``: it has none).
    env_module: str | None
    #: What comparisons measure and how they report it.
    metrics: Metrics
    #: Training defaults per trainer name: ``{"timesteps", "n_envs", "hyperparameters"}``
    #: (:func:`steer_env.tasks.training.defaults`).
    training: Mapping[str, Mapping[str, Any]]
    #: The config value that sets how many agents play the learned role (``None``: one
    #: always); the commands play a configuration with several in the PettingZoo form, one
    #: policy shared by every agent of the role.
    agent_count: str | None = None

    @abstractmethod
    def config(self, **overrides: Any) -> Any:
        """The task's defaults with ``overrides`` applied, validated."""

    @abstractmethod
    def roster(self, cfg: Any) -> list[VehicleSpec]:
        """The vehicles of one environment, learned agents without a strategy."""

    @abstractmethod
    def world(self, cfg: Any) -> Any:
        """The rules' parameters of ``cfg`` (its ``rules`` attribute names the rules)."""

    @abstractmethod
    def agent_names(self, cfg: Any) -> list[str]:
        """Names of the learned agents of ``cfg``, in roster order."""

    @abstractmethod
    def baselines_of(self, role: str) -> Mapping[str, StrategyFactory]:
        """The scripted strategies that can play ``role`` in comparisons, by name, the
        classic one first (``ValueError`` listing the roles for an unknown one)."""

    @abstractmethod
    def is_success(self, outcome: Any, role: str | None = None) -> Any:
        """Whether an episode with ``outcome`` (the rules' end-of-episode value, a scalar
        or an array of them) is a success for ``role`` (by default the learned side's)."""

    def shared_baselines(self) -> Mapping[str, Any]:
        """The scripted policies that play every agent of the learned role when a
        configuration has several (:attr:`agent_count` above 1; each agent runs the policy
        on its own observation), by name, the classic one first; built by
        :meth:`scripted_policy`. Empty: the task has none."""
        return {}

    def scripted_policy(self, name: str, cfg: Any = None, seed: Any = 0) -> Any:
        """A baseline that is not a :class:`Strategy` of the engine (a task's own policy
        with ``predict``), or ``None`` when the task's baselines are strategies (played
        from observations by ``agents.evaluation.scripted.ScriptedPolicy``)."""
        return None

    def opponent_choice(self, cfg: Any) -> tuple[str, tuple[str, ...]] | None:
        """The scripted side a player of ``cfg`` can pick by name: the configuration value
        that names its strategy and the names it accepts; ``None`` when the task offers no
        choice (its scripted agents are fixed, or none is scripted)."""
        return None

    def check_agents(self, cfg: Any) -> None:
        """``ValueError`` when ``cfg`` leaves no learned agent (a front end has nobody to
        step)."""
        if not self.agent_names(cfg):
            raise ValueError(f"{self.name}: this configuration has no learned agents")

    def why_not_an_agent(self, name: Any, cfg: Any) -> str:
        """Why ``name`` is not one of the learned agents of ``cfg``, for error messages."""
        return "is not an agent of this env"

    @property
    def rules(self) -> ModuleType:
        """The task's rules package (as the world of its default config names it)."""
        return self.world(self.config()).rules


def scalar(x: Any) -> Any:
    """``x`` as a Python scalar (a numpy scalar's ``item()``), as the single env's infos
    report values."""
    return x.item() if hasattr(x, "item") else x


def first_env_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """The single env's info from batched infos: each value's environment 0, as a Python
    scalar."""
    return {key: scalar(np.asarray(value)[0]) for key, value in info.items()}


def check_role(role: str, roles: tuple[str, ...], task: str) -> None:
    """``ValueError`` naming ``role`` unless it is one of ``roles`` of ``task``."""
    if role not in roles:
        raise ValueError(f"role must be one of {', '.join(roles)} for {task}, got {role!r}")


class SingleAgentInfos(ABC):
    """The infos of a task's single-agent front ends (the Gymnasium env, the native
    vector env, the SB3 adapter), built from the step's decoded results
    (:class:`~steer_env.engine.batch.StepResult`) and the batch's state."""

    @abstractmethod
    def reset_info(self, batch: Any) -> dict[str, Any]:
        """The single env's info after a reset (Python scalars)."""

    @abstractmethod
    def step_info(self, row: Any, batch: Any) -> dict[str, Any]:
        """The single env's info after a step whose decoded results are ``row``
        (:meth:`StepResult.row`); the outcome keys count when ``row.done``."""

    @abstractmethod
    def vector_reset_info(self, batch: Any) -> dict[str, Any]:
        """The native vector env's infos after a reset, ``(num_envs,)`` arrays."""

    @abstractmethod
    def vector_step_info(self, result: Any, batch: Any, ended: Any) -> dict[str, Any]:
        """The native vector env's infos after a step, ``(num_envs,)`` arrays; the outcome
        keys count in the environments where ``ended``."""

    @abstractmethod
    def final_info(self, result: Any, batch: Any, envs: Any) -> list[dict[str, Any]]:
        """For each environment of ``envs`` whose episode ended on this step, what the SB3
        adapter adds to its final info (``is_success`` and the task's outcome keys)."""


class TeamInfos(ABC):
    """The infos of a team task's front ends: per agent in the PettingZoo env, batched in
    its native vector env."""

    @abstractmethod
    def agent_infos(self, rows: Any, batch: Any) -> list[dict[str, Any]]:
        """The PettingZoo env's info of each learned agent of environment 0, the same keys
        always: after a step, one per decoded row (:meth:`StepResult.row`) of ``rows``;
        after a reset (``rows`` None), one per learned agent."""

    @abstractmethod
    def in_game(self, batch: Any) -> Any:
        """``(E, k)``: whether each learned agent still plays in its current episode."""

    @abstractmethod
    def vector_infos(self, result: Any, batch: Any) -> dict[str, Any]:
        """The native vector env's infos after a step (``result`` None: after a reset)."""

    @abstractmethod
    def agent_success(self, infos: Any, role: str) -> Any:
        """``(E, k)``: from the native vector env's ``infos`` of a step, whether each agent
        playing ``role`` succeeded, for the agents whose episode ended on it."""


class SharedOutcomeInfos(SingleAgentInfos, TeamInfos):
    """The team infos of a task whose learned agents share their environment's outcome
    and play until its episode ends (nobody leaves before): every agent's info is the
    single env's (:class:`SingleAgentInfos`), and the batched infos are the native vector
    env's with ``in_game`` and ``done``. Pursuit and Evasion (one learned agent) and
    herding (one or several dogs) are such tasks."""

    #: The role of the learned agents.
    learned_team: str

    @abstractmethod
    def vector_agent_info(self, result: Any, batch: Any) -> dict[str, Any]:
        """The infos that are each learned agent's own (its reward terms, what it measured),
        ``(num_envs, k)`` arrays, after a step whose decoded results are ``result`` (None:
        after a reset). The single-agent front ends report agent 0's column, the batched
        team form every agent's."""

    def agent_infos(self, rows: Any, batch: Any) -> list[dict[str, Any]]:
        if rows is None:
            info = self.reset_info(batch)
            return [dict(info) for _ in range(batch.n_agents)]
        return [self.step_info(row, batch) for row in rows]

    def in_game(self, batch: Any) -> Any:
        return np.ones((batch.num_envs, batch.n_agents), dtype=bool)

    def vector_infos(self, result: Any, batch: Any) -> dict[str, Any]:
        """The native vector env's infos: those of the environment ``(E,)`` (its outcome),
        each agent's own ``(E, k)`` (:meth:`vector_agent_info`: the values the
        PettingZoo env gives each agent), plus ``in_game`` ``(E, k)`` and ``done``
        ``(E,)``."""
        if result is None:
            info = self.vector_reset_info(batch)
            done = np.zeros(batch.num_envs, dtype=bool)
        else:
            done = result.done.copy()
            info = self.vector_step_info(result, batch, done)
        return {
            **info,
            **self.vector_agent_info(result, batch),
            "in_game": self.in_game(batch) & ~done[:, None],
            "done": done,
        }

    def agent_success(self, infos: Any, role: str) -> Any:
        """Every agent of the learned role succeeds with its environment's outcome."""
        check_role(role, (self.learned_team,), getattr(self, "name", ""))
        success = np.asarray(infos["is_success"])
        return np.broadcast_to(success[:, None], infos["in_game"].shape)


class RewardTermInfos(SharedOutcomeInfos):
    """:class:`SharedOutcomeInfos` of a task whose step results are its rules' records: the
    environment's fields are ``ENV_RESULT``'s, each learned agent's reward terms
    ``REWARD_TERMS`` (``reward_<term>`` in the decoded results), as in the crowd and
    flocking tasks. The task names its rules package (``rules_package``), the keys its
    final info keeps (``final_keys``), its fields after a reset (:meth:`_reset_fields`) and
    how the fields make its info (:meth:`_info`)."""

    #: The task's rules package (:mod:`steer_env.rules`): its ``ENV_RESULT`` and
    #: ``REWARD_TERMS``.
    rules_package: ModuleType
    #: The keys of the info the SB3 adapter adds at an episode's end.
    final_keys: tuple[str, ...]

    @abstractmethod
    def _reset_fields(self, batch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The environment's fields and agent 0's reward terms after a reset, ``(E,)``."""

    @abstractmethod
    def _info(self, env: Mapping[str, Any], rewards: Mapping[str, Any], ended: Any) -> dict:
        """The info of the environment fields ``env`` and reward terms ``rewards``; the
        outcome keys count where ``ended``."""

    def reset_info(self, batch: Any) -> dict[str, Any]:
        env, rewards = self._reset_fields(batch)
        return first_env_info(self._info(env, rewards, np.zeros(1, dtype=bool)))

    def step_info(self, row: Any, batch: Any) -> dict[str, Any]:
        rules = self.rules_package
        env = {name: np.asarray([getattr(row, name)]) for name in rules.ENV_RESULT.names}
        rewards = {term: np.asarray([getattr(row, term)]) for term in rules.REWARD_TERMS}
        return first_env_info(self._info(env, rewards, np.asarray([row.done])))

    def vector_agent_info(self, result: Any, batch: Any) -> dict[str, Any]:
        """Each learned agent's reward terms, ``(E, k)``."""
        terms = self.rules_package.REWARD_TERMS
        if result is None:
            zeros = np.zeros((batch.num_envs, batch.n_agents))
            return {f"reward_{term}": zeros.copy() for term in terms}
        return {f"reward_{term}": getattr(result, f"reward_{term}") for term in terms}

    def vector_reset_info(self, batch: Any) -> dict[str, Any]:
        env, rewards = self._reset_fields(batch)
        return self._info(env, rewards, np.zeros(batch.num_envs, dtype=bool))

    def vector_step_info(self, result: Any, batch: Any, ended: Any) -> dict[str, Any]:
        rules = self.rules_package
        env = {name: getattr(result, name) for name in rules.ENV_RESULT.names}
        agent = self.vector_agent_info(result, batch)
        rewards = {term: agent[f"reward_{term}"][:, 0] for term in rules.REWARD_TERMS}
        return self._info(env, rewards, ended)

    def final_info(self, result: Any, batch: Any, envs: Any) -> list[dict[str, Any]]:
        info = self.vector_step_info(result, batch, result.done)
        keys = self.final_keys
        return [{key: scalar(info[key][e]) for key in keys} for e in np.asarray(envs).tolist()]
