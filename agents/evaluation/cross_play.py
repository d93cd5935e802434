"""The cross-play layout of ``agents.compare`` and ``agents.render``, for a task whose
``metrics.layout`` is ``"cross_play"`` (the team pursuit task): every side of the task's
first role (the table's rows, team pursuit's pursuer teams) against every side of its second
(the columns, the evaders).

    python -m agents.compare --env team_pursuit --model runs/<run>/model.zip
    python -m agents.compare --env team_pursuit --no-learned       # scripted teams only
    python -m agents.render --env team_pursuit --model runs/<run>/model.zip --side-by-side

Everything here reads the task's registry entry: its two roles and their words
(``task.roles``, :class:`steer_env.tasks.Role`), the ``learned`` configuration value of each
set of learned roles (``task.learned_values``), its scripted strategies per role
(``task.baselines``) and its metrics. A function takes the task as ``task`` (an entry or a
name); a command takes it from ``--env`` or from the model's metadata.

A *side* is a scripted strategy of the task's registry entry (team pursuit: pursuer teams
``reynolds`` and ``cooperative``, the ``flow`` evader) or a learned policy of that role (a
shared policy: every agent of the role acts with it, each from its own observation). Every
pair (row side, column side) plays the same ``n`` episodes: episode ``k`` starts from seed
``seed + k`` (one native batch, :class:`steer_env.envs.team_vector.TeamVectorEnv` of the
task, with ``num_envs = n`` and ``reset(seed=seed)``).

Reported per pair: the capture rate (every evader captured by the time limit ``H``) with
its 95% Wilson interval, the restricted mean time to capture ``mean(min(T, H))``, the mean
time among captured episodes and the Kaplan-Meier median; for a learned side, the paired
difference with each scripted side of its role against the same opponent (Newcombe's
interval for paired proportions, paired t for times). Writes ``comparison.csv`` (one row per
pair), ``episodes.csv`` and ``comparison.json`` (with the goal check) to ``--out``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
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
from steer_env.tasks import REGISTRY, Role, TaskSpec


def _renamed_keywords(**renamed: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Accept the keyword arguments that were renamed (old name -> new name) for a release,
    with a ``DeprecationWarning`` naming the new one."""
    import functools

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__qualname__}: give {new}= only (not {old}=)")
                    warnings.warn(
                        f"{func.__qualname__}'s {old}= is now {new}=",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return call

    return wrap


_SIDES = {"pursuers": "rows", "evaders": "cols"}


#: The task of the functions here when they are given none (a name of the registry, looked
#: up when called).
DEFAULT_TASK = "team_pursuit"

#: A task as the functions here take it: a registry entry, a task's name, or ``None`` for
#: :data:`DEFAULT_TASK`.
TaskLike = TaskSpec | str | None


# ----------------------------------------------------------------------- the task
def cross_play_names() -> list[str]:
    """The registered tasks whose comparison is the cross-play table, in registry order."""
    return [name for name, t in REGISTRY.items() if t.metrics.layout == "cross_play"]


def cross_play_task(task: TaskLike = None) -> Any:
    """The registry entry of a task with the cross-play layout: ``task`` itself, the task
    named ``task``, or the default one (:data:`DEFAULT_TASK`) for ``None``;
    :class:`UsageError` naming the accepted tasks for any other."""
    task = DEFAULT_TASK if task is None else task
    entry = task if isinstance(task, TaskSpec) else REGISTRY.get(str(task).strip().lower())
    if entry is None or entry.metrics.layout != "cross_play":
        name = getattr(task, "name", task)
        raise UsageError(
            f"env {name!r} has no cross-play table: use {', '.join(cross_play_names())}"
        )
    return entry


def cross_play_env_arg(text: str) -> str:
    """An argparse ``type`` for ``--env`` of the commands that only play cross-play tasks
    (the league's): the task's name."""
    import argparse

    key = text.strip().lower()
    if key not in cross_play_names():
        raise argparse.ArgumentTypeError(
            f"{text!r} has no cross-play table: use {', '.join(cross_play_names())}"
        )
    return key


def role_names(task: TaskLike = None) -> tuple[str, str]:
    """The task's two roles, rows then columns of its table (``("pursuer", "evader")``)."""
    first, second = cross_play_task(task).roles
    return first.name, second.name


def role_of(name: str, task: TaskLike = None) -> Role:
    """The task's role ``name`` and its words (``ValueError`` for another name)."""
    roles = cross_play_task(task).roles
    for role in roles:
        if role.name == name:
            return role
    raise ValueError(f"role must be one of {', '.join(r.name for r in roles)}, got {name!r}")


def other_role(name: str, task: TaskLike = None) -> str:
    """The task's role that is not ``name``."""
    first, second = role_names(task)
    role_of(name, task)
    return second if name == first else first


def learned_of(role: str, task: TaskLike = None) -> str:
    """The ``learned`` configuration value that makes ``role`` the learned one alone
    (team pursuit: ``"pursuers"`` for ``"pursuer"``)."""
    role_of(role, task)
    return cross_play_task(task).learned_values[(role,)]


def learned_value(rows: Side, cols: Side, task: TaskLike = None) -> str:
    """The ``learned`` configuration value when ``rows`` and ``cols`` (the sides of the
    task's two roles) play: the roles whose side is a policy are learned."""
    entry = cross_play_task(task)
    learned = tuple(
        role.name
        for role, side in zip(entry.roles, (rows, cols), strict=True)
        if not isinstance(side, str)
    )
    return entry.learned_values[learned]


def role_choice(task: TaskLike = None) -> tuple[str, ...]:
    """The configuration names that the commands' role options (``--learned``,
    ``--agent``, ``--opponent-model``, ``--opponent-strategy``) set, so not ``--set``."""
    return ("learned", *(role.strategy_key for role in cross_play_task(task).roles))


def default_model_path(role: str | None = None, task: TaskLike = None) -> Path:
    """The shipped shared-parameter PPO model of ``role`` (by default the task's first):
    ``agents/models/<task>_<role>_ppo.zip``."""
    entry = cross_play_task(task)
    role = entry.roles[0].name if role is None else role
    return models_dir() / f"{entry.name}_{role}_ppo.zip"


def team_overrides(pairs: Any, task: TaskLike = None) -> dict[str, Any]:
    """The task's ``--set KEY=VALUE`` configuration (:func:`config_overrides`), the
    roles' choice excepted (:class:`UsageError`)."""
    entry = cross_play_task(task)
    overrides = config_overrides(pairs, entry.name)
    for key in role_choice(entry):
        if key in overrides:
            raise UsageError(
                f"--set {key}: the roles are chosen with --learned, --agent, --opponent-model "
                "and --opponent-strategy"
            )
    return overrides


# ----------------------------------------------------------------------- policies
def model_task(path: str | os.PathLike[str]) -> Any:
    """The cross-play task a model zip or RLlib checkpoint of ``train.py`` was trained on
    (its metadata's ``env_id``, or ``team_task`` for a checkpoint); :class:`PolicyLoadError`
    when it names none."""
    p = Path(path)
    if p.is_dir():
        from agents.rllib.policy import read_rllib_metadata

        trained_on = read_rllib_metadata(p).get("team_task")
    else:
        meta = read_data_json(p).get(METADATA_KEY)
        trained_on = meta.get("env_id") if isinstance(meta, dict) else None
    names = cross_play_names()
    if trained_on not in names:
        raise PolicyLoadError(
            f"{p} was trained on {trained_on or 'an unknown env'}, not {' or '.join(names)} "
            f"(train one with `python train.py --env {names[0]}`)"
        )
    return REGISTRY[trained_on]


def load_team_policy(
    path: str | os.PathLike[str] | None,
    role: str | None = None,
    device: str = "cpu",
    config: dict[str, Any] | None = None,
    task: TaskLike = None,
) -> LearnedPolicy:
    """A shared policy of a cross-play task from a ``train.py --env <task>`` model zip (or
    an RLlib checkpoint folder).

    ``task``: the task the model must be of; ``None`` reads it from the model's metadata
    (``env_id``), and without a ``path`` (the shipped model of ``role``) it is
    :data:`DEFAULT_TASK`. ``role`` (one of the task's roles), when given, must be the
    model's; :class:`PolicyLoadError` (one line) for a missing or corrupt file, a model of
    another env or role, or one whose observation length does not fit the task built with
    ``config``. The policy has ``role`` and ``config`` (the configuration it was trained
    with) attributes."""
    if path is None:
        entry = cross_play_task(task)
        p = default_model_path(role, entry)
    else:
        p = Path(path)
        entry = cross_play_task(task) if task is not None else model_task(p)
    roles = role_names(entry)
    if p.is_dir():  # an RLlib checkpoint of train.py --framework rllib --env <task>
        from agents.rllib.policy import load_rllib_policy, read_rllib_metadata

        modules = [str(m) for m in read_rllib_metadata(p).get("modules", [])]
        module = role or (roles[0] if roles[0] in modules else (modules or [roles[0]])[0])
        policy = load_rllib_policy(p, entry.name, device=device, module=module)
        policy.role = module
        policy.config = {}
        return policy
    data = read_data_json(p)
    meta = data.get(METADATA_KEY)
    meta = dict(meta) if isinstance(meta, dict) else {}
    trained_on = meta.get("env_id")
    if trained_on != entry.name:
        raise PolicyLoadError(
            f"{p} was trained on {trained_on or 'an unknown env'}, not {entry.name} (train one "
            f"with `python train.py --env {entry.name}`)"
        )
    model_role = meta.get("role")
    if model_role not in roles:
        raise PolicyLoadError(f"{p} does not say which role it plays ({roles[0]} or {roles[1]})")
    if role is not None and role != model_role:
        raise PolicyLoadError(f"{p} is a {model_role} policy, not a {role} one")
    trained_config = dict(meta.get("config") or {})
    cfg = {**trained_config, **(config or {})}
    expected = observation_length(cfg, entry)
    shape = meta.get("obs_shape")
    if shape is not None and list(shape) != [expected]:
        raise PolicyLoadError(
            f"{p} observes {shape[0]} values; {entry.name} with {cfg or 'defaults'} gives "
            f"{expected} (a model for other team sizes?)"
        )
    algo = str(meta.get("algo") or infer_algo(data) or "ppo")
    try:
        model = algo_class(algo).load(p, device=device)
    except Exception as exc:  # torch/zip errors from a damaged file
        raise PolicyLoadError(f"{p}: cannot load the {algo.upper()} model: {exc}") from None
    policy = LearnedPolicy(model, entry.name, p, meta)
    policy.role = model_role
    policy.config = trained_config
    return policy


def observation_length(config: dict[str, Any] | None = None, task: TaskLike = None) -> int:
    """Observation length of every agent of the task with ``config``."""
    entry = cross_play_task(task)
    cfg = entry.config(**(config or {}))
    return entry.world(cfg).obs_dim


# ----------------------------------------------------------------------- playing
Side = Any  # a scripted strategy name (str) or a policy with predict()


class Match:
    """``num_envs`` environments of the task's row side ``rows`` against the column side
    ``cols`` (team pursuit: a pursuer team against an evader; each a strategy name, run by
    the engine, or a policy): :attr:`venv` is the native batch with the scripted sides
    configured, :meth:`actions` the learned sides' deterministic actions, each agent from
    its own observation."""

    @_renamed_keywords(**_SIDES)
    def __init__(
        self,
        rows: Side,
        cols: Side,
        num_envs: int,
        config: dict[str, Any] | None = None,
        render_mode: str | None = None,
        task: TaskLike = None,
    ) -> None:
        from steer_env.envs.team_vector import TeamVectorEnv

        entry = cross_play_task(task)
        kwargs = dict(config or {})
        kwargs["learned"] = learned_value(rows, cols, entry)
        sides = (rows, cols)
        for role, side in zip(entry.roles, sides, strict=True):
            if isinstance(side, str):
                kwargs[role.strategy_key] = side
        try:
            self.venv = TeamVectorEnv(num_envs, render_mode=render_mode, task=entry, **kwargs)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self._acting = [
            (policy, np.flatnonzero(self.venv.agent_team == self.venv.batch.team_code(role.name)))
            for role, policy in zip(entry.roles, sides, strict=True)
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


@_renamed_keywords(**_SIDES)
def play_team_episodes(
    rows: Side,
    cols: Side,
    episodes: int,
    seed: int,
    config: dict[str, Any] | None = None,
    task: TaskLike = None,
) -> EpisodeResults:
    """Episode ``k = 0..episodes-1`` from seed ``seed + k`` of the task's row side ``rows``
    against the column side ``cols`` (team pursuit: a pursuer team against an evader; each
    a strategy name or a policy, deterministic actions), the first episode of each
    environment recorded. ``success``: every evader captured."""
    match = Match(rows, cols, episodes, config, task=task)
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


def sides(role: str, learned: dict[str, Any] | None = None, task: TaskLike = None) -> list[Entry]:
    """The scripted sides of the task's ``role`` in the registry's order, then the learned
    ones (``name -> policy``; a single one is usually called ``"learned"``), labelled with
    the role's words (``reynolds pursuers``, ``learned pursuers (PPO)``)."""
    entry = cross_play_task(task)
    words = role_of(role, entry)
    entries = [Entry(n, n, f"{n} {words.side_word}") for n in entry.baselines[role]]
    for name, policy in (learned or {}).items():
        algo = str(getattr(policy, "algo", "")).upper()
        label = f"{name} {words.plural}" if name == "learned" else f"{name} ({words.plural})"
        entries.append(Entry(name, policy, f"{label} ({algo})" if algo else label))
    return entries


@_renamed_keywords(pursuer_policy="row_policy", evader_policy="col_policy")
def run_team_comparison(
    row_policy: Any,
    col_policy: Any,
    episodes: int,
    seed: int,
    out: Path | None,
    config: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    task: TaskLike = None,
) -> dict[str, Any]:
    """Play every side of the task's first role against every side of its second (team
    pursuit: every pursuer team against every evader) on the same seeds, summarise, and
    write the outputs into ``out`` (when given). Returns the summary.

    ``row_policy`` / ``col_policy``: the learned sides of the two roles, each ``None``, one
    policy (named ``"learned"``) or a dict ``name -> policy`` (a league's rounds)."""

    def named(policy: Any) -> dict[str, Any]:
        if policy is None:
            return {}
        return dict(policy) if isinstance(policy, dict) else {"learned": policy}

    entry = cross_play_task(task)
    row_role, col_role = entry.roles
    config = dict(config or {})
    cfg = entry.config(**config)
    dt, horizon = cfg.dt, cfg.time_limit * cfg.dt
    rows = sides(row_role.name, named(row_policy), entry)
    cols = sides(col_role.name, named(col_policy), entry)
    results = {
        (r.name, c.name): play_team_episodes(r.side, c.side, episodes, seed, config, entry)
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
            row_role.side_word: rn,
            col_role.side_word: cn,
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
    goal = team_goal(entry, cells, paired)
    summary = {
        "env": entry.name,
        "config": config,
        "episodes": episodes,
        "seed": seed,
        "horizon_s": horizon,
        "dt_s": dt,
        "success_means": entry.metrics.success_means,
        row_role.sides_key: {r.name: r.label for r in rows},
        col_role.sides_key: {c.name: c.label for c in cols},
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
        write_team_outputs(results, summary, Path(out), entry)
    return summary


def team_goal(
    task: TaskLike, cells: dict[str, dict[str, Any]], paired: dict[str, Any]
) -> dict[str, Any]:
    """The goal check of the learned side of the task's first role against the classic
    side of its second (the first of its baselines), from the table's ``cells`` and
    ``paired`` differences; empty when the table has no such learned side. The thresholds
    and the scripted reference side are the task's ``metrics.goal``."""
    entry = cross_play_task(task)
    goal_spec = entry.metrics.goal
    reference = goal_spec.get("reference")
    row_role, col_role = entry.roles
    classic = entry.baselines[col_role.name][0]
    key = f"learned vs {classic} - {reference} vs {classic}"
    if reference is None or key not in paired:
        return {}
    cell = cells[f"learned vs {classic}"]
    p = paired[key]
    above = f"above_{reference}"
    goal = {
        "criterion": (
            f"{row_role.learned_caption} vs the {classic} {col_role.name}: "
            f"{entry.metrics.labels['rate']} rate >= "
            f"{goal_spec['capture_rate']:.0%} with Wilson lower bound >= "
            f"{goal_spec['wilson_lower']:.0%}, "
            f">= {goal_spec['points_above_reference'] * 100:.0f} points above the "
            f"{row_role.caption.format(reference)} (paired 95% interval above 0), shorter "
            f"restricted mean {entry.metrics.time_means}"
        ),
        "rate": cell["capture_rate"] >= goal_spec["capture_rate"],
        "wilson_lower": cell["capture_ci95"][0] >= goal_spec["wilson_lower"],
        above: p["capture_diff"] >= goal_spec["points_above_reference"]
        and p["capture_diff_ci95"][0] > 0,
        "faster": p["time_diff_ci95_s"][1] < 0,
    }
    goal["met"] = all(goal[k] for k in ("rate", "wilson_lower", above, "faster"))
    return goal


def write_team_outputs(
    results: dict[tuple[str, str], EpisodeResults],
    summary: dict[str, Any],
    out: Path,
    task: TaskLike = None,
) -> None:
    """``comparison.csv``, ``episodes.csv`` and ``comparison.json`` of a cross-play table
    into ``out``."""
    row_key, col_key = (role.side_word for role in cross_play_task(task).roles)
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            row_key: c[row_key],
            col_key: c[col_key],
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
            row_key: rn,
            col_key: cn,
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


def format_team_table(summary: dict[str, Any], task: TaskLike = None) -> str:
    """The cross-play table of ``summary`` (of the task ``task``, by default the one the
    summary names as ``env``): rows the sides of the task's first role (pursuer teams),
    columns its second's (evaders); each cell the capture rate [95% Wilson interval] and the
    restricted mean time to capture."""
    entry = cross_play_task(summary["env"] if task is None else task)
    row_role, col_role = entry.roles
    cols = list(summary[col_role.sides_key])
    header = [
        f"{row_role.side_word} \\ {col_role.side_word}",
        *(summary[col_role.sides_key][c] for c in cols),
    ]
    lines = []
    for rn, label in summary[row_role.sides_key].items():
        row = [label]
        for cn in cols:
            c = summary["cells"][f"{rn} vs {cn}"]
            rate = stats.Interval(c["capture_rate"], *c["capture_ci95"])
            row.append(f"{format_interval(rate, 100)}%  {c['restricted_mean_time_s']:.1f} s")
        lines.append(row)
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    text = [
        f"{entry.metrics.labels['title']}: {entry.metrics.labels['rate']} rate [95% Wilson] "
        f"and restricted mean {entry.metrics.time_means} "
        f"(limit {summary['horizon_s']:g} s), {summary['episodes']} paired episodes from seed "
        f"{summary['seed']}",
        fmt.format(*header),
        *(fmt.format(*r) for r in lines),
    ]
    for name, p in summary["paired"].items():
        s = stats.Interval(p["capture_diff"], *p["capture_diff_ci95"])
        d = stats.Interval(p["time_diff_s"], *p["time_diff_ci95_s"])
        text.append(
            f"paired {name}: {entry.metrics.labels['rate']} "
            f"{format_interval(s, 100, sign=True)} points, "
            f"time {format_interval(d, 1, 2, sign=True)} s"
        )
    if summary["goal"]:
        g = summary["goal"]
        text.append(f"goal ({g['criterion']}): {'met' if g['met'] else 'NOT met'}")
    return "\n".join(text)


# ----------------------------------------------------------------------- rendering
def reference_side(task: TaskLike = None) -> str:
    """The scripted side of the task's first role that a learned one is measured against
    (its goal's ``reference``; without one, the last of the role's baselines): the side
    shown next to a learned team (team pursuit: ``cooperative``)."""
    entry = cross_play_task(task)
    first = entry.roles[0].name
    return str(entry.metrics.goal.get("reference", entry.baselines[first][-1]))


@_renamed_keywords(**_SIDES)
def render_team_animation(
    out: str | os.PathLike[str],
    rows: Side,
    cols: Side | None = None,
    seed: int = 0,
    side_by_side: Side | None = None,
    width: int | None = None,
    fps: float = 10.0,
    config: dict[str, Any] | None = None,
    task: TaskLike = None,
) -> tuple[Path, list[str]]:
    """One episode of the row side ``rows`` vs the column side ``cols`` (by default the
    classic one, the first of the second role's baselines) from ``seed`` (and, with
    ``side_by_side``, that row side on the same seed next to it) written to ``out`` (GIF,
    MP4 or PNG by extension). Returns the path and one outcome line per episode."""
    from steer_env.rendering import check_animation_path

    entry = cross_play_task(task)
    row_role, col_role = entry.roles
    cols = entry.baselines[col_role.name][0] if cols is None else cols
    check_animation_path(out)
    width = DEFAULT_WIDTH if width is None else width
    played = []
    for team in [rows] + ([side_by_side] if side_by_side is not None else []):
        match = Match(team, cols, 1, config, render_mode="rgb_array", task=entry)
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
        label = f"{caption(row_role, team)} vs {caption(col_role, cols)}"
        outcome = episode_outcome(info, venv.config)
        played.append(
            (captioned(frames, label, f"{label}: {outcome}", width), f"{label}: {outcome}")
        )
    frames = played[0][0] if len(played) == 1 else join(played[0][0], played[1][0])
    return write_gif(frames, out, fps), [line for _, line in played]


def episode_outcome(info: dict[str, Any], config: Any) -> str:
    """The outcome of environment 0's ended episode from the batch's ``info``: every evader
    captured (when the last was), or escaped."""
    steps = info["capture_step"][0]
    if (steps >= 0).all():
        return f"captured at {steps.max() * config.dt:.1f} s"
    return f"escaped ({config.time_limit * config.dt:g} s)"


def watch_team_episodes(
    rows: Side,
    cols: Side,
    seed: int,
    episodes: int = 1,
    speed: float = 1.0,
    config: dict[str, Any] | None = None,
    task: TaskLike = None,
    hold_s: float = 1.0,
) -> list[str]:
    """Play ``episodes`` episodes (seeds ``seed``, ``seed + 1``, ...) of the row side
    ``rows`` against the column side ``cols`` in a live window at ``speed`` times real
    time, with the overlay of keyboard play (:class:`steer_env.live.Overlay`; the reward
    and return are the first learned agent's, 0 when both sides are scripted); each ended
    episode's last frame stays ``hold_s`` seconds. ESC or closing the window stops early.
    Returns one outcome line per episode played to its end."""
    from steer_env.live import LiveWindow, Overlay

    entry = cross_play_task(task)
    row_role, col_role = entry.roles
    label = f"{caption(row_role, rows)} vs {caption(col_role, cols)}"
    match = Match(rows, cols, 1, config, render_mode="rgb_array", task=entry)
    venv = match.venv
    cfg = venv.config
    lines: list[str] = []
    window = LiveWindow(f"steer-env: {label}", speed / cfg.dt)
    pg = window.pygame
    try:
        for k in range(episodes):
            obs, _ = venv.reset(seed=seed + k)
            reward = episode_return = 0.0
            steps = 0
            outcome = None
            while True:
                notes = (f"episode {k + 1}/{episodes}", f"speed x{speed:g}", f"seed {seed + k}")
                overlay = Overlay(
                    f"{label} on {entry.name}",
                    reward,
                    episode_return,
                    (cfg.time_limit - steps) * cfg.dt,
                    outcome,
                    notes,
                )
                window.show(venv.render()[0], overlay)
                events = window.events()
                if window.closed or any(
                    e.type == pg.KEYDOWN and e.key == pg.K_ESCAPE for e in events
                ):
                    return lines
                if outcome is not None:
                    break
                obs, rewards, _, _, info = venv.step(match.actions(obs))
                reward = float(rewards[0, 0]) if venv.n_agents else 0.0
                episode_return += reward
                steps += 1
                if info["done"][0]:
                    outcome = episode_outcome(info, cfg)
            for _ in range(round(hold_s * window.fps)):
                window.show(venv.render()[0], overlay)
                window.events()
                if window.closed:
                    return lines
            lines.append(f"{label}: {outcome} (seed {seed + k})")
    finally:
        window.close()
        venv.close()
    return lines


def caption(role: Role, side: Side) -> str:
    """A side of ``role`` in an episode's caption (``cooperative team``, ``learned
    evader``)."""
    return role.caption.format(side) if isinstance(side, str) else role.learned_caption


# ----------------------------------------------------------------------- commands
def compare_main(args: Any, prog: str) -> int:
    """``python -m agents.compare --env <task>``: the cross-play table (errors are handled
    by the caller's one-line reporting)."""
    import time
    from datetime import datetime

    entry = cross_play_task(args.env)
    row_role, col_role = entry.roles
    policies: dict[str, LearnedPolicy] = {}
    if getattr(args, "single_model", None) is not None:
        raise UsageError("--single-model is for several learned agents of one role")
    overrides = team_overrides(args.config, entry)
    if not args.no_learned:
        device = inference_device(args.device)
        path = args.model
        if path is None:
            path = default_model_path(row_role.name, entry)
            if not path.exists():
                raise PolicyLoadError(
                    f"no shipped team model at {path}; train one with `python train.py --env "
                    f"{entry.name}` and pass --model, or compare the scripted teams "
                    "(--no-learned)"
                )
        first = load_team_policy(path, device=device, config=overrides, task=entry)
        policies[first.role] = first
        if Path(path).is_dir() and args.opponent_model is None:
            from agents.rllib.policy import read_rllib_metadata

            for module in read_rllib_metadata(path).get("modules", []):
                if module not in policies:  # learned="both": both roles in one checkpoint
                    policies[module] = load_team_policy(
                        path, module, device=device, config=overrides, task=entry
                    )
        if args.opponent_model is not None:
            other = other_role(first.role, entry)
            policies[other] = load_team_policy(
                args.opponent_model, other, device=device, config=overrides, task=entry
            )
        import torch

        torch.set_num_threads(1)
    elif args.model is not None or args.opponent_model is not None:
        raise UsageError("--no-learned compares the scripted teams: drop --model")
    out = args.out or Path("runs") / "compare" / (
        f"{entry.name}__{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder")
    config = dict(next(iter(policies.values())).config) if policies else {}
    config.pop("learned", None)
    config.update(overrides)
    t0 = time.perf_counter()
    summary = run_team_comparison(
        policies.get(row_role.name),
        policies.get(col_role.name),
        args.episodes,
        args.seed,
        out,
        config=config,
        extra={"models": {role: str(p.path) for role, p in policies.items()}},
        task=entry,
    )
    print(format_team_table(summary, entry))
    print(
        f"\n({time.perf_counter() - t0:.1f} s) wrote {out}/comparison.csv, episodes.csv, "
        "comparison.json"
    )
    return 0


def final_team_comparison(
    model_path: Path,
    opts: dict[str, Any],
    paths: Any,
    opponent: LearnedPolicy | None = None,
    task: TaskLike = None,
) -> dict[str, Any]:
    """The end of a ``train.py --env <task>`` run (called by
    :func:`agents.training.run.final_comparison`, which handles Ctrl-C and the run status): the
    cross-play table of the trained side against the scripted sides (and ``opponent``, the
    frozen model it trained against) and the side-by-side GIF. ``task``: the run's (by
    default the model's). Returns what the run's ``config.json`` records as ``comparison``
    (without the wall time)."""
    entry = cross_play_task(task) if task is not None else model_task(model_path)
    row_role, col_role = entry.roles
    policy = load_team_policy(model_path, device="cpu", task=entry)
    learned = {policy.role: policy}
    if opponent is not None:
        learned[opponent.role] = opponent
    summary = run_team_comparison(
        learned.get(row_role.name),
        learned.get(col_role.name),
        int(opts["eval_episodes"]),
        int(opts["compare_seed"]),
        paths.root,
        config=policy.config,
        extra={"model": str(model_path)},
        task=entry,
    )
    print()
    print(format_team_table(summary, entry))
    if opts["gif"]:
        seed = int(opts["compare_seed"])
        reference = reference_side(entry)
        if policy.role == row_role.name:
            render_team_animation(
                paths.gif, policy, None, seed, reference, config=policy.config, task=entry
            )
        else:
            render_team_animation(
                paths.gif, reference, policy, seed, config=policy.config, task=entry
            )
    return {key: summary[key] for key in ("episodes", "seed", "cells", "paired", "goal")}


def trained_role(learned: Any, task: TaskLike = None) -> Role:
    """The role a ``learned`` configuration value trains (``"pursuers"``: the pursuer);
    the task's first role for a value that names no single role."""
    entry = cross_play_task(task)
    for role in entry.roles:
        if entry.learned_values.get((role.name,)) == learned:
            return role
    return entry.roles[0]


def team_slots(opts: dict[str, Any], task: TaskLike = None) -> int:
    """Agents of the trained role per environment (``train.py``'s ``--learned``, with its
    ``--set`` configuration); ``task``: by default the one ``opts["env"]`` names."""
    entry = cross_play_task(task if task is not None else opts.get("env"))
    cfg = entry.config(**(opts.get("config") or {}))
    return int(getattr(cfg, trained_role(opts.get("learned"), entry).count_key))


def render_main(args: Any) -> int:
    """``python -m agents.render --env <task>``: an episode of a side of the task's first
    role against one of its second (team pursuit: a pursuer team against an evader);
    ``--agent`` is ``learned`` (``--model``: a model of either role) or a scripted side of
    the first role; ``--side-by-side`` puts the reference side (the cooperative team) on the
    same seed next to a learned one of the first role."""

    entry = cross_play_task(args.env)
    row_role, col_role = entry.roles
    agent = args.agent.strip().lower()
    scripted = entry.baselines[row_role.name]
    classic = entry.baselines[col_role.name][0]
    reference = reference_side(entry)
    overrides = team_overrides(args.config, entry)
    if args.human and args.side_by_side:
        raise UsageError("--side-by-side writes a file; it cannot be combined with --human")
    if not args.human and (args.episodes is not None or args.speed != 1.0):
        raise UsageError("--episodes and --speed are for the window: add --human")
    if agent != "learned" and agent not in scripted:
        raise UsageError(
            f"unknown agent {args.agent!r} for {entry.name}: use learned or a scripted "
            f"{row_role.caption.format(row_role.name)} ({', '.join(scripted)})"
        )
    if agent != "learned" and (args.model is not None or args.side_by_side):
        raise UsageError("--model and --side-by-side need --agent learned")
    if agent == "learned":
        path = args.model or default_model_path(row_role.name, entry)
        if args.model is None and not path.exists():
            raise PolicyLoadError(
                f"no shipped team model at {path}; pass --model runs/<run>/model.zip "
                f"(python train.py --env {entry.name}) or a scripted team "
                f"(--agent {reference})"
            )
        policy = load_team_policy(
            path, device=inference_device(args.device), config=overrides, task=entry
        )
        config = {**policy.config, **overrides}
        import torch

        torch.set_num_threads(1)
        if args.human:
            sides = (policy, classic) if policy.role == row_role.name else (reference, policy)
            return _watch(args, *sides, config, entry)
        if policy.role == row_role.name:
            other = reference if args.side_by_side else None
            path, lines = render_team_animation(
                args.out, policy, classic, args.seed, other, args.width, args.fps, config, entry
            )
        else:
            path, lines = render_team_animation(
                args.out, reference, policy, args.seed, None, args.width, args.fps, config, entry
            )
    elif args.human:
        return _watch(args, agent, classic, overrides, entry)
    else:
        path, lines = render_team_animation(
            args.out, agent, classic, args.seed, None, args.width, args.fps, overrides, entry
        )
    for line in lines:
        print(f"{line} (seed {args.seed})")
    print(f"wrote {path}")
    return 0


def _watch(args: Any, rows: Side, cols: Side, config: dict[str, Any], entry: Any) -> int:
    """``agents.render --human`` of a cross-play task: the episodes in a window."""
    try:
        lines = watch_team_episodes(
            rows, cols, args.seed, args.episodes or 1, args.speed, config, entry
        )
    except (PolicyLoadError, UsageError):
        raise
    except Exception as exc:  # no display, pygame missing, ...
        raise UsageError(f"cannot show a window: {type(exc).__name__}: {exc}") from None
    for line in lines:
        print(line)
    return 0


def check_opponent_strategy(
    learned: str, name: str | None, opponent_model: str | None, task: TaskLike = None
) -> str | None:
    """``train.py --opponent-strategy``: a registered strategy of the role not trained
    (:class:`UsageError` otherwise), or ``None`` for the task's default."""
    if name is None:
        return None
    if opponent_model is not None:
        raise UsageError("give --opponent-model or --opponent-strategy, not both")
    entry = cross_play_task(task)
    other = other_role(trained_role(learned, entry).name, entry)
    key = name.strip().lower()
    if key not in entry.baselines[other]:
        raise UsageError(
            f"--opponent-strategy {name!r} is not a scripted {other} strategy of {entry.name}: "
            f"use {', '.join(entry.baselines[other])}"
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
        """``python -m agents.render``: an episode of a side of the task's first role
        against one of its second."""
        return render_main(args)

    def final(
        self, env_id: str, model_path: Path, opts: dict[str, Any], paths: Any, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """The end of a training run: the cross-play table of the trained side (and the GIF);
        what ``config.json`` records as ``comparison``."""
        import time

        t1 = time.perf_counter()
        record = final_team_comparison(
            model_path, opts, paths, opponent=extra.get("opponent"), task=env_id
        )
        return {**record, "wall_s": round(time.perf_counter() - t1, 2)}


# ----------------------------------------------------------------------- old names
#: Module constants bound to one task, kept for a release: name -> (what replaces it, its
#: value for the default task).
_DEPRECATED: dict[str, tuple[str, Callable[[], Any]]] = {
    "TASK": ("cross_play_task(task)", lambda: cross_play_task()),
    "ENV_NAME": ("cross_play_task(task).name", lambda: cross_play_task().name),
    "ROLES": ("role_names(task)", lambda: role_names()),
    "LEARNED_ROLE": (
        "learned_of(role, task)",
        lambda: {role: learned_of(role) for role in role_names()},
    ),
    "GOAL": ("cross_play_task(task).metrics.goal", lambda: _old_goal()),
    "ROLE_CHOICE": ("role_choice(task)", lambda: role_choice()),
    "_learned_value": ("learned_value(rows, cols, task)", lambda: learned_value),
}


def _old_goal() -> dict[str, Any]:
    """The default task's goal as ``GOAL`` held it (``points_above_<reference>``)."""
    goal = dict(cross_play_task().metrics.goal)
    reference, points = goal.pop("reference"), goal.pop("points_above_reference")
    return {**goal, f"points_above_{reference}": points}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        instead, build = _DEPRECATED[name]
        warnings.warn(
            f"agents.evaluation.cross_play.{name} is deprecated: use {instead} "
            f"(agents.evaluation.cross_play.{name} will be removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
