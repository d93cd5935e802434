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

from agents.evaluation import shared
from agents.evaluation.frames import DEFAULT_WIDTH, captioned, side_by_side, write_gif
from agents.evaluation.policies import (
    LearnedPolicy,
    UsageError,
    agent_label,
    canonical_agent,
    load_policy,
    make_policy,
)
from agents.evaluation.shared import AgentsBatch, several_agents


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
    collect its frames (none in ``"human"`` mode, which draws to a window as it goes).
    With several learned agents in ``env_kwargs`` the agent plays every one of them
    (:func:`play_shared_episode`)."""
    if several_agents(env_id, env_kwargs):
        return play_shared_episode(env_id, agent, seed, model, render_mode, device, env_kwargs)
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


def team_policy(
    name: str,
    env: str,
    config: Any,
    model: Any = None,
    seed: int | None = 0,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> tuple[shared.EveryAgent, str]:
    """The policy of the agent ``name`` (:func:`agents.evaluation.shared.agent_name`)
    acting for every agent of a batch of ``env`` (``config``: its config object), and its
    label: ``learned`` plays ``model`` (a loaded policy, a path, or ``None`` for the
    shipped model of ``env_kwargs``), the others are scripted
    (:func:`agents.evaluation.shared.scripted_team`)."""
    key = shared.agent_name(name, env)
    if key != "learned":
        return shared.scripted_team(key, env, config, seed), shared.label(key, env)
    if not isinstance(model, LearnedPolicy):
        model = load_policy(model, env, device=device, env_kwargs=env_kwargs)
    return shared.EveryAgent(model), shared.label(key, env, model)


def play_shared_episode(
    env_id: str,
    agent: str,
    seed: int,
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    render_mode: str = "rgb_array",
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
) -> Episode:
    """:func:`play_episode` for a configuration with several learned agents of the role:
    one episode of the task's PettingZoo batch from ``seed``, ``agent`` (learned, or a
    scripted policy for several agents) acting for every agent, with its frames."""
    if render_mode != "rgb_array":
        raise UsageError("several learned agents are drawn to a file only: drop --human")
    env = AgentsBatch(env_id, 1, env_kwargs, render_mode="rgb_array")
    try:
        policy, label = team_policy(agent, env_id, env.config, model, seed, device, env_kwargs)
        obs, _ = env.reset(seed=seed)
        frames = [np.asarray(env.venv.render()[0])]
        info: dict[str, Any] = {}
        steps = 0
        for _ in range(env.config.time_limit):
            action, _ = policy.predict(obs, deterministic=True)
            obs, _, terminated, _, info = env.step(action)
            steps += 1
            frames.append(np.asarray(env.venv.render()[0]))
            if terminated[0]:
                break
    finally:
        env.close()
    metrics = env.task.metrics
    event = int(info[metrics.time_key][0])
    return Episode(
        frames,
        label,
        bool(info["is_success"][0]),
        event if event >= 0 else None,
        steps,
        env.config.dt,
        env.task.learned_team,
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


def watch_episodes(
    env_id: str,
    agent: str,
    seed: int,
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    episodes: int = 1,
    speed: float = 1.0,
    device: str = "cpu",
    env_kwargs: dict[str, Any] | None = None,
    hold_s: float = 1.0,
) -> list[Episode]:
    """Play ``episodes`` episodes of ``agent`` (seeds ``seed``, ``seed + 1``, ...) in a live
    window at ``speed`` times real time, with the overlay of keyboard play
    (:class:`steer_env.live.Overlay`: reward, return, time left, outcome); each ended
    episode's last frame stays ``hold_s`` seconds. ESC or closing the window stops early.
    Returns the episodes played to their end (without frames)."""
    import gymnasium as gym

    import steer_env  # noqa: F401
    from steer_env.live import LiveWindow, Overlay, outcome_text

    env = gym.make(env_id, render_mode="rgb_array", **(env_kwargs or {}))
    played: list[Episode] = []
    window = None
    try:
        policy = make_policy(
            agent, env, env_id, model=model, seed=seed, device=device, env_kwargs=env_kwargs
        )
        label = agent_label(agent, env_id, policy)
        task = env.unwrapped.task
        cfg = env.unwrapped.config
        metrics = task.metrics
        window = LiveWindow(f"steer-env: {label} on {task.name}", speed / cfg.dt)
        pg = window.pygame
        for k in range(episodes):
            if k > 0 and canonical_agent(agent, env_id) != "learned":
                # A scripted agent's random streams start from each episode's seed, as in
                # the comparisons and the rendered episodes.
                policy = make_policy(agent, env, env_id, seed=seed + k)
            obs, info = env.reset(seed=seed + k)
            reward = episode_return = 0.0
            steps = 0
            outcome = None
            done = False
            while True:
                notes = (f"episode {k + 1}/{episodes}", f"speed x{speed:g}", f"seed {seed + k}")
                overlay = Overlay(
                    f"{label} on {task.name}",
                    reward,
                    episode_return,
                    (cfg.time_limit - steps) * cfg.dt,
                    outcome,
                    notes,
                )
                window.show(env.render(), overlay)
                events = window.events()
                quit_now = window.closed or any(
                    e.type == pg.KEYDOWN and e.key == pg.K_ESCAPE for e in events
                )
                if quit_now:
                    return played
                if done:
                    break
                action, _ = policy.predict(obs, deterministic=True)
                obs, reward, terminated, truncated, info = env.step(action)
                reward = float(reward)
                episode_return += reward
                steps += 1
                done = terminated or truncated
                if done:
                    event = int(info.get(metrics.time_key, -1))
                    success = bool(info.get("is_success", False))
                    outcome = outcome_text(metrics, success, event, cfg.dt)
            for _ in range(round(hold_s * window.fps)):
                window.show(env.render(), overlay)
                window.events()
                if window.closed:
                    return played
            played.append(
                Episode(
                    [],
                    label,
                    success,
                    event if event >= 0 else None,
                    steps,
                    cfg.dt,
                    env.unwrapped.agent_role,
                    metrics.labels.get("event", "captured"),
                    metrics.labels.get("no_event", "no capture"),
                )
            )
    finally:
        if window is not None:
            window.close()
        env.close()
    return played
