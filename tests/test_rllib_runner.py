"""agents.rllib_runner.NativeVectorEnvRunner against RLlib's stock SingleAgentEnvRunner (no
mocks: real RLlib runners on the real native vector env, PPO on a real local Ray).

* episodes: on the same seed and weights both runners return the same episodes, chunk by
  chunk over several ``sample()`` calls (observations, actions, rewards, model outputs,
  infos, terminated/truncated, lookback buffers, ``t_started``) and log the same episode
  metrics; deterministic actions (``explore=False``) and, with the same torch seed,
  sampled ones;
* env failure: with ``restart_failed_sub_environments`` a failing ``env.step`` recreates and
  resets the env in both runners alike (a real env that raises once);
* fallback: a config the array loop cannot honour (an observation filter connector) uses
  the parent's loop; switching between the loops per call (``random_actions``) works;
* training: PPO with the array runner consumes its episodes (GAE, value targets, losses)
  and matches PPO with the stock runner on the same seed, iteration by iteration (in a
  subprocess with a Ray session of its own).

Skipped without ray. About a minute on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before ray is imported
ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from gymnasium.vector import VectorWrapper  # noqa: E402
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner  # noqa: E402

from agents.rllib import env as rllib_env  # noqa: E402
from agents.rllib.cluster import WORKER_ENV  # noqa: E402
from agents.rllib.config import build_config  # noqa: E402
from agents.rllib.runner import NativeVectorEnvRunner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Evasion-v0: the scripted pursuers catch a random evader at all sorts of times, so the
#: samples hold episodes that end mid-call, resets mid-call and chunks continued across calls.
ENV_ID = "steer_env/Evasion-v0"
METRICS = (
    "num_env_steps_sampled",
    "num_episodes",
    "episode_return_mean",
    "episode_len_mean",
    "episode_return_min",
    "episode_len_max",
    "steer_episodes",
    "steer_successes",
)
#: Learner results of PPO (vf_explained_var: how well the value targets from GAE are fit).
LOSSES = ("vf_loss", "policy_loss", "vf_explained_var")


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def runners(num_envs: int, seed: int = 3) -> tuple[SingleAgentEnvRunner, NativeVectorEnvRunner]:
    """A stock and an array runner of train.py's config, the array runner holding the
    stock runner's module weights."""
    stock = SingleAgentEnvRunner(config=build_config(ENV_ID, seed, 0, 0, num_envs))
    config = build_config(ENV_ID, seed, 0, 0, num_envs)
    assert config.env_runner_cls is NativeVectorEnvRunner  # what train.py uses
    fast = NativeVectorEnvRunner(config=config)
    assert fast.fallback_reason is None
    fast.set_state({"rl_module": stock.get_state(components="rl_module")["rl_module"]})
    return stock, fast


def assert_same_episodes(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (len(x), x.t_started, x.t) == (len(y), y.t_started, y.t)
        assert (x.is_terminated, x.is_truncated) == (y.is_terminated, y.is_truncated)
        assert x.is_numpy and y.is_numpy
        for name in ("observations", "actions", "rewards"):
            bx, by = getattr(x, name), getattr(y, name)
            assert bx.lookback == by.lookback, name
            assert bx.data.dtype == by.data.dtype, name
            np.testing.assert_allclose(bx.data, by.data, rtol=1e-6, atol=1e-6, err_msg=name)
        assert x.infos.lookback == y.infos.lookback
        assert [set(i) for i in x.infos.data] == [set(i) for i in y.infos.data]
        assert x.get_infos(-1) == y.get_infos(-1)
        assert set(x.extra_model_outputs) == set(y.extra_model_outputs)
        assert {"action_dist_inputs", "action_logp", "weights_seq_no"} <= set(x.extra_model_outputs)
        for key, bx in x.extra_model_outputs.items():
            by = y.extra_model_outputs[key]
            assert bx.lookback == by.lookback, key
            assert bx.data.dtype == by.data.dtype, key
            np.testing.assert_allclose(bx.data, by.data, rtol=1e-5, atol=1e-6, err_msg=key)
        assert x.get_return() == pytest.approx(y.get_return())


# Steps per call: mid-episode cuts, a call of fewer steps than sub-envs, long calls.
CALLS = (37, 50, 128, 0.6, 80, 3)


@pytest.mark.parametrize("explore", [False, True])
def test_array_runner_returns_the_stock_runners_episodes(explore):
    n = 16
    stock, fast = runners(n)
    kinds = {"done": 0, "ongoing": 0, "lookback": 0, "reset mid-call": 0}
    for steps in CALLS:
        timesteps = max(1, int(steps * n))
        torch.manual_seed(11)  # the same exploration draws for both runners
        a = stock.sample(num_timesteps=timesteps, explore=explore)
        torch.manual_seed(11)
        b = fast.sample(num_timesteps=timesteps, explore=explore)
        assert_same_episodes(a, b)
        assert sum(len(e) for e in b) >= timesteps
        kinds["done"] += sum(e.is_done for e in b)
        kinds["ongoing"] += sum(not e.is_done for e in b)
        kinds["lookback"] += sum(e.observations.lookback == 1 for e in b)
        kinds["reset mid-call"] += sum(e.t_started == 0 and not e.is_done for e in b)
    assert min(kinds.values()) > 0, kinds  # every kind of chunk was compared
    ma, mb = stock.get_metrics(), fast.get_metrics()
    for key in METRICS:
        assert float(mb[key].peek()) == pytest.approx(float(ma[key].peek())), key
    stock.stop()
    fast.stop()


#: Env steps left before the flaky env of a tag fails once (see FlakyVectorEnv).
STEPS_BEFORE_FAILURE: dict[str, int] = {}


class FlakyVectorEnv(VectorWrapper):
    """The native vector env, whose ``step`` raises once after
    ``STEPS_BEFORE_FAILURE[tag]`` steps (counted over the env's re-creations)."""

    def __init__(self, env, tag: str) -> None:
        super().__init__(env)
        self.tag = tag

    def step(self, actions):
        left = STEPS_BEFORE_FAILURE.get(self.tag)
        if left is not None:
            if left == 0:
                del STEPS_BEFORE_FAILURE[self.tag]
                raise RuntimeError("flaky env: step failed")
            STEPS_BEFORE_FAILURE[self.tag] = left - 1
        return self.env.step(actions)


def make_flaky_env(config):
    config = dict(config)
    tag = config.pop("flaky_tag")
    return FlakyVectorEnv(rllib_env.make_env(config), tag)


def test_failed_env_step_is_handled_as_by_the_stock_runner():
    from ray.tune.registry import register_env

    register_env("steer_env_rllib_flaky", make_flaky_env)
    n = 8
    made = []
    for tag, cls in (("stock", SingleAgentEnvRunner), ("array", NativeVectorEnvRunner)):
        config = build_config(ENV_ID, 3, 0, 0, n)
        config.environment(
            "steer_env_rllib_flaky", env_config={**config.env_config, "flaky_tag": tag}
        ).fault_tolerance(restart_failed_sub_environments=True)
        made.append(cls(config=config))
    stock, fast = made
    assert fast.fallback_reason is None
    fast.set_state({"rl_module": stock.get_state(components="rl_module")["rl_module"]})
    # Both fail once on their 61st env step (in the second call) and go on from a reset.
    STEPS_BEFORE_FAILURE.update(stock=60, array=60)
    for steps in (40, 128, 30):
        a = stock.sample(num_timesteps=steps * n, explore=False)
        b = fast.sample(num_timesteps=steps * n, explore=False)
        assert_same_episodes(a, b)
    assert not STEPS_BEFORE_FAILURE  # each failed once
    ma, mb = stock.get_metrics(), fast.get_metrics()
    assert float(mb["num_env_step_failures"].peek()) == 1
    for key in (*METRICS, "num_env_step_failures"):
        assert float(mb[key].peek()) == pytest.approx(float(ma[key].peek())), key
    stock.stop()
    fast.stop()


def test_array_runner_falls_back_to_the_parent_loop():
    from ray.rllib.connectors.env_to_module import MeanStdFilter

    config = build_config(ENV_ID, 0, 0, 0, 4).env_runners(
        env_to_module_connector=lambda env, spaces, device: MeanStdFilter()
    )
    filtered = NativeVectorEnvRunner(config=config)
    assert filtered.fallback_reason == "custom env-to-module connector"
    episodes = filtered.sample(num_timesteps=40)
    assert sum(len(e) for e in episodes) >= 40
    filtered.stop()

    # Per call: random actions go through the parent's loop; the array loop takes over
    # again afterwards (each switch resets the sub-envs).
    fast = NativeVectorEnvRunner(config=build_config(ENV_ID, 0, 0, 0, 4))
    for kwargs in ({}, {"random_actions": True}, {}, {}):
        episodes = fast.sample(num_timesteps=40, **kwargs)
        assert sum(len(e) for e in episodes) >= 40
        assert all(e.is_numpy for e in episodes)
    episodes = fast.sample(num_episodes=2)  # the parent's episode mode
    assert len(episodes) >= 2 and all(e.is_done for e in episodes)
    fast.stop()


def _train(array_runner: bool, iterations: int) -> tuple[list[str], list[dict]]:
    config = build_config("steer_env/Pursuit-v0", 5, 0, 1, 16, array_runner=array_runner)
    algo = config.build_algo()
    try:
        kinds = algo.env_runner_group.foreach_env_runner(
            lambda r: type(r).__name__, local_env_runner=False
        )
        results = []
        for _ in range(iterations):
            r = algo.train()
            learner = r["learners"]["default_policy"]
            results.append(
                {
                    "steps": int(r["env_runners"]["num_env_steps_sampled"]),
                    "episodes": int(r["env_runners"].get("num_episodes", 0)),
                    "return": float(r["env_runners"].get("episode_return_mean", np.nan)),
                    "trained": int(learner["num_module_steps_trained"]),
                    **{
                        k: float(learner[k]) for k in ("vf_loss", "policy_loss", "vf_explained_var")
                    },
                }
            )
    finally:
        algo.stop()
    return kinds, results


def ppo_results(iterations: int = 3) -> dict:
    """Three PPO iterations with each runner on a local Ray (train.py's worker settings).
    Run in a process of its own (see the test): Tune's env registry publishes a name to the
    first Ray session of a process only, and other test modules start sessions first."""
    torch.set_num_threads(1)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": dict(WORKER_ENV)},
    )
    try:
        kinds, fast = _train(array_runner=True, iterations=iterations)
        stock_kinds, stock = _train(array_runner=False, iterations=iterations)
    finally:
        ray.shutdown()
    return {"kinds": kinds + stock_kinds, "array": fast, "stock": stock}


def test_ppo_trains_on_the_array_runners_episodes_as_on_the_stock_runners():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run(
        [sys.executable, __file__],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["kinds"] == ["NativeVectorEnvRunner", "SingleAgentEnvRunner"]
    fast, stock = res["array"], res["stock"]
    for it in fast:
        assert it["steps"] >= 16 * 128  # one fragment of 128 steps per sub-env
        assert it["trained"] >= it["steps"]  # every timestep went through the learner
        assert all(np.isfinite(it[k]) for k in LOSSES)
    assert sum(it["episodes"] for it in fast) > 0
    # The same seed: the same episodes, so the same GAE targets, losses and returns.
    for a, b in zip(stock, fast, strict=True):
        assert a["steps"] == b["steps"] and a["episodes"] == b["episodes"]
        for key in ("return", *LOSSES):
            assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-6), (key, a, b)


if __name__ == "__main__":
    print(json.dumps(ppo_results()))
