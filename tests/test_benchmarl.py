"""The team pursuit task on BenchMARL (``steer_env.integrations.benchmarl``), real runs on CPU.

* the task's specs match the env (groups, observation, action and state shapes, infos,
  ``max_steps``), its YAML config loads and is checked, seeds reach the envs;
* a captured evader leaves the game and the TorchRL env goes on (mask, no error); what
  the task logs about captures;
* tiny real experiments: MAPPO (learned pursuers), IPPO (both roles learned), MASAC: each
  collects its frames, logs a finite mean return and changes the policy's weights;
* ``docs/benchmarl.md``'s script runs as written, with its budget lines shortened.

Skipped without BenchMARL (``pip install "steer-env[benchmarl]"``: its own venv, as
``.ci/run`` builds). About a minute on 2 cores once the env's step is compiled.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("benchmarl")
torch = pytest.importorskip("torch")

from benchmarl.algorithms import IppoConfig, MappoConfig, MasacConfig  # noqa: E402
from benchmarl.experiment import Callback, Experiment, ExperimentConfig  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

from steer_env.envs import team_pursuit_v0  # noqa: E402
from steer_env.integrations.benchmarl import (  # noqa: E402
    TeamPursuitClass,
    TeamPursuitTask,
    TeamPursuitTaskConfig,
    config_path,
)
from steer_env.tasks.team_pursuit import TeamConfig  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarl.md"


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """BenchMARL's MLPs are tiny: on 2 busy cores two OpenMP threads make each linear layer
    about 20 times slower than one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def quiet_warnings():
    # PettingZoo version note from TorchRL; BenchMARL's "no episode ended" is expected too.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def make_task(**config) -> TeamPursuitClass:
    task = TeamPursuitTask.TEAM_PURSUIT.get_from_yaml()
    task.config.update(config)
    return task


def make_env(task: TeamPursuitClass, seed: int | None = 0):
    return task.get_env_fun(num_envs=1, continuous_actions=True, seed=seed, device="cpu")()


# ----------------------------------------------------------------------------- config
def test_yaml_config_is_the_env_defaults():
    task = TeamPursuitTask.TEAM_PURSUIT.get_from_yaml()
    assert isinstance(task, TeamPursuitClass)
    assert task.name == "TEAM_PURSUIT"
    assert task.env_name() == "steer_env"
    assert config_path().is_file()
    defaults = TeamConfig()
    assert set(task.config) == set(TeamPursuitTaskConfig.__dataclass_fields__)
    for key, value in task.config.items():
        assert getattr(defaults, key) == value, key
    assert TeamPursuitTask.TEAM_PURSUIT.get_task() == task  # get_task() loads the YAML too
    assert task.supports_continuous_actions() and not task.supports_discrete_actions()


def test_yaml_config_is_checked(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("n_pursuers: 2\nn_pursuer: 3\n")
    with pytest.raises(TypeError, match="n_pursuer"):
        TeamPursuitTask.TEAM_PURSUIT.get_from_yaml(str(bad))
    good = tmp_path / "good.yaml"
    good.write_text("n_pursuers: 2\nlearned: both\ntime_limit: 50\n")
    task = TeamPursuitTask.TEAM_PURSUIT.get_from_yaml(str(good))
    assert (task.config["n_pursuers"], task.config["learned"]) == (2, "both")
    assert task.config["n_evaders"] == 1  # the rest from the defaults
    env = make_env(task)
    assert task.max_steps(env) == 50


def test_bad_config_value_is_the_envs_error():
    task = make_task(n_pursuers=0)
    with pytest.raises(ValueError, match="n_pursuers"):
        make_env(task)


# ------------------------------------------------------------------------------ specs
@pytest.mark.parametrize("learned", ["pursuers", "evaders", "both"])
def test_specs_match_the_env(learned):
    n_pursuers, n_evaders = 3, 2
    task = make_task(learned=learned, n_pursuers=n_pursuers, n_evaders=n_evaders, time_limit=40)
    env = make_env(task)
    raw = team_pursuit_v0.parallel_env(learned=learned, n_pursuers=n_pursuers, n_evaders=n_evaders)
    raw_obs, raw_infos = raw.reset(seed=0)  # what the wrapper did when it was built

    expected = {}
    if learned in ("pursuers", "both"):
        expected["pursuers"] = [f"pursuer_{i}" for i in range(n_pursuers)]
    if learned in ("evaders", "both"):
        expected["evaders"] = [f"evader_{j}" for j in range(n_evaders)]
    assert task.group_map(env) == expected
    assert task.max_steps(env) == 40

    obs_spec = task.observation_spec(env)
    action_spec = task.action_spec(env)
    info_spec = task.info_spec(env)
    for group, agents in expected.items():
        n = len(agents)
        space = raw.observation_space(agents[0])
        assert set(obs_spec[group].keys()) == {"observation"}
        assert obs_spec[group, "observation"].shape == (n, *space.shape)
        action = action_spec[group, "action"]
        assert action.shape == (n, 2)
        assert torch.all(action.space.low == -1) and torch.all(action.space.high == 1)
        infos = info_spec[group, "info"]
        assert set(infos.keys()) == set(raw_infos[agents[0]])
        for key, value in raw_infos[agents[0]].items():
            assert infos[key].shape == (n, *np.shape(value)), key
    assert task.action_mask_spec(env) is None

    state = task.state_spec(env)["state"]
    assert state.shape == raw.state().shape == ((n_pursuers + n_evaders) * 5,)
    if hasattr(raw, "state_space"):
        assert state.shape == raw.state_space.shape

    td = env.reset()  # the seeded stream's second episode
    raw_obs, _ = raw.reset()
    assert td["state"].shape == state.shape
    for group, agents in expected.items():
        assert td[group, "mask"].all()
        for i, agent in enumerate(agents):
            assert np.allclose(td[group, "observation"][i].numpy(), raw_obs[agent])
    assert torch.equal(td["state"], torch.as_tensor(raw.state()))


def test_seeds_reach_the_envs():
    """Env ``i`` of one factory is reset with ``seed + i`` (distinct episodes in a
    SerialEnv); the same seed gives the same episode."""
    task = make_task()
    make = task.get_env_fun(num_envs=2, continuous_actions=True, seed=7, device="cpu")
    first, second = make().reset(), make().reset()
    again = make_env(task, seed=7).reset()
    assert torch.equal(first["state"], again["state"])
    assert not torch.equal(first["state"], second["state"])
    raw = team_pursuit_v0.parallel_env()
    raw.reset(seed=8)  # as the wrapper does when it is built; reset() is the next episode
    raw.reset()
    assert torch.equal(second["state"], torch.as_tensor(raw.state()))


def test_a_captured_evader_leaves_and_the_episode_goes_on():
    """Learned evaders that stand still are caught one by one by the scripted pursuers:
    the first one's mask goes False while the episode continues (TorchRL keeps sending its
    action; the task drops it), and the episode ends when both are caught."""
    task = make_task(learned="evaders", n_evaders=2, time_limit=80)
    env = make_env(task, seed=0)

    def stand_still(td):
        return td.update(env.full_action_spec.zero())

    rollout = env.rollout(80, policy=stand_still, break_when_any_done=True)
    mask = rollout["next", "evaders", "mask"]  # (T, 2)
    done = rollout["next", "done"].squeeze(-1)
    assert done[-1] and not done[:-1].any()  # both caught before the time limit
    left = (~mask).any(dim=1).nonzero()
    assert len(left) >= 2
    first = int(left[0])
    assert first < len(done) - 1, "expected one evader caught before the other"
    gone = int((~mask[first]).nonzero()[0])
    assert rollout["next", "evaders", "reward"][first, gone, 0] < 0  # its capture penalty
    after = rollout["next", "evaders"][first + 1 :]
    assert not after["mask"][:, gone].any()
    assert after["done"][:, gone].all()
    assert torch.all(after["observation"][:, gone] == 0)
    assert torch.all(after["reward"][:, gone] == 0)
    info = rollout["next", "evaders", "info"]
    assert int(info["evaders_left"][-1].min()) == 0
    # What the task logs per batch, over the episodes that ended in it (one here).
    assert task.log_info(rollout) == {
        "team_pursuit/evaders_captured": 2.0,
        "team_pursuit/all_captured": 1.0,
    }
    assert task.log_info(rollout[:-1]) == {}  # no episode ended


def test_log_info_counts_an_escape():
    """Pursuers that stand still capture nobody in 20 steps."""
    task = make_task(learned="pursuers", n_evaders=1, time_limit=20)
    env = make_env(task, seed=0)
    rollout = env.rollout(20, policy=lambda td: td.update(env.full_action_spec.zero()))
    assert rollout["next", "done"][-1].all()
    assert task.log_info(rollout) == {
        "team_pursuit/evaders_captured": 0.0,
        "team_pursuit/all_captured": 0.0,
    }


# -------------------------------------------------------------------------- experiments
def tiny_config(tmp_path: Path, frames_per_batch: int = 120, iterations: int = 2):
    config = ExperimentConfig.get_from_yaml()
    config.loggers = []
    config.create_json = False
    config.evaluation = False
    config.render = False
    config.checkpoint_interval = 0
    config.checkpoint_at_end = False
    config.save_folder = str(tmp_path)
    config.max_n_frames = frames_per_batch * iterations
    config.on_policy_collected_frames_per_batch = frames_per_batch
    config.on_policy_n_envs_per_worker = 2
    config.on_policy_minibatch_size = frames_per_batch // 2
    config.on_policy_n_minibatch_iters = 2
    config.off_policy_collected_frames_per_batch = frames_per_batch
    config.off_policy_n_envs_per_worker = 2
    config.off_policy_n_optimizer_steps = 4
    config.off_policy_train_batch_size = 32
    config.off_policy_memory_size = 10 * frames_per_batch
    return config


class Batches(Callback):
    """Records what each collected batch held."""

    def __init__(self):
        super().__init__()
        self.frames = []
        self.groups = []
        self.reward_finite = []
        self.first_states = None

    def on_batch_collected(self, batch):
        self.frames.append(batch.numel())
        groups = [g for g in ("pursuers", "evaders") if g in batch]
        self.groups.append(groups)
        self.reward_finite.append(
            all(torch.isfinite(batch["next", g, "reward"]).all() for g in groups)
        )
        assert "state" in batch
        if self.first_states is None:  # (n_envs, T, state): each env's first state
            self.first_states = batch["state"][:, 0].clone()


def policy_weights(experiment) -> dict[str, list[torch.Tensor]]:
    return {
        group: [p.detach().clone() for p in policy.parameters()]
        for group, policy in experiment.group_policies.items()
    }


@pytest.mark.parametrize(
    ("algorithm", "learned", "groups"),
    [
        (MappoConfig, "pursuers", ["pursuers"]),
        (IppoConfig, "both", ["pursuers", "evaders"]),
        (MasacConfig, "pursuers", ["pursuers"]),
    ],
    ids=["mappo-pursuers", "ippo-both", "masac-pursuers"],
)
def test_experiment_trains(tmp_path, algorithm, learned, groups):
    # 30-step episodes: each of the 2 envs ends 2 episodes per 120-frame batch.
    task = make_task(learned=learned, n_pursuers=2, n_evaders=1, time_limit=30)
    config = tiny_config(tmp_path)
    batches = Batches()
    experiment = Experiment(
        task=task,
        algorithm_config=algorithm.get_from_yaml(),
        model_config=MlpConfig.get_from_yaml(),
        critic_model_config=MlpConfig.get_from_yaml(),
        seed=0,
        config=config,
        callbacks=[batches],
    )
    assert sorted(experiment.group_map) == sorted(groups)
    before = policy_weights(experiment)
    experiment.run()

    assert experiment.n_iters_performed == 2
    assert experiment.total_frames == config.max_n_frames == sum(batches.frames)
    assert batches.frames == [120, 120]
    assert all(sorted(g) == sorted(groups) for g in batches.groups)
    assert all(batches.reward_finite)
    assert math.isfinite(experiment.mean_return)
    first = batches.first_states
    assert first.shape[0] == 2 and not torch.equal(first[0], first[1])  # seed, seed + 1
    after = policy_weights(experiment)
    assert sorted(after) == sorted(groups)
    for group in groups:  # every learned group's policy was trained
        assert len(after[group]) == len(before[group]) > 0
        pairs = zip(after[group], before[group], strict=True)
        assert any(not torch.equal(a, b) for a, b in pairs), f"{group}: weights unchanged"
        assert all(torch.isfinite(a).all() for a in after[group])


# ------------------------------------------------------------------------------- docs
def doc_code() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


#: The doc script's budget lines and what the test runs instead.
DOC_BUDGET = {
    "time_limit=200)": "time_limit=30)",
    "config.max_n_frames = 3_000_000": "config.max_n_frames = 240",
    "config.on_policy_collected_frames_per_batch = 6_000": (
        "config.on_policy_collected_frames_per_batch = 120"
    ),
    "config.on_policy_n_envs_per_worker = 10": "config.on_policy_n_envs_per_worker = 2",
    "config.on_policy_minibatch_size = 400": "config.on_policy_minibatch_size = 60",
    "config.on_policy_n_minibatch_iters = 45": "config.on_policy_n_minibatch_iters = 2",
    "config.evaluation_interval = 120_000": "config.evaluation_interval = 120",
    "config.evaluation_episodes = 10": "config.evaluation_episodes = 1",
}


def test_doc_script_runs(tmp_path, monkeypatch, capsys):
    code = doc_code()
    for line, short in DOC_BUDGET.items():
        assert code.count(line) == 1, line
        code = code.replace(line, short)
    monkeypatch.chdir(tmp_path)  # the script's csv logs go to the current folder
    namespace: dict = {"__name__": "benchmarl_doc"}
    exec(compile(code, f"{DOC.name}[python block]", "exec"), namespace)

    experiment = namespace["experiment"]
    assert experiment.total_frames == 240
    assert math.isfinite(experiment.mean_return)
    assert "240 frames, mean return" in capsys.readouterr().out
    runs = list(tmp_path.glob("mappo_team_pursuit_mlp_*"))
    assert len(runs) == 1
    scalars = runs[0] / runs[0].name / "scalars"  # BenchMARL's csv logger

    def logged(name: str) -> list[float]:
        rows = (scalars / f"{name}.csv").read_text().split()
        return [float(row.split(",")[1]) for row in rows]

    assert len(logged("collection_reward_episode_reward_mean")) == 2  # one per iteration
    assert all(math.isfinite(r) for r in logged("collection_reward_episode_reward_mean"))
    lengths = logged("eval_reward_episode_len_mean")  # evaluations at frames 0 and 240
    assert lengths and all(0 < n <= 30 for n in lengths)
    assert logged("collection_pursuers_info_evaders_left")
    assert all(0 <= r <= 1 for r in logged("team_pursuit_all_captured"))  # the task's log_info
