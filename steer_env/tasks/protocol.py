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
* **its success rule**: :meth:`TaskSpec.is_success` of an episode's outcome.

Front ends and commands read these; none of them branches on a task's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from steer_env.engine.batch import VehicleSpec
from steer_env.engine.strategy import Strategy

#: Builds a scripted :class:`Strategy` from a task config.
StrategyFactory = Callable[[Any], Strategy]


class TaskSpec(ABC):
    """The protocol every registered task implements (see the module docstring)."""

    #: Short name, accepted by every command's ``--env``.
    name: str
    #: The Gymnasium id of the task's single-agent form (``None``: it has none).
    env_id: str | None
    #: The PettingZoo module of the task's multi-agent form (``None``: it has none).
    env_module: str | None

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
    def is_success(self, outcome: Any) -> Any:
        """Whether an episode with ``outcome`` (the rules' end-of-episode value, a scalar
        or an array of them) is a success for the learned side."""

    @property
    def rules(self) -> ModuleType:
        """The task's rules package (as the world of its default config names it)."""
        return self.world(self.config()).rules


def check_role(role: str, roles: tuple[str, ...], task: str) -> None:
    """``ValueError`` naming ``role`` unless it is one of ``roles`` of ``task``."""
    if role not in roles:
        raise ValueError(f"role must be one of {', '.join(roles)} for {task}, got {role!r}")
