"""team_pursuit_v0: a PettingZoo ``ParallelEnv`` of the team pursuit task.

``N`` pursuers (default 3) chase ``M`` evaders (default 1) that are ``speed_ratio`` (1.3)
times faster, in the walled 25 m arena (task: :mod:`steer_env.tasks.team_pursuit`). The
learned agents are the roles named by ``learned``; the others run scripted strategies.
One engine :class:`~steer_env.engine.batch.Batch` of one environment runs underneath: this
module only maps dicts to arrays and back. For speed, :func:`vector_env` is the native
batched form (``E`` environments in one compiled call, :mod:`steer_env.envs.team_vector`),
and :func:`steer_env.envs.sb3.make_team_sb3_vec_env` its stable-baselines3 ``VecEnv`` with
one slot per agent of a role (parameter sharing); ``python train.py --env team_pursuit``
trains on it.

>>> from steer_env.envs import team_pursuit_v0
>>> env = team_pursuit_v0.parallel_env()
>>> obs, infos = env.reset(seed=0)
>>> env.agents
['pursuer_0', 'pursuer_1', 'pursuer_2']

================== ===================================================================
agents             ``pursuer_0..N-1`` (learned pursuers), then ``evader_0..M-1`` (learned
                   evaders); a captured evader leaves ``agents``
action space       ``Box(-1, 1, (2,), float32)`` per agent: steering force in the agent's
                   frame (forward, side) in units of its max force; magnitude clipped to 1
observation space  ``Box(-1, 1, (11 + 5 (T + O),), float32)`` per agent, egocentric: own
                   velocity (2), wall offsets (8), elapsed time (1), then ``T`` teammate
                   slots and ``O`` opponent slots, nearest first, each relative position
                   (2), relative velocity (2), present flag (1); ``T = max(N, M) - 1``,
                   ``O = max(N, M)`` for every agent whichever roles are learned (36
                   values by default), slots beyond the agent's teammates/opponents absent
reward (pursuer)   ``capture_reward`` for every evader the team captures on the step
                   (shared), plus shaping
reward (evader)    ``-capture_reward`` when captured, ``+escape_reward`` when still in the
                   game at the time limit, plus shaping
shaping            potential-based, ``shaping_gamma * phi(s') - phi(s)``, ``phi`` -/+ the
                   distance to the nearest opponent / arena diagonal, 0 when terminal
                   (``reward_shaping=False`` turns it off)
scripted roles     evaders: ``"flow"`` (wall avoidance, evade every pursuer within
                   ``threat_range``, the vortex flow field while none is; weighted sum);
                   pursuers: ``"reynolds"`` or ``"cooperative"`` (offset pursuit on spread
                   bearings, then pursuit); see :mod:`steer_env.tasks.team_pursuit`
episode end        every evader captured, or ``time_limit`` steps (``max_cycles``): both
                   terminations (time is observed); ``truncations`` are always False
infos              the same keys at reset and every step, per agent: ``distance`` (m to
                   the nearest opponent), ``reward_capture``, ``reward_escape``,
                   ``reward_shaping`` (the reward's terms), ``captured`` (this agent),
                   team metrics ``captures`` (this step), ``evaders_captured``,
                   ``evaders_left`` and ``capture_steps`` (``(M,)`` int64: the step
                   each evader was captured, -1 while it plays)
state              ``state()``: every vehicle's position, velocity and in-game flag,
                   ``(5 (N + M),)`` float32, within ``state_space``
================== ===================================================================

The observation of an agent, in its frame (``T`` teammate slots, then ``O`` opponent
slots):

| Index | Observation | Min | Max |
|-------|-------------|-----|-----|
| 0, 1 | own velocity (forward, side) / max speed | -1 | 1 |
| 2, 3 | offset to the nearest point of the west wall / arena_size | -1 | 1 |
| 4, 5 | ... east wall | -1 | 1 |
| 6, 7 | ... south wall | -1 | 1 |
| 8, 9 | ... north wall | -1 | 1 |
| 10 | elapsed time: 2 * step / time_limit - 1 | -1 | 1 |
| 11 + 5k + 0, 1 | teammate k position relative to the agent / arena diagonal | -1 | 1 |
| 11 + 5k + 2, 3 | teammate k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
| 11 + 5k + 4 | 1 if slot k holds a teammate, 0 if it is padding | 0 | 1 |
| 11 + 5T + 5k + 0, 1 | opponent k position relative to the agent / arena diagonal | -1 | 1 |
| 11 + 5T + 5k + 2, 3 | opponent k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
| 11 + 5T + 5k + 4 | 1 if slot k holds an opponent, 0 if it is padding | 0 | 1 |

Arguments (keyword, validated; ``ValueError`` names the argument and its range): every
field of :class:`~steer_env.tasks.team_pursuit.TeamConfig` (``n_pursuers``, ``n_evaders``,
``learned`` = ``"pursuers"`` | ``"evaders"`` | ``"both"``, ``speed_ratio``, ``time_limit``,
``min_start_distance``, ``pursuer_strategy`` = ``"reynolds"`` | ``"cooperative"`` |
a Strategy, ``evader_strategy`` = ``"flow"`` | a Strategy, rewards, shaping, behaviour
weights and ranges: ``wall_weight`` 3, ``feeler_length`` 2 m (pursuers),
``evader_feeler_length`` 1 m, ``evade_weight`` 8, ``threat_range`` 5 m, ``flow_weight`` 1,
``flow_radius`` 6 m, ``flow_gain`` 1, ``flow_clockwise``, ``max_prediction_time`` 3 s,
``pursuit_weight`` 1, ``separation_weight`` 1, ``separation_radius`` 3 m,
``offset_distance`` 6 m, ``close_range`` 1 m), plus ``render_mode`` (``None``,
``"rgb_array"``, ``"human"``) and ``max_cycles`` (PettingZoo's name for ``time_limit``;
giving both with different values is an error).

Bad actions (an agent in the game missing, an unknown name, a wrong shape, NaN or inf)
raise ``ValueError`` naming the agent, and nothing is simulated. Actions for agents that
have left the game are ignored, whatever they hold (as in :func:`vector_env`, and as
batched wrappers such as TorchRL's send them); after the episode has ended a step returns
empty dicts. ``observation_space(name)`` and ``action_space(name)``
of a name that is not an agent raise ``UnknownAgentError`` (a ``KeyError`` and a
``ValueError``) listing the possible agents.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from steer_env.engine.batch import Batch
from steer_env.envs import streams
from steer_env.envs.base import RENDER_FPS, validate_actions, validate_render_mode, validate_seed
from steer_env.envs.team_vector import TeamPursuitVectorEnv
from steer_env.tasks import TEAM_TASKS, TaskSpec
from steer_env.tasks.team_pursuit import TeamConfig, with_max_cycles

TASK = TEAM_TASKS["team_pursuit"]


class TeamPursuitEnv(ParallelEnv):
    """PettingZoo ``ParallelEnv`` of the team pursuit task (see the module docstring)."""

    metadata = {  # noqa: RUF012 (PettingZoo reads it as a plain class attribute)
        "name": "team_pursuit_v0",
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
        #: The task played (the registry's team pursuit by default).
        self.task = TASK if task is None else task
        self.metadata = {**self.metadata, "name": self.task.env_module.rsplit(".", 1)[-1]}
        self.config: TeamConfig = self.task.config(**with_max_cycles(kwargs, max_cycles))
        if self.config.learned == "none":
            raise ValueError(
                'learned="none" leaves no agents: use "pursuers", "evaders" or "both" '
                "(scripted play runs on the engine's Batch directly)"
            )
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.batch = Batch(self.task.roster(self.config), self.task.world(self.config), num_envs=1)
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
        self._scenes: Any = None  # the renderer and trails, made by the first render()

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
        every_vehicle = self.task.agent_names(dataclasses.replace(self.config, learned="both"))
        scripted = agent in every_vehicle
        why = (
            f"is scripted in this env (learned={self.config.learned!r})"
            if scripted
            else "is not an agent of this env"
        )
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
        result = self.batch.step(act)
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
        if self.render_mode is None:
            import warnings

            warnings.warn(
                "render() called without a render_mode: pass render_mode='rgb_array' or "
                "'human' to parallel_env()",
                stacklevel=2,
            )
            return None
        from steer_env.envs.scene import Scenes

        if self._scenes is None:
            self._scenes = Scenes(
                self.batch,
                self.config,
                self.render_mode,
                f"steer-env {self.metadata['name']}",
                self.metadata["render_fps"],
            )
        return self._scenes.frame(0)

    def close(self) -> None:
        if self._scenes is not None:
            self._scenes.close()
            self._scenes = None


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


class _AECEnv(parallel_to_aec_wrapper):
    """PettingZoo's AEC form of the parallel env, saying what to do when stepped before
    ``reset()`` instead of failing on a missing attribute."""

    def step(self, action: Any) -> None:
        if not hasattr(self, "agent_selection"):
            raise RuntimeError("call reset() before step()")
        super().step(action)


def parallel_env(**kwargs: Any) -> TeamPursuitEnv:
    """The ``ParallelEnv`` (keyword arguments: see the module docstring)."""
    return TeamPursuitEnv(**kwargs)


def raw_env(**kwargs: Any) -> parallel_to_aec_wrapper:
    """The AEC form without PettingZoo's order-enforcing wrapper (agents act in turn; the
    step is simulated when the last live agent has acted)."""
    return _AECEnv(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """The AEC form as PettingZoo's ``parallel_to_aec`` returns it (order enforced)."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


def vector_env(num_envs: int = 1, **kwargs: Any) -> TeamPursuitVectorEnv:
    """The native batched form: ``num_envs`` environments stepped by one compiled call
    (arrays ``(E, k, ...)``; see :mod:`steer_env.envs.team_vector`). Environment ``i`` of
    ``vector_env(E, **cfg).reset(seed=s)`` equals ``parallel_env(**cfg).reset(seed=s + i)``."""
    return TeamPursuitVectorEnv(num_envs, **kwargs)
