"""The team pursuit task (:mod:`steer_env.envs.team_pursuit_v0`) as a BenchMARL task.

BenchMARL (``pip install "steer-env[benchmarl]"``) trains its algorithms (MAPPO, IPPO,
MASAC, ...) on a task given as a :class:`benchmarl.environments.Task` enum and its
:class:`~benchmarl.environments.TaskClass`. BenchMARL's own tasks live inside its package
(``benchmarl/environments/<env>/`` and ``benchmarl/conf/task/<env>/<task>.yaml``); this
module is such a task kept in steer-env instead, so nothing in BenchMARL is edited:

>>> from steer_env.integrations.benchmarl import TeamPursuitTask
>>> task = TeamPursuitTask.TEAM_PURSUIT.get_from_yaml()  # steer_env/integrations/conf/
>>> task.config["n_pursuers"], task.config["learned"]
(3, 'pursuers')

then ``Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), ...)`` as
for any BenchMARL task (``docs/benchmarl.md`` has the whole script).
``TeamPursuitTask.TEAM_PURSUIT.get_task({...})`` takes a config dict instead of the YAML,
``get_from_yaml(path)`` another YAML file, and ``task.config.update(...)`` changes a loaded
one: every key is a keyword argument of ``team_pursuit_v0.parallel_env`` (the YAML's keys
are checked by :class:`TeamPursuitTaskConfig`; other ``TeamConfig`` fields such as
``wall_weight`` may be added to ``task.config`` and are checked by the env).

What BenchMARL gets (a TorchRL ``PettingZooWrapper`` around one ``parallel_env``; BenchMARL
runs ``n_envs_per_worker`` of them in a ``SerialEnv``):

* groups: ``"pursuers"`` (``pursuer_0..N-1``) and/or ``"evaders"`` (``evader_0..M-1``),
  one per learned role (``learned``); each group's ``observation`` (``(n, obs_dim)``) and
  continuous ``action`` (``(n, 2)`` in [-1, 1]); no discrete actions.
* ``state``: the env's ``state()`` (positions, velocities, in-game flags of every vehicle),
  what centralised critics (MAPPO, MASAC) read.
* a captured evader leaves the game: the wrapper runs with ``use_mask=True`` (each group's
  ``mask`` is False for agents out of the game) and ``done_on_any=False`` (the episode goes
  on until every agent is done: every evader captured, or the time limit); the env ignores
  the actions that TorchRL still sends for departed agents.
* each group's ``info`` (the env's per-agent infos, float32) is logged by BenchMARL as
  ``collection/<group>/info/<key>`` (means over every frame), and per batch, over the
  episodes that ended in it, ``team_pursuit/evaders_captured`` and
  ``team_pursuit/all_captured`` (:meth:`TeamPursuitClass.log_info`).
* ``max_steps`` (the evaluation rollout length) is the env's ``time_limit``.
* seeds: env ``i`` built from one ``get_env_fun`` is reset with ``seed + i`` (so the
  ``n_envs_per_worker`` copies of a ``SerialEnv`` play different episodes, as
  ``team_pursuit_v0.vector_env`` does); ``seed=None`` draws from the OS. With
  ``parallel_collection=True`` every worker process gets ``seed`` itself.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from benchmarl.environments import Task, TaskClass
from benchmarl.utils import DEVICE_TYPING, _read_yaml_config
from tensordict import TensorDictBase
from torchrl.data import Composite
from torchrl.envs import EnvBase, PettingZooWrapper

from steer_env.envs import team_pursuit_v0
from steer_env.tasks.team_pursuit import TeamConfig

__all__ = [
    "GROUPS",
    "TeamPursuitClass",
    "TeamPursuitTask",
    "TeamPursuitTaskConfig",
    "config_path",
    "group_map",
]

#: BenchMARL group of each role, by the prefix of its agents' names.
GROUPS = {"pursuer": "pursuers", "evader": "evaders"}

_DEFAULTS = TeamConfig()


@dataclass
class TeamPursuitTaskConfig:
    """Schema of the task's YAML config (``steer_env/integrations/conf/team_pursuit.yaml``):
    the keyword arguments of ``team_pursuit_v0.parallel_env`` a BenchMARL user usually sets,
    with the env's defaults. The env checks every value (ranges, names)."""

    n_pursuers: int = _DEFAULTS.n_pursuers
    n_evaders: int = _DEFAULTS.n_evaders
    learned: str = _DEFAULTS.learned
    time_limit: int = _DEFAULTS.time_limit
    speed_ratio: float = _DEFAULTS.speed_ratio
    capture_reward: float = _DEFAULTS.capture_reward
    escape_reward: float = _DEFAULTS.escape_reward
    reward_shaping: bool = _DEFAULTS.reward_shaping
    shaping_scale: float = _DEFAULTS.shaping_scale
    shaping_gamma: float = _DEFAULTS.shaping_gamma
    pursuer_strategy: str = _DEFAULTS.pursuer_strategy
    evader_strategy: str = _DEFAULTS.evader_strategy


def config_path(task_name: str = "team_pursuit") -> Path:
    """The YAML config shipped with the package for ``task_name``."""
    return Path(str(resources.files("steer_env.integrations") / "conf" / f"{task_name}.yaml"))


def group_map(agent_names: list[str]) -> dict[str, list[str]]:
    """``{"pursuers": [...], "evaders": [...]}``: the learned agents by role, in roster order
    (a role that is not learned has no group)."""
    groups: dict[str, list[str]] = {}
    for name in agent_names:
        groups.setdefault(GROUPS[name.rsplit("_", 1)[0]], []).append(name)
    return groups


def _has_pygame() -> bool:
    return importlib.util.find_spec("pygame") is not None


class TeamPursuitClass(TaskClass):
    """How BenchMARL builds and reads the team pursuit env (see the module docstring)."""

    def env_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``team_pursuit_v0.parallel_env``: the task's config."""
        kwargs = copy.deepcopy(dict(self.config))
        if _has_pygame():
            kwargs.setdefault("render_mode", "rgb_array")
        return kwargs

    def get_env_fun(
        self,
        num_envs: int,
        continuous_actions: bool,
        seed: int | None,
        device: DEVICE_TYPING,
    ) -> Callable[[], EnvBase]:
        # Not vectorized: BenchMARL wraps the env in a SerialEnv (or ParallelEnv) of num_envs.
        kwargs = self.env_kwargs()
        made = [0]  # envs made by this factory: the i-th is seeded seed + i

        def make_env() -> EnvBase:
            env_seed = None if seed is None else seed + made[0]
            made[0] += 1
            env = team_pursuit_v0.parallel_env(**kwargs)
            return PettingZooWrapper(
                env=env,
                return_state=True,
                group_map=group_map(env.possible_agents),
                use_mask=True,
                done_on_any=False,
                categorical_actions=True,
                seed=env_seed,
                device=device,
            )

        return make_env

    def supports_continuous_actions(self) -> bool:
        return True

    def supports_discrete_actions(self) -> bool:
        return False

    def has_render(self, env: EnvBase) -> bool:
        return _has_pygame()

    def max_steps(self, env: EnvBase) -> int:
        for key in ("time_limit", "max_cycles"):
            if self.config.get(key) is not None:
                return int(self.config[key])
        return _DEFAULTS.time_limit

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return env.group_map

    def _group_entries(self, env: EnvBase, keep: str) -> Composite:
        spec = env.observation_spec.clone()
        for group in self.group_map(env):
            group_spec = spec[group]
            for key in list(group_spec.keys()):
                if key != keep:
                    del group_spec[key]
        if "state" in spec:
            del spec["state"]
        return spec

    def observation_spec(self, env: EnvBase) -> Composite:
        return self._group_entries(env, "observation")

    def info_spec(self, env: EnvBase) -> Composite | None:
        return self._group_entries(env, "info")

    def state_spec(self, env: EnvBase) -> Composite | None:
        return Composite({"state": env.observation_spec["state"].clone()})

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        return None

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec

    @staticmethod
    def env_name() -> str:
        return "steer_env"

    @staticmethod
    def log_info(batch: TensorDictBase) -> dict[str, float]:
        """Per collected batch, over the episodes that ended in it: ``team_pursuit/
        evaders_captured`` (mean evaders captured per episode) and ``team_pursuit/
        all_captured`` (the fraction of episodes in which every evader was captured)."""
        done = batch.get(("next", "done")).squeeze(-1)
        if not done.any():
            return {}
        for group in GROUPS.values():
            key = ("next", group, "info")
            if key in batch.keys(include_nested=True):
                info = batch.get(key)
                # An agent that left earlier has zeroed infos: the group's max is the team's.
                left = info.get("evaders_left").amax(-1)[done]
                captured = info.get("evaders_captured").amax(-1)[done]
                return {
                    "team_pursuit/evaders_captured": captured.float().mean().item(),
                    "team_pursuit/all_captured": (left == 0).float().mean().item(),
                }
        return {}


class TeamPursuitTask(Task):
    """BenchMARL task enum of steer-env (one member: ``TEAM_PURSUIT``).

    ``TeamPursuitTask.TEAM_PURSUIT.get_from_yaml()`` loads the config shipped in this package
    (BenchMARL's own ``Task.get_from_yaml`` looks in BenchMARL's ``conf/task`` folder);
    ``get_task(config)`` takes a dict."""

    TEAM_PURSUIT = None

    @staticmethod
    def associated_class() -> type[TaskClass]:
        return TeamPursuitClass

    def get_from_yaml(self, path: str | None = None) -> TaskClass:
        """The task with its config from ``path``, by default the shipped YAML, checked by
        :class:`TeamPursuitTaskConfig` (an unknown key is a ``TypeError``)."""
        yaml_path = config_path(self.name.lower()) if path is None else Path(path)
        config = _read_yaml_config(str(yaml_path))
        config = dataclasses.asdict(TeamPursuitTaskConfig(**config))
        return self.get_task(config=config)
