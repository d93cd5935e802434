"""agents.compare: paired seeding, summary statistics on a fixed input, files and CLI."""

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import steer_env  # noqa: F401
from agents.evaluation import compare, stats
from agents.evaluation.compare import EpisodeResults, play_episodes, summarize
from agents.evaluation.results import json_safe
from agents.evaluation.scripted import ScriptedPolicy

ROOT = Path(__file__).resolve().parents[1]
PURSUIT, EVASION = "steer_env/Pursuit-v0", "steer_env/Evasion-v0"
T975_DF3 = 3.182446305284263


def _results(success, capture_step):
    cs = np.asarray(capture_step)
    return EpisodeResults(np.asarray(success, dtype=bool), cs >= 0, cs, np.where(cs >= 0, cs, 100))


def test_summarize_hand_values():
    # dt 0.1 s, 100 steps: horizon 10 s. Learned captures at 2.0, 5.0 and 10.0 s (the last
    # step) and misses episode 2; classic captures only in episode 1, at 3.0 s.
    res = {
        "learned": _results([1, 1, 0, 1], [20, 50, -1, 100]),
        "classic": _results([0, 1, 0, 0], [-1, 30, -1, -1]),
    }
    s = summarize(res, PURSUIT, 0.1, 100)
    learned, classic = s["agents"]["learned"], s["agents"]["classic"]
    assert learned["success_rate"] == 0.75 and classic["success_rate"] == 0.25
    assert learned["restricted_mean_time_s"] == pytest.approx((2 + 5 + 10 + 10) / 4)
    assert classic["restricted_mean_time_s"] == pytest.approx((10 + 3 + 10 + 10) / 4)
    assert learned["mean_time_captured_s"] == pytest.approx((2 + 5 + 10) / 3)
    assert classic["mean_time_captured_s"] == pytest.approx(3.0)
    # Kaplan-Meier medians: learned S(5) = 0.5; classic never reaches 0.5 -> beyond 10 s
    assert learned["median_time_s"] == pytest.approx(5.0)
    assert math.isinf(classic["median_time_s"])
    p = s["paired_vs_learned"]["classic"]
    # success differences [1, 0, 0, 1]: mean 0.5 with the paired-proportion interval
    assert p["success_diff"] == 0.5
    assert p["success_diff_ci95"] == pytest.approx(
        list(stats.paired_proportion_difference([1, 1, 0, 1], [0, 1, 0, 0])[1:])
    )
    assert -1 <= p["success_diff_ci95"][0] < 0 < 0.5 < p["success_diff_ci95"][1] <= 1
    # time differences [2-10, 5-3, 10-10, 10-10] = [-8, 2, 0, 0]: mean -1.5, s^2 = 59/3
    half = T975_DF3 * math.sqrt(59 / 3) / 2
    assert p["time_diff_s"] == pytest.approx(-1.5)
    assert p["time_diff_ci95_s"] == pytest.approx([-1.5 - half, -1.5 + half])
    assert s["goal"]["met"] is False  # the intervals include 0 with 4 episodes
    table = compare.format_table(s)
    assert "75.0" in table and "> 10" in table
    # The comparison.json it is written to prints the same tables (the docs read it back),
    # an agent that never captures included (mean time among captured: NaN, written null).
    s["agents"]["never"] = summarize({"never": _results([0, 0], [-1, -1])}, PURSUIT, 0.1, 100)[
        "agents"
    ]["never"]
    written = json.loads(json.dumps(json_safe(s)))
    assert written["agents"]["never"]["mean_time_captured_s"] is None
    assert written["agents"]["classic"]["median_time_s"] == "inf"
    assert compare.format_table(written) == compare.format_table(s)


def test_episodes_are_paired_by_seed(monkeypatch):
    """Episode k of a batched run is the single env's episode from seed base + k (also when
    the episodes are split into several batches)."""
    monkeypatch.setattr(compare, "MAX_BATCH", 4)
    base, n = 123, 6
    batched = play_episodes(PURSUIT, lambda env, _seed: ScriptedPolicy(PURSUIT), n, base)
    for k in range(n):
        env = gym.make(PURSUIT)
        obs, _ = env.reset(seed=base + k)
        agent = ScriptedPolicy(PURSUIT)
        done, steps, info = False, 0, {}
        while not done:
            obs, _, term, trunc, info = env.step(agent.predict(obs)[0])
            done, steps = term or trunc, steps + 1
        assert info["is_success"] == batched.success[k]
        assert info["capture_step"] == batched.capture_step[k]
        assert steps == batched.length[k]


@pytest.mark.parametrize(
    "env_id,env_kwargs,agent",
    [
        (EVASION, None, "classic"),  # wanders: two draws a step
        ("steer_env/Flocking-v0", {"n_learned": -1, "n_predators": 1}, "dithered"),
    ],
)
def test_a_random_scripted_agent_plays_each_seed_alike_in_comparisons_and_renders(
    monkeypatch, env_id, env_kwargs, agent
):
    """A scripted agent that draws random numbers (the classic evader's wander, the
    dithered flock's dice; every boid of the flock) plays the episode of seed ``s`` alike
    in a comparison's batch, whatever the batch and the episode's place in it, and in the
    rendered episode of seed ``s``."""
    from agents.evaluation import episodes, shared
    from agents.evaluation.policies import make_scripted

    monkeypatch.setattr(compare, "MAX_BATCH", 3)
    base, n = 1000, 4
    if env_kwargs:

        def policy_fn(env, batch_seed):
            return shared.scripted_team(agent, env_id, env.config, batch_seed)
    else:

        def policy_fn(env, batch_seed):
            return make_scripted(agent, env, seed=batch_seed)

    batched = play_episodes(env_id, policy_fn, n, base, env_kwargs)
    for k in range(n):
        ep = episodes.play_episode(env_id, agent, base + k, env_kwargs=env_kwargs)
        assert ep.steps == batched.length[k], k
        assert ep.success == batched.success[k], k
        assert (ep.capture_step if ep.capture_step is not None else -1) == batched.capture_step[
            k
        ], k


def test_run_comparison_writes_files(tmp_path):
    from agents.evaluation.policies import load_policy

    pol = load_policy(None, EVASION)  # the shipped evasion model
    s = compare.run_comparison(EVASION, pol, episodes=12, seed=7, out=tmp_path)
    assert set(s["agents"]) == {"learned", "classic", "hide"}  # the task's baselines
    for name in ("comparison.csv", "episodes.csv", "comparison.json", "survival.png"):
        assert (tmp_path / name).stat().st_size > 0
    rows = list(csv.DictReader((tmp_path / "comparison.csv").open()))
    assert [r["agent"] for r in rows] == ["learned", "classic", "hide"]
    eps = list(csv.DictReader((tmp_path / "episodes.csv").open()))
    assert len(eps) == 36 and eps[0]["seed"] == "7" and eps[11]["seed"] == "18"
    data = json.loads((tmp_path / "comparison.json").read_text())
    assert data["seed"] == 7 and data["episodes"] == 12
    assert (tmp_path / "survival.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]  # no temp files left


def _run(*args, cwd=ROOT, timeout=120):
    env = {
        **os.environ,
        "SDL_VIDEODRIVER": "dummy",
        "SDL_AUDIODRIVER": "dummy",
        "MPLBACKEND": "Agg",
    }
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_compare_cli_default_model(tmp_path):
    r = _run("-m", "agents.compare", "--episodes", "10", "--out", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr
    assert "learned (PPO)" in r.stdout and "classic pursuer" in r.stdout
    assert "naive pursuer" in r.stdout
    assert (tmp_path / "c" / "comparison.json").is_file()


def _assert_one_line_error(r, code=None):
    assert r.returncode != 0
    if code is not None:
        assert r.returncode == code
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_compare_cli_bad_input(tmp_path):
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"garbage")
    shipped = ROOT / "agents" / "models" / "pursuit_ppo.zip"
    cases = [
        (["--episodes", "0"], "positive integer"),
        (["--episodes", "-3"], "positive integer"),
        (["--env", "cartpole"], "unknown env"),
        (["--model", str(tmp_path / "missing.zip")], "not found"),
        (["--model", str(junk)], "corrupt"),
        (["--model", str(shipped), "--env", "evasion"], "trained on steer_env/Pursuit-v0"),
        (["--seed", "99999999999999999999999"], "integer in [0, 4294967295]"),
        (["--seed", "-1"], "integer in [0, 4294967295]"),
        (["--device", "tpu"], "invalid choice"),
    ]
    for args, text in cases:
        r = _run("-m", "agents.compare", *args, "--out", str(tmp_path / "o"))
        line = _assert_one_line_error(r)
        assert text in line, (args, line)
        # one prefix for parser and runtime errors alike
        assert line.startswith("python -m agents.compare: error: "), line


@pytest.mark.parametrize(
    "env_id,event",
    [(PURSUIT, "captured"), (EVASION, "caught"), ("steer_env/Herding-v0", "penned")],
)
def test_summary_says_how_each_task_censors_in_its_own_words(env_id, event):
    agent = next(iter(compare.SCRIPTED_FOR_ENV[env_id]))
    summary = summarize({agent: _results([True, False], [3, -1])}, env_id, 0.5, 10)
    assert summary["censoring"].startswith(f"episodes not {event} count as the time limit")
