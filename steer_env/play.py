"""Play any task of the registry from the keyboard: ``python -m steer_env.play <task>``.

A pygame window shows the arena; the person steers the learned agent:

=============== ==============================================================
arrows / WASD   forward and side force in the agent's frame (UP/W forward, LEFT/A
                to its left); diagonals are full force at 45 degrees
M               steer towards the mouse cursor instead (seek), M again: keys
TAB             control the next learned agent (tasks with several)
R               start a new episode
SPACE           pause / resume
ESC, close      quit
=============== ==============================================================

The overlay (:func:`steer_env.live.draw_overlay`) shows the step's reward, the episode's
return, the time left and, once the episode ends, its outcome in the task's words (the
task's metrics and its infos); the episode then waits for R.

A task with a Gymnasium id is played in its Gymnasium env; a task without one (the team
tasks) in the native batched form of its PettingZoo module, one environment, where TAB
picks the controlled agent and the other learned agents apply no force. ``--opponent
NAME`` picks the scripted side's strategy among the task's named ones
(:meth:`~steer_env.tasks.protocol.TaskSpec.opponent_choice`); ``--record out.gif`` writes
the played frames, overlay included, with :func:`steer_env.rendering.write_animation`;
``--frames N`` stops after ``N`` window frames. The window runs at the simulation's real
time (``1 / dt`` frames per second) unless ``--fps`` says otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from steer_env import cli
from steer_env.live import (
    LiveWindow,
    Overlay,
    keyboard_action,
    mouse_action,
    outcome_text,
    pixel_to_world,
    world_to_pixel,
)
from steer_env.tasks import REGISTRY, TaskSpec

PROG = "python -m steer_env.play"


class GymSession:
    """A task's Gymnasium env (one learned agent), drawn off-screen."""

    def __init__(self, task: TaskSpec, config: dict[str, Any]) -> None:
        import gymnasium as gym

        import steer_env  # noqa: F401  (registers the ids)

        self.task = task
        self.env = gym.make(task.env_id, render_mode="rgb_array", **config)
        unwrapped = self.env.unwrapped
        self.batch = unwrapped.batch
        self.config = unwrapped.config
        self.agents: list[str] = task.agent_names(self.config)[:1]
        self._info: dict[str, Any] = {}

    def reset(self, seed: int | None) -> None:
        _, self._info = self.env.reset(seed=seed)

    def step(self, action: np.ndarray, agent: int) -> tuple[float, bool]:
        """Step with the controlled agent's ``action``: its reward and whether the episode
        ended."""
        _, reward, terminated, truncated, self._info = self.env.step(action)
        return float(reward), bool(terminated or truncated)

    def outcome(self, agent: int) -> str:
        metrics = self.task.metrics
        event = self._info.get(metrics.time_key, -1)
        return outcome_text(metrics, bool(self._info["is_success"]), int(event), self.config.dt)

    def frame(self) -> np.ndarray:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class BatchSession:
    """One environment of the native batched form of a task's PettingZoo module
    (``env_module.vector_env``): every learned agent, one of them controlled, the others
    applying no force."""

    def __init__(self, task: TaskSpec, config: dict[str, Any]) -> None:
        self.task = task
        module = importlib.import_module(task.env_module)
        self.env = module.vector_env(1, render_mode="rgb_array", **config)
        self.batch = self.env.batch
        self.config = self.env.config
        self.agents: list[str] = list(self.env.possible_agents)
        self._infos: dict[str, Any] = {}

    def reset(self, seed: int | None) -> None:
        _, self._infos = self.env.reset(seed=seed)

    def step(self, action: np.ndarray, agent: int) -> tuple[float, bool]:
        actions = np.zeros((1, len(self.agents), 2))
        actions[0, agent] = action
        _, rewards, _, _, self._infos = self.env.step(actions)
        return float(rewards[0, agent]), bool(self._infos["done"][0])

    def outcome(self, agent: int) -> str:
        role = self.batch.team_name(int(self.batch.agent_index[agent]))
        success = bool(self.task.agent_success(self._infos, role)[0, agent])
        metrics = self.task.metrics
        event = np.asarray(self._infos.get(metrics.time_key, -1))
        # A per-environment step of the event; a team task's per-agent steps have none.
        step = int(event.reshape(-1)[0]) if event.size == 1 else -1
        return outcome_text(metrics, success, step, self.config.dt)

    def frame(self) -> np.ndarray:
        return self.env.render()[0]

    def close(self) -> None:
        self.env.close()


Session = GymSession | BatchSession


def open_session(task: TaskSpec, config: dict[str, Any]) -> Session:
    """The front end a person plays ``task`` in: its Gymnasium env when it has one, else
    its PettingZoo module's batched form."""
    if task.env_id is not None:
        return GymSession(task, config)
    return BatchSession(task, config)


@dataclass
class PlayResult:
    """What a :func:`play` loop did: window ``frames`` shown, simulation ``steps``,
    ``resets`` (R), the controlled agent at the end, the ``recorded`` pictures (with
    ``record``) and the session, still open."""

    frames: int
    steps: int
    resets: int
    controlled: int
    session: Any
    recorded: list[np.ndarray] = field(default_factory=list)


def play(
    session: Session,
    window: LiveWindow,
    seed: int | None = None,
    max_frames: int | None = None,
    record: bool = False,
    on_frame: Callable[[int], None] | None = None,
) -> PlayResult:
    """Let a person play ``session`` in ``window`` from ``seed`` until ESC, the window's
    close, or ``max_frames`` window frames. ``on_frame(i)`` runs before frame ``i`` reads
    its events (tests post synthetic pygame events there). With ``record``, the pictures
    shown after each reset and each step are kept."""
    pg = window.pygame
    task = session.task
    dt = session.config.dt
    time_limit = session.config.time_limit
    half = session.config.half_size
    held: set[int] = set()
    mouse: tuple[int, int] | None = None
    steer_to_mouse = paused = done = False
    controlled = 0
    reward = episode_return = 0.0
    outcome: str | None = None
    steps = resets = frames = 0
    recorded: list[np.ndarray] = []

    def overlay() -> Overlay:
        vehicle = int(session.batch.agent_index[controlled])
        role = session.batch.team_name(vehicle)
        notes = ["mouse (M: keys)" if steer_to_mouse else "keys (M: mouse)"]
        if len(session.agents) > 1:
            notes.append("TAB: next agent")
        if paused:
            notes.append("paused")
        left = (time_limit - int(session.batch.state.steps[0])) * dt
        highlight = None
        if len(session.agents) > 1:  # which of the outlined learned agents is steered
            where = session.batch.state.position[0, vehicle]
            highlight = tuple(world_to_pixel(where, frame.shape[1], half))
        return Overlay(
            f"{task.name}: {session.agents[controlled]} ({role})",
            reward,
            episode_return,
            left,
            outcome,
            tuple(notes),
            highlight,
        )

    session.reset(seed)
    frame = session.frame()
    shown = window.show(frame, overlay())
    if record:
        recorded.append(shown)
    while max_frames is None or frames < max_frames:
        if on_frame is not None:
            on_frame(frames)
        changed = quit_now = False
        for event in window.events():
            if event.type == pg.KEYDOWN:
                if event.key == pg.K_ESCAPE:
                    quit_now = True
                elif event.key == pg.K_r:
                    session.reset(None)
                    reward = episode_return = 0.0
                    done, outcome, changed = False, None, True
                    resets += 1
                elif event.key == pg.K_SPACE:
                    paused = not paused
                elif event.key == pg.K_TAB:
                    controlled = (controlled + 1) % len(session.agents)
                elif event.key == pg.K_m:
                    steer_to_mouse = not steer_to_mouse
                else:
                    held.add(event.key)
            elif event.type == pg.KEYUP:
                held.discard(event.key)
            elif event.type == pg.MOUSEMOTION:
                mouse = event.pos
        if quit_now or window.closed:
            break
        if not (paused or done):
            if steer_to_mouse and mouse is not None:
                state = session.batch.state
                vehicle = int(session.batch.agent_index[controlled])
                action = mouse_action(
                    state.position[0, vehicle],
                    state.velocity[0, vehicle],
                    state.heading[0, vehicle],
                    float(session.batch.vehicles["max_speed"][vehicle]),
                    pixel_to_world(mouse, frame.shape[1], half),
                )
            else:
                action = keyboard_action(held)
            reward, done = session.step(action, controlled)
            episode_return += reward
            steps += 1
            changed = True
            if done:
                outcome = session.outcome(controlled)
        if changed:
            frame = session.frame()
        shown = window.show(frame, overlay())
        if record and changed:
            recorded.append(shown)
        frames += 1
    return PlayResult(frames, steps, resets, controlled, session, recorded)


def task_named(name: str) -> TaskSpec:
    """The task of the registry named ``name`` (its short name or its Gymnasium id, any
    case); ``argparse.ArgumentTypeError`` listing the names otherwise."""
    key = name.strip().lower()
    for task in REGISTRY.values():
        ids = [task.name] if task.env_id is None else [task.name, task.env_id.lower()]
        if task.env_id is not None:
            ids.append(task.env_id.split("/")[-1].lower())
        if key in ids:
            return task
    raise argparse.ArgumentTypeError(f"unknown task {name!r}: use one of {', '.join(REGISTRY)}")


def build_parser() -> cli.OneLineParser:
    p = cli.OneLineParser(
        prog=PROG,
        description="Play a task from the keyboard (arrows/WASD, M: mouse, TAB: next "
        "agent, R: reset, SPACE: pause, ESC: quit).",
    )
    p.add_argument("task", type=task_named, help=f"the task: {', '.join(REGISTRY)}")
    p.add_argument(
        "--opponent",
        default=None,
        metavar="NAME",
        help="the scripted side's strategy, by name (default: the task's)",
    )
    cli.add_seed(p, None, "the first episode's seed", shown=None)
    p.add_argument(
        "--fps",
        type=cli.fps_int,
        default=None,
        help=f"window frames per second, 1 to {cli.FPS_MAX} (default: real time, 1 / dt)",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="OUT",
        help="write the played frames to OUT (.gif, .mp4 or .png)",
    )
    p.add_argument(
        "--frames",
        type=cli.positive_int,
        default=None,
        help="stop after this many window frames (default: until ESC)",
    )
    return p


def opponent_config(task: TaskSpec, name: str | None) -> dict[str, Any]:
    """The configuration value that makes ``name`` the scripted side (``{}`` for none);
    ``ValueError`` naming ``--opponent`` and the accepted names for a name the task does
    not have."""
    if name is None:
        return {}
    choice = task.opponent_choice(task.config())
    if choice is None:
        raise ValueError(f"--opponent: {task.name} has no scripted side to choose")
    key, names = choice
    picked = name.strip().lower()
    if picked not in names:
        raise ValueError(
            f"--opponent {name!r} is not a scripted side of {task.name}: use one of "
            f"{', '.join(names)}"
        )
    return {key: picked}


def main(argv: list[str] | None = None) -> int:
    from steer_env.rendering import AnimationOutputError, _import_pygame, check_animation_path

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = opponent_config(args.task, args.opponent)
        if args.record is not None:
            check_animation_path(args.record)
    except (ValueError, AnimationOutputError) as exc:
        parser.error(str(exc))
    try:
        pygame = _import_pygame()
    except ImportError as exc:
        return cli.fail(PROG, exc)
    try:
        session = open_session(args.task, config)
        try:
            fps = args.fps or 1.0 / session.config.dt
            window = LiveWindow(f"steer-env: {args.task.name}", fps)
            try:
                result = play(session, window, args.seed, args.frames, args.record is not None)
            finally:
                window.close()
        finally:
            session.close()
        if args.record is not None:
            from steer_env.rendering import write_animation

            path = write_animation(args.record, result.recorded, fps)
            print(f"wrote {path} ({len(result.recorded)} frames)")
    except pygame.error as exc:  # no display to open a window on
        return cli.fail(PROG, f"cannot show a window: {exc}")
    except OSError as exc:
        return cli.fail(PROG, exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
