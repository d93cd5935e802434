"""Smoke tests of ``python -m benchmarks --sections torchrl`` (no timing assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--quick", "--sections", "torchrl", "--repeats", "2", "--time-per-repeat", "0.002"]


def bench(argv: list[str], *, hide_torchrl: bool = False) -> subprocess.CompletedProcess:
    prelude = "import sys\n"
    if hide_torchrl:  # as on a machine without the extra: `import torchrl` fails
        prelude += "sys.modules['torchrl'] = None\n"
    code = prelude + f"from benchmarks.__main__ import main\nmain({argv!r})\n"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_torchrl_section_measures_the_three_routes(tmp_path):
    pytest.importorskip("torchrl")
    from benchmarks import torchrl_bench as tb

    out = tmp_path / "torchrl.json"
    proc = bench([*QUICK, "--torchrl-workers", "2", "--json", str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["settings"]["torchrl_n_envs"] == 2  # --quick's default
    assert result["versions"]["torchrl"]
    rows = result["rows"]
    assert [r["section"] for r in rows] == ["torchrl"] * 4
    names = [r["name"] for r in rows]
    assert names == [
        "Pursuit " + tb.ROW_NATIVE.format(mode="DISABLED"),
        "Pursuit " + tb.ROW_NATIVE.format(mode="SAME_STEP"),
        "Pursuit " + tb.ROW_SERIAL,
        "Pursuit " + tb.ROW_PARALLEL.format(workers=2, per=1),
    ]
    for r in rows:
        assert r["unit"] == "frames/s" and r["size"] == 2 and len(r["samples"]) == 2
        assert 0 < r["min"] <= r["median"] <= r["max"]
        assert r["agents"] == 2 and r["substeps"] == 1
        assert r["name"] in proc.stdout
    for r in rows[2:]:
        assert "single env GymEnv(id)" in r["note"]
    ratios = {q["name"]: q for q in result["ratios"]}
    for label in ("SerialEnv", "ParallelEnv"):
        q = ratios[
            f"Pursuit TorchRL collector frames/s, native vector env (GymWrapper) / {label} of "
            "single envs"
        ]
        assert q["value"] > 0 and len(q["paired"]["per_round"]) == 2


def test_torchrl_section_without_torchrl_says_so_in_one_row(tmp_path):
    out = tmp_path / "missing.json"
    proc = bench([*QUICK, "--json", str(out)], hide_torchrl=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 1 and rows[0]["section"] == "torchrl"
    assert rows[0]["reason"] == 'not installed (pip install "steer-env[torchrl]")'
    assert rows[0]["reason"] in proc.stdout


def test_torchrl_workers_must_divide_the_envs():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--sections", "torchrl", "--torchrl-n-envs", "6",
         "--torchrl-workers", "4"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "python -m benchmarks: error: --torchrl-workers 4 must divide --torchrl-n-envs 6"
    )


def test_default_workers_divide_the_envs():
    from benchmarks.torchrl_bench import default_workers

    for n in (1, 2, 3, 7, 64):
        w = default_workers(n)
        assert 1 <= w <= n and n % w == 0
