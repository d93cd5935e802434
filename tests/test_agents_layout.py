"""The layout of the ``agents`` package: its import graph (every import statement, function
level included) has no cycle, no module imports another's private name, the package's code
never imports its own deprecated paths, and every deprecated path still resolves to the
same object with a warning naming the new module."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agents"

#: Old module -> the modules its names moved to (the first holds most of them).
MOVED = {
    "agents.policies": "agents.evaluation.policies",
    "agents.scripted": "agents.evaluation.scripted",
    "agents.stats": "agents.evaluation.stats",
    "agents.compare": "agents.evaluation.compare",
    "agents.render": "agents.evaluation.render",
    "agents.team": "agents.evaluation.cross_play",
    "agents.evaluation.team": "agents.evaluation.cross_play",
    "agents.team_calibration": "agents.evaluation.team_calibration",
    "agents.team_league": "agents.evaluation.team_league",
    "agents.rllib_env": "agents.rllib.env",
    "agents.rllib_policy": "agents.rllib.policy",
    "agents.rllib_runner": "agents.rllib.runner",
    "agents.rllib_team": "agents.rllib.team",
    "agents.rllib_team_env": "agents.rllib.team_env",
    "agents.rllib_training": "agents.rllib.training",
    "agents.run_options": "agents.training.options",
}
#: A public name of each old module that a user may have imported (no ray needed).
SAMPLE_NAME = {
    "agents.policies": "load_policy",
    "agents.scripted": "ScriptedPolicy",
    "agents.stats": "wilson_interval",
    "agents.compare": "run_comparison",
    "agents.render": "render_gif",
    "agents.team": "run_team_comparison",
    "agents.evaluation.team": "run_team_comparison",
    "agents.team_calibration": "main",
    "agents.team_league": "main",
    "agents.rllib_policy": "read_rllib_metadata",
    "agents.rllib_team": "MODULES",
    "agents.rllib_training": "wants_rllib",
    "agents.run_options": "resumed_run",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import statement in ``path``, at any depth; relative
    imports resolved; ``names`` empty for ``import x``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, [alias.name for alias in node.names]))
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``agents`` it imports (``from agents.x import y`` is an edge
    to ``agents.x.y`` when that is a module, else to ``agents.x``)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for module, names in imports_of(path):
            targets = {f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES}
            if len(targets) < len(names) or not names:
                targets.add(module)
            graph[name] |= {t for t in targets if t in MODULES and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    # agents.evaluation.compare imports the single-agent episodes inside methods only.
    assert "agents.evaluation.episodes" in graph["agents.evaluation.compare"]
    assert "agents.rllib.policy" in graph["agents.evaluation.policies"]


def test_agents_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_private_name_is_imported_across_modules():
    private = [
        f"{name} imports {module}.{n}"
        for name, path in MODULES.items()
        for module, names in imports_of(path)
        for n in names
        if n.startswith("_") and not n.startswith("__") and module.split(".")[0] == "agents"
    ]
    assert not private, private


def deprecated_uses(module: str, names: list[str]) -> list[str]:
    """What an import statement takes from a deprecated path: an old module, or a name that
    the package ``agents.training`` only forwards (its submodules are not deprecated)."""
    if module in MOVED:
        return [module]
    found = [f"{module}.{n}" for n in names if f"{module}.{n}" in MOVED]
    if module == "agents.training":
        found += [f"{module}.{n}" for n in names if f"{module}.{n}" not in MODULES]
    return found


def test_the_package_never_imports_its_deprecated_paths():
    users = [
        f"{name} imports {use}"
        for name, path in MODULES.items()
        if name not in MOVED
        for module, names in imports_of(path)
        for use in deprecated_uses(module, names)
    ]
    assert not users, users
    assert deprecated_uses("agents.training", ["RunPaths"]) == ["agents.training.RunPaths"]
    assert deprecated_uses("agents", ["compare"]) == ["agents.compare"]


@pytest.mark.parametrize("old", sorted(SAMPLE_NAME))
def test_a_moved_name_still_resolves_with_a_warning_naming_its_new_module(old):
    name = SAMPLE_NAME[old]
    new = importlib.import_module(MOVED[old])
    shim = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated.*{MOVED[old]}"):
        got = getattr(shim, name)
    assert got is getattr(new, name)


def test_the_old_training_module_resolves_with_a_warning():
    import agents.training
    from agents.training import run

    with pytest.warns(DeprecationWarning, match=r"agents\.training\.RunPaths.*agents\.training"):
        got = agents.training.RunPaths
    assert got is run.RunPaths


def test_a_name_the_old_module_never_had_is_an_attribute_error():
    import agents.compare

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no_such_name"):
            agents.compare.no_such_name  # noqa: B018


@pytest.mark.parametrize(
    "entry", ["agents.compare", "agents.render", "agents.sweep", "agents.team_calibration"]
)
def test_documented_entry_points_run_without_a_deprecation_warning(entry):
    proc = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-m", entry, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"python -m {entry}" in proc.stdout
    assert "Deprecat" not in proc.stderr


def test_old_default_tables_resolve_with_a_warning_and_keep_their_values():
    """The tables that moved into TRAINING_DEFAULTS read as they did (their first-release
    values, written out here), so the default runs did not change; but for PPO on pursuit
    (229,376 timesteps on 32 envs of 128 steps, 8 epochs) and on evasion (229,376 timesteps),
    which they read as TRAINING_DEFAULTS holds them."""
    import agents.rllib_team
    import agents.rllib_training
    import agents.training

    old = {
        (agents.training, "DEFAULT_TIMESTEPS"): {
            ("ppo", "pursuit"): 229_376,
            ("ppo", "evasion"): 229_376,
            ("ppo", "team_pursuit"): 1_000_000,
            ("sac", "pursuit"): 50_000,
            ("sac", "evasion"): 50_000,
            ("sac", "team_pursuit"): 50_000,
        },
        (agents.training, "DEFAULT_N_ENVS"): {"ppo": 32, "sac": 4},
        (agents.rllib_training, "DEFAULT_TIMESTEPS"): {
            "steer_env/Pursuit-v0": 500_000,
            "steer_env/Evasion-v0": 1_000_000,
        },
        (agents.rllib_training, "DEFAULT_ENVS_PER_RUNNER"): 32,
        (agents.rllib_training, "DEFAULT_ENV_RUNNERS"): 1,
        (agents.rllib_team, "DEFAULT_TIMESTEPS"): 1_000_000,
        (agents.rllib_team, "DEFAULT_ENVS_PER_RUNNER"): 8,
        (agents.rllib_team, "HYPERPARAMS"): {"rollout_fragment_length": 256},
    }
    for (module, name), value in old.items():
        with pytest.warns(DeprecationWarning, match=rf"{name} is deprecated: use "):
            got = getattr(module, name)
        if isinstance(value, dict):
            # Tasks registered since then add their own entries; the old ones keep theirs.
            got = {key: got[key] for key in value}
        assert got == value, (module.__name__, name)
    with pytest.warns(DeprecationWarning):
        ppo = agents.training.HYPERPARAMS["ppo"]
    assert ppo["n_steps"] == 128 and ppo["batch_size"] == 1024 and ppo["n_epochs"] == 8
    with pytest.warns(DeprecationWarning):
        hyperparameters = agents.training.hyperparameters
    assert hyperparameters("ppo", 2, 1000)["batch_size"] == 256  # a divisor of 128 x 2
