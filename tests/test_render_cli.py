"""Episode GIFs: frames decode and change; the CLI writes GIFs and rejects bad input."""

import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest

from agents.evaluation.render import render_gif

ROOT = Path(__file__).resolve().parents[1]


def _frames(path):
    frames = iio.imread(path, index=None)
    assert frames.ndim == 4 and frames.shape[-1] in (3, 4)
    return frames


def test_render_scripted_gif(tmp_path):
    out = tmp_path / "sub" / "classic.gif"
    path, eps = render_gif("steer_env/Evasion-v0", out, agent="classic", seed=2, width=160)
    assert path == out
    frames = _frames(out)
    assert len(frames) == eps[0].steps + 1 >= 2
    assert frames.shape[2] == 160
    assert not np.array_equal(frames[0], frames[-1])
    assert not np.array_equal(frames[1], frames[len(frames) // 2])
    assert not [f for f in os.listdir(out.parent) if f.startswith(".")]


def test_render_side_by_side_gif(tmp_path):
    out = tmp_path / "both.gif"
    _, eps = render_gif("steer_env/Pursuit-v0", out, side=True, seed=5, width=120)
    frames = _frames(out)
    assert [e.label for e in eps] == ["learned (PPO)", "classic pursuer"]
    assert len(frames) == max(e.steps for e in eps) + 1
    assert frames.shape[2] > 2 * 120  # two panels and a gap
    # Both panels start from the same seed: the arenas (above the captions) are identical in
    # the first frame and differ once the two pursuers have moved differently.
    arena = slice(0, 120)
    first_left, first_right = frames[0][arena, :120], frames[0][arena, -120:]
    np.testing.assert_array_equal(first_left, first_right)
    last_left, last_right = frames[-1][arena, :120], frames[-1][arena, -120:]
    assert not np.array_equal(last_left, last_right)


def _run(*args):
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    return subprocess.run(
        [sys.executable, "-m", "agents.render", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_render_cli_writes_gif(tmp_path):
    out = tmp_path / "ep.gif"
    r = _run("--agent", "learned", "--seed", "1", "--width", "100", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    assert len(_frames(out)) > 1


@pytest.mark.parametrize(
    "args,text",
    [
        (["--agent", "naive", "--env", "evasion"], "no naive evader"),
        (["--agent", "robot"], "unknown agent"),
        (["--agent", "learned", "--model", "missing.zip"], "not found"),
        (["--seed", "-1"], "integer in [0, 4294967295]"),
        (["--seed", "99999999999999999999999"], "integer in [0, 4294967295]"),
        (["--seed", "4294967296"], "integer in [0, 4294967295]"),
        (["--width", "10"], "integer in [64, 4096]"),
        (["--fps", "0"], "integer in [1, 240]"),
        (["--env", "mars"], "unknown env"),
    ],
)
def test_render_cli_bad_input(tmp_path, args, text):
    r = _run(*args, "--out", str(tmp_path / "x.gif"))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert not (tmp_path / "x.gif").exists()


def test_render_cli_largest_seed_plays(tmp_path):
    out = tmp_path / "s.gif"
    r = _run("--agent", "classic", "--seed", "4294967295", "--width", "64", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert len(_frames(out)) > 1


@pytest.mark.parametrize("name", ["x.avi", "x", "x.gif.bak"])
def test_render_cli_refuses_unknown_extensions(tmp_path, name):
    r = _run("--agent", "classic", "--out", str(tmp_path / name))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and ".gif, .mp4, .png" in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == []


def test_render_cli_mp4_without_ffmpeg_plugin_names_the_extra(tmp_path):
    # a real process in which imageio's ffmpeg plugin cannot be imported
    code = (
        "import sys; sys.modules['imageio_ffmpeg'] = None; "
        "from agents.evaluation.render import main; sys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    r = subprocess.run(
        [sys.executable, "-c", code, "--agent", "classic", "--out", str(tmp_path / "x.mp4")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and 'pip install "steer-env[render]"' in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written, no GIF under an .mp4 name


def test_render_cli_writes_real_mp4(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as iio2

    out = tmp_path / "ep.mp4"
    r = _run("--agent", "classic", "--seed", "3", "--width", "101", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[4:8] == b"ftyp"  # an MP4 container, not GIF data
    with iio2.get_reader(out) as reader:
        meta = reader.get_meta_data()
        n = sum(1 for _ in reader)
    assert meta["codec"] == "h264" and meta["fps"] == 10.0
    assert n > 1
    assert [p.name for p in tmp_path.iterdir()] == ["ep.mp4"]
