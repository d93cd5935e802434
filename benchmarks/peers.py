"""The peers, measured in the same run when installed (``pip install "steer-env[bench]"``).

* MPE2 ``simple_tag_v3`` (PettingZoo parallel API, continuous actions): 3 adversaries and
  1 good agent (4 agents) plus 2 static landmarks, one physics step per env-step, one env
  per Python object (numpy).
* VMAS ``simple_tag`` on the CPU (batched torch): the same scenario (4 agents, 2
  landmarks), ``num_envs`` environments per object, 10 physics sub-steps per env-step.

Actions are drawn before the timed loop, uniform over each action space.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np

from benchmarks.common import Missing, Row, steps_for

INSTALL_HINT = 'not installed (pip install ".[bench]")'


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def bench_mpe2(repeats: int, target_s: float) -> Row | Missing:
    if not have("mpe2"):
        return Missing("peers", "MPE2 simple_tag_v3 parallel env", 1, INSTALL_HINT)
    from mpe2 import simple_tag_v3

    env = simple_tag_v3.parallel_env(continuous_actions=True, max_cycles=10**9)
    env.reset(seed=0)
    agents = list(env.agents)
    spaces = {a: env.action_space(a) for a in agents}
    rng = np.random.default_rng(0)

    def draw(k: int) -> list[dict[str, np.ndarray]]:
        return [
            {a: rng.uniform(s.low, s.high).astype(s.dtype) for a, s in spaces.items()}
            for _ in range(k)
        ]

    def run(actions: list[dict[str, np.ndarray]]) -> float:
        step = env.step
        t0 = time.perf_counter()
        for a in actions:
            step(a)
            if not env.agents:
                env.reset()
        return time.perf_counter() - t0

    per_step = run(draw(100)) / 100
    k = steps_for(per_step, target_s, 50, 100_000)
    actions = draw(k)
    samples = [k / run(actions) for _ in range(repeats)]
    env.close()
    substeps = 1  # MPE integrates once per env-step
    return Row(
        "peers",
        "MPE2 simple_tag_v3 parallel env",
        1,
        "env-steps/s",
        samples,
        agents=len(agents),
        substeps=substeps,
        note=f"{k} steps/repeat",
    )


def bench_vmas(num_envs: int, repeats: int, target_s: float) -> Row | Missing:
    if not have("vmas"):
        return Missing("peers", "VMAS simple_tag (CPU)", num_envs, INSTALL_HINT)
    import torch
    import vmas

    env = vmas.make_env(
        "simple_tag", num_envs=num_envs, device="cpu", continuous_actions=True, seed=0
    )
    env.reset()
    n_agents = len(env.agents)
    substeps = int(getattr(env.world, "_substeps", 1))
    gen = torch.Generator().manual_seed(0)

    def draw(k: int) -> list[list[torch.Tensor]]:
        return [
            [torch.rand(num_envs, 2, generator=gen) * 2.0 - 1.0 for _ in range(n_agents)]
            for _ in range(k)
        ]

    def run(actions: list[list[torch.Tensor]]) -> float:
        step = env.step
        t0 = time.perf_counter()
        for a in actions:
            step(a)
        return time.perf_counter() - t0

    per_step = run(draw(2)) / 2
    k = steps_for(per_step, target_s, 2, 20_000)
    actions = draw(k)
    samples = [k * num_envs / run(actions) for _ in range(repeats)]
    return Row(
        "peers",
        "VMAS simple_tag (CPU, torch)",
        num_envs,
        "env-steps/s",
        samples,
        agents=n_agents,
        substeps=substeps,
        note=f"{k} steps/repeat, torch threads {torch.get_num_threads()}",
    )
