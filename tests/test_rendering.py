"""Tests for steer_env.rendering: the pygame Renderer (headless) and the Trails buffer."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

import importlib
import sys

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

import steer_env
from steer_env.rendering import PYGAME_MISSING_MESSAGE, ROLE_COLORS, Renderer, Trails

pygame = pytest.importorskip("pygame")

BOUNDS = (0.0, 0.0, 40.0, 30.0)


def blank(r: Renderer) -> np.ndarray:
    r.begin_frame()
    return r.finish()


def has_color(region: np.ndarray, color) -> bool:
    return bool(np.any(np.all(region == np.array(color[:3], dtype=np.uint8), axis=-1)))


# --- construction and frames
@pytest.mark.parametrize(
    ("bounds", "width", "height"),
    [((0.0, 0.0, 40.0, 30.0), 200, 150), ((-5.0, -5.0, 5.0, 15.0), 100, 200), (BOUNDS, 17, 13)],
)
def test_frame_shape_follows_aspect_ratio(bounds, width, height):
    r = Renderer(bounds, width_px=width)
    frame = blank(r)
    assert frame.shape == (height, width, 3)
    assert frame.dtype == np.uint8
    assert (r.width, r.height) == (width, height)
    assert frame.flags["C_CONTIGUOUS"]
    r.close()


def test_finish_returns_a_copy():
    r = Renderer(BOUNDS, 120)
    first = blank(r)
    kept = first.copy()
    r.begin_frame()
    r.circle([20.0, 15.0], 10.0, ROLE_COLORS["agent"], width=0)
    second = r.finish()
    assert np.array_equal(first, kept)
    assert not np.array_equal(first, second)


def test_background_and_border_colors():
    r = Renderer(BOUNDS, 200, grid=False)
    frame = blank(r)
    assert tuple(frame[75, 100]) == ROLE_COLORS["background"]
    assert tuple(frame[0, 100]) == ROLE_COLORS["wall"]
    assert tuple(frame[75, 0]) == ROLE_COLORS["wall"]
    assert tuple(frame[149, 199]) == ROLE_COLORS["wall"]


def test_world_to_screen_corners_and_y_flip():
    r = Renderer((-10.0, 5.0, 30.0, 35.0), 400)
    assert r.height == 300
    corners = np.array([[-10.0, 35.0], [30.0, 35.0], [-10.0, 5.0], [30.0, 5.0]])
    expected = np.array([[0.0, 0.0], [400.0, 0.0], [0.0, 300.0], [400.0, 300.0]])
    np.testing.assert_allclose(r.world_to_screen(corners), expected)
    np.testing.assert_allclose(r.world_to_screen([10.0, 20.0]), [200.0, 150.0])
    # y up in the world is y down on screen
    low, high = r.world_to_screen([[0.0, 10.0], [0.0, 20.0]])
    assert high[1] < low[1]
    assert r.world_to_screen(np.zeros((3, 4, 2))).shape == (3, 4, 2)
    np.testing.assert_allclose(r.screen_to_world(r.world_to_screen(corners)), corners)
    assert r.scale == pytest.approx(10.0)


# --- drawing
def test_vehicle_changes_pixels_at_its_location_with_its_color():
    r = Renderer(BOUNDS, 200, grid=False)
    empty = blank(r)
    r.begin_frame()
    r.vehicles([[20.0, 15.0]], [[1.0, 0.0]], [1.5], ROLE_COLORS["pursuer"])
    frame = r.finish()
    x, y = (int(v) for v in r.world_to_screen([20.0, 15.0]))
    assert (x, y) == (100, 75)
    region = frame[y - 12 : y + 13, x - 12 : x + 13]
    assert not np.array_equal(region, empty[y - 12 : y + 13, x - 12 : x + 13])
    assert tuple(frame[y, x]) == ROLE_COLORS["pursuer"]
    assert not has_color(empty, ROLE_COLORS["pursuer"])
    # Nothing drawn far from the vehicle.
    assert np.array_equal(frame[:, :60], empty[:, :60])


def _extent(frame: np.ndarray, color, x: int, y: int) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(np.all(frame == np.array(color, dtype=np.uint8), axis=-1))
    return xs.max() - x, x - xs.min(), y - ys.min(), ys.max() - y  # right, left, up, down


@pytest.mark.parametrize(
    ("heading", "longest"), [((1.0, 0.0), 0), ((-1.0, 0.0), 1), ((0.0, 1.0), 2), ((0.0, -1.0), 3)]
)
def test_vehicle_points_along_heading_with_y_up(heading, longest):
    r = Renderer(BOUNDS, 200, grid=False)
    r.begin_frame()
    r.vehicles([[20.0, 15.0]], [heading], 2.0, ROLE_COLORS["agent"])
    ext = _extent(r.finish(), ROLE_COLORS["agent"], 100, 75)
    assert int(np.argmax(ext)) == longest, ext


def test_vehicles_per_vehicle_colors_and_minimum_size():
    r = Renderer(BOUNDS, 200, grid=False)
    r.begin_frame()
    pos = np.array([[5.0, 5.0], [20.0, 15.0], [35.0, 25.0]])
    colors = [ROLE_COLORS["pursuer"], ROLE_COLORS["evader"], ROLE_COLORS["agent"]]
    # radius 0.01 m is 0.05 px: drawn at the minimum size instead of vanishing
    r.vehicles(pos, np.tile([0.0, 1.0], (3, 1)), 0.01, colors)
    frame = r.finish()
    for p, c in zip(pos, colors, strict=True):
        x, y = (int(v) for v in r.world_to_screen(p))
        assert has_color(frame[y - 4 : y + 5, x - 4 : x + 5], c)


def test_shapes_draw_where_asked():
    r = Renderer(BOUNDS, 200, grid=False)
    empty = blank(r)
    c = ROLE_COLORS
    r.begin_frame()
    r.circle([10.0, 20.0], 2.0, c["obstacle"], width=0)
    r.circle([30.0, 20.0], 2.0, c["debug"], width=1)
    r.line([2.0, 2.0], [38.0, 2.0], c["path"], width=3)
    r.polyline([[5.0, 10.0], [15.0, 10.0], [15.0, 5.0]], c["trail"], closed=True)
    r.point([[30.0, 8.0], [32.0, 8.0]], c["agent"], size_px=3)
    frame = r.finish()
    assert tuple(frame[50, 50]) == c["obstacle"]  # filled disc centre (10, 20) m
    assert tuple(frame[50, 150]) == c["background"]  # outline only: centre untouched
    assert has_color(frame[38:63, 135:166], c["debug"])
    assert has_color(frame[137:143, 10:190], c["path"])
    assert has_color(frame[108:113, 148:153], c["agent"])
    assert not np.array_equal(frame[70:105, 20:80], empty[70:105, 20:80])  # polyline


def test_translucent_circle_blends():
    r = Renderer(BOUNDS, 200, grid=False)
    r.begin_frame()
    r.circle([20.0, 15.0], 5.0, (255, 0, 0, 128), width=0)
    px = r.finish()[75, 100].astype(int)
    bg = np.array(ROLE_COLORS["background"])
    assert bg[0] < px[0] < 255 and px[1] <= bg[1] + 1


def test_text_renders_headless():
    r = Renderer(BOUNDS, 200, grid=False)
    empty = blank(r)
    r.begin_frame()
    r.text("t = 1.00 s", (5, 5), size_px=14)
    r.text("boxed", (5, 40), color=ROLE_COLORS["agent"], background=(0, 0, 0, 128))
    frame = r.finish()
    assert not np.array_equal(frame[5:20, 5:80], empty[5:20, 5:80])
    assert has_color(frame[35:60, 0:80], ROLE_COLORS["agent"])


def test_far_away_and_non_finite_coordinates_are_harmless():
    r = Renderer(BOUNDS, 100)
    empty = blank(r)
    r.begin_frame()
    big = 1e12
    r.vehicles([[big, big], [np.nan, 0.0], [-big, 3.0]], [[1.0, 0.0]] * 3, 0.5, (255, 0, 0))
    r.circle([[big, 0.0], [np.inf, 1.0]], [1.0, 1.0], (255, 0, 0), width=0)
    r.circle([20.0, 15.0], 1e9, (255, 0, 0), width=1)  # screen inside the circle
    r.line([[big, big]], [[big + 1, big]], (255, 0, 0))
    r.line([np.nan, 0.0], [1.0, 1.0], (255, 0, 0))
    r.polyline([[big, 0.0], [big, 1.0], [np.nan, 2.0]], (255, 0, 0), width=2)
    r.point([[-big, -big]], (255, 0, 0))
    assert np.array_equal(r.finish(), empty)
    # A line from far outside crossing the screen is still drawn (clipped).
    r.begin_frame()
    r.line([-1e9, 14.0], [1e9, 14.0], (255, 0, 0))  # pixel row 40
    r.polyline([[-1e9, 20.0], [1e9, 20.0]], (255, 0, 0))  # pixel row 25
    frame = r.finish()
    assert has_color(frame[38:43, 10:90], (255, 0, 0))
    assert has_color(frame[23:28, 10:90], (255, 0, 0))


def _scene(r: Renderer) -> np.ndarray:
    rng = np.random.default_rng(7)
    pos = rng.uniform(0.0, 40.0, size=(50, 2)) * [1.0, 0.75]
    ang = rng.uniform(0.0, 2 * np.pi, 50)
    r.begin_frame()
    r.circle(pos[:5], 2.0, (*ROLE_COLORS["debug"], 40), width=0)
    r.polyline(pos[:10], ROLE_COLORS["path"], width=2)
    r.line(pos[:10], pos[10:20], ROLE_COLORS["debug"])
    r.vehicles(pos, np.stack((np.cos(ang), np.sin(ang)), 1), 0.6, ROLE_COLORS["boid"])
    r.point(pos[20:], ROLE_COLORS["agent"])
    r.text("determinism", (4, 4))
    return r.finish()


def test_identical_calls_give_identical_frames():
    a = _scene(Renderer(BOUNDS, 160))
    b = _scene(Renderer(BOUNDS, 160))
    r = Renderer(BOUNDS, 160)
    c1, c2 = _scene(r), _scene(r)
    assert a.tobytes() == b.tobytes() == c1.tobytes() == c2.tobytes()


# --- windows
def test_rgb_array_never_opens_a_window(monkeypatch):
    def no_window(*args, **kwargs):
        raise AssertionError("display.set_mode called in rgb_array mode")

    was_init = pygame.display.get_init()
    monkeypatch.setattr(pygame.display, "set_mode", no_window)
    r = Renderer(BOUNDS, 120, render_mode="rgb_array")
    _scene(r)
    r.text("x", (1, 1))
    r.close()
    assert pygame.display.get_init() == was_init
    if not was_init:
        assert pygame.display.get_surface() is None


def test_close_is_idempotent():
    r = Renderer(BOUNDS, 120)
    r.close()
    r.close()
    h = Renderer(BOUNDS, 120, render_mode="human", fps=1000)
    h.close()  # before any window
    h.close()


def test_human_mode_opens_window_lazily_and_closes(monkeypatch):
    opened = []
    set_mode = pygame.display.set_mode

    def spy(*args, **kwargs):
        opened.append(args)
        return set_mode(*args, **kwargs)

    monkeypatch.setattr(pygame.display, "set_mode", spy)
    r = Renderer(BOUNDS, 120, render_mode="human", fps=1000, title="test window")
    r.begin_frame()
    r.vehicles([[20.0, 15.0]], [[1.0, 0.0]], 1.0, ROLE_COLORS["agent"])
    assert opened == []  # lazy: nothing opened before the first frame is shown
    assert r.finish() is None
    assert len(opened) == 1
    surface = pygame.display.get_surface()
    assert surface is not None and surface.get_size() == (120, 90)
    assert not r.quit_requested
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    r.begin_frame()
    r.finish()
    assert r.quit_requested
    assert len(opened) == 1  # one window for every frame
    r.close()
    assert not pygame.display.get_init()
    r.close()


# --- validation
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"render_mode": "ansi"}, "render_mode"),
        ({"render_mode": None}, "render_mode"),
        ({"width_px": 0}, "width_px"),
        ({"width_px": 10.5}, "width_px"),
        ({"width_px": True}, "width_px"),
        ({"bounds": (0.0, 0.0, -1.0, 1.0)}, "bounds"),
        ({"bounds": (0.0, 0.0, 1.0)}, "bounds"),
        ({"bounds": (0.0, 0.0, np.inf, 1.0)}, "bounds"),
        ({"bounds": "box"}, "bounds"),
        ({"bounds": (0.0, 0.0, 1000.0, 1.0), "width_px": 100}, "bounds"),
        ({"fps": 0}, "fps"),
        ({"fps": "fast"}, "fps"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs, name):
    args = {"bounds": BOUNDS, **kwargs}
    with pytest.raises(ValueError, match=name):
        Renderer(**args)


def test_invalid_draw_arguments_raise_value_error():
    r = Renderer(BOUNDS, 100)
    r.begin_frame()
    with pytest.raises(ValueError, match="color"):
        r.circle([1.0, 1.0], 1.0, (1, 2))
    with pytest.raises(ValueError, match="color"):
        r.vehicles([[1.0, 1.0], [2.0, 2.0]], [[1.0, 0.0]] * 2, 1.0, [(1, 2, 3)] * 3)
    with pytest.raises(ValueError, match="heading"):
        r.vehicles([[1.0, 1.0], [2.0, 2.0]], [[1.0, 0.0]], 1.0, (1, 2, 3))
    with pytest.raises(ValueError, match="width"):
        r.line([0.0, 0.0], [1.0, 1.0], (1, 2, 3), width=0)
    with pytest.raises(ValueError, match="points"):
        r.polyline([1.0, 2.0, 3.0], (1, 2, 3))


# --- missing pygame
def test_missing_pygame_raises_with_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    monkeypatch.setitem(sys.modules, "pygame.gfxdraw", None)
    monkeypatch.delitem(sys.modules, "steer_env.rendering")
    monkeypatch.delattr(steer_env, "rendering", raising=False)
    fresh = importlib.import_module("steer_env.rendering")  # importing needs no pygame
    trails = fresh.Trails(3)  # nor does Trails
    trails.push(np.zeros((2, 2)))
    with pytest.raises(ImportError, match=r'pip install "steer-env\[render\]"') as info:
        fresh.Renderer(BOUNDS)
    assert isinstance(info.value, DependencyNotInstalled)
    assert str(info.value) == PYGAME_MISSING_MESSAGE


# --- trails
def test_trails_ring_buffer_order_and_length():
    t = Trails(4)
    assert len(t) == 0 and t.get(0).shape == (0, 2)
    t.reset([[0.0, 0.0], [10.0, 10.0]])
    assert len(t) == 1
    for k in range(1, 7):
        t.push([[k, 0.0], [10.0, 10.0 + k]])
        assert len(t) == min(k + 1, 4)
    np.testing.assert_array_equal(t.get(0), [[3.0, 0.0], [4.0, 0.0], [5.0, 0.0], [6.0, 0.0]])
    np.testing.assert_array_equal(t.get(1)[:, 1], [13.0, 14.0, 15.0, 16.0])
    np.testing.assert_array_equal(t.get(-1), t.get(1))
    assert t.get_all().shape == (4, 2, 2)
    got = t.get(0)
    got[:] = -1.0  # a copy: the buffer is untouched
    assert t.get(0)[0, 0] == 3.0
    t.reset([[1.0, 1.0]])
    assert len(t) == 1 and t.n_vehicles == 1
    np.testing.assert_array_equal(t.get(0), [[1.0, 1.0]])


def test_trails_partial_fill_and_errors():
    t = Trails(5)
    t.push([[1.0, 2.0]])  # push before reset starts the trail
    t.push([[2.0, 3.0]])
    np.testing.assert_array_equal(t.get(0), [[1.0, 2.0], [2.0, 3.0]])
    with pytest.raises(ValueError, match="shape"):
        t.push([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError):
        t.get(1)
    with pytest.raises(ValueError, match="maxlen"):
        Trails(0)
    with pytest.raises(ValueError, match="positions"):
        Trails(2).reset([1.0, 2.0])


# ------------------------------------------------------------------ the animation writer
def _clip(n=4, h=30, w=40):
    frames = []
    for k in range(n):
        f = np.zeros((h, w, 3), dtype=np.uint8)
        f[:, : (k + 1) * w // n] = (200, 40, 40)
        frames.append(f)
    return frames


def test_write_animation_gif_and_png_round_trip(tmp_path):
    import imageio.v3 as iio

    from steer_env.rendering import write_animation

    frames = _clip()
    gif = write_animation(tmp_path / "a.gif", iter(frames), fps=20)
    back = iio.imread(gif, index=None)
    assert back.shape[0] == 4 and back.shape[1:3] == (30, 40)
    np.testing.assert_array_equal(back[..., :3], np.stack(frames))  # few colours: lossless
    assert gif.read_bytes()[:6] == b"GIF89a"
    png = write_animation(tmp_path / "a.PNG", [frames[0], None, frames[-1]])
    np.testing.assert_array_equal(iio.imread(png)[..., :3], frames[-1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.PNG", "a.gif"]


def test_write_animation_refuses_unknown_extensions_before_consuming_frames(tmp_path):
    from steer_env.rendering import AnimationOutputError, write_animation

    def frames():
        raise AssertionError("frames consumed")
        yield

    for name in ("a.avi", "a", "a.gif.tmp"):
        with pytest.raises(AnimationOutputError, match=r"\.gif, \.mp4, \.png"):
            write_animation(tmp_path / name, frames())
    assert list(tmp_path.iterdir()) == []


def test_write_animation_mp4_needs_the_plugin(tmp_path, monkeypatch):
    import sys

    from steer_env.rendering import AnimationOutputError, write_animation

    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    with pytest.raises(AnimationOutputError, match=r"steer-env\[render\]"):
        write_animation(tmp_path / "a.mp4", _clip())
    assert list(tmp_path.iterdir()) == []


def test_write_animation_is_atomic(tmp_path):
    from steer_env.rendering import write_animation

    out = tmp_path / "a.gif"
    out.write_bytes(b"previous")

    def failing():
        yield _clip()[0]
        raise RuntimeError("renderer exploded")

    with pytest.raises(RuntimeError):
        write_animation(out, failing())
    with pytest.raises(ValueError, match="no frames"):
        write_animation(out, [])
    assert out.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["a.gif"]
