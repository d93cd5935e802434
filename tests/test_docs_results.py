"""The docs' result tables: every table directive on a page names a results file that exists
and renders, and the benchmark results files hold what their commands write."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

steer_docs = pytest.importorskip("steer_docs")  # needs sphinx (the docs extra)

PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
DIRECTIVE = re.compile(r"```\{(bench-table|fidelity-table|baseline-table|team-table)\} (.+)")
USES = [
    (page.relative_to(DOCS).as_posix(), kind, arg.strip())
    for page in PAGES
    for kind, arg in DIRECTIVE.findall(page.read_text())
]


def load(name: str) -> dict:
    return json.loads((ROOT / "benchmarks" / name).read_text())


def test_the_pages_use_the_result_tables():
    kinds = {kind for _, kind, _ in USES}
    assert kinds == {"bench-table", "fidelity-table", "baseline-table", "team-table"}
    files = {arg for _, _, arg in USES}
    assert {"results_core.json", "results_fidelity.json"} <= files
    assert "agents/models/team_pursuit_league_crossplay.json" in files


@pytest.mark.parametrize(("page", "kind", "arg"), USES)
def test_each_table_renders_from_its_file(page, kind, arg):
    if kind == "bench-table":
        text = steer_docs.results_markdown(arg, "rows", None)
    elif kind == "fidelity-table":
        text = steer_docs.fidelity_markdown(arg)
    elif kind == "baseline-table":
        text = steer_docs.baseline_markdown(arg.split())
    else:
        text = steer_docs.team_markdown(arg) + steer_docs.team_paired_markdown(arg)
    assert text.count("\n|") >= 2, (page, arg)


def test_core_results_file_is_what_bench_core_writes():
    data = load("results_core.json")
    assert data["command"].startswith("python -m benchmarks.bench_core")
    assert {r["section"] for r in data["rows"]} == {"physics", "flocking", "small", "compile"}
    assert {r["size"] for r in data["rows"] if r["section"] == "flocking"} == {
        1_000,
        10_000,
        100_000,
    }
    assert all(r["median"] > 0 and r["unit"] in {"ms", "us", "s"} for r in data["rows"])
    assert [r["target"] for r in data["ratios"]] == ["<= 1x", ">= 5x"]
    assert "results_core.json" in (DOCS / "performance.md").read_text()


def test_compile_results_file_is_what_the_compile_section_writes():
    """Each task's first step with an empty and then a filled numba cache and its warm-up;
    the numpy library's first use."""
    from steer_env.warmup import targets

    data = load("results_compile.json")
    assert data["command"].startswith("python -m benchmarks --sections compile")
    names = [r["name"] for r in data["rows"]]
    expected = []
    for name in targets():
        what = "first use" if name == "library" else "first step"
        expected += [f"{what} of {name}, empty cache: compiles"]
        expected += [f"{what} of {name}, filled cache: loads"]
        if name != "library":
            expected += [f"warm-up of {name}, empty cache: compiles"]
    assert names == expected
    assert all(r["section"] == "compile" and r["unit"] == "s" for r in data["rows"])
    assert all(r["median"] > 0 for r in data["rows"])
    assert "results_compile.json" in (DOCS / "performance.md").read_text()


def test_fidelity_results_file_covers_every_variant_of_both_tasks():
    from benchmarks import fidelity

    data = load("results_fidelity.json")
    assert data["command"].startswith("python -m benchmarks.fidelity")
    tasks = {r["task"] for r in data["rows"]}
    assert tasks == {"steer_env/Pursuit-v0", "steer_env/Evasion-v0"}
    for task in tasks:
        assert [r["variant"] for r in data["rows"] if r["task"] == task] == list(fidelity.VARIANTS)
    for r in data["rows"]:
        rate = r["capture_rate"]
        assert 0.0 <= rate["lo"] <= rate["mean"] <= rate["hi"] <= 1.0
        assert r["label"] == fidelity.LABELS[r["variant"]]
