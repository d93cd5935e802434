"""Learned and scripted policies behind one interface, and a validating model loader.

Every policy has stable-baselines3's ``predict(obs, state=None, episode_start=None,
deterministic=True) -> (action, state)`` and acts only through the env's action space.

* :func:`load_policy` loads an SB3 model zip (written by ``train.py``) as a
  :class:`LearnedPolicy`, checking that it is a readable model for the requested env:
  a missing file, a corrupt zip, a model trained for the other env or for another
  observation/action space all raise :class:`PolicyLoadError` with a one-line message.
* :func:`make_policy` builds a policy by name (``learned``, ``classic``, ``naive``,
  ``classic-pursuer``, ``naive-pursuer``, ``classic-evader``) for an env.
* :func:`default_model_path` is the pretrained model shipped in ``agents/models/`` for an env
  (``agents/models``, installed with the package; set ``STEER_ENV_MODELS`` to use another
  folder).

``train.py`` stores a ``steer_env`` dict (env id, algorithm, observation/action shapes,
versions) in the model zip's ``data`` JSON, so the env of a model can be read without
loading torch (:func:`read_model_metadata`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.policy_base import ENV_IDS as ENV_IDS
from agents.evaluation.policy_base import ENV_SHORT as ENV_SHORT
from agents.evaluation.policy_base import METADATA_KEY as METADATA_KEY
from agents.evaluation.policy_base import ROLE as ROLE
from agents.evaluation.policy_base import LearnedPolicy as LearnedPolicy
from agents.evaluation.policy_base import PolicyLoadError as PolicyLoadError
from agents.evaluation.policy_base import UsageError as UsageError
from agents.evaluation.policy_base import env_tag as env_tag
from agents.evaluation.policy_base import resolve_env_id as resolve_env_id
from steer_env.tasks import REGISTRY, TASKS

#: Scripted agents for the learned agent's role, in table order (``classic`` first).
SCRIPTED_FOR_ENV = {task.env_id: tuple(task.baselines) for task in TASKS.values()}
#: Long names accepted for the scripted agents (``classic-pursuer``, ...).
SCRIPTED_NAMES = {
    f"{name}-{task.learned_team}": (task.env_id, name)
    for task in TASKS.values()
    for name in task.baselines
}
AGENT_NAMES = ("learned", "classic", "naive", *SCRIPTED_NAMES)
ALGOS = ("ppo", "sac", "a2c", "td3")
#: The on-policy algorithms of ``train.py`` (small MLPs that run faster on the CPU).
ON_POLICY = ("ppo",)


def models_dir() -> Path:
    """Folder of the shipped pretrained models: ``$STEER_ENV_MODELS`` or ``agents/models``."""
    env = os.environ.get("STEER_ENV_MODELS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / "models"


def default_model_path(env_id: str, config: dict[str, Any] | None = None) -> Path:
    """The shipped PPO model for ``env_id``: ``agents/models/pursuit_ppo.zip``,
    ``agents/models/evasion_ppo.zip``...; for a configuration with ``k`` learned agents of
    the role (:func:`agents.evaluation.shared.learned_agents`) sharing one policy,
    ``agents/models/<task>_<k><role>s_ppo.zip`` (``herding_2dogs_ppo.zip``)."""
    env_id = resolve_env_id(env_id)
    short = ENV_SHORT[env_id]
    if config:
        from agents.evaluation.shared import learned_agents

        k = learned_agents(env_id, config)
        if k > 1:
            return models_dir() / f"{short}_{k}{ROLE[env_id]}s_ppo.zip"
    return models_dir() / f"{short}_ppo.zip"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def read_data_json(path: Path) -> dict[str, Any]:
    """The ``data`` JSON of an SB3 zip, or :class:`PolicyLoadError`."""
    if not path.exists():
        raise PolicyLoadError(f"model file not found: {path}")
    if not path.is_file():
        raise PolicyLoadError(f"model path is not a file: {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            if "data" not in zf.namelist():
                raise PolicyLoadError(
                    f"{path} is a zip file but not a stable-baselines3 model (no 'data' entry)"
                )
            raw = zf.read("data")
    except PolicyLoadError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise PolicyLoadError(
            f"{path} is not a readable stable-baselines3 model zip (corrupt or truncated?): "
            f"{_one_line(exc)}"
        ) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyLoadError(f"{path}: corrupt model data: {_one_line(exc)}") from None
    if not isinstance(data, dict):
        raise PolicyLoadError(f"{path}: corrupt model data (not a JSON object)")
    return data


def read_model_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``steer_env`` metadata dict that ``train.py`` stores in a model zip (``{}`` for a
    model saved by other code). Validates that the file is a readable SB3 zip."""
    if Path(path).is_dir():  # an RLlib checkpoint folder (train.py --framework rllib)
        from agents.rllib.policy import read_rllib_metadata

        return read_rllib_metadata(path)
    data = read_data_json(Path(path))
    meta = data.get(METADATA_KEY)
    return dict(meta) if isinstance(meta, dict) else {}


def infer_algo(data: dict[str, Any]) -> str | None:
    policy = data.get("policy_class")
    module = ""
    if isinstance(policy, dict):
        module = str(policy.get("__module__", "")) + " " + str(policy.get(":type:", ""))
    for algo in ("sac", "td3"):
        if f".{algo}." in module:
            return algo
    if "common.policies" in module:
        return "ppo"  # ActorCriticPolicy: PPO and A2C share it; PPO.load reads either
    return None


def algo_class(algo: str) -> Any:
    """The SB3 algorithm class for a lower-case name in :data:`ALGOS`."""
    import stable_baselines3 as sb3

    name = str(algo).lower()
    if name not in ALGOS:
        raise UsageError(f"unknown algorithm {algo!r}: use one of {', '.join(ALGOS)}")
    return getattr(sb3, name.upper())


def _space_shape(space: Any) -> tuple[int, ...] | None:
    shape = getattr(space, "shape", None)
    return tuple(int(x) for x in shape) if shape is not None else None


def agent_spaces(env_id: str, env_kwargs: dict[str, Any] | None) -> tuple[Any, Any]:
    """The observation and action spaces of one learned agent of ``env_id`` built with
    ``env_kwargs``: its Gymnasium env's, or, for a configuration with several learned
    agents, those of each agent of its PettingZoo form."""
    import gymnasium as gym

    from agents.evaluation.shared import several_agents, team_batch

    try:
        if several_agents(env_id, env_kwargs):
            venv = team_batch(env_id, 1, env_kwargs)
            spaces = venv.single_observation_space, venv.single_action_space
            venv.close()
            return spaces
        env = gym.make(env_id, **(env_kwargs or {}))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad env arguments: {_one_line(exc)}") from None
    spaces = env.observation_space, env.action_space
    env.close()
    return spaces


def load_policy(
    path: str | os.PathLike[str] | None = None,
    env_id: str | None = None,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> LearnedPolicy:
    """Load an SB3 model zip as a :class:`LearnedPolicy` for ``env_id``.

    ``env_id`` may be omitted when the model carries ``train.py``'s metadata; ``path`` may be
    omitted for the shipped model of ``env_id``. Raises :class:`PolicyLoadError` (one-line
    message) when the file is missing or corrupt, when the model was trained for another
    env, or when its observation/action spaces differ from the env's (built with
    ``env_kwargs``); :class:`UsageError` for an unknown ``env_id``.
    """
    import gymnasium as gym

    import steer_env  # noqa: F401  (registers the env ids)

    if path is None:
        if env_id is None:
            raise UsageError("give a model path or an env")
        path = default_model_path(env_id, env_kwargs)
    p = Path(path)
    if p.is_dir():  # an RLlib checkpoint folder (train.py --framework rllib)
        from agents.rllib.policy import load_rllib_policy

        return load_rllib_policy(p, env_id, device=device, env_kwargs=env_kwargs)
    data = read_data_json(p)
    meta = data.get(METADATA_KEY)
    meta = dict(meta) if isinstance(meta, dict) else {}
    trained_on = meta.get("env_id")
    if env_id is None:
        if trained_on not in ENV_IDS:
            raise PolicyLoadError(
                f"{p} does not say which env it was trained on; pass the env (--env)"
            )
        env_id = trained_on
    env_id = resolve_env_id(env_id)
    if trained_on is not None and trained_on != env_id:
        raise PolicyLoadError(
            f"{p} was trained on {trained_on}, not {env_id} "
            f"(use --env {ENV_SHORT.get(trained_on, trained_on)} or a model for {env_id})"
        )
    algo = str(meta.get("algo") or infer_algo(data) or "")
    if algo.lower() not in ALGOS:
        raise PolicyLoadError(f"{p}: cannot tell which algorithm saved this model ({algo!r})")
    cls = algo_class(algo)

    obs_space, act_space = agent_spaces(env_id, env_kwargs)

    # Check the spaces recorded in the zip before loading the network, so a model for
    # another observation size fails with a clear message rather than a shape error.
    shapes = {}
    for key in ("observation_space", "action_space"):
        item = data.get(key)
        if isinstance(item, dict) and isinstance(item.get("_shape"), list):
            shapes[key] = tuple(int(x) for x in item["_shape"])
    want_obs, want_act = _space_shape(obs_space), _space_shape(act_space)
    if "observation_space" in shapes and shapes["observation_space"] != want_obs:
        raise PolicyLoadError(
            f"{p} expects observations of shape {shapes['observation_space']}, but {env_id} "
            f"gives {want_obs} (a model for another env or env configuration)"
        )
    if "action_space" in shapes and shapes["action_space"] != want_act:
        raise PolicyLoadError(
            f"{p} outputs actions of shape {shapes['action_space']}, but {env_id} takes {want_act}"
        )

    try:
        model = cls.load(p, device=device)
    except PolicyLoadError:
        raise
    except Exception as exc:  # SB3/torch/pickle raise many types for damaged files
        raise PolicyLoadError(
            f"cannot load {p} as a {algo.upper()} model: {_one_line(exc)}"
        ) from None

    m_obs, m_act = model.observation_space, model.action_space
    if not isinstance(m_obs, gym.spaces.Box) or _space_shape(m_obs) != want_obs:
        raise PolicyLoadError(
            f"{p} expects observations {m_obs}, but {env_id} gives {obs_space} "
            "(a model for another env or env configuration)"
        )
    if (
        not isinstance(m_act, gym.spaces.Box)
        or _space_shape(m_act) != want_act
        or not np.allclose(m_act.low, act_space.low)
        or not np.allclose(m_act.high, act_space.high)
    ):
        raise PolicyLoadError(f"{p} outputs actions {m_act}, but {env_id} takes {act_space}")
    return LearnedPolicy(model, env_id, p, meta)


def canonical_agent(name: str, env_id: str) -> str:
    """``learned``, ``classic`` or ``naive`` for an agent name valid in ``env_id``;
    :class:`UsageError` for a name that does not play the env's role."""
    key = str(name).strip().lower()
    if key in SCRIPTED_NAMES:
        agent_env, short = SCRIPTED_NAMES[key]
        if agent_env != env_id:
            raise UsageError(
                f"agent {name!r} does not play the {ROLE[env_id]} of {env_id}: "
                f"use {', '.join(('learned', *SCRIPTED_FOR_ENV[env_id]))}"
            )
        return short
    if key == "learned" or key in SCRIPTED_FOR_ENV[env_id]:
        return key
    if key == "classic":  # the task's classic baseline: the first of its role
        return SCRIPTED_FOR_ENV[env_id][0]
    if key == "naive":
        raise UsageError(
            f"there is no {key} {ROLE[env_id]} for {env_id}: "
            f"use {', '.join(('learned', *SCRIPTED_FOR_ENV[env_id]))}"
        )
    raise UsageError(f"unknown agent {name!r}: use one of {', '.join(AGENT_NAMES)}")


def agent_label(name: str, env_id: str, policy: Any = None) -> str:
    """A display label such as ``learned (PPO)`` or ``classic pursuer``."""
    short = canonical_agent(name, env_id)
    if short == "learned":
        algo = getattr(policy, "algo", None)
        return f"learned ({algo.upper()})" if algo else "learned"
    return f"{short} {ROLE[env_id]}"


def make_scripted(name: str, env: Any, seed: int | None = 0) -> Any:
    """The scripted policy ``name`` (``classic``/``naive`` or a long name) for the task of
    ``env`` (a steer_env single or native vector env, possibly wrapped), configured like it;
    ``seed`` drives the classic evader's wander. It acts from observations only."""
    from agents.evaluation.scripted import ScriptedPolicy

    base = getattr(env, "unwrapped", env)
    task = base.task
    short = canonical_agent(name, task.env_id)
    if short == "learned":
        raise UsageError("'learned' is not a scripted agent")
    own = task.scripted_policy(short, base.config, seed)
    if own is not None:  # a task whose baselines are its own policies, not strategies
        return own
    return ScriptedPolicy(task, short, base.config, seed=seed)


def make_policy(
    name: str,
    env: Any,
    env_id: str,
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    seed: int | None = 0,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> Any:
    """A policy for ``env`` by agent name: ``learned`` uses ``model`` (a loaded
    :class:`LearnedPolicy`, a path, or ``None`` for the shipped model, checked against the
    env of ``env_kwargs``), the others are scripted (:func:`make_scripted`)."""
    short = canonical_agent(name, env_id)
    if short != "learned":
        return make_scripted(short, env, seed=seed)
    if isinstance(model, LearnedPolicy):
        if model.env_id != env_id:
            raise PolicyLoadError(f"{model.path} was loaded for {model.env_id}, not {env_id}")
        return model
    return load_policy(model, env_id, device=device, env_kwargs=env_kwargs)


def safe_name(text: str) -> str:
    """``text`` reduced to characters safe in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def task_names() -> str:
    """The registered task names for a help text: ``"pursuit, evasion, ... or herding"``."""
    names = list(REGISTRY)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def env_arg(text: str) -> str:
    """A single-agent task's env id, or a multi-agent task's name (``team_pursuit``, also
    accepted as its PettingZoo module name ``team_pursuit_v0``; a task registered without
    a Gymnasium id or a PettingZoo module, by its name)."""
    key = text.strip().lower()
    for name, task in REGISTRY.items():
        if task.env_module is None and task.env_id is not None:
            continue  # a single-agent task: its env id, below
        if key in (name, (task.env_module or name).rsplit(".", 1)[-1]):
            # A task with a single-agent form is named by its env id (its comparison is
            # the "agents" layout's).
            return task.env_id or name
    try:
        return resolve_env_id(text)
    except UsageError:
        ids = ", ".join(task.env_id for task in TASKS.values())
        raise argparse.ArgumentTypeError(
            f"unknown env {text!r}: use {task_names()} (or an env id: {ids})"
        ) from None


def config_pair(text: str) -> tuple[str, Any]:
    """An argparse ``type`` for ``--set KEY=VALUE``: the name and the value read as JSON
    where it parses (``50``, ``1.2``, ``true``), else as the text itself (``flow``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(
            f"bad --set {text!r}: use KEY=VALUE with a task configuration name, e.g. "
            "--set n_sheep=50"
        )
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def config_overrides(
    pairs: Any, env: str, several: bool = False, option: str = "--set"
) -> dict[str, Any]:
    """The task configuration of ``--set KEY=VALUE`` options (``pairs``: what
    :func:`config_pair` returned, or a dict already made of them), checked by the task of
    ``env`` and, when ``env`` is a Gymnasium id, by building that env (Herding-v0 has one
    dog): :class:`UsageError` naming the option for an unknown name or a value out of its
    range. ``several``: the caller also plays a configuration with several learned agents
    of the role in the task's PettingZoo form
    (:func:`agents.evaluation.shared.several_agents`), which is then checked by the task
    alone. ``option`` is the command-line option the errors name."""
    overrides = dict(pairs or {})
    if not overrides:
        return {}
    task = next((t for t in REGISTRY.values() if env in (t.name, t.env_id)), None)
    if task is None:
        raise UsageError(f"unknown env {env!r}: use {task_names()}")
    try:
        task.config(**overrides)
        if several:
            from agents.evaluation.shared import several_agents

            if several_agents(env, overrides):
                return overrides
        if env == task.env_id:
            import gymnasium as gym

            import steer_env  # noqa: F401  (registers the env ids)

            gym.make(env, **overrides).close()
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{option}: {exc}") from None
    return overrides


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """``--set KEY=VALUE`` (repeatable, ``dest="config"``) of the commands that play a task."""
    parser.add_argument(
        "--set",
        dest="config",
        action="append",
        type=config_pair,
        metavar="KEY=VALUE",
        default=None,
        help="a value of the task's configuration, e.g. --set n_sheep=50 (repeatable); a "
        "model plays with the configuration it was trained with, these values replacing",
    )


def played_config(
    model: str | os.PathLike[str] | None, pairs: Any, env: str, several: bool = False
) -> dict[str, Any]:
    """The configuration an episode is played with: ``model``'s (what ``train.py --set``
    recorded in it; none without a model), the ``--set`` ``pairs`` replacing its values,
    checked by the task (:func:`config_overrides`; ``several``: the caller plays several
    learned agents too)."""
    trained = read_model_metadata(model).get("config") if model is not None else None
    return config_overrides({**(trained or {}), **dict(pairs or [])}, env, several)


def resolve_device(requested: str, algo: str) -> str:
    """``cpu``/``cuda``. ``auto`` is ``cpu`` for PPO (small MLPs run faster on CPU, as SB3
    recommends) and CUDA for SAC when available. :class:`UsageError` for unavailable CUDA."""
    import torch

    cuda = torch.cuda.is_available()
    if requested == "cuda" and not cuda:
        raise UsageError("--device cuda: CUDA is not available on this machine (use cpu)")
    if requested == "auto":
        return "cuda" if cuda and algo not in ON_POLICY else "cpu"
    return requested


def inference_device(requested: str) -> str:
    """``--device`` of the tools that only run a trained network: ``auto`` is the CPU (one
    small MLP, batched episodes: faster than a GPU round trip); ``cuda`` must exist."""
    return resolve_device(requested, "ppo")
