"""Several learned agents of one role sharing one policy, in a task of the ``"agents"``
comparison layout (a learned role against scripted opponents).

A task such as herding has one learned role whose number of agents is a value of its
configuration (``n_dogs``). With one agent the commands play its Gymnasium form; with
several (:func:`learned_agents` above 1), they play its PettingZoo form's native batch
(the registry entry's ``env_module``, ``vector_env(num_envs, **config)``) and every
agent of the role acts with the same policy, each from its own observation
(:class:`EveryAgent`): ``train.py`` trains that policy on one SB3 slot per agent
(:class:`steer_env.envs.sb3.TeamSB3VecEnv`) and ``agents.compare`` plays it, and the
task's scripted policies for several agents, on paired seeds (:class:`AgentsBatch`).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.evaluation.policy_base import UsageError
from steer_env.tasks import REGISTRY


def task_named(env: str) -> Any:
    """The registry's task named by ``env`` (its name or env id); :class:`UsageError`
    naming the tasks otherwise."""
    for task in REGISTRY.values():
        if env in (task.name, task.env_id):
            return task
    raise UsageError(f"unknown env {env!r}: use one of {', '.join(REGISTRY)}")


def learned_agents(env: str, config: dict[str, Any] | None = None) -> int:
    """How many learned agents the task ``env`` has with the configuration ``config``
    (``--set`` values; ``ValueError`` from the task for a bad one)."""
    task = task_named(env)
    return len(task.agent_names(task.config(**(config or {}))))


def several_agents(env: str, config: dict[str, Any] | None = None) -> bool:
    """Whether ``config`` gives the task ``env`` of the ``"agents"`` layout more than one
    learned agent, so that the commands play its PettingZoo batch with one shared policy
    (:class:`UsageError` when the task has no PettingZoo form to play them in)."""
    task = task_named(env)
    if task.metrics.layout != "agents" or learned_agents(env, config) <= 1:
        return False
    if task.env_module is None:
        raise UsageError(
            f"{task.name} with {config} has several learned agents but no PettingZoo form "
            "to play them in"
        )
    return True


def single_config(env: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """``config`` with one learned agent: the task's ``agent_count`` field (the config
    value that sets how many agents play the learned role) set to 1; :class:`UsageError`
    for a task without one."""
    task = task_named(env)
    field = getattr(task, "agent_count", None)
    if field is None:
        raise UsageError(f"{task.name} has no configuration value for its number of agents")
    return {**(config or {}), field: 1}


def team_batch(env: str, num_envs: int, config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """The native batch of ``num_envs`` environments of the task ``env``'s PettingZoo form
    (``env_module.vector_env``) with ``config`` (``kwargs``: ``render_mode``)."""
    task = task_named(env)
    module = importlib.import_module(task.env_module)
    try:
        return module.vector_env(num_envs, **(config or {}), **kwargs)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad env arguments: {' '.join(str(exc).split())}") from None


def baseline_names(env: str) -> tuple[str, ...]:
    """The task's scripted policies for several agents of its learned role, the classic
    one first (:meth:`~steer_env.tasks.protocol.TaskSpec.shared_baselines`);
    :class:`UsageError` when it has none."""
    task = task_named(env)
    names = tuple(task.shared_baselines())
    if not names:
        raise UsageError(f"{task.name} has no scripted policies for several agents")
    return names


def agent_name(name: str, env: str) -> str:
    """``learned`` or a name of :func:`baseline_names` (``classic``: the first) for the
    agent ``name`` of several agents of the task ``env``; :class:`UsageError` naming the
    accepted names otherwise."""
    names = baseline_names(env)
    key = str(name).strip().lower()
    key = names[0] if key == "classic" else key
    if key != "learned" and key not in names:
        raise UsageError(
            f"unknown agent {name!r} for several {task_named(env).learned_team}s: use "
            f"learned, {', '.join(names)}"
        )
    return key


def scripted_team(name: str, env: str, config: Any, seed: int | None = 0) -> EveryAgent:
    """The scripted policy ``name`` (:func:`agent_name`) acting for every agent of a batch
    of the task ``env`` with the config object ``config``."""
    key = agent_name(name, env)
    if key == "learned":
        raise UsageError("'learned' is not a scripted agent")
    task = task_named(env)
    policy = task.scripted_policy(key, config, seed)
    if policy is None:  # a strategy of the engine, played from each agent's observation
        from agents.evaluation.scripted import ScriptedPolicy

        policy = ScriptedPolicy(task, key, config, seed)
    return EveryAgent(policy)


def label(name: str, env: str, policy: Any = None) -> str:
    """A row's label when several agents play each side: ``learned dogs (PPO)``,
    ``strombom dogs``, ``single learned dog (PPO)`` (``single``: one learned agent)."""
    role = task_named(env).learned_team
    algo = str(getattr(policy, "algo", "") or "").upper()
    suffix = f" ({algo})" if algo else ""
    if name == "learned":
        return f"learned {role}s{suffix}"
    if name == SINGLE:
        return f"single learned {role}{suffix}"
    return f"{name} {role}s"


#: The row of a model trained with one learned agent, played alone (the target of
#: several shared-policy agents).
SINGLE = "single"


class EveryAgent:
    """The policy ``policy`` acting for every agent of a batch: ``predict`` takes
    observations ``(E, k, obs_dim)`` and returns actions ``(E, k, 2)``, each agent's from
    its own observation row (parameter sharing). A policy whose ``agent_axis`` is true
    (:class:`~agents.evaluation.scripted.ScriptedPolicy`, whose random streams are per
    environment and agent) gets the observations as they are; others one row per agent."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def predict(
        self,
        observation: NDArray[np.floating],
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        obs = np.asarray(observation)
        rows = obs if getattr(self.policy, "agent_axis", False) else obs.reshape(-1, obs.shape[-1])
        action, _ = self.policy.predict(rows, deterministic=deterministic)
        return np.asarray(action, dtype=np.float32).reshape(*obs.shape[:-1], 2), None


class AgentsBatch:
    """The task's PettingZoo batch with the Gymnasium vector env's episode interface that
    :func:`agents.evaluation.compare.play_episodes` reads: ``reset(seed)`` (environment
    ``i`` from ``seed + i``), ``step(actions (E, k, 2))`` returning per-environment
    ``terminated`` (the episode ended) and ``truncated`` (never) and the batch's infos,
    whose ``is_success``, the task's ``metrics.time_key`` and ``metrics.outcomes`` are
    per-environment arrays. ``unwrapped`` is itself; ``config`` and ``task`` the batch's."""

    def __init__(
        self,
        env: str,
        num_envs: int,
        config: dict[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.venv = team_batch(env, num_envs, config, render_mode=render_mode)
        self.unwrapped = self
        self.task = self.venv.task
        self.config = self.venv.config
        self.num_envs = self.venv.num_envs

    def reset(self, seed: int | None = None) -> tuple[NDArray[np.float32], dict[str, Any]]:
        return self.venv.reset(seed=seed)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, _, _, info = self.venv.step(actions)
        done = np.asarray(info["done"], dtype=bool)
        return obs, rewards, done, np.zeros_like(done), info

    def close(self) -> None:
        self.venv.close()
