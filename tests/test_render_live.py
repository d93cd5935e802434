"""Watching a model live: ``python -m agents.render --human`` plays bounded episodes in a
window (the dummy video driver) at ``--speed`` times real time, with the overlay of
keyboard play."""

import os
import subprocess
import sys
from pathlib import Path

import pygame
import pytest

from agents.evaluation.cross_play import watch_team_episodes
from agents.evaluation.episodes import watch_episodes
from steer_env import live

ROOT = Path(__file__).resolve().parents[1]


class Shown:
    """Every (window fps, overlay) a LiveWindow showed; ESC is posted after
    ``escape_after`` frames (``None``: never)."""

    def __init__(self):
        self.record = []
        self.escape_after = None


@pytest.fixture
def shown(monkeypatch):
    seen = Shown()
    real_show = live.LiveWindow.show

    def show(self, frame, overlay):
        picture = real_show(self, frame, overlay)
        seen.record.append((self.fps, overlay))
        if len(seen.record) == seen.escape_after:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE))
        return picture

    monkeypatch.setattr(live.LiveWindow, "show", show)
    return seen


def test_watch_a_shipped_model_with_the_overlay(shown):
    eps = watch_episodes(
        "steer_env/Pursuit-v0", "learned", 3, episodes=2, speed=4.0,
        env_kwargs={"time_limit": 4}, hold_s=0.0,
    )  # fmt: skip
    assert [ep.steps for ep in eps] == [4, 4]
    assert all(ep.label == "learned (PPO)" for ep in eps)
    overlays = [overlay for _, overlay in shown.record]
    assert len(overlays) == 2 * (4 + 1)  # each episode: its reset and every step
    # Real time is 1 / dt = 10 frames per second: speed 4 shows 40.
    assert {fps for fps, _ in shown.record} == {40.0}
    first, last = overlays[0], overlays[4]
    assert first.outcome is None and first.time_left == pytest.approx(0.4)
    assert last.time_left == pytest.approx(0.0)
    assert last.outcome is not None and last.outcome.startswith(("success", "failure"))
    assert last.episode_return == pytest.approx(sum(o.reward for o in overlays[1:5]))
    assert "episode 2/2" in overlays[-1].notes


def test_escape_stops_watching(shown):
    shown.escape_after = 2
    eps = watch_episodes(
        "steer_env/Evasion-v0", "classic", 0, episodes=3, env_kwargs={"time_limit": 50},
        speed=50.0, hold_s=0.0,
    )  # fmt: skip
    assert eps == []  # stopped in the first episode
    assert len(shown.record) == 2


def test_watched_episodes_of_a_random_scripted_agent_are_the_rendered_ones(shown):
    """The classic evader wanders (random draws): each watched episode ``k`` is the
    episode of seed ``seed + k`` that a render or a comparison plays."""
    from agents.evaluation.episodes import play_episode

    kwargs = {"time_limit": 120}
    eps = watch_episodes(
        "steer_env/Evasion-v0", "classic", 40, episodes=3, env_kwargs=kwargs, speed=1e4,
        hold_s=0.0,
    )  # fmt: skip
    for k, ep in enumerate(eps):
        alone = play_episode(
            "steer_env/Evasion-v0", "classic", 40 + k, render_mode=None, env_kwargs=kwargs
        )
        assert (ep.steps, ep.success, ep.capture_step) == (
            alone.steps,
            alone.success,
            alone.capture_step,
        ), k


def test_watch_a_team_match(shown):
    lines = watch_team_episodes(
        "cooperative", "flow", 0, episodes=1, speed=50.0, config={"time_limit": 3}, hold_s=0.0
    )
    assert lines == ["cooperative team vs flow: escaped (0.3 s) (seed 0)"]
    assert len(shown.record) == 4
    assert shown.record[-1][1].outcome == "escaped (0.3 s)"


def _run(*args):
    env = {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "agents.render", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_cli_human_plays_bounded_episodes():
    proc = _run("--human", "--env", "evasion", "--episodes", "2", "--speed", "50",
                "--set", "time_limit=5")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("learned (PPO) on evasion seed 0:")
    assert lines[1].startswith("learned (PPO) on evasion seed 1:")


@pytest.mark.slow
@pytest.mark.parametrize("env", ["pursuit", "team_pursuit"])
def test_cli_speed_without_human_is_a_one_line_error(env, tmp_path):
    proc = _run("--env", env, "--speed", "2", "--out", str(tmp_path / "x.gif"))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--human" in lines[0]
    assert not (tmp_path / "x.gif").exists()
