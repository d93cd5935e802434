"""The docs pages: every Python block runs as written and every relative link resolves
(`.ci/run` builds the site with warnings as errors, which checks the links between pages
and their anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
# Pages whose blocks need an integration's extra run in that integration's tests.
RUN_ELSEWHERE = {
    "torchrl.md": ROOT / "tests" / "test_torchrl.py",
    "benchmarl.md": ROOT / "tests" / "test_benchmarl.py",
}


def run_block(code: str, name: str) -> None:
    """Run one Markdown python block; a training example is shortened (``.learn(300_000)``
    to one rollout of 2 envs), so the test checks its calls, not its learning."""
    if ".learn(" in code:
        assert ".learn(300_000)" in code and "n_envs=16" in code
        code = code.replace(".learn(300_000)", ".learn(2_048)").replace("n_envs=16", "n_envs=2")
    exec(compile(code, name, "exec"), {"__name__": "docs_example"})


BLOCKS = [
    (page, i, code)
    for page in PAGES
    if page.name not in RUN_ELSEWHERE
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))
]


def test_docs_have_python_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(
    ("page", "index", "code"),
    [
        pytest.param(
            *b, marks=[pytest.mark.slow, pytest.mark.training] if ".learn(" in b[2] else []
        )
        for b in BLOCKS
    ],
    ids=[f"{p.relative_to(DOCS)}[{i}]" for p, i, _ in BLOCKS],
)
def test_docs_example_runs(page, index, code):
    run_block(code, f"{page.relative_to(ROOT)}[python block {index}]")


@pytest.mark.parametrize("name", sorted(RUN_ELSEWHERE))
def test_pages_run_elsewhere_are_run(name):
    assert f'"docs" / "{name}"' in RUN_ELSEWHERE[name].read_text()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_docs_relative_links_resolve(page):
    """Markdown links and images of a page point at files that exist (Sphinx checks the
    links between pages and their anchors again when it builds with -W)."""
    text = page.read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target and not target.startswith("mailto:"):
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_the_page_check_finds_a_page_that_does_not_open_with_its_animation():
    """``docs/check_pages.py``'s source checks: an env page must show its animation and
    every summary row before its Action Space section."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_pages", DOCS / "check_pages.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    rows = "".join(
        f"<td><p>{r}</p></td>"
        for r in ("Action space", "Observation space", "Import", "Learned vs classic")
    )
    good = f'<img src="a.gif">{rows}<section id="action-space">'
    assert check.check_env_page(good) == []
    late = f'<section id="action-space"><img src="a.gif">{rows}'
    assert len(check.check_env_page(late)) == 5
    no_headline = good.replace("<td><p>Learned vs classic</p></td>", "")
    assert check.check_env_page(no_headline) == [
        "no summary row 'Learned vs classic' before the Action Space section"
    ]
