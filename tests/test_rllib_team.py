"""The multi-agent team task on RLlib with a real Ray instance (no mocks): a one-node
cluster on 127.0.0.1 (``ray.cluster_utils.Cluster``, 2 CPUs) shared by the tests.

* ``train.py --framework rllib --env team_pursuit``: the shared pursuer policy trains,
  writes a checkpoint whose ``steer_env.json`` maps every pursuer to the one module, and
  the module loads as a policy (``load_rllib_policy(path, module="pursuer")``);
* ``learned="both"``: the two modules ("pursuer", "evader") are both trained (their
  weights change), the sampled episodes hold every pursuer and the evader, each mapped to
  its role's module;
* seeding: distinct seeds per sub-env by the documented formula, and the same seed gives
  the same first sampled episodes.

Skipped without ray or pettingzoo (``pip install "steer-env[rllib,multiagent]"``). About a
minute and a half on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before Ray is imported
ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
pytest.importorskip("pettingzoo")

from ray.cluster_utils import Cluster  # noqa: E402

from agents.evaluation.policies import PolicyLoadError, load_policy  # noqa: E402
from agents.rllib import env as rllib_env  # noqa: E402
from agents.rllib import team_env as rllib_team_env  # noqa: E402
from agents.rllib.cluster import WORKER_ENV  # noqa: E402
from agents.rllib.policy import load_rllib_policy  # noqa: E402
from agents.rllib.team import build_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PURSUERS = ["pursuer_0", "pursuer_1", "pursuer_2"]
#: Tiny PPO: 2 sub-envs x 32 steps per iteration, one epoch; 20-step episodes so that the
#: first sample holds whole episodes.
TINY = {"rollout_fragment_length": 32, "minibatch_size": 64, "num_epochs": 1}
SHORT = {"time_limit": 20}


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    c.wait_for_nodes()
    try:
        assert c.address.startswith("127.0.0.1:")
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()


def run_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    env.pop("RAY_ADDRESS", None)
    return env


def test_train_py_team_pursuit_shared_pursuer_policy(cluster, tmp_path):
    cmd = [
        *(sys.executable, str(ROOT / "train.py"), "--framework", "rllib"),
        *("--env", "team_pursuit", "--address", cluster.address),
        *("--out", str(tmp_path), "--name", "team", "--timesteps", "500"),
        *("--num-env-runners", "1", "--envs-per-runner", "2", "--periodic-eval-episodes", "2"),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=run_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "learned pursuers: modules pursuer" in proc.stdout
    # The final cross-play table: the learned module against the scripted teams.
    assert "learned pursuers (PPO)" in proc.stdout and "cooperative pursuers" in proc.stdout
    run = tmp_path / "team"
    config = json.loads((run / "config.json").read_text())
    assert config["status"] == "finished"
    assert "learned vs flow" in config["comparison"]["cells"]
    assert config["options"]["learned"] == "pursuers"
    assert config["sessions"][0]["end_timesteps"] >= 500
    assert any((run / "tb").rglob("events.out.tfevents.*"))
    with np.load(run / "eval" / "evaluations.npz") as ev:
        assert 0.0 <= float(ev["captures"][-1]) <= 1.0
    meta = json.loads((run / "model" / "steer_env.json").read_text())
    assert meta["team_task"] == "team_pursuit" and meta["modules"] == ["pursuer"]
    assert meta["agents"] == {a: "pursuer" for a in PURSUERS}  # one shared module

    policy = load_rllib_policy(run / "model", module="pursuer")
    obs = np.zeros((3, *meta["obs_shape"]), dtype=np.float32)
    actions, _ = policy.predict(obs)
    assert actions.shape == (3, 2) and np.all(np.abs(actions) <= 1.0)
    with pytest.raises(PolicyLoadError, match="has no module 'evader'"):
        load_rllib_policy(run / "model", module="evader")

    # agents.compare/render load through agents.policies.load_policy: one clear line.
    with pytest.raises(PolicyLoadError, match="multi-agent checkpoint of team_pursuit"):
        load_policy(run / "model")


def _sample_first(algo) -> tuple[list, list]:
    """Each runner's sub-env seeds and a fingerprint of its first ``sample()``: per episode
    chunk the agents with their modules, the start observations, return, length, done."""

    def plan(runner):
        return runner.worker_index, [e.seed_plan for e in rllib_team_env.sub_envs(runner)]

    def fingerprint(runner):
        episodes = runner.sample()
        return runner.worker_index, [
            (
                {a: e.module_for(a) for a in sorted(e.agent_ids)},
                {a: np.asarray(o).round(6).tolist() for a, o in e.get_observations(0).items()},
                round(float(e.get_return()), 6),
                len(e),
                e.is_done,
            )
            for e in episodes
        ]

    group = algo.env_runner_group
    return (
        sorted(group.foreach_env_runner(plan, local_env_runner=False)),
        sorted(group.foreach_env_runner(fingerprint, local_env_runner=False)),
    )


def _weights(algo, module: str) -> dict[str, np.ndarray]:
    return {k: np.array(v, copy=True) for k, v in algo.get_module(module).get_state().items()}


def test_both_learned_two_modules_train_and_seeding(cluster):
    # One driver session for both builds (Tune's registry keys names by the first session).
    # The runners' environment as train.py sets it (a fixed string hash seed among others).
    ray.init(
        address=cluster.address,
        runtime_env={"env_vars": WORKER_ENV},
        logging_level="ERROR",
        log_to_driver=False,
    )
    try:
        algo = build_config("team_pursuit", "both", 7, 0, 1, 2, hp=TINY, env_kwargs=SHORT)
        algo = algo.build_algo()
        plans, first = _sample_first(algo)
        before = {m: _weights(algo, m) for m in ("pursuer", "evader")}
        result = algo.train()
        after = {m: _weights(algo, m) for m in ("pursuer", "evader")}
        algo.stop()
        again = build_config("team_pursuit", "both", 7, 0, 1, 2, hp=TINY, env_kwargs=SHORT)
        again = again.build_algo()
        plans2, first2 = _sample_first(again)
        again.stop()
    finally:
        ray.shutdown()

    # Two modules, both trained: every parameter tensor set moved.
    assert {"pursuer", "evader"} <= set(result["learners"])
    for m in ("pursuer", "evader"):
        changed = [k for k in before[m] if not np.allclose(before[m][k], after[m][k])]
        assert changed, f"module {m} did not change"

    # Sampled episodes: every pursuer and the evader, each mapped to its role's module.
    episodes = [ep for _, eps in first for ep in eps]
    assert episodes
    for modules, starts, *_ in episodes:
        assert modules == {**{a: "pursuer" for a in PURSUERS}, "evader_0": "evader"}
        assert set(starts) == {*PURSUERS, "evader_0"}
    assert any(done for *_, done in episodes)  # whole episodes, not only chunks

    # Seeds: the documented formula, distinct per sub-env, away from evaluation seeds.
    assert plans == [(1, rllib_env.env_seeds(7, 0, 1, 2))]
    seeds = plans[0][1]
    assert len(set(seeds)) == 2 and min(seeds) > 2_000_000
    starts = [json.dumps(ep[1], sort_keys=True) for ep in episodes]
    assert len(set(starts)) == len(starts)  # no two episodes (sub-envs, resets) alike
    # Same seed and shape: the same first episodes.
    assert plans2 == plans and first2 == first
