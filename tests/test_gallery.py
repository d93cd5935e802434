"""Tests for steer_env.demos.gallery: every scene renders headless, deterministically, and behaves;
the command line writes files and reports user mistakes in one line."""

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pygame")
iio = pytest.importorskip("imageio.v3")

from steer_env import find_neighbors, vecmath  # noqa: E402
from steer_env.demos import gallery  # noqa: E402
from steer_env.rendering import Renderer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIZE = 128


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "steer_env.demos.gallery", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=120,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def inside(position: np.ndarray, bounds) -> bool:
    xmin, ymin, xmax, ymax = bounds
    x, y = position[:, 0], position[:, 1]
    return bool(np.all((x >= xmin) & (x <= xmax) & (y >= ymin) & (y <= ymax)))


# --- rendering every scene
def test_behaviors_list():
    assert set(gallery.BEHAVIORS) == {
        "seek",
        "flee",
        "arrive",
        "wander",
        "pursuit-evade",
        "flocking",
        "obstacle-avoidance",
        "wall-avoidance",
        "path-following",
        "interpose",
        "hide",
        "offset-pursuit",
        "collision-avoidance",
        "flow-field",
        "herding",
    }


@pytest.mark.parametrize("name", gallery.BEHAVIORS)
def test_every_behavior_renders_non_blank_changing_frames(name):
    frames = gallery.render_behavior(name, steps=4, seed=0, size=SIZE)
    assert len(frames) == 4
    scene = gallery.make_scene(name, 0)
    r = Renderer(scene.bounds, SIZE)
    r.begin_frame()
    empty = r.finish()
    for f in frames:
        assert f.dtype == np.uint8
        assert f.shape == empty.shape == (r.height, SIZE, 3)
        # something is drawn beyond background, grid and border
        assert np.count_nonzero(np.any(f != empty, axis=-1)) > 50
    for a, b in itertools.pairwise(frames):
        assert not np.array_equal(a, b)


@pytest.mark.parametrize("name", ["wander", "flocking"])
def test_same_seed_same_frames_different_seed_different_frames(name):
    a = gallery.render_behavior(name, steps=3, seed=11, size=SIZE)
    b = gallery.render_behavior(name, steps=3, seed=11, size=SIZE)
    c = gallery.render_behavior(name, steps=3, seed=12, size=SIZE)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[-1], c[-1])


def test_render_behavior_rejects_bad_arguments():
    with pytest.raises(ValueError, match="behavior"):
        gallery.render_behavior("moonwalk", 3, 0)
    with pytest.raises(ValueError, match="steps"):
        gallery.render_behavior("seek", 0, 0)
    with pytest.raises(ValueError, match="seed"):
        gallery.render_behavior("seek", 3, -1)


# --- one behavioural check per scene (simulation only, no drawing)
def run_scene(name: str, steps: int, seed: int = 0):
    scene = gallery.make_scene(name, seed)
    for _ in range(steps):
        scene.step()
        assert inside(scene.vehicles.position, scene.bounds), name
    return scene


def test_seek_closes_in_on_the_target():
    scene = gallery.make_scene("seek", 0)
    v = scene.vehicles
    start = vecmath.length(scene.info["target"] - v.position).mean()
    for _ in range(60):
        scene.step()
    assert vecmath.length(scene.info["target"] - v.position).mean() < 0.6 * start


def test_flee_moves_away_from_the_threat():
    scene = gallery.make_scene("flee", 1)
    v = scene.vehicles
    radial = []
    for k in range(90):
        scene.step()
        off = v.position - scene.info["threat"]()
        d = vecmath.length(off)
        scared = d < scene.info["panic_distance"]
        if k > 10 and np.any(scared):
            radial.append(
                np.mean(np.einsum("ij,ij->i", off[scared], v.velocity[scared]) / d[scared])
            )
    assert np.mean(radial) > 0.5


def test_arrive_comes_to_rest_at_the_target():
    scene = run_scene("arrive", 300)
    assert scene.info["arrivals"] >= 1


def test_wander_keeps_moving_inside_the_box():
    scene = run_scene("wander", 150)
    assert np.mean(scene.vehicles.speed) > 0.5 * scene.vehicles.max_speed[0]


def test_pursuer_captures_the_evader():
    scene = run_scene("pursuit-evade", 900)
    assert scene.info["captures"] >= 1


def test_flocking_stays_in_the_box_and_aligns():
    scene = gallery.make_scene("flocking", 0)
    v = scene.vehicles
    assert len(v) >= 200

    def order() -> float:
        nb = find_neighbors(v.position, 5.0)
        count = nb.count()
        mean = nb.sum(v.heading[nb.j])[count > 0] / count[count > 0, None]
        return float(np.mean(vecmath.length(mean)))

    before = order()
    for _ in range(150):
        scene.step()
        assert inside(v.position, scene.bounds)
    assert order() > max(0.8, before + 0.2)


def test_strombom_dog_pens_the_flock_and_it_is_scattered_again():
    """Within 120 s the dog pens all 30 sheep (every one within the pen's radius), the
    scene scatters them again, and every vehicle stays in the box throughout."""
    scene = gallery.make_scene("herding", 1)
    for _ in range(round(120 / gallery.DT)):
        scene.step()
        assert inside(scene.vehicles.position, scene.bounds)
        if scene.info["scatters"]:
            break
    assert scene.info["scatters"] == 1
    assert scene.info["penned"] == 30  # the count on the step the flock was penned


def test_obstacle_avoidance_never_enters_an_obstacle():
    scene = gallery.make_scene("obstacle-avoidance", 0)
    v = scene.vehicles
    centers, radii = scene.info["obstacle_center"], scene.info["obstacle_radius"]
    for _ in range(300):
        scene.step()
        gap = vecmath.length(v.position[:, None, :] - centers[None]) - radii[None]
        assert gap.min() > 0.0
        assert inside(v.position, scene.bounds)
    assert np.mean(v.speed) > 2.0  # still travelling, not stuck


def test_wall_avoidance_keeps_fast_vehicles_inside():
    scene = run_scene("wall-avoidance", 300)
    assert np.mean(scene.vehicles.speed) > 4.0


def test_path_following_stays_near_the_path():
    scene = run_scene("path-following", 150)
    path = scene.info["path"]
    pts = np.vstack((path, path[:1]))
    a, seg = pts[:-1], np.diff(pts, axis=0)
    rel = scene.vehicles.position[:, None, :] - a
    t = np.clip(np.einsum("nsk,sk->ns", rel, seg) / np.einsum("sk,sk->s", seg, seg), 0.0, 1.0)
    dist = vecmath.length(rel - seg * t[..., None]).min(axis=1)
    assert dist.max() < 3.5


def test_interpose_stays_near_the_midpoint():
    scene = run_scene("interpose", 300)
    (a, b), _ = _movers(scene)
    assert vecmath.length(scene.vehicles.position[0] - 0.5 * (a + b)) < 6.0


def _movers(scene):
    # the two agents the bodyguard interposes between are scripted: rebuild them from the draw
    drawn = {}

    class Spy(Renderer):
        def vehicles(self, position, heading, radius, color):
            drawn.setdefault("v", []).append(np.asarray(position, dtype=float))

    r = Spy(scene.bounds, SIZE)
    r.begin_frame()
    scene.draw(r)
    r.close()
    return drawn["v"][0], None


def test_hiders_end_behind_obstacles():
    scene = run_scene("hide", 300)
    info = scene.info
    d = vecmath.length(scene.vehicles.position[:, None] - info["obstacle_center"][None])
    gap = (d - info["obstacle_radius"][None]).min(axis=1)
    assert np.all(gap > 0.0) and np.all(gap < 3.0)


def test_offset_pursuit_keeps_the_formation():
    scene = run_scene("offset-pursuit", 300)
    v = scene.vehicles
    spots = vecmath.point_to_world(scene.info["offsets"], v.position[0], v.heading[0])
    assert vecmath.length(v.position[1:] - spots).max() < 3.0


def test_collision_avoidance_crosses_without_overlaps():
    scene = gallery.make_scene("collision-avoidance", 0)
    v = scene.vehicles
    closest = np.inf
    for _ in range(150):
        scene.step()
        d = vecmath.length(v.position[:, None] - v.position[None])
        closest = min(closest, d[~np.eye(len(d), dtype=bool)].min())
    assert closest > 0.5 * 2 * v.radius[0]
    assert vecmath.length(scene.info["goal"] - v.position).max() < 32.0


def test_flow_field_vehicles_circle_the_vortex():
    scene = run_scene("flow-field", 300)
    d = vecmath.length(scene.vehicles.position - scene.info["center"])
    assert np.all(np.abs(d - scene.info["orbit"]) < 6.0)


#: Functions of steer_env.behaviors that compute a point or a field, not a steering force.
HELPERS = {
    "predict_position",
    "pursuit_target",
    "wander_world_target",
    "feelers",
    "hiding_spots",
    "path_target",
    "vortex_field",
}


def test_every_behavior_has_a_scene():
    import inspect

    from steer_env import behaviors

    steering = {
        name
        for name, fn in inspect.getmembers(behaviors, inspect.isfunction)
        if fn.__module__ == behaviors.__name__ and not name.startswith("_") and name not in HELPERS
    }
    assert set(gallery.BEHAVIOR_SCENES) == steering
    assert set(gallery.BEHAVIOR_SCENES.values()) <= set(gallery.BEHAVIORS)


def test_stills_are_small_pngs(tmp_path):
    assert gallery.main(["--stills", str(tmp_path), "--steps", "3", "--width", "96"]) == 0
    for name in gallery.BEHAVIORS:
        image = iio.imread(tmp_path / f"{name}.png")
        assert image.shape[1] == 96
    assert gallery.main(["seek", "--stills", str(tmp_path)]) == 2


# --- command line
def test_cli_writes_a_decodable_gif(tmp_path):
    out = tmp_path / "flock.gif"
    proc = run_cli("flocking", "--out", str(out), "--steps", "6", "--width", "96", "--seed", "2")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 6
    assert frames.shape[1:3] == (72, 96)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flock.gif"]  # no temp files left


@pytest.mark.parametrize(
    "args",
    [
        ("moonwalk", "--steps", "3"),
        ("seek", "--steps", "0"),
        ("seek", "--steps", "-5"),
        ("seek", "--steps", "many"),
        ("seek", "--out", "movie.avi", "--steps", "3"),
        ("seek", "--width", "32"),
        ("seek", "--fps", "241"),
        ("seek", "--seed", "4294967296"),
    ],
)
def test_cli_user_mistakes_give_one_line_errors(args, tmp_path):
    proc = run_cli(*args, cwd=tmp_path)
    assert_one_line_error(proc)
    assert list(tmp_path.iterdir()) == []


def test_cli_creates_missing_output_folders(tmp_path):
    """As ``python -m agents.render --out`` does: missing folders of --out are made."""
    from agents.evaluation import render

    out = tmp_path / "nope" / "deeper" / "a.gif"
    assert gallery.main(["seek", "--steps", "2", "--out", str(out)]) == 0
    assert out.is_file()
    other = tmp_path / "also" / "missing" / "b.png"
    assert render.main(["--agent", "classic", "--out", str(other)]) == 0
    assert other.is_file()


def test_cli_list_and_missing_behavior(capsys):
    assert gallery.main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(gallery.BEHAVIORS)
    assert gallery.main([]) != 0
    assert "BEHAVIOR" in capsys.readouterr().err


def test_cli_png_writes_the_last_frame(tmp_path, capsys):
    out = tmp_path / "seek.png"
    # --size is the deprecated spelling of --width: still accepted, with a note
    assert gallery.main(["seek", "--steps", "3", "--size", "80", "--out", str(out)]) == 0
    assert "--size is deprecated; use --width" in capsys.readouterr().err
    last = gallery.render_behavior("seek", 3, 0, size=80)[-1]
    assert np.array_equal(iio.imread(out), last)


def test_cli_mp4_without_ffmpeg_plugin_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    status = gallery.main(["seek", "--steps", "2", "--out", str(tmp_path / "a.mp4")])
    err = capsys.readouterr().err
    assert status == 2
    assert 'pip install "steer-env[render]"' in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_cli_failure_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    out = tmp_path / "broken.gif"
    out.write_bytes(b"previous")

    first = gallery.render_behavior("seek", 1, 0, size=64)[0]

    def failing_frames(*args, **kwargs):
        yield first
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(gallery, "iter_frames", failing_frames)
    status = gallery.main(["seek", "--steps", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert status != 0 and "renderer exploded" in err
    assert out.read_bytes() == b"previous"  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.gif"]


def test_cli_window_mode_runs_headless_with_dummy_driver(capsys):
    assert gallery.main(["wander", "--steps", "3", "--width", "64", "--fps", "240"]) == 0
