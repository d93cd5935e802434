"""The README's Python examples run as written (training shortened to keep the suite fast),
and its figures are those of the results files the commands beside them write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
MAX_LINES = 200


def run_block(code: str, name: str) -> None:
    """Run one Markdown python block, with ``.learn(300_000)`` shortened."""
    if ".learn(" in code:
        assert ".learn(300_000)" in code  # the shortening below must find the call
        code = code.replace(".learn(300_000)", ".learn(2_048)")
    namespace: dict = {"__name__": name.replace(" ", "_")}
    exec(compile(code, name, "exec"), namespace)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


def test_readme_is_a_front_page():
    assert len(TEXT.splitlines()) <= MAX_LINES


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    run_block(BLOCKS[index], f"README.md[python block {index}]")


def test_readme_setup_commands():
    """The two set-up commands that open the README."""
    assert (
        'pip install torch==2.13.0 && pip install -e ".[train,render]" && python train.py' in TEXT
    )
    assert 'pip install torch==2.13.0 && pip install -e ".[dev]" && python -m pytest' in TEXT


def test_readme_relative_links_resolve():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT) + re.findall(
        r'src="([^"]+)"', TEXT
    ):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def _ratio(data: dict, name: str, size: int) -> float:
    (value,) = [r["value"] for r in data["ratios"] if r["name"] == name and r["size"] == size]
    return value


def _x(value: float) -> str:
    return f"{value:.3g}x" if value < 10 else f"{value:.0f}x"


# The README's speed table: each row's peer cell, then the ratios of its Pursuit-v0 and
# Evasion-v0 (or team) columns, by their name and size in benchmarks/results.json.
SPEED_ROWS = [
    (
        "MPE2 `simple_tag` parallel env",
        ("Pursuit single env / MPE2 simple_tag, env-steps/s", 1),
        ("Evasion single env / MPE2 simple_tag, env-steps/s", 1),
    ),
    (
        "VMAS `simple_tag` (CPU), 8,192 envs",
        ("Pursuit vector / VMAS simple_tag, env-steps/s", 8192),
        ("Evasion vector / VMAS simple_tag, env-steps/s", 8192),
    ),
    (
        "Gymnasium `SyncVectorEnv`, 1,024 envs",
        ("Pursuit native vector / SyncVectorEnv, env-steps/s", 1024),
        ("Evasion native vector / SyncVectorEnv, env-steps/s", 1024),
    ),
    (
        "VMAS `simple_tag` (CPU), 8,192 envs",
        ("team native batch / VMAS simple_tag, env-steps/s", 8192),
    ),
    (
        "MPE2 `simple_tag_v3` parallel env",
        ("team parallel_env / MPE2 simple_tag_v3, env-steps/s", 1),
    ),
    ("SB3 `make_vec_env`, 16 envs", ("PPO timesteps/s, native adapter / make_vec_env", 16)),
]


def test_readme_speed_table_is_the_results_file():
    """Each ratio of the README's speed table is ``benchmarks/results.json``'s."""
    data = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    assert "`python -m benchmarks --json benchmarks/results.json`" in TEXT
    assert data["command"] == "python -m benchmarks --json benchmarks/results.json"
    for peer, *ratios in SPEED_ROWS:
        cells = [_x(_ratio(data, name, size)) for name, size in ratios]
        if len(cells) == 1:
            cells = [cells[0] + " (team)" if "team" in ratios[0][0] else cells[0], ""]
        row = f"| {peer} | {cells[0]} | {cells[1]} |".replace("|  |", "| |")
        assert row in TEXT, row


def _pct(p: float) -> str:
    return f"{100 * p:.1f}"


def _ci(ci: list[float], sign: bool = False) -> str:
    f = (lambda p: f"{100 * p:+.1f}") if sign else _pct
    return f"[{f(ci[0])}, {f(ci[1])}]"


def test_readme_task_table_is_the_shipped_comparisons():
    """The learned-vs-classic column is the shipped models' ``comparison.json``."""
    models = ROOT / "agents" / "models"
    for name in ("pursuit_ppo", "evasion_ppo", "herding_ppo", "crowd_ppo", "flocking_16boids_ppo"):
        data = json.loads((models / f"{name}_comparison.json").read_text())
        # The classic baseline: the first scripted agent of the comparison.
        first = next(key for key in data["agents"] if key != "learned")
        learned, classic = data["agents"]["learned"], data["agents"][first]
        paired = data["paired_vs_learned"][first]
        cell = (
            f"{_pct(learned['success_rate'])}% {_ci(learned['success_ci95'])} vs "
            f"{_pct(classic['success_rate'])}% {_ci(classic['success_ci95'])}: "
            f"{100 * paired['success_diff']:+.1f} {_ci(paired['success_diff_ci95'], True)} points"
        )
        assert cell in TEXT, cell
    data = json.loads((models / "team_pursuit_pursuer_ppo_comparison.json").read_text())
    learned, coop = data["cells"]["learned vs flow"], data["cells"]["cooperative vs flow"]
    paired = data["paired"]["learned vs flow - cooperative vs flow"]
    cell = (
        f"{_pct(learned['capture_rate'])}% {_ci(learned['capture_ci95'])} vs "
        f"{_pct(coop['capture_rate'])}% {_ci(coop['capture_ci95'])}: "
        f"{100 * paired['capture_diff']:+.1f} {_ci(paired['capture_diff_ci95'], True)} points"
    )
    assert cell in TEXT, cell


@pytest.mark.parametrize("name", ["herding_calibration_sweep", "herding_ppo_sweep"])
def test_readme_herding_tables_are_the_shipped_sweeps(name):
    """The README's herding tables are the shipped ``agents.sweep`` results, row for row,
    with the command that wrote them."""
    from agents.evaluation.sweep import format_rows

    data = json.loads((ROOT / "agents" / "models" / f"{name}.json").read_text())
    for line in format_rows(data, compact=True).splitlines():
        assert line in TEXT, line
    assert f"`{data['command']}`" in TEXT


def test_readme_time_to_threshold_is_the_training_results_file():
    """The README's seconds to 95% capture are ``benchmarks/results_training_pursuit.json``'s,
    for both adapters, with the timesteps they took."""
    data = json.loads((ROOT / "benchmarks" / "results_training_pursuit.json").read_text())
    runs = {r["adapter"]: r["reached"]["95%"] for r in data["runs"] if r["seed"] == 0}
    native, dummy = runs["native"], runs["make_vec_env"]
    assert f"after {native['seconds']:.1f} s of training through the native adapter" in TEXT
    assert f"{dummy['seconds']:.1f} s through\n`make_vec_env`" in TEXT
    if native["timesteps"] == dummy["timesteps"]:
        assert f"on the same {native['timesteps']:,} timesteps" in TEXT
    assert "`python -m benchmarks.training`" in TEXT


def test_readme_rllib_time_to_threshold_is_the_rllib_training_results_file():
    """The README's seconds to 95% capture of RLlib's PPO are
    ``benchmarks/results_training_rllib_pursuit.json``'s, for both env runners."""
    data = json.loads((ROOT / "benchmarks" / "results_training_rllib_pursuit.json").read_text())
    runs = {r["runner"]: r["reached"]["95%"] for r in data["runs"] if r["seed"] == 0}
    native, stock = runs["native"], runs["stock"]
    assert (
        f"RLlib's PPO\ngets there after {native['seconds']:.1f} s with the "
        f"`NativeVectorEnvRunner` and {stock['seconds']:.1f} s with RLlib's stock\n"
        "`SingleAgentEnvRunner`"
    ) in TEXT
    assert f"`{data['command']}`" in TEXT


def test_readme_default_training_figures_are_the_runs_files():
    """The first command's training seconds and capture rates are those of the three runs'
    ``config.json`` shipped as ``benchmarks/train_runs/pursuit_seed{0,1,2}.json``."""
    runs = [
        json.loads((ROOT / "benchmarks" / "train_runs" / f"pursuit_seed{s}.json").read_text())
        for s in range(3)
    ]
    assert [r["command"][1:5] for r in runs] == [
        ["train.py", "--seed", str(s), "--episodes"] for s in range(3)
    ]
    text = " ".join(TEXT.split())
    seconds = [r["sessions"][0]["train_wall_s"] for r in runs]
    assert f"({min(seconds):.1f} to {max(seconds):.1f} s of training on 2 cores)" in text
    rates = [_pct(r["comparison"]["agents"]["learned"]["success_rate"]) for r in runs]
    assert f"it captured {rates[0]}%, {rates[1]}% and {rates[2]}% of 1,000 episodes" in text
    assert "`python train.py --seed S --episodes 1000`" in text
    assert "`benchmarks/train_runs/pursuit_seed*.json`" in text


def test_readme_league_figures_are_the_league_files():
    """The league sentence: the final pursuer team's worst capture rate and its
    exploitability (``team_pursuit_league.json``), and how often the alternating best
    responses' last evader escapes their last pursuer team (the cross-play file)."""
    models = ROOT / "agents" / "models"
    final = json.loads((models / "team_pursuit_league.json").read_text())["final"]
    cells = json.loads((models / "team_pursuit_league_crossplay.json").read_text())["cells"]
    ex = final["exploitability"]["pursuer"]
    text = " ".join(TEXT.split())
    assert f"captures at least {_pct(final['pursuer']['worst_capture'])}% of every evader" in text
    assert f"escapes {_pct(ex['escape_rate'])}% {_ci(ex['ci95'])} of 1,000 held-out" in text
    assert f"({_pct(1 - cells['p2 vs e2']['capture_rate'])}% for the alternating best" in text


def test_readme_first_step_seconds_are_the_compile_results_file():
    """The README's first-step seconds (fresh install and later processes) are the range of
    ``benchmarks/results_compile.json``'s first-step rows over the tasks."""
    data = json.loads((ROOT / "benchmarks" / "results_compile.json").read_text())
    rows = {r["name"]: r["median"] for r in data["rows"] if r["name"].startswith("first step")}
    cold = [v for k, v in rows.items() if k.endswith("empty cache: compiles")]
    warm = [v for k, v in rows.items() if k.endswith("filled cache: loads")]
    assert len(cold) == len(warm) >= 4
    text = " ".join(TEXT.split())
    assert (
        f"the first `step` of a task take {min(cold):.1f} to {max(cold):.1f} s on 2 cores, "
        f"later processes {min(warm):.2f} to {max(warm):.2f} s"
    ) in text
    assert "`python -m benchmarks --sections compile`" in text


def test_readme_train_warm_up_seconds_are_the_compile_results_file():
    """The README's train.py warm-up and the whole-task warm-up of Pursuit-v0 are the
    compile results file's rows."""
    data = json.loads((ROOT / "benchmarks" / "results_compile.json").read_text())
    rows = {r["name"]: r["median"] for r in data["rows"]}
    train = rows["train.py's warm-up of pursuit, empty cache: compiles"]
    whole = rows["warm-up of pursuit, empty cache: compiles"]
    assert train < whole
    text = " ".join(TEXT.split())
    assert (
        f"before its training clock starts: {train:.1f} s for Pursuit-v0 in a fresh install, "
        f"where warming every form and strategy of the task takes {whole:.1f} s"
    ) in text
