"""The ``team`` section of ``python -m benchmarks``: the team pursuit task against its peers.

Three comparisons, each ours and the peer measured in the same process, repeat by repeat
interleaved (ours, peer; then peer, ours; ...) so that load on a shared machine hits both
alike, with uniform random actions in [-1, 1] per agent drawn before the timed loops:

* native batch (``team_pursuit_v0.vector_env(E)``, one compiled call per step) vs VMAS
  ``simple_tag`` on the CPU (batched torch) at ``E`` envs. Both have 3 pursuers
  (adversaries) and 1 evader (good agent). Ours: all 4 vehicles stepped (the evader
  scripted: evade + flow field + wall avoidance), walled 25 m arena, no obstacles, capture
  test, rewards, observations, autoreset, one physics step per env-step. VMAS: all 4
  agents driven by the actions, 2 landmark obstacles, a bounded square, collision
  physics, 10 physics sub-steps per env-step, never done (no time limit by default).
* the ``ParallelEnv`` (one env, dicts) vs MPE2 ``simple_tag_v3.parallel_env(
  continuous_actions=True)`` (3 adversaries, 1 good agent, 2 obstacles, one physics step
  per env-step). Ours resets when an episode ends (200 steps or a capture); MPE2 runs
  with ``max_cycles=10**9`` (never resets), as in the ``peers`` section.
* SB3 PPO ``learn()`` on the pursuers with one shared policy: the native adapter
  (``make_team_sb3_vec_env(E)``: ``3 E`` slots) vs the route users take today,
  SuperSuit's ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env()), E,
  num_cpus=0, base_class="stable_baselines3")`` (also ``3 E`` slots), both under
  ``VecMonitor``, identical PPO hyperparameters and timesteps. One SB3 timestep is one
  slot's step, so timesteps/s = learned agent-steps/s. SuperSuit needs no
  ``black_death`` here: pursuers never leave before their episode ends (checked: its
  ``MarkovVectorEnv`` asserts that every agent is still in the game after each step).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.common import Missing, Row, steps_for

SECTION = "team"
PEER_HINT = 'not installed (pip install ".[bench]")'
TRAIN_HINT = 'not installed (pip install "steer-env[train]")'
AGENTS = 4  # vehicles per env-step: 3 pursuers + 1 evader (ours, MPE2, VMAS)
ROW_BATCH = "team_pursuit native batch (vector_env)"
ROW_VMAS = "VMAS simple_tag (CPU, torch)"
ROW_PARALLEL = "team_pursuit_v0 parallel_env"
ROW_MPE2 = "MPE2 simple_tag_v3 parallel env"
ROW_PPO_NATIVE = "PPO pursuers, native adapter (make_team_sb3_vec_env)"
ROW_PPO_SUPERSUIT = "PPO pursuers, SuperSuit (pettingzoo_env_to_vec_env + concat_vec_envs)"


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@dataclass
class Prepared:
    """A measurement set up and calibrated: ``sample(r)`` runs repeat ``r`` once and
    returns its figure; :meth:`row` wraps the samples."""

    name: str
    size: int | None
    unit: str
    sample: Callable[[int], float]
    agents: int | None = None
    substeps: int | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    close: Callable[[], None] | None = None
    #: what the repeats found that belongs in the note (called once, after them)
    summary: Callable[[], str] | None = None

    def row(self, samples: list[float]) -> Row:
        note = self.note if self.summary is None else f"{self.summary()}; {self.note}"
        return Row(
            SECTION,
            self.name,
            self.size,
            self.unit,
            samples,
            agents=self.agents,
            substeps=self.substeps,
            note=note,
            extra=self.extra,
        )


def interleave(pair: list[Prepared | Missing], repeats: int) -> list[Row | Missing]:
    """Run the prepared measurements of ``pair`` repeat by repeat, alternating which goes
    first (ABBA...), so slow spells of a shared machine fall on both."""
    ready = [p for p in pair if isinstance(p, Prepared)]
    samples: dict[int, list[float]] = {id(p): [] for p in ready}
    for r in range(repeats):
        for p in ready if r % 2 == 0 else ready[::-1]:
            samples[id(p)].append(p.sample(r))
    out: list[Row | Missing] = []
    for p in pair:
        if isinstance(p, Prepared):
            out.append(p.row(samples[id(p)]))
            if p.close is not None:
                p.close()
        else:
            out.append(p)
    return out


def _uniform(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def _loop(step: Callable[[Any], Any], actions: Any) -> float:
    t0 = time.perf_counter()
    for a in actions:
        step(a)
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- native batch
def prepare_batch(num_envs: int, target_s: float) -> Prepared:
    """``team_pursuit_v0.vector_env(num_envs)``: actions ``(E, 3, 2)``, NEXT_STEP autoreset
    inside the timed loop."""
    from steer_env.envs import team_pursuit_v0

    venv = team_pursuit_v0.vector_env(num_envs)
    venv.reset(seed=0)
    k_agents = venv.n_agents
    rng = np.random.default_rng(0)
    _loop(venv.step, _uniform(rng, (2, num_envs, k_agents, 2)))  # load the kernel
    per_step = _loop(venv.step, _uniform(rng, (3, num_envs, k_agents, 2))) / 3
    k = steps_for(per_step, target_s, 3, 20_000)
    actions = _uniform(rng, (k, num_envs, k_agents, 2))
    return Prepared(
        ROW_BATCH,
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / _loop(venv.step, actions),
        agents=AGENTS,
        substeps=1,
        note=f"{k} steps/repeat; 3 learned pursuers + 1 scripted evader, no obstacles",
        close=venv.close,
    )


def prepare_vmas(num_envs: int, target_s: float) -> Prepared | Missing:
    """VMAS ``simple_tag`` on the CPU with 3 adversaries, 1 good agent (its defaults)."""
    return prepare_vmas_scenario(
        "simple_tag", ROW_VMAS, num_envs, target_s, num_good_agents=1, num_adversaries=3
    )


def prepare_vmas_scenario(
    scenario: str, row: str, num_envs: int, target_s: float, **kwargs: Any
) -> Prepared | Missing:
    """VMAS ``scenario`` on the CPU (``kwargs`` to ``vmas.make_env``), ``num_envs`` envs,
    uniform actions in [-1, 1] drawn before the timed loop; the row counts its agents and
    its physics sub-steps (``world._substeps``)."""
    if not have("vmas"):
        return Missing(SECTION, row, num_envs, PEER_HINT)
    import torch
    import vmas

    env = vmas.make_env(
        scenario, num_envs=num_envs, device="cpu", continuous_actions=True, seed=0, **kwargs
    )
    env.reset()
    n_agents = len(env.agents)
    obstacles = len(env.world.landmarks)
    substeps = int(getattr(env.world, "_substeps", 1))
    gen = torch.Generator().manual_seed(0)

    def draw(k: int) -> list[list[torch.Tensor]]:
        return [
            [torch.rand(num_envs, 2, generator=gen) * 2.0 - 1.0 for _ in range(n_agents)]
            for _ in range(k)
        ]

    _loop(env.step, draw(1))
    per_step = _loop(env.step, draw(2)) / 2
    k = steps_for(per_step, target_s, 2, 20_000)
    actions = draw(k)
    return Prepared(
        row,
        num_envs,
        "env-steps/s",
        lambda r: k * num_envs / _loop(env.step, actions),
        agents=n_agents,
        substeps=substeps,
        note=f"{k} steps/repeat; {n_agents} agents, {obstacles} obstacles, torch threads "
        f"{torch.get_num_threads()}",
    )


# --------------------------------------------------------------------------- ParallelEnv
def _parallel_loop(env: Any) -> Callable[[list[dict[str, np.ndarray]]], float]:
    def run(actions: list[dict[str, np.ndarray]]) -> float:
        step, reset = env.step, env.reset
        t0 = time.perf_counter()
        for a in actions:
            step(a)
            if not env.agents:
                reset()
        return time.perf_counter() - t0

    return run


def _prepare_parallel(env: Any, name: str, target_s: float, note: str, seed: int = 0) -> Prepared:
    env.reset(seed=seed)
    spaces = {a: env.action_space(a) for a in env.possible_agents}
    rng = np.random.default_rng(seed)

    def draw(k: int) -> list[dict[str, np.ndarray]]:
        return [
            {a: rng.uniform(s.low, s.high).astype(s.dtype) for a, s in spaces.items()}
            for _ in range(k)
        ]

    run = _parallel_loop(env)
    run(draw(20))
    per_step = run(draw(100)) / 100
    k = steps_for(per_step, target_s, 50, 200_000)
    actions = draw(k)
    return Prepared(
        name,
        1,
        "env-steps/s",
        lambda r: k / run(actions),
        agents=AGENTS,
        substeps=1,
        note=f"{k} steps/repeat; {note}",
        close=env.close,
    )


def prepare_parallel(target_s: float) -> Prepared:
    from steer_env.envs import team_pursuit_v0

    return _prepare_parallel(
        team_pursuit_v0.parallel_env(),
        ROW_PARALLEL,
        target_s,
        "3 learned pursuers + 1 scripted evader; resets included",
    )


def prepare_mpe2(target_s: float) -> Prepared | Missing:
    if not have("mpe2"):
        return Missing(SECTION, ROW_MPE2, 1, PEER_HINT)
    from mpe2 import simple_tag_v3

    env = simple_tag_v3.parallel_env(
        num_good=1,
        num_adversaries=3,
        num_obstacles=2,
        continuous_actions=True,
        max_cycles=10**9,
    )
    return _prepare_parallel(env, ROW_MPE2, target_s, "4 agents, 2 obstacles, no resets")


# --------------------------------------------------------------------------- SB3 PPO
def _supersuit_vec_env(n_envs: int, seed: int) -> Any:
    import supersuit as ss

    from steer_env.envs import team_pursuit_v0

    venv = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(team_pursuit_v0.parallel_env()),
        n_envs,
        num_cpus=0,
        base_class="stable_baselines3",
    )
    # SuperSuit's SB3 wrapper has no working seed() (SB3's PPO(seed=...) calls it), so the
    # ConcatVecEnv underneath is seeded directly: env i gets seed + i; PPO's first reset()
    # then continues each env's stream.
    venv.venv.reset(seed=seed)
    return venv


def prepare_ppo(
    adapter: str, n_envs: int, timesteps: int, hyper: dict[str, Any]
) -> Prepared | Missing:
    """PPO ``learn(timesteps)`` on ``n_envs`` team envs (``3 n_envs`` pursuer slots);
    repeat ``r`` builds a fresh VecEnv and model seeded ``r``."""
    name = ROW_PPO_NATIVE if adapter == "native" else ROW_PPO_SUPERSUIT
    if not have("stable_baselines3"):
        return Missing(SECTION, name, n_envs, TRAIN_HINT)
    if adapter == "supersuit" and not have("supersuit"):
        return Missing(SECTION, name, n_envs, PEER_HINT)
    from stable_baselines3 import PPO
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecMonitor

    from benchmarks.ours import timed_learn
    from steer_env.envs.sb3 import make_team_sb3_vec_env

    def build(seed: int) -> Any:
        if adapter == "native":
            return make_team_sb3_vec_env(n_envs, seed=seed)
        return _supersuit_vec_env(n_envs, seed)

    warm = build(0)  # load the kernel, import everything, before any timing
    warm.reset()
    warm.step(np.zeros((warm.num_envs, 2), dtype=np.float32))
    slots = warm.num_envs
    warm.close()
    collect: list[float] = []
    train: list[float] = []

    def sample(r: int) -> float:
        venv = VecMonitor(build(r))
        set_random_seed(r)  # not PPO(seed=r): it calls venv.seed(), which SuperSuit lacks
        model = PPO("MlpPolicy", venv, device="cpu", verbose=0, **hyper)
        rate, c, t = timed_learn(model, timesteps)
        collect.append(c)
        train.append(t)
        venv.close()
        return rate

    hp = ", ".join(f"{k}={v}" for k, v in hyper.items())
    return Prepared(
        name,
        n_envs,
        "agent-steps/s",
        sample,
        note=f"{slots} slots, {timesteps} timesteps/repeat; {hp}",
        extra={
            "slots": slots,
            "hyperparameters": hyper,
            "timesteps": timesteps,
            "collect_us_per_timestep": collect,
            "train_us_per_timestep": train,
        },
        summary=lambda: (
            f"collect {np.median(collect):.1f} + train {np.median(train):.1f} us/timestep"
        ),
    )


# --------------------------------------------------------------------------- the section
def run(
    num_envs: int,
    sb3_envs: int,
    sb3_timesteps: int,
    hyper: dict[str, Any],
    repeats: int,
    target_s: float,
    add: Callable[[Any], None],
) -> None:
    """Measure the three pairs, handing each row to ``add`` as it is done."""
    for row in interleave([prepare_batch(num_envs, target_s), prepare_vmas(num_envs, target_s)],
                          repeats):  # fmt: skip
        add(row)
    for row in interleave([prepare_parallel(target_s), prepare_mpe2(target_s)], repeats):
        add(row)
    ppo_repeats = max(1, min(repeats, 3))
    pair = [prepare_ppo(a, sb3_envs, sb3_timesteps, hyper) for a in ("native", "supersuit")]
    for row in interleave(pair, ppo_repeats):
        add(row)
