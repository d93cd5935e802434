"""The RLlib pair of ``python -m benchmarks.training`` (``--framework rllib``), run for real
at a tiny budget on a local Ray: both runners train RLlib PPO with the same settings and
seed, on sub-envs started from the same seeds, are evaluated on the SB3 pair's held-out
episodes, and a run's last evaluation is what ``agents.compare``'s comparison gives for its
saved checkpoint.

Skipped without ray. About 40 s on 2 cores.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before ray is imported
pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from benchmarks import training, training_rllib  # noqa: E402

#: Evasion: an untrained evader escapes some episodes and not others, so a success rate
#: at a tiny budget is neither 0 nor 1 and the comparison below can disagree.
TASK = "evasion"
EPISODES = 50


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    before = torch.get_num_threads()
    out = tmp_path_factory.mktemp("rllib_ttt")
    _, _, n_envs, hp = training_rllib.task_defaults(TASK)
    iteration = training_rllib.iteration_timesteps(n_envs, hp)
    found = training_rllib.time_to_threshold(
        TASK, [0], EPISODES, eval_every=iteration, timesteps=2 * iteration, save_to=out
    )
    torch.set_num_threads(before)
    return found, out


def test_both_runners_train_with_the_same_settings_and_seeds(result):
    found, _ = result
    env_id, _, n_envs, hp = training_rllib.task_defaults(TASK)
    assert found["framework"] == "rllib" and found["env_id"] == env_id == "steer_env/Evasion-v0"
    assert found["hyperparameters"] == hp and found["n_envs"] == n_envs
    # The SB3 pair's held-out episodes.
    assert found["eval_seed"] == training.EVAL_SEED and found["episodes"] == EPISODES
    assert [(r["runner"], r["seed"]) for r in found["runs"]] == [("native", 0), ("stock", 0)]
    assert found["ray"]["address"] == "local" and found["ray"]["cpus"] >= 1


def test_curves_count_the_timesteps_and_the_thresholds_are_their_first_crossings(result):
    found, _ = result
    iteration = training_rllib.iteration_timesteps(found["n_envs"], found["hyperparameters"])
    for run in found["runs"]:
        curve = run["curve"]
        # One evaluation after each train() call; a call samples at least its batch (more
        # when episodes end mid-fragment).
        steps = [p["timesteps"] for p in curve]
        assert run["iterations"] == len(steps) == 2
        assert iteration <= steps[0] and steps[0] + iteration <= steps[1] == run["timesteps"]
        seconds = [p["seconds"] for p in curve]
        assert 0 < seconds[0] < seconds[1] == run["train_s"]
        assert run["timesteps_per_s"] == pytest.approx(run["timesteps"] / run["train_s"])
        assert all(p["success"] in {k / EPISODES for k in range(EPISODES + 1)} for p in curve)
        best = max(p["success"] for p in curve)
        for t in training.THRESHOLDS:
            point = run["reached"][f"{t:.0%}"]
            assert point == training.first_reaching(curve, t)
            assert (point is None) == (best < t)
        lo, hi = (run["reached"][f"{t:.0%}"] for t in training.THRESHOLDS)
        if lo is not None and hi is not None:
            assert hi["seconds"] >= lo["seconds"] and hi["timesteps"] >= lo["timesteps"]


def test_an_evaluation_is_the_comparison_of_the_saved_checkpoint(result):
    """The last point of each curve is the success rate that ``agents.compare`` (the
    project's comparison, on the same seeds) gives the checkpoint saved at that point."""
    from agents.evaluation.compare import run_comparison
    from agents.evaluation.policies import load_policy

    found, out = result
    for run in found["runs"]:
        policy = load_policy(out / f"{run['runner']}_0")
        summary = run_comparison(found["env_id"], policy, EPISODES, found["eval_seed"])
        rate = summary["agents"]["learned"]["success_rate"]
        assert 0 < rate < 1  # a rate the two could disagree on
        assert run["curve"][-1]["success"] == rate


def test_the_stock_runner_starts_every_sub_env_from_the_native_runners_seed():
    """One seed plan for both sides (agents/rllib/env.py): RLlib's stock runner on a
    SyncVectorEnv of single envs resets with the native runner's per-sub-env seeds, so the
    first observations agree."""
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from agents.rllib import env as rllib_env
    from agents.rllib.config import build_config

    env_id, _, _, hp = training_rllib.task_defaults(TASK)
    n, seed = 4, 7
    first = {}
    for runner, (mode, array) in training_rllib.RUNNERS.items():
        config = build_config(env_id, seed, 0, 0, n, vectorize_mode=mode, hp=hp, array_runner=array)
        made = (config.env_runner_cls or SingleAgentEnvRunner)(config=config)
        assert (type(made) is SingleAgentEnvRunner) == (runner == "stock")
        episodes = made.sample(num_timesteps=n, explore=False)
        first[runner] = np.stack([e.get_observations(0) for e in episodes])
        made.stop()
    assert first["native"].shape[0] == n
    np.testing.assert_allclose(first["stock"], first["native"], rtol=0, atol=1e-6)
    # Not RLlib's own seeds (seed + i): those start other episodes.
    single = rllib_env.make_env({"env_id": env_id})
    own = np.stack([single.reset(seed=seed + i)[0] for i in range(n)])
    assert not np.allclose(own, first["native"])
