"""Smoke test of ``python -m benchmarks``: it runs on tiny sizes and writes its table as JSON
(no timing assertions: figures from a test machine mean nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_command_writes_the_table(tmp_path):
    out = tmp_path / "results.json"
    cmd = [
        sys.executable,
        "-m",
        "benchmarks",
        "--quick",
        "--sections",
        "single,vector,floor,sync,memory,flock,sb3,peers",
        "--num-envs",
        "1,4",
        "--sync-envs",
        "4",
        "--memory-envs",
        "16",
        "--boids",
        "200",
        "--repeats",
        "2",
        "--time-per-repeat",
        "0.002",
        "--sb3-envs",
        "2",
        "--sb3-n-steps",
        "8",
        "--sb3-batch-size",
        "16",
        "--sb3-epochs",
        "1",
        "--sb3-timesteps",
        "16",
        "--json",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "section" in proc.stdout and "ratio" in proc.stdout

    result = json.loads(out.read_text())
    assert {"command", "machine", "versions", "settings", "counting", "rows", "ratios"} <= set(
        result
    )
    assert result["machine"]["cores"] >= 1 and result["machine"]["cpu"]
    assert result["versions"]["numpy"]

    rows = result["rows"]
    measured = {(r["section"], r["name"].split()[0], r["size"]) for r in rows if "median" in r}
    for env in ("Pursuit", "Evasion"):
        assert ("single", env, 1) in measured
        for size in (1, 4):
            assert ("vector", env, size) in measured
            assert ("floor", env, size) in measured
        assert ("sync", env, 4) in measured
        assert ("memory", env, 16) in measured
    assert ("flock", "flocking", 200) in measured
    for r in rows:
        if "median" not in r:  # a peer or SB3 that is not installed
            assert "not installed" in r["reason"]
            continue
        assert r["min"] <= r["median"] <= r["max"] and r["median"] > 0
        if r["section"] in ("single", "vector"):
            assert r["agents"] == (2 if r["name"].startswith("Pursuit") else 3)
            assert r["substeps"] == 1
            assert r["agent_steps_per_s"] == r["median"] * r["agents"]
    peer_rows = [r for r in rows if r["section"] == "peers"]
    assert len(peer_rows) == 3  # MPE2, then VMAS at each size (measured or 'not installed')

    names = {q["name"] for q in result["ratios"]}
    assert "Pursuit vector time per env-step / numpy floor's" in names
    assert "Evasion native vector / SyncVectorEnv, env-steps/s" in names
    for q in result["ratios"]:
        assert q["value"] > 0


@pytest.mark.parametrize(
    "args,text",
    [
        (["--repeats", "0"], "expected a positive integer"),
        (["--envs", "nope"], "unknown env(s)"),
        (["--num-envs", "0"], "expected positive integers"),
        (["--json", "/no/such/folder/x.json"], "does not exist"),
    ],
)
def test_benchmark_cli_bad_input_is_one_line(args, text):
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert text in out.stderr
    assert "Traceback" not in out.stderr
