"""The cross-play layout of ``agents.compare`` and ``agents.render`` (a task whose
``metrics.layout`` is ``"cross_play"``, the team pursuit task): every pursuer team against
every evader.

    python -m agents.compare --env team_pursuit --model runs/<run>/model.zip
    python -m agents.compare --env team_pursuit --no-learned       # scripted teams only
    python -m agents.render --env team_pursuit --model runs/<run>/model.zip --side-by-side

A *side* is a scripted strategy of the task's registry entry (pursuer teams ``reynolds``
and ``cooperative``, the ``flow`` evader) or a learned policy of that role (a shared
policy: every agent of the role acts with it, each from its own observation). Every pair
(pursuer team, evader) plays the same ``n`` episodes: episode ``k`` starts from seed
``seed + k`` (one native batch, :func:`steer_env.envs.team_pursuit_v0.vector_env`, with
``num_envs = n`` and ``reset(seed=seed)``).

Reported per pair: the capture rate (every evader captured by the time limit ``H``) with
its 95% Wilson interval, the restricted mean time to capture ``mean(min(T, H))``, the mean
time among captured episodes and the Kaplan-Meier median; for a learned team, the paired
difference with each scripted team against the same evader (Newcombe's interval for paired
proportions, paired t for times). Writes ``comparison.csv`` (one row per pair),
``episodes.csv`` and ``comparison.json`` (with the goal check) to ``--out``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import stats
from agents.evaluation.frames import DEFAULT_WIDTH, captioned, write_gif
from agents.evaluation.frames import side_by_side as join
from agents.evaluation.policies import (
    METADATA_KEY,
    LearnedPolicy,
    PolicyLoadError,
    UsageError,
    algo_class,
    config_overrides,
    infer_algo,
    inference_device,
    models_dir,
    read_data_json,
)
from agents.evaluation.results import EpisodeResults, atomic_write_json, csv_bytes, format_interval
from steer_env import cli
from steer_env.tasks import TEAM_TASKS

TASK = TEAM_TASKS["team_pursuit"]
#: The name ``--env`` takes for the team task (and the ``env_id`` its models record).
ENV_NAME = TASK.name
ROLES = ("pursuer", "evader")
#: ``TeamConfig.learned`` value that makes ``role`` the learned one.
LEARNED_ROLE = {"pursuer": "pursuers", "evader": "evaders"}
#: The goal for a learned team against the classic (flow) evader (the task's metrics).
GOAL = TASK.metrics.goal


def default_model_path(role: str = "pursuer") -> Path:
    """The shipped shared-parameter PPO model of ``role``:
    ``agents/models/team_pursuit_<role>_ppo.zip``."""
    return models_dir() / f"{ENV_NAME}_{role}_ppo.zip"


#: The configuration names that the commands' role options (``--learned``, ``--agent``,
#: ``--opponent-model``, ``--opponent-strategy``) set, so not ``--set``.
ROLE_CHOICE = ("learned", "pursuer_strategy", "evader_strategy")


def team_overrides(pairs: Any) -> dict[str, Any]:
    """The team task's ``--set KEY=VALUE`` configuration (:func:`config_overrides`), the
    roles' choice excepted (:class:`UsageError`)."""
    overrides = config_overrides(pairs, ENV_NAME)
    for key in ROLE_CHOICE:
        if key in overrides:
            raise UsageError(
                f"--set {key}: the roles are chosen with --learned, --agent, --opponent-model "
                "and --opponent-strategy"
            )
    return overrides


# ----------------------------------------------------------------------- policies
def load_team_policy(
    path: str | os.PathLike[str] | None,
    role: str | None = None,
    device: str = "cpu",
    config: dict[str, Any] | None = None,
) -> LearnedPolicy:
    """A shared policy of the team task from a ``train.py --env team_pursuit`` model zip.

    ``role`` (``"pursuer"``/``"evader"``), when given, must be the model's;
    :class:`PolicyLoadError` (one line) for a missing or corrupt file, a model of another
    env or role, or one whose observation length does not fit the task built with
    ``config``. The policy has ``role`` and ``config`` (the configuration it was trained
    with) attributes."""
    p = Path(path) if path is not None else default_model_path(role or "pursuer")
    if p.is_dir():  # an RLlib checkpoint of train.py --framework rllib --env team_pursuit
        from agents.rllib.policy import load_rllib_policy, read_rllib_metadata

        modules = [str(m) for m in read_rllib_metadata(p).get("modules", [])]
        module = role or ("pursuer" if "pursuer" in modules else (modules or ["pursuer"])[0])
        policy = load_rllib_policy(p, ENV_NAME, device=device, module=module)
        policy.role = module
        policy.config = {}
        return policy
    data = read_data_json(p)
    meta = data.get(METADATA_KEY)
    meta = dict(meta) if isinstance(meta, dict) else {}
    trained_on = meta.get("env_id")
    if trained_on != ENV_NAME:
        raise PolicyLoadError(
            f"{p} was trained on {trained_on or 'an unknown env'}, not {ENV_NAME} (train one "
            f"with `python train.py --env {ENV_NAME}`)"
        )
    model_role = meta.get("role")
    if model_role not in ROLES:
        raise PolicyLoadError(f"{p} does not say which role it plays (pursuer or evader)")
    if role is not None and role != model_role:
        raise PolicyLoadError(f"{p} is a {model_role} policy, not a {role} one")
    trained_config = dict(meta.get("config") or {})
    cfg = {**trained_config, **(config or {})}
    expected = observation_length(cfg)
    shape = meta.get("obs_shape")
    if shape is not None and list(shape) != [expected]:
        raise PolicyLoadError(
            f"{p} observes {shape[0]} values; the team task with {cfg or 'defaults'} gives "
            f"{expected} (a model for other team sizes?)"
        )
    algo = str(meta.get("algo") or infer_algo(data) or "ppo")
    try:
        model = algo_class(algo).load(p, device=device)
    except Exception as exc:  # torch/zip errors from a damaged file
        raise PolicyLoadError(f"{p}: cannot load the {algo.upper()} model: {exc}") from None
    policy = LearnedPolicy(model, ENV_NAME, p, meta)
    policy.role = model_role
    policy.config = trained_config
    return policy


def observation_length(config: dict[str, Any] | None = None) -> int:
    """Observation length of every agent of the team task with ``config``."""
    cfg = TASK.config(**(config or {}))
    return TASK.world(cfg).obs_dim


# ----------------------------------------------------------------------- playing
Side = Any  # a scripted strategy name (str) or a policy with predict()


def _learned_value(pursuers: Side, evaders: Side) -> str:
    p, e = not isinstance(pursuers, str), not isinstance(evaders, str)
    return {(False, False): "none", (True, False): "pursuers", (False, True): "evaders"}.get(
        (p, e), "both"
    )


class Match:
    """``num_envs`` environments of the pursuer team ``pursuers`` against ``evaders`` (each a
    strategy name, run by the engine, or a policy): :attr:`venv` is the native batch with
    the scripted sides configured, :meth:`actions` the learned sides' deterministic
    actions, each agent from its own observation."""

    def __init__(
        self,
        pursuers: Side,
        evaders: Side,
        num_envs: int,
        config: dict[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        from steer_env.envs.team_vector import TeamPursuitVectorEnv

        kwargs = dict(config or {})
        kwargs["learned"] = _learned_value(pursuers, evaders)
        if isinstance(pursuers, str):
            kwargs["pursuer_strategy"] = pursuers
        if isinstance(evaders, str):
            kwargs["evader_strategy"] = evaders
        try:
            self.venv = TeamPursuitVectorEnv(num_envs, render_mode=render_mode, **kwargs)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self._acting = [
            (policy, np.flatnonzero(self.venv.agent_team == code))
            for policy, code in (
                (pursuers, self.venv.batch.team_code("pursuer")),
                (evaders, self.venv.batch.team_code("evader")),
            )
            if not isinstance(policy, str)
        ]

    def actions(self, obs: np.ndarray) -> np.ndarray:
        """``(E, k, 2)`` actions of the learned agents for observations ``(E, k, obs_dim)``."""
        venv = self.venv
        act = np.zeros((venv.num_envs, venv.n_agents, 2))
        for policy, idx in self._acting:
            a, _ = policy.predict(obs[:, idx].reshape(-1, venv.obs_dim), deterministic=True)
            act[:, idx] = np.asarray(a, dtype=np.float64).reshape(venv.num_envs, idx.size, 2)
        return act


def play_team_episodes(
    pursuers: Side,
    evaders: Side,
    episodes: int,
    seed: int,
    config: dict[str, Any] | None = None,
) -> EpisodeResults:
    """Episode ``k = 0..episodes-1`` from seed ``seed + k`` of the pursuer team ``pursuers``
    against ``evaders`` (each a strategy name or a policy, deterministic actions), the first
    episode of each environment recorded. ``success``: every evader captured."""
    match = Match(pursuers, evaders, episodes, config)
    venv = match.venv
    n = episodes
    obs, _ = venv.reset(seed=seed)
    done = np.zeros(n, dtype=bool)
    captured = np.zeros(n, dtype=bool)
    capture_step = np.full(n, -1, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    for _ in range(venv.config.time_limit + 1):
        obs, _, _, _, info = venv.step(match.actions(obs))
        length[~done] += 1
        ended = info["done"] & ~done
        if ended.any():
            steps = info["capture_step"][ended]
            all_caught = (steps >= 0).all(axis=1)
            captured[ended] = all_caught
            capture_step[ended] = np.where(all_caught, steps.max(axis=1), -1)
            done |= ended
        if done.all():
            break
    if not done.all():  # cannot happen: every episode ends by the time limit
        raise RuntimeError("some episodes did not end within the time limit")
    return EpisodeResults(captured.copy(), captured, capture_step, length)


# ----------------------------------------------------------------------- the table
@dataclass
class Entry:
    """One row or column of the cross-play table."""

    name: str
    side: Side
    label: str


def sides(role: str, learned: dict[str, Any] | None = None) -> list[Entry]:
    """The scripted sides of ``role`` in the registry's order, then the learned ones
    (``name -> policy``; a single one is usually called ``"learned"``)."""
    plural = "s" if role == "pursuer" else ""
    entries = [Entry(n, n, f"{n} {role}{plural}") for n in TASK.baselines[role]]
    for name, policy in (learned or {}).items():
        algo = str(getattr(policy, "algo", "")).upper()
        label = f"{name} {role}s" if name == "learned" else f"{name} ({role}s)"
        entries.append(Entry(name, policy, f"{label} ({algo})" if algo else label))
    return entries


def run_team_comparison(
    pursuer_policy: Any,
    evader_policy: Any,
    episodes: int,
    seed: int,
    out: Path | None,
    config: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Play every pursuer team against every evader on the same seeds, summarise, and
    write the outputs into ``out`` (when given). Returns the summary.

    ``pursuer_policy`` / ``evader_policy``: ``None``, one policy (named ``"learned"``) or a
    dict ``name -> policy`` of learned sides (a league's rounds)."""

    def named(policy: Any) -> dict[str, Any]:
        if policy is None:
            return {}
        return dict(policy) if isinstance(policy, dict) else {"learned": policy}

    config = dict(config or {})
    cfg = TASK.config(**config)
    dt, horizon = cfg.dt, cfg.time_limit * cfg.dt
    rows = sides("pursuer", named(pursuer_policy))
    cols = sides("evader", named(evader_policy))
    results = {
        (r.name, c.name): play_team_episodes(r.side, c.side, episodes, seed, config)
        for r in rows
        for c in cols
    }
    times = {}
    cells: dict[str, dict[str, Any]] = {}
    for (rn, cn), res in results.items():
        t = np.where(res.captured, res.capture_step * dt, horizon)
        times[rn, cn] = stats.restricted_times(t, res.captured, horizon)
        rate = stats.wilson_interval(int(res.captured.sum()), episodes)
        cells[f"{rn} vs {cn}"] = {
            "pursuers": rn,
            "evader": cn,
            "episodes": episodes,
            "captures": int(res.captured.sum()),
            "capture_rate": rate.mean,
            "capture_ci95": [rate.lo, rate.hi],
            "restricted_mean_time_s": float(times[rn, cn].mean()),
            "mean_time_captured_s": stats.event_mean(t, res.captured),
            "median_time_s": stats.survival_median(t, res.captured, horizon),
        }

    def compare(key: tuple[str, str], ref: tuple[str, str]) -> None:
        s = stats.paired_proportion_difference(
            results[key].captured.astype(float), results[ref].captured.astype(float)
        )
        d = stats.paired_difference(times[key], times[ref])
        paired[f"{key[0]} vs {key[1]} - {ref[0]} vs {ref[1]}"] = {
            "capture_diff": s.mean,
            "capture_diff_ci95": [s.lo, s.hi],
            "time_diff_s": d.mean,
            "time_diff_ci95_s": [d.lo, d.hi],
        }

    # Each learned side minus each scripted side of its role, against the same opponent.
    paired: dict[str, Any] = {}
    scripted_rows = [r for r in rows if isinstance(r.side, str)]
    scripted_cols = [c for c in cols if isinstance(c.side, str)]
    for r in rows:
        if not isinstance(r.side, str):
            for c in cols:
                for ref in scripted_rows:
                    compare((r.name, c.name), (ref.name, c.name))
    for c in cols:
        if not isinstance(c.side, str):
            for r in rows:
                for ref in scripted_cols:
                    compare((r.name, c.name), (r.name, ref.name))
    goal: dict[str, Any] = {}
    classic = TASK.baselines["evader"][0]
    key = f"learned vs {classic} - cooperative vs {classic}"
    if key in paired:
        cell = cells[f"learned vs {classic}"]
        p = paired[key]
        goal = {
            "criterion": (
                f"learned team vs the {classic} evader: capture rate >= "
                f"{GOAL['capture_rate']:.0%} with Wilson lower bound >= "
                f"{GOAL['wilson_lower']:.0%}, "
                f">= {GOAL['points_above_cooperative'] * 100:.0f} points above the cooperative "
                "team (paired 95% interval above 0), shorter restricted mean time to capture"
            ),
            "rate": cell["capture_rate"] >= GOAL["capture_rate"],
            "wilson_lower": cell["capture_ci95"][0] >= GOAL["wilson_lower"],
            "above_cooperative": p["capture_diff"] >= GOAL["points_above_cooperative"]
            and p["capture_diff_ci95"][0] > 0,
            "faster": p["time_diff_ci95_s"][1] < 0,
        }
        goal["met"] = all(goal[k] for k in ("rate", "wilson_lower", "above_cooperative", "faster"))
    summary = {
        "env": ENV_NAME,
        "config": config,
        "episodes": episodes,
        "seed": seed,
        "horizon_s": horizon,
        "dt_s": dt,
        "success_means": TASK.metrics.success_means,
        "pursuer_teams": {r.name: r.label for r in rows},
        "evaders": {c.name: c.label for c in cols},
        "cells": cells,
        "paired": paired,
        "ci_methods": {
            "capture_rate": "Wilson score 95%",
            "paired_capture_difference": "Newcombe's hybrid score 95% for paired proportions",
            "paired_time_difference": "paired t 95% on per-episode restricted times",
        },
        "goal": goal,
        **(extra or {}),
    }
    if out is not None:
        write_team_outputs(results, summary, Path(out))
    return summary


def write_team_outputs(
    results: dict[tuple[str, str], EpisodeResults], summary: dict[str, Any], out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "pursuers": c["pursuers"],
            "evader": c["evader"],
            "episodes": c["episodes"],
            "captures": c["captures"],
            "capture_rate": c["capture_rate"],
            "capture_ci95_lo": c["capture_ci95"][0],
            "capture_ci95_hi": c["capture_ci95"][1],
            "restricted_mean_time_s": c["restricted_mean_time_s"],
            "mean_time_captured_s": c["mean_time_captured_s"],
            "median_time_s": c["median_time_s"],
        }
        for c in summary["cells"].values()
    ]
    seed, dt = summary["seed"], summary["dt_s"]
    episodes = [
        {
            "pursuers": rn,
            "evader": cn,
            "episode": k,
            "seed": seed + k,
            "captured": int(r.captured[k]),
            "capture_step": int(r.capture_step[k]),
            "time_s": round(float(r.capture_step[k] * dt), 6) if r.captured[k] else "",
        }
        for (rn, cn), r in results.items()
        for k in range(r.captured.size)
    ]
    cli.atomic_write_bytes(out / "comparison.csv", csv_bytes(rows))
    cli.atomic_write_bytes(out / "episodes.csv", csv_bytes(episodes))
    atomic_write_json(out / "comparison.json", summary)


def format_team_table(summary: dict[str, Any]) -> str:
    """The cross-play table: rows pursuer teams, columns evaders; each cell the capture rate
    [95% Wilson interval] and the restricted mean time to capture."""
    cols = list(summary["evaders"])
    header = ["pursuers \\ evader", *(summary["evaders"][c] for c in cols)]
    lines = []
    for rn, label in summary["pursuer_teams"].items():
        row = [label]
        for cn in cols:
            c = summary["cells"][f"{rn} vs {cn}"]
            rate = stats.Interval(c["capture_rate"], *c["capture_ci95"])
            row.append(f"{format_interval(rate, 100)}%  {c['restricted_mean_time_s']:.1f} s")
        lines.append(row)
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    text = [
        f"{TASK.metrics.labels['title']}: {TASK.metrics.labels['rate']} rate [95% Wilson] and "
        f"restricted mean {TASK.metrics.time_means} "
        f"(limit {summary['horizon_s']:g} s), {summary['episodes']} paired episodes from seed "
        f"{summary['seed']}",
        fmt.format(*header),
        *(fmt.format(*r) for r in lines),
    ]
    for name, p in summary["paired"].items():
        s = stats.Interval(p["capture_diff"], *p["capture_diff_ci95"])
        d = stats.Interval(p["time_diff_s"], *p["time_diff_ci95_s"])
        text.append(
            f"paired {name}: capture {format_interval(s, 100, sign=True)} points, "
            f"time {format_interval(d, 1, 2, sign=True)} s"
        )
    if summary["goal"]:
        g = summary["goal"]
        text.append(f"goal ({g['criterion']}): {'met' if g['met'] else 'NOT met'}")
    return "\n".join(text)


# ----------------------------------------------------------------------- rendering
def render_team_animation(
    out: str | os.PathLike[str],
    pursuers: Side,
    evaders: Side = "flow",
    seed: int = 0,
    side_by_side: Side | None = None,
    width: int | None = None,
    fps: float = 10.0,
    config: dict[str, Any] | None = None,
) -> tuple[Path, list[str]]:
    """One episode of ``pursuers`` vs ``evaders`` from ``seed`` (and, with
    ``side_by_side``, that pursuer team on the same seed next to it) written to ``out``
    (GIF, MP4 or PNG by extension). Returns the path and one outcome line per episode."""
    from steer_env.rendering import check_animation_path

    check_animation_path(out)
    width = DEFAULT_WIDTH if width is None else width
    played = []
    for team in [pursuers] + ([side_by_side] if side_by_side is not None else []):
        match = Match(team, evaders, 1, config, render_mode="rgb_array")
        venv = match.venv
        obs, _ = venv.reset(seed=seed)
        frames = [venv.render()[0]]
        info: dict[str, Any] = {}
        for _ in range(venv.config.time_limit):
            obs, _, _, _, info = venv.step(match.actions(obs))
            frames.append(venv.render()[0])
            if info["done"][0]:
                break
        venv.close()
        steps = info["capture_step"][0]
        label = f"{team if isinstance(team, str) else 'learned'} team vs " + (
            evaders if isinstance(evaders, str) else "learned evader"
        )
        outcome = (
            f"captured at {steps.max() * venv.config.dt:.1f} s"
            if (steps >= 0).all()
            else f"escaped ({venv.config.time_limit * venv.config.dt:g} s)"
        )
        played.append(
            (captioned(frames, label, f"{label}: {outcome}", width), f"{label}: {outcome}")
        )
    frames = played[0][0] if len(played) == 1 else join(played[0][0], played[1][0])
    return write_gif(frames, out, fps), [line for _, line in played]


# ----------------------------------------------------------------------- commands
def compare_main(args: Any, prog: str) -> int:
    """``python -m agents.compare --env team_pursuit``: the cross-play table (errors are
    handled by the caller's one-line reporting)."""
    import time
    from datetime import datetime

    policies: dict[str, LearnedPolicy] = {}
    if getattr(args, "single_model", None) is not None:
        raise UsageError("--single-model is for several learned agents of one role")
    overrides = team_overrides(args.config)
    if not args.no_learned:
        device = inference_device(args.device)
        path = args.model
        if path is None:
            path = default_model_path("pursuer")
            if not path.exists():
                raise PolicyLoadError(
                    f"no shipped team model at {path}; train one with `python train.py --env "
                    f"{ENV_NAME}` and pass --model, or compare the scripted teams (--no-learned)"
                )
        first = load_team_policy(path, device=device, config=overrides)
        policies[first.role] = first
        if Path(path).is_dir() and args.opponent_model is None:
            from agents.rllib.policy import read_rllib_metadata

            for module in read_rllib_metadata(path).get("modules", []):
                if module not in policies:  # learned="both": both roles in one checkpoint
                    policies[module] = load_team_policy(
                        path, module, device=device, config=overrides
                    )
        if args.opponent_model is not None:
            other = "evader" if first.role == "pursuer" else "pursuer"
            policies[other] = load_team_policy(
                args.opponent_model, other, device=device, config=overrides
            )
        import torch

        torch.set_num_threads(1)
    elif args.model is not None or args.opponent_model is not None:
        raise UsageError("--no-learned compares the scripted teams: drop --model")
    out = args.out or Path("runs") / "compare" / (
        f"{ENV_NAME}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder")
    config = dict(next(iter(policies.values())).config) if policies else {}
    config.pop("learned", None)
    config.update(overrides)
    t0 = time.perf_counter()
    summary = run_team_comparison(
        policies.get("pursuer"),
        policies.get("evader"),
        args.episodes,
        args.seed,
        out,
        config=config,
        extra={"models": {role: str(p.path) for role, p in policies.items()}},
    )
    print(format_team_table(summary))
    print(
        f"\n({time.perf_counter() - t0:.1f} s) wrote {out}/comparison.csv, episodes.csv, "
        "comparison.json"
    )
    return 0


def final_team_comparison(
    model_path: Path, opts: dict[str, Any], paths: Any, opponent: LearnedPolicy | None = None
) -> dict[str, Any]:
    """The end of a ``train.py --env team_pursuit`` run (called by
    :func:`agents.training.run.final_comparison`, which handles Ctrl-C and the run status): the
    cross-play table of the trained team (or evader) against the scripted sides (and
    ``opponent``, the frozen model it trained against) and the side-by-side GIF. Returns
    what the run's ``config.json`` records as ``comparison`` (without the wall time)."""
    policy = load_team_policy(model_path, device="cpu")
    learned = {policy.role: policy}
    if opponent is not None:
        learned[opponent.role] = opponent
    summary = run_team_comparison(
        learned.get("pursuer"),
        learned.get("evader"),
        int(opts["eval_episodes"]),
        int(opts["compare_seed"]),
        paths.root,
        config=policy.config,
        extra={"model": str(model_path)},
    )
    print()
    print(format_team_table(summary))
    if opts["gif"]:
        seed = int(opts["compare_seed"])
        if policy.role == "pursuer":
            render_team_animation(
                paths.gif, policy, "flow", seed, "cooperative", config=policy.config
            )
        else:
            render_team_animation(paths.gif, "cooperative", policy, seed, config=policy.config)
    return {key: summary[key] for key in ("episodes", "seed", "cells", "paired", "goal")}


def team_slots(opts: dict[str, Any]) -> int:
    """Agents of the trained role per environment (``train.py``'s ``--learned``, with its
    ``--set`` configuration)."""
    cfg = TASK.config(**(opts.get("config") or {}))
    return cfg.n_evaders if opts.get("learned") == "evaders" else cfg.n_pursuers


def render_main(args: Any) -> int:
    """``python -m agents.render --env team_pursuit``: an episode of a pursuer team against
    an evader; ``--agent`` is ``learned`` (``--model``: a pursuer or evader team model) or a
    scripted pursuer team; ``--side-by-side`` puts the cooperative team on the same seed
    next to the learned pursuers (or, for a learned evader, the classic evader against the
    same team)."""

    agent = args.agent.strip().lower()
    scripted = TASK.baselines["pursuer"]
    overrides = team_overrides(args.config)
    if args.human:
        raise UsageError("--human is not available for team_pursuit: write a file (--out)")
    if agent != "learned" and agent not in scripted:
        raise UsageError(
            f"unknown agent {args.agent!r} for {ENV_NAME}: use learned or a scripted pursuer "
            f"team ({', '.join(scripted)})"
        )
    if agent != "learned" and (args.model is not None or args.side_by_side):
        raise UsageError("--model and --side-by-side need --agent learned")
    if agent == "learned":
        path = args.model or default_model_path("pursuer")
        if args.model is None and not path.exists():
            raise PolicyLoadError(
                f"no shipped team model at {path}; pass --model runs/<run>/model.zip "
                f"(python train.py --env {ENV_NAME}) or a scripted team (--agent cooperative)"
            )
        policy = load_team_policy(path, device=inference_device(args.device), config=overrides)
        config = {**policy.config, **overrides}
        import torch

        torch.set_num_threads(1)
        if policy.role == "pursuer":
            pursuers, evaders = policy, "flow"
            other = "cooperative" if args.side_by_side else None
            path, lines = render_team_animation(
                args.out,
                pursuers,
                evaders,
                args.seed,
                other,
                args.width,
                args.fps,
                config,
            )
        else:
            path, lines = render_team_animation(
                args.out,
                "cooperative",
                policy,
                args.seed,
                None,
                args.width,
                args.fps,
                config,
            )
    else:
        path, lines = render_team_animation(
            args.out, agent, "flow", args.seed, None, args.width, args.fps, overrides
        )
    for line in lines:
        print(f"{line} (seed {args.seed})")
    print(f"wrote {path}")
    return 0


def check_opponent_strategy(
    learned: str, name: str | None, opponent_model: str | None
) -> str | None:
    """``train.py --opponent-strategy``: a registered strategy of the role not trained
    (:class:`UsageError` otherwise), or ``None`` for the task's default."""
    if name is None:
        return None
    if opponent_model is not None:
        raise UsageError("give --opponent-model or --opponent-strategy, not both")
    other = "pursuer" if learned == "evaders" else "evader"
    key = name.strip().lower()
    if key not in TASK.baselines[other]:
        raise UsageError(
            f"--opponent-strategy {name!r} is not a scripted {other} strategy of {ENV_NAME}: "
            f"use {', '.join(TASK.baselines[other])}"
        )
    return key


class CrossPlay:
    """The cross-play layout in the one comparison stack
    (:func:`agents.evaluation.compare.comparison_of`): what ``agents.compare``,
    ``agents.render`` and the end of a training run do for a task whose
    ``metrics.layout`` is ``"cross_play"``."""

    def compare(self, args: Any, prog: str) -> int:
        """``python -m agents.compare``: the cross-play table."""
        return compare_main(args, prog)

    def render(self, args: Any, prog: str) -> int:
        """``python -m agents.render``: an episode of a pursuer team against an evader."""
        return render_main(args)

    def final(
        self, env_id: str, model_path: Path, opts: dict[str, Any], paths: Any, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """The end of a training run: the cross-play table of the trained side (and the GIF);
        what ``config.json`` records as ``comparison``."""
        import time

        t1 = time.perf_counter()
        record = final_team_comparison(model_path, opts, paths, opponent=extra.get("opponent"))
        return {**record, "wall_s": round(time.perf_counter() - t1, 2)}
