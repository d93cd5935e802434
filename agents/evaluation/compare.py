"""Compare a learned agent with the scripted agents of its role on paired, seeded episodes.

    python -m agents.compare                                  # shipped pursuit model
    python -m agents.compare --env evasion                    # shipped evasion model
    python -m agents.compare --model runs/x/model.zip --episodes 500 --seed 1000000

Every agent plays the same ``n`` episodes: episode ``k`` starts from seed ``seed + k``
(one native vector env with ``num_envs = n``, ``reset(seed=seed)``; each env's first
episode is recorded). Agents: the learned one and, for the pursuer, the classic and the
naive scripted pursuers; for the evader, the classic scripted evader.

Reported per agent (``H`` = the time limit, 10 s by default):

* success rate (pursuer: capture; evader: no capture by ``H``) with its 95% Wilson interval;
* time to capture (pursuer) or survival time (evader), in seconds: the *restricted mean*
  ``mean(min(T, H))`` with uncaptured episodes counted as ``H``; the mean among captured
  episodes only; the Kaplan-Meier median (``> H`` when fewer than half are captured);
* paired differences learned - scripted over the same episodes: success (in percentage
  points) with Newcombe's 95% interval for paired proportions
  (:func:`agents.evaluation.stats.paired_proportion_difference`), and restricted mean time
  with the 95% paired t interval (:func:`agents.evaluation.stats.paired_difference`).

Writes ``comparison.csv`` (one row per agent), ``episodes.csv`` (one row per agent and
episode), ``comparison.json`` (everything, with the goal check) and ``survival.png``
(fraction of episodes without a capture vs time, per agent) to ``--out``.

This is the ``"agents"`` layout (:class:`AgentsTable`). The commands are one stack for
every task: a task's ``metrics`` (:class:`steer_env.tasks.Metrics`) name its layout, what its
success and its time mean, its goal and its table's words, and :func:`comparison_of` gives
the layout that ``agents.compare``, ``agents.render`` and the end of a training run use
(a team task's is the cross-play, :mod:`agents.evaluation.cross_play`).
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import shared, stats
from agents.evaluation.cross_play import CrossPlay
from agents.evaluation.policies import (
    ENV_SHORT,
    ROLE,
    SCRIPTED_FOR_ENV,
    LearnedPolicy,
    PolicyLoadError,
    UsageError,
    add_config_option,
    agent_label,
    canonical_agent,
    config_overrides,
    default_model_path,
    env_arg,
    env_tag,
    inference_device,
    load_policy,
    make_scripted,
    played_config,
    read_model_metadata,
    task_names,
)
from agents.evaluation.results import EpisodeResults as EpisodeResults
from agents.evaluation.results import atomic_write_bytes as atomic_write_bytes
from agents.evaluation.results import atomic_write_json as atomic_write_json
from agents.evaluation.results import csv_bytes, format_interval, json_number
from agents.evaluation.shared import AgentsBatch, several_agents
from steer_env import cli
from steer_env.cli import OneLineParser, positive_int
from steer_env.tasks import REGISTRY, get_task

#: Default first episode seed: far from the seeds training uses (``seed .. seed + n_envs``).
DEFAULT_SEED = 1_000_000
DEFAULT_EPISODES = 500


#: Episodes simulated at once (more run in consecutive batches with the same seeding).
MAX_BATCH = 4096


def episode_env(env_id: str, episodes: int, env_kwargs: dict[str, Any] | None = None) -> Any:
    """The env that plays ``episodes`` episodes at once: the task's native Gymnasium vector
    env, or, for a configuration with several learned agents of the role, its PettingZoo
    batch (:class:`agents.evaluation.shared.AgentsBatch`)."""
    if several_agents(env_id, env_kwargs):
        return AgentsBatch(env_id, episodes, env_kwargs)
    import gymnasium as gym

    import steer_env  # noqa: F401

    return gym.make_vec(
        env_id, num_envs=episodes, vectorization_mode="vector_entry_point", **(env_kwargs or {})
    )


def play_episodes(
    env_id: str,
    policy_fn: Any,
    episodes: int,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
    wrap: Any = None,
) -> EpisodeResults:
    """Play episode ``k = 0..episodes-1`` from seed ``seed + k`` with the policy
    ``policy_fn(vector_env, seed)`` (deterministic actions): a native vector env with one env
    per episode (:func:`episode_env`; ``wrap(env)`` in its place when given, a wrapper
    with its ``reset`` and ``step``), ``reset(seed=seed)`` (env ``i`` starts from
    ``seed + i``), each env recorded up to the end of its first episode. Batches of more
    than :data:`MAX_BATCH` episodes pass their own first seed, so a policy keyed by
    ``seed + i`` plays episode ``k`` alike in any batch."""
    if episodes > MAX_BATCH:
        parts = [
            play_episodes(
                env_id, policy_fn, min(MAX_BATCH, episodes - k), seed + k, env_kwargs, wrap
            )
            for k in range(0, episodes, MAX_BATCH)
        ]
        return EpisodeResults(
            *(
                np.concatenate([getattr(r, f) for r in parts])
                for f in ("success", "captured", "capture_step", "length")
            ),
            outcomes={
                key: np.concatenate([r.outcomes[key] for r in parts]) for key in parts[0].outcomes
            },
        )
    env = episode_env(env_id, episodes, env_kwargs)
    if wrap is not None:
        env = wrap(env)
    try:
        policy = policy_fn(env, seed)
        obs, _ = env.reset(seed=seed)
        n = episodes
        done = np.zeros(n, dtype=bool)
        success = np.zeros(n, dtype=bool)
        capture_step = np.full(n, -1, dtype=np.int64)
        length = np.zeros(n, dtype=np.int64)
        limit = env.unwrapped.config.time_limit
        metrics = env.unwrapped.task.metrics
        outcomes = {key: np.zeros(n) for key in metrics.outcomes}
        for _ in range(limit + 1):
            action, _ = policy.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            length[~done] += 1
            ended = (terminated | truncated) & ~done
            if ended.any():
                success[ended] = np.asarray(info["is_success"])[ended]
                capture_step[ended] = np.asarray(info[metrics.time_key])[ended]
                for key, values in outcomes.items():
                    values[ended] = np.asarray(info[key])[ended]
                done |= ended
            if done.all():
                break
        if not done.all():  # cannot happen: every episode ends by the time limit
            raise RuntimeError("some episodes did not end within the time limit")
    finally:
        env.close()
    return EpisodeResults(success, capture_step >= 0, capture_step, length, outcomes)


def event_times(r: EpisodeResults, dt: float, horizon: float) -> np.ndarray:
    """Each episode's time of the task's event (a capture, the flock penned), s; the
    horizon where it did not happen."""
    return np.where(r.captured, r.capture_step * dt, horizon)


def restricted_times_of(
    results: dict[str, EpisodeResults], dt: float, horizon: float
) -> dict[str, np.ndarray]:
    """Each agent's per-episode restricted times ``min(T, horizon)``, s, by agent name."""
    return {
        name: stats.restricted_times(event_times(r, dt, horizon), r.captured, horizon)
        for name, r in results.items()
    }


def summarize(
    results: dict[str, EpisodeResults],
    env_id: str,
    dt: float,
    time_limit: int,
    labels: dict[str, str] | None = None,
    targets: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Per-agent statistics and paired differences (learned - each other agent). The goal
    is the task's (``metrics.goal``) against each agent of ``targets`` (default: the
    task's classic baseline); with several targets, ``goal["per_target"]`` holds each."""
    horizon = time_limit * dt
    labels = labels or {}
    agents: dict[str, Any] = {}
    times = restricted_times_of(results, dt, horizon)
    for name, r in results.items():
        n = int(r.success.size)
        t = event_times(r, dt, horizon)
        rate = stats.wilson_interval(int(r.success.sum()), n)
        median = stats.survival_median(t, r.captured, horizon)
        agents[name] = {
            "label": labels.get(name, name),
            "episodes": n,
            "successes": int(r.success.sum()),
            "success_rate": rate.mean,
            "success_ci95": [rate.lo, rate.hi],
            "captures": int(r.captured.sum()),
            "restricted_mean_time_s": float(times[name].mean()),
            "mean_time_captured_s": stats.event_mean(t, r.captured),
            "median_time_s": median,  # inf: more than half not captured by the horizon
        }
        if r.outcomes:
            agents[name]["outcomes"] = {key: _mean_ci(values) for key, values in r.outcomes.items()}
    paired = paired_differences(results, times, "learned") if "learned" in results else {}
    # The goal, what a success and the time mean: the task's metrics.
    metrics = get_task(env_id).metrics
    event = metrics.labels.get("event", "captured")  # the timed event, as a participle
    goal: dict[str, Any] = {}
    targets = targets or (SCRIPTED_FOR_ENV[env_id][0],)  # the task's classic baseline
    checks = {name: _goal_check(paired[name], metrics) for name in targets if name in paired}
    if len(targets) == 1 and checks:
        goal = {"criterion": metrics.goal["criterion"], **checks[targets[0]]}
    elif checks:
        shorter = metrics.goal.get("time_shorter")
        time_part = " and restricted mean time CI below 0" if shorter else ""
        goal = {
            "criterion": f"learned - each of {', '.join(checks)}: success CI above 0{time_part}",
            **{key: all(c[key] for c in checks.values()) for key in next(iter(checks.values()))},
            "per_target": checks,
        }
    return {
        "env_id": env_id,
        "role": ROLE[env_id],
        "success_means": metrics.success_means,
        "time_means": metrics.time_means,
        "horizon_s": horizon,
        "dt_s": dt,
        "episodes": int(next(iter(results.values())).success.size),
        "censoring": (
            f"episodes not {event} count as the time limit in restricted means and paired "
            f"time differences; mean_time_captured_s averages the episodes {event} only; "
            f"median_time_s is the Kaplan-Meier median (inf: fewer than half {event})"
        ),
        "ci_methods": {
            "success_rate": "Wilson score 95%",
            "paired_success_difference": "Newcombe's hybrid score 95% for paired proportions "
            "(method 10)",
            "paired_time_difference": "paired t 95% on per-episode differences (learned - other)",
        },
        "agents": agents,
        "paired_vs_learned": paired,
        "goal": goal,
    }


def _goal_check(p: dict[str, Any], metrics: Any) -> dict[str, bool]:
    """Whether a paired difference ``p`` (learned - other) meets the task's goal: success
    interval above 0 and, when ``metrics.goal`` asks for it, time interval below 0."""
    check = {"success_better": bool(p["success_diff_ci95"][0] > 0)}
    if metrics.goal.get("time_shorter"):
        check["time_shorter"] = bool(p["time_diff_ci95_s"][1] < 0)
    check["met"] = all(check.values())
    return check


def paired_differences(
    results: dict[str, EpisodeResults], times: dict[str, np.ndarray], reference: str
) -> dict[str, Any]:
    """``reference`` minus each other agent on the same episodes: the success rate
    (Newcombe's paired interval) and the restricted time (paired t), by agent name."""
    paired: dict[str, Any] = {}
    for name in results:
        if name == reference:
            continue
        s = stats.paired_proportion_difference(
            results[reference].success.astype(float), results[name].success.astype(float)
        )
        d = stats.paired_difference(times[reference], times[name])
        paired[name] = {
            "success_diff": s.mean,
            "success_diff_ci95": [s.lo, s.hi],
            "time_diff_s": d.mean,
            "time_diff_ci95_s": [d.lo, d.hi],
        }
    return paired


def _mean_ci(values: np.ndarray) -> dict[str, Any]:
    iv = stats.mean_interval(values)
    return {"mean": iv.mean, "ci95": [iv.lo, iv.hi]}


def format_table(summary: dict[str, Any]) -> str:
    """Markdown tables of a :func:`summarize` result."""
    horizon = summary["horizon_s"]
    labels = get_task(summary["env_id"]).metrics.labels
    what, event = labels["rate"], labels["event"]
    tname = summary["time_means"]
    lines = [
        f"{summary['env_id']}: {summary['episodes']} paired episodes, time limit {horizon:g} s",
        "",
        f"| agent | {what} rate [95% CI] | mean {tname} (s)* | mean among {event} (s) "
        f"| median {tname} (s) |",
        "|---|---|---|---|---|",
    ]
    for a in summary["agents"].values():
        rate = stats.Interval(a["success_rate"], *a["success_ci95"])
        med = json_number(a["median_time_s"])  # a summary, or one read back from its file
        med_s = f"> {horizon:g}" if math.isinf(med) else f"{med:.1f}"
        cap = json_number(a["mean_time_captured_s"])
        cap_s = "-" if math.isnan(cap) else f"{cap:.2f}"
        lines.append(
            f"| {a['label']} | {format_interval(rate, 100)}% | {a['restricted_mean_time_s']:.2f} "
            f"| {cap_s} | {med_s} |"
        )
    if summary["paired_vs_learned"]:
        lines += [
            "",
            f"| learned - other (same episodes) | {what} rate, points [95% CI] "
            f"| mean {tname}, s [95% CI] |",
            "|---|---|---|",
        ]
        for name, p in summary["paired_vs_learned"].items():
            s = stats.Interval(p["success_diff"], *p["success_diff_ci95"])
            d = stats.Interval(p["time_diff_s"], *p["time_diff_ci95_s"])
            lines.append(
                f"| vs {summary['agents'][name]['label']} | {format_interval(s, 100, sign=True)} "
                f"| {format_interval(d, digits=2, sign=True)} |"
            )
    keys = next(iter(summary["agents"].values())).get("outcomes", {})
    if keys:
        lines += [
            "",
            "| agent | " + " | ".join(f"{key} [95% CI]" for key in keys) + " |",
            "|---|" + "---|" * len(keys),
        ]
        for a in summary["agents"].values():
            cells = [
                format_interval(stats.Interval(o["mean"], *o["ci95"]), digits=2)
                for o in a["outcomes"].values()
            ]
            lines.append(f"| {a['label']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"* restricted mean: episodes not {event} count as the time limit ({horizon:g} s).",
    ]
    if summary.get("goal"):
        lines.append(
            f"Goal ({summary['goal']['criterion']}): "
            f"{'met' if summary['goal']['met'] else 'NOT met'}."
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ atomic file writing
# One implementation for the whole project (steer_env/cli.py); re-exported here.
temp_path = cli.temp_path


def plot_survival(results: dict[str, EpisodeResults], summary: dict[str, Any], path: Path) -> None:
    """Survival curves (Kaplan-Meier; here the fraction of episodes without a capture by
    time ``t``) for every agent, saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dt, horizon = summary["dt_s"], summary["horizon_s"]
    labels = get_task(summary["env_id"]).metrics.labels
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for name, r in results.items():
        t = np.where(r.captured, r.capture_step * dt, horizon)
        grid, surv = stats.survival_curve(t, r.captured, horizon)
        a = summary["agents"][name]
        ax.step(
            grid,
            surv,
            where="post",
            lw=2 if name == "learned" else 1.5,
            label=f"{a['label']} ({100 * a['success_rate']:.0f}% {labels['achieved']})",
        )
    ax.set_xlim(0, horizon)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(labels["curve"])
    ax.set_title(f"{labels['title']}: {summary['episodes']} paired episodes")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def write_outputs(
    results: dict[str, EpisodeResults],
    summary: dict[str, Any],
    out: Path,
    seed: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write comparison.csv, episodes.csv, comparison.json and survival.png into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, a in summary["agents"].items():
        p = summary["paired_vs_learned"].get(name, {})
        rows.append(
            {
                "agent": name,
                "label": a["label"],
                "episodes": a["episodes"],
                "successes": a["successes"],
                "success_rate": a["success_rate"],
                "success_ci95_lo": a["success_ci95"][0],
                "success_ci95_hi": a["success_ci95"][1],
                "restricted_mean_time_s": a["restricted_mean_time_s"],
                "mean_time_captured_s": a["mean_time_captured_s"],
                "median_time_s": a["median_time_s"],
                "learned_minus_this_success": p.get("success_diff", ""),
                "success_diff_ci95_lo": p.get("success_diff_ci95", ["", ""])[0],
                "success_diff_ci95_hi": p.get("success_diff_ci95", ["", ""])[1],
                "learned_minus_this_time_s": p.get("time_diff_s", ""),
                "time_diff_ci95_lo_s": p.get("time_diff_ci95_s", ["", ""])[0],
                "time_diff_ci95_hi_s": p.get("time_diff_ci95_s", ["", ""])[1],
            }
        )
    ep_rows = []
    dt = summary["dt_s"]
    for name, r in results.items():
        for k in range(r.success.size):
            ep_rows.append(
                {
                    "agent": name,
                    "episode": k,
                    "seed": seed + k,
                    "success": int(r.success[k]),
                    "captured": int(r.captured[k]),
                    "capture_step": int(r.capture_step[k]),
                    "time_s": round(float(r.capture_step[k] * dt), 6) if r.captured[k] else "",
                }
            )
    paths = {
        "csv": out / "comparison.csv",
        "episodes_csv": out / "episodes.csv",
        "json": out / "comparison.json",
        "plot": out / "survival.png",
    }
    atomic_write_bytes(paths["csv"], csv_bytes(rows))
    atomic_write_bytes(paths["episodes_csv"], csv_bytes(ep_rows))
    atomic_write_json(paths["json"], {**summary, "seed": seed, **(extra or {})})
    plot_survival(results, summary, paths["plot"])
    return paths


def play_agents(
    env_id: str,
    policy: LearnedPolicy | None,
    episodes: int,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
    single: LearnedPolicy | None = None,
) -> tuple[dict[str, EpisodeResults], dict[str, str]]:
    """The learned ``policy`` (if given) and every scripted agent of its role, each on the
    same ``episodes`` seeded episodes of the env of ``env_kwargs``: results and labels by
    agent name, the learned one first.

    When ``env_kwargs`` has several learned agents of the role
    (:func:`agents.evaluation.shared.several_agents`), each side is one policy acting for
    every agent (the learned one, and the task's scripted policies for several agents),
    and ``single`` (a model trained with one agent) plays alone on the same seeds in the
    same configuration with one agent (:func:`agents.evaluation.shared.single_config`),
    as the row ``single``."""
    results: dict[str, EpisodeResults] = {}
    labels: dict[str, str] = {}
    several = several_agents(env_id, env_kwargs)
    if single is not None and not several:
        raise UsageError("a single-agent model is compared with several learned agents only")
    if policy is not None:
        played = shared.EveryAgent(policy) if several else policy
        results["learned"] = play_episodes(
            env_id, lambda env, _seed: played, episodes, seed, env_kwargs
        )
        labels["learned"] = (
            shared.label("learned", env_id, policy)
            if several
            else agent_label("learned", env_id, policy)
        )
    if several:
        for name in shared.baseline_names(env_id):
            results[name] = play_episodes(
                env_id,
                lambda env, batch_seed, name=name: shared.scripted_team(
                    name, env_id, env.config, batch_seed
                ),
                episodes,
                seed,
                env_kwargs,
            )
            labels[name] = shared.label(name, env_id)
        if single is not None:
            results[shared.SINGLE] = play_episodes(
                env_id,
                lambda env, _seed: single,
                episodes,
                seed,
                shared.single_config(env_id, env_kwargs),
            )
            labels[shared.SINGLE] = shared.label(shared.SINGLE, env_id, single)
        return results, labels
    for name in SCRIPTED_FOR_ENV[env_id]:
        results[name] = play_episodes(
            env_id,
            lambda env, batch_seed, name=name: make_scripted(name, env, seed=batch_seed),
            episodes,
            seed,
            env_kwargs,
        )
        labels[name] = agent_label(name, env_id)
    return results, labels


def run_comparison(
    env_id: str,
    policy: LearnedPolicy | None,
    episodes: int = DEFAULT_EPISODES,
    seed: int = DEFAULT_SEED,
    out: Path | None = None,
    env_kwargs: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    single: LearnedPolicy | None = None,
) -> dict[str, Any]:
    """Play the learned ``policy`` (if given) and every scripted agent of its role on the
    same ``episodes`` seeded episodes (and ``single``: :func:`play_agents`); return the
    summary and write files to ``out``. With several learned agents the goal is against
    the classic scripted team and, when given, the single agent."""
    cfg = get_task(env_id).config(**(env_kwargs or {}))
    results, labels = play_agents(env_id, policy, episodes, seed, env_kwargs, single)
    targets = None
    if several_agents(env_id, env_kwargs):
        targets = (shared.baseline_names(env_id)[0], *([shared.SINGLE] if single else []))
    summary = summarize(results, env_id, cfg.dt, cfg.time_limit, labels, targets)
    if targets is not None:
        summary["agents_per_side"] = shared.learned_agents(env_id, env_kwargs)
    if out is not None:
        summary["files"] = {
            k: str(v) for k, v in write_outputs(results, summary, Path(out), seed, extra).items()
        }
    return summary


# ------------------------------------------------------------------ CLI
PROG = "python -m agents.compare"


def add_model_options(p: argparse.ArgumentParser) -> None:
    """``--model`` and ``--env`` of the tools that play a model against the baselines."""
    p.add_argument(
        "--model",
        type=Path,
        default=None,
        help="SB3 model zip (default: the shipped agents/models/<env>_ppo.zip)",
    )
    p.add_argument(
        "--env",
        type=env_arg,
        default=None,
        help=f"{task_names()} (default: read from the model; pursuit if no model)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=PROG,
        description="Compare a learned agent with the scripted agents of its role on the same "
        "seeded episodes (success rate with Wilson CI, times, paired differences).",
    )
    add_model_options(p)
    p.add_argument(
        "--episodes",
        type=positive_int,
        default=DEFAULT_EPISODES,
        help=f"paired episodes per agent (default {DEFAULT_EPISODES})",
    )
    cli.add_seed(p, DEFAULT_SEED, "episode k uses seed SEED + k")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default runs/compare/<env>__<timestamp>)",
    )
    cli.add_device(p, "cpu, fastest for one small network on batched episodes")
    p.add_argument(
        "--no-learned",
        action="store_true",
        help="compare the scripted agents only (no model needed)",
    )
    p.add_argument(
        "--single-model",
        type=Path,
        default=None,
        help="with several learned agents of the role (herding: --set n_dogs=2): a model "
        "trained with one, played alone on the same seeds in the same configuration with "
        "one agent (the row 'single', part of the goal)",
    )
    p.add_argument(
        "--opponent-model",
        type=Path,
        default=None,
        help="team_pursuit: a model of the other role, so learned plays learned (the "
        "cross-play table gets a learned row and a learned column)",
    )
    add_config_option(p)
    return p


class AgentsTable:
    """The ``"agents"`` layout in the one comparison stack (:func:`comparison_of`): one row
    per agent of the learned role (the learned one and the role's baselines), each against
    the task's scripted opponents, for ``agents.compare``, ``agents.render`` and the end of
    a training run."""

    def compare(self, args: Any, prog: str) -> int:
        """``python -m agents.compare``: the table, the paired differences and the files."""
        policy = None
        env_id = args.env  # --env, or the model's (main)
        model_path = None
        if args.opponent_model is not None:
            raise UsageError("--opponent-model is for the team task (--env team_pursuit)")
        if not args.no_learned:
            if args.model is None:
                env_id = env_id or DEFAULT_ENV
                given = config_overrides(args.config, env_id, several=True)
                model_path = default_model_path(env_id, given)
                if not model_path.exists():
                    sets = "".join(f" --set {k}={v}" for k, v in given.items())
                    raise PolicyLoadError(
                        f"no shipped model for {env_id} at {model_path}; train one with "
                        f"`python train.py --env {ENV_SHORT[env_id]}{sets}` and pass --model"
                    )
            else:
                model_path = args.model
                if env_id is None:
                    env_id = read_model_metadata(model_path).get("env_id")
        env_id = env_id or DEFAULT_ENV
        config = played_config(model_path, args.config, env_id, several=True)
        plays_models = model_path is not None or args.single_model is not None
        device = inference_device(args.device) if plays_models else "cpu"
        if model_path is not None:
            policy = load_policy(model_path, env_id, device=device, env_kwargs=config)
            env_id = policy.env_id
        single = None
        if args.single_model is not None:
            if not several_agents(env_id, config):
                raise UsageError(
                    "--single-model is the target of several learned agents of the role "
                    f"(e.g. --set {get_task(env_id).agent_count or 'n_agents'}=2)"
                )
            single = load_policy(
                args.single_model,
                env_id,
                device=device,
                env_kwargs=shared.single_config(env_id, config),
            )
        if plays_models:
            import torch

            torch.set_num_threads(1)  # small MLP, batched episodes: one thread is fastest
        out = args.out or Path("runs") / "compare" / (
            f"{env_tag(env_id)}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        )
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out} exists and is not a folder")
        t0 = time.perf_counter()
        summary = run_comparison(
            env_id,
            policy,
            args.episodes,
            args.seed,
            out,
            env_kwargs=config,
            extra={
                "model": str(policy.path) if policy else None,
                **({"single_model": str(single.path)} if single else {}),
                "config": config,
            },
            single=single,
        )
        print(format_table(summary))
        print(
            f"\n({time.perf_counter() - t0:.1f} s) wrote {out}/comparison.csv, episodes.csv, "
            "comparison.json, survival.png"
        )
        return 0

    def render(self, args: Any, prog: str) -> int:
        """``python -m agents.render``: an episode of one agent, or the learned and the
        classic agent side by side, to a file or a window."""
        from agents.evaluation.episodes import render_gif, watch_episodes
        from steer_env.rendering import check_animation_path

        env_id = args.env or DEFAULT_ENV
        agent = args.agent.strip().lower()
        if args.side_by_side and args.human:
            raise UsageError("--side-by-side writes a file; it cannot be combined with --human")
        if args.side_by_side and agent not in ("learned",):
            raise UsageError("--side-by-side always shows learned vs classic; drop --agent")
        if not args.human:
            check_animation_path(args.out)
        # Several learned agents (the model's configuration or --set) play the task's
        # PettingZoo form, each side one policy for every agent.
        given = played_config(args.model, args.config, env_id, several=True)
        several = several_agents(env_id, given)
        short = shared.agent_name(agent, env_id) if several else canonical_agent(agent, env_id)
        device = inference_device(args.device)
        model = None
        learned = short == "learned" or args.side_by_side
        model_path = (args.model or default_model_path(env_id, given)) if learned else None
        config = played_config(model_path, args.config, env_id, several=True)
        if learned:
            model = load_policy(model_path, env_id, device=device, env_kwargs=config)
            import torch

            torch.set_num_threads(1)
        elif args.model is not None:
            raise UsageError(f"--model is only used with --agent learned (got --agent {agent})")
        if args.human:
            if several:
                raise UsageError("several learned agents are drawn to a file only: drop --human")
            try:
                eps = watch_episodes(
                    env_id, agent, args.seed, model, args.episodes or 1, args.speed,
                    device, env_kwargs=config,
                )  # fmt: skip
            except (PolicyLoadError, UsageError):
                raise
            except Exception as exc:  # no display, pygame missing, ...
                raise UsageError(f"cannot show a window: {type(exc).__name__}: {exc}") from None
            for k, ep in enumerate(eps):
                print(f"{ep.label} on {ENV_SHORT[env_id]} seed {args.seed + k}: {ep.outcome}")
            return 0
        if args.episodes is not None or args.speed != 1.0:
            raise UsageError("--episodes and --speed are for the window: add --human")
        path, eps = render_gif(
            env_id,
            args.out,
            agent,
            model,
            args.seed,
            args.side_by_side,
            args.width,
            args.fps,
            device,
            env_kwargs=config,
        )
        for ep in eps:
            print(f"{ep.label} on {ENV_SHORT[env_id]} seed {args.seed}: {ep.outcome}")
        print(f"wrote {path}")
        return 0

    def final(
        self, env_id: str, model_path: Path, opts: dict[str, Any], paths: Any, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """The end of a training run: the table of the trained agent against the baselines
        and the side-by-side GIF; what ``config.json`` records as ``comparison``."""
        from agents.evaluation.episodes import render_gif

        t1 = time.perf_counter()
        config = played_config(model_path, None, env_id, several=True)
        policy = load_policy(model_path, env_id, device="cpu", env_kwargs=config)
        summary = run_comparison(
            env_id,
            policy,
            int(opts["eval_episodes"]),
            int(opts["compare_seed"]),
            paths.root,
            env_kwargs=config,
            extra={**extra, "config": config},
        )
        print()
        print(format_table(summary))
        compare_s = time.perf_counter() - t1
        if opts["gif"]:
            render_gif(env_id, paths.gif, model=policy, seed=int(opts["compare_seed"]), side=True,
                       env_kwargs=config)  # fmt: skip
        return {
            "episodes": summary["episodes"],
            "seed": int(opts["compare_seed"]),
            "wall_s": round(compare_s, 2),
            "goal": summary["goal"],
            "agents": {
                k: {
                    "success_rate": v["success_rate"],
                    "success_ci95": v["success_ci95"],
                    "restricted_mean_time_s": v["restricted_mean_time_s"],
                }
                for k, v in summary["agents"].items()
            },
            "paired_vs_learned": summary["paired_vs_learned"],
        }


#: The comparison layouts, by the name a task's ``metrics.layout`` gives.
LAYOUTS: dict[str, Any] = {"agents": AgentsTable(), "cross_play": CrossPlay()}
#: The task of the commands when neither ``--env`` nor a model names one.
DEFAULT_ENV = "steer_env/Pursuit-v0"


def task_of(env: str | None) -> Any:
    """The registry's task named by ``env`` (a short name or an env id); the default task
    when ``env`` is None or names none (its layout then reports the unknown env)."""
    for task in REGISTRY.values():
        if env is not None and env in (task.name, task.env_id):
            return task
    return get_task(DEFAULT_ENV)


def comparison_of(env: str | None) -> Any:
    """The comparison layout of the task ``env`` (:func:`task_of`): an object with
    ``compare(args, prog)`` and ``render(args, prog)`` (the commands) and ``final(env,
    model_path, opts, paths, extra)`` (the end of a training run)."""
    return LAYOUTS[task_of(env).metrics.layout]


def model_env(args: Any) -> str | None:
    """The task of a command: ``--env``, else the one ``--model`` was trained on (None when
    neither says)."""
    if args.env is None and args.model is not None:
        meta = read_model_metadata(args.model)
        return meta.get("env_id") or meta.get("team_task")
    return args.env


#: What a resumable command (a league) says on Ctrl-C.
RESUMABLE_INTERRUPT = "interrupted; run the same command again to continue"


def run_tool(prog: str, command: Callable[[], int], interrupted: str = "interrupted") -> int:
    """``command()`` of a tool that plays models, its failures as one line on stderr: exit
    status 2 for a usage mistake, 1 for a model that cannot be used or a file error, 130
    for Ctrl-C (after ``prog: interrupted``)."""
    try:
        return command()
    except (PolicyLoadError, UsageError) as exc:
        return cli.fail(prog, exc, 2 if isinstance(exc, UsageError) else 1)
    except ImportError as exc:
        return cli.fail(prog, f'{exc}; install: pip install -e ".[train]"')
    except OSError as exc:
        return cli.fail(prog, exc)
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def command() -> int:
        args.env = model_env(args)
        return comparison_of(args.env).compare(args, PROG)

    return run_tool(PROG, command)


if __name__ == "__main__":
    sys.exit(main())
