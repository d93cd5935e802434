"""A team task batched: ``E`` environments x ``k`` learned agents, one compiled call.

:class:`TeamVectorEnv` is the native batched form of a task's PettingZoo env
(:class:`~steer_env.envs.parallel.TaskParallelEnv`) for speed; each task's PettingZoo
module binds it (``team_pursuit_v0.vector_env``, ``herding_v0.vector_env``) and documents
its infos. Arrays instead of dicts: agent ``a`` of environment ``e`` is row ``[e, a]``
(the agents in ``possible_agents`` order). Seeded with ``reset(seed=s)``, environment ``i``
follows exactly the task's ``parallel_env(**same_config).reset(seed=s + i)`` given the
same actions, through autoresets too (an unseeded reset continues each env's random
stream, as the ``ParallelEnv``'s does).

>>> from steer_env.envs import team_pursuit_v0
>>> venv = team_pursuit_v0.vector_env(num_envs=4)
>>> obs, infos = venv.reset(seed=0)
>>> obs.shape, venv.possible_agents
((4, 3, 36), ['pursuer_0', 'pursuer_1', 'pursuer_2'])

==================== ===============================================================
``reset(seed)``      observations ``(E, k, obs_dim)`` float32 and infos; ``seed`` an int
                     (env ``i`` gets ``seed + i``), a list of ``E`` ints or ``None``s, or
                     ``None``; ``options={"reset_mask": (E,) bool}`` resets only those
``step(actions)``    actions ``(E, k, 2)``: each agent's steering force in its own frame,
                     in units of its max force (clipped to length 1). Returns
                     ``observations (E, k, obs_dim)``, ``rewards (E, k)``,
                     ``terminations (E, k)``, ``truncations (E, k)`` (always False: the
                     time limit is part of the task) and ``infos``
autoreset            NEXT_STEP: the step after an environment's episode ended starts its
                     next episode instead (its actions are ignored; rewards 0,
                     terminations False, the first observations and the reset infos)
agents in the game   ``infos["in_game"] (E, k)``: agents still playing after the step.
                     An agent that left the game has ``terminations`` True on the step
                     it left and on every later step of that episode, reward 0; its
                     actions are ignored (they may be anything, NaN included)
infos                the task's (:meth:`~steer_env.tasks.protocol.TeamInfos.vector_infos`),
                     ``in_game`` included, the same keys and shapes at reset
==================== ===============================================================

Bad actions (wrong shape, or NaN/inf for an agent in the game) raise ``ValueError`` naming
the agent and the environment; nothing is simulated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from steer_env.engine.batch import Batch
from steer_env.envs.base import RENDER_FPS, module_name, validate_actions, validate_render_mode
from steer_env.envs.vector import reset_envs
from steer_env.tasks import TaskSpec
from steer_env.tasks.config import time_limit_alias


class TeamVectorEnv:
    """``num_envs`` environments of a team task in one batch (the class attribute ``task``
    or the ``task`` argument; every info from the task's
    :class:`~steer_env.tasks.protocol.TeamInfos`). See the module docstring for the
    interface; each task's PettingZoo module binds it to the task and documents its
    infos."""

    #: The task played when no ``task`` argument is given.
    task: TaskSpec

    metadata = {  # noqa: RUF012 (read as a plain class attribute, like Gymnasium's)
        "name": "",  # the task's module name, set per instance
        "render_modes": ["rgb_array"],
        "render_fps": RENDER_FPS,
        "autoreset_mode": "NextStep",
    }

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        task: TaskSpec | None = None,
        **kwargs: Any,
    ) -> None:
        if task is not None:
            self.task = task
        self.metadata = {**self.metadata, "name": module_name(self.task)}
        self.config: Any = self.task.config(**time_limit_alias(kwargs, "max_cycles", max_cycles))
        validate_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.batch = Batch(
            self.task.roster(self.config), self.task.world(self.config), num_envs, specialise=True
        )
        self.num_envs = self.batch.num_envs
        self.possible_agents: list[str] = self.task.agent_names(self.config)
        self.n_agents = len(self.possible_agents)
        #: ``(k,)`` team code of each agent (:data:`layout.PURSUER` / :data:`layout.EVADER`).
        self.agent_team = self.batch.team[self.batch.agent_index].copy()
        self.obs_dim = self.batch.obs_dim
        self.single_observation_space = spaces.Box(*self.batch.observation_bounds, dtype=np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = spaces.Box(
            *(
                np.broadcast_to(bound, (self.num_envs, self.n_agents, self.obs_dim))
                for bound in self.batch.observation_bounds
            ),
            dtype=np.float32,
        )
        self.action_space = spaces.Box(-1.0, 1.0, (self.num_envs, self.n_agents, 2), np.float32)
        self._rng = np.random.default_rng()
        self._keyed = np.zeros(self.num_envs, dtype=bool)
        self._ended = np.zeros(self.num_envs, dtype=bool)
        # Renderers and trails (pygame is imported by the first frame, not here).
        self._scenes = None
        if render_mode is not None:
            from steer_env.envs.scene import Scenes

            title = f"steer-env {self.metadata['name']}"
            self._scenes = Scenes(self.batch, self.config, "rgb_array", title, RENDER_FPS)

    # ------------------------------------------------------------------ state views
    def in_game(self) -> NDArray[np.bool_]:
        """``(E, k)``: agents still playing in their current episode."""
        return self.task.in_game(self.batch)

    # ------------------------------------------------------------------ API
    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Start new episodes in every environment (or those in ``options["reset_mask"]``)."""
        envs, obs = reset_envs(self.batch, options, seed, self._keyed, self._rng)
        self._ended[envs] = False
        if self._scenes is not None:
            self._scenes.restart(envs.tolist())
        return obs, self.task.vector_infos(None, self.batch)

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.float32],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        if not self.batch.started:
            raise RuntimeError("call reset() before step()")
        in_game = self.in_game()
        act = self._validate(actions, in_game & ~self._ended[:, None])
        active = None
        ended = self._ended
        if ended.any():
            # NEXT_STEP autoreset: these envs start their next episode instead of stepping.
            restart = np.flatnonzero(ended)
            self.batch.reset(restart)
            if self._scenes is not None:
                self._scenes.restart(restart.tolist())
            active = ~ended
        result = self.batch.step(act, active)
        done = result.done.copy()
        self._ended = done.copy()  # reset() clears it; the caller keeps ``done``
        if self._scenes is not None:
            self._scenes.push(active)
        infos = self.task.vector_infos(result, self.batch)
        return (
            result.observation,
            result.reward,
            result.terminated,
            np.zeros((self.num_envs, self.n_agents), dtype=bool),
            infos,
        )

    def _validate(self, actions: Any, playing: NDArray[np.bool_]) -> NDArray[np.float64]:
        """Actions as ``(E, k, 2)`` float64; the rows of agents not playing are zeroed (they
        may hold anything); NaN or inf for an agent in the game is an error naming it."""
        shape = (self.num_envs, self.n_agents, 2)
        # A copy: the rows of agents not playing are zeroed below.
        arr = np.array(validate_actions(actions, shape, "actions", finite=False), order="C")
        bad = ~np.isfinite(arr).all(axis=2) & playing
        if bad.any():
            e, a = np.argwhere(bad)[0]
            raise ValueError(
                f"action of agent {self.possible_agents[a]!r} in env {e} must be finite: got "
                f"{arr[e, a].tolist()} (NaN or inf would poison the episode)"
            )
        arr[~playing] = 0.0
        return arr

    # ------------------------------------------------------------------ rendering
    def render(self) -> tuple[NDArray[np.uint8], ...] | None:
        """One ``(600, 600, 3)`` frame per environment (``render_mode="rgb_array"``)."""
        if not self.batch.started:
            raise RuntimeError("call reset() before render()")
        if self.render_mode is None:
            import warnings

            warnings.warn(
                "render() called without a render_mode: pass render_mode='rgb_array'",
                stacklevel=2,
            )
            return None
        return tuple(self._scenes.frame(i) for i in range(self.num_envs))

    def close(self) -> None:
        if self._scenes is not None:
            self._scenes.close()


_MOVED = {"TeamPursuitVectorEnv": "TeamPursuitVectorEnv", "TASK": "TASK"}


def __getattr__(name: str) -> Any:
    """Team pursuit's names that moved to :mod:`steer_env.envs.team_pursuit_v0`, with a
    ``DeprecationWarning`` naming the new place."""
    if name in _MOVED:
        import warnings

        from steer_env.envs import team_pursuit_v0

        warnings.warn(
            f"steer_env.envs.team_vector.{name} moved to "
            f"steer_env.envs.team_pursuit_v0.{_MOVED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(team_pursuit_v0, _MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
