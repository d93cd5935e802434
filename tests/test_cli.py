"""One command-line vocabulary: the same flag is spelled, bounded and reported the same way
by every tool (real processes: a mistake is one line, ``<prog>: error: ...``, exit 2)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from steer_env import cli

ROOT = Path(__file__).resolve().parents[1]

TOOLS = {
    "python train.py": [sys.executable, str(ROOT / "train.py")],
    "python -m agents.compare": [sys.executable, "-m", "agents.compare"],
    "python -m agents.render": [sys.executable, "-m", "agents.render"],
    "python -m steer_env.demos.gallery": [sys.executable, "-m", "steer_env.demos.gallery", "seek"],
    "python -m benchmarks": [sys.executable, "-m", "benchmarks"],
    "python -m benchmarks.bench_core": [sys.executable, "-m", "benchmarks.bench_core"],
    "python -m benchmarks.fidelity": [sys.executable, "-m", "benchmarks.fidelity"],
    "python -m benchmarks.soak": [sys.executable, "-m", "benchmarks.soak"],
    "python -m benchmarks.training": [sys.executable, "-m", "benchmarks.training"],
}
WITH = {
    "--seed": ["python train.py", "python -m agents.compare", "python -m agents.render",
               "python -m steer_env.demos.gallery"],
    "--width": ["python -m agents.render", "python -m steer_env.demos.gallery"],
    "--fps": ["python -m agents.render", "python -m steer_env.demos.gallery"],
    "--device": ["python train.py", "python -m agents.compare", "python -m agents.render"],
    "--n-envs": ["python train.py", "python -m benchmarks"],
    "--episodes": ["python train.py", "python -m agents.compare"],
}  # fmt: skip


def _run(cmd, *args, cwd):
    # run from an empty folder (to see what a command writes) on this checkout's code
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "MPLBACKEND": "Agg", "PYTHONPATH": path}
    return subprocess.run(
        [*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _one_line_error(r, prog):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


BAD = [
    ("--seed", "4294967296", "expected an integer in [0, 4294967295]"),
    ("--seed", "99999999999999999999999", "expected an integer in [0, 4294967295]"),
    ("--width", "63", "expected an integer in [64, 4096]"),
    ("--width", "4097", "expected an integer in [64, 4096]"),
    ("--fps", "241", "expected an integer in [1, 240]"),
    ("--fps", "0", "expected an integer in [1, 240]"),
    ("--device", "tpu", "invalid choice: 'tpu'"),
    ("--n-envs", "0", "positive integer"),
    ("--episodes", "0", "positive integer"),
]


@pytest.mark.parametrize("flag,value,text", BAD)
def test_every_tool_bounds_and_reports_a_flag_alike(tmp_path, flag, value, text):
    for prog in WITH[flag]:
        line = _one_line_error(_run(TOOLS[prog], flag, value, cwd=tmp_path), prog)
        assert f"argument {flag}" in line and text in line, (prog, line)
    assert list(tmp_path.iterdir()) == []  # nothing written by a refused command line


def test_every_tool_reports_an_unknown_flag_with_its_prog(tmp_path):
    for prog, cmd in TOOLS.items():
        line = _one_line_error(_run(cmd, "--no-such-flag", cwd=tmp_path), prog)
        assert "--no-such-flag" in line


def test_help_states_the_shared_ranges_and_the_device_default(tmp_path):
    for prog, cmd in TOOLS.items():
        r = _run(cmd, "--help", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        text = " ".join(r.stdout.split())
        assert text.startswith(f"usage: {prog}")
        if prog in WITH["--seed"]:
            assert "0 to 4294967295" in text, prog
        if prog in WITH["--width"]:
            assert "64 to 4096" in text and "1 to 240" in text, prog
        if prog in WITH["--device"]:
            assert "--device {auto,cpu,cuda}" in text and "(default auto:" in text, prog
        assert "``" not in text, prog  # reStructuredText belongs in the docs, not in --help


def test_doc_summary_is_the_first_paragraph_as_plain_text():
    doc = """``python -m tool``: what it
    does, in ``two`` lines.

    More."""
    assert cli.doc_summary(doc) == "what it does, in two lines."
    assert cli.doc_summary("Plain: a summary.\n\nMore.") == "Plain: a summary."
    assert cli.doc_summary(None) == ""


@pytest.mark.parametrize(
    "args,text",
    [
        (["--env", "nosuch"], "--env: unknown env 'nosuch'"),
        (["--env", "herding"], "herding has no scripted pursuers and evaders"),
        (["--episodes", "-3"], "argument --episodes: expected a positive integer"),
        (["--json", "missing/a.json"], "--json: folder 'missing' does not exist"),
    ],
)
def test_fidelity_mistakes_are_one_line_before_any_episode(tmp_path, args, text):
    prog = "python -m benchmarks.fidelity"
    line = _one_line_error(_run(TOOLS[prog], *args, cwd=tmp_path), prog)
    assert text in line
    assert list(tmp_path.iterdir()) == []


def test_train_reports_a_run_folder_it_cannot_create_in_one_line(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    prog = "python train.py"
    r = _run(
        TOOLS[prog], "--out", str(tmp_path / "file" / "runs"), "--timesteps", "10", cwd=tmp_path
    )
    assert "cannot create the run folder" in _one_line_error(r, prog)


def test_deprecated_alias_note_never_adds_a_line_to_an_error(capsys):
    p = cli.OneLineParser(prog="tool")
    p.add_argument("--n-envs", type=cli.positive_int, default=1)
    cli.add_alias(p, "--num-envs", "--n-envs")
    assert p.parse_args(["--num-envs", "3"]).n_envs == 3
    assert capsys.readouterr().err == "tool: note: --num-envs is deprecated; use --n-envs\n"
    with pytest.raises(SystemExit):
        p.parse_args(["--num-envs", "3", "--bogus"])
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("tool: error: ")


def test_stale_temporaries_of_dead_writers_only_are_removed(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    (tmp_path / "sub").mkdir()
    stale = tmp_path / "sub" / f".model.zip.{dead}.0123abcd.tmp.zip"
    live = tmp_path / f".a.json.{os.getpid()}.0123abcd.tmp.json"
    other = tmp_path / ".hidden"
    for f in (stale, live, other):
        f.write_bytes(b"x")
    assert cli.remove_stale_temporaries(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
    # a finished atomic write leaves only its target, with the usual permissions
    cli.atomic_write_bytes(tmp_path / "b.txt", b"ok")
    assert (tmp_path / "b.txt").read_bytes() == b"ok"
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "b.txt").stat().st_mode & 0o777 == 0o666 & ~umask
