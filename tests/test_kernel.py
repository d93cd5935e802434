"""The compiled step kernel equals the numpy library it transcribes.

:mod:`steer_env.envs.kernel` is what every env runs; the numpy functions (behaviors,
combine, physics, opponents, streams) define what it must compute. Here a reference
step written with those numpy functions (the pre-kernel ``Simulation.step``, environment by
environment) is compared with the kernel from the same random states: forces, physics,
walls, capture, rewards and observations. Differences are rounding only (the kernel takes
``sqrt(x*x + y*y)`` where numpy may take ``hypot``), so floats agree to 1e-12.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from steer_env import behaviors, combine, physics, vecmath
from steer_env.envs import kernel, opponents, streams
from steer_env.envs.config import make_config
from steer_env.envs.evasion import EvasionEnv
from steer_env.envs.pursuit import PursuitEnv
from steer_env.envs.simulation import (
    _START_CANDIDATES,
    OPPONENT_FEATURES,
    SELF_FEATURES,
    Simulation,
)

ATOL = 1e-12

CASES = {
    "pursuit": (PursuitEnv.default_config, "pursuer", {}),
    "evasion": (EvasionEnv.default_config, "evader", {}),
    "pursuit-3": (
        PursuitEnv.default_config,
        "pursuer",
        {"n_opponents": 3, "max_observed_opponents": 2, "reward_shaping": False},
    ),
    "evasion-4": (
        EvasionEnv.default_config,
        "evader",
        {
            "n_opponents": 4,
            "max_observed_opponents": 5,
            "separation_radius": 6.0,
            "arena_size": 12.0,
            "min_start_distance": 3.0,
            "capture_radius": 1.5,
        },
    ),
}


def make_sim(case: str, num_envs: int) -> Simulation:
    defaults, role, overrides = CASES[case]
    return Simulation(make_config(defaults, overrides), role, num_envs)


def randomize(sim: Simulation, rng: np.random.Generator) -> None:
    """Random states covering the branches: vehicles near and beyond the walls, at rest and
    at full speed, threatened or not, close pursuers (separation), a coincident pair, a
    head-on pursuit, near-captures, long and short episodes."""
    e, n = sim.num_envs, sim.n_vehicles
    half = sim.cfg.half_size
    sim.position[:] = rng.uniform(-half, half, (e, n, 2))
    edge = rng.random((e, n)) < 0.3
    sim.position[edge] = np.sign(sim.position[edge]) * (half - rng.uniform(0, 1.5, (edge.sum(), 2)))
    speed = rng.uniform(0, 1, (e, n)) * sim.max_speed
    speed[rng.random((e, n)) < 0.1] = 0.0
    speed[rng.random((e, n)) < 0.2] = sim.max_speed[0] * 1.0
    angle = rng.uniform(-np.pi, np.pi, (e, n))
    sim.velocity[:] = np.stack((np.cos(angle), np.sin(angle)), -1) * speed[..., None]
    head = rng.uniform(-np.pi, np.pi, (e, n))
    sim.heading[:] = np.stack((np.cos(head), np.sin(head)), -1)
    moving = speed > 0
    sim.heading[moving] = sim.velocity[moving] / speed[moving][:, None]
    wander = rng.uniform(-np.pi, np.pi, (e, n))
    sim.wander_target[:] = sim.cfg.wander_radius * np.stack((np.cos(wander), np.sin(wander)), -1)
    # Opponents close to the agent in a third of the envs (threats, separation, captures).
    close = rng.random(e) < 0.35
    sim.position[close, 1:] = sim.position[close, :1] + rng.normal(0, 1.2, (close.sum(), n - 1, 2))
    np.clip(sim.position, -half + 0.31, half - 0.31, out=sim.position)
    if n > 2:  # two coincident opponents, and a pair moving head-on
        sim.position[0, 2] = sim.position[0, 1]
        sim.velocity[1, 0] = [2.0, 0.0]
        sim.velocity[1, 1] = [-2.0, 0.0]
        sim.position[1, 1] = sim.position[1, 0] + [3.0, 0.0]
    sim.steps[:] = rng.integers(0, sim.cfg.time_limit, e)
    sim.steps[: max(1, e // 8)] = sim.cfg.time_limit - 1  # last step of the episode
    sim.capture_step[:] = -1
    sim.key[:] = streams.key_from_seed(rng.integers(0, 2**31, e))
    sim.counter[:] = rng.integers(0, 1000, e).astype(np.uint64)
    sim._potential[:] = rng.normal(0, 0.1, e)


# --------------------------------------------------------------------------- reference
def reference_step(sim: Simulation, action: np.ndarray) -> dict[str, np.ndarray]:
    """One step with the numpy library, environment by environment (each a batch of one,
    exactly what the single env computed before the kernel). Mutates ``sim``'s state."""
    cfg = sim.cfg
    e_count = sim.num_envs
    out = {k: np.zeros(e_count) for k in ("reward", "capture", "escape", "shaping", "distance")}
    out.update({k: np.zeros(e_count, bool) for k in ("terminated", "truncated", "captured")})
    for e in range(e_count):
        s = slice(e, e + 1)
        pos, vel, head = sim.position[s], sim.velocity[s], sim.heading[s]
        args = (pos, vel, head, sim.max_speed, sim.max_force)
        if sim.agent_role == "pursuer":
            u = streams.uniform(sim.key[s], sim.counter[s], 2 * cfg.n_opponents)
            sim.counter[s] += np.uint64(2 * cfg.n_opponents)
            noise = (2.0 * u - 1.0).reshape(1, cfg.n_opponents, 2)
            scripted, target = opponents.evader_forces(
                *args, sim.wander_target[s, 1:], noise, sim.opponents, sim.pursuers, cfg
            )
            sim.wander_target[s, 1:] = target
        else:
            scripted = opponents.pursuer_forces(*args, sim.opponents, sim.evaders, cfg)
        force = np.zeros((1, sim.n_vehicles, 2))
        force[:, 1:] = scripted
        local = vecmath.truncate(action[s], 1.0)
        force[:, 0] = vecmath.vector_to_world(local, head[:, 0]) * sim.max_force[0]
        before = pos.copy()
        physics.integrate(
            pos,
            vel,
            head,
            force,
            sim.mass,
            sim.max_speed,
            sim.max_force,
            cfg.dt,
            out=(pos, vel, head),
        )
        limit = cfg.half_size - sim.radius[None, :, None]
        over, under = pos > limit, pos < -limit
        np.clip(pos, -limit, limit, out=pos)
        vel[over & (vel > 0)] = 0.0
        vel[under & (vel < 0)] = 0.0
        # The heading follows the velocity the walls left (kept if they stopped the vehicle).
        head[...] = vecmath.heading_from(vel, head, physics.MIN_HEADING_SPEED)
        sim.steps[s] += 1
        # Swept capture over every pursuer-evader pair.
        r0 = before[:, sim.evaders][:, None] - before[:, sim.pursuers][:, :, None]
        r1 = pos[:, sim.evaders][:, None] - pos[:, sim.pursuers][:, :, None]
        d = r1 - r0
        dd = np.einsum("...k,...k->...", d, d)
        t = np.divide(
            -np.einsum("...k,...k->...", r0, d), dd, out=np.zeros_like(dd), where=dd > 1e-18
        )
        closest = r0 + d * np.clip(t, 0.0, 1.0)[..., None]
        captured = bool((vecmath.length(closest) <= cfg.capture_radius).any())
        if captured and sim.capture_step[e] < 0:
            sim.capture_step[e] = sim.steps[e]
        truncated = bool(sim.steps[e] >= cfg.time_limit)
        sign = 1.0 if sim.agent_role == "pursuer" else -1.0
        capture = sign if captured else 0.0
        escape = 1.0 if (sign < 0 and truncated and not captured) else 0.0
        distance = float(vecmath.length(pos[0, 1:] - pos[0, :1]).min())
        scale = cfg.shaping_scale
        new_potential = (-scale if sign > 0 else scale) * (distance / cfg.diagonal)
        shaping = 0.0
        if cfg.reward_shaping:
            shaping = (0.0 if captured else cfg.shaping_gamma * new_potential) - sim._potential[e]
        sim._potential[e] = new_potential
        for key, value in (
            ("reward", capture + escape + shaping),
            ("capture", capture),
            ("escape", escape),
            ("shaping", shaping),
            ("distance", distance),
            ("terminated", captured),
            ("truncated", truncated),
            ("captured", captured),
        ):
            out[key][e] = value
    out["obs"] = reference_observe(sim)
    return out


def reference_observe(sim: Simulation) -> np.ndarray:
    """The pre-kernel ``Simulation.observe`` (numpy)."""
    cfg = sim.cfg
    e = sim.num_envs
    h = sim.heading[:, 0]
    p = sim.position[:, 0]
    obs = np.zeros((e, sim.obs_dim))
    obs[:, 0:2] = vecmath.vector_to_local(sim.velocity[:, 0], h) / sim.max_speed[0]
    half = cfg.half_size
    walls = np.zeros((e, 4, 2))
    walls[:, 0, 0] = -half - p[:, 0]
    walls[:, 1, 0] = half - p[:, 0]
    walls[:, 2, 1] = -half - p[:, 1]
    walls[:, 3, 1] = half - p[:, 1]
    obs[:, 2:10] = (vecmath.vector_to_local(walls, h[:, None]) / cfg.arena_size).reshape(e, 8)
    obs[:, 10] = 2.0 * sim.steps / cfg.time_limit - 1.0
    rel_p = sim.position[:, 1:] - p[:, None]
    rel_v = sim.velocity[:, 1:] - sim.velocity[:, :1]
    order = np.argsort(vecmath.length(rel_p), axis=1, kind="stable")
    slots = min(cfg.observed_opponents, cfg.n_opponents)
    order = order[:, :slots]
    rel_p = np.take_along_axis(rel_p, order[..., None], axis=1)
    rel_v = np.take_along_axis(rel_v, order[..., None], axis=1)
    feats = np.zeros((e, cfg.observed_opponents, OPPONENT_FEATURES))
    feats[:, :slots, 0:2] = vecmath.vector_to_local(rel_p, h[:, None]) / cfg.diagonal
    speed_scale = sim.max_speed[0] + sim.max_speed[1:].max()
    feats[:, :slots, 2:4] = vecmath.vector_to_local(rel_v, h[:, None]) / speed_scale
    feats[:, :slots, 4] = 1.0
    obs[:, SELF_FEATURES:] = feats.reshape(e, -1)
    np.clip(obs, -1.0, 1.0, out=obs)
    return obs.astype(np.float32)


def reference_reset(sim: Simulation, envs: np.ndarray) -> None:
    """The pre-kernel ``Simulation.reset_envs`` (numpy), streams continuing."""
    cfg = sim.cfg
    n, k, m = sim.n_vehicles, _START_CANDIDATES, len(envs)
    u = streams.uniform(sim.key[envs], sim.counter[envs], n * (2 * k + 2))
    sim.counter[envs] += np.uint64(n * (2 * k + 2))
    u = u.reshape(m, n, 2 * k + 2)
    lo = -cfg.half_size + cfg.vehicle_radius
    span = cfg.arena_size - 2 * cfg.vehicle_radius
    candidates = lo + span * u[..., : 2 * k].reshape(m, n, k, 2)
    agent = candidates[:, 0, 0]
    dist = vecmath.length(candidates[:, 1:] - agent[:, None, None, :])
    far = dist >= cfg.min_start_distance
    choice = np.where(far.any(axis=-1), far.argmax(axis=-1), dist.argmax(axis=-1))
    others = np.take_along_axis(candidates[:, 1:], choice[..., None, None], axis=2)[:, :, 0]
    angle = 2 * np.pi * u[..., 2 * k]
    wander_angle = 2 * np.pi * u[..., 2 * k + 1]
    sim.position[envs, 0] = agent
    sim.position[envs, 1:] = others
    sim.velocity[envs] = 0.0
    sim.heading[envs] = np.stack((np.cos(angle), np.sin(angle)), axis=-1)
    sim.wander_target[envs] = cfg.wander_radius * np.stack(
        (np.cos(wander_angle), np.sin(wander_angle)), axis=-1
    )
    sim.steps[envs] = 0
    sim.capture_step[envs] = -1


def copy_state(src: Simulation, dst: Simulation) -> None:
    for a, b in (
        (src._state, dst._state),
        (src._counts, dst._counts),
        (src._rng, dst._rng),
        (src._potential, dst._potential),
    ):
        b[...] = a


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("case", sorted(CASES))
def test_step_matches_the_numpy_reference(case):
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    num_envs = 64
    sim, ref = make_sim(case, num_envs), make_sim(case, num_envs)
    for trial in range(6):
        randomize(sim, rng)
        copy_state(sim, ref)
        action = rng.uniform(-1.5, 1.5, (num_envs, 2))
        action[: num_envs // 4] = 0.0
        result = sim.step(action)
        want = reference_step(ref, action)
        for got, key in (
            (result.reward, "reward"),
            (result.reward_capture, "capture"),
            (result.reward_escape, "escape"),
            (result.reward_shaping, "shaping"),
            (result.distance, "distance"),
        ):
            np.testing.assert_allclose(got, want[key], rtol=0, atol=ATOL, err_msg=f"{key} {trial}")
        for got, key in (
            (result.terminated, "terminated"),
            (result.truncated, "truncated"),
            (result.captured, "captured"),
        ):
            np.testing.assert_array_equal(got, want[key], err_msg=f"{key} {trial}")
        for got, want_state in ((sim._state, ref._state), (sim._potential, ref._potential)):
            np.testing.assert_allclose(got, want_state, rtol=0, atol=ATOL)
        np.testing.assert_array_equal(sim._counts, ref._counts)
        np.testing.assert_array_equal(sim._rng, ref._rng)
        np.testing.assert_allclose(result.observation, want["obs"], rtol=0, atol=1e-6)
        np.testing.assert_allclose(sim.observe(), reference_observe(ref), rtol=0, atol=1e-6)
        assert result.captured.any() or case == "pursuit"  # the states do exercise capture


@pytest.mark.parametrize("case", sorted(CASES))
def test_reset_matches_the_numpy_reference(case):
    sim, ref = make_sim(case, 40), make_sim(case, 40)
    rng = np.random.default_rng(1)
    randomize(sim, rng)
    copy_state(sim, ref)
    envs = np.array([0, 3, 4, 17, 39])
    sim.reset_envs(envs)
    reference_reset(ref, envs)
    np.testing.assert_allclose(sim._state, ref._state, rtol=0, atol=ATOL)
    np.testing.assert_array_equal(sim._counts, ref._counts)
    np.testing.assert_array_equal(sim._rng, ref._rng)
    d = vecmath.length(ref.position[envs, 1:] - ref.position[envs, :1]).min(axis=1)
    scale = ref.cfg.shaping_scale * (-1 if ref.agent_role == "pursuer" else 1)
    np.testing.assert_allclose(sim._potential[envs], scale * d / ref.cfg.diagonal, atol=ATOL)


def test_stream_draws_match_streams_uniform():
    rng = np.random.default_rng(2)
    key = streams.key_from_seed(rng.integers(0, 2**31, 20))
    counter = rng.integers(0, 2**40, 20).astype(np.uint64)
    want = streams.uniform(key, counter, 7)
    got = np.array(
        [[kernel.uniform_draw(key[e], counter[e], j) for j in range(7)] for e in range(20)]
    )
    np.testing.assert_array_equal(got, want)


def _vehicles(rng: np.random.Generator, n: int):
    p = rng.uniform(-14, 14, (n, 2))
    v = rng.normal(0, 2, (n, 2))
    v[::7] = 0.0
    h = vecmath.normalize(rng.normal(0, 1, (n, 2)))
    ms = rng.uniform(0.5, 4, n)
    return p, v, h, ms


def test_behaviour_helpers_match_behaviors():
    rng = np.random.default_rng(3)
    n = 300
    p, v, h, ms = _vehicles(rng, n)
    tp, tv, _, _ = _vehicles(rng, n)
    tp[::5] = p[::5] + rng.normal(0, 0.5, (len(tp[::5]), 2))
    tv[::11] = -v[::11]  # head-on
    wt = vecmath.set_magnitude(rng.normal(0, 1, (n, 2)), 1.0)
    noise = rng.uniform(-1, 1, (n, 2))
    noise[3] = -wt[3] / (8.0 * 0.1)  # jittered exactly onto the centre
    seek = behaviors.seek(p, v, tp, ms)
    chase = behaviors.pursuit(p, v, ms, tp, tv, 3.0)
    flee = behaviors.evade(p, v, ms, tp, tv, 8.0, 3.0)
    roam, target = behaviors.wander(
        p, v, h, ms, wt, radius=1.0, distance=2.0, jitter=8.0, dt=0.1, noise=noise
    )
    walls = behaviors.wall_avoidance(p, v, h, ms, (-12.5, -12.5, 12.5, 12.5), 2.0)
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    for i in range(n):
        args = (p[i, 0], p[i, 1], v[i, 0], v[i, 1])
        target_args = (tp[i, 0], tp[i, 1], tv[i, 0], tv[i, 1])
        np.testing.assert_allclose(
            kernel.seek(*args, tp[i, 0], tp[i, 1], ms[i]), seek[i], rtol=0, atol=ATOL
        )
        np.testing.assert_allclose(
            kernel.pursuit(*args, ms[i], *target_args, 3.0), chase[i], rtol=0, atol=ATOL
        )
        np.testing.assert_allclose(
            kernel.evade(*args, ms[i], *target_args, 8.0, 3.0), flee[i], rtol=0, atol=ATOL
        )
        fx, fy, tx, ty = kernel.wander(
            *args,
            h[i, 0],
            h[i, 1],
            ms[i],
            wt[i, 0],
            wt[i, 1],
            noise[i, 0],
            noise[i, 1],
            1.0,
            2.0,
            8.0 * 0.1,
        )
        np.testing.assert_allclose((fx, fy, tx, ty), (*roam[i], *target[i]), rtol=0, atol=ATOL)
        got = kernel.wall_avoidance(*args, h[i, 0], h[i, 1], ms[i], 12.5, 2.0, 1.0, c, s)
        np.testing.assert_allclose(got, walls[i], rtol=0, atol=ATOL)


def test_integrate_matches_physics():
    rng = np.random.default_rng(4)
    n = 300
    p, v, h, ms = _vehicles(rng, n)
    v = vecmath.truncate(v, ms)
    f = rng.normal(0, 5, (n, 2))
    f[::9] = 0.0
    v[::9] = 0.0
    mass = rng.uniform(0.5, 2, n)
    mf = rng.uniform(0.5, 8, n)
    want = physics.integrate(p, v, h, f, mass, ms, mf, 0.1)
    for i in range(n):
        got = kernel.integrate(
            p[i, 0],
            p[i, 1],
            v[i, 0],
            v[i, 1],
            h[i, 0],
            h[i, 1],
            f[i, 0],
            f[i, 1],
            mass[i],
            ms[i],
            mf[i],
            0.1,
        )
        np.testing.assert_allclose(got, [*want[0][i], *want[1][i], *want[2][i]], rtol=0, atol=ATOL)


def test_prioritized_matches_combine():
    """Per environment, the kernel combines its opponents exactly as combine.prioritized
    combines that batch (including the break once no opponent has budget left)."""
    rng = np.random.default_rng(5)
    levels, weights = 3, np.array([3.0, 1.0, 0.5])
    for trial in range(200):
        count = 1 + trial % 3  # opponents in the environment
        raw = rng.normal(0, 4, (levels, count, 2))
        raw[rng.random((levels, count)) < 0.3] = 0.0
        mf = rng.uniform(1, 8, count)
        want = combine.prioritized([raw[k] for k in range(levels)], list(weights), mf)
        scratch = np.zeros((count + 1, 3, 2, 1))  # vehicle 0 is the agent
        scratch[1:, :, :, 0] = raw.transpose(1, 0, 2)
        total = np.zeros((count + 1, 2, 1))
        kernel.prioritized(
            scratch,
            weights,
            levels,
            np.concatenate(([0.0], mf)),
            1,
            total,
            np.zeros((count + 1, 1)),
            np.zeros(1, bool),
        )
        np.testing.assert_allclose(total[1:, :, 0], want, rtol=0, atol=ATOL)
