"""``python -m benchmarks.training``: PPO's time to a success threshold through the native
adapter and through ``make_vec_env``, and the hyperparameter search behind the default,
run for real at a tiny budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agents.training import sb3
from agents.training.defaults import training_defaults
from benchmarks import training

ROOT = Path(__file__).resolve().parents[1]
HINT = 'ray not installed (pip install "steer-env[rllib]")'


def _run(*args: str, temp: Path | None = None) -> subprocess.CompletedProcess:
    """The command; ``temp``: its system temp directory (``TMPDIR``), where
    stable-baselines3 would make its log folders (the suite's ``SB3_LOGDIR`` left out)."""
    env = None
    if temp is not None:
        env = {k: v for k, v in os.environ.items() if k != "SB3_LOGDIR"}
        env["TMPDIR"] = str(temp)
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.training", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_first_reaching_is_the_first_point_at_or_above_the_threshold():
    curve = [
        {"timesteps": 10, "seconds": 1.0, "success": 0.5},
        {"timesteps": 20, "seconds": 2.0, "success": 0.95},
        {"timesteps": 30, "seconds": 3.0, "success": 0.99},
    ]
    assert training.first_reaching(curve, 0.9)["timesteps"] == 20
    assert training.first_reaching(curve, 0.95)["timesteps"] == 20
    assert training.first_reaching(curve, 0.995) is None


def test_the_search_starts_from_train_py_s_default_and_repeats_no_configuration():
    for task in ("pursuit", "evasion"):
        found = training.candidates(task)
        d = training_defaults("ppo", task)
        hp = sb3.hyperparameters("ppo", training.task_defaults(task)[0], d.n_envs, d.timesteps)
        first = found[0]
        assert first.name == "default"
        assert first.hyperparameters(hp) == hp and first.n_envs == d.n_envs
        assert all(c.timesteps == d.timesteps for c in found)
        shapes = [
            (c.n_envs, c.n_steps, c.batch_size, c.n_epochs, c.learning_rate, c.activation)
            for c in found
        ]
        assert len(set(shapes)) == len(shapes)


def test_time_to_threshold_trains_both_adapters_and_writes_the_curves(tmp_path):
    out = tmp_path / "training.json"
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = _run(
        "--timesteps", "8192", "--episodes", "20", "--eval-every", "4096", "--json", str(out),
        temp=temp,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The models log nowhere: no stable-baselines3 log folder is left in the temp directory.
    assert not list(temp.glob("SB3-*"))
    result = json.loads(out.read_text())
    assert result["command"].startswith("python -m benchmarks.training --timesteps 8192")
    runs = {r["adapter"]: r for r in result["runs"]}
    assert set(runs) == {"native", "make_vec_env"}
    for run in runs.values():
        curve = run["curve"]
        steps = [p["timesteps"] for p in curve]
        assert steps == sorted(set(steps)) and steps[-1] == run["timesteps"] >= 8192
        seconds = [p["seconds"] for p in curve]
        assert seconds == sorted(seconds) and seconds[0] > 0
        assert all(p["success"] in {k / 20 for k in range(21)} for p in curve)
        for threshold in training.THRESHOLDS:
            point = run["reached"][f"{threshold:.0%}"]
            assert point == training.first_reaching(curve, threshold)
            assert point is None or point["success"] >= threshold
    assert "native adapter" in proc.stdout and "make_vec_env" in proc.stdout


def test_search_scores_every_candidate_for_every_seed(tmp_path):
    out = tmp_path / "search.json"
    proc = _run(
        "--search", "--seeds", "0", "--timesteps", "4096", "--episodes", "10", "--json", str(out)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    names = [row["candidate"]["name"] for row in result["rows"]]
    assert names == [c.name for c in training.candidates("pursuit")]
    for row in result["rows"]:
        (run,) = row["runs"]
        lo, hi = run["wilson"]
        assert 0 <= lo <= run["success"] <= hi <= 1 and run["train_s"] > 0
        assert row["candidate"]["name"] in proc.stdout


def test_bad_input_is_one_line():
    proc = _run("--seeds", "x")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("python -m benchmarks.training: error: ") and "--seeds" in line


def test_an_activation_named_in_the_hyperparameters_becomes_the_torch_module():
    import pytest
    import torch

    hp = {"n_steps": 8, "policy_kwargs": {"net_arch": [4], "activation_fn": "relu"}}
    kwargs = sb3.model_kwargs(hp)
    assert kwargs["policy_kwargs"] == {"net_arch": [4], "activation_fn": torch.nn.ReLU}
    assert hp["policy_kwargs"]["activation_fn"] == "relu"  # the JSON-able table is untouched
    assert sb3.model_kwargs({"n_steps": 8}) == {"n_steps": 8}
    with pytest.raises(ValueError, match="activation_fn must be one of tanh, relu, got 'gelu'"):
        sb3.model_kwargs({"policy_kwargs": {"activation_fn": "gelu"}})
    relu = training.candidates("pursuit")[0]
    relu = type(relu)(**{**relu.__dict__, "activation": "relu"})
    assert relu.hyperparameters({"policy_kwargs": {}})["policy_kwargs"] == {"activation_fn": "relu"}


def test_the_rllib_pair_without_ray_is_one_line():
    """``--framework rllib`` needs ray (the RLlib venv has it); without it, one line."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here")
    proc = _run("--framework", "rllib")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(
        "python -m benchmarks.training: error: --framework rllib needs ray: "
        + HINT.removeprefix("ray not installed (").removesuffix(")")
    )
    proc = _run("--framework", "rllib", "--search")
    assert proc.returncode == 2 and "--search" in proc.stderr.strip()


def test_the_training_section_says_in_one_line_that_the_rllib_pair_is_skipped(monkeypatch, capsys):
    """``python -m benchmarks --sections training`` without ray: a row saying so, printed
    as one line (SB3 reported missing too here, so that nothing trains)."""
    import importlib.util

    import pytest

    from benchmarks import __main__ as bench
    from benchmarks import peers

    if importlib.util.find_spec("ray") is not None:
        pytest.skip("ray is installed here")
    monkeypatch.setattr(peers, "have", lambda module: module not in ("stable_baselines3", "ray"))
    rows, ratios = bench.run(bench.parse(["--sections", "training", "--quick"]))
    rllib = [r for r in rows if "RLlib" in r.name]
    assert [(r.section, r.name, r.reason) for r in rllib] == [
        (
            "training",
            "RLlib PPO pair",
            'skipped: ray not installed (pip install "steer-env[rllib]")',
        )
    ]
    lines = [x for x in capsys.readouterr().err.splitlines() if "RLlib" in x]
    assert lines == [f"  training RLlib PPO pair [None]: skipped: {HINT}"]
    assert not ratios


def test_the_rllib_results_file_renders_both_runners():
    """The committed RLlib pair: both runners, the same seed and held-out episodes as the
    SB3 pair's file, thresholds as their curves' first crossings, in the table."""
    data = json.loads((ROOT / "benchmarks" / "results_training_rllib_pursuit.json").read_text())
    sb3 = json.loads((ROOT / "benchmarks" / "results_training_pursuit.json").read_text())
    assert data["framework"] == "rllib" and data["command"].startswith(
        "python -m benchmarks.training --framework rllib"
    )
    assert (data["eval_seed"], data["episodes"]) == (sb3["eval_seed"], sb3["episodes"])
    runs = {r["runner"]: r for r in data["runs"]}
    assert set(runs) == {"native", "stock"} and {r["seed"] for r in runs.values()} == {0}
    table = training.threshold_table(data)
    for run in runs.values():
        for t in training.THRESHOLDS:
            assert run["reached"][f"{t:.0%}"] == training.first_reaching(run["curve"], t)
        assert f"{run['timesteps_per_s']:,.0f}" in table
    assert "NativeVectorEnvRunner, native vector env" in table
    assert "stock SingleAgentEnvRunner, SyncVectorEnv" in table
