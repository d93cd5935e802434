"""Smoke test of ``python -m benchmarks``: it runs on tiny sizes and writes its table as JSON
(no timing assertions: figures from a test machine mean nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import binding as llvm

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
        "--n-envs",
        "1,4",
        "--sync-n-envs",
        "4",
        "--memory-n-envs",
        "16",
        "--boids",
        "200",
        "--repeats",
        "2",
        "--time-per-repeat",
        "0.002",
        "--sb3-n-envs",
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
    # The CPU numba compiled for, which the figures depend on (a "model name" does not say).
    want = os.environ.get("NUMBA_CPU_NAME") or llvm.get_host_cpu_name()
    assert result["machine"]["compiled_for"] == want
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


def test_team_section_runs_ours_beside_each_peer(tmp_path):
    """``--sections team`` prints its six rows (a peer that is not installed: a row saying
    so) and its ratios where both sides ran."""
    out = tmp_path / "team.json"
    cmd = [
        sys.executable, "-m", "benchmarks", "--quick", "--sections", "team",
        "--team-n-envs", "4", "--team-sb3-n-envs", "1", "--sb3-n-steps", "8",
        "--sb3-batch-size", "12", "--sb3-epochs", "1", "--team-sb3-timesteps", "24",
        "--repeats", "2", "--time-per-repeat", "0.002", "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = {r["name"]: r for r in result["rows"]}
    assert [r["section"] for r in result["rows"]] == ["team"] * 6
    from benchmarks import team

    for name in (team.ROW_BATCH, team.ROW_PARALLEL):
        r = rows[name]
        assert name in proc.stdout
        assert r["agents"] == 4 and r["substeps"] == 1 and len(r["samples"]) == 2
        assert r["min"] <= r["median"] <= r["max"] and r["median"] > 0
    assert rows[team.ROW_BATCH]["size"] == 4
    for name in (team.ROW_VMAS, team.ROW_MPE2, team.ROW_PPO_NATIVE, team.ROW_PPO_SUPERSUIT):
        r = rows[name]
        if "median" not in r:  # the peer (or SB3) is not installed: said, and skipped
            assert "not installed" in r["reason"] and r["reason"] in proc.stdout
            continue
        assert r["median"] > 0 and name in proc.stdout
    if "median" in rows[team.ROW_VMAS]:
        assert rows[team.ROW_VMAS]["agents"] == 4 and rows[team.ROW_VMAS]["substeps"] == 10
    if "median" in rows[team.ROW_PPO_NATIVE]:
        assert rows[team.ROW_PPO_NATIVE]["extra"]["slots"] == 3
        assert rows[team.ROW_PPO_NATIVE]["extra"]["timesteps"] == 24
    ratios = {q["name"]: q for q in result["ratios"]}
    both = {
        "team native batch / VMAS simple_tag, env-steps/s": team.ROW_VMAS,
        "team parallel_env / MPE2 simple_tag_v3, env-steps/s": team.ROW_MPE2,
        "team PPO agent-steps/s, native adapter / SuperSuit": team.ROW_PPO_SUPERSUIT,
    }
    for ratio, peer in both.items():
        assert (ratio in ratios) == ("median" in rows[peer])
    for q in ratios.values():
        assert q["value"] > 0
        assert q["paired"]["min"] <= q["paired"]["median"] <= q["paired"]["max"]
        assert len(q["paired"]["per_round"]) == 2


def test_herding_section_runs_the_batch_beside_vmas_flocking(tmp_path):
    """``--sections herding`` prints the batch, VMAS ``flocking`` (or a row saying it is not
    installed), the single env and the parallel env, counting 26 vehicles per herding env."""
    out = tmp_path / "herding.json"
    cmd = [
        sys.executable, "-m", "benchmarks", "--quick", "--sections", "herding",
        "--herding-n-envs", "4", "--repeats", "2", "--time-per-repeat", "0.002",
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    from benchmarks import herding

    rows = {r["name"]: r for r in result["rows"]}
    assert [r["section"] for r in result["rows"]] == ["herding"] * 6
    assert rows[herding.ROW_BATCH]["agents"] == 26 and rows[herding.ROW_BATCH]["size"] == 4
    assert rows[herding.ROW_SINGLE]["agents"] == 26
    assert rows[herding.ROW_PARALLEL]["agents"] == 27
    for name in (herding.ROW_BATCH, herding.ROW_SINGLE, herding.ROW_PARALLEL):
        assert rows[name]["min"] <= rows[name]["median"] <= rows[name]["max"]
        assert rows[name]["median"] > 0 and name in proc.stdout
    for n in herding.SCALE_SHEEP:
        scale = rows[herding.row_scale(n)]
        assert scale["size"] == herding.SCALE_ENVS and scale["agents"] == n + 1
    scale_ratio = {q["name"]: q for q in result["ratios"]}[
        "herding time per sheep-step, 100 sheep / 25 sheep"
    ]
    assert scale_ratio["min"] <= scale_ratio["value"] <= scale_ratio["max"]
    assert scale_ratio["target"] == "<= 2x"
    vmas = rows[herding.ROW_VMAS]
    ratio = "herding native batch / VMAS flocking, vehicle-steps/s"
    names = [q["name"] for q in result["ratios"]]
    if "median" in vmas:
        assert vmas["agents"] == 4 and ratio in names
    else:
        assert "not installed" in vmas["reason"] and ratio not in names


@pytest.mark.slow
def test_flocking_section_runs_the_batch_beside_vmas_flocking_and_scales_the_flock(tmp_path):
    """``--sections flocking`` prints the native batch and VMAS ``flocking`` with the same
    16 agents (or a row saying VMAS is not installed), then the batch at 16, 64 and 256
    boids, and the ratio of their times per boid-step."""
    out = tmp_path / "flocking.json"
    cmd = [
        sys.executable, "-m", "benchmarks", "--quick", "--sections", "flocking",
        "--flocking-n-envs", "4", "--repeats", "2", "--time-per-repeat", "0.002",
        "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    from benchmarks import flocking

    rows = {(r["name"], r["size"]): r for r in result["rows"]}
    assert [r["section"] for r in result["rows"]] == ["flocking"] * 5
    batch = rows[(flocking.row_batch(16), 4)]
    assert batch["agents"] == 17 and batch["min"] <= batch["median"] <= batch["max"]
    for n in flocking.SCALE_BOIDS:
        scale = rows[(flocking.row_batch(n), flocking.SCALE_ENVS)]
        assert scale["agents"] == n + 1 and scale["median"] > 0
    ratios = {q["name"]: q for q in result["ratios"]}
    scale_ratio = ratios["flocking_v0 time per boid-step, 256 boids / 16 boids"]
    assert scale_ratio["min"] <= scale_ratio["value"] <= scale_ratio["max"]
    assert scale_ratio["target"] == "<= 2x"
    vmas = rows[(flocking.ROW_VMAS, 4)]
    ratio = "flocking_v0 native batch / VMAS flocking, 16 agents, env-steps/s"
    if "median" in vmas:
        assert vmas["agents"] == 16 and ratio in ratios
    else:
        assert "not installed" in vmas["reason"] and ratio not in ratios


@pytest.mark.parametrize(
    "args,text",
    [
        (["--repeats", "0"], "expected a positive integer"),
        (["--tasks", "nope"], "unknown task(s)"),
        (["--envs", "nope"], "unknown task(s)"),  # the deprecated spelling of --tasks
        (["--n-envs", "0"], "expected positive integers"),
        (["--num-envs", "0"], "expected positive integers"),
        (["--json", "/no/such/folder/x.json"], "does not exist"),
    ],
)
def test_benchmark_cli_bad_input_is_one_line(args, text):
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m benchmarks: error: ")
    assert text in lines[0]


def test_benchmark_old_flag_spellings_still_work_with_a_note(capsys):
    from benchmarks.__main__ import parse

    args = parse(["--num-envs", "2,4", "--envs", "evasion", "--sb3-envs", "3"])
    assert args.num_envs == [2, 4] and args.envs == ["Evasion"] and args.sb3_envs == 3
    err = capsys.readouterr().err.splitlines()
    assert "python -m benchmarks: note: --num-envs is deprecated; use --n-envs" in err
    assert len(err) == 3
    new = parse(["--n-envs", "2,4", "--tasks", "evasion", "--sb3-n-envs", "3"])
    assert vars(new) == vars(args) and capsys.readouterr().err == ""


def test_benchmarks_is_an_installed_package_and_runs_from_any_directory(tmp_path):
    from setuptools import find_packages

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = cfg["tool"]["setuptools"]["packages"]["find"]["include"]
    assert "benchmarks" in find_packages(where=ROOT, include=include)
    # nothing in it depends on the working directory
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--sections", "single,memory",
         "--tasks", "pursuit", "--memory-n-envs", "8", "--repeats", "1",
         "--time-per-repeat", "0.002", "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert {r["section"] for r in rows if "median" in r} == {"single", "memory"}


def test_bench_core_uses_the_shared_parser():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_core", "--repeats-typo"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m benchmarks.bench_core: error: ")


def test_versus_names_a_bad_ref_in_one_line():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "benchmarks.versus", "--ref", "no-such-commit-xyz"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert "cannot check out --ref no-such-commit-xyz" in r.stderr


def test_versus_refuses_an_obstacle_count_no_task_accepts_in_one_line():
    r = subprocess.run(
        [sys.executable, "-m", "benchmarks.versus", "--ref", "HEAD", "--n-obstacles", "65"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "python -m benchmarks.versus: error: argument --n-obstacles: expected an integer in "
        "[0, 64], got '65' (see --help)"
    ]


def test_versus_makes_the_paired_envs_with_the_obstacles_asked_for(tmp_path):
    """The obstacle count reaches the paired child's envs: a count that only the env's
    config check refuses (65, given past the command line) stops the child with the env's
    own error, which ``measure_paired`` raises."""
    from benchmarks import versus

    parent = versus.copy_renamed(versus.ROOT, tmp_path)
    with pytest.raises(RuntimeError, match=r"n_obstacles must be an integer in \[0, 64\], got 65"):
        versus.measure_paired(parent, "vector", 4, 1, "Pursuit-v0", {"n_obstacles": 65})


def test_a_quick_run_does_not_replace_the_published_results():
    """Without ``--json``, ``--quick`` writes results_quick.json (git-ignored), never the
    results.json the README quotes."""
    from benchmarks import __main__ as bench

    assert bench.parse([]).json == bench.DEFAULT_JSON
    assert bench.parse(["--quick"]).json == bench.QUICK_JSON != bench.DEFAULT_JSON
    assert bench.parse(["--quick", "--json", "x.json"]).json == Path("x.json")


def test_obstacles_section_measures_each_task_with_and_without_obstacles(tmp_path):
    """``--sections obstacles`` prints, per task, the native vector env in an empty arena and
    with 16 obstacles, and their ratio with its target."""
    out = tmp_path / "obstacles.json"
    cmd = [
        sys.executable, "-m", "benchmarks", "--quick", "--sections", "obstacles",
        "--obstacle-n-envs", "4", "--repeats", "2", "--time-per-repeat", "0.002",
        "--tasks", "Pursuit", "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    from benchmarks import obstacles

    rows = {r["name"]: r for r in result["rows"]}
    assert [r["section"] for r in result["rows"]] == ["obstacles"] * 4
    for name in ("Pursuit", "Herding"):
        for n in (0, obstacles.OBSTACLES):
            row = rows[obstacles.row_name(name, n)]
            assert row["size"] == 4 and row["median"] > 0
            assert row["min"] <= row["median"] <= row["max"]
    ratios = {q["name"]: q for q in result["ratios"]}
    q = ratios["Pursuit native vector env, 16 obstacles / empty arena, env-steps/s"]
    assert q["target"] == ">= 0.5x" and q["min"] <= q["value"] <= q["max"]
    for name in ("Pursuit", "Herding"):
        pair = [rows[obstacles.row_name(name, n)] for n in (0, obstacles.OBSTACLES)]
        whole = all(r["extra"]["steps_per_repeat"] % r["extra"]["episode_steps"] == 0 for r in pair)
        q = ratios[f"{name} native vector env, 16 obstacles / empty arena, env-steps/s"]
        # --quick judges a ratio only when its repeats timed the resets.
        assert (q["pass"] is not None) == whole
        for r in pair:
            steps, episode = r["extra"]["steps_per_repeat"], r["extra"]["episode_steps"]
            assert ("no reset timed" in r["note"]) == (steps % episode != 0)


def _obstacle_row(name: str, n: int, per_s: float, steps: int, episode: int):
    from benchmarks import obstacles
    from benchmarks.common import Row

    extra = {"steps_per_repeat": steps, "episode_steps": episode}
    return Row("obstacles", obstacles.row_name(name, n), 8192, "env-steps/s", [per_s], extra=extra)


def test_obstacle_ratio_is_judged_only_when_its_repeats_timed_the_resets():
    """The obstacles' cost includes placing each new layout: a ratio whose repeats were
    shorter than an episode timed no reset, so it is printed without a verdict; one whose
    repeats stepped whole episodes passes or fails against 0.5x."""
    from benchmarks import __main__ as bench

    args = bench.parse(["--tasks", "Pursuit,Evasion", "--obstacle-n-envs", "8192"])
    rows = [
        _obstacle_row("Pursuit", 0, 100.0, 200, 100),
        _obstacle_row("Pursuit", 16, 45.0, 100, 100),
        _obstacle_row("Evasion", 0, 100.0, 60, 100),  # under an episode
        _obstacle_row("Evasion", 16, 60.0, 100, 100),
        _obstacle_row("Herding", 0, 100.0, 300, 300),
        _obstacle_row("Herding", 16, 80.0, 300, 300),
    ]
    pursuit, evasion, herding = bench.obstacle_ratios(rows, args)
    assert pursuit["value"] == pytest.approx(0.45) and pursuit["pass"] is False
    assert evasion["value"] == pytest.approx(0.6) and evasion["pass"] is None
    assert herding["value"] == pytest.approx(0.8) and herding["pass"] is True
    printed = bench.table([], [pursuit, evasion, herding]).splitlines()
    lines = {
        q["name"]: next(x for x in printed if q["name"] in x) for q in (pursuit, evasion, herding)
    }
    assert lines[pursuit["name"]].endswith("FAIL >= 0.5x")
    assert lines[evasion["name"]].endswith(
        "not judged against >= 0.5x: repeats shorter than an episode time no reset"
    )
    assert lines[herding["name"]].endswith("PASS >= 0.5x")


@settings(max_examples=200, deadline=None)
@given(steps=st.integers(1, 20_000), episode=st.integers(1, 1_000))
def test_obstacle_repeats_step_whole_episodes_when_one_fits(steps, episode):
    """A repeat of the obstacles section steps a whole number of episodes, the nearest to
    its time's worth of steps, so each holds as many of the envs' synchronised resets."""
    from benchmarks.obstacles import whole_episodes

    k = whole_episodes(steps, episode)
    if steps >= 1.5 * episode:
        assert k % episode == 0 and abs(k - steps) <= episode / 2
    elif steps < episode / 2:
        assert k == steps  # no episode fits: the repeat keeps its length (--quick)
    assert k >= 1
    # Without --quick a repeat steps at least one episode, however long that takes.
    k_full = whole_episodes(steps, episode, at_least_one=True)
    assert k_full % episode == 0 and k_full >= episode
    assert k_full == (k if k % episode == 0 else episode)
    assert [whole_episodes(*a) for a in ((156, 100), (333, 100), (9, 300))] == [200, 300, 9]
    assert whole_episodes(9, 300, at_least_one=True) == 300
