"""A small pygame renderer for steer-env: it draws the state it is given and nothing else.

The renderer never reads or changes simulation state; environments and the behaviour gallery
(:mod:`steer_env.demos.gallery`) call it with arrays once per frame::

    r = Renderer(bounds=(0.0, 0.0, 40.0, 30.0), width_px=480)
    r.begin_frame()
    r.vehicles(flock.position, flock.heading, flock.radius, ROLE_COLORS["boid"])
    frame = r.finish()            # (H, W, 3) uint8 in "rgb_array" mode
    r.close()

Coordinates passed to the drawing methods are world coordinates in metres with the y axis
pointing up; the renderer flips y for the screen. Text positions are in pixels.

pygame is an optional dependency (``pip install "steer-env[render]"``). It is imported only
when a :class:`Renderer` is built, so importing this module (and :class:`Trails`, which is
pure numpy) works without it.

Every frame is deterministic: the same sequence of calls produces byte-identical arrays.

:func:`write_animation` is the one writer of animations for the whole project (the gallery
and ``agents.render`` use it): GIF, MP4 or PNG (the last frame), chosen by the file's
extension, written atomically.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ANIMATION_EXTENSIONS",
    "PYGAME_MISSING_MESSAGE",
    "RENDER_MODES",
    "ROLE_COLORS",
    "AnimationOutputError",
    "PygameNotInstalled",
    "Renderer",
    "Trails",
    "check_animation_path",
    "write_animation",
]

Color = Sequence[int]

#: RGB colours by role, shared by the environments and the gallery (dark background).
ROLE_COLORS: dict[str, tuple[int, int, int]] = {
    "background": (18, 20, 27),
    "grid": (30, 33, 43),
    "wall": (190, 194, 210),
    "text": (226, 228, 235),
    "pursuer": (235, 78, 66),
    "evader": (74, 163, 245),
    "agent": (255, 208, 46),
    "boid": (143, 196, 228),
    "dog": (235, 78, 66),
    "sheep": (236, 232, 214),
    "pen": (86, 196, 116),
    "robot": (255, 208, 46),
    "human": (74, 163, 245),
    "predator": (235, 78, 66),
    "goal": (86, 196, 116),
    "neighbor": (112, 232, 150),
    "obstacle": (104, 108, 126),
    "path": (86, 196, 116),
    "target": (245, 245, 245),
    "debug": (200, 128, 255),
    "velocity": (236, 236, 236),
    "trail": (88, 98, 122),
    "warning": (255, 92, 92),
}

RENDER_MODES = ("rgb_array", "human")

PYGAME_MISSING_MESSAGE = 'pygame is not installed, run `pip install "steer-env[render]"`'

# pygame.gfxdraw takes 16-bit coordinates; pygame.draw takes C ints. Everything drawn is
# first clipped or culled against the screen grown by this margin (pixels).
_MARGIN_PX = 64.0
_GFX_LIMIT = 32000


class PygameNotInstalled(DependencyNotInstalled, ImportError):
    """pygame is missing: a :class:`gymnasium.error.DependencyNotInstalled` that is also an
    :class:`ImportError`."""


def _import_pygame() -> Any:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
        import pygame.gfxdraw  # the submodule is used as pygame.gfxdraw
    except ImportError as exc:
        raise PygameNotInstalled(PYGAME_MISSING_MESSAGE) from exc
    return pygame


def _check_color(color: Any) -> tuple[int, ...]:
    try:
        c = np.asarray(color, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"color must be an RGB or RGBA tuple, got {color!r}") from None
    if c.shape not in ((3,), (4,)) or not np.all(np.isfinite(c)):
        raise ValueError(f"color must be an RGB or RGBA tuple, got {color!r}")
    return tuple(int(x) for x in np.clip(np.rint(c), 0, 255))


def _colors(color: Any, n: int) -> list[tuple[int, ...]]:
    """One colour or ``n`` colours, as a list of ``n`` integer tuples."""
    try:
        c = np.asarray(color, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"color must be an RGB tuple or a sequence of {n}, got {color!r}"
        ) from None
    if c.ndim == 1:
        return [_check_color(c)] * n
    if c.ndim == 2 and c.shape[0] == n and c.shape[1] in (3, 4):
        return [_check_color(row) for row in c]
    raise ValueError(f"color must be an RGB tuple or a sequence of {n} RGB tuples, got {c.shape}")


def _points(name: str, value: ArrayLike) -> NDArray[np.float64]:
    p = np.asarray(value, dtype=np.float64)
    if p.ndim == 0 or p.shape[-1] != 2:
        raise ValueError(f"{name} must have shape (2,) or (N, 2), got {p.shape}")
    return p.reshape(-1, 2)


def _nice_step(span: float, lines: int = 10) -> float:
    """A 1-2-5 grid spacing giving about ``lines`` lines over ``span``."""
    raw = span / lines
    mag = 10.0 ** math.floor(math.log10(raw))
    for k in (1.0, 2.0, 5.0, 10.0):
        if raw <= k * mag:
            return k * mag
    return 10.0 * mag


class Renderer:
    """Draws world-space shapes onto a pygame surface.

    Args:
        bounds: ``(xmin, ymin, xmax, ymax)`` of the visible world, metres.
        width_px: frame width in pixels (16 to 8192); the height follows the aspect ratio of
            ``bounds``.
        render_mode: ``"rgb_array"`` draws off-screen only and :meth:`finish` returns the
            frame; ``"human"`` opens a window on the first :meth:`finish` and shows frames
            at ``fps``.
        fps: frames per second for ``"human"`` (> 0).
        title: window caption.
        grid: draw a faint metric grid (1-2-5 spacing) under the scene.

    Attributes:
        width, height: frame size in pixels.
        scale: pixels per metre.
        quit_requested: ``True`` once the user closed the window (``"human"`` mode).
    """

    def __init__(
        self,
        bounds: tuple[float, float, float, float],
        width_px: int = 600,
        render_mode: str = "rgb_array",
        fps: int = 30,
        title: str = "steer-env",
        grid: bool = True,
    ) -> None:
        if render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {RENDER_MODES}, got {render_mode!r}")
        if (
            isinstance(width_px, bool)
            or not isinstance(width_px, int | np.integer)
            or not 16 <= width_px <= 8192
        ):
            raise ValueError(f"width_px must be an integer in [16, 8192], got {width_px!r}")
        try:
            b = np.asarray(bounds, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be (xmin, ymin, xmax, ymax), got {bounds!r}") from None
        if b.shape != (4,) or not np.all(np.isfinite(b)) or b[2] <= b[0] or b[3] <= b[1]:
            raise ValueError(
                f"bounds must be finite (xmin, ymin, xmax, ymax) with xmax > xmin and "
                f"ymax > ymin, got {bounds!r}"
            )
        if isinstance(fps, bool) or not isinstance(fps, int | float | np.number):
            raise ValueError(f"fps must be a number > 0, got {fps!r}")
        if not (math.isfinite(float(fps)) and fps > 0):
            raise ValueError(f"fps must be a number > 0, got {fps!r}")
        width = int(width_px)
        height = round(width * (b[3] - b[1]) / (b[2] - b[0]))
        if not 1 <= height <= 8192:
            raise ValueError(
                f"bounds {tuple(b.tolist())} give a frame height of {height} px at width "
                f"{width} px; the aspect ratio must give 1 to 8192 px"
            )
        self._pg = _import_pygame()
        self.bounds = tuple(float(x) for x in b)
        self.width = width
        self.height = int(height)
        self.render_mode = render_mode
        self.fps = fps
        self.title = str(title)
        self.grid = bool(grid)
        self.scale = width / (b[2] - b[0])
        self._sy = self.height / (b[3] - b[1])
        self._canvas = self._pg.Surface((self.width, self.height), 0, 32)
        self._fonts: dict[int, Any] = {}
        self._window: Any = None
        self._clock: Any = None
        self._display_opened = False
        self.quit_requested = False
        self._lo = -_MARGIN_PX
        self._hi_x = self.width + _MARGIN_PX
        self._hi_y = self.height + _MARGIN_PX
        self.begin_frame()

    # --- coordinates
    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return self.width, self.height

    def world_to_screen(self, points: ArrayLike) -> NDArray[np.float64]:
        """``(..., 2)`` world points (m, y up) to ``(..., 2)`` pixel coordinates (y down).

        ``(xmin, ymax)`` maps to ``(0, 0)`` and ``(xmax, ymin)`` to ``(width, height)``.
        """
        p = np.asarray(points, dtype=np.float64)
        xmin, _, _, ymax = self.bounds
        out = np.empty(np.broadcast_shapes(p.shape, (2,)))
        out[..., 0] = (p[..., 0] - xmin) * self.scale
        out[..., 1] = (ymax - p[..., 1]) * self._sy
        return out

    def screen_to_world(self, pixels: ArrayLike) -> NDArray[np.float64]:
        """Inverse of :meth:`world_to_screen`."""
        q = np.asarray(pixels, dtype=np.float64)
        xmin, _, _, ymax = self.bounds
        out = np.empty(np.broadcast_shapes(q.shape, (2,)))
        out[..., 0] = q[..., 0] / self.scale + xmin
        out[..., 1] = ymax - q[..., 1] / self._sy
        return out

    # --- frame
    def begin_frame(self) -> None:
        """Clear to the background colour, draw the grid (if enabled) and the arena border."""
        pg = self._pg
        surf = self._canvas
        surf.fill(ROLE_COLORS["background"])
        if self.grid:
            xmin, ymin, xmax, ymax = self.bounds
            step = _nice_step(max(xmax - xmin, ymax - ymin))
            grid_color = ROLE_COLORS["grid"]
            for gx in np.arange(math.ceil(xmin / step) * step, xmax, step):
                px = round((gx - xmin) * self.scale)
                if 0 < px < self.width:
                    pg.draw.line(surf, grid_color, (px, 0), (px, self.height - 1))
            for gy in np.arange(math.ceil(ymin / step) * step, ymax, step):
                py = round((ymax - gy) * self._sy)
                if 0 < py < self.height:
                    pg.draw.line(surf, grid_color, (0, py), (self.width - 1, py))
        pg.draw.rect(surf, ROLE_COLORS["wall"], pg.Rect(0, 0, self.width, self.height), 2)

    def finish(self) -> np.ndarray | None:
        """End the frame.

        ``"rgb_array"``: return a ``(height, width, 3)`` uint8 copy of the frame.
        ``"human"``: show it in the window (opened on the first call), process window events
        (closing the window sets :attr:`quit_requested`), wait to keep ``fps``, return None.
        """
        pg = self._pg
        if self.render_mode == "rgb_array":
            view = pg.surfarray.pixels3d(self._canvas)
            try:
                frame = np.ascontiguousarray(np.transpose(view, (1, 0, 2)), dtype=np.uint8)
            finally:
                del view  # releases the surface lock
            return frame
        if self._window is None:
            pg.display.init()
            self._display_opened = True
            self._window = pg.display.set_mode((self.width, self.height))
            pg.display.set_caption(self.title)
            self._clock = pg.time.Clock()
        for event in pg.event.get():
            if event.type == pg.QUIT:
                self.quit_requested = True
        self._window.blit(self._canvas, (0, 0))
        pg.display.flip()
        self._clock.tick(self.fps)
        return None

    def close(self) -> None:
        """Close the window if one was opened (quits pygame's display). Idempotent."""
        if self._display_opened:
            self._display_opened = False
            self._window = None
            self._clock = None
            self._pg.display.quit()

    # --- shapes
    def vehicles(
        self,
        position: ArrayLike,
        heading: ArrayLike,
        radius: ArrayLike,
        color: Color | Sequence[Color],
        min_size_px: float = 5.0,
    ) -> None:
        """Oriented arrowheads (notched triangles), nose along ``heading``.

        Args:
            position: ``(N, 2)`` m.
            heading: ``(N, 2)`` unit vectors (world frame).
            radius: ``(N,)`` or scalar, m; the arrowhead spans ``2.4 * radius`` nose to
                tail and ``1.7 * radius`` across, and ``radius`` is drawn as at least
                ``min_size_px / 2`` pixels so small vehicles stay visible.
            color: one RGB(A) tuple, or ``N`` of them.
        """
        p = _points("position", position)
        h = _points("heading", heading)
        n = p.shape[0]
        if h.shape[0] != n:
            raise ValueError(f"heading must have shape ({n}, 2), got {np.shape(heading)}")
        r = np.broadcast_to(np.asarray(radius, dtype=np.float64).reshape(-1), (n,))
        colors = _colors(color, n)
        r = np.maximum(r, 0.5 * min_size_px / self.scale)
        hn = np.linalg.norm(h, axis=1, keepdims=True)
        h = np.divide(h, hn, out=np.tile([1.0, 0.0], (n, 1)), where=hn > 1e-12)
        s = np.stack((-h[:, 1], h[:, 0]), axis=1)
        # A notched arrowhead in the local (forward, side) frame, in units of the radius.
        shape = np.array([[1.4, 0.0], [-1.0, 0.85], [-0.45, 0.0], [-1.0, -0.85]])
        world = (
            p[:, None, :]
            + shape[None, :, 0, None] * h[:, None, :] * r[:, None, None]
            + shape[None, :, 1, None] * s[:, None, :] * r[:, None, None]
        )
        tri = self.world_to_screen(world)  # (N, 4, 2)
        gfx = self._pg.gfxdraw
        surf = self._canvas
        for k in np.flatnonzero(self._visible(tri)):
            pts = [(int(x), int(y)) for x, y in np.rint(tri[k])]
            gfx.filled_polygon(surf, pts, colors[k])
            gfx.aapolygon(surf, pts, colors[k])

    def circle(self, center: ArrayLike, radius: ArrayLike, color: Color, width: int = 1) -> None:
        """Circles of ``radius`` m around ``center`` (``(2,)`` or ``(N, 2)``); ``width`` 0
        fills, 1 draws an antialiased outline, more draws a thick outline. An RGBA colour
        is alpha-blended (``width`` 0 or 1)."""
        c = _points("center", center)
        n = c.shape[0]
        r = np.broadcast_to(np.asarray(radius, dtype=np.float64).reshape(-1), (n,))
        col = _check_color(color)
        w = self._check_width(width, allow_zero=True)
        cpx = self.world_to_screen(c)
        rpx = r * self.scale
        pg = self._pg
        surf = self._canvas
        ok = (
            np.all(np.isfinite(cpx), axis=1)
            & np.isfinite(rpx)
            & (rpx >= 0)
            & (cpx[:, 0] + rpx >= 0)
            & (cpx[:, 0] - rpx <= self.width)
            & (cpx[:, 1] + rpx >= 0)
            & (cpx[:, 1] - rpx <= self.height)
        )
        for k in np.flatnonzero(ok):
            x, y = (int(v) for v in np.rint(cpx[k]))
            rad = max(int(np.rint(rpx[k])), 1)
            if rad < _GFX_LIMIT // 2 and abs(x) < _GFX_LIMIT // 2 and abs(y) < _GFX_LIMIT // 2:
                if w == 0:
                    pg.gfxdraw.filled_circle(surf, x, y, rad, col)
                    pg.gfxdraw.aacircle(surf, x, y, rad, col)
                    continue
                if w == 1:
                    pg.gfxdraw.aacircle(surf, x, y, rad, col)
                    continue
            # Huge circles (zoomed far in) and thick outlines: plain pygame.draw.
            lim = 1_000_000
            x, y, rad = (int(np.clip(v, -lim, lim)) for v in (x, y, rad))
            pg.draw.circle(surf, col[:3], (x, y), rad, w)

    def line(self, start: ArrayLike, end: ArrayLike, color: Color, width: int = 1) -> None:
        """Segments from ``start`` to ``end`` (``(2,)`` or ``(N, 2)`` each, broadcast), m.
        Width 1 is antialiased."""
        a = _points("start", start)
        b = _points("end", end)
        a, b = np.broadcast_arrays(a, b)
        self._segments(self.world_to_screen(a), self.world_to_screen(b), color, width)

    def polyline(
        self, points: ArrayLike, color: Color, width: int = 1, closed: bool = False
    ) -> None:
        """A connected line through ``points`` (``(M, 2)`` m), e.g. a trail or a path;
        ``closed`` joins the last point to the first. Fewer than two points draw nothing."""
        p = _points("points", points)
        if p.shape[0] < 2:
            return
        col = _check_color(color)
        w = self._check_width(width)
        q = self.world_to_screen(p)
        safe = np.all(np.isfinite(q)) and np.all(
            (q[:, 0] >= self._lo) & (q[:, 0] <= self._hi_x)
            & (q[:, 1] >= self._lo) & (q[:, 1] <= self._hi_y)
        )  # fmt: skip
        if safe:
            pts = [(float(x), float(y)) for x, y in q]
            if w == 1:
                self._pg.draw.aalines(self._canvas, col[:3], closed, pts)
            else:
                self._pg.draw.lines(self._canvas, col[:3], closed, pts, w)
            return
        if closed:
            q = np.concatenate((q, q[:1]), axis=0)
        self._segments(q[:-1], q[1:], col, w)

    def point(self, position: ArrayLike, color: Color, size_px: int = 3) -> None:
        """Filled dots of ``size_px`` pixels radius at ``position`` (``(2,)`` or ``(N, 2)``)."""
        p = _points("position", position)
        col = _check_color(color)
        size = self._check_width(size_px, name="size_px")
        q = self.world_to_screen(p)
        gfx = self._pg.gfxdraw
        for k in np.flatnonzero(self._visible(q[:, None, :])):
            x, y = (int(v) for v in np.rint(q[k]))
            gfx.filled_circle(self._canvas, x, y, size, col)
            gfx.aacircle(self._canvas, x, y, size, col)

    def text(
        self,
        text: str,
        xy_px: tuple[int, int],
        color: Color = ROLE_COLORS["text"],
        size_px: int = 16,
        background: Color | None = None,
    ) -> None:
        """Antialiased text with its top-left corner at pixel ``xy_px`` (pygame's default
        font, ``size_px`` high), over a one-pixel dark shadow for contrast; ``background``
        (RGB or RGBA, alpha-blended) fills a box behind it."""
        col = _check_color(color)
        size = self._check_width(size_px, name="size_px")
        font = self._font(size)
        x, y = (int(v) for v in xy_px)
        label = font.render(str(text), True, col[:3])
        if background is not None:
            bg = _check_color(background)
            box = self._pg.Surface(
                (label.get_width() + 6, label.get_height() + 2), self._pg.SRCALPHA
            )
            box.fill(bg if len(bg) == 4 else (*bg, 255))
            self._canvas.blit(box, (x - 3, y - 1))
        shadow = font.render(str(text), True, ROLE_COLORS["background"])
        self._canvas.blit(shadow, (x + 1, y + 1))
        self._canvas.blit(label, (x, y))

    # --- helpers
    def _font(self, size: int) -> Any:
        font = self._fonts.get(size)
        if font is None:
            if not self._pg.font.get_init():
                self._pg.font.init()
            font = self._pg.font.Font(None, size)
            self._fonts[size] = font
        return font

    @staticmethod
    def _check_width(width: Any, allow_zero: bool = False, name: str = "width") -> int:
        if isinstance(width, bool) or not isinstance(width, int | np.integer):
            raise ValueError(f"{name} must be an integer, got {width!r}")
        if width < (0 if allow_zero else 1) or width > 1000:
            low = 0 if allow_zero else 1
            raise ValueError(f"{name} must be in [{low}, 1000], got {width!r}")
        return int(width)

    def _visible(self, shapes: NDArray[np.float64]) -> NDArray[np.bool_]:
        """For ``(N, K, 2)`` pixel shapes: finite and overlapping the (grown) screen, with
        every vertex inside gfxdraw's coordinate range."""
        finite = np.all(np.isfinite(shapes), axis=(1, 2))
        with np.errstate(invalid="ignore"):
            lo = shapes.min(axis=1)
            hi = shapes.max(axis=1)
            overlap = (
                (hi[:, 0] >= self._lo) & (lo[:, 0] <= self._hi_x)
                & (hi[:, 1] >= self._lo) & (lo[:, 1] <= self._hi_y)
            )  # fmt: skip
            in_range = np.all(np.abs(shapes) < _GFX_LIMIT, axis=(1, 2))
        return finite & overlap & in_range

    def _segments(
        self, a: NDArray[np.float64], b: NDArray[np.float64], color: Color, width: int
    ) -> None:
        """Draw pixel-space segments ``a[k] -> b[k]``, clipped to the grown screen."""
        col = _check_color(color)[:3]
        w = self._check_width(width)
        a, b, ok = _clip_segments(a, b, self._lo, self._lo, self._hi_x, self._hi_y)
        draw = self._pg.draw
        for k in np.flatnonzero(ok):
            p0 = (float(a[k, 0]), float(a[k, 1]))
            p1 = (float(b[k, 0]), float(b[k, 1]))
            if w == 1:
                draw.aaline(self._canvas, col, p0, p1)
            else:
                draw.line(self._canvas, col, p0, p1, w)


def _clip_segments(
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    xmin: float,
    ymin: float,
    xmax: float,
    ymax: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """Liang-Barsky clipping of segments ``a -> b`` (``(N, 2)``) to a rectangle.

    Returns the clipped end points and a mask of segments that are finite and intersect it.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = b - a
    finite = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
    t0 = np.zeros(a.shape[0])
    t1 = np.ones(a.shape[0])
    ok = finite.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        for p, q in (
            (-d[:, 0], a[:, 0] - xmin),
            (d[:, 0], xmax - a[:, 0]),
            (-d[:, 1], a[:, 1] - ymin),
            (d[:, 1], ymax - a[:, 1]),
        ):
            parallel = p == 0
            ok &= ~(parallel & (q < 0))
            r = q / np.where(parallel, 1.0, p)
            entering = ~parallel & (p < 0)
            leaving = ~parallel & (p > 0)
            t0 = np.where(entering, np.maximum(t0, r), t0)
            t1 = np.where(leaving, np.minimum(t1, r), t1)
    ok &= t0 <= t1
    ca = a + d * t0[:, None]
    cb = a + d * t1[:, None]
    return ca, cb, ok


class Trails:
    """The last ``maxlen`` positions of ``N`` vehicles, as a numpy ring buffer.

    ``reset(positions)`` starts the trails at ``(N, 2)`` positions, ``push(positions)``
    appends one time step (the oldest is dropped once ``maxlen`` are held) and
    ``get(index)`` returns vehicle ``index``'s ``(m, 2)`` points, oldest first.
    """

    def __init__(self, maxlen: int) -> None:
        if isinstance(maxlen, bool) or not isinstance(maxlen, int | np.integer) or maxlen < 1:
            raise ValueError(f"maxlen must be an integer >= 1, got {maxlen!r}")
        self.maxlen = int(maxlen)
        self._buf: NDArray[np.float64] | None = None
        self._start = 0
        self._count = 0

    def __len__(self) -> int:
        """Number of time steps held (at most ``maxlen``)."""
        return self._count

    @property
    def n_vehicles(self) -> int:
        return 0 if self._buf is None else self._buf.shape[1]

    def reset(self, positions: ArrayLike) -> None:
        """Forget everything and start every trail at ``positions`` ``(N, 2)``."""
        p = np.asarray(positions, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != 2:
            raise ValueError(f"positions must have shape (N, 2), got {p.shape}")
        self._buf = np.empty((self.maxlen, p.shape[0], 2))
        self._buf[0] = p
        self._start = 0
        self._count = 1

    def push(self, positions: ArrayLike) -> None:
        """Append one time step of ``(N, 2)`` positions (starts the trails if empty)."""
        if self._buf is None:
            self.reset(positions)
            return
        p = np.asarray(positions, dtype=np.float64)
        if p.shape != self._buf.shape[1:]:
            raise ValueError(
                f"positions must have shape {self._buf.shape[1:]} (as at reset), got {p.shape}"
            )
        if self._count < self.maxlen:
            self._buf[(self._start + self._count) % self.maxlen] = p
            self._count += 1
        else:
            self._buf[self._start] = p
            self._start = (self._start + 1) % self.maxlen

    def _order(self) -> NDArray[np.intp]:
        return (self._start + np.arange(self._count)) % self.maxlen

    def get(self, index: int) -> NDArray[np.float64]:
        """``(m, 2)`` positions of vehicle ``index``, oldest first (a copy)."""
        if self._buf is None:
            return np.empty((0, 2))
        n = self._buf.shape[1]
        if not -n <= index < n:
            raise IndexError(f"vehicle index {index} out of range for {n} vehicles")
        return self._buf[self._order(), index].copy()

    def get_all(self) -> NDArray[np.float64]:
        """``(m, N, 2)`` positions of every vehicle, oldest first (a copy)."""
        if self._buf is None:
            return np.empty((0, 0, 2))
        return self._buf[self._order()].copy()


def tile_frames(frames: Sequence[np.ndarray]) -> np.ndarray:
    """``(H, W, 3)`` frames of equal size tiled row by row in a near-square grid (blank
    cells black): one picture of many environments."""
    count = len(frames)
    cols = math.ceil(math.sqrt(count))
    rows = math.ceil(count / cols)
    h, w, c = frames[0].shape
    out = np.zeros((rows * h, cols * w, c), dtype=np.uint8)
    for k, frame in enumerate(frames):
        r, q = divmod(k, cols)
        out[r * h : (r + 1) * h, q * w : (q + 1) * w] = frame
    return out


class FrameWindow:
    """A pygame window that shows ready-made ``(H, W, 3)`` frames at ``fps`` (the vector
    env's ``"human"`` mode shows its tiled environments with it)."""

    def __init__(self, title: str = "steer-env", fps: float = 30) -> None:
        self._pg = _import_pygame()
        self.title = title
        self.fps = fps
        self._window: Any = None
        self._clock: Any = None
        self.quit_requested = False

    def show(self, frame: np.ndarray) -> None:
        """Display ``frame`` (the window opens, or resizes, to fit it)."""
        pg = self._pg
        h, w = frame.shape[:2]
        if self._window is None or self._window.get_size() != (w, h):
            pg.display.init()
            self._window = pg.display.set_mode((w, h))
            pg.display.set_caption(self.title)
            self._clock = pg.time.Clock()
        for event in pg.event.get():
            if event.type == pg.QUIT:
                self.quit_requested = True
        pg.surfarray.blit_array(self._window, np.transpose(frame, (1, 0, 2)))
        pg.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        """Close the window (idempotent)."""
        if self._window is not None:
            self._window = None
            self._pg.display.quit()


# ------------------------------------------------------------------ animation files
#: What :func:`write_animation` writes, by extension (``.png``: the last frame only).
ANIMATION_EXTENSIONS = (".gif", ".mp4", ".png")
MP4_MISSING_MESSAGE = (
    'writing .mp4 needs imageio\'s ffmpeg plugin (imageio-ffmpeg): pip install "steer-env[render]"'
)


class AnimationOutputError(ValueError):
    """An output file :func:`write_animation` cannot write: unknown extension, or MP4
    without imageio's ffmpeg plugin. The message is one line."""


def check_animation_path(path: str | os.PathLike[str]) -> str:
    """The extension of ``path`` (``.gif``, ``.mp4`` or ``.png``) if :func:`write_animation`
    can write it here, else :class:`AnimationOutputError`; cheap, so tools call it before
    simulating anything."""
    ext = Path(path).suffix.lower()
    if ext not in ANIMATION_EXTENSIONS:
        raise AnimationOutputError(
            f"cannot write {os.fspath(path)!r}: the file name must end in "
            f"{', '.join(ANIMATION_EXTENSIONS)}"
        )
    try:
        import imageio  # noqa: F401
        from PIL import Image  # noqa: F401
    except ImportError:
        raise AnimationOutputError(
            'writing animations needs imageio and Pillow: pip install "steer-env[render]"'
        ) from None
    if ext == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise AnimationOutputError(MP4_MISSING_MESSAGE) from None
    return ext


def _rgb(frame: Any) -> NDArray[np.uint8]:
    a = np.asarray(frame)
    if a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"frames must be (H, W, 3) RGB arrays, got shape {a.shape}")
    return np.ascontiguousarray(a[..., :3], dtype=np.uint8)


def _write_gif(tmp: Path, frames: list[NDArray[np.uint8]], fps: float) -> None:
    """Looping GIF; every frame shares one 256-colour palette computed from five sampled
    frames (the scenes use a small set of colours): ~10x faster than a palette per frame
    and a smaller file."""
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    picks = np.linspace(0, len(images) - 1, min(5, len(images))).astype(int)
    sample = np.concatenate([frames[i] for i in picks], axis=0)
    palette = Image.fromarray(sample).quantize(
        colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
    )
    paletted = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    paletted[0].save(
        tmp,
        format="GIF",
        save_all=True,
        append_images=paletted[1:],
        duration=max(1, round(1000.0 / fps)),
        loop=0,
        optimize=False,
        disposal=1,
    )


def write_animation(path: str | os.PathLike[str], frames: Iterable[Any], fps: float = 10.0) -> Path:
    """Write ``frames`` (``(H, W, 3)`` uint8 RGB arrays of one size; ``None`` entries are
    skipped) to ``path`` by its extension: ``.gif`` (looping, Pillow), ``.mp4`` (H.264 at
    ``fps`` through imageio's ffmpeg plugin; odd sizes padded by one pixel) or ``.png``
    (the last frame). The file is written to a temporary file in the same folder and moved
    into place (:func:`steer_env.cli.atomic_output`), so it is never half-written.

    Raises :class:`AnimationOutputError` for an extension it cannot write (checked before
    ``frames`` is consumed) and ``ValueError`` for no frames or a bad ``fps``."""
    from steer_env.cli import atomic_output

    ext = check_animation_path(path)
    if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}")
    path = Path(path)
    with atomic_output(path) as tmp:
        if ext == ".mp4":
            import imageio.v2 as iio2

            count = 0
            writer = iio2.get_writer(
                tmp, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                macro_block_size=1, pixelformat="yuv420p",
            )  # fmt: skip
            with writer:
                for frame in frames:
                    if frame is None:
                        continue
                    f = _rgb(frame)
                    h, w = f.shape[:2]  # yuv420p needs even sizes: pad by one pixel
                    writer.append_data(np.pad(f, ((0, h % 2), (0, w % 2), (0, 0)), "edge"))
                    count += 1
            if not count:
                raise ValueError("no frames to write")
        elif ext == ".gif":
            rgb = [_rgb(f) for f in frames if f is not None]
            if not rgb:
                raise ValueError("no frames to write")
            _write_gif(tmp, rgb, fps)
        else:  # .png: the last frame
            last = None
            for frame in frames:
                if frame is not None:
                    last = frame
            if last is None:
                raise ValueError("no frames to write")
            from PIL import Image

            Image.fromarray(_rgb(last)).save(tmp, format="PNG")
    return path
