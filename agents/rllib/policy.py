"""RLlib checkpoints as policies with stable-baselines3's ``predict`` interface.

``train.py --framework rllib`` writes RLlib algorithm checkpoints (folders) with a
``steer_env.json`` beside RLlib's own files; it records the env id, the algorithm and the
observation/action shapes, so the env of a checkpoint is known without importing ray.
:func:`load_rllib_policy` loads only the policy's ``RLModule`` (torch, no Ray cluster), and
:class:`RLlibPolicy` maps observations to actions with ``forward_inference`` (deterministic:
the Gaussian's mean) or ``forward_exploration`` plus a sample (``deterministic=False``).
``agents.evaluation.policies.load_policy`` and ``read_model_metadata`` hand folders to this
module, so ``agents.compare --model <checkpoint>`` and ``agents.render --model <checkpoint>``
work.

A checkpoint of a multi-agent team task (``train.py --framework rllib --env team_pursuit``)
holds one RLModule per learned role, shared by every agent of the role; its
``steer_env.json`` names the task (``team_task``), the ``modules`` and which agent maps to
which. ``load_rllib_policy(path, module="pursuer")`` gives that module as a policy: its
``predict`` maps one agent's observation (or a batch of agents') to actions, so every
``pursuer_i`` of a ``team_pursuit_v0`` env can be driven by it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.policy_base import (
    ENV_IDS,
    ENV_SHORT,
    LearnedPolicy,
    PolicyLoadError,
    resolve_env_id,
)

#: File with our metadata inside an RLlib checkpoint folder.
METADATA_FILE = "steer_env.json"
#: Where RLlib 2.60 keeps the RLModules inside an algorithm checkpoint (one folder per module).
MODULES_SUBDIR = Path("learner_group") / "learner" / "rl_module"
#: The module of a single-agent checkpoint.
DEFAULT_MODULE = "default_policy"
MODULE_SUBDIR = MODULES_SUBDIR / DEFAULT_MODULE
INSTALL_HINT = 'pip install "steer-env[rllib]"'


def is_rllib_checkpoint(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder (RLlib checkpoints are folders; SB3 models are zips)."""
    return Path(path).is_dir()


def read_rllib_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``steer_env.json`` of an RLlib checkpoint folder, or :class:`PolicyLoadError`."""
    p = Path(path)
    meta_path = p / METADATA_FILE
    if not meta_path.is_file():
        raise PolicyLoadError(
            f"{p} is a folder but not an RLlib checkpoint written by train.py (no {METADATA_FILE})"
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PolicyLoadError(f"{meta_path}: unreadable: {type(exc).__name__}: {exc}") from None
    if not isinstance(meta, dict):
        raise PolicyLoadError(f"{meta_path}: corrupt (not a JSON object)")
    return meta


class RLlibPolicy(LearnedPolicy):
    """An RLlib ``RLModule`` behind SB3's ``predict(observation, state=None,
    episode_start=None, deterministic=True) -> (action, state)``."""

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        import torch

        obs = np.asarray(observation, dtype=np.float32)
        single = obs.ndim == 1
        batch = torch.from_numpy(obs[None] if single else obs)
        module = self.model
        with torch.no_grad():
            if deterministic:
                out = module.forward_inference({"obs": batch})
                dist_cls = module.get_inference_action_dist_cls()
                action = dist_cls.from_logits(out["action_dist_inputs"]).to_deterministic()
                action = action.sample()
            else:
                out = module.forward_exploration({"obs": batch})
                dist_cls = module.get_exploration_action_dist_cls()
                action = dist_cls.from_logits(out["action_dist_inputs"]).sample()
        action = np.clip(action.cpu().numpy(), -1.0, 1.0).astype(np.float32)
        return (action[0] if single else action), state


def team_spaces(task: str, env_kwargs: dict[str, Any]) -> tuple[tuple, tuple]:
    """Observation and action shapes of one agent of team task ``task``."""
    import importlib

    from steer_env.tasks import TEAM_TASKS

    env = importlib.import_module(TEAM_TASKS[task].env_module).parallel_env(**env_kwargs)
    agent = env.possible_agents[0]
    shapes = env.observation_space(agent).shape, env.action_space(agent).shape
    env.close()
    return tuple(shapes[0]), tuple(shapes[1])


def load_rllib_policy(
    path: str | os.PathLike[str],
    env_id: str | None = None,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
    module: str | None = None,
) -> RLlibPolicy:
    """Load the policy of an RLlib checkpoint folder written by ``train.py --framework
    rllib``; :class:`PolicyLoadError` (one line) for a folder that is not one, a checkpoint
    of another env or observation size, or a missing ray installation.

    ``module``: for a checkpoint of a team task, the role's module to load (``"pursuer"``
    or ``"evader"``; required); for a single-agent checkpoint None (or
    ``"default_policy"``)."""
    p = Path(path)
    meta = read_rllib_metadata(p)
    if "team_task" in meta:
        return _load_team_module(p, meta, env_id, device, env_kwargs, module)
    if module not in (None, DEFAULT_MODULE):
        raise PolicyLoadError(
            f"{p} is a single-agent checkpoint of {meta.get('env_id')}: it has no module "
            f"{module!r} (drop module=)"
        )
    import gymnasium as gym

    import steer_env  # noqa: F401  (registers the env ids)

    trained_on = meta.get("env_id")
    if trained_on not in ENV_IDS:
        raise PolicyLoadError(f"{p}: {METADATA_FILE} names no steer-env env ({trained_on!r})")
    env_id = resolve_env_id(env_id) if env_id is not None else trained_on
    if trained_on != env_id:
        raise PolicyLoadError(
            f"{p} was trained on {trained_on}, not {env_id} "
            f"(use --env {ENV_SHORT[trained_on]} or a checkpoint for {env_id})"
        )
    env = gym.make(env_id, **(env_kwargs or {}))
    want_obs, want_act = env.observation_space.shape, env.action_space.shape
    env.close()
    if tuple(meta.get("obs_shape", want_obs)) != tuple(want_obs):
        raise PolicyLoadError(
            f"{p} expects observations of shape {tuple(meta['obs_shape'])}, but {env_id} gives "
            f"{tuple(want_obs)} (a checkpoint for another env configuration)"
        )
    if tuple(meta.get("action_shape", want_act)) != tuple(want_act):
        raise PolicyLoadError(f"{p} outputs actions of shape {tuple(meta['action_shape'])}")
    rl_module = _load_module(p, MODULE_SUBDIR, device)
    return RLlibPolicy(rl_module, env_id, p, {**meta, "algo": str(meta.get("algo", "ppo"))})


def _load_team_module(
    p: Path,
    meta: dict[str, Any],
    env_id: str | None,
    device: str,
    env_kwargs: dict[str, Any] | None,
    module: str | None,
) -> RLlibPolicy:
    """One role's module of a team-task checkpoint (see :func:`load_rllib_policy`)."""
    from steer_env.tasks import TEAM_TASKS

    task = meta.get("team_task")
    modules = [str(m) for m in meta.get("modules", [])]
    names = ", ".join(modules)
    if task not in TEAM_TASKS:
        raise PolicyLoadError(f"{p}: {METADATA_FILE} names no steer-env team task ({task!r})")
    if env_id is not None and str(env_id).strip().lower() != task:
        raise PolicyLoadError(
            f"{p} is a multi-agent checkpoint of {task} (modules {names}), not of {env_id} "
            f"(use --env {task})"
        )
    if module is None:
        raise PolicyLoadError(
            f"{p} is a multi-agent checkpoint of {task} (modules {names}): load one module "
            "with load_rllib_policy(path, module=...), or compare it with python -m "
            f"agents.compare --env {task} --model {p}"
        )
    if module not in modules:
        raise PolicyLoadError(f"{p} has no module {module!r} (its modules: {names})")
    kwargs = {"learned": meta.get("learned", "pursuers"), **(env_kwargs or {})}
    want_obs, want_act = team_spaces(task, kwargs)
    if tuple(meta.get("obs_shape", want_obs)) != want_obs:
        raise PolicyLoadError(
            f"{p} expects observations of shape {tuple(meta['obs_shape'])}, but {task} gives "
            f"{want_obs} (a checkpoint for another team configuration)"
        )
    if tuple(meta.get("action_shape", want_act)) != want_act:
        raise PolicyLoadError(f"{p} outputs actions of shape {tuple(meta['action_shape'])}")
    rl_module = _load_module(p, MODULES_SUBDIR / module, device)
    meta = {**meta, "algo": str(meta.get("algo", "ppo")), "module": module}
    return RLlibPolicy(rl_module, task, p, meta)


def _load_module(p: Path, subdir: Path, device: str) -> Any:
    """The RLModule in ``p / subdir`` (torch, no Ray cluster), in eval mode on ``device``."""
    module_dir = p / subdir
    if not module_dir.is_dir():
        raise PolicyLoadError(f"{p}: incomplete RLlib checkpoint (no {subdir})")
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError:
        raise PolicyLoadError(
            f"{p} is an RLlib checkpoint; loading it needs ray: {INSTALL_HINT}"
        ) from None
    try:
        module = RLModule.from_checkpoint(str(module_dir.resolve()))
    except Exception as exc:  # torch/pickle/ray raise many types for damaged files
        text = " ".join(str(exc).split())
        raise PolicyLoadError(
            f"cannot load the RLlib policy in {p}: {type(exc).__name__}: {text}"
        ) from None
    if device not in ("cpu", "auto"):
        module.to(device)
    module.eval()
    return module
