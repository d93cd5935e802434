"""Keyboard play: the key and mouse actions, the play loop driven by synthetic pygame events
under the dummy video driver, Gymnasium's ``play`` with the envs' key mapping, and the
command's recording and one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pygame
import pytest

import steer_env  # noqa: F401
from steer_env import live
from steer_env import play as play_module
from steer_env.tasks import REGISTRY, get_task

ROOT = Path(__file__).resolve().parents[1]


def _key(kind, key):
    return pygame.event.Event(kind, key=key, mod=0, unicode="", scancode=0)


def _script(events_at):
    """An ``on_frame`` hook posting ``events_at[i]`` before frame ``i``."""

    def on_frame(i):
        for event in events_at.get(i, ()):
            pygame.event.post(event)

    return on_frame


def _play(task, frames, events_at=None, seed=0, record=False, config=None):
    session = play_module.open_session(REGISTRY[task], config or {})
    window = live.LiveWindow("test", fps=240)
    try:
        return play_module.play(session, window, seed, frames, record, _script(events_at or {}))
    finally:
        window.close()
        session.close()


def _agent_motion(result, agent=0):
    """Speed and forward speed (along the heading) of the learned agent ``agent``."""
    batch = result.session.batch
    i = int(batch.agent_index[agent])
    v = batch.state.velocity[0, i]
    return float(np.hypot(*v)), float(v @ batch.state.heading[0, i])


def test_keyboard_action_directions_and_diagonals():
    up, left = pygame.K_UP, pygame.K_a
    np.testing.assert_allclose(live.keyboard_action([up]), [1, 0])
    np.testing.assert_allclose(live.keyboard_action([left]), [0, 1])
    diagonal = live.keyboard_action([up, left])
    np.testing.assert_allclose(diagonal, [2**-0.5, 2**-0.5], rtol=1e-6)
    # W and UP together are one direction; opposite keys cancel; other keys do nothing.
    np.testing.assert_allclose(live.keyboard_action([up, pygame.K_w]), [1, 0])
    np.testing.assert_allclose(live.keyboard_action([up, pygame.K_s]), [0, 0])
    np.testing.assert_allclose(live.keyboard_action([pygame.K_q]), [0, 0])


def test_mouse_action_seeks_the_cursor_in_the_agents_frame():
    # Heading +y: a target to the east is to the vehicle's right (negative side).
    action = live.mouse_action([0, 0], [0, 0], [0, 1], 3.0, [5, 0])
    np.testing.assert_allclose(action, [0, -1], atol=1e-6)
    ahead = live.mouse_action([0, 0], [0, 0], [0, 1], 3.0, [0, 5])
    np.testing.assert_allclose(ahead, [1, 0], atol=1e-6)
    np.testing.assert_allclose(live.mouse_action([1, 1], [0, 0], [1, 0], 3.0, [1, 1]), [0, 0])


def test_pixel_and_world_round_trip():
    world = live.pixel_to_world([150, 450], 600, 12.5)
    np.testing.assert_allclose(world, [-6.25, -6.25])
    np.testing.assert_allclose(live.world_to_pixel(world, 600, 12.5), [150, 450])


def test_holding_up_drives_the_agent_forward():
    up = pygame.K_UP
    idle = _play("pursuit", 8)
    driven = _play("pursuit", 8, {0: [_key(pygame.KEYDOWN, up)]})
    assert idle.steps == driven.steps == 8
    idle_speed, _ = _agent_motion(idle)
    speed, forward = _agent_motion(driven)
    assert speed > idle_speed + 0.5
    assert forward > 0.99 * speed  # along the heading: the forward force


def test_key_release_stops_the_force():
    up = pygame.K_w
    held = _play("evasion", 10, {0: [_key(pygame.KEYDOWN, up)]})
    released = _play("evasion", 10, {0: [_key(pygame.KEYDOWN, up)], 2: [_key(pygame.KEYUP, up)]})
    assert _agent_motion(released)[0] < _agent_motion(held)[0]


def test_r_resets_the_episode_clock():
    result = _play("pursuit", 6, {4: [_key(pygame.KEYDOWN, pygame.K_r)]})
    assert result.resets == 1
    # Frames 0-3 stepped (steps 1-4), frame 4 reset and stepped once more, frame 5 too.
    assert int(result.session.batch.state.steps[0]) == 2
    assert result.steps == 6


def test_space_pauses_and_escape_quits():
    result = _play(
        "pursuit",
        50,
        {
            1: [_key(pygame.KEYDOWN, pygame.K_SPACE)],
            4: [_key(pygame.KEYDOWN, pygame.K_SPACE)],
            6: [_key(pygame.KEYDOWN, pygame.K_ESCAPE)],
        },
    )
    assert result.frames == 6  # ESC before frame 6 ends the loop
    assert result.steps == 3  # frames 0, 4 and 5: paused during 1-3


def test_tab_switches_the_controlled_agent():
    up = pygame.K_UP
    events = {0: [_key(pygame.KEYDOWN, pygame.K_TAB), _key(pygame.KEYDOWN, up)]}
    result = _play("team_pursuit", 8, events)
    assert len(result.session.agents) == 3
    assert result.controlled == 1
    # The second pursuer drove forward; the first applied no force.
    assert _agent_motion(result, 1)[1] > 1.0
    assert _agent_motion(result, 0)[0] < 0.1


def test_the_outcome_shows_once_the_episode_ends():
    # A one-step episode: it ends on the first frame and the loop then waits for R.
    result = _play("pursuit", 4, config={"time_limit": 1})
    assert result.steps == 1
    outcome = result.session.outcome(0)
    assert outcome == "failure: no capture"
    assert outcome.split(":")[1].strip() == get_task("pursuit").metrics.labels["no_event"]


def test_recorded_frames_carry_the_overlay():
    result = _play("herding", 3, record=True)
    assert len(result.recorded) == 4  # the reset's frame and one per step
    plain = result.session.frame()
    shown = result.recorded[-1]
    assert shown.shape == plain.shape
    assert not np.array_equal(shown, plain)  # the overlay is drawn on top


def test_gymnasium_play_accepts_the_envs_key_mapping():
    env = gym.make("steer_env/Pursuit-v0", render_mode="rgb_array")
    mapping = env.unwrapped.get_keys_to_action()
    assert all(isinstance(k, tuple) and all(isinstance(c, int) for c in k) for k in mapping)
    assert all(action in env.action_space for action in mapping.values())
    assert live.NOOP in env.action_space and not live.NOOP.any()
    w = pygame.K_w
    actions = []

    def callback(obs, next_obs, action, reward, terminated, truncated, info):
        actions.append(np.asarray(action))
        if len(actions) == 2:
            pygame.event.post(_key(pygame.KEYDOWN, w))
        if len(actions) == 5:
            pygame.event.post(pygame.event.Event(pygame.QUIT))

    from gymnasium.utils.play import play

    play(env, keys_to_action=mapping, noop=live.NOOP, fps=240, callback=callback, seed=0)
    assert len(actions) == 5
    np.testing.assert_array_equal(actions[0], live.NOOP)
    np.testing.assert_allclose(actions[-1], [1, 0])  # W held: forward
    env.close()


def _run(*args, cwd=ROOT):
    env = {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "steer_env.play", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_cli_records_a_gif_and_exits_zero(tmp_path):
    out = tmp_path / "played.gif"
    proc = _run("evasion", "--seed", "3", "--frames", "4", "--fps", "240", "--record", str(out))
    assert proc.returncode == 0, proc.stderr
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 5  # the reset's frame and one per step
    assert not np.array_equal(frames[0], frames[-1])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nosuch"], ["unknown task 'nosuch'", *REGISTRY]),
        (["pursuit", "--opponent", "nosuch"], ["--opponent", "classic", "hide"]),
        (["evasion", "--opponent", "nosuch"], ["--opponent", "classic", "naive"]),
        (["herding", "--opponent", "strombom"], ["--opponent", "herding"]),
        (["pursuit", "--record", "out.txt"], [".gif"]),
    ],
)
def test_cli_errors_are_one_line_with_status_2(args, words, tmp_path):
    proc = _run(*args, cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("python -m steer_env.play: error:")
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(("task", "name"), [("pursuit", "hide"), ("team_pursuit", "classic")])
def test_opponent_picks_the_scripted_side_by_name(task, name):
    entry = REGISTRY[task]
    config = play_module.opponent_config(entry, name.upper())
    key, names = entry.opponent_choice(entry.config())
    assert config == {key: name} and name in names
    default = play_module.open_session(entry, {})
    picked = play_module.open_session(entry, config)
    scripted = [i for i, spec in enumerate(picked.batch.roster) if spec.strategy is not None]
    assert scripted
    for i in scripted:
        assert picked.batch.roster[i].strategy.name != default.batch.roster[i].strategy.name
    default.close()
    picked.close()
