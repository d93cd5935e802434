"""Population training for the team task: each round, best responses to mixtures of every
earlier opponent, chosen by a meta-solver over the measured payoff matrix.

    python -m agents.league --out runs/league                  # the default: 8 rounds
    python -m agents.league --out runs/nash --method nash --rounds 5
    python -m agents.league --out runs/try --rounds 1 --episodes 100 --no-exploit

Both roles keep a pool. It starts with the task's scripted anchors (pursuer teams
``reynolds`` and ``cooperative``, the ``flow`` evader); round ``k`` adds a pursuer team
``pk`` and an evader ``ek``:

1. the **payoff matrix** is brought up to date: every pursuer of the pool against every
   evader on the same ``--episodes`` held-out seeded episodes (one native batch per pair,
   scripted sides run by the engine; only pairs not yet played are played), capture rates
   with 95% Wilson intervals;
2. the **meta-solver** (``--method``) turns it into a mixture over each pool:

   * ``uniform`` -- every member alike (fictitious play);
   * ``nash`` -- the maximin strategies of the zero-sum game whose payoff is the capture
     rate (two linear programs, :func:`scipy.optimize.linprog`; PSRO's Nash solver);
   * ``pfsp`` -- prioritized fictitious self-play: member ``j`` weighted ``(1 - x_j)^2``,
     ``x_j`` the success against it of the role's newest member (opponents it still loses
     to count most);

3. ``pk`` is trained against the evaders' mixture and ``ek`` against the pursuers'
   (``train.py --opponent-pool``: each training env plays a member drawn at each of its
   resets; the two trainings run side by side, one core each with ``--jobs 2``).

The **approximate exploitability** of a round's mixtures is what its best responses gain
against them on the held-out seeds (``pk``'s capture rate against the evaders' mixture,
``ek``'s escape rate against the pursuers').

After the last round one role answers once more (``--final-response``, the pursuers by
default): ``pK_final`` is a best response to the meta-solver's mixture of the other role's
whole final pool, started from the role's maximin member and trained for
``--final-timesteps`` (by default the role's budget per round). Each round's responses are
trained side by side, so no member has met the other role's newest member; this last
response has met every opponent in the final pool. The other role does not answer it: the
exploitability check below (a fresh opponent trained against it alone) measures what that
last word leaves open.

The league's **final policies** are then chosen by maximin on the payoff
matrix: the learned pursuer team with the highest worst-case capture rate over the evader
pool, and the learned evader with the highest worst-case escape rate over the pursuer pool.
The **final check** then plays every member (and every ``--guest`` model) against every
other on a second block of held-out seeds (``--report-seed``), so the reported figures are
not those the selection saw, and trains a fresh best response against each final policy
alone (``train.py --opponent-model``, the league's budget): its success on those seeds is
the final policy's exploitability (``--no-exploit`` skips it).

Every training is an ordinary ``train.py`` run folder under ``--out``; a finished one is
reused and an interrupted one resumed, so Ctrl-C and the same command again continue the
league. Written to ``--out``: ``league.json`` (pools, mixtures, exploitability per round,
the final check), ``payoff.json`` (every cell with its interval, the layout of a
cross-play ``comparison.json``), ``payoff.png`` (heatmap), ``exploitability.png``,
``report.json`` and ``report.png`` (the final check's matrix), and the rounds' pool files
``pool_<run>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.evaluation import stats
from agents.evaluation.cross_play import DEFAULT_TASK, TaskLike, cross_play_env_arg, cross_play_task
from agents.evaluation.mixture import Member, write_pool
from agents.evaluation.policy_base import UsageError
from agents.evaluation.results import atomic_write_json
from steer_env import cli

PROG = "python -m agents.league"
METHODS = ("uniform", "nash", "pfsp")
#: The exponent of PFSP's weighting ``(1 - x)^p`` (AlphaStar's "hard" variant uses 2).
PFSP_POWER = 2.0
#: The league ``python -m agents.league`` plays without options.
DEFAULT_ROUNDS = 8
DEFAULT_METHOD = "uniform"
DEFAULT_WARM = True
#: Options a league folder keeps: continuing it with others would mix two leagues.
KEPT = ("env", "method", "warm_start", "pursuer_timesteps", "evader_timesteps", "n_envs", "seed",
        "final_response", "final_timesteps")  # fmt: skip
#: The role that answers the other's final pool once more (``--final-response``).
DEFAULT_FINAL_RESPONSE = "pursuer"


# ----------------------------------------------------------------------- meta-solvers
def solve_zero_sum(payoff: NDArray[np.floating]) -> tuple[NDArray, NDArray, float]:
    """Maximin strategies of the zero-sum matrix game where the row player (the pursuers)
    receives ``payoff[i, j]`` and the column player (the evaders) pays it.

    Returns ``(x, y, value)``: ``x`` maximises ``min_j (x @ payoff)[j]``, ``y`` minimises
    ``max_i (payoff @ y)[i]``, and ``value`` is the game's value (the two agree, by the
    minimax theorem). Each strategy solves one linear program with
    :func:`scipy.optimize.linprog`."""
    from scipy.optimize import linprog

    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"payoff must be a finite, non-empty matrix, got shape {a.shape}")
    m, n = a.shape
    # Rows: variables x_1..x_m, v; maximise v subject to v <= (x @ a)[j] for every j.
    rows = linprog(
        c=np.r_[np.zeros(m), -1.0],
        A_ub=np.c_[-a.T, np.ones(n)],
        b_ub=np.zeros(n),
        A_eq=np.r_[np.ones(m), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, None)] * m + [(None, None)],
        method="highs",
    )
    cols = linprog(
        c=np.r_[np.zeros(n), 1.0],
        A_ub=np.c_[a, -np.ones(m)],
        b_ub=np.zeros(m),
        A_eq=np.r_[np.ones(n), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, None)] * n + [(None, None)],
        method="highs",
    )
    if not (rows.success and cols.success):  # cannot happen for a finite matrix game
        raise RuntimeError(f"linprog failed: {rows.message} / {cols.message}")
    x = np.clip(rows.x[:m], 0.0, None)
    y = np.clip(cols.x[:n], 0.0, None)
    return x / x.sum(), y / y.sum(), float(x @ a @ y / (x.sum() * y.sum()))


def pfsp_weights(success: NDArray[np.floating], power: float = PFSP_POWER) -> NDArray:
    """PFSP's mixture over opponents against which the learner succeeds with probability
    ``success[j]``: weights ``(1 - success)^power``, normalised; uniform when the learner
    beats every opponent outright."""
    s = np.clip(np.asarray(success, dtype=np.float64), 0.0, 1.0)
    w = (1.0 - s) ** power
    return w / w.sum() if w.sum() > 0 else np.full(s.size, 1.0 / s.size)


def meta_strategies(method: str, payoff: NDArray[np.floating]) -> tuple[NDArray, NDArray]:
    """``(pursuer mixture, evader mixture)`` over the pools for the capture-rate matrix
    ``payoff`` (rows the pursuer pool, columns the evader pool, both in the order members
    joined)."""
    a = np.asarray(payoff, dtype=np.float64)
    m, n = a.shape
    if method == "uniform":
        return np.full(m, 1.0 / m), np.full(n, 1.0 / n)
    if method == "nash":
        x, y, _ = solve_zero_sum(a)
        return x, y
    if method == "pfsp":
        # The newest member of each role stands in for the learner about to be trained:
        # the pursuers' learner succeeds by capturing, the evaders' by escaping.
        evader_mix = pfsp_weights(a[-1])
        pursuer_mix = pfsp_weights(1.0 - a[:, -1])
        return pursuer_mix, evader_mix
    raise UsageError(f"--method {method!r}: use one of {', '.join(METHODS)}")


# ----------------------------------------------------------------------- payoff matrix
@dataclass
class Cell:
    """One pursuer team against one evader on the matrix's episodes."""

    captured: NDArray[np.bool_]
    restricted_mean_time_s: float

    @property
    def rate(self) -> float:
        return float(self.captured.mean())


class PayoffMatrix:
    """Capture results of pursuer teams against evaders, every pair on the same
    ``episodes`` episodes from seeds ``seed, seed + 1, ...`` (episode ``k`` of every pair
    starts from seed ``seed + k``) of the cross-play task ``task`` (an entry or a name,
    by default :data:`~agents.evaluation.cross_play.DEFAULT_TASK`). :meth:`play` plays the
    pairs not yet in it."""

    def __init__(
        self,
        episodes: int,
        seed: int,
        config: dict[str, Any] | None = None,
        task: TaskLike = None,
    ) -> None:
        self.episodes = int(episodes)
        self.seed = int(seed)
        self.config = dict(config or {})
        self.task = cross_play_task(task)
        self.cells: dict[tuple[str, str], Cell] = {}

    def play(self, pursuers: dict[str, Any], evaders: dict[str, Any]) -> int:
        """Play every pair of ``pursuers`` x ``evaders`` (name -> a strategy name or a
        policy) missing from the matrix; returns how many were played."""
        from agents.evaluation.cross_play import play_team_episodes

        cfg = self.task.config(**self.config)
        horizon = cfg.time_limit * cfg.dt
        played = 0
        for p, p_side in pursuers.items():
            for e, e_side in evaders.items():
                if (p, e) in self.cells:
                    continue
                res = play_team_episodes(
                    p_side, e_side, self.episodes, self.seed, self.config, self.task
                )
                t = np.where(res.captured, res.capture_step * cfg.dt, horizon)
                times = stats.restricted_times(t, res.captured, horizon)
                self.cells[p, e] = Cell(res.captured.copy(), float(times.mean()))
                played += 1
        return played

    def rates(self, pursuers: list[str], evaders: list[str]) -> NDArray[np.float64]:
        """The capture-rate matrix, rows ``pursuers``, columns ``evaders``."""
        return np.array([[self.cells[p, e].rate for e in evaders] for p in pursuers])

    def to_json(self, pursuers: list[str], evaders: list[str]) -> dict[str, Any]:
        row, col = self.task.roles
        cells = {}
        for (p, e), c in self.cells.items():
            k = int(c.captured.sum())
            iv = stats.wilson_interval(k, self.episodes)
            cells[f"{p} vs {e}"] = {
                row.side_word: p,
                col.side_word: e,
                "captures": k,
                "capture_rate": iv.mean,
                "capture_ci95": [iv.lo, iv.hi],
                "restricted_mean_time_s": c.restricted_mean_time_s,
                "captured": "".join("1" if x else "0" for x in c.captured),
            }
        cfg = self.task.config(**self.config)
        # The layout of a cross-play comparison.json (rows, columns, horizon), so the
        # comparison tools' readers read it too.
        return {
            "env": self.task.name,
            "episodes": self.episodes,
            "seed": self.seed,
            "config": self.config,
            "horizon_s": cfg.time_limit * cfg.dt,
            row.sides_key: {p: p for p in pursuers},
            col.sides_key: {e: e for e in evaders},
            "ci_method": "Wilson score 95%",
            "cells": cells,
            "paired": {},
            "goal": {},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PayoffMatrix:
        m = cls(data["episodes"], data["seed"], data.get("config"), data.get("env"))
        row, col = m.task.roles
        for c in data["cells"].values():
            captured = np.frombuffer(c["captured"].encode(), dtype=np.uint8) == ord("1")
            m.cells[c[row.side_word], c[col.side_word]] = Cell(
                captured, c["restricted_mean_time_s"]
            )
        return m


# ----------------------------------------------------------------------- pictures
def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` as PNG atomically and free it."""
    fig.tight_layout()
    with cli.atomic_output(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    _pyplot().close(fig)


def draw_heatmap(path: Path, matrix: PayoffMatrix, pursuers: list[str], evaders: list[str]) -> None:
    """``payoff.png``: capture rates, rows the pursuer pool, columns the evader pool."""
    plt = _pyplot()
    rates = matrix.rates(pursuers, evaders)
    fig, ax = plt.subplots(figsize=(1.1 * len(evaders) + 2.5, 0.55 * len(pursuers) + 1.8))
    im = ax.imshow(rates * 100, cmap="RdBu_r", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(evaders)), evaders)
    ax.set_yticks(range(len(pursuers)), pursuers)
    ax.set_xlabel("evader")
    ax.set_ylabel("pursuer team")
    for i in range(len(pursuers)):
        for j in range(len(evaders)):
            v = rates[i, j] * 100
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if abs(v - 50) > 30 else "black")  # fmt: skip
    fig.colorbar(im, ax=ax, label="capture rate, %")
    ax.set_title(f"capture rate, {matrix.episodes} paired episodes from seed {matrix.seed}")
    _save(fig, path)


def draw_exploitability(path: Path, rounds: list[dict[str, Any]]) -> None:
    """``exploitability.png``: each round's best responses' success against the mixtures
    they answered."""
    k = [r["round"] for r in rounds]
    fig, ax = _pyplot().subplots(figsize=(5.5, 3.4))
    ax.plot(k, [100 * r["exploitability"]["evader_br_escape"] for r in rounds], "o-",
            label="evader BR's escape rate vs the pursuers' mixture")  # fmt: skip
    ax.plot(k, [100 * r["exploitability"]["pursuer_br_capture"] for r in rounds], "s-",
            label="pursuer BR's capture rate vs the evaders' mixture")  # fmt: skip
    ax.set_xlabel("round")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_xticks(k)
    ax.legend(fontsize=7)
    ax.set_title("approximate exploitability of each round's mixtures")
    _save(fig, path)


# ----------------------------------------------------------------------- training runs
def _run_state(run: Path) -> str:
    """``"done"`` (a model), ``"resume"`` (a readable checkpoint to continue, as
    ``train.py --resume`` finds it) or ``"new"``."""
    from agents.training.run import RunPaths
    from agents.training.sb3 import latest_checkpoint

    if (run / "model.zip").is_file():
        return "done"
    return "resume" if latest_checkpoint(RunPaths(run)) is not None else "new"


def round_budget(args: Any, role: str) -> int:
    """The timesteps of one round's response of ``role`` (``pursuer`` or ``evader``)."""
    return args.pursuer_timesteps if role == "pursuer" else args.evader_timesteps


def train_argv(
    out: Path, name: str, learned: str, against: list[str], args: Any, timesteps: int | None = None
) -> list[str]:
    """``train.py``'s arguments for the league's run ``out/name`` (a resume when it has a
    checkpoint), trained for ``timesteps`` (by default the role's budget per round)."""
    state = _run_state(out / name)
    if state == "resume":
        return ["--out", str(out), "--name", name, "--resume", "--no-gif", "--no-progress"]
    if timesteps is None:
        timesteps = round_budget(args, learned.rstrip("s"))
    return [
        "--env", cross_play_task(getattr(args, "env", None)).name, "--learned", learned, *against,
        "--timesteps", str(timesteps), "--n-envs", str(args.n_envs), "--seed", str(args.seed),
        "--out", str(out), "--name", name, "--episodes", "200", "--no-gif", "--no-progress",
        "--overwrite",
    ]  # fmt: skip


def train_script() -> Path:
    """The checkout's ``train.py``, which the leagues run once per training, each in its
    own process; :class:`UsageError` when the package runs outside a source checkout."""
    script = Path(__file__).resolve().parents[2] / "train.py"
    if not script.is_file():
        raise UsageError(f"{script} not found: run the league from a source checkout")
    return script


def train_runs(
    out: Path, jobs: list[tuple[str, str, list[str]]], args: Any, timesteps: int | None = None
) -> dict[str, Path]:
    """Train the runs ``(name, learned, opponent arguments)`` with ``train.py`` (up to
    ``args.jobs`` side by side, ``timesteps`` each or the role's budget per round), reusing
    finished ones; their models by name."""
    script = train_script()
    models = {name: out / name / "model.zip" for name, _, _ in jobs}
    todo = []
    for name, learned, against in jobs:
        if _run_state(out / name) == "done":
            print(f"[league] {name}: reusing {models[name]}", flush=True)
        else:
            todo.append((name, train_argv(out, name, learned, against, args, timesteps)))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    while todo:
        batch, todo = todo[: args.jobs], todo[args.jobs :]
        procs = []
        for name, argv in batch:
            print(f"[league] {name}: python train.py {' '.join(argv)}", flush=True)
            log = open(out / f"{name}.log", "ab")  # noqa: SIM115 (closed below)
            procs.append((name, subprocess.Popen([sys.executable, str(script), *argv],
                                                 stdout=log, stderr=subprocess.STDOUT, env=env),
                          log))  # fmt: skip
        try:
            codes = {name: p.wait() for name, p, _ in procs}
        except KeyboardInterrupt:
            # The children got the same SIGINT: let them save their checkpoints.
            for _, p, _ in procs:
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.send_signal(signal.SIGKILL)
            raise
        finally:
            for _, _, log in procs:
                log.close()
        for name, rc in codes.items():
            if rc != 0 or not models[name].is_file():
                raise UsageError(f"training {name} failed (exit {rc}); see {out / (name + '.log')}")
            print(f"[league] {name}: trained ({out / name})", flush=True)
    return models


# ----------------------------------------------------------------------- the league
class League:
    """The pools, the payoff matrix and the rounds of a league in folder ``out``."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.out: Path = args.out
        #: The task played (``--env``; the task's scripted strategies are the anchors).
        self.task = cross_play_task(getattr(args, "env", None))
        if args.final_timesteps is None and args.final_response != "none":
            args.final_timesteps = round_budget(args, args.final_response)
        self.pools: dict[str, dict[str, Member]] = {
            role: {n: Member(n, 1.0, strategy=n) for n in self.task.baselines[role]}
            for role in ("pursuer", "evader")
        }
        #: Models played in the matrix without joining the pools (``--guest``).
        self.guests: dict[str, dict[str, Member]] = {"pursuer": {}, "evader": {}}
        self.matrix = PayoffMatrix(args.episodes, args.compare_seed, task=self.task)
        #: The final check's matrix on the report seeds (:meth:`final_check`).
        self.report: PayoffMatrix | None = None
        self.rounds: list[dict[str, Any]] = []
        #: The final response (:meth:`play_final_response`), once played.
        self.final_response: dict[str, Any] | None = None
        self._policies: dict[str, Any] = {}
        saved = self.out / "payoff.json"
        if saved.is_file():
            data = json.loads(saved.read_text())
            kept = (data.get("episodes"), data.get("seed"), data.get("env"))
            if kept == (args.episodes, args.compare_seed, self.task.name):
                self.matrix = PayoffMatrix.from_json(data)
        state = self.out / "league.json"
        if state.is_file():
            old = json.loads(state.read_text())
            for key in KEPT:
                if key in old and old[key] != getattr(args, key):
                    flag = "--" + key.replace("_", "-")
                    raise UsageError(
                        f"{state} was played with {flag} {old[key]}: pass that to continue "
                        f"it, or another --out"
                    )

    def side(self, role: str, name: str) -> Any:
        """What plays member ``name`` of ``role`` in the payoff matrix: a scripted
        strategy's name (run by the engine) or the loaded model."""
        from agents.evaluation.cross_play import load_team_policy

        member = self.pools[role].get(name) or self.guests[role][name]
        if member.strategy is not None:
            return member.strategy
        if name not in self._policies:
            self._policies[name] = load_team_policy(
                member.model, role, device="cpu", task=self.task
            )
        return self._policies[name]

    def names(self, role: str, guests: bool = False) -> list[str]:
        """The pool of ``role`` in the order its members joined (then the guests)."""
        return list(self.pools[role]) + (list(self.guests[role]) if guests else [])

    def update_matrix(self) -> None:
        played = self.matrix.play(
            {n: self.side("pursuer", n) for n in self.names("pursuer")},
            {n: self.side("evader", n) for n in self.names("evader")},
        )
        if played:
            print(f"[league] payoff matrix: played {played} new pairs x "
                  f"{self.matrix.episodes} episodes", flush=True)  # fmt: skip
        self.save()

    def save(self, final: dict[str, Any] | None = None) -> None:
        p, e = self.names("pursuer"), self.names("evader")
        atomic_write_json(self.out / "payoff.json", self.matrix.to_json(p, e))
        state = {
            "env": self.task.name,
            "method": self.args.method,
            "rounds_asked": self.args.rounds,
            "pursuer_timesteps": self.args.pursuer_timesteps,
            "evader_timesteps": self.args.evader_timesteps,
            "seed": self.args.seed,
            "n_envs": self.args.n_envs,
            "warm_start": self.args.warm_start,
            "episodes": self.matrix.episodes,
            "compare_seed": self.matrix.seed,
            "pools": {r: [m.to_json() for m in pool.values()] for r, pool in self.pools.items()},
            "guests": {r: [m.to_json() for m in g.values()] for r, g in self.guests.items()},
            "final_response": self.args.final_response,
            "final_timesteps": self.args.final_timesteps,
            "rounds": self.rounds,
            **({"final_round": self.final_response} if self.final_response else {}),
            **({"final": final} if final else {}),
        }
        atomic_write_json(self.out / "league.json", state)
        if all((pp, ee) in self.matrix.cells for pp in p for ee in e):
            draw_heatmap(self.out / "payoff.png", self.matrix, p, e)
        if self.rounds:
            draw_exploitability(self.out / "exploitability.png", self.rounds)
        if self.report is not None:
            rp, re_ = self.names("pursuer", guests=True), self.names("evader", guests=True)
            atomic_write_json(self.out / "report.json", self.report.to_json(rp, re_))
            draw_heatmap(self.out / "report.png", self.report, rp, re_)

    def pool_file(self, run: str, role: str, weights: NDArray) -> Path:
        """The pool file ``run`` trains against: ``role``'s members with positive weight."""
        members = [
            Member(m.name, float(w), m.strategy, m.model)
            for m, w in zip(self.pools[role].values(), weights, strict=True)
            if w > 1e-9
        ]
        return write_pool(self.out / f"pool_{run}.json", role, members)

    def play_round(self, k: int) -> None:
        self.update_matrix()
        p_names, e_names = self.names("pursuer"), self.names("evader")
        rates = self.matrix.rates(p_names, e_names)
        sigma_p, sigma_e = meta_strategies(self.args.method, rates)
        pk, ek = f"p{k}", f"e{k}"
        pursuer_pool = self.pool_file(pk, "evader", sigma_e)
        evader_pool = self.pool_file(ek, "pursuer", sigma_p)
        print(f"[league] round {k}: pursuers' mixture {_mix(p_names, sigma_p)}; evaders' "
              f"{_mix(e_names, sigma_e)}", flush=True)  # fmt: skip
        start = {"pursuer": [], "evader": []}
        if self.args.warm_start and k > 1:
            # Continue the role's previous response: skill accumulates over the rounds.
            for role in start:
                start[role] = ["--init-model", self.pools[role][f"{role[0]}{k - 1}"].model]
        models = train_runs(
            self.out,
            [
                (pk, "pursuers", ["--opponent-pool", str(pursuer_pool), *start["pursuer"]]),
                (ek, "evaders", ["--opponent-pool", str(evader_pool), *start["evader"]]),
            ],
            self.args,
        )
        self.pools["pursuer"][pk] = Member(pk, 1.0, model=str(models[pk].resolve()))
        self.pools["evader"][ek] = Member(ek, 1.0, model=str(models[ek].resolve()))
        self.update_matrix()
        br_capture = float(self.matrix.rates([pk], e_names)[0] @ sigma_e)
        br_escape = float(1.0 - sigma_p @ self.matrix.rates(p_names, [ek])[:, 0])
        self.rounds.append(
            {
                "round": k,
                "pursuer_mixture": dict(zip(p_names, sigma_p.tolist(), strict=True)),
                "evader_mixture": dict(zip(e_names, sigma_e.tolist(), strict=True)),
                "exploitability": {"pursuer_br_capture": br_capture, "evader_br_escape": br_escape},
            }
        )
        print(f"[league] round {k}: {pk} captures {br_capture:.1%} against the evaders' "
              f"mixture; {ek} escapes {br_escape:.1%} of the pursuers'", flush=True)  # fmt: skip
        self.save()

    def play_final_response(self) -> None:
        """After the last round, ``--final-response``'s role answers the other role's final
        pool once more: ``<r>K_final`` (``K`` the last round) is trained for
        ``--final-timesteps`` against the meta-solver's mixture of the whole final pool,
        starting from the role's maximin member (with warm starts), and joins its pool."""
        role = self.args.final_response
        other = "evader" if role == "pursuer" else "pursuer"
        self.update_matrix()
        p_names, e_names = self.names("pursuer"), self.names("evader")
        rates = self.matrix.rates(p_names, e_names)
        mixtures = meta_strategies(self.args.method, rates)
        sigma = dict(zip(("pursuer", "evader"), mixtures, strict=True))
        name = f"{role[0]}{len(self.rounds)}_final"
        pool = self.pool_file(name, other, sigma[other])
        start = dict(zip(("pursuer", "evader"), self.final_policies(), strict=True))[role]
        init = ["--init-model", self.pools[role][start].model] if self.args.warm_start else []
        print(f"[league] final response {name}: against the {other}s' mixture "
              f"{_mix(self.names(other), sigma[other])}", flush=True)  # fmt: skip
        models = train_runs(
            self.out,
            [(name, role + "s", ["--opponent-pool", str(pool), *init])],
            self.args,
            timesteps=self.args.final_timesteps,
        )
        self.pools[role][name] = Member(name, 1.0, model=str(models[name].resolve()))
        self.update_matrix()
        if role == "pursuer":
            success = float(self.matrix.rates([name], e_names)[0] @ sigma["evader"])
        else:
            success = float(1.0 - sigma["pursuer"] @ self.matrix.rates(p_names, [name])[:, 0])
        what = "capture" if role == "pursuer" else "escape"
        self.final_response = {
            "name": name,
            "role": role,
            "timesteps": self.args.final_timesteps,
            "init_model": start if self.args.warm_start else None,
            "mixture": dict(zip(self.names(other), sigma[other].tolist(), strict=True)),
            f"{what}_rate_against_mixture": success,
        }
        print(f"[league] final response {name}: {what}s {success:.1%} against the mixture",
              flush=True)  # fmt: skip
        self.save()

    def final_policies(self) -> tuple[str, str]:
        """The league's output: the learned pursuer team with the highest worst-case capture
        rate over the evader pool, and the learned evader with the highest worst-case
        escape rate over the pursuer pool (maximin selection on the payoff matrix; ties go
        to the later round)."""
        p_names, e_names = self.names("pursuer"), self.names("evader")
        rates = self.matrix.rates(p_names, e_names)
        learned_p = [i for i, n in enumerate(p_names) if self.pools["pursuer"][n].model]
        learned_e = [j for j, n in enumerate(e_names) if self.pools["evader"][n].model]
        best_p = max(learned_p, key=lambda i: (rates[i].min(), i))
        best_e = max(learned_e, key=lambda j: (1.0 - rates[:, j].max(), j))
        return p_names[best_p], e_names[best_e]

    def final_check(self) -> dict[str, Any]:
        """The final policies (:meth:`final_policies`) re-measured on a second block of
        held-out seeds (``--report-seed``): every member of both pools and every
        ``--guest`` against every other (``report.json``, ``report.png``), the final
        policies' worst cases over the pools, and (unless ``--no-exploit``) their
        exploitability by fresh best responses on the same seeds."""
        final_p, final_e = self.final_policies()
        for role, name, path in self.args.guest or []:
            if name in self.pools["pursuer"] or name in self.pools["evader"]:
                raise UsageError(f"--guest {role}:{name}: {name!r} is a member of the league")
            self.guests[role][name] = Member(name, 0.0, model=str(Path(path).resolve()))
        report = PayoffMatrix(
            self.matrix.episodes, self.args.report_seed, self.matrix.config, self.task
        )
        self.report = report
        p_all, e_all = self.names("pursuer", guests=True), self.names("evader", guests=True)
        report.play(
            {n: self.side("pursuer", n) for n in p_all},
            {n: self.side("evader", n) for n in e_all},
        )
        p_pool, e_pool = self.names("pursuer"), self.names("evader")

        def worst_capture(p: str) -> dict[str, Any]:
            r = report.rates([p], e_pool)[0]
            return {"worst_capture": float(r.min()), "against": e_pool[int(r.argmin())]}

        def worst_escape(e: str) -> dict[str, Any]:
            r = report.rates(p_pool, [e])[:, 0]
            return {"worst_escape": float(1.0 - r.max()), "against": p_pool[int(r.argmax())]}

        result: dict[str, Any] = {
            "selection": "maximin over the pools in the payoff matrix",
            "report_seed": report.seed,
            "pursuer": {"name": final_p, **worst_capture(final_p)},
            "evader": {"name": final_e, **worst_escape(final_e)},
            "members": {
                **{n: {"role": "pursuer", **worst_capture(n)} for n in p_pool},
                **{n: {"role": "evader", **worst_escape(n)} for n in e_pool},
            },
            "guests": {
                **{n: {"role": "pursuer", **worst_capture(n)} for n in self.guests["pursuer"]},
                **{n: {"role": "evader", **worst_escape(n)} for n in self.guests["evader"]},
            },
        }
        if self.args.exploit:
            xe, xp = f"exploit_{final_p}", f"exploit_{final_e}"
            models = train_runs(
                self.out,
                [
                    (xp, "pursuers", ["--opponent-model", self.pools["evader"][final_e].model]),
                    (xe, "evaders", ["--opponent-model", self.pools["pursuer"][final_p].model]),
                ],
                self.args,
            )
            from agents.evaluation.cross_play import load_team_policy

            br_e = load_team_policy(models[xe], "evader", device="cpu", task=self.task)
            br_p = load_team_policy(models[xp], "pursuer", device="cpu", task=self.task)
            report.play({final_p: self.side("pursuer", final_p)}, {xe: br_e})
            report.play({xp: br_p}, {final_e: self.side("evader", final_e)})
            n = report.episodes
            escapes = n - int(report.cells[final_p, xe].captured.sum())
            captures = int(report.cells[xp, final_e].captured.sum())
            ie, ic = stats.wilson_interval(escapes, n), stats.wilson_interval(captures, n)
            result["exploitability"] = {
                "pursuer": {"best_response": xe, "escape_rate": ie.mean, "ci95": [ie.lo, ie.hi]},
                "evader": {"best_response": xp, "capture_rate": ic.mean, "ci95": [ic.lo, ic.hi]},
            }
        return result


def _mix(names: list[str], weights: NDArray) -> str:
    return ", ".join(f"{n} {w:.2f}" for n, w in zip(names, weights, strict=True) if w > 5e-3)


def run_league(args: Any) -> dict[str, Any]:
    """Play the league of ``args`` (the parser's options) and return ``league.json``'s
    final section."""
    from agents.evaluation.cross_play import format_team_table

    args.out.mkdir(parents=True, exist_ok=True)
    league = League(args)
    for k in range(1, args.rounds + 1):
        league.play_round(k)
    if args.final_response != "none":
        league.play_final_response()
    final = league.final_check()
    league.save(final)
    report = league.report
    p, e = league.names("pursuer", guests=True), league.names("evader", guests=True)
    print(f"\nthe final check ({args.method} league, {args.rounds} rounds):")
    print(format_team_table(report.to_json(p, e), league.task))
    fp, fe = final["pursuer"], final["evader"]
    print(f"final pursuer team {fp['name']}: worst capture {fp['worst_capture']:.1%} (against "
          f"{fp['against']})")  # fmt: skip
    print(f"final evader {fe['name']}: worst escape {fe['worst_escape']:.1%} (against "
          f"{fe['against']})")  # fmt: skip
    for name, g in final["guests"].items():
        what = "capture" if g["role"] == "pursuer" else "escape"
        print(f"guest {g['role']} {name}: worst {what} {g['worst_' + what]:.1%} (against "
              f"{g['against']})")  # fmt: skip
    if "exploitability" in final:
        x = final["exploitability"]
        print(f"exploitability: a fresh evader escapes {fp['name']} "
              f"{x['pursuer']['escape_rate']:.1%}; a fresh pursuer team captures "
              f"{fe['name']} {x['evader']['capture_rate']:.1%}")  # fmt: skip
    print(f"\nwrote {args.out}/league.json, payoff.json, payoff.png, exploitability.png, "
          "report.json, report.png")  # fmt: skip
    return final


def build_parser() -> Any:
    p = cli.OneLineParser(
        prog=PROG,
        description="Population training on a task with a cross-play table (--env, "
        f"{DEFAULT_TASK} by default): each round, a pursuer team and an evader trained "
        "against a mixture of the other role's pool (scripted anchors and every earlier "
        "round), a final response of one role to the other's final pool, then the payoff "
        "matrix and the exploitability check.",
    )
    p.add_argument("--env", type=cross_play_env_arg, default=DEFAULT_TASK,
                   help=f"a task with a cross-play table (default {DEFAULT_TASK})")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("runs/league"), help="league folder")
    p.add_argument("--rounds", type=cli.positive_int, default=DEFAULT_ROUNDS,
                   help=f"rounds (default {DEFAULT_ROUNDS})")  # fmt: skip
    p.add_argument("--method", choices=METHODS, default=DEFAULT_METHOD,
                   help=f"meta-solver (default {DEFAULT_METHOD})")  # fmt: skip
    warm = "on" if DEFAULT_WARM else "off"
    p.add_argument("--warm-start", action=argparse.BooleanOptionalAction, default=DEFAULT_WARM,
                   help="start each round's response from the role's previous one "
                   f"(train.py --init-model; default {warm})")  # fmt: skip
    p.add_argument("--pursuer-timesteps", type=cli.positive_int, default=2_000_000,
                   help="timesteps per pursuer team (default 2M)")  # fmt: skip
    p.add_argument("--evader-timesteps", type=cli.positive_int, default=1_000_000,
                   help="timesteps per evader (default 1M)")  # fmt: skip
    p.add_argument("--final-response", choices=("pursuer", "evader", "none"),
                   default=DEFAULT_FINAL_RESPONSE,
                   help="after the last round, this role answers the other's final pool once "
                   f"more (default {DEFAULT_FINAL_RESPONSE}; none skips it)")  # fmt: skip
    p.add_argument("--final-timesteps", type=cli.positive_int, default=None,
                   help="timesteps of the final response (default: the role's budget per "
                   "round)")  # fmt: skip
    p.add_argument("--n-envs", type=cli.positive_int, default=16,
                   help="envs per training (default 16)")  # fmt: skip
    p.add_argument("--jobs", type=cli.positive_int, default=2,
                   help="trainings side by side, one torch thread each (default 2)")  # fmt: skip
    p.add_argument("--episodes", type=cli.positive_int, default=1000,
                   help="held-out paired episodes of the payoff matrix (default 1000)")  # fmt: skip
    cli.add_seed(p, 0, "training seed of every run")
    p.add_argument("--compare-seed", type=cli.seed_int, default=1_000_000,
                   help="first episode seed of the payoff matrix (default 1000000)")  # fmt: skip
    p.add_argument("--report-seed", type=cli.seed_int, default=2_000_000,
                   help="first episode seed of the final check (default 2000000)")  # fmt: skip
    p.add_argument("--no-exploit", dest="exploit", action="store_false",
                   help="skip the final exploitability check")  # fmt: skip
    p.add_argument("--guest", type=guest_arg, action="append", metavar="ROLE:NAME=MODEL",
                   help="a model played in the final payoff matrix without joining the pools "
                   "(e.g. pursuer:abr=runs/old/p2/model.zip; repeatable)")  # fmt: skip
    return p


def guest_arg(text: str) -> tuple[str, str, str]:
    """``--guest ROLE:NAME=MODEL``: ``(role, name, model path)``."""
    role, _, rest = text.partition(":")
    name, _, path = rest.partition("=")
    if role not in ("pursuer", "evader") or not name or not path:
        raise argparse.ArgumentTypeError(
            f"{text!r}: use ROLE:NAME=MODEL with ROLE pursuer or evader"
        )
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: model file {path} not found")
    return role, name, path


def main(argv: list[str] | None = None) -> int:
    from agents.evaluation.compare import RESUMABLE_INTERRUPT, run_tool

    args = build_parser().parse_args(argv)

    def command() -> int:
        run_league(args)
        return 0

    return run_tool(PROG, command, RESUMABLE_INTERRUPT)


def __getattr__(name: str) -> Any:
    """``ANCHORS``, kept for a release: the default task's scripted strategies per role."""
    if name == "ANCHORS":
        import warnings

        warnings.warn(
            "agents.evaluation.league.ANCHORS is deprecated: the anchors are the task's "
            "baselines, cross_play_task(task).baselines (agents.evaluation.league.ANCHORS "
            "will be removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return dict(cross_play_task().baselines)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
