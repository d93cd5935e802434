"""Population training for the team task: the meta-solvers (closed forms and the minimax
theorem), mixtures of opponents drawn per environment inside the native batch, the
payoff matrix against episodes played one by one, ``train.py --opponent-pool`` and a short
league of two tiny rounds in real subprocesses (``python -m agents.league``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from agents.evaluation import league
from agents.evaluation.cross_play import load_team_policy, play_team_episodes
from agents.evaluation.mixture import (
    Member,
    MixturePolicy,
    load_members,
    mixture_of_pool,
    read_pool,
    write_pool,
)
from agents.evaluation.policies import models_dir
from agents.evaluation.policy_base import UsageError
from agents.evaluation.scripted import ScriptedPolicy
from steer_env.envs.sb3 import make_team_sb3_vec_env
from steer_env.tasks import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
EVADER_MODEL = models_dir() / "team_pursuit_evader_ppo.zip"
PURSUER_MODEL = models_dir() / "team_pursuit_pursuer_ppo.zip"
#: A checkpoint's file name as train.py writes it.
CHECKPOINT_NAME = "ckpt_1536_steps.zip"


# ----------------------------------------------------------------------- meta-solvers
def test_matching_pennies_is_solved_by_the_even_mixture():
    x, y, value = league.solve_zero_sum(np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-9)
    assert value == pytest.approx(0.5)


def test_a_dominated_pursuer_team_gets_no_weight_and_a_saddle_point_is_pure():
    # Row 1 captures more than row 0 against every evader; column 0 is the evaders' best.
    a = np.array([[0.2, 0.6], [0.3, 0.9]])
    x, y, value = league.solve_zero_sum(a)
    np.testing.assert_allclose(x, [0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(y, [1.0, 0.0], atol=1e-9)
    assert value == pytest.approx(0.3)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 5)),
              elements=st.floats(0.0, 1.0)))  # fmt: skip
def test_maximin_strategies_guarantee_the_value_from_both_sides(a):
    """Minimax theorem: the pursuers' mixture captures at least the value against every
    evader, the evaders' mixture concedes at most the value to every team."""
    x, y, value = league.solve_zero_sum(a)
    for s in (x, y):
        assert (s >= 0).all() and s.sum() == pytest.approx(1.0)
    assert (x @ a).min() == pytest.approx(value, abs=1e-7)
    assert (a @ y).max() == pytest.approx(value, abs=1e-7)


def test_pfsp_favours_the_opponents_the_learner_loses_to():
    w = league.pfsp_weights(np.array([1.0, 0.5, 0.0]))
    np.testing.assert_allclose(w, np.array([0.0, 0.25, 1.0]) / 1.25)
    np.testing.assert_allclose(league.pfsp_weights(np.ones(3)), np.full(3, 1 / 3))


def test_meta_strategies_of_each_method():
    a = np.array([[0.2, 0.6], [0.3, 0.9], [1.0, 0.4]])
    p, e = league.meta_strategies("uniform", a)
    np.testing.assert_allclose(p, np.full(3, 1 / 3))
    np.testing.assert_allclose(e, [0.5, 0.5])
    p, e = league.meta_strategies("nash", a)
    x, y, _ = league.solve_zero_sum(a)
    np.testing.assert_allclose(p, x)
    np.testing.assert_allclose(e, y)
    # PFSP: the newest pursuer team (last row) and evader (last column) are the learners'.
    p, e = league.meta_strategies("pfsp", a)
    np.testing.assert_allclose(e, league.pfsp_weights(a[-1]))
    np.testing.assert_allclose(p, league.pfsp_weights(1 - a[:, -1]))
    with pytest.raises(UsageError, match="--method 'psro'"):
        league.meta_strategies("psro", a)


# ----------------------------------------------------------------------- mixtures
class Constant:
    """A policy that always steers ``(value, 0)``; counts the rows it is asked for."""

    def __init__(self, value: float) -> None:
        self.value = value
        self.rows: list[int] = []

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        obs = np.asarray(observation)
        self.rows.append(obs.shape[0])
        return np.tile([self.value, 0.0], (obs.shape[0], 1)).astype(np.float32), None


def test_each_environment_plays_the_member_drawn_for_it_in_one_call_per_member():
    a, b, c = Constant(0.1), Constant(0.2), Constant(0.3)
    mix = MixturePolicy([a, b, c], [0.2, 0.3, 0.5], agents_per_env=3, seed=7)
    obs = np.zeros((8 * 3, 5))
    act, _ = mix.predict(obs)
    expected = np.random.default_rng(7).choice(3, size=8, p=[0.2, 0.3, 0.5])
    np.testing.assert_array_equal(mix.member, expected)
    np.testing.assert_allclose(act[:, 0], np.array([0.1, 0.2, 0.3])[np.repeat(expected, 3)])
    assert [len(p.rows) for p in (a, b, c)] == [int((expected == j).any()) for j in range(3)]
    # Environments 2 and 5 start a new episode: only they draw again, in that order.
    start = np.zeros(8 * 3, dtype=bool)
    start[2 * 3] = start[5 * 3 + 1] = True
    rng = np.random.default_rng(7)
    rng.choice(3, size=8, p=[0.2, 0.3, 0.5])
    redraw = rng.choice(3, size=2, p=[0.2, 0.3, 0.5])
    mix.predict(obs, episode_start=start)
    expected[[2, 5]] = redraw
    np.testing.assert_array_equal(mix.member, expected)
    assert mix.draws == 10


def test_a_mixture_rejects_bad_weights_and_partial_environments():
    with pytest.raises(ValueError, match="non-negative"):
        MixturePolicy([Constant(0)], [-1.0], 1)
    with pytest.raises(ValueError, match="not all zero"):
        MixturePolicy([Constant(0), Constant(1)], [0.0, 0.0], 1)
    with pytest.raises(ValueError, match="one per policy"):
        MixturePolicy([Constant(0)], [0.5, 0.5], 1)
    with pytest.raises(ValueError, match="not whole environments of 3 agents"):
        MixturePolicy([Constant(0)], [1.0], 3).predict(np.zeros((4, 2)))


def _mixture_episodes(seed: int, steps: int = 120):
    """An evader trained against a mixture of the cooperative team and the shipped learned
    team, in the native batch: observations, and each environment's member per step."""
    members = [
        Member("cooperative", 1.0, strategy="cooperative"),
        Member("learned", 1.0, model=str(PURSUER_MODEL)),
    ]
    mix = mixture_of_pool(members, "pursuer", 3, seed, {"learned": "both"})
    venv = make_team_sb3_vec_env(6, seed=seed, role="evader", opponent=mix, learned="both")
    obs = [venv.reset()]
    members_seen, dones = [], []
    for _ in range(steps):
        venv.step_async(np.zeros((venv.num_envs, 2), dtype=np.float32))
        o, _, done, _ = venv.step_wait()
        obs.append(o)
        members_seen.append(mix.member.copy())
        dones.append(done.copy())
    return np.array(obs), np.array(members_seen), np.array(dones), mix


def test_mixture_in_the_native_batch_redraws_at_each_reset_and_is_deterministic():
    obs, members, dones, mix = _mixture_episodes(3)
    # One draw per environment at the start, one more per finished episode.
    assert mix.draws == 6 + int(dones.sum())
    assert dones.any(), "no episode ended: lengthen the test"
    for t in range(1, len(members)):
        unchanged = ~dones[t - 1]
        np.testing.assert_array_equal(members[t][unchanged], members[t - 1][unchanged])
    obs2, members2, _, _ = _mixture_episodes(3)
    np.testing.assert_array_equal(obs, obs2)
    np.testing.assert_array_equal(members, members2)
    obs3, _, _, _ = _mixture_episodes(4)
    assert not np.array_equal(obs, obs3)


def test_a_one_member_mixture_plays_like_that_member():
    """A mixture that can only draw the learned team gives the frozen model's episodes."""
    policy = load_team_policy(PURSUER_MODEL, "pursuer")
    mix = MixturePolicy([policy], [1.0], 3, seed=0)
    runs = []
    for opponent in (policy, mix):
        venv = make_team_sb3_vec_env(4, seed=11, role="evader", opponent=opponent, learned="both")
        o = [venv.reset()]
        for _ in range(60):
            venv.step_async(np.full((venv.num_envs, 2), 0.5, dtype=np.float32))
            o.append(venv.step_wait()[0])
        runs.append(np.array(o))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_pool_files_round_trip_and_bad_ones_are_one_line_errors(tmp_path):
    pool = write_pool(
        tmp_path / "pool.json",
        "evader",
        [Member("flow", 0.25, strategy="flow"), Member("e", 0.75, model="e/model.zip")],
    )
    role, members = read_pool(pool, "evader")
    assert role == "evader"
    assert [m.name for m in members] == ["flow", "e"]
    assert members[1].model == str(tmp_path / "e" / "model.zip")  # relative to the file
    with pytest.raises(UsageError, match="a pool of evaders, not pursuers"):
        read_pool(pool, "pursuer")
    with pytest.raises(UsageError, match="no such file"):
        read_pool(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"role": "evader", "members": [{"name": "x"}]}))
    with pytest.raises(UsageError, match='exactly one of "strategy" or "model"'):
        read_pool(bad)
    bad.write_text(json.dumps({"role": "evader", "members": [{"strategy": "flow", "weight": 0}]}))
    with pytest.raises(UsageError, match="not all zero"):
        read_pool(bad)
    with pytest.raises(UsageError, match="'reynolds' is not a scripted evader strategy"):
        load_members([Member("r", 1.0, strategy="reynolds")], "evader")
    scripted = load_members([Member("flow", 1.0, strategy="flow")], "evader")
    assert isinstance(scripted[0], ScriptedPolicy) and scripted[0].role == "evader"


# ----------------------------------------------------------------------- payoff matrix
def test_the_payoff_matrix_equals_episodes_played_one_by_one():
    evader = load_team_policy(EVADER_MODEL, "evader")
    matrix = league.PayoffMatrix(episodes=12, seed=500)
    assert matrix.play({"cooperative": "cooperative"}, {"flow": "flow", "e": evader}) == 2
    assert matrix.play({"cooperative": "cooperative"}, {"flow": "flow"}) == 0  # already in
    for name, side in (("flow", "flow"), ("e", evader)):
        one_by_one = [
            bool(play_team_episodes("cooperative", side, 1, 500 + k).captured[0]) for k in range(12)
        ]
        np.testing.assert_array_equal(matrix.cells["cooperative", name].captured, one_by_one)
    data = matrix.to_json(["cooperative"], ["flow", "e"])
    again = league.PayoffMatrix.from_json(json.loads(json.dumps(data)))
    np.testing.assert_array_equal(again.rates(["cooperative"], ["flow", "e"]),
                                  matrix.rates(["cooperative"], ["flow", "e"]))  # fmt: skip
    cell = data["cells"]["cooperative vs flow"]
    assert cell["capture_ci95"][0] <= cell["capture_rate"] <= cell["capture_ci95"][1]


# ----------------------------------------------------------------------- commands
def _run(*args, timeout=600):
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "text"),
    [
        (["--opponent-pool", "missing.json"], "--opponent-pool missing.json: no such file"),
        (["--opponent-pool", "POOL", "--opponent-strategy", "flow"], "give one of --opponent-pool"),
        (["--learned", "evaders", "--opponent-pool", "POOL"], "a pool of evaders, not pursuers"),
        (["--learned", "evaders", "--init-model", str(PURSUER_MODEL)], "is a pursuer policy"),
        (["--init-model", "missing.zip"], "--init-model missing.zip: model file not found"),
    ],
)
def test_train_rejects_a_bad_opponent_pool_in_one_line(tmp_path, extra, text):
    pool = write_pool(tmp_path / "pool.json", "evader", [Member("flow", 1.0, strategy="flow")])
    argv = [str(pool) if a == "POOL" else a for a in extra]
    r = _run("train.py", "--env", "team_pursuit", *argv, "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert text in r.stderr
    assert not any(tmp_path.glob("team_pursuit*")), "no run folder for a bad option"


def test_a_short_league_grows_the_pools_and_keeps_the_matrix_up_to_date(tmp_path):
    out = tmp_path / "league"
    tiny = ["--pursuer-timesteps", "1536", "--evader-timesteps", "512", "--n-envs", "2",
            "--final-timesteps", "1024", "--episodes", "16", "--out", str(out)]  # fmt: skip
    r = _run("-m", "agents.league", "--rounds", "2", "--method", "pfsp", "--no-exploit", *tiny)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    state = json.loads((out / "league.json").read_text())
    assert state["env"] == "team_pursuit"  # the default --env
    pursuers = [m["name"] for m in state["pools"]["pursuer"]]
    evaders = [m["name"] for m in state["pools"]["evader"]]
    assert pursuers == [*REGISTRY["team_pursuit"].baselines["pursuer"], "p1", "p2", "p2_final"]
    assert evaders == [*REGISTRY["team_pursuit"].baselines["evader"], "e1", "e2"]
    # Round 2 answered mixtures over the pools as they stood after round 1.
    r2 = state["rounds"][1]
    assert list(r2["pursuer_mixture"]) == pursuers[:3]
    assert list(r2["evader_mixture"]) == evaders[:2]
    pool = json.loads((out / "pool_p2.json").read_text())
    assert pool["role"] == "evader"
    weights = {m["name"]: m["weight"] for m in pool["members"]}
    assert weights == {k: v for k, v in r2["evader_mixture"].items() if v > 1e-9}
    # The p2 run trained against that pool, and its model records it.
    config = json.loads((out / "p2" / "config.json").read_text())
    assert config["options"]["opponent_pool"] == str((out / "pool_p2.json").resolve())
    # ... starting from p1's network (the default warm start), while p1 started afresh.
    assert config["options"]["init_model"] == str((out / "p1" / "model.zip").resolve())
    first = json.loads((out / "p1" / "config.json").read_text())
    assert first["options"]["init_model"] is None
    # The final response answered the whole final evader pool, from the maximin pursuer
    # team of the pool as it stood after the last round.
    last = state["final_round"]
    assert last["name"] == "p2_final" and last["role"] == "pursuer"
    assert list(last["mixture"]) == evaders
    played = league.PayoffMatrix.from_json(json.loads((out / "payoff.json").read_text()))
    start_rates = played.rates(pursuers[:-1], evaders)
    learned = [i for i, n in enumerate(pursuers[:-1]) if n.startswith("p")]
    start = pursuers[max(learned, key=lambda i: (start_rates[i].min(), i))]
    assert last["init_model"] == start
    final_config = json.loads((out / "p2_final" / "config.json").read_text())
    assert final_config["options"]["init_model"] == str((out / start / "model.zip").resolve())
    assert final_config["options"]["opponent_pool"] == str((out / "pool_p2_final.json").resolve())
    assert final_config["options"]["timesteps"] == 1024  # --final-timesteps
    final_pool = json.loads((out / "pool_p2_final.json").read_text())
    assert {m["name"]: m["weight"] for m in final_pool["members"]} == {
        k: v for k, v in last["mixture"].items() if v > 1e-9
    }
    assert last["capture_rate_against_mixture"] == pytest.approx(
        played.rates(["p2_final"], evaders)[0] @ np.array(list(last["mixture"].values()))
    )
    payoff = json.loads((out / "payoff.json").read_text())
    assert len(payoff["cells"]) == len(pursuers) * len(evaders)
    matrix = league.PayoffMatrix.from_json(payoff)
    rates = matrix.rates(pursuers, evaders)
    sigma_p = np.array(list(r2["pursuer_mixture"].values()))
    assert r2["exploitability"]["evader_br_escape"] == pytest.approx(
        1 - sigma_p @ rates[:3, evaders.index("e2")]
    )
    for name in ("payoff.png", "exploitability.png"):
        assert (out / name).stat().st_size > 1000
    # The final policies: the learned members with the best worst case in the matrix.
    final = state["final"]
    pool_rates = matrix.rates(pursuers, evaders)
    learned_p = [i for i, n in enumerate(pursuers) if n.startswith("p")]
    best = max(learned_p, key=lambda i: (pool_rates[i].min(), i))
    assert final["pursuer"]["name"] == pursuers[best]
    assert f"final pursuer team {pursuers[best]}" in r.stdout
    # ... re-measured on the report seeds, every member against every other.
    report = json.loads((out / "report.json").read_text())
    assert report["seed"] == 2_000_000 and len(report["cells"]) == len(pursuers) * len(evaders)
    worst = min(report["cells"][f"{pursuers[best]} vs {e}"]["capture_rate"] for e in evaders)
    assert final["pursuer"]["worst_capture"] == pytest.approx(worst)
    # The same command again trains nothing and plays no new pair.
    again = _run("-m", "agents.league", "--rounds", "2", "--method", "pfsp", "--no-exploit", *tiny)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("reusing") == 5
    assert "played" not in again.stdout
    # Another method on the same folder is refused in one line.
    other = _run("-m", "agents.league", "--rounds", "2", "--method", "nash", *tiny)
    assert other.returncode == 2
    assert other.stderr.strip().splitlines() == [
        f"{league.PROG}: error: {out / 'league.json'} was played with --method pfsp: pass "
        "that to continue it, or another --out"
    ]
    # ... and so is another final response (its run would be reused as if it were this one).
    other = _run("-m", "agents.league", "--rounds", "2", "--method", "pfsp",
                 "--final-response", "none", *tiny)  # fmt: skip
    assert other.returncode == 2
    assert "was played with --final-response pursuer" in other.stderr


def test_the_evaders_final_response_without_warm_start(tmp_path):
    """``--final-response evader``: ``e1_final`` answers the whole final pursuer pool from a
    new network (``--no-warm-start``), trained as an evader for ``--final-timesteps``."""
    out = tmp_path / "league"
    r = _run("-m", "agents.league", "--rounds", "1", "--final-response", "evader",
             "--final-timesteps", "512", "--no-warm-start", "--no-exploit",
             "--pursuer-timesteps", "1536", "--evader-timesteps", "1536", "--n-envs", "2",
             "--episodes", "16", "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    state = json.loads((out / "league.json").read_text())
    pursuers = [m["name"] for m in state["pools"]["pursuer"]]
    assert pursuers[-1] == "p1"  # no final response of the pursuers
    assert [m["name"] for m in state["pools"]["evader"]][-2:] == ["e1", "e1_final"]
    last = state["final_round"]
    assert (last["name"], last["role"], last["init_model"]) == ("e1_final", "evader", None)
    assert list(last["mixture"]) == pursuers
    config = json.loads((out / "e1_final" / "config.json").read_text())["options"]
    assert (config["learned"], config["timesteps"], config["init_model"]) == ("evaders", 512, None)
    matrix = league.PayoffMatrix.from_json(json.loads((out / "payoff.json").read_text()))
    sigma = np.array(list(last["mixture"].values()))
    assert last["escape_rate_against_mixture"] == pytest.approx(
        1 - sigma @ matrix.rates(pursuers, ["e1_final"])[:, 0]
    )


def test_init_model_starts_a_new_run_from_that_network(tmp_path):
    """One rollout after ``--init-model`` the network is still that model's: its parameters
    moved far less than the distance to a freshly initialised network."""
    import torch
    from stable_baselines3 import PPO

    r = _run("train.py", "--env", "team_pursuit", "--init-model", str(PURSUER_MODEL),
             "--timesteps", "1536", "--n-envs", "2", "--episodes", "4", "--no-gif",
             "--no-progress", "--out", str(tmp_path), "--name", "warm")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"starting from the weights of {PURSUER_MODEL.resolve()}" in r.stdout

    def params(model):
        return torch.cat([p.detach().flatten() for p in model.policy.parameters()])

    init = params(PPO.load(PURSUER_MODEL, device="cpu"))
    warm = params(PPO.load(tmp_path / "warm" / "model.zip", device="cpu"))
    fresh = params(PPO("MlpPolicy", make_team_sb3_vec_env(1), seed=0, device="cpu"))
    assert torch.linalg.norm(warm - init) < 0.1 * torch.linalg.norm(fresh - init)


def test_an_interrupted_league_run_is_resumed_and_a_finished_one_reused(tmp_path):
    """What the same league command does with each run folder: a model is reused, a run
    with a checkpoint (Ctrl-C saves one) resumes, anything else starts afresh."""
    args = league.build_parser().parse_args(["--out", str(tmp_path)])
    (tmp_path / "p1" / "checkpoints").mkdir(parents=True)
    checkpoint = tmp_path / "p1" / "checkpoints" / CHECKPOINT_NAME
    checkpoint.write_bytes(PURSUER_MODEL.read_bytes())
    argv = league.train_argv(tmp_path, "p1", "pursuers", ["--opponent-pool", "x.json"], args)
    assert argv == ["--out", str(tmp_path), "--name", "p1", "--resume", "--no-gif",
                    "--no-progress"]  # fmt: skip
    fresh = league.train_argv(tmp_path, "e1", "evaders", ["--opponent-pool", "y.json"], args)
    assert "--overwrite" in fresh and "--resume" not in fresh
    (tmp_path / "e1" / "checkpoints").mkdir(parents=True)  # a damaged checkpoint: afresh
    (tmp_path / "e1" / "checkpoints" / CHECKPOINT_NAME).write_bytes(b"not a zip")
    assert league._run_state(tmp_path / "e1") == "new"
    assert fresh[fresh.index("--timesteps") + 1] == str(args.evader_timesteps)
    (tmp_path / "p1" / "model.zip").write_bytes(b"")
    assert league._run_state(tmp_path / "p1") == "done"
