"""What every policy module builds on: the task ids a policy plays, the two one-line
errors of the tools and :class:`LearnedPolicy`, the interface of a trained network.

It imports no other module of :mod:`agents`, so the SB3 loader
(:mod:`agents.evaluation.policies`) and the RLlib loader (:mod:`agents.rllib.policy`) both
build on it without importing each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from steer_env.tasks import TASKS, get_task

# Views of the task registry (steer_env.tasks): adding a task adds it here.
ENV_IDS = tuple(task.env_id for task in TASKS.values())
ENV_SHORT = {task.env_id: task.name for task in TASKS.values()}
ROLE = {task.env_id: task.learned_team for task in TASKS.values()}


def env_tag(env_id: str) -> str:
    """The task's short name in run and comparison folder names: ``pursuit`` for
    ``steer_env/Pursuit-v0``; a team task's name as it is."""
    return ENV_SHORT.get(env_id, env_id.split("/")[-1])


#: Key of the metadata dict stored in a model zip by ``train.py``.
METADATA_KEY = "steer_env"


class PolicyLoadError(Exception):
    """A model file cannot be used: the message is one line, fit for a CLI error."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class UsageError(ValueError):
    """A bad name or value given by the user (one-line message)."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def resolve_env_id(name: str) -> str:
    """The full env id for a task's short name (``pursuit``, any case), its versioned name
    (``Pursuit-v0``) or its id (``steer_env/Pursuit-v0``); :class:`UsageError` otherwise."""
    try:
        return get_task(name).env_id
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class LearnedPolicy:
    """An SB3 model with the env it was checked against (``env_id``) and its metadata."""

    name = "learned"

    def __init__(self, model: Any, env_id: str, path: Path, metadata: dict[str, Any]) -> None:
        self.model = model
        self.env_id = env_id
        self.path = path
        self.metadata = metadata
        self.algo = str(metadata.get("algo", type(model).__name__)).lower()
        #: The task configuration it was trained with (``train.py --set``): the commands
        #: that play it build their envs with it.
        self.config: dict[str, Any] = dict(metadata.get("config") or {})

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        action, state = self.model.predict(
            observation, state=state, episode_start=episode_start, deterministic=deterministic
        )
        return np.clip(action, -1.0, 1.0).astype(np.float32), state
