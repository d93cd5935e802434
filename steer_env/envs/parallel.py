"""The PettingZoo front end of every task: :class:`TaskParallelEnv`, its AEC form, the
errors it raises, and :func:`module_functions`, the functions a task's PettingZoo module
(:mod:`steer_env.envs.team_pursuit_v0`) exports once it has bound the env classes to its
task and documented them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from steer_env.engine.batch import Batch
from steer_env.envs import streams
from steer_env.envs.base import (
    RENDER_FPS,
    module_name,
    validate_actions,
    validate_render_mode,
    validate_seed,
)
from steer_env.tasks import TaskSpec
from steer_env.tasks.config import check_overrides, time_limit_alias


class TaskParallelEnv(ParallelEnv):
    """A PettingZoo ``ParallelEnv`` of a team task (the class attribute ``task``, or the
    ``task`` argument): one engine :class:`~steer_env.engine.batch.Batch` of one
    environment, whose learned agents are the task's :meth:`agent_names`; this class only
    maps dicts to arrays and back, and every info comes from the task
    (:class:`~steer_env.tasks.protocol.TeamInfos`). Each task's PettingZoo module
    (``team_pursuit_v0``) subclasses it with its docstring and factories."""

    #: The task played when no ``task`` argument is given (set by each task's module).
    task: TaskSpec

    metadata = {  # noqa: RUF012 (PettingZoo reads it as a plain class attribute)
        "name": "",  # the task's module name, set per instance
        "render_modes": ["human", "rgb_array"],
        "render_fps": RENDER_FPS,
        "is_parallelizable": True,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        task: TaskSpec | None = None,
        **kwargs: Any,
    ) -> None:
        if task is not None:
            self.task = task
        self.metadata = {**self.metadata, "name": module_name(self.task)}
        self.config: Any = self.task.config(**time_limit_alias(kwargs, "max_cycles", max_cycles))
        self.task.check_agents(self.config)
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.batch = Batch(
            self.task.roster(self.config), self.task.world(self.config), 1, specialise=True
        )
        self.possible_agents: list[str] = self.task.agent_names(self.config)
        self.agents: list[str] = []
        self._index = {name: a for a, name in enumerate(self.possible_agents)}
        # One space object per agent, returned on every call (PettingZoo seeds them).
        self._action_spaces = {
            name: spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
            for name in self.possible_agents
        }
        self._observation_spaces = {
            name: spaces.Box(*self.batch.observation_bounds, dtype=np.float32)
            for name in self.possible_agents
        }
        self._state_space = _state_space(self.batch, self.config.half_size)
        self._keyed = False
        # The renderer and trails (pygame is imported by the first frame, not here).
        self._scenes = None
        if render_mode is not None:
            from steer_env.envs.scene import Scenes

            title = f"steer-env {self.metadata['name']}"
            fps = self.metadata["render_fps"]
            self._scenes = Scenes(self.batch, self.config, render_mode, title, fps)

    # --- spaces -----------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Box:
        return self._observation_spaces[self._agent_name(agent)]

    def action_space(self, agent: str) -> spaces.Box:
        return self._action_spaces[self._agent_name(agent)]

    def _agent_name(self, agent: Any) -> str:
        """``agent`` if it is one of :attr:`possible_agents`, else :class:`UnknownAgentError`
        saying what it is and listing them."""
        if isinstance(agent, str) and agent in self._index:
            return agent
        why = self.task.why_not_an_agent(agent, self.config)
        raise UnknownAgentError(f"{agent!r} {why}; possible agents: {self.possible_agents}")

    @property
    def state_space(self) -> spaces.Box:
        """The space of :meth:`state`: per vehicle (pursuers, then evaders) its position in
        the arena (m), its velocity within its max speed (m/s) and its in-game flag."""
        return self._state_space

    # --- API ----------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, NDArray[np.float32]], dict[str, dict[str, Any]]]:
        """Start an episode. A ``seed`` (any non-negative int) keys the episode stream;
        later unseeded resets continue it; the first reset without a seed draws a key
        from the OS."""
        keys = None
        if seed is not None:
            keys = streams.key_from_seed(validate_seed(seed))
        elif not self._keyed:
            keys = streams.key_from_generator(np.random.default_rng())
        obs = self.batch.reset(None, keys)
        self._keyed = True
        self.agents = list(self.possible_agents)
        infos = dict(
            zip(self.possible_agents, self.task.agent_infos(None, self.batch), strict=True)
        )
        if self._scenes is not None:
            self._scenes.restart((0,))
        if self.render_mode == "human":
            self.render()
        return {name: obs[0, a].copy() for name, a in self._index.items()}, infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Advance one step with an action for every agent in :attr:`agents`. Actions for
        agents that have left the game are ignored, whatever they hold; after the episode
        has ended (``agents`` empty) a step returns empty dicts."""
        if not self._keyed:
            raise RuntimeError("call reset() before step()")
        act = self._actions_array(actions)
        if not self.agents:
            return {}, {}, {}, {}, {}
        # The batch's own action buffer and result buffers: its single-environment step
        # (bound once to the compiled step); what is kept is copied or decoded below.
        self.batch.action_buffer[...] = act
        result = self.batch.step(self.batch.action_buffer, reuse=True)
        live = self.agents
        obs, rewards, terminations, truncations = {}, {}, {}, {}
        rows = [result.row(0, self._index[name]) for name in live]
        for name, row in zip(live, rows, strict=True):
            a = self._index[name]
            obs[name] = result.observation[0, a].copy()
            rewards[name] = row.reward
            terminations[name] = bool(row.terminated)
            truncations[name] = False
        infos = dict(zip(live, self.task.agent_infos(rows, self.batch), strict=True))
        # Agents that left the game (captured, or everyone at the end) leave ``agents``.
        self.agents = [name for name in live if not terminations[name]]
        if self._scenes is not None:
            self._scenes.push()
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def _actions_array(self, actions: dict[str, Any]) -> NDArray[np.float64]:
        """``(1, k, 2)`` actions from the dict; departed agents' rows stay zero (the engine
        ignores vehicles out of the game), whatever the dict holds for them, as the native
        batch does (batched wrappers such as TorchRL's send an action for every agent).
        Everything is checked before anything moves."""
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict of agent name -> action, got {actions!r}")
        for name in actions:
            if name not in self._index:
                raise ValueError(
                    f"action for {name!r}: that is not an agent; possible agents: "
                    f"{self.possible_agents}"
                )
        out = np.zeros((1, len(self.possible_agents), 2))
        for name in self.agents:
            if name not in actions:
                raise ValueError(f"no action for agent {name!r}; agents: {self.agents}")
            out[0, self._index[name]] = validate_actions(
                actions[name], (2,), name=f"action of {name!r}"
            )
        return out

    def state(self) -> NDArray[np.float32]:
        """The global state: positions, velocities (m, m/s) and in-game flags of every
        vehicle, ``(n, 5)`` flattened, float32 (unnormalised)."""
        s = self.batch.state
        return (
            np.concatenate(
                [s.position[0], s.velocity[0], s.alive[0, :, None].astype(np.float64)], axis=1
            )
            .astype(np.float32)
            .ravel()
        )

    def render(self) -> NDArray[np.uint8] | None:
        """A frame of the arena (``rgb_array``: ``(600, 600, 3)`` uint8), or draw it in a
        window (``human``); ``None`` and a warning without a render mode."""
        if not self._keyed:
            raise RuntimeError("call reset() before render()")
        if self.render_mode is None:
            import warnings

            warnings.warn(
                "render() called without a render_mode: pass render_mode='rgb_array' or "
                "'human' to parallel_env()",
                stacklevel=2,
            )
            return None
        return self._scenes.frame(0)

    def close(self) -> None:
        if self._scenes is not None:
            self._scenes.close()


class UnknownAgentError(KeyError, ValueError):
    """A name that is not one of the env's agents (a ``KeyError``, as a dict of spaces
    would raise, and a ``ValueError``, as every other bad argument here)."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


def _state_space(batch: Batch, half_size: float) -> spaces.Box:
    """Bounds of ``state()``: ``(n, 5)`` rows of position (the arena), velocity (each
    vehicle's max speed) and the in-game flag, flattened."""
    speed = batch.vehicles["max_speed"][:, None]
    n = batch.n_vehicles
    low = np.concatenate([np.full((n, 2), -half_size), -speed, -speed, np.zeros((n, 1))], axis=1)
    high = np.concatenate([np.full((n, 2), half_size), speed, speed, np.ones((n, 1))], axis=1)
    return spaces.Box(low.ravel().astype(np.float32), high.ravel().astype(np.float32))


class AECForm(parallel_to_aec_wrapper):
    """PettingZoo's AEC form of the parallel env, saying what to do when stepped before
    ``reset()`` instead of failing on a missing attribute, and checking each agent's action
    on its own turn: a bad one is refused naming that agent, and the turn stays its own,
    instead of surfacing when the last agent acts and blocking every later turn."""

    def step(self, action: Any) -> None:
        if not hasattr(self, "agent_selection"):
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            validate_actions(action, self.action_space(agent).shape, name=f"action of {agent!r}")
        super().step(action)


def accepted(task: TaskSpec) -> tuple[str, ...]:
    """The keyword arguments of a task's PettingZoo module functions: its config's fields,
    ``render_mode`` and ``max_cycles``."""
    return (*(f.name for f in dataclasses.fields(task.config())), "render_mode", "max_cycles")


def _as_is(name: str, value: Any) -> Any:
    return value


class ModuleFunctions(NamedTuple):
    """The functions of a task's PettingZoo module, PettingZoo's convention."""

    parallel_env: Callable[..., TaskParallelEnv]
    raw_env: Callable[..., AECForm]
    env: Callable[..., Any]
    vector_env: Callable[..., Any]


def module_functions(parallel_class: type[TaskParallelEnv], vector_class: type) -> ModuleFunctions:
    """``parallel_env``, ``raw_env``, ``env`` and ``vector_env`` of the PettingZoo module that
    defines ``parallel_class`` and ``vector_class`` (its env classes bound to its task),
    documented as that module's functions."""
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    def bound(kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` for the module's classes. Their task is the module's: ``task`` is
        not an argument of the module's functions, and is refused as any unknown keyword
        is (:class:`~steer_env.tasks.config.UnknownArgumentError` listing the accepted
        ones), not passed on as a task."""
        if "task" in kwargs:
            check_overrides({"task": kwargs["task"]}, accepted(parallel_class.task), _as_is)
        return kwargs

    def parallel_env(**kwargs: Any) -> TaskParallelEnv:
        """The ``ParallelEnv`` (keyword arguments: see the module docstring)."""
        return parallel_class(**bound(kwargs))

    def raw_env(**kwargs: Any) -> AECForm:
        """The AEC form without PettingZoo's order-enforcing wrapper (agents act in turn;
        the step is simulated when the last live agent has acted)."""
        return AECForm(parallel_class(**bound(kwargs)))

    def env(**kwargs: Any) -> Any:
        """The AEC form as PettingZoo's ``parallel_to_aec`` returns it (order enforced)."""
        return OrderEnforcingWrapper(AECForm(parallel_class(**bound(kwargs))))

    def vector_env(num_envs: int = 1, **kwargs: Any) -> Any:
        """The native batched form: ``num_envs`` environments stepped by one compiled call
        (arrays ``(E, k, ...)``; see :mod:`steer_env.envs.team_vector`). Environment ``i``
        of ``vector_env(E, **cfg).reset(seed=s)`` equals
        ``parallel_env(**cfg).reset(seed=s + i)``."""
        return vector_class(num_envs, **bound(kwargs))

    functions = ModuleFunctions(parallel_env, raw_env, env, vector_env)
    for function in functions:
        function.__module__ = parallel_class.__module__
        function.__qualname__ = function.__name__
    return functions
