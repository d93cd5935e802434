"""The docs' result tables: every table directive on a page names a results file that exists
and renders, the results files hold what their commands write, and the figures typed in a
page's prose are those of the files."""

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
DIRECTIVE = re.compile(
    r"```\{(bench-table|fidelity-table|baseline-table|team-table|comparison-table"
    r"|calibration-table|runs-table)\} (.+)"
)
USES = [
    (page.relative_to(DOCS).as_posix(), kind, arg.strip())
    for page in PAGES
    for kind, arg in DIRECTIVE.findall(page.read_text())
]


TRAIN_RUNS = ROOT / "benchmarks" / "train_runs"
CALIBRATION = [
    "agents/models/team_calibration_1000000.json",
    "agents/models/team_calibration_2000000.json",
]


def load(name: str) -> dict:
    return json.loads((ROOT / "benchmarks" / name).read_text())


def read(path: str) -> dict:
    return json.loads((ROOT / path).read_text())


def page(name: str) -> str:
    """A docs page with its lines joined (prose figures may wrap)."""
    return " ".join((DOCS / name).read_text().split())


def pct(rate: float, digits: int = 1) -> str:
    return f"{100 * rate:.{digits}f}%"


def test_the_pages_use_the_result_tables():
    kinds = {kind for _, kind, _ in USES}
    assert kinds == {
        "bench-table",
        "fidelity-table",
        "baseline-table",
        "team-table",
        "comparison-table",
        "calibration-table",
        "runs-table",
    }
    files = {f for _, _, arg in USES for f in arg.split()}
    assert {"results_core.json", "results_fidelity.json"} <= files
    assert "agents/models/team_pursuit_league_crossplay.json" in files
    assert set(CALIBRATION) <= files
    # Every shipped training run is on a page.
    runs = {f"benchmarks/train_runs/{p.name}" for p in TRAIN_RUNS.glob("*.json")}
    assert runs and runs <= files


@pytest.mark.parametrize(("page", "kind", "arg"), USES)
def test_each_table_renders_from_its_file(page, kind, arg):
    if kind == "bench-table":
        text = steer_docs.results_markdown(arg, "rows", None)
    elif kind == "fidelity-table":
        text = steer_docs.fidelity_markdown(arg)
    elif kind == "baseline-table":
        text = steer_docs.baseline_markdown(arg.split())
    elif kind == "comparison-table":
        text = steer_docs.comparison_markdown(arg)
    elif kind == "calibration-table":
        text = steer_docs.calibration_markdown(arg.split())
    elif kind == "runs-table":
        text = steer_docs.runs_markdown(arg.split())
        assert text.count("\n| ") == len(arg.split()), (page, arg)  # a row per run
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


def test_herding_results_file_is_what_the_herding_section_writes():
    from benchmarks import herding

    data = load("results_herding.json")
    assert data["command"] == (
        "python -m benchmarks --sections herding --repeats 5 --json benchmarks/results_herding.json"
    )
    names = [r["name"] for r in data["rows"]]
    assert names == [
        herding.ROW_BATCH,
        herding.ROW_VMAS,
        herding.ROW_SINGLE,
        herding.ROW_PARALLEL,
        *(herding.row_scale(n) for n in herding.SCALE_SHEEP),
    ]
    assert all(r["section"] == "herding" and r["median"] > 0 for r in data["rows"])
    assert [r["size"] for r in data["ratios"]] == [8192, herding.SCALE_ENVS]
    assert f"`{data['command']}`" in page("envs/herding.md")


def test_compile_results_file_is_what_the_compile_section_writes():
    """Each task's first step with an empty and then a filled numba cache, its warm-up and
    train.py's warm-up (the tasks with a Gymnasium env); the numpy library's first use."""
    from steer_env.tasks import REGISTRY
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
            if REGISTRY[name].env_id is not None:
                expected += [f"train.py's warm-up of {name}, empty cache: compiles"]
    assert names == expected
    assert all(r["section"] == "compile" and r["unit"] == "s" for r in data["rows"])
    assert all(r["median"] > 0 for r in data["rows"])
    assert "results_compile.json" in (DOCS / "performance.md").read_text()
    assert f"`{data['command']}`" in page("quickstart.md")


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


# ------------------------------------------------------------------ team calibration
def test_calibration_table_is_its_files():
    text = steer_docs.calibration_markdown(CALIBRATION)
    for path in CALIBRATION:
        data = read(path)
        assert f"`{data['command']}` wrote `{path}`" in text
        for r in data["teams"].values():
            assert f"{pct(r['rate'])} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]" in text


@pytest.mark.parametrize("path", CALIBRATION)
def test_calibration_files_are_what_team_calibration_writes(path):
    """The shipped files hold the command that wrote them, and their figures agree with
    themselves: each rate is its captures over the episodes, each interval Wilson's."""
    from agents.evaluation import stats
    from agents.evaluation.team_calibration import REYNOLDS_TEAM_MAX

    data = read(path)
    assert data["command"] == (
        f"python -m agents.team_calibration --episodes {data['episodes']} --seed "
        f"{data['seed']} --json {path}"
    )
    assert list(data["teams"]) == ["reynolds x3", "cooperative x3", "reynolds x1"]
    for r in data["teams"].values():
        iv = stats.wilson_interval(r["captures"], data["episodes"])
        assert (r["rate"], r["lo"], r["hi"]) == pytest.approx((iv.mean, iv.lo, iv.hi))
    assert {t["team"] for t in data["targets"]} == set(data["teams"])
    assert all(t["met"] for t in data["targets"])
    assert data["teams"]["reynolds x3"]["rate"] <= REYNOLDS_TEAM_MAX


@pytest.mark.slow
def test_calibration_file_is_reproduced_by_its_command(tmp_path):
    """The command recorded in the first file writes the same figures again."""
    from agents.evaluation import team_calibration

    data = read(CALIBRATION[0])
    out = tmp_path / "calibration.json"
    argv = data["command"].split()[3:]
    argv[argv.index("--json") + 1] = str(out)
    assert team_calibration.main(argv) == 0
    again = json.loads(out.read_text())
    assert again["teams"] == data["teams"]
    assert again["targets"] == data["targets"]


def test_team_pursuit_docstring_quotes_the_calibration_file():
    """The calibration figures in ``steer_env.tasks.team_pursuit``'s docstring (the API
    page) are the first calibration file's."""
    import steer_env.tasks.team_pursuit as module

    doc = " ".join(module.__doc__.split())
    teams = read(CALIBRATION[0])["teams"]
    for name in ("reynolds x3", "reynolds x1", "cooperative x3"):
        r = teams[name]
        assert f"{pct(r['rate'])} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]" in doc, name


# ------------------------------------------------------------------ training runs
RUN_FILES = sorted(p for p in TRAIN_RUNS.glob("*.json") if not p.name.endswith("_comparison.json"))
RUN_NAME = re.compile(
    r"(?P<task>[a-z_]+?)(?P<rllib>_rllib)?(?P<obstacles>_obstacles)?_seed(?P<seed>\d+)\.json"
)


@pytest.mark.parametrize("path", RUN_FILES, ids=[p.name for p in RUN_FILES])
def test_train_run_file_is_a_finished_runs_config(path):
    """Each ``benchmarks/train_runs/<task>[_rllib]_seed<S>.json`` is the ``config.json`` of a
    finished ``train.py`` run of that task, framework and seed, with its final comparison."""
    from agents.evaluation.compare import task_of

    data = json.loads(path.read_text())
    m = RUN_NAME.fullmatch(path.name)
    assert m, path.name
    argv = data["command"][1:]
    assert argv[0] == "train.py"
    assert data["status"] == "finished"
    assert data["options"]["seed"] == int(m["seed"])
    assert task_of(data["options"]["env"]).name == m["task"]
    assert ("--framework" in argv and argv[argv.index("--framework") + 1] == "rllib") == bool(
        m["rllib"]
    )
    assert data["comparison"]["episodes"] == 1000
    # A run among obstacles names them in its file, and only then.
    assert bool((data["options"].get("config") or {}).get("n_obstacles")) == bool(m["obstacles"])
    # The guides say every seed meets its goal (the runs-table's "goal met" column).
    assert data["comparison"]["goal"]["met"]
    (session,) = data["sessions"]
    assert session["status"] == "trained" and session["train_wall_s"] > 0
    assert 0 < session["train_wall_s"] < data["total_wall_s"]


def test_rllib_comparison_file_is_its_runs():
    """The RLlib run's shipped ``comparison.json`` is the one its ``config.json`` summarizes."""
    config = json.loads((TRAIN_RUNS / "pursuit_rllib_seed0.json").read_text())
    comparison = json.loads((TRAIN_RUNS / "pursuit_rllib_seed0_comparison.json").read_text())
    assert comparison["episodes"] == config["comparison"]["episodes"]
    assert comparison["seed"] == config["comparison"]["seed"]
    for key, agent in config["comparison"]["agents"].items():
        assert comparison["agents"][key]["success_rate"] == agent["success_rate"]
        assert comparison["agents"][key]["success_ci95"] == agent["success_ci95"]
    assert comparison["paired_vs_learned"] == config["comparison"]["paired_vs_learned"]


@pytest.mark.parametrize("task", ["pursuit", "evasion"])
def test_default_runs_agree_with_the_search(task):
    """``train.py``'s default runs and the search's row of the same settings trained the same
    seeds to the same success on the same held-out episodes (what the train guide states)."""
    data = load(f"results_training_search_{task}.json")
    configs = {
        p.name: json.loads(p.read_text()) for p in sorted(TRAIN_RUNS.glob(f"{task}_seed*.json"))
    }
    first = next(iter(configs.values()))
    hp = first["hyperparameters"]
    settings = (
        first["options"]["n_envs"],
        hp["n_steps"],
        hp["batch_size"],
        hp["n_epochs"],
        hp["learning_rate"],
        first["options"]["timesteps"],
    )
    (row,) = [
        r
        for r in data["rows"]
        if tuple(
            r["candidate"][k]
            for k in ("n_envs", "n_steps", "batch_size", "n_epochs", "learning_rate", "timesteps")
        )
        == settings
    ]
    assert len(row["runs"]) == len(configs) == 3
    assert data["eval_seed"] == first["comparison"]["seed"]
    assert data["episodes"] == first["comparison"]["episodes"]
    for run in row["runs"]:
        config = configs[f"{task}_seed{run['seed']}.json"]
        assert config["hyperparameters"] == hp
        assert config["comparison"]["agents"]["learned"]["success_rate"] == run["success"]


# ------------------------------------------------------------------ figures typed in prose
def _league() -> tuple[dict, dict, dict]:
    models = "agents/models/team_pursuit_league"
    crossplay = {k: c["capture_rate"] for k, c in read(f"{models}_crossplay.json")["cells"].items()}
    report = {k: c["capture_rate"] for k, c in read(f"{models}_report.json")["cells"].items()}
    return read(f"{models}.json"), crossplay, report


def _ci(ci: list[float]) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def league_figures() -> list[str]:
    """The league guide's typed figures, each as the page words it, from the shipped
    league, cross-play and report files."""
    league, c, r = _league()
    final = league["final"]
    ex = final["exploitability"]
    p, e = final["pursuer"], final["evader"]
    abr_p2 = final["guests"]["abr_p2"]
    abr_e = [final["guests"][f"abr_e{k}"]["worst_escape"] for k in range(3)]
    # The final pursuer team against every evader of the report: the pool, then the guests.
    pool = [m["name"] for m in league["pools"]["evader"]]
    guests = [m["name"] for m in league["guests"]["evader"]]
    on_pool = [r[f"{p['name']} vs {name}"] for name in pool]
    on_guests = [r[f"{p['name']} vs {name}"] for name in guests]
    rounds = league["rounds"]
    return [
        # alternating best responses (the cross-play)
        f"e0 escapes the cooperative team {pct(1 - c['cooperative vs e0'])} of the time",
        f"p1 catches the flow evader {pct(c['p1 vs flow'])}",
        f"e1 escapes p1 {pct(1 - c['p1 vs e1'], 0)}, p2 catches e1 {pct(c['p2 vs e1'])}",
        f"e2 escapes p2 {pct(1 - c['p2 vs e2'])}",
        f"p2 catches the scripted flow evader only {pct(c['p2 vs flow'])} of the time",
        f"e1 is caught by the scripted teams {100 * c['reynolds vs e1']:.0f}-"
        f"{pct(c['cooperative vs e1'], 0)} of the time",
        # the league's final check
        f"The final pursuer team is `{p['name']}`, the final evader `{e['name']}`",
        f"| final pursuer team's worst capture rate over the final evader pool | "
        f"**{pct(p['worst_capture'])}** (against {p['against']}) | `p2`: "
        f"{pct(abr_p2['worst_capture'])} (against {abr_p2['against']}) |",
        f"| a fresh evader best response escapes the final pursuer team | "
        f"**{pct(ex['pursuer']['escape_rate'])}** {_ci(ex['pursuer']['ci95'])} | "
        f"{pct(1 - c['p2 vs e2'])} against `p2` |",
        f"| final evader's worst escape rate over the final pursuer pool | "
        f"**{pct(e['worst_escape'])}** (against {e['against']}) | `e0`, `e1`, `e2`: "
        f"{', '.join(pct(x) for x in abr_e)} on the same pool |",
        f"| a fresh pursuer best response captures the final evader | "
        f"{pct(ex['evader']['capture_rate'])} {_ci(ex['evader']['ci95'])} | |",
        f"{p['name']} captures {pct(min(on_pool))[:-1]}-{pct(max(on_pool))} of the evaders of "
        f"the final pool (the scripted flow evader {pct(r[p['name'] + ' vs flow'])}) and "
        f"{pct(min(on_guests))[:-1]}-{pct(max(on_guests))} of the alternating best responses'",
        f"alone escapes {pct(ex['pursuer']['escape_rate'])} (at most 25%)",
        f"escapes {pct(rounds[0]['exploitability']['evader_br_escape'], 0)} in round 1 and "
        f"{pct(rounds[-1]['exploitability']['evader_br_escape'], 0)} in round {len(rounds)}",
    ]


@pytest.mark.parametrize("figure", league_figures())
def test_team_guide_league_figures_are_the_files(figure):
    assert figure in page("guides/team.md")


def test_team_guide_league_targets():
    """The guide says the three targets are met, and the files agree: the final pursuer
    team captures at least 90% of every evader of the final pool, a fresh evader escapes it
    at most 25% of the time, and the final evader's worst escape rate is above every
    alternating-best-response evader's."""
    league, _, _ = _league()
    final = league["final"]
    assert final["pursuer"]["worst_capture"] >= 0.90
    assert final["exploitability"]["pursuer"]["escape_rate"] <= 0.25
    abr = [g["worst_escape"] for g in final["guests"].values() if g["role"] == "evader"]
    assert len(abr) == 3 and final["evader"]["worst_escape"] > max(abr)
    assert "The three targets are met" in page("guides/team.md")


def _sweep_rate(data: dict, parameter: str, value: float, agent: str) -> float:
    (row,) = [r for r in data["rows"] if r["parameter"] == parameter and r["value"] == value]
    return row["agents"][agent]["success_rate"]


def herding_figures() -> list[str]:
    data = read("agents/models/herding_calibration_sweep.json")
    base = data["base_config"]
    n = base.get("n_sheep", 25)
    rate = lambda *key: pct(_sweep_rate(data, *key))  # noqa: E731
    (long,) = [r for r in data["rows"] if r["parameter"] == "time_limit" and r["value"] == 600]
    return [
        f"At the defaults Strömbom's dog pens {rate('n_sheep', n, 'strombom')} of the flocks "
        f"and the driver, which never collects, {rate('n_sheep', n, 'driver')}.",
        f"the driver still pens only {rate('local_centre', 24, 'driver')}",
        f"{long['horizon_s']:g} s bring Strömbom's dog to {rate('time_limit', 600, 'strombom')}",
    ]


@pytest.mark.parametrize("figure", herding_figures())
def test_herding_page_calibration_figures_are_the_sweep(figure):
    assert figure in page("envs/herding.md")


def test_herding_docstring_quotes_the_calibration_sweep():
    import steer_env.tasks.herding as module

    data = read("agents/models/herding_calibration_sweep.json")
    doc = " ".join(module.__doc__.split())
    driver = pct(_sweep_rate(data, "n_sheep", 25, "driver"))
    strombom = pct(_sweep_rate(data, "n_sheep", 25, "strombom"))
    assert f"pens it in {driver} of episodes and Strömbom's dog in {strombom}" in doc


@pytest.mark.parametrize(
    "name",
    [
        "pursuit_ppo",
        "evasion_ppo",
        "team_pursuit_pursuer_ppo",
        "herding_ppo",
        "herding_2dogs_ppo",
        "herding_1dog_50sheep_ppo",
        "pursuit_obstacles_ppo",
        "evasion_obstacles_ppo",
        "herding_obstacles_ppo",
        "flocking_16boids_ppo",
    ],
)
def test_models_readme_training_figures_are_the_runs(name):
    """``agents/models/README.md``'s training figures of each shipped model are its run's
    ``config.json`` (shipped as ``<name>.json``)."""
    data = read(f"agents/models/{name}.json")
    session = data["sessions"][0]
    text = " ".join((ROOT / "agents" / "models" / "README.md").read_text().split())
    assert (
        f"{session['end_timesteps']:,} timesteps in {session['train_wall_s']:.0f} s at about "
        f"{session['fps'] / 1000:.1f}k fps"
    ) in text
    if name == "herding_ppo":
        assert f"{data['total_wall_s']:.0f} s for the whole run" in text


# ------------------------------------------------------------------ the GIFs' captions
def _episode_time(env_id: str, agent: str, seed: int, env_kwargs: dict | None = None) -> str | None:
    """When the event of the episode that ``python -m agents.render --env ... --agent
    AGENT --seed SEED`` draws happens (``None`` without it), as the pages write it."""
    from agents.evaluation.episodes import play_episode

    render_mode = "rgb_array" if env_kwargs else None  # several agents: drawn to a file
    ep = play_episode(env_id, agent, seed, render_mode=render_mode, env_kwargs=env_kwargs)
    return None if ep.capture_step is None else f"{ep.capture_step * ep.dt:.1f} s"


@pytest.mark.slow
def test_gif_captions_are_their_episodes():
    """The times the pages give beside their GIFs are those of the episodes the render
    command printed beside them plays."""
    pursuit = "steer_env/Pursuit-v0"
    learned, classic = _episode_time(pursuit, "learned", 36), _episode_time(pursuit, "classic", 36)
    assert classic is None
    assert (
        f"the learned pursuer (left) captures at {learned}; the classic Reynolds pursuer "
        "(right) does not within the 10 s limit" in page("guides/train.md")
    )
    assert "python -m agents.render --side-by-side --seed 36" in page("guides/train.md")
    herding = page("envs/herding.md")
    penned = _episode_time("steer_env/Herding-v0", "strombom", 4)
    assert (
        f"(north-east corner) at {penned}: "
        "`python -m agents.render --env herding --agent strombom --seed 4 " in herding
    )
    dog, strombom = (
        _episode_time("steer_env/Herding-v0", a, 1000000) for a in ("learned", "strombom")
    )
    assert f"the learned dog pens the flock at {dog}, Strömbom's at {strombom}" in herding
    assert "--side-by-side --seed 1000000 " in herding
    evasion = "steer_env/Evasion-v0"
    assert _episode_time(evasion, "learned", 1000001) is None
    caught = _episode_time(evasion, "classic", 1000001)
    assert f"the classic evader (right) is caught at {caught}" in page("envs/evasion.md")
    assert "--side-by-side --seed 1000001 " in page("envs/evasion.md")
    crowd = "steer_env/Crowd-v0"
    assert _episode_time(crowd, "classic", 1000002) is None
    arrived = _episode_time(crowd, "learned", 1000002)
    assert f"The shipped PPO robot (left) reaches its goal at {arrived}" in page("envs/crowd.md")
    assert "--side-by-side --seed 1000002 " in page("envs/crowd.md")
    flock, every_boid = "steer_env/Flocking-v0", {"n_learned": -1}
    learned = _episode_time(flock, "learned", 1000002, every_boid)
    dithered = _episode_time(flock, "classic", 1000002, every_boid)
    assert (
        f"arrives together at {learned}; the calibrated classic flock (right, Reynolds' boid "
        f"under Buckland's dithering) at {dithered}, on seed 1000002" in page("envs/flocking.md")
    )
    assert "--set n_learned=-1 --seed 1000002 " in page("envs/flocking.md")


@pytest.mark.slow
def test_team_gif_caption_is_its_episode(tmp_path):
    from agents.evaluation.cross_play import load_team_policy, render_team_animation

    policy = load_team_policy(ROOT / "agents" / "models" / "team_pursuit_pursuer_ppo.zip")
    _, (line,) = render_team_animation(tmp_path / "last.png", policy, "flow", seed=0)
    time = line.split("captured at ")[1]
    assert (
        f"captures the scripted flow evader at {time}: `python -m agents.render --env "
        "team_pursuit --agent learned --seed 0 " in page("envs/team_pursuit.md")
    )


def test_models_readme_herding_seeds_are_the_runs():
    """The other two herding seeds the models README quotes are their runs' files."""
    runs = [read(f"benchmarks/train_runs/herding_seed{s}.json") for s in (1, 2)]
    rates = [
        f"{pct(r['comparison']['agents']['learned']['success_rate'])} "
        f"{_ci(r['comparison']['agents']['learned']['success_ci95'])}"
        for r in runs
    ]
    points = [
        f"{100 * r['comparison']['paired_vs_learned']['strombom']['success_diff']:+.1f}"
        for r in runs
    ]
    text = " ".join((ROOT / "agents" / "models" / "README.md").read_text().split())
    assert (
        f"trained dogs that pen {rates[0]} and {rates[1]} of the 1,000 episodes "
        f"({points[0]} and {points[1]} points over Strömbom's dog)"
    ) in text


TWO_DOGS = "agents/models/herding_2dogs_ppo_comparison.json"


def test_two_learned_dogs_beat_two_strombom_dogs_and_one_learned_dog():
    """The shipped two-dog comparison is the shipped models' (the two-dog model and the one
    trained alone on the same flock), on 1,000 paired episodes, and meets both targets."""
    data = read(TWO_DOGS)
    two, one = (
        read(f"agents/models/{n}.json") for n in ("herding_2dogs_ppo", "herding_1dog_50sheep_ppo")
    )
    assert data["model"].endswith("herding_2dogs_ppo.zip")
    assert data["single_model"].endswith("herding_1dog_50sheep_ppo.zip")
    assert data["episodes"] == 1000 and data["agents_per_side"] == 2
    assert two["options"]["config"] == {**one["options"]["config"], "n_dogs": 2}
    assert {k: data["config"][k] for k in ("n_sheep", "n_dogs")} == {"n_sheep": 50, "n_dogs": 2}
    for other in ("strombom", "single"):
        paired = data["paired_vs_learned"][other]
        assert paired["success_diff_ci95"][0] > 0, other
        assert paired["time_diff_ci95_s"][1] < 0, other
        assert data["goal"]["per_target"][other]["met"]
    assert data["goal"]["met"]


def test_readme_two_dog_sentence_is_the_comparison():
    data = read(TWO_DOGS)
    paired = data["paired_vs_learned"]
    text = " ".join((ROOT / "README.md").read_text().split())
    assert (
        f"on 50 sheep pen {pct(data['agents']['learned']['success_rate'])} of the flocks, "
        f"{100 * paired['strombom']['success_diff']:+.1f} points over two Strömbom dogs and "
        f"{100 * paired['single']['success_diff']:+.1f} over one learned dog"
    ) in text


@pytest.mark.slow
def test_two_dog_comparison_is_reproduced_by_its_command(tmp_path):
    """``python -m agents.compare --model ... --single-model ...`` (the page's command)
    writes the shipped figures again."""
    import subprocess
    import sys

    data = read(TWO_DOGS)
    out = tmp_path / "cmp"
    cmd = [
        sys.executable, "-m", "agents.compare", "--model", "agents/models/herding_2dogs_ppo.zip",
        "--single-model", "agents/models/herding_1dog_50sheep_ppo.zip", "--episodes", "1000",
        "--out", str(out),
    ]  # fmt: skip
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    again = json.loads((out / "comparison.json").read_text())
    assert again["agents"] == data["agents"]
    assert again["paired_vs_learned"] == data["paired_vs_learned"]


def test_herding_page_two_dog_figures_are_the_files():
    """The two-dog section's scripted figures are the comparison's and the sweeps'
    ``local_centre`` 25 rows (the same seeds)."""
    data = read(TWO_DOGS)
    one = _sweep_rate(
        read("agents/models/herding_1dog_calibration_sweep.json"), "local_centre", 25, "strombom"
    )
    two = _sweep_rate(
        read("agents/models/herding_2dogs_calibration_sweep.json"), "local_centre", 25, "strombom"
    )
    assert two == data["agents"]["strombom"]["success_rate"]
    text = page("envs/herding.md")
    assert f"one Strömbom dog pens {pct(one)} of the flocks and two {pct(two)}" in text
    assert "```{comparison-table} " + TWO_DOGS in (DOCS / "envs" / "herding.md").read_text()


def test_evasion_defaults_comment_is_the_search():
    """``EVASION_PPO``'s comment (on the API page): the chosen settings' mean survival and
    the range of SB3's settings (the search's ``default`` row) in the same budget."""
    source = " ".join((ROOT / "steer_env" / "tasks" / "pursuit_evasion.py").read_text().split())
    source = source.replace(" #: ", " ")
    rows = {r["candidate"]["name"]: r for r in load("results_training_search_evasion.json")["rows"]}
    chosen = [r["success"] for r in rows["32 x 128, batch 2048, 10 epochs, lr 1e-3"]["runs"]]
    sb3 = [r["success"] for r in rows["default"]["runs"]]
    assert (
        f"the evader then survives about {100 * sum(chosen) / len(chosen):.0f}% of held-out "
        f"episodes where SB3's 16 x 256-step, 5-epoch, 3e-4 settings reach "
        f"{100 * min(sb3):.0f}-{100 * max(sb3):.0f}% in the same budget"
    ) in source


def test_rllib_guide_stock_runner_ratio_is_the_results_file():
    """The RLlib guide's "about 2x" for the stock runner over ``sync`` is the ratio of
    ``benchmarks/results_rllib.json`` that the bench-table above it shows."""
    data = load("results_rllib.json")
    (ratio,) = [
        r["value"]
        for r in data["ratios"]
        if r["name"] == "RLlib sampling env-steps/s, native vector env with the stock runner / sync"
    ]
    assert f"samples only about {ratio:.0f}x faster than RLlib's `sync` mode" in page(
        "guides/rllib.md"
    )
    runner = " ".join((ROOT / "agents" / "rllib" / "runner.py").read_text().split())
    assert f"sampling only about {ratio:.0f}x faster than Gymnasium's" in runner


# ------------------------------------------------------------------ obstacles
def _obstacle_files(task: str) -> dict[str, dict]:
    models = "agents/models"
    return {
        "trained": read(f"{models}/{task}_obstacles_ppo_comparison.json"),
        "trained_empty": read(f"{models}/{task}_obstacles_ppo_empty_comparison.json"),
        "empty_model": read(f"{models}/{task}_ppo_obstacles_comparison.json"),
    }


def _signed_ci(paired: dict) -> str:
    lo, hi = paired["success_diff_ci95"]
    return f"{100 * paired['success_diff']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"


@pytest.mark.parametrize(("task", "count"), [("pursuit", 12), ("evasion", 12), ("herding", 8)])
def test_obstacle_comparisons_are_paired_and_meet_their_goal(task, count):
    """The obstacle model beats the classic baseline on 1,000 held-out episodes among 12
    obstacles; its empty-arena comparison plays the same seeds without them, so the
    classic agent's two rows are paired too (the starts are the same)."""
    f = _obstacle_files(task)
    trained, empty = f["trained"], f["trained_empty"]
    assert trained["episodes"] == empty["episodes"] == 1000
    assert trained["seed"] == empty["seed"] == f["empty_model"]["seed"]
    assert trained["config"] == {"n_obstacles": count}
    assert empty["config"] == {"n_obstacles": 0, "observed_obstacles": 4}
    assert f["empty_model"]["config"] == {"n_obstacles": count, "observed_obstacles": 0}
    baseline = next(iter(trained["paired_vs_learned"]))  # the task's first (classic) baseline
    assert trained["paired_vs_learned"][baseline]["success_diff_ci95"][0] > 0
    assert trained["goal"]["met"]
    # Obstacles move the classic agent's success by at least 10 points.
    classic = trained["agents"][baseline]["success_rate"]
    assert abs(classic - empty["agents"][baseline]["success_rate"]) >= 0.10


def test_readme_and_guide_obstacle_figures_are_the_comparisons():
    pursuit, evasion = _obstacle_files("pursuit"), _obstacle_files("evasion")
    readme = " ".join((ROOT / "README.md").read_text().split())
    p, e = pursuit["trained"], evasion["trained"]
    assert (
        f"the classic pursuer captures {pct(p['agents']['classic']['success_rate'])} "
        f"({pct(pursuit['trained_empty']['agents']['classic']['success_rate'])} in the empty "
        f"arena) and the classic evader survives {pct(e['agents']['classic']['success_rate'])} "
        f"({pct(evasion['trained_empty']['agents']['classic']['success_rate'])})"
    ) in readme
    assert (
        f"captures {pct(p['agents']['learned']['success_rate'])}, "
        f"{_signed_ci(p['paired_vs_learned']['classic'])} points over the classic one"
    ) in readme
    assert (
        f"survives {pct(e['agents']['learned']['success_rate'])}, "
        f"{_signed_ci(e['paired_vs_learned']['classic'])}"
    ) in readme
    h = _obstacle_files("herding")
    dog, empty_dog = h["trained"], h["trained_empty"]
    assert (
        f"a dog that pens {pct(dog['agents']['learned']['success_rate'])}, "
        f"{_signed_ci(dog['paired_vs_learned']['strombom'])} over Strömbom's "
        f"({pct(dog['agents']['strombom']['success_rate'])}; "
        f"{pct(empty_dog['agents']['strombom']['success_rate'])} without obstacles)"
    ) in readme
    guide = page("guides/obstacles.md")
    assert f"dog pens {pct(empty_dog['agents']['learned']['success_rate'])}" in guide
    blind = pursuit["empty_model"]["agents"]
    assert f"captures {pct(blind['classic']['success_rate'])}" in guide
    assert f"captures {pct(blind['learned']['success_rate'])}" in guide
    assert f"({pct(pursuit['trained_empty']['agents']['learned']['success_rate'])} against" in guide


FLOCKS = (
    (
        "agents/models/flocking_16boids_ppo.json",
        "agents/models/flocking_16boids_ppo_comparison.json",
    ),
    (
        "benchmarks/train_runs/flocking_seed1.json",
        "benchmarks/train_runs/flocking_seed1_comparison.json",
    ),
    (
        "benchmarks/train_runs/flocking_seed2.json",
        "benchmarks/train_runs/flocking_seed2_comparison.json",
    ),
)


def test_three_learned_flocks_beat_the_best_classic_flock_as_the_page_says():
    """Each of the three default runs (seeds 0, 1, 2) arrives more often than the dithered
    flock (paired interval above 0) and collides less (intervals apart) on the same 1,000
    held-out episodes, and the flocking page quotes those figures."""
    text = " ".join(page("envs/flocking.md").split())
    for seed, (config, comparison) in enumerate(FLOCKS):
        run, data = read(config), read(comparison)
        assert run["options"]["seed"] == seed and run["options"]["config"] == {"n_learned": -1}
        assert run["options"]["curriculum"] == [
            {"until": 12_000_000, "config": {"caught_penalty": 2.0}}
        ]
        assert data["episodes"] == 1000 and data["seed"] == 1_000_000
        assert run["comparison"]["paired_vs_learned"] == data["paired_vs_learned"]
        paired = data["paired_vs_learned"]["dithered"]
        assert paired["success_diff_ci95"][0] > 0
        learned = data["agents"]["learned"]["outcomes"]["collision_rate"]
        dithered = data["agents"]["dithered"]["outcomes"]["collision_rate"]
        assert learned["ci95"][1] < dithered["ci95"][0]
        assert f"{100 * data['agents']['learned']['success_rate']:.1f}%" in text
        low, high = (100 * x for x in paired["success_diff_ci95"])
        assert f"{100 * paired['success_diff']:.1f} [{low:.1f}, {high:.1f}]" in text
        low, high = learned["ci95"]
        assert f"{learned['mean']:.1f} [{low:.1f}, {high:.1f}]" in text
