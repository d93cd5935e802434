"""Live windows: the keyboard's and the mouse's steering actions, the status overlay, and
the window that shows an episode's frames at real time.

``python -m steer_env.play`` (a person steers the learned agent) and ``python -m
agents.render --human`` (a model plays) both show their frames in a :class:`LiveWindow`,
whose overlay (:func:`draw_overlay`, the one drawing of it) reports the step's reward, the
episode's return, the time left and the task's outcome once the episode ends.

Actions are the envs' own: ``(forward, side)`` in the agent's frame (x along its heading,
y to its left), in units of its max force, magnitude at most 1. The arrow keys and WASD
give the unit directions and their diagonals (:func:`keyboard_action`);
:func:`mouse_action` seeks the cursor; :func:`keys_to_action` is the same mapping in the
form :func:`gymnasium.utils.play.play` takes (the single-agent envs return it from
``get_keys_to_action()``)::

    import gymnasium as gym
    from gymnasium.utils.play import play
    from steer_env.live import NOOP

    env = gym.make("steer_env/Pursuit-v0", render_mode="rgb_array")
    play(env, keys_to_action=env.unwrapped.get_keys_to_action(), noop=NOOP)

pygame is imported only when a window is built or a key mapping is asked for (``pip
install "steer-env[render]"``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env.rendering import ROLE_COLORS, _import_pygame

__all__ = [
    "NOOP",
    "LiveWindow",
    "Overlay",
    "draw_overlay",
    "keyboard_action",
    "keys_to_action",
    "mouse_action",
    "outcome_text",
    "pixel_to_world",
    "world_to_pixel",
]

#: The action of no key: no force.
NOOP: NDArray[np.float32] = np.zeros(2, dtype=np.float32)

# (forward, side) of each movement key, by its pygame constant (K_...); side: + to the left.
_DIRECTIONS = {
    "UP": (1.0, 0.0),
    "w": (1.0, 0.0),
    "DOWN": (-1.0, 0.0),
    "s": (-1.0, 0.0),
    "LEFT": (0.0, 1.0),
    "a": (0.0, 1.0),
    "RIGHT": (0.0, -1.0),
    "d": (0.0, -1.0),
}


def _key_codes() -> dict[int, tuple[float, float]]:
    pg = _import_pygame()
    return {getattr(pg, f"K_{name}"): direction for name, direction in _DIRECTIONS.items()}


def keyboard_action(held: Collection[int]) -> NDArray[np.float32]:
    """The action of the movement keys in ``held`` (pygame key codes; other keys are
    ignored): the sum of their directions (UP/W forward, DOWN/S backward, LEFT/A to the
    left, RIGHT/D to the right), scaled to length 1, so a diagonal is full force at 45
    degrees; opposite keys cancel."""
    codes = _key_codes()
    total = np.zeros(2)
    for key in set(held):
        if key in codes:
            total += codes[key]
    # Holding W and UP together is one direction, not twice the force.
    total = np.clip(total, -1.0, 1.0)
    norm = math.hypot(*total)
    return (total / norm if norm > 0 else total).astype(np.float32)


def keys_to_action() -> dict[tuple[int, ...], NDArray[np.float32]]:
    """The movement keys as :func:`gymnasium.utils.play.play` takes them: every single
    key and every two-key diagonal (one hand: WASD, or the arrows) mapped to its fixed
    action (:func:`keyboard_action`); no key is :data:`NOOP`, play's ``noop``."""
    pg = _import_pygame()
    mapping: dict[tuple[int, ...], NDArray[np.float32]] = {}
    for keys in (("w", "a", "s", "d"), ("UP", "LEFT", "DOWN", "RIGHT")):
        codes = [getattr(pg, f"K_{k}") for k in keys]
        for i, a in enumerate(codes):
            mapping[(a,)] = keyboard_action([a])
            for b in codes[i + 1 :]:
                combo = keyboard_action([a, b])
                if np.any(combo):  # opposite keys cancel: no entry, play's noop applies
                    mapping[tuple(sorted((a, b)))] = combo
    return mapping


def mouse_action(
    position: Sequence[float],
    velocity: Sequence[float],
    heading: Sequence[float],
    max_speed: float,
    target: Sequence[float],
) -> NDArray[np.float32]:
    """Full force along Reynolds' seek of ``target`` (the cursor, world m) for a vehicle at
    ``position`` with ``velocity`` and ``heading`` (world frame), in the vehicle's frame;
    no force once its centre is at the target (within 1 cm)."""
    from steer_env import behaviors

    p = np.asarray(position, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    if math.hypot(*(t - p)) < 0.01:
        return NOOP.copy()
    v = np.asarray(velocity, dtype=np.float64)
    steer = np.asarray(behaviors.seek(p, v, t, float(max_speed)), dtype=np.float64)
    h = np.asarray(heading, dtype=np.float64)
    local = np.array([steer @ h, steer @ np.array([-h[1], h[0]])])
    norm = math.hypot(*local)
    return (local / norm if norm > 0 else local).astype(np.float32)


def pixel_to_world(pixel: Sequence[float], frame_width: int, half_size: float) -> NDArray:
    """The world point (m, y up) under ``pixel`` of a frame ``frame_width`` px wide that
    shows the square arena ``[-half_size, half_size]^2``, as the envs draw it."""
    scale = frame_width / (2.0 * half_size)
    return np.array([pixel[0] / scale - half_size, half_size - pixel[1] / scale])


def world_to_pixel(point: Sequence[float], frame_width: int, half_size: float) -> NDArray:
    """Inverse of :func:`pixel_to_world`."""
    scale = frame_width / (2.0 * half_size)
    return np.array([(point[0] + half_size) * scale, (half_size - point[1]) * scale])


def outcome_text(metrics: Any, success: bool, event_step: int, dt: float) -> str:
    """An ended episode's outcome in the task's words (``metrics``: the task's
    :class:`~steer_env.tasks.protocol.Metrics`): ``success`` or ``failure``, then its
    timed event (``labels["event"]`` at ``event_step * dt`` s, ``labels["no_event"]``
    when ``event_step`` is -1) where the task names one."""
    head = "success" if success else "failure"
    labels = metrics.labels
    if event_step >= 0 and "event" in labels:
        return f"{head}: {labels['event']} at {event_step * dt:.1f} s"
    if event_step < 0 and "no_event" in labels:
        return f"{head}: {labels['no_event']}"
    return head


@dataclass
class Overlay:
    """What the overlay reports: ``title`` (the task and the agent), the last step's
    ``reward``, the episode's return, the time left (s), the ``outcome`` once the episode
    ended (``None`` before), further ``notes`` (paused, mouse steering, speed) and the
    pixel of the vehicle to ``highlight`` (the one a person steers among several)."""

    title: str
    reward: float = 0.0
    episode_return: float = 0.0
    time_left: float = 0.0
    outcome: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    highlight: tuple[float, float] | None = None

    def lines(self) -> list[str]:
        """The overlay's lines of text, top to bottom."""
        lines = [
            self.title,
            f"reward {self.reward:+.3f}   return {self.episode_return:+.3f}",
            f"time left {max(self.time_left, 0.0):.1f} s",
        ]
        if self.outcome is not None:
            lines.append(self.outcome)
        if self.notes:
            lines.append("   ".join(self.notes))
        return lines


def draw_overlay(surface: Any, overlay: Overlay, font: Any) -> None:
    """Draw ``overlay``'s lines at the bottom left of ``surface`` (a pygame surface) with
    ``font``, over a translucent box so they read on any part of the arena, and a ring
    around the highlighted vehicle."""
    pg = _import_pygame()
    if overlay.highlight is not None:
        x, y = (round(v) for v in overlay.highlight)
        pg.draw.circle(surface, ROLE_COLORS["target"], (x, y), 20, 2)
    rendered = [font.render(line, True, ROLE_COLORS["text"]) for line in overlay.lines()]
    width = max(r.get_width() for r in rendered) + 12
    height = sum(r.get_height() + 2 for r in rendered) + 8
    top = surface.get_height() - height - 6
    box = pg.Surface((width, height), pg.SRCALPHA)
    box.fill((*ROLE_COLORS["background"], 160))
    surface.blit(box, (6, top))
    y = top + 4
    for r in rendered:
        surface.blit(r, (12, y))
        y += r.get_height() + 2


class LiveWindow:
    """A pygame window showing frames with the :class:`Overlay` at ``fps`` frames per
    second (the simulation's real time is ``1 / dt``).

    :meth:`events` returns the window's pending pygame events (a ``QUIT`` sets
    :attr:`closed`); :meth:`show` draws a frame and its overlay, waits for the frame's
    time, and returns what the window shows (an ``(H, W, 3)`` uint8 array), which
    recordings keep."""

    def __init__(self, title: str = "steer-env", fps: float = 10.0) -> None:
        if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
            raise ValueError(f"fps must be a positive number, got {fps!r}")
        self._pg = _import_pygame()
        self.title = title
        self.fps = float(fps)
        self.closed = False
        self._window: Any = None
        self._clock: Any = None
        self._font: Any = None

    @property
    def pygame(self) -> Any:
        """The pygame module the window runs on (its event types and key constants)."""
        return self._pg

    def open(self, size: tuple[int, int]) -> None:
        """Open the window at ``size`` (width, height) px, or resize it."""
        pg = self._pg
        if self._window is None or self._window.get_size() != tuple(size):
            pg.display.init()
            pg.font.init()
            self._window = pg.display.set_mode(tuple(size))
            pg.display.set_caption(self.title)
            self._clock = pg.time.Clock()
            self._font = pg.font.Font(None, 20)

    def events(self) -> list[Any]:
        """The pending window events (keys, mouse, ``QUIT``)."""
        if self._window is None:
            return []
        events = self._pg.event.get()
        if any(e.type == self._pg.QUIT for e in events):
            self.closed = True
        return events

    def show(self, frame: np.ndarray, overlay: Overlay) -> NDArray[np.uint8]:
        """Show ``frame`` with ``overlay``, keeping :attr:`fps`; return the shown picture."""
        pg = self._pg
        frame = np.asarray(frame, dtype=np.uint8)[..., :3]
        self.open((frame.shape[1], frame.shape[0]))
        pg.surfarray.blit_array(self._window, np.transpose(frame, (1, 0, 2)))
        draw_overlay(self._window, overlay, self._font)
        pg.display.flip()
        self._clock.tick(self.fps)
        shown = pg.surfarray.array3d(self._window)
        return np.ascontiguousarray(np.transpose(shown, (1, 0, 2)))

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self._window is not None:
            self._window = None
            self._pg.display.quit()
