"""The engine's Python face: ``E`` environments of ``n`` vehicles, the first ``k`` learned.

A :class:`Batch` owns the state (:class:`~steer_env.engine.layout.State`), the vehicle
table, the strategy table and the world record, and steps them with one call of the
compiled step of the task's rules (:mod:`steer_env.rules`; the world names them). Results
come back as the rules' named records and are decoded here, once, into a
:class:`StepResult`.

Every front end is a ``Batch``: the single Gymnasium env (``E = 1``), the native vector env
(``gym.make_vec``), the SB3 adapter and the classic baselines (which build a one-vehicle
view of their observation and run their strategy through the same compiled stage).
"""

from __future__ import annotations

import struct
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.engine import layout
from steer_env.engine.strategy import Strategy, encode
from steer_env.rules import pursuit_evasion
from steer_env.rules.pursuit_evasion import World  # noqa: F401  (its home before rules/)

Array = NDArray[np.float64]


def _fast(dispatcher, args: tuple) -> object:
    """Call a compiled entry point once through numba's dispatcher (compiling it, or loading
    it from the cache), then return the machine-code entry for exactly these argument types.

    A batch always passes arrays of the same dtypes, dimensions and layouts, so the
    dispatcher's per-call type resolution (about 1.5 us per structured array) can be
    skipped; the entry still converts each argument, and callers keep the types fixed."""
    dispatcher(*args)
    from numba import typeof

    signature = tuple(typeof(a) for a in args)
    compiled = dispatcher.overloads.get(signature)
    return dispatcher if compiled is None else compiled.entry_point


def _step_module():
    """The compiled step, imported on first use (numba's import costs ~0.3 s that ``import
    steer_env`` need not pay)."""
    from steer_env.engine import step

    return step


@dataclass(frozen=True)
class VehicleSpec:
    """One vehicle of every environment: its team, who drives it and its limits.

    ``strategy`` is a :class:`Strategy` for a scripted vehicle or ``None`` for a learned
    agent. Units: kg, m/s, N, m."""

    team: str
    strategy: Strategy | None
    mass: float
    max_speed: float
    max_force: float
    radius: float


def _struct_of(dtype: np.dtype) -> struct.Struct:
    """A ``struct`` reading one record of ``dtype`` (fields in offset order, padding
    skipped): the same names and offsets the compiled code writes."""
    codes = {"f8": "d", "i8": "q", "b1": "?"}
    fmt = "<"
    at = 0
    for name in dtype.names:
        field, offset = dtype.fields[name][:2]
        fmt += "x" * (offset - at) + codes[field.str[1:]]
        at = offset + field.itemsize
    return struct.Struct(fmt + "x" * (dtype.itemsize - at))


class StepResult:
    """One step of every environment: the compiled step's records, decoded here and only
    here. Each field of the rules' ``AGENT_RESULT`` record is an ``(E, k)`` array
    attribute (``reward``, ``terminated``, ... and each reward term, also as
    ``reward_<term>``), each field of ``ENV_RESULT`` an ``(E,)`` one (``done``, ...);
    ``observation`` is ``(E, k, obs_dim)`` float32 (after the step). The attributes of a
    rules' results are made once, by :func:`result_type`."""

    #: The rules' records and the namedtuple of :meth:`row`, set by :func:`result_type`.
    agent_dtype: np.dtype
    env_dtype: np.dtype
    Row: type
    _unpack_agent: Any  # struct.Struct.unpack_from of each record
    _unpack_env: Any
    _agent_size: int
    _env_size: int

    def __init__(
        self,
        results: NDArray[np.void],
        env_results: NDArray[np.void],
        observation: NDArray[np.float32],
        record_bytes: tuple[memoryview, memoryview] | None = None,
    ) -> None:
        self._results = results
        self._env_results = env_results
        self.observation = observation
        # The records' bytes, for row(): a structured array's own ``.data`` costs ~1.3 us to
        # build (its buffer format describes every field), a uint8 view's ~0.3 us; a batch
        # that reuses its buffers passes views made once.
        self._bytes = record_bytes

    def row(self, env: int, agent: int) -> Any:
        """Agent ``agent`` of environment ``env`` as a namedtuple of Python scalars: the
        fields of ``AGENT_RESULT``, then those of ``ENV_RESULT`` (the single env's path: two
        ``struct`` reads of the records' bytes, about 10x cheaper than ``item``)."""
        k = self._results.shape[1]
        if self._bytes is None:
            self._bytes = _record_bytes(self._results, self._env_results)
        agent_bytes, env_bytes = self._bytes
        # tuple.__new__ on the concatenated fields: the namedtuple's own __new__ parses
        # its arguments in Python, a third of this call's cost.
        return _new_tuple(
            self.Row,
            self._unpack_agent(agent_bytes, (env * k + agent) * self._agent_size)
            + self._unpack_env(env_bytes, env * self._env_size),
        )


_new_tuple = tuple.__new__


def _field(source: str, name: str) -> property:
    return property(lambda self: getattr(self, source)[name], doc=f"the ``{name}`` field")


_RESULT_TYPES: dict[str, type[StepResult]] = {}


def result_type(rules: ModuleType) -> type[StepResult]:
    """The :class:`StepResult` of ``rules``: a property per field of its result records
    (and ``reward_<term>`` per reward term), and the namedtuple ``Row`` of
    :meth:`StepResult.row`, named ``AgentStep``."""
    cls = _RESULT_TYPES.get(rules.__name__)
    if cls is not None:
        return cls
    agent, env = rules.AGENT_RESULT, rules.ENV_RESULT
    clash = set(agent.names) & set(env.names)
    if clash:
        raise ValueError(f"{rules.__name__}: result fields in both records: {sorted(clash)}")
    attrs: dict[str, Any] = {
        "agent_dtype": agent,
        "env_dtype": env,
        "Row": namedtuple("AgentStep", agent.names + env.names),
        "_unpack_agent": _struct_of(agent).unpack_from,
        "_unpack_env": _struct_of(env).unpack_from,
        "_agent_size": agent.itemsize,
        "_env_size": env.itemsize,
        "__module__": __name__,
    }
    for name in agent.names:
        attrs[name] = _field("_results", name)
    for term in rules.REWARD_TERMS:
        attrs[f"reward_{term}"] = _field("_results", term)
    for name in env.names:
        attrs[name] = _field("_env_results", name)
    cls = type(f"StepResult_{rules.__name__.rsplit('.', 1)[-1]}", (StepResult,), attrs)
    _RESULT_TYPES[rules.__name__] = cls
    return cls


#: One learned agent's step in one environment of the pursuit-evasion rules (Python
#: scalars): ``reward``, the terms ``capture``, ``escape``, ``shaping``, ``distance`` (m to
#: the nearest opponent after the step), ``terminated``, ``captured``, then the
#: environment's ``done``, ``captures`` and ``timed_out``.
AgentStep = result_type(pursuit_evasion).Row


def _record_bytes(
    results: NDArray[np.void], env_results: NDArray[np.void]
) -> tuple[memoryview, memoryview]:
    """The raw bytes of the (C-contiguous) result records, as memoryviews."""
    return results.view(np.uint8).data, env_results.view(np.uint8).data


def _scene_array(name: str, value: object, width: int) -> NDArray[np.float64]:
    """A validated, read-only ``(rows, width)`` float64 array (empty when ``value`` is None)."""
    if value is None:
        arr = np.zeros((0, width))
    else:
        try:
            arr = np.array(value, dtype=np.float64, order="C")
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers of shape (n, {width})") from None
        if arr.ndim != 2 or arr.shape[1] != width:
            raise ValueError(f"{name} must have shape (n, {width}), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite")
    arr.setflags(write=False)
    return arr


class Batch:
    """``num_envs`` environments of the vehicles in ``roster`` stepped together.

    Learned agents are the roster's vehicles without a strategy, in roster order; scripted
    vehicles run their strategy. Attributes (``E`` envs, ``n`` vehicles, ``k`` agents):

    * ``state``: :class:`~layout.State` (``position``... are ``(E, n, 2)``);
    * ``vehicles``: ``(n,)`` :data:`~layout.VEHICLE` records (``mass``, ``max_speed``,
      ``max_force``, ``radius``, ``team``...), read-only;
    * ``agent_index``: ``(k,)`` vehicle index of each learned agent;
    * ``scene``: ``(path,)``, a ``(P, 2)`` polyline that path following uses (empty by
      default); the obstacles are each environment's, ``state.obstacles`` ``(E, M, 3)``
      (the world's :class:`~steer_env.engine.layout.ObstacleField`: its fixed layout in
      every environment, or placed anew at each reset);
    * ``obs_dim``: observation length of an agent;
    * ``rules``: the task's rules package (:mod:`steer_env.rules`), named by ``world``:
      its team names, records and compiled step.

    With ``specialise``, the compiled step and strategy stage are built for the behaviour
    kinds, targets and combination methods of these strategies only, and without the
    grids of :mod:`steer_env.engine.grid` up to its ``GRID_MIN`` vehicles
    (:func:`steer_env.engine.step.table_constants`): a Pursuit batch compiles the classic
    evader's three behaviours instead of all seventeen, with the same results. Each set of
    them is compiled (and cached) on its own, so the envs specialise and a process that
    runs many strategy sets (the test suite, the scripted baselines) shares the general
    stages instead.
    """

    def __init__(
        self,
        roster: Sequence[VehicleSpec],
        world: Any,
        num_envs: int,
        path: NDArray[np.floating] | None = None,
        specialise: bool = False,
    ) -> None:
        # (steer_env.tasks imports this module: the range is read at call time.)
        from steer_env.tasks.config import check_num_envs

        check_num_envs(num_envs)
        self.roster = tuple(roster)
        self.world = world
        self.scene = (_scene_array("path", path, 2),)
        self.num_envs = int(num_envs)
        self.specialise = bool(specialise)
        n = len(self.roster)
        strategies: list[Strategy] = []
        vehicles = np.zeros(n, dtype=layout.VEHICLE)
        agents: list[int] = []
        draw = 0
        team_names = self.rules.TEAMS
        for spec in self.roster:
            if spec.team not in team_names:
                raise ValueError(
                    f"team {spec.team!r} is not a team of these rules: use one of "
                    f"{', '.join(team_names)}"
                )
        teams = [team_names.index(v.team) for v in self.roster]
        for i, spec in enumerate(self.roster):
            rec = vehicles[i]
            for name in ("mass", "max_speed", "max_force", "radius"):
                rec[name] = getattr(spec, name)
            rec["team"] = teams[i]
            rec["speed_scale"] = spec.max_speed + max(
                (o.max_speed for j, o in enumerate(self.roster) if j != i), default=0.0
            )
            if spec.strategy is None:
                rec["strategy"] = layout.LEARNED
                rec["agent"] = len(agents)
                rec["draw_offset"] = 0
                agents.append(i)
            else:
                if spec.strategy not in strategies:
                    strategies.append(spec.strategy)
                rec["strategy"] = strategies.index(spec.strategy)
                rec["agent"] = -1
                rec["draw_offset"] = draw
                draw += spec.strategy.draws
        vehicles.setflags(write=False)
        self.vehicles = vehicles
        self.strategies = tuple(strategies)
        self._behaviors, self._strategy_info = encode(self.strategies)
        self.draws = draw
        self.agent_index = np.asarray(agents, dtype=np.int64)
        self.n_vehicles = n
        self.n_agents = len(agents)
        self.obs_dim = world.obs_dim
        self._world = world.record()
        field = world.obstacles
        self.state = layout.empty_state(
            self.num_envs, n, self.n_agents, getattr(self.rules, "EPISODE", None), field.slots
        )
        if field.layout:
            self.state.obstacles[:] = np.asarray(field.layout, dtype=np.float64)
        self._all = np.arange(self.num_envs, dtype=np.int64)
        #: Whether :meth:`reset` has run: before it the state holds no episode.
        self.started = False
        self._every = np.ones(self.num_envs, dtype=np.bool_)
        rules = self.rules
        self._result_type = result_type(rules)
        self._results = np.zeros((self.num_envs, self.n_agents), dtype=rules.AGENT_RESULT)
        self._env_results = np.zeros(self.num_envs, dtype=rules.ENV_RESULT)
        self._entries: dict[str, object] = {}
        self._compiled: dict[str, Any] = {}  # the compiled functions of _entry, by name
        self._buffers = (
            np.zeros((self.num_envs, self.n_agents, self.obs_dim), dtype=np.float32),
            np.zeros_like(self._results),
            np.zeros_like(self._env_results),
        )
        self._buffer_bytes = _record_bytes(self._buffers[1], self._buffers[2])
        #: ``(E, k, 2)`` float64 actions a caller may fill and pass to :meth:`step` (the
        #: single env's path: no conversion or layout checks for it).
        self.action_buffer = np.zeros((self.num_envs, self.n_agents, 2))
        self._work = None  # the entry points' working arrays (_working)
        self._reuse_step: Any = None  # the single env's bound step (step)

    def __getstate__(self) -> dict:
        # Compiled entry points and memoryviews cannot be pickled; a copy makes its own.
        state = self.__dict__.copy()
        state["_entries"] = {}
        state["_compiled"] = {}
        state["_work"] = None
        state["_reuse_step"] = None
        del state["_buffer_bytes"]
        del state["_result_type"]  # made per rules at run time: not importable by name
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # Pickle and deepcopy hand back writeable copies; read-only is part of the compiled
        # step's argument types, so a writeable table would compile (~30 s) a second step.
        for table in (self.vehicles, *self.scene):
            table.setflags(write=False)
        self._buffer_bytes = _record_bytes(self._buffers[1], self._buffers[2])
        self._result_type = result_type(self.rules)

    #: Entry points of the rules' compiled module (the others are the engine's).
    _RULES_ENTRIES = frozenset(("reset", "observe", "step", "decode_observations"))

    def _entry(self, name: str) -> Any:
        """The compiled entry point ``name`` (the rules' ``reset``, ``observe``, ``step``,
        ``decode_observations`` or one of the engine's); with ``specialise``, compiled for
        the behaviour kinds, targets and combination methods of this batch's strategies
        (:func:`steer_env.engine.step.table_constants`)."""
        entry = self._compiled.get(name)
        if entry is None:
            step = _step_module()
            module = self.rules.load_compiled() if name in self._RULES_ENTRIES else step
            entry = getattr(module, name)
            if getattr(self, "specialise", False):  # (absent from older pickles)
                from steer_env.core.jit import specialise

                constants = step.table_constants(
                    self._behaviors, self._strategy_info, self.n_vehicles
                )
                # (The rules' compiled module reads GRIDDED too, imported from the stages.)
                entry = specialise(entry, (step, self.rules.load_compiled()), constants)
            self._compiled[name] = entry
        return entry

    def _call(self, name: str, args: tuple) -> None:
        """Run the compiled entry point ``name`` (:meth:`_entry`; see :func:`_fast`: the
        batch keeps every argument's type fixed)."""
        entry = self._entries.get(name)
        if entry is None:
            self._entries[name] = _fast(self._entry(name), args)
        else:
            entry(*args)

    # ------------------------------------------------------------------ views
    @property
    def rules(self) -> ModuleType:
        """The task's rules package (:mod:`steer_env.rules`), as the world names it."""
        return self.world.rules

    @property
    def observation_bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """``(low, high)`` of one agent's observation, from the rules' feature table."""
        return self.rules.FEATURES.bounds(self.world)

    @property
    def team(self) -> NDArray[np.int64]:
        """``(n,)`` team code of each vehicle: its index in the rules' ``TEAMS``."""
        return self.vehicles["team"]

    def team_code(self, name: str, parameter: str = "team") -> int:
        """The code of team ``name`` (``ValueError`` naming ``parameter`` and listing the
        rules' teams)."""
        teams = self.rules.TEAMS
        if name not in teams:
            raise ValueError(f"{parameter} must be one of {', '.join(teams)}, got {name!r}")
        return teams.index(name)

    def team_name(self, vehicle: int) -> str:
        """The team of ``vehicle``, by name."""
        return self.rules.TEAMS[int(self.vehicles["team"][vehicle])]

    def is_team(self, name: str) -> NDArray[np.bool_]:
        """``(n,)`` whether each vehicle is of team ``name``."""
        return self.vehicles["team"] == self.team_code(name)

    @property
    def is_pursuer(self) -> NDArray[np.bool_]:
        return self.is_team("pursuer")

    # ------------------------------------------------------------------ reset / step
    def reset(
        self,
        envs: NDArray[np.intp] | None = None,
        keys: NDArray[np.uint64] | None = None,
        out: NDArray[np.float32] | None = None,
    ) -> NDArray[np.float32]:
        """New episodes in environments ``envs`` (all by default). With ``keys``, their
        random streams restart from those keys (a seeded reset); otherwise they go on.
        Returns the observations ``(E, k, obs_dim)`` (into ``out`` when given; rows of
        other environments are left as they are)."""
        envs = self._all if envs is None else np.ascontiguousarray(envs, dtype=np.int64).reshape(-1)
        out, given = self._observation_buffer(out)
        if envs.size == 0:
            return self._deliver(out, given)
        self.started = True
        if keys is not None:
            self.state.key[envs] = keys
            self.state.counter[envs] = 0
        self._call(
            "reset",
            (
                self.state,
                self.vehicles,
                self._behaviors,
                self._strategy_info,
                self._world,
                self.agent_index,
                envs,
                out,
                self._working(),
            ),
        )
        return self._deliver(out, given)

    def step(
        self, actions: Array, active: NDArray[np.bool_] | None = None, reuse: bool = False
    ) -> StepResult:
        """Advance the ``active`` environments (all by default) by one step with actions
        ``(E, k, 2)`` (float64, validated by the caller). Inactive environments are left as
        they are: zero rewards, not done, observations and every other result field of
        their current state (what the task's reset infos report after a reset: a vector
        env restarts an environment by resetting it and stepping it inactive).

        With ``reuse``, the result is written into buffers that the next ``step(...,
        reuse=True)`` overwrites (the single env's path, which copies what it keeps)."""
        if reuse and active is None and actions is self.action_buffer:
            # The single env's call: every argument is one of the batch's own arrays, so
            # they are bound to the compiled step once (bind), and each step passes them
            # as one object.
            bound = self._reuse_step
            if bound is None:
                from steer_env.core.jit import bind

                arguments = self._step_arguments(*self._buffers, actions)
                self._call("step", arguments)
                self._reuse_step = bind(self._entry("step"), arguments)
            else:
                bound()
            obs, results, env_results = self._buffers
            return self._result_type(results, env_results, obs, self._buffer_bytes)
        if reuse:
            obs, results, env_results = self._buffers
        else:
            obs = np.empty((self.num_envs, self.n_agents, self.obs_dim), dtype=np.float32)
            results = np.empty_like(self._results)
            env_results = np.empty_like(self._env_results)
        shape = (self.num_envs, self.n_agents, 2)
        if actions is not self.action_buffer and not (
            type(actions) is np.ndarray
            and actions.dtype == np.float64
            and actions.shape == shape
            and actions.flags.c_contiguous
            and actions.flags.writeable
        ):
            # The compiled entry takes exactly this type: C-contiguous, writeable, native
            # float64. Its machine-code entry is fixed to the first call's layout, so an
            # array of any other order, strides or byte order must become this one (a copy
            # that kept a Fortran order would be read as if it were C: wrong agents).
            actions = np.array(
                np.broadcast_to(np.asarray(actions, dtype=np.float64), shape),
                dtype=np.float64,
                order="C",
            )
        if active is None:
            active = self._every
        else:
            active = np.array(active, dtype=np.bool_, order="C")
            if active.shape != (self.num_envs,):
                raise ValueError(f"active must have shape ({self.num_envs},), got {active.shape}")
        self._call("step", self._step_arguments(obs, results, env_results, actions, active))
        return self._result_type(results, env_results, obs, self._buffer_bytes if reuse else None)

    def _step_arguments(
        self,
        obs: NDArray[np.float32],
        results: NDArray[np.void],
        env_results: NDArray[np.void],
        actions: NDArray[np.float64],
        active: NDArray[np.bool_] | None = None,
    ) -> tuple:
        """The compiled step's arguments, in its order."""
        return (
            self.state,
            self._every if active is None else active,
            self.vehicles,
            self._behaviors,
            self._strategy_info,
            self._world,
            self.scene,
            self.agent_index,
            self.draws,
            actions,
            results,
            env_results,
            obs,
            self._working(),
        )

    def observe(
        self, envs: NDArray[np.intp] | None = None, out: NDArray[np.float32] | None = None
    ) -> NDArray[np.float32]:
        """Observations ``(E, k, obs_dim)`` of the current state (rows ``envs`` only, into
        ``out`` when given)."""
        envs = self._all if envs is None else np.ascontiguousarray(envs, dtype=np.int64).reshape(-1)
        out, given = self._observation_buffer(out)
        args = (self.state, self.vehicles, self._world, self.agent_index, envs, out)
        self._call("observe", (*args, self._working()))
        return self._deliver(out, given)

    def _working(self) -> Any:
        """The compiled entry points' working arrays
        (:class:`~steer_env.engine.step.StepWork`), made on first use."""
        if self._work is None:
            self._work = _step_module().step_work(
                self._all,
                self.n_vehicles,
                self.state.obstacles.shape[1],
                self.n_agents,
                len(self.rules.TEAMS),
            )
        return self._work

    def _observation_buffer(
        self, out: NDArray[np.floating] | None
    ) -> tuple[NDArray[np.float32], NDArray[np.floating] | None]:
        """The buffer the compiled code writes observations into, and the caller's ``out``
        when that is not it. The compiled entries take exactly a C-contiguous, writeable,
        native float32 ``(E, k, obs_dim)`` array; any other ``out`` of that shape (another
        order, strides, byte order or float dtype) is filled through such a copy."""
        shape = (self.num_envs, self.n_agents, self.obs_dim)
        if out is None:
            return np.zeros(shape, dtype=np.float32), None
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype.kind != "f":
            got = (
                f"{out.dtype} array of shape {out.shape}"
                if isinstance(out, np.ndarray)
                else type(out).__name__
            )
            raise ValueError(f"out must be a float array of shape {shape}, got {got}")
        if not out.flags.writeable:
            raise ValueError("out must be writeable (a read-only array was passed)")
        if type(out) is np.ndarray and out.dtype == np.float32 and out.flags.c_contiguous:
            return out, None
        # Rows the call does not write keep the caller's values.
        return np.array(out, dtype=np.float32, order="C"), out

    @staticmethod
    def _deliver(
        buffer: NDArray[np.float32], given: NDArray[np.floating] | None
    ) -> NDArray[np.floating]:
        if given is None:
            return buffer
        given[...] = buffer
        return given

    def scripted_forces(self) -> Array:
        """``(E, n, 2)`` the steering forces the scripted vehicles' strategies ask for in the
        current state (N, world frame; zero for learned agents). Wander targets advance;
        the random streams' counters do not (the caller advances them by ``draws``)."""
        force = np.zeros((self.num_envs, self.n_vehicles, 2))
        step = _step_module()
        self._entry("forces_of")(
            self.state,
            self._every,
            self.vehicles,
            self._behaviors,
            self._strategy_info,
            self._world,
            self.scene,
            step.strategy_scratch(self.num_envs, self.n_vehicles),
            np.zeros((self.n_vehicles, 2, self.num_envs)),
            force,
        )
        return force

    def load_observations(self, observations: NDArray[np.floating]) -> None:
        """Set the state to what agent 0's observations ``(E, obs_dim)`` show (the inverse
        of the observation; see the rules' ``compiled.decode_observations``). The
        roster must be the observer, then its teammate slots, then its opponent slots."""
        obs = np.ascontiguousarray(observations, dtype=np.float64)
        if obs.shape != (self.num_envs, self.obs_dim):
            raise ValueError(
                f"observations must have shape ({self.num_envs}, {self.obs_dim}), got {obs.shape}"
            )
        self._entry("decode_observations")(obs, self.state, self.vehicles, self._world)

    def nearest_opponent(self, env: int, vehicle: int) -> int:
        """Index of the nearest opponent in the game of ``vehicle`` in environment ``env``
        (-1 when none is left)."""
        state = self.state
        j, _ = _step_module().nearest_of(
            state.position, state.alive, self.vehicles, int(env), int(vehicle), True
        )
        return int(j)

    def nearest_opponent_distance(self) -> Array:
        """``(E, k)`` distance from each learned agent to its nearest opponent in the game, m
        (``inf`` when none is left)."""
        out = np.empty((self.num_envs, self.n_agents))
        self._call("distances", (self.state, self.vehicles, self.agent_index, out))
        return out
