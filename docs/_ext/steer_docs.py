"""Sphinx directives of the steer-env docs: pages built from the code and the results files.

* ``env-card``: an environment's page from its docstring (the one source of its spaces,
  rewards, episode end and arguments tables), with the environment's GIF.
* ``bench-table``: a table of a results file that ``python -m benchmarks`` writes
  (``benchmarks/results*.json``), with the command that wrote it, so a page shows no figure
  that no command produced.

Both emit MyST Markdown and parse it where they stand, so they are used from ``.md`` pages.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]

_ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|obj|exc):`")


def import_object(dotted: str) -> Any:
    """The module, class or function named ``dotted`` (``package.module.Name``)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        module, _, name = dotted.rpartition(".")
        return getattr(importlib.import_module(module), name)


def _fence_doctests(lines: list[str]) -> list[str]:
    """``>>>`` examples (with their output) as fenced ``pycon`` blocks."""
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith(">>>") and not inside:
            out += ["```pycon"]
            inside = True
        elif inside and not line.strip():
            out += ["```"]
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return out


def docstring_markdown(obj: Any) -> str:
    """``obj``'s docstring as MyST Markdown.

    Environment docstrings follow the Farama layout (``## Description``, ``## Action Space``,
    ... with pipe tables): their reST roles become MyST roles and their doctests code
    blocks. A docstring without ``##`` headings is reStructuredText and is parsed as such.
    """
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    if not any(line.startswith("## ") for line in lines):
        return "```{eval-rst}\n" + doc + "\n```"
    text = "\n".join(_fence_doctests(lines))
    return _ROLE.sub(lambda m: "{py:" + m.group(1) + "}`", text)


class EnvCard(SphinxDirective):
    """``{env-card} steer_env.envs.pursuit.PursuitEnv``: the docstring and the GIF.

    Options: ``gif`` (a path from the repository root) and ``caption``.
    """

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {
        "gif": directives.unchanged,
        "caption": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        obj = import_object(self.arguments[0])
        source = inspect.getsourcefile(obj)
        if source:
            self.env.note_dependency(source)
        text = []
        gif = self.options.get("gif")
        if gif:
            path = ROOT / gif
            if not path.is_file():
                raise self.error(f"env-card: no file {gif}")
            here = Path(self.env.doc2path(self.env.docname)).parent
            rel = Path(*[".."] * len(here.relative_to(ROOT).parts), gif)
            caption = self.options.get("caption", "")
            text += [f"```{{figure}} {rel.as_posix()}", ":width: 480px", "", caption, "```", ""]
        text.append(docstring_markdown(obj))
        container = nodes.container(classes=["env-card"])
        self.state.nested_parse(StringList("\n".join(text).splitlines()), 0, container, True)
        return container.children


def fmt(value: float | None, unit: str = "") -> str:
    """A measured value as the pages print it: 3 significant figures, thousands separated."""
    if value is None:
        return ""
    if unit == "x":
        return f"{value:.3g}x" if value < 10 else f"{value:.0f}x"
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:.2f} M"
    if a >= 1000:
        return f"{value:,.0f}"
    if a >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def load_results(name: str) -> dict:
    """A results file of ``python -m benchmarks`` (``benchmarks/<name>``)."""
    return json.loads((ROOT / "benchmarks" / name).read_text())


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def results_markdown(name: str, kind: str, sections: set[str] | None) -> str:
    """One results file's rows or ratios as a Markdown table, with its command and machine."""
    data = load_results(name)
    lines: list[str] = []
    if kind == "rows":
        lines += ["| what | size | median | unit | min - max | note |", "|---|---|---|---|---|---|"]
        for r in data["rows"]:
            if sections and r["section"] not in sections:
                continue
            if "unit" not in r:  # a section that did not run (its reason says why)
                continue
            spread = ""
            if r.get("min") is not None:
                spread = f"{fmt(r['min'], r['unit'])} - {fmt(r['max'], r['unit'])}"
            size = "" if r["size"] is None else f"{r['size']:,}"
            median = fmt(r.get("median"), r["unit"])
            row = [r["name"], size, median, r["unit"], spread, r.get("note") or ""]
            lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    elif kind == "ratios":
        lines += [
            "| ratio | size | value | paired median | target | met |",
            "|---|---|---|---|---|---|",
        ]
        for r in data["ratios"]:
            if sections and not any(s.lower() in r["name"].lower() for s in sections):
                continue
            paired = fmt(r["paired"]["median"], "x") if r.get("paired") else ""
            met = {True: "yes", False: "no", None: ""}[r.get("pass")]
            size = "" if r["size"] is None else f"{r['size']:,}"
            value = fmt(r["value"], r["unit"]) if r["unit"] == "x" else fmt(r["value"])
            row = [r["name"], size, value, paired, r.get("target") or "", met]
            lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    else:
        raise ValueError(f"bench-table: kind is rows or ratios, not {kind!r}")
    m = data["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in data["versions"].items() if v)
    load = ", ".join(str(x) for x in m.get("load_average_1_5_15min", []))
    lines += [
        "",
        f"Written by `{data['command']}` ({m['cpu']}, {m['cores']} cores, load average "
        f"{load}; {versions}).",
    ]
    return "\n".join(lines)


class BenchTable(SphinxDirective):
    """``{bench-table} results.json``: a results file's ``rows`` or ``ratios`` as a table.

    Options: ``kind`` (``rows``, the default, or ``ratios``) and ``sections`` (comma-separated
    benchmark sections for rows; words of the ratio's name for ratios).
    """

    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "kind": directives.unchanged,
        "sections": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        self.env.note_dependency(str(ROOT / "benchmarks" / name))
        sections = self.options.get("sections")
        chosen = {s.strip() for s in sections.split(",")} if sections else None
        text = results_markdown(name, self.options.get("kind", "rows"), chosen)
        container = nodes.container(classes=["bench-table"])
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("env-card", EnvCard)
    app.add_directive("bench-table", BenchTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
