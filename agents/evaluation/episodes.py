"""Episodes of one learned or scripted agent of a single-agent task, as frames:
:func:`play_episode` and :func:`render_gif` (the learned and the classic agent side by side).
``python -m agents.render`` (:mod:`agents.evaluation.render`) and the final comparison of a
training run draw their animations of such tasks with them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.frames import DEFAULT_WIDTH, captioned, side_by_side, write_gif
from agents.evaluation.policies import LearnedPolicy, agent_label, load_policy, make_policy


@dataclass
class Episode:
    frames: list[np.ndarray]
    label: str
    success: bool
    capture_step: int | None
    steps: int
    dt: float
    role: str
    #: The task's words for its timed event and for its absence
    #: (``metrics.labels["event"]``, ``["no_event"]``: "captured" / "no capture").
    event: str = "captured"
    no_event: str = "no capture"

    @property
    def outcome(self) -> str:
        if self.capture_step is not None:
            return f"{self.event} at {self.capture_step * self.dt:.1f} s"
        return self.no_event


def play_episode(
    env_id: str,
    agent: str,
    seed: int,
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    render_mode: str = "rgb_array",
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> Episode:
    """Play one episode from ``seed`` with ``agent`` in the env of ``env_kwargs`` and
    collect its frames (none in ``"human"`` mode, which draws to a window as it goes)."""
    import gymnasium as gym

    import steer_env  # noqa: F401

    env = gym.make(env_id, render_mode=render_mode, **(env_kwargs or {}))
    try:
        policy = make_policy(
            agent, env, env_id, model=model, seed=seed, device=device, env_kwargs=env_kwargs
        )
        label = agent_label(agent, env_id, policy)
        obs, _ = env.reset(seed=seed)
        frames: list[np.ndarray] = []
        if render_mode == "rgb_array":
            frames.append(np.asarray(env.render()))
        info: dict[str, Any] = {}
        steps = 0
        done = False
        while not done:
            action, _ = policy.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            done = terminated or truncated
            if render_mode == "rgb_array":
                frames.append(np.asarray(env.render()))
            renderer = getattr(env.unwrapped, "_renderer", None)
            if getattr(renderer, "quit_requested", False):
                break
        cfg = env.unwrapped.config
        role = env.unwrapped.agent_role
        metrics = env.unwrapped.task.metrics
    finally:
        env.close()
    event = info.get(metrics.time_key, -1)
    return Episode(
        frames,
        label,
        bool(info.get("is_success", False)),
        event if event >= 0 else None,
        steps,
        cfg.dt,
        role,
        metrics.labels.get("event", "captured"),
        metrics.labels.get("no_event", "no capture"),
    )


def episode_frames(ep: Episode, width: int | None = DEFAULT_WIDTH) -> list[np.ndarray]:
    return captioned(ep.frames, ep.label, f"{ep.label}: {ep.outcome}", width)


def render_gif(
    env_id: str,
    out: str | os.PathLike[str],
    agent: str = "learned",
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    seed: int = 0,
    side: bool = False,
    width: int | None = DEFAULT_WIDTH,
    fps: float = 10.0,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> tuple[Path, list[Episode]]:
    """Render ``agent`` (or, with ``side``, the learned and the classic agent on the same
    seed side by side) in the env of ``env_kwargs`` to ``out``: a GIF, an MP4 or a PNG of
    the last frame, by extension (:func:`steer_env.rendering.write_animation`; an unknown
    extension is refused before any episode is played)."""
    from steer_env.rendering import check_animation_path

    check_animation_path(out)
    if side:
        if isinstance(model, str | os.PathLike) or model is None:
            model = load_policy(model, env_id, device=device, env_kwargs=env_kwargs)
        eps = [
            play_episode(env_id, "learned", seed, model, env_kwargs=env_kwargs),
            play_episode(env_id, "classic", seed, env_kwargs=env_kwargs),
        ]
        frames = side_by_side(episode_frames(eps[0], width), episode_frames(eps[1], width))
    else:
        eps = [play_episode(env_id, agent, seed, model, device=device, env_kwargs=env_kwargs)]
        frames = episode_frames(eps[0], width)
    return write_gif(frames, out, fps), eps
