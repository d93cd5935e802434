"""The README, the docs, and the code's docstrings and comments say what the project does,
not how it was developed: no issue numbers, no narration of the machine of a day, no
before-and-after of earlier commits (a measured design decision is stated as the decision
and its measurement)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TELLTALES = re.compile(
    r"\bthis (?:[\w-]+ )?machine\b|\bthe previous machine\b|\bprevious machine\b"
    r"|\bissues? ?#\d*|\bissues? \d+|\bthis session\b|\bwe tried\b|\bbefore and after\b"
    r"|\ban earlier run\b|\bre-run on the current engine\b",
    re.IGNORECASE,
)
TEXT_FILES = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "CONTRIBUTING.md",
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts),
    *sorted((ROOT / "agents" / "models").glob("*.md")),
    *sorted((ROOT / "benchmarks").glob("*.md")),
]
PY_FILES = [
    *sorted(
        p
        for top in ("steer_env", "agents", "benchmarks", "tests", "docs")
        for p in (ROOT / top).rglob("*.py")
        if "_build" not in p.parts
    ),
    ROOT / "train.py",
    ROOT / "conftest.py",
]


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text()
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append((first.lineno, value.value))
    return found


def hits(text: str) -> list[str]:
    return [m.group(0) for m in TELLTALES.finditer(" ".join(text.split()))]


@pytest.mark.parametrize("path", TEXT_FILES, ids=[str(p.relative_to(ROOT)) for p in TEXT_FILES])
def test_no_diary_in_pages(path):
    if not path.exists():
        pytest.skip(f"{path.name} is absent")
    found = [(i, h) for i, line in enumerate(path.read_text().splitlines(), 1) for h in hits(line)]
    found += [("(across lines)", h) for h in hits(path.read_text()) if h not in str(found)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"


def test_no_diary_in_docstrings_and_comments():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {h!r}"
        for path in PY_FILES
        if path.name != "test_no_diary.py"
        for line, text in prose(path)
        for h in hits(text)
    ]
    assert not found, "\n".join(found)


def test_the_telltales_are_caught():
    assert hits("measured on this 2-core machine, faster than the previous machine")
    assert hits("see issue 10 and issue #3; we tried it before and after")
    assert not hits("a tissue 10 cm wide; the machine's speed")
