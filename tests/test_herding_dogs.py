"""Several learned dogs sharing one policy through the generic commands: ``train.py`` picks
the shared-policy setup from the configuration (``--set n_dogs=2``), ``agents.compare``
plays every side on paired seeds in the PettingZoo batch, and the mistakes that remain are
one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation import shared
from agents.evaluation.compare import play_agents
from agents.evaluation.policies import LearnedPolicy, read_model_metadata
from steer_env.rules.herding import OUTCOME
from steer_env.tasks.herding import HERDING

ROOT = Path(__file__).resolve().parents[1]
ENV = "steer_env/Herding-v0"
#: A small flock near a wide pen: the scripted dogs pen some episodes and not others.
SMALL = {
    "n_dogs": 2,
    "n_sheep": 5,
    "time_limit": 150,
    "pen_radius": 15.0,
    "flock_pen_distance": 10.0,
    "start_spread": 15.0,
}


class Rounded(LearnedPolicy):
    """A learned policy whose actions are rounded to 0.001. Torch's matrix products of a
    batch of rows and of a single row differ in float32's last bits (a few 1e-9 here), and
    a flock amplifies such a difference into another episode; rounded, the network's
    actions are the same whatever the batch, so the episodes can be compared exactly."""

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        action, state = super().predict(observation, state, episode_start, deterministic)
        return np.round(action, 3), state


def _learned(config: dict) -> LearnedPolicy:
    """An untrained, seeded PPO network for the dogs of ``config`` (a real SB3 model)."""
    from stable_baselines3 import PPO

    from steer_env.envs.sb3 import TeamSB3VecEnv

    venv = TeamSB3VecEnv(shared.team_batch(ENV, 1, config), role="dog")
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=3)
    return Rounded(model, ENV, Path("untrained.zip"), {"algo": "ppo", "config": config})


def _one_by_one(policy, config: dict, seed: int) -> tuple:
    """One episode of ``herding_v0.parallel_env`` from ``seed``, ``policy`` acting for every
    dog from its own observation: (success, pen step, steps, outcomes)."""
    from steer_env.envs import herding_v0

    env = herding_v0.parallel_env(**config)
    obs, infos = env.reset(seed=seed)
    steps = 0
    while env.agents:
        actions = {a: policy.predict(obs[a], deterministic=True)[0] for a in env.agents}
        obs, _, _, _, infos = env.step(actions)
        steps += 1
    info = infos["dog_0"]
    return info["is_success"], info["pen_step"], steps, {key: info[key] for key in OUTCOME}


def test_shared_policy_comparison_equals_episodes_played_one_by_one():
    """Every side of the several-dog comparison (the learned network on both dogs, each
    scripted team, and a single-dog network alone) plays, in the native batch, the episodes
    that ``herding_v0.parallel_env`` plays from the same seeds with the same policies."""
    pytest.importorskip("pettingzoo")
    episodes, seed = 8, 1000
    learned = _learned(SMALL)
    single_config = shared.single_config(ENV, SMALL)
    assert single_config == {**SMALL, "n_dogs": 1}
    single = _learned(single_config)
    results, labels = play_agents(ENV, learned, episodes, seed, SMALL, single=single)
    assert list(results) == ["learned", "strombom", "flanks", shared.SINGLE]
    assert labels == {
        "learned": "learned dogs (PPO)",
        "strombom": "strombom dogs",
        "flanks": "flanks dogs",
        shared.SINGLE: "single learned dog (PPO)",
    }
    cfg = HERDING.config(**SMALL)
    policies = {
        "learned": (learned, SMALL),
        "strombom": (HERDING.scripted_policy("strombom", cfg), SMALL),
        "flanks": (HERDING.scripted_policy("flanks", cfg), SMALL),
        shared.SINGLE: (single, single_config),
    }
    for name, (policy, config) in policies.items():
        r = results[name]
        for k in range(episodes):
            success, pen_step, steps, outcomes = _one_by_one(policy, config, seed + k)
            assert (r.success[k], r.capture_step[k], r.length[k]) == (success, pen_step, steps), (
                name,
                k,
            )
            assert {key: r.outcomes[key][k] for key in OUTCOME} == outcomes, (name, k)
    # The flock is penned in some episodes and not in others: the episodes are compared.
    scripted = np.concatenate([results[n].success for n in ("strombom", "flanks")])
    assert scripted.any() and not scripted.all()


def test_the_agent_count_decides_the_form_played():
    assert not shared.several_agents(ENV, {"n_sheep": 50})
    assert shared.several_agents(ENV, {"n_dogs": 2})
    assert shared.learned_agents(ENV, {"n_dogs": 3}) == 3
    assert not shared.several_agents("pursuit", {})
    assert not shared.several_agents("team_pursuit", {})  # the cross-play layout's own
    with pytest.raises(ValueError, match="no configuration value for its number of agents"):
        shared.single_config("pursuit", {})


# --------------------------------------------------------------------------- commands
def _run(*args, timeout=300):
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    env.update(MPLBACKEND="Agg", PYGAME_HIDE_SUPPORT_PROMPT="1")
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


def _sets(config: dict) -> list[str]:
    return [arg for key, value in config.items() for arg in ("--set", f"{key}={value}")]


TRAIN = [
    "train.py", "--env", "herding", "--timesteps", "512", "--n-envs", "2",
    "--episodes", "6", "--periodic-eval-episodes", "2", "--no-progress",
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.training
def test_train_shares_one_policy_between_the_dogs_and_compare_plays_it(tmp_path):
    """``train.py --set n_dogs=2`` trains one policy on one SB3 slot per dog, records the
    configuration, and its final comparison and ``agents.compare`` play it on both dogs
    against the scripted teams and a single-dog model."""
    out = tmp_path / "runs"
    config = {**SMALL, "time_limit": 30}
    r = _run(*TRAIN, "--out", str(out), "--name", "two", *_sets(config))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "(2 envs x 2 shared-policy agents, cpu)" in r.stdout
    run = out / "two"
    meta = read_model_metadata(run / "model.zip")
    assert meta["config"] == config
    assert (meta["role"], meta["agents"], meta["obs_shape"]) == ("dog", 2, [54])
    final = json.loads((run / "comparison.json").read_text())
    assert list(final["agents"]) == ["learned", "strombom", "flanks"]
    assert final["agents_per_side"] == 2 and final["episodes"] == 6
    assert final["agents"]["learned"]["label"] == "learned dogs (PPO)"
    assert (run / "episode.gif").is_file()

    single_config = {**config, "n_dogs": 1}
    r = _run(*TRAIN, "--out", str(out), "--name", "one", "--no-gif", *_sets(single_config))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "x 2 shared-policy" not in r.stdout
    assert read_model_metadata(out / "one" / "model.zip")["obs_shape"] == [49]

    r = _run(
        "-m", "agents.compare", "--model", str(run / "model.zip"), "--single-model",
        str(out / "one" / "model.zip"), "--episodes", "5", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert summary["config"] == config
    assert list(summary["agents"]) == ["learned", "strombom", "flanks", "single"]
    assert set(summary["paired_vs_learned"]) == {"strombom", "flanks", "single"}
    goal = summary["goal"]
    assert set(goal["per_target"]) == {"strombom", "single"}
    assert goal["met"] == all(t["met"] for t in goal["per_target"].values())
    assert "single learned dog (PPO)" in r.stdout

    # agents.sweep plays the same episodes with the model's configuration, row by row
    r = _run(
        "-m", "agents.sweep", "--model", str(run / "model.zip"), "--vary", "time_limit=30",
        "--episodes", "5", "--out", str(tmp_path / "s"),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = json.loads((tmp_path / "s" / "sweep.json").read_text())["rows"]
    assert row["config"] == config and list(row["agents"]) == ["learned", "strombom", "flanks"]
    for name, stat in row["agents"].items():
        assert stat["success_rate"] == summary["agents"][name]["success_rate"], name


#: Command lines (split at spaces) that play several dogs where they cannot, their message
#: and exit status.
MISTAKES = [
    (
        "-m agents.render --env herding --agent strombom --set n_dogs=2 --human",
        "drop --human",
        2,
    ),
    (
        "-m agents.render --env herding --agent driver --set n_dogs=2",
        "unknown agent 'driver' for several dogs: use learned, strombom, flanks",
        2,
    ),
    (
        "-m agents.compare --env herding --no-learned --single-model x.zip",
        "--single-model is the target of several learned agents",
        2,
    ),
    (
        "-m agents.compare --env team_pursuit --no-learned --single-model x.zip",
        "--single-model is for several learned agents of one role",
        2,
    ),
    (
        "-m agents.compare --env herding --model agents/models/herding_ppo.zip --set n_dogs=2",
        "expects observations of shape (49,), but steer_env/Herding-v0 gives (54,)",
        1,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("command,text,code", MISTAKES)
def test_what_several_dogs_cannot_do_is_one_line(tmp_path, command, text, code):
    args = command.split()
    out = tmp_path / ("out.gif" if "agents.render" in args else "out")
    r = _run(*args, "--out", str(out))
    assert r.returncode == code, (r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert not out.exists()
