"""TorchRL route: every front end through TorchRL's own wrappers, no mocks.

* single env: ``torchrl.envs.GymEnv(id)``, infos read with ``auto_register_info_dict`` and
  TorchRL's default reader given numpy values (the reader on the raw infos is a strict
  xfail naming why);
* native vector env: ``GymWrapper(gym.make_vec(id, 4, vectorization_mode=
  "vector_entry_point", autoreset_mode=...))`` for the two autoreset modes TorchRL accepts
  (SAME_STEP, DISABLED; it refuses NEXT_STEP, checked below);
* team env: ``PettingZooWrapper(env=team_pursuit_v0.parallel_env(learned=...))`` for each
  ``learned``, ``use_mask=True`` where agents can leave (evaders are captured), and two
  evaders of which one leaves mid-episode; and the one-agent PettingZoo forms of Pursuit
  and Evasion (``pursuit_v0``, ``evasion_v0``).

Each: ``check_env_specs``, a seeded rollout that is the same tensors twice (and not with
another seed), the infos in the tensordict; then a few PPO iterations (TorchRL's
``Collector``, formerly ``SyncDataCollector``, + ``ClipPPOLoss`` + GAE) on the single env
and on the team env; and every python block of ``docs/torchrl.md`` runs.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torchrl")
pytest.importorskip("pettingzoo")

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import GymEnv, GymWrapper, PettingZooWrapper, check_env_specs
from torchrl.envs.gym_like import default_info_dict_reader
from torchrl.modules import (
    MLP,
    MultiAgentMLP,
    ProbabilisticActor,
    TanhNormal,
    ValueOperator,
)
from torchrl.objectives import ClipPPOLoss, ValueEstimators
from torchrl.objectives.value import GAE

import steer_env  # noqa: F401  (registers the ids)
from steer_env.envs import team_pursuit_v0

ROOT = Path(__file__).resolve().parents[1]
IDS = ("steer_env/Pursuit-v0", "steer_env/Evasion-v0")
SINGLE_INFO = (
    "distance",
    "reward_capture",
    "reward_escape",
    "reward_shaping",
    "is_success",
    "capture_step",
)
TEAM_INFO = (
    "distance",
    "reward_capture",
    "reward_escape",
    "reward_shaping",
    "captured",
    "captures",
    "evaders_captured",
    "evaders_left",
    "capture_steps",
)
EPISODE = 100  # gym.spec(id).max_episode_steps: rollouts below cross an episode end


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    # Tiny networks: a second intra-op thread only adds wake-ups (on a loaded 2-core machine
    # a (3, 36) Linear took 6-12 ms with 2 threads, 0.01 ms with 1).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _quiet_pettingzoo_version_warning():
    # PettingZooWrapper warns on every pettingzoo but 1.24.3; nothing else is filtered.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        yield


def seeded_rollout(make, seed: int, steps: int):
    """A fresh env from ``make()``, seeded, random actions from torch's seeded generator."""
    env = make()
    env.set_seed(seed)
    torch.manual_seed(seed)
    td = env.rollout(steps, break_when_any_done=False)
    env.close()
    return td


def assert_same(a, b) -> None:
    assert set(a.keys(True, True)) == set(b.keys(True, True))
    for key in a.keys(True, True):
        assert torch.equal(a[key], b[key]), key


def assert_deterministic(make, steps: int) -> None:
    a, b, c = (seeded_rollout(make, s, steps) for s in (3, 3, 4))
    assert_same(a, b)
    assert not torch.equal(a["next", "observation"], c["next", "observation"])


# --------------------------------------------------------------------------- single env
class NumpyInfoReader(default_info_dict_reader):
    """TorchRL's default info reader, given numpy values: it reads ``value.dtype``, which
    the single env's Python ``float``/``bool``/``int`` infos lack."""

    def __call__(self, info_dict, tensordict):
        return super().__call__({k: np.asarray(v) for k, v in info_dict.items()}, tensordict)


def single_env(env_id: str):
    return GymEnv(env_id).auto_register_info_dict(info_dict_reader=NumpyInfoReader())


def test_the_env_spec_gives_the_episode_length():
    for env_id in IDS:
        assert gym.make(env_id).spec.max_episode_steps == EPISODE


@pytest.mark.parametrize("env_id", IDS)
def test_gymenv_builds_the_registered_id(env_id):
    """GymEnv passes ``frameskip=1`` and retries without it only on a TypeError worded as
    Python's ("unexpected keyword argument 'frameskip'"): the env's unknown-argument error."""
    env = GymEnv(env_id)
    assert env.batch_size == torch.Size([]) and env.wrapper_frame_skip == 1
    env.close()
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_argument'"):
        gym.make(env_id, no_such_argument=1)


@pytest.mark.xfail(
    strict=True,
    raises=AttributeError,
    reason="TorchRL's default_info_dict_reader reads value.dtype (torchrl/envs/gym_like.py): "
    "the single env's infos are Python float/bool/int ('float' object has no attribute "
    "'dtype'); numpy scalars (np.float64, np.bool_, np.int64) would pass",
)
def test_torchrl_default_info_reader_reads_the_single_env_infos():
    GymEnv(IDS[0]).auto_register_info_dict()


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_through_gymenv(env_id):
    env = single_env(env_id)
    check_env_specs(env)
    env.close()
    assert_deterministic(lambda: single_env(env_id), EPISODE + 30)

    td = seeded_rollout(lambda: single_env(env_id), 0, EPISODE + 30)
    for key in SINGLE_INFO:  # at reset (root) and after every step ("next")
        assert key in td and ("next", key) in td.keys(True), key
    done = td["next", "done"].squeeze(-1)
    assert done.any() and int(done.nonzero()[0]) < EPISODE
    assert not td["next", "is_success"][~done].any()
    assert (td["next", "capture_step"][~done] == -1).all()
    # the reward is the sum of its terms
    terms = sum(td["next", f"reward_{t}"] for t in ("capture", "escape", "shaping"))
    torch.testing.assert_close(td["next", "reward"].squeeze(-1).double(), terms, atol=1e-5, rtol=0)


# --------------------------------------------------------------------------- vector env
def vector_env(env_id: str, mode: AutoresetMode, num_envs: int = 4):
    venv = gym.make_vec(
        env_id, num_envs, vectorization_mode="vector_entry_point", autoreset_mode=mode
    )
    env = GymWrapper(venv)
    if mode == AutoresetMode.DISABLED:
        # TorchRL reads a vector env's infos itself only in SAME_STEP (with its final-obs
        # reader); DISABLED needs the reader registered.
        env = env.auto_register_info_dict()
    return env


MODES = (AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_through_gymwrapper(env_id, mode):
    env = vector_env(env_id, mode)
    assert env.batch_size == torch.Size([4])
    check_env_specs(env)
    env.close()
    assert_deterministic(lambda: vector_env(env_id, mode), EPISODE + 30)

    td = seeded_rollout(lambda: vector_env(env_id, mode), 0, EPISODE + 30)
    assert td.batch_size == torch.Size([4, EPISODE + 30])
    for key in SINGLE_INFO:
        assert ("next", key) in td.keys(True), key
    done = td["next", "done"].squeeze(-1)
    assert done.any(dim=1).all()  # every env ended an episode, and went on
    # after an episode end the next step starts from the new episode's observation
    env_i, t = (int(x) for x in done.nonzero()[0])
    assert not torch.equal(td[env_i, t + 1]["observation"], td[env_i, t]["next", "observation"])


def gymnasium_loop(env_id: str, mode: AutoresetMode, seed: int, actions: torch.Tensor):
    """The same steps driven by hand: ``set_seed`` resets with the seed, ``rollout`` resets
    once more; ended envs are reset with ``reset_mask`` (DISABLED) or by the env
    (SAME_STEP). Returns observations, next observations, rewards, dones as ``(E, T, ...)``."""
    import numpy as np

    venv = gym.make_vec(env_id, actions.shape[0], vectorization_mode="vector_entry_point",
                        autoreset_mode=mode)  # fmt: skip
    venv.reset(seed=seed)
    obs, _ = venv.reset()
    rows: dict[str, list] = {"obs": [], "next": [], "reward": [], "done": []}
    for a in actions.transpose(0, 1).numpy():
        rows["obs"].append(obs)
        nxt, reward, term, trunc, infos = venv.step(a)
        done = term | trunc
        if mode == AutoresetMode.SAME_STEP and done.any():
            final = nxt.copy()
            final[done] = np.stack(infos["final_obs"][done])
            rows["next"].append(final)
        else:
            rows["next"].append(nxt)
        if mode == AutoresetMode.DISABLED and done.any():
            nxt, _ = venv.reset(options={"reset_mask": done})
        rows["reward"].append(reward)
        rows["done"].append(done)
        obs = nxt
    venv.close()
    return {k: torch.as_tensor(np.stack(v, axis=1)) for k, v in rows.items()}


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.name)
def test_vector_env_rollout_is_the_gymnasium_loop(mode):
    """TorchRL's rollout is step for step the hand-written Gymnasium loop: observations, the
    final observation on the step an episode ends, rewards, dones. DISABLED: over the whole
    rollout. SAME_STEP: up to the first step where every env ends at once (the time limit):
    there TorchRL 0.14 calls ``reset()`` on the vector env again (``_reset`` all True),
    which starts the next episodes afresh instead of keeping the autoreset ones, so the
    streams part (each is still a valid episode)."""
    env_id = IDS[0]
    td = seeded_rollout(lambda: vector_env(env_id, mode), 5, 2 * EPISODE)
    ref = gymnasium_loop(env_id, mode, 5, td["action"])
    done = td["next", "done"].squeeze(-1)
    assert torch.equal(done, ref["done"]) or mode == AutoresetMode.SAME_STEP
    t = td.batch_size[1]
    if mode == AutoresetMode.SAME_STEP:
        t = int(done.all(0).nonzero()[0]) + 1
    for ours, theirs in (
        (td["observation"], ref["obs"]),
        (td["next", "observation"], ref["next"]),
        (td["next", "reward"].squeeze(-1), ref["reward"].float()),
        (done, ref["done"]),
    ):
        assert torch.equal(ours[:, :t], theirs[:, :t])


def test_vector_env_next_step_autoreset_is_refused_by_torchrl():
    """TorchRL 0.14's GymWrapper accepts SAME_STEP and DISABLED only (the native vector env's
    default is NEXT_STEP): pass ``autoreset_mode`` explicitly."""
    venv = gym.make_vec(IDS[0], 2, vectorization_mode="vector_entry_point")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    with pytest.raises(RuntimeError, match="SAME_STEP or DISABLED"):
        GymWrapper(venv)
    venv.close()


# --------------------------------------------------------------------------- team env
LEARNED = {"pursuers": ["pursuer"], "evaders": ["evader"], "both": ["pursuer", "evader"]}


def team_env(learned: str, **kwargs):
    # Pursuers stay in the game until the episode ends; evaders leave when captured.
    return PettingZooWrapper(
        env=team_pursuit_v0.parallel_env(learned=learned, **kwargs),
        use_mask=learned != "pursuers",
        return_state=True,
    )


@pytest.mark.parametrize("learned", list(LEARNED))
def test_team_env_through_pettingzoowrapper(learned):
    env = team_env(learned)
    assert sorted(env.group_map) == sorted(LEARNED[learned])
    check_env_specs(env)
    env.close()
    steps = 2 * EPISODE + 50  # past the team task's time limit (200) once
    a, b, c = (seeded_rollout(lambda: team_env(learned), s, steps) for s in (3, 3, 4))
    assert_same(a, b)
    group = LEARNED[learned][0]
    assert not torch.equal(a["next", group, "observation"], c["next", group, "observation"])
    td = a
    assert ("next", "state") in td.keys(True)
    for group in LEARNED[learned]:
        for key in TEAM_INFO:
            assert (group, "info", key) in td.keys(True), key
            assert ("next", group, "info", key) in td.keys(True), key
        if learned != "pursuers":
            assert ("next", group, "mask") in td.keys(True)
    assert td["next", "done"].any()


@pytest.mark.parametrize("module", ["pursuit_v0", "evasion_v0"])
def test_one_agent_pettingzoo_forms_through_pettingzoowrapper(module):
    """Pursuit and Evasion's PettingZoo forms (one learned agent) in TorchRL's multi-agent
    wrapper: one group, the single env's infos, deterministic under a seed."""
    import importlib

    parallel_env = importlib.import_module(f"steer_env.envs.{module}").parallel_env

    def make():
        return PettingZooWrapper(env=parallel_env(), return_state=True)

    env = make()
    group = parallel_env().possible_agents[0].split("_")[0]
    assert list(env.group_map) == [group]
    check_env_specs(env)
    env.close()
    a, b, c = (seeded_rollout(make, s, 2 * EPISODE + 10) for s in (3, 3, 4))
    assert_same(a, b)
    assert not torch.equal(a["next", group, "observation"], c["next", group, "observation"])
    for key in SINGLE_INFO:
        assert ("next", group, "info", key) in a.keys(True), key
    assert a["next", "done"].any()


# seeds where a capture happens with random actions (random pursuers rarely capture)
@pytest.mark.parametrize("learned,seed", [("evaders", 0), ("both", 3)])
def test_team_env_with_an_evader_leaving_before_the_end(learned, seed):
    """Two evaders: one is captured, the other runs on. PettingZooWrapper still sends the
    departed evader an action (the env ignores it); its mask goes False while the episode
    goes on (``done_on_any=False``: the env is done when every agent is)."""

    def make():
        return PettingZooWrapper(
            env=team_pursuit_v0.parallel_env(learned=learned, n_evaders=2),
            use_mask=True,
            done_on_any=False,
        )

    env = make()
    check_env_specs(env)
    env.close()
    a, b = (seeded_rollout(make, seed, 4 * EPISODE) for _ in range(2))
    assert_same(a, b)
    mask = a["next", "evader", "mask"]  # (T, 2)
    done = a["next", "done"].squeeze(-1)
    one_left = (mask.sum(-1) == 1) & ~done  # an evader gone, the episode still running
    assert one_left.any()
    t = int(one_left.nonzero()[0])
    gone = int((~mask[t]).nonzero()[0])
    assert a["next", "evader", "done"][t, gone].item()
    assert a["next", "evader", "info", "evaders_left"][t, 1 - gone].item() == 1


# --------------------------------------------------------------------------- PPO
def trainable(*modules: nn.Module) -> dict[str, torch.Tensor]:
    return {
        f"{i}.{name}": p.detach().clone()
        for i, m in enumerate(modules)
        for name, p in m.named_parameters()
    }


def ppo_iterations(env, actor, critic, loss, iterations: int, frames: int) -> list[float]:
    """``iterations`` collections of ``frames`` frames, 2 epochs of minibatches each."""
    optim = torch.optim.Adam(loss.parameters(), lr=3e-3)
    collector = Collector(env, actor, frames_per_batch=frames, total_frames=iterations * frames)
    totals = []
    for data in collector:
        with torch.no_grad():
            loss.value_estimator(data)
        flat = data.reshape(-1)
        for _ in range(2):
            for batch in flat.split(frames // 4):
                out = loss(batch)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                totals.append(float(total))
                optim.zero_grad()
                total.backward()
                optim.step()
        collector.update_policy_weights_()
    collector.shutdown()
    return totals


def test_ppo_on_the_single_env():
    torch.manual_seed(0)
    env = GymEnv(IDS[0])
    env.set_seed(0)
    obs_dim = env.observation_spec["observation"].shape[-1]
    act_dim = env.action_spec.shape[-1]
    actor = ProbabilisticActor(
        TensorDictModule(
            nn.Sequential(MLP(obs_dim, 2 * act_dim, num_cells=[32]), NormalParamExtractor()),
            in_keys=["observation"],
            out_keys=["loc", "scale"],
        ),
        in_keys=["loc", "scale"],
        spec=env.action_spec,
        distribution_class=TanhNormal,
        distribution_kwargs={"low": -1.0, "high": 1.0},
        return_log_prob=True,
    )
    critic = ValueOperator(MLP(obs_dim, 1, num_cells=[32]), in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic, entropy_coeff=1e-3)
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    assert isinstance(loss.value_estimator, GAE)
    before = trainable(actor, critic)
    totals = ppo_iterations(env, actor, critic, loss, iterations=3, frames=256)
    assert len(totals) == 3 * 2 * 4
    assert all(torch.isfinite(torch.tensor(totals)))
    after = trainable(actor, critic)
    assert any(not torch.equal(before[k], after[k]) for k in before)
    env.close()


def test_ppo_on_the_team_env_pursuers():
    """MAPPO-style: one policy shared by the 3 pursuers, a centralised critic."""
    torch.manual_seed(0)
    env = team_env("pursuers")
    env.set_seed(0)
    group = "pursuer"
    n_agents = len(env.group_map[group])
    obs_dim = env.observation_spec[group, "observation"].shape[-1]
    act_spec = env.full_action_spec[group, "action"]
    actor = ProbabilisticActor(
        TensorDictModule(
            nn.Sequential(
                MultiAgentMLP(
                    obs_dim, 2 * act_spec.shape[-1], n_agents,
                    centralized=False, share_params=True, depth=1, num_cells=32,
                ),
                NormalParamExtractor(),
            ),
            in_keys=[(group, "observation")],
            out_keys=[(group, "loc"), (group, "scale")],
        ),
        in_keys=[(group, "loc"), (group, "scale")],
        out_keys=[(group, "action")],
        spec=act_spec,
        distribution_class=TanhNormal,
        distribution_kwargs={"low": -1.0, "high": 1.0},
        return_log_prob=True,
    )  # fmt: skip
    critic = TensorDictModule(
        MultiAgentMLP(obs_dim, 1, n_agents, centralized=True, share_params=True, depth=1,
                      num_cells=32),
        in_keys=[(group, "observation")],
        out_keys=[(group, "state_value")],
    )  # fmt: skip
    loss = ClipPPOLoss(actor, critic, entropy_coeff=1e-3)
    loss.set_keys(
        reward=(group, "reward"),
        action=(group, "action"),
        value=(group, "state_value"),
        done=(group, "done"),
        terminated=(group, "terminated"),
    )
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    before = trainable(actor, critic)
    totals = ppo_iterations(env, actor, critic, loss, iterations=2, frames=256)
    assert len(totals) == 2 * 2 * 4
    assert all(torch.isfinite(torch.tensor(totals)))
    after = trainable(actor, critic)
    assert any(not torch.equal(before[k], after[k]) for k in before)
    env.close()


# --------------------------------------------------------------------------- docs
DOC = ROOT / "docs" / "torchrl.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_docs_page_python_blocks_run():
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC.name} block {i}", "exec"), {"__name__": f"doc_block_{i}"})
