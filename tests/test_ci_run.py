"""`.ci/run`: the modules the main suite skips for a missing extra (the root conftest's
``collect_ignore``) are collected, with their ``>>>`` examples, in that extra's venv."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = (ROOT / ".ci" / "run").read_text()


def skipped_for_an_extra() -> list[str]:
    """The module paths the root conftest ignores when an extra is not installed."""
    text = (ROOT / "conftest.py").read_text()
    blocks = re.findall(r"if _missing\(\"\w+\"\):\n((?:    .*\n)+)", text)
    return [p for block in blocks for p in re.findall(r'"([\w/]+\.py)"', block)]


def venv_pytest_commands() -> list[str]:
    joined = RUN.replace("\\\n", " ")
    return [line for line in joined.splitlines() if '"$venv/bin/python" -m pytest' in line]


def test_each_module_skipped_for_an_extra_runs_in_a_venv():
    paths = skipped_for_an_extra()
    assert "agents/rllib/runner.py" in paths and "steer_env/integrations/benchmarl.py" in paths
    commands = venv_pytest_commands()
    assert len(commands) == 2
    for path in paths:
        covered = [
            c
            for c in commands
            if "--doctest-modules" in c
            and any(path == w or path.startswith(w.rstrip("/") + "/") for w in c.split())
        ]
        assert covered, f"{path} is collected by no venv's pytest command in .ci/run"
