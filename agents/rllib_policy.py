"""RLlib checkpoints as policies with stable-baselines3's ``predict`` interface.

``train.py --framework rllib`` writes RLlib algorithm checkpoints (folders) with a
``steer_env.json`` beside RLlib's own files; it records the env id, the algorithm and the
observation/action shapes, so the env of a checkpoint is known without importing ray.
:func:`load_rllib_policy` loads only the policy's ``RLModule`` (torch, no Ray cluster), and
:class:`RLlibPolicy` maps observations to actions with ``forward_inference`` (deterministic:
the Gaussian's mean) or ``forward_exploration`` plus a sample (``deterministic=False``).
``agents.policies.load_policy`` and ``read_model_metadata`` hand folders to this module, so
``agents.compare --model <checkpoint>`` and ``agents.render --model <checkpoint>`` work.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.policies import ENV_IDS, ENV_SHORT, LearnedPolicy, PolicyLoadError, resolve_env_id

#: File with our metadata inside an RLlib checkpoint folder.
METADATA_FILE = "steer_env.json"
#: Where RLlib 2.60 keeps the policy's RLModule inside an algorithm checkpoint.
MODULE_SUBDIR = Path("learner_group") / "learner" / "rl_module" / "default_policy"
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


def load_rllib_policy(
    path: str | os.PathLike[str],
    env_id: str | None = None,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> RLlibPolicy:
    """Load the policy of an RLlib checkpoint folder written by ``train.py --framework
    rllib``; :class:`PolicyLoadError` (one line) for a folder that is not one, a checkpoint
    of another env or observation size, or a missing ray installation."""
    import gymnasium as gym

    import steer_env  # noqa: F401  (registers the env ids)

    p = Path(path)
    meta = read_rllib_metadata(p)
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
    module_dir = p / MODULE_SUBDIR
    if not module_dir.is_dir():
        raise PolicyLoadError(f"{p}: incomplete RLlib checkpoint (no {MODULE_SUBDIR})")
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
    return RLlibPolicy(module, env_id, p, {**meta, "algo": str(meta.get("algo", "ppo"))})
