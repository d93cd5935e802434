"""Sphinx directives of the steer-env docs: pages built from the code and the results files.

* ``env-card``: an environment's page from its docstring (the one source of its spaces,
  rewards, episode end and arguments tables), opened by the environment's GIF and a summary
  table (its spaces and import line, read from the env, and the learned-vs-classic headline
  of its shipped comparison).
* ``comparison-table``: the tables of a ``comparison.json`` that ``python -m agents.compare``
  writes (the shipped models' are ``agents/models/*_comparison.json``).
* ``bench-table``: a table of a results file that ``python -m benchmarks`` or
  ``python -m benchmarks.bench_core`` writes (``benchmarks/results*.json``), with the command
  that wrote it, so a page shows no figure that no command produced.
* ``fidelity-table``: the variants of ``python -m benchmarks.fidelity``
  (``benchmarks/results_fidelity.json``), one column pair per task.
* ``baseline-table``: the scripted agents' success rates of one or more ``comparison.json``.
* ``sweep-table``: a ``sweep.json`` that ``python -m agents.sweep`` writes, with its command.
* ``training-table``: a results file of ``python -m benchmarks.training`` (time to a
  success threshold, or ``--search``), with its command and machine.
* ``team-table``: a team ``comparison.json`` (``python -m agents.compare`` on a team model,
  or the cross-play of ``python -m agents.team_league``) as pursuer teams x evaders.
* ``calibration-table``: results files of ``python -m agents.team_calibration --json``
  (``agents/models/team_calibration_<seed>.json``), one column per seed block.
* ``runs-table``: training runs of ``train.py``, one row per run, from the ``config.json``
  each run writes (copies shipped as ``benchmarks/train_runs/*.json``): the final
  comparison, the training seconds and the command.
* ``behavior-card``: a behavior's picture (``docs/_static/behaviors/``, drawn by
  ``python -m steer_env.demos.gallery --stills``) beside its docstring.

They emit MyST Markdown and parse it where they stand, so they are used from ``.md`` pages.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shlex
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


def _rate(x: float, ci: list[float]) -> str:
    return f"{100 * x:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def headline(path: str) -> str:
    """The learned side against the task's classic one in a ``comparison.json``: both
    success rates, the paired difference and the episodes (a team task's cross-play
    file: the learned team and the cooperative one against the flow evader)."""
    data = json.loads((ROOT / path).read_text())
    if "cells" in data:
        learned, other = data["cells"]["learned vs flow"], data["cells"]["cooperative vs flow"]
        p = data["paired"]["learned vs flow - cooperative vs flow"]
        a, b = (_rate(x["capture_rate"], x["capture_ci95"]) for x in (learned, other))
        diff = _points(p["capture_diff"], p["capture_diff_ci95"])
        return (
            f"learned pursuers capture {a} vs the cooperative team {b}: {diff} points "
            f"({data['episodes']:,} paired episodes, `{path}`)"
        )
    agents = data["agents"]
    classic = next(k for k in agents if k != "learned")
    p = data["paired_vs_learned"][classic]
    a, b = (
        _rate(agents[k]["success_rate"], agents[k]["success_ci95"]) for k in ("learned", classic)
    )
    diff = _points(p["success_diff"], p["success_diff_ci95"])
    return (
        f"{agents['learned']['label']} {a} vs {agents[classic]['label']} {b}: {diff} points "
        f"({data['episodes']:,} paired episodes, `{path}`)"
    )


def summary_rows(obj: Any) -> list[tuple[str, str]]:
    """The summary of an env card, as Gymnasium's env pages open: the spaces and the line
    that makes the env, read from the env itself (a Gymnasium env class, or a PettingZoo
    module with ``parallel_env``)."""
    if inspect.isclass(obj):
        import gymnasium as gym

        import steer_env  # noqa: F401

        env_id = obj.task.env_id
        env = gym.make(env_id)
        rows = [
            ("Action space", f"`{env.action_space}`"),
            ("Observation space", f"`{env.observation_space}`"),
            ("Import", f'`gym.make("{env_id}")`'),
        ]
        env.close()
        return rows
    name = obj.__name__.rpartition(".")[2]
    env = obj.parallel_env()
    agent = env.possible_agents[0]
    rows = [
        ("Agents (default)", ", ".join(f"`{a}`" for a in env.possible_agents)),
        ("Action space", f"`{env.action_space(agent)}` per agent"),
        ("Observation space", f"`{env.observation_space(agent)}` per agent"),
        ("Import", f"`from steer_env.envs import {name}; {name}.parallel_env()`"),
    ]
    env.close()
    return rows


class EnvCard(SphinxDirective):
    """``{env-card} steer_env.envs.pursuit.PursuitEnv``: the GIF, the summary table (the
    spaces and the import line, read from the env; the learned side against the classic
    one, read from a shipped comparison) and the docstring.

    Options: ``gif`` (a path from the repository root), ``caption`` and ``comparison`` (a
    ``comparison.json`` from the repository root, for the summary's headline).
    """

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {
        "gif": directives.unchanged,
        "caption": directives.unchanged,
        "comparison": directives.unchanged,
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
        rows = summary_rows(obj)
        comparison = self.options.get("comparison")
        if comparison:
            if not (ROOT / comparison).is_file():
                raise self.error(f"env-card: no file {comparison}")
            self.env.note_dependency(str(ROOT / comparison))
            rows.append(("Learned vs classic", headline(comparison)))
        text += ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""]
        lines = docstring_markdown(obj).splitlines()
        # The animation and the summary open the card. Parsing adds the docstring's
        # sections to the page as it meets them and the rest after them, so they go at the
        # top of its first section (a docstring without sections: before it).
        first = next((k for k, line in enumerate(lines) if line.startswith("## ")), -1)
        lines[first + 1 : first + 1] = ["", *text]
        container = nodes.container(classes=["env-card"])
        self.state.nested_parse(StringList(lines), 0, container, True)
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
        f"Written by `{data['command']}` ({_cpu(m)}, {m['cores']} cores, load average "
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


def _interval(iv: dict[str, float], signed: bool = False) -> str:
    """An interval of the results files (fractions) in percent or points."""
    f = "+.1f" if signed else ".1f"
    body = f"{100 * iv['mean']:{f}} [{100 * iv['lo']:{f}}, {100 * iv['hi']:{f}}]"
    return body if signed else body + "%"


def _cpu(machine: dict) -> str:
    """The processor of a results file's ``machine``, with the CPU its kernels were compiled
    for where the file records it."""
    target = machine.get("compiled_for")
    return f"{machine['cpu']} (compiled for {target})" if target else machine["cpu"]


def _written_by(data: dict) -> str:
    m = data["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in data["versions"].items() if v)
    return f"Written by `{data['command']}` ({_cpu(m)}, {m['cores']} cores; {versions})."


def fidelity_markdown(name: str) -> str:
    """``benchmarks/<name>`` of ``python -m benchmarks.fidelity``: variants x tasks."""
    data = load_results(name)
    tasks = list(dict.fromkeys(r["task"] for r in data["rows"]))
    variants = list(dict.fromkeys(r["variant"] for r in data["rows"]))
    cell = {(r["task"], r["variant"]): r for r in data["rows"]}
    head = ["variant"]
    for t in tasks:
        head += [t.split("/")[-1], "minus default, points"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for v in variants:
        label = next(cell[(t, v)]["label"] for t in tasks if (t, v) in cell)
        row = [label]
        for t in tasks:
            r = cell.get((t, v))
            if r is None:
                row += ["", ""]
                continue
            row.append(_interval(r["capture_rate"]))
            row.append("" if v == "default" else _interval(r["minus_default"], signed=True))
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    s = data["settings"]
    lines += [
        "",
        f"{s['episodes']:,} paired episodes per task from seed {s['seed']:,}. " + _written_by(data),
    ]
    return "\n".join(lines)


class FidelityTable(SphinxDirective):
    """``{fidelity-table} results_fidelity.json``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        self.env.note_dependency(str(ROOT / "benchmarks" / name))
        container = nodes.container(classes=["fidelity-table"])
        text = fidelity_markdown(name)
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


def _points(diff: float, ci: list[float], scale: float = 100.0, digits: int = 1) -> str:
    lo, hi = (f"{scale * c:+.{digits}f}" for c in ci)
    return f"{scale * diff:+.{digits}f} [{lo}, {hi}]"


def comparison_markdown(path: str) -> str:
    """A single-agent ``comparison.json`` as ``python -m agents.compare`` prints it (its
    :func:`~agents.evaluation.compare.format_table`, with the task's words), and its file."""
    from agents.evaluation.compare import format_table

    data = json.loads((ROOT / path).read_text())
    # The footnote's "*" would open a Markdown list.
    text = format_table(data).replace("\n* restricted mean", "\n\\* restricted mean")
    return f"{text}\n\n{data['episodes']} paired episodes from seed {data['seed']:,} (`{path}`)."


class ComparisonTable(SphinxDirective):
    """``{comparison-table} agents/models/pursuit_ppo_comparison.json``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0]
        self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["comparison-table"])
        text = comparison_markdown(path)
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


def baseline_markdown(paths: list[str]) -> str:
    """The scripted agents of single-agent ``comparison.json`` files: task, agent, success."""
    lines = ["| task | scripted agent | success [95% CI] |", "|---|---|---|"]
    notes = []
    for path in paths:
        data = json.loads((ROOT / path).read_text())
        verb = "captures" if data["role"] == "pursuer" else "survives"
        for key, a in data["agents"].items():
            if key == "learned":
                continue
            lo, hi = a["success_ci95"]
            rate = f"{verb} {100 * a['success_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
            task = data["env_id"].split("/")[-1] + _field_of(data.get("config") or {})
            lines.append(f"| {task} | {a['label']} | {rate} |")
        notes.append(f"`{path}`: {data['episodes']} episodes from seed {data['seed']:,}")
    lines += ["", "; ".join(notes) + "."]
    return "\n".join(lines)


def _field_of(config: dict) -> str:
    """`` (12 obstacles)`` for a comparison played with obstacles, else nothing."""
    count = len(config["obstacles"]) if config.get("obstacles") else config.get("n_obstacles", 0)
    return f" ({count} obstacles)" if count else ""


class BaselineTable(SphinxDirective):
    """``{baseline-table} agents/models/pursuit_ppo_comparison.json ...``."""

    required_arguments = 1
    optional_arguments = 8

    def run(self) -> list[nodes.Node]:
        for path in self.arguments:
            self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["baseline-table"])
        text = baseline_markdown(list(self.arguments))
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


#: How the team tables name the scripted sides (the learned ones keep their key).
TEAM_NAMES = {
    "reynolds": "Reynolds team",
    "cooperative": "cooperative team",
    "learned": "learned team",
    "flow": "flow (scripted)",
}


def team_markdown(path: str) -> str:
    """A team ``comparison.json`` as pursuer teams (rows) x evaders (columns): capture rate
    [95% Wilson] and restricted mean time to capture."""
    data = json.loads((ROOT / path).read_text())
    evaders = list(data["evaders"])
    head = ["pursuers \\ evader", *(TEAM_NAMES.get(e, e) for e in evaders)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for team in data["pursuer_teams"]:
        row = [TEAM_NAMES.get(team, team)]
        for e in evaders:
            c = data["cells"].get(f"{team} vs {e}")
            if c is None:
                row.append("")
                continue
            lo, hi = c["capture_ci95"]
            row.append(
                f"{100 * c['capture_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], "
                f"{c['restricted_mean_time_s']:.1f} s"
            )
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        f"{data['episodes']:,} paired episodes from seed {data['seed']:,}; times restricted to "
        f"the {data['horizon_s']:g} s limit (`{path}`).",
    ]
    return "\n".join(lines)


def team_paired_markdown(path: str) -> str:
    """The paired differences of a team ``comparison.json``: capture points and seconds."""
    data = json.loads((ROOT / path).read_text())
    lines = [
        "| pair (same episodes) | capture rate, points [95% CI] | time to capture, s [95% CI] |",
        "|---|---|---|",
    ]
    for name, d in data.get("paired", {}).items():
        label = " - ".join(
            " vs ".join(TEAM_NAMES.get(w, w) for w in side.split(" vs "))
            for side in name.split(" - ")
        )
        success = _points(d["capture_diff"], d["capture_diff_ci95"])
        times = _points(d["time_diff_s"], d["time_diff_ci95_s"], 1.0, 2)
        lines.append(f"| {label} | {success} | {times} |")
    return "\n".join(lines)


class TeamTable(SphinxDirective):
    """``{team-table} agents/models/team_pursuit_league_crossplay.json``.

    Option ``paired`` (a flag): the paired differences instead of the cells.
    """

    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {"paired": directives.flag}

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0]
        self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["team-table"])
        paired = "paired" in self.options
        text = team_paired_markdown(path) if paired else team_markdown(path)
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


#: Where the behaviors' pictures are (``python -m steer_env.demos.gallery --stills`` writes them).
BEHAVIOR_PICTURES = "docs/_static/behaviors"


class BehaviorCard(SphinxDirective):
    """``{behavior-card} seek``: the picture of the gallery scene that shows
    ``steer_env.behaviors.seek`` beside the function's docstring (its formula).

    Options: ``source`` (the literature the behavior comes from) and ``caption``.
    """

    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "source": directives.unchanged_required,
        "caption": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        from steer_env.demos.gallery import BEHAVIOR_SCENES

        name = self.arguments[0]
        if name not in BEHAVIOR_SCENES:
            raise self.error(f"behavior-card: {name!r} has no gallery scene (BEHAVIOR_SCENES)")
        scene = BEHAVIOR_SCENES[name]
        picture = ROOT / BEHAVIOR_PICTURES / f"{scene}.png"
        if not picture.is_file():
            raise self.error(f"behavior-card: no picture {picture.relative_to(ROOT)}")
        self.env.note_dependency(str(picture))
        here = Path(self.env.doc2path(self.env.docname)).parent
        rel = Path(*[".."] * len(here.relative_to(ROOT).parts), BEHAVIOR_PICTURES, picture.name)
        caption = self.options.get("caption") or f"gallery scene `{scene}`"
        text = [
            f"```{{figure}} {rel.as_posix()}",
            ":width: 240px",
            ":align: right",
            "",
            caption,
            "```",
            "",
            f"**Source**: {self.options['source']}.",
            "",
            "```{eval-rst}",
            f".. autofunction:: steer_env.behaviors.{name}",
            "   :no-index:",
            "```",
            "",
        ]
        container = nodes.container(classes=["behavior-card"])
        self.state.nested_parse(StringList(text), 0, container)
        return container.children


def sweep_markdown(path: str) -> str:
    """A ``sweep.json`` as its table (:func:`agents.evaluation.sweep.format_rows`), then the
    episodes, the intervals and the command that wrote it."""
    from agents.evaluation.sweep import format_rows

    data = json.loads((ROOT / path).read_text())
    return "\n".join(
        [
            format_rows(data),
            "",
            f"{data['episodes']:,} paired episodes per agent and row from seed {data['seed']:,};"
            " success with 95% Wilson intervals, times restricted to the time limit, paired "
            f"differences with Newcombe's 95% interval. `{data['command']}` wrote `{path}`.",
        ]
    )


class SweepTable(SphinxDirective):
    """``{sweep-table} agents/models/herding_calibration_sweep.json``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0]
        self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["sweep-table"])
        self.state.nested_parse(StringList(sweep_markdown(path).splitlines()), 0, container)
        return container.children


def training_markdown(path: str) -> str:
    """A ``python -m benchmarks.training`` results file as its table
    (:func:`benchmarks.training.threshold_table` or :func:`~benchmarks.training.search_table`),
    then how it was measured and the command that wrote it."""
    from benchmarks import training

    data = json.loads((ROOT / path).read_text())
    m = data["machine"]
    where = (
        f"{m['cpu']}, {m['cores']} cores, load {m['load_average_1_5_15min']}; "
        f"`{data['command']}` wrote `{path}`."
    )
    if data["mode"] == "search":
        how = (
            f"Success on {data['episodes']:,} held-out paired episodes (seeds from "
            f"{data['eval_seed']:,}) per training seed, with the lowest 95% Wilson lower bound "
            "over the seeds; training seconds exclude the evaluation."
        )
        return "\n".join([training.search_table(data), "", how + " " + where])
    seeds = sorted({r["seed"] for r in data["runs"]})
    if data.get("framework") == "rllib":
        hp = data["hyperparameters"]
        shape = (
            f"RLlib {data['versions']['ray']} PPO with `train.py --framework rllib`'s "
            f"defaults ({data['num_env_runners']} env runner x {data['n_envs']} envs, "
            f"{hp['rollout_fragment_length']} steps each per iteration, learner in the driver, "
            f"local Ray of {data['ray']['cpus']:g} CPUs)"
        )
    else:
        shape = f"the default PPO hyperparameters on {data['n_envs']} envs"
    how = (
        f"{data['env_id']}, {shape}, {data['timesteps']:,} timesteps per run, seeds "
        f"{', '.join(str(s) for s in seeds)}; "
        f"evaluated every {data['eval_every']:,} timesteps on {data['episodes']:,} held-out "
        "paired episodes with the clock stopped (seconds are training seconds)."
    )
    return "\n".join([training.threshold_table(data), "", how + " " + where])


class TrainingTable(SphinxDirective):
    """``{training-table} benchmarks/results_training.json``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0]
        self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["training-table"])
        self.state.nested_parse(StringList(training_markdown(path).splitlines()), 0, container)
        return container.children


def calibration_markdown(paths: list[str]) -> str:
    """Results files of ``python -m agents.team_calibration --json`` as one table: the teams
    (rows), each file's capture rates (a column per seed block), each team's target and
    whether every file meets it."""
    files = [(path, json.loads((ROOT / path).read_text())) for path in paths]
    first = files[0][1]
    head = ["team", *(f"capture rate, seeds {d['seed']:,}.." for _, d in files), "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for team in first["teams"]:
        row = [f"`{team}`"]
        for _, d in files:
            r = d["teams"][team]
            row.append(f"{100 * r['rate']:.1f}% [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]")
        targets = [next(t for t in d["targets"] if t["team"] == team) for _, d in files]
        row.append(targets[0]["target"].removeprefix(team).strip())
        row.append(", ".join("yes" if t["met"] else "no" for t in targets))
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    written = "; ".join(
        f"`{d['command']}` wrote `{path}` ({d['wall_s']:.1f} s)" for path, d in files
    )
    lines += [
        "",
        f"{first['episodes']:,} paired episodes per team and seed block, {first['pursuers']} "
        f"pursuers per team, 95% Wilson intervals. {written}.",
    ]
    return "\n".join(lines)


class CalibrationTable(SphinxDirective):
    """``{calibration-table} agents/models/team_calibration_1000000.json ...``."""

    required_arguments = 1
    optional_arguments = 8

    def run(self) -> list[nodes.Node]:
        for path in self.arguments:
            self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["calibration-table"])
        text = calibration_markdown(list(self.arguments))
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


def run_command(config: dict) -> str:
    """The command a run's ``config.json`` records, as one types it (``python train.py ...``)."""
    return shlex.join(["python", *config["command"][1:]])


def _run_times(config: dict) -> tuple[float, float, str]:
    """A finished run's training seconds, training timesteps per second and engine warm-up
    seconds (its first session's; an RLlib run's per process, the driver's first)."""
    session = config["sessions"][0]
    warm = session["warmup_s"]
    warm = " + ".join(f"{w:.1f}" for w in warm) if isinstance(warm, list) else f"{warm:.1f}"
    return session["train_wall_s"], session["fps"], warm


def _run_envs(options: dict) -> str:
    """The envs a run trained on: ``N envs`` (stable-baselines3), or RLlib's env runners."""
    if "n_envs" in options:
        return f"{options['n_envs']} envs"
    return (
        f"{options['num_env_runners']} env runner(s) x {options['envs_per_runner']} envs, "
        f"{options['num_learners']} learner actors"
    )


def runs_markdown(paths: list[str]) -> str:
    """Training runs of ``train.py`` (copies of the ``config.json`` each run writes), one row
    per run: the final comparison's learned side against the task's classic scripted side
    (team runs: the learned team and the cooperative team against the flow evader), the
    paired differences, the training seconds and the run's total seconds."""
    from agents.evaluation.compare import task_of

    runs = [(path, json.loads((ROOT / path).read_text())) for path in paths]
    first = runs[0][1]
    env_id = first["options"]["env"]
    metrics = task_of(env_id).metrics
    what, time_what = metrics.labels["rate"], metrics.time_means
    comp = first["comparison"]
    if "cells" in comp:
        learned, other = "learned vs flow", "cooperative vs flow"
        diff_name = f"{learned} - {other}"
        other_label = "cooperative team"
    else:
        learned = "learned"
        other = next(k for k in comp["agents"] if k != "learned")
        diff_name = other
        other_label = other
    head = [
        "training seed",
        f"learned: {what} rate [95% CI]",
        f"{other_label}: {what} rate",
        f"learned - {other_label}, points [95% CI]",
        f"{time_what}: learned - {other_label}, s [95% CI]",
        "goal met",
        "training, s (timesteps/s)",
        "run total, s (of it engine warm-up)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    commands = []
    for path, d in runs:
        c = d["comparison"]
        if "cells" in c:
            a, b = c["cells"][learned], c["cells"][other]
            rates = [(x["capture_rate"], x["capture_ci95"]) for x in (a, b)]
            p = c["paired"][diff_name]
            diff, diff_ci = p["capture_diff"], p["capture_diff_ci95"]
        else:
            a, b = c["agents"][learned], c["agents"][other]
            rates = [(x["success_rate"], x["success_ci95"]) for x in (a, b)]
            p = c["paired_vs_learned"][diff_name]
            diff, diff_ci = p["success_diff"], p["success_diff_ci95"]
        train_s, fps, warmup_s = _run_times(d)
        (rate, (lo, hi)), (other_rate, (olo, ohi)) = rates
        row = [
            str(d["options"]["seed"]),
            f"{100 * rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]",
            f"{100 * other_rate:.1f}% [{100 * olo:.1f}, {100 * ohi:.1f}]",
            _points(diff, diff_ci),
            _points(p["time_diff_s"], p["time_diff_ci95_s"], 1.0, 2),
            "yes" if c["goal"]["met"] else "no",
            f"{train_s:.1f} ({fps:,.0f})",
            f"{d['total_wall_s']:.1f} ({warmup_s})",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
        commands.append(f"`{run_command(d)}` (`{path}`)")
    o = first["options"]
    steps = first["sessions"][-1]["end_timesteps"]
    versions = ", ".join(f"{k} {v}" for k, v in first["versions"].items() if k != "platform")
    lines += [
        "",
        f"{env_id}, {steps:,} timesteps on {_run_envs(o)}, {o['threads']} torch thread(s); "
        f"the final comparison on {comp['episodes']:,} paired episodes from seed "
        f"{comp['seed']:,} (95% Wilson intervals, Newcombe's for paired differences of rates, "
        f"paired t for times restricted to the time limit). Goal: {comp['goal']['criterion']}. "
        "The warm-up compiles the engine, or loads it from numba's cache, "
        "before the training clock starts. Each row is a run's `config.json`, written by "
        f"{'; '.join(commands)}; {versions}.",
    ]
    return "\n".join(lines)


class RunsTable(SphinxDirective):
    """``{runs-table} benchmarks/train_runs/pursuit_seed0.json ...``."""

    required_arguments = 1
    optional_arguments = 16

    def run(self) -> list[nodes.Node]:
        for path in self.arguments:
            self.env.note_dependency(str(ROOT / path))
        container = nodes.container(classes=["runs-table"])
        text = runs_markdown(list(self.arguments))
        self.state.nested_parse(StringList(text.splitlines()), 0, container)
        return container.children


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("env-card", EnvCard)
    app.add_directive("bench-table", BenchTable)
    app.add_directive("comparison-table", ComparisonTable)
    app.add_directive("fidelity-table", FidelityTable)
    app.add_directive("baseline-table", BaselineTable)
    app.add_directive("sweep-table", SweepTable)
    app.add_directive("training-table", TrainingTable)
    app.add_directive("team-table", TeamTable)
    app.add_directive("calibration-table", CalibrationTable)
    app.add_directive("runs-table", RunsTable)
    app.add_directive("behavior-card", BehaviorCard)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
