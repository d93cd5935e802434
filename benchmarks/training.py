"""``python -m benchmarks.training``: how fast PPO learns a task, and the search behind its default.

    python -m benchmarks.training                       # time to 90% / 95%, pursuit
    python -m benchmarks.training --task evasion        # the same for the evader
    python -m benchmarks.training --framework rllib     # the RLlib pair (needs ray)
    python -m benchmarks.training --search              # the default's hyperparameter search
    python -m benchmarks.training --search --task evasion --seeds 0,1,2

**Time to threshold** (the default mode): stable-baselines3's PPO with the task's default
hyperparameters (``train.py``'s: :data:`agents.training.defaults.TRAINING_DEFAULTS`), once
through the native adapter (:func:`steer_env.envs.sb3.make_sb3_vec_env` under
``VecMonitor``) and once through ``make_vec_env`` (a ``DummyVecEnv`` of single envs), same
seed, same hyperparameters. Every ``--eval-every`` timesteps (at the start of a rollout,
when the network has trained on every counted timestep) the clock stops and the
deterministic policy plays the same ``--episodes`` held-out paired episodes (seeds from
``--eval-seed``, the final comparison's of ``train.py``) in one native batch; the figures
are the training seconds (evaluations excluded) and timesteps at which its success rate
first reaches 90% and 95%, and the training timesteps per second. ``--framework rllib``:
the same for RLlib's PPO with ``train.py``'s native env runner and with RLlib's stock one
(:mod:`benchmarks.training_rllib`), on the same held-out episodes.

**Search** (``--search``): each candidate configuration of :func:`candidates` (the task's
default among them) trains for the default budget through the native adapter, for every
seed of ``--seeds``, and is scored on ``--episodes`` held-out paired episodes: success rate
with its Wilson interval per seed, and the training seconds. The table is how the default
was chosen; run it again after changing the task, SB3 or torch.

Both modes print a Markdown table and write JSON (``--json``; default
``benchmarks/results_training_<task>.json``, ``benchmarks/results_training_rllib_<task>.json``
with ``--framework rllib``, or ``benchmarks/results_training_search_<task>.json`` with
``--search``). The engine is
compiled (warmed) before anything is timed; torch runs on one thread, as ``train.py``
does.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from steer_env.cli import OneLineParser, doc_summary, positive_int

HERE = Path(__file__).resolve().parent
THRESHOLDS = (0.90, 0.95)
#: First held-out episode seed: ``train.py``'s final comparison (``--compare-seed``).
EVAL_SEED = 1_000_000
#: Each framework's pair: the table's word for a side, and each side's label in table
#: order (SB3 runs name their side ``adapter``, RLlib runs ``runner``).
PAIRS = {
    "sb3": ("adapter", {"native": "native adapter", "make_vec_env": "make_vec_env (DummyVecEnv)"}),
    "rllib": (
        "RLlib env runner",
        {
            "native": "NativeVectorEnvRunner, native vector env",
            "stock": "stock SingleAgentEnvRunner, SyncVectorEnv",
        },
    ),
}


@dataclass(frozen=True)
class Candidate:
    """One PPO configuration of the search: envs stepped together, rollout length,
    minibatch, epochs per rollout, learning rate, the networks' activation (``"tanh"``,
    SB3's default, or ``"relu"``) and the training budget (timesteps)."""

    name: str
    n_envs: int
    n_steps: int
    batch_size: int
    n_epochs: int
    learning_rate: float
    timesteps: int
    activation: str = "tanh"

    def hyperparameters(self, base: dict[str, Any]) -> dict[str, Any]:
        """``base`` (the task's default hyperparameters) with this candidate's values."""
        policy = dict(base.get("policy_kwargs") or {})
        if policy.get("activation_fn", "tanh") != self.activation:  # SB3's default: tanh
            policy["activation_fn"] = self.activation
        return {
            **base,
            "n_steps": self.n_steps,
            "batch_size": self.batch_size,
            "n_epochs": self.n_epochs,
            "learning_rate": self.learning_rate,
            "policy_kwargs": policy,
        }


def task_defaults(task: str) -> tuple[str, int, int, dict[str, Any]]:
    """``(env_id, timesteps, n_envs, hyperparameters)`` of ``train.py``'s PPO on ``task``."""
    from agents.training import sb3
    from agents.training.defaults import training_defaults
    from steer_env.tasks import get_task

    env_id = get_task(task).env_id
    d = training_defaults("ppo", task)
    return env_id, d.timesteps, d.n_envs, sb3.hyperparameters("ppo", env_id, d.n_envs, d.timesteps)


def candidates(task: str) -> list[Candidate]:
    """The search's configurations for ``task``: its default first, then the variations
    the default was chosen from (rollout shape, epochs, learning rate), all at the default's
    budget, so each is scored on what a user of ``python train.py`` would get."""
    _, timesteps, n_envs, hp = task_defaults(task)
    default = Candidate(
        "default",
        n_envs,
        hp["n_steps"],
        hp["batch_size"],
        hp["n_epochs"],
        float(hp["learning_rate"]),
        timesteps,
        (hp.get("policy_kwargs") or {}).get("activation_fn", "tanh"),
    )
    grid = [
        ("SB3 PPO defaults, 16 x 256", 16, 256, 512, 5, 3e-4, "tanh"),
        ("16 x 256, 10 epochs, lr 6e-4", 16, 256, 512, 10, 6e-4, "tanh"),
        ("16 x 128, 10 epochs, lr 1e-3", 16, 128, 512, 10, 1e-3, "tanh"),
        ("32 x 128, 10 epochs, lr 1e-3", 32, 128, 1024, 10, 1e-3, "tanh"),
        ("32 x 128, 10 epochs, lr 1e-3, ReLU", 32, 128, 1024, 10, 1e-3, "relu"),
        ("32 x 128, batch 2048, 10 epochs, lr 1e-3", 32, 128, 2048, 10, 1e-3, "tanh"),
        ("32 x 256, 5 epochs, lr 6e-4", 32, 256, 1024, 5, 6e-4, "tanh"),
        ("64 x 64, 10 epochs, lr 1e-3", 64, 64, 1024, 10, 1e-3, "tanh"),
    ]
    out = [default]
    for name, e, steps, batch, epochs, lr, activation in grid:
        c = Candidate(name, e, steps, batch, epochs, lr, timesteps, activation)
        same = dataclasses.replace(c, name="default") == default
        if not same:
            out.append(c)
    return out


def _make_env(env_id: str, adapter: str, n_envs: int, seed: int, env_kwargs: dict[str, Any]) -> Any:
    """``train.py``'s training env (:func:`agents.training.sb3.env_factory` under
    ``VecMonitor``), or ``make_vec_env``'s ``DummyVecEnv`` of single envs."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecMonitor

    from agents.training import sb3

    if adapter == "native":
        make, _, _ = sb3.env_factory({"env": env_id}, env_kwargs)
        return VecMonitor(make(n_envs, seed))
    if adapter == "make_vec_env":
        return make_vec_env(env_id, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs)
    raise ValueError(f"adapter must be 'native' or 'make_vec_env', got {adapter!r}")


def success_rate(model: Any, env_id: str, episodes: int, seed: int) -> float:
    """The deterministic policy's success rate on episodes ``seed .. seed + episodes - 1``,
    played in one native batch (:func:`agents.evaluation.compare.play_episodes`)."""
    from agents.evaluation.compare import play_episodes

    results = play_episodes(env_id, lambda env, _seed: model, episodes, seed)
    return float(np.mean(results.success))


def train_and_watch(
    env_id: str,
    adapter: str,
    n_envs: int,
    hp: dict[str, Any],
    timesteps: int,
    seed: int,
    eval_every: int,
    episodes: int,
    eval_seed: int = EVAL_SEED,
) -> dict[str, Any]:
    """PPO on ``env_id`` through ``adapter`` for ``timesteps``, evaluated every
    ``eval_every`` timesteps (0: only at the end) on ``episodes`` held-out episodes with the
    clock stopped. Returns the curve (``timesteps``, training ``seconds``, ``success``) and
    the training timesteps per second."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.training import sb3
    from benchmarks.common import without_log_folder

    sb3.seed_everything(seed)
    env_kwargs = {"shaping_gamma": float(hp.get("gamma", 0.99))}
    venv = _make_env(env_id, adapter, n_envs, seed, env_kwargs)
    model = PPO("MlpPolicy", venv, seed=seed, device="cpu", verbose=0, **sb3.model_kwargs(hp))
    without_log_folder(model)
    curve: list[dict[str, float]] = []
    clock = {"spent": 0.0, "since": 0.0}

    def evaluate() -> None:
        clock["spent"] += time.perf_counter() - clock["since"]
        rate = success_rate(model, env_id, episodes, eval_seed)
        curve.append(
            {"timesteps": int(model.num_timesteps), "seconds": clock["spent"], "success": rate}
        )
        clock["since"] = time.perf_counter()

    class Watch(BaseCallback):
        """Evaluates when a rollout starts: the network has trained on every counted step."""

        def __init__(self) -> None:
            super().__init__()
            self.next = eval_every

        def _on_rollout_start(self) -> None:
            if eval_every > 0 and self.model.num_timesteps >= self.next:
                evaluate()
                self.next = (self.model.num_timesteps // eval_every + 1) * eval_every

        def _on_step(self) -> bool:
            return True

    clock["since"] = time.perf_counter()
    model.learn(timesteps, callback=Watch())
    evaluate()
    venv.close()
    return {
        "adapter": adapter,
        "seed": seed,
        "curve": curve,
        "timesteps": int(model.num_timesteps),
        "train_s": curve[-1]["seconds"],
        "timesteps_per_s": model.num_timesteps / curve[-1]["seconds"],
    }


def first_reaching(curve: Sequence[dict[str, float]], threshold: float) -> dict[str, float] | None:
    """The first point of ``curve`` whose success rate is at least ``threshold``."""
    for point in curve:
        if point["success"] >= threshold:
            return point
    return None


def warm(task: str) -> None:
    """Compile (or load) the task's engine before anything is timed."""
    from steer_env.warmup import warm as warm_tasks

    warm_tasks([task], report=lambda *_: None)


def time_to_threshold(
    task: str, seeds: Sequence[int], episodes: int, eval_every: int | None, timesteps: int | None
) -> dict[str, Any]:
    """Both adapters on ``task`` for every seed: curves and the threshold crossings."""
    env_id, default_timesteps, n_envs, hp = task_defaults(task)
    timesteps = timesteps or default_timesteps
    rollout = hp["n_steps"] * n_envs
    eval_every = eval_every or 2 * rollout
    runs = []
    for seed in seeds:
        for adapter in ("native", "make_vec_env"):
            run = train_and_watch(
                env_id, adapter, n_envs, hp, timesteps, seed, eval_every, episodes
            )
            run["reached"] = {f"{t:.0%}": first_reaching(run["curve"], t) for t in THRESHOLDS}
            runs.append(run)
            print(run_line(run), file=sys.stderr, flush=True)
    return {
        "mode": "time_to_threshold",
        "task": task,
        "env_id": env_id,
        "n_envs": n_envs,
        "hyperparameters": hp,
        "timesteps": timesteps,
        "eval_every": eval_every,
        "episodes": episodes,
        "eval_seed": EVAL_SEED,
        "runs": runs,
    }


def side_of(run: dict[str, Any]) -> str:
    """The side of a pair a run is: its SB3 ``adapter`` or its RLlib ``runner``."""
    return run["adapter"] if "adapter" in run else run["runner"]


def run_line(run: dict[str, Any]) -> str:
    """One progress line of a finished run."""
    reached = ", ".join(
        f"{k} at {v['seconds']:.1f} s" if v else f"{k} not reached"
        for k, v in run["reached"].items()
    )
    return (
        f"  {side_of(run):12} seed {run['seed']}: {run['timesteps_per_s']:,.0f} timesteps/s, "
        f"final {run['curve'][-1]['success']:.1%}; {reached}"
    )


def _median_or_none(values: list[float | None]) -> float | None:
    """The median when every run reached the threshold, else None."""
    if any(v is None for v in values):
        return None
    return statistics.median(values)  # type: ignore[type-var]


def threshold_table(result: dict[str, Any]) -> str:
    """Markdown: per side of the pair (SB3 adapter or RLlib runner), the median
    timesteps/s and seconds (timesteps) to each threshold over the seeds; "not reached"
    when a seed never got there."""
    column, sides = PAIRS[result.get("framework", "sb3")]
    header = f"| {column} | timesteps/s | " + " | ".join(
        f"s to {t:.0%} (timesteps)" for t in THRESHOLDS
    )
    lines = [header + " | final success |", "|---" * (3 + len(THRESHOLDS)) + "|"]
    for side, label in sides.items():
        runs = [r for r in result["runs"] if side_of(r) == side]
        if not runs:
            continue
        fps = statistics.median(r["timesteps_per_s"] for r in runs)
        cells = []
        for t in THRESHOLDS:
            points = [r["reached"][f"{t:.0%}"] for r in runs]
            s = _median_or_none([p["seconds"] if p else None for p in points])
            n = _median_or_none([p["timesteps"] if p else None for p in points])
            reached = sum(p is not None for p in points)
            cells.append(
                f"{s:.1f} ({n:,.0f})"
                if s is not None
                else f"not reached by {len(runs) - reached} of {len(runs)} seeds"
            )
        final = ", ".join(f"{r['curve'][-1]['success']:.1%}" for r in runs)
        lines.append(f"| {label} | {fps:,.0f} | " + " | ".join(cells) + f" | {final} |")
    return "\n".join(lines)


def rows(task: str = "pursuit", quick: bool = False) -> list[Any]:
    """The SB3 rows of the training section of ``python -m benchmarks``:
    :func:`time_to_threshold` for ``task`` (seed 0) as rows (:func:`threshold_rows`).
    ``quick``: two rollouts and 50 episodes (a smoke run: the thresholds are not
    expected). The RLlib rows: :func:`benchmarks.training_rllib.rows`."""
    _, _, n_envs, hp = task_defaults(task)
    rollout = hp["n_steps"] * n_envs
    warm(task)
    result = time_to_threshold(
        task,
        [0],
        50 if quick else 500,
        rollout if quick else None,
        2 * rollout if quick else None,
    )
    return threshold_rows(result, f"PPO {task.capitalize()}")


def threshold_rows(result: dict[str, Any], prefix: str) -> list[Any]:
    """A time-to-threshold result as rows of ``python -m benchmarks``, named
    ``{prefix}, {side}`` (an RLlib side: ``{side} runner``): per run the training
    timesteps per second and the seconds to each threshold (a ``Missing`` row when the
    budget ended first)."""
    from benchmarks.common import Missing, Row

    n_envs = result["n_envs"]
    settings = {"hyperparameters": result["hyperparameters"], "timesteps": result["timesteps"]}
    out: list[Any] = []
    for run in result["runs"]:
        label = f"{prefix}, {side_of(run)}" + ("" if "adapter" in run else " runner")
        rate = [run["timesteps_per_s"]]
        extra = {**settings, "curve": run["curve"]}
        out.append(Row("training", f"{label}: training", n_envs, "timesteps/s", rate, extra=extra))
        for t in THRESHOLDS:
            point = run["reached"][f"{t:.0%}"]
            what = f"{label}: seconds to {t:.0%} success"
            if point is None:
                final = run["curve"][-1]["success"]
                out.append(
                    Missing("training", what, n_envs,
                            f"not reached in {run['timesteps']:,} timesteps (final {final:.1%})")
                )  # fmt: skip
            else:
                out.append(
                    Row("training", what, n_envs, "s", [point["seconds"]],
                        note=f"{point['timesteps']:,} timesteps",
                        extra={"timesteps": point["timesteps"], "episodes": result["episodes"]})
                )  # fmt: skip
    return out


def search(
    task: str, seeds: Sequence[int], episodes: int, timesteps: int | None = None
) -> dict[str, Any]:
    """Every candidate of :func:`candidates` for every seed: success on ``episodes``
    held-out episodes (Wilson interval) and training seconds. ``timesteps`` replaces every
    candidate's budget (the default's)."""
    from agents.evaluation.stats import wilson_interval

    env_id, _, _, hp = task_defaults(task)
    rows = []
    for c in candidates(task):
        if timesteps is not None:
            c = dataclasses.replace(c, timesteps=timesteps)
        chp = c.hyperparameters(hp)
        runs = []
        for seed in seeds:
            run = train_and_watch(env_id, "native", c.n_envs, chp, c.timesteps, seed, 0, episodes)
            rate = run["curve"][-1]["success"]
            _, lo, hi = wilson_interval(round(rate * episodes), episodes)
            runs.append(
                {
                    "seed": seed,
                    "success": rate,
                    "wilson": [lo, hi],
                    "train_s": run["train_s"],
                    "timesteps": run["timesteps"],
                }
            )
            print(
                f"  {c.name}: seed {seed} {rate:.1%} [{lo:.1%}, {hi:.1%}] "
                f"in {run['train_s']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
        rows.append({"candidate": dataclasses.asdict(c), "runs": runs})
    return {
        "mode": "search",
        "task": task,
        "env_id": env_id,
        "episodes": episodes,
        "eval_seed": EVAL_SEED,
        "seeds": list(seeds),
        "rows": rows,
    }


def search_table(result: dict[str, Any]) -> str:
    """Markdown: per candidate, each seed's success rate, the lowest Wilson lower bound
    and the median training seconds."""
    seeds = result["seeds"]
    lines = [
        "| configuration | envs x steps, batch, epochs, lr, activation | "
        + " | ".join(f"seed {s}" for s in seeds)
        + " | lowest Wilson lower bound | median training s |",
        "|---" * (4 + len(seeds)) + "|",
    ]
    for row in result["rows"]:
        c = row["candidate"]
        shape = (
            f"{c['n_envs']} x {c['n_steps']}, {c['batch_size']}, {c['n_epochs']}, "
            f"{c['learning_rate']:g}, {c['activation']}"
        )
        rates = " | ".join(f"{r['success']:.1%}" for r in row["runs"])
        low = min(r["wilson"][0] for r in row["runs"])
        secs = statistics.median(r["train_s"] for r in row["runs"])
        lines.append(f"| {c['name']} | {shape} | {rates} | {low:.1%} | {secs:.1f} |")
    return "\n".join(lines)


def _seeds(text: str) -> list[int]:
    import argparse

    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds like 0,1,2, got {text!r}") from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected seeds like 0,1,2, got {text!r}")
    return values


def parse(argv: list[str] | None) -> Any:
    from steer_env.tasks import REGISTRY

    single = [name for name, t in REGISTRY.items() if t.metrics.layout == "agents"]
    p = OneLineParser(prog="python -m benchmarks.training", description=doc_summary(__doc__))
    p.add_argument("--task", choices=single, default="pursuit", help="task (default pursuit)")
    p.add_argument(
        "--framework",
        choices=tuple(PAIRS),
        default="sb3",
        help="sb3: native adapter vs make_vec_env (default); rllib: NativeVectorEnvRunner vs "
        "the stock SingleAgentEnvRunner (needs ray)",
    )
    p.add_argument("--search", action="store_true", help="score the candidate configurations")
    p.add_argument(
        "--seeds", type=_seeds, default=None, help="training seeds (default 0; 0,1,2 with --search)"
    )
    p.add_argument(
        "--episodes",
        type=positive_int,
        default=None,
        help="held-out episodes per evaluation (default 500; 1000 with --search)",
    )
    p.add_argument(
        "--eval-every",
        type=positive_int,
        default=None,
        help="timesteps between evaluations (default two rollouts, or two RLlib iterations, "
        "of the default)",
    )
    p.add_argument(
        "--timesteps", type=positive_int, default=None, help="budget (default the task's)"
    )
    p.add_argument("--json", type=Path, default=None, help="where to write the JSON")
    args = p.parse_args(argv)
    if args.framework == "rllib":
        if args.search:
            p.error("--search scores SB3 configurations: drop --framework rllib")
        if importlib.util.find_spec("ray") is None:
            p.error('--framework rllib needs ray: pip install "steer-env[rllib]"')
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from benchmarks.common import machine, versions

    warm(args.task)
    if args.search:
        seeds = args.seeds or [0, 1, 2]
        result = search(args.task, seeds, args.episodes or 1000, args.timesteps)
        table = search_table(result)
        path = args.json or HERE / f"results_training_search_{args.task}.json"
    elif args.framework == "rllib":
        from benchmarks import training_rllib

        seeds = args.seeds or [0]
        result = training_rllib.time_to_threshold(
            args.task, seeds, args.episodes or 500, args.eval_every, args.timesteps
        )
        table = threshold_table(result)
        path = args.json or HERE / f"results_training_rllib_{args.task}.json"
    else:
        seeds = args.seeds or [0]
        result = time_to_threshold(
            args.task, seeds, args.episodes or 500, args.eval_every, args.timesteps
        )
        table = threshold_table(result)
        path = args.json or HERE / f"results_training_{args.task}.json"
    result["command"] = "python -m benchmarks.training " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    result["machine"] = machine()
    result["versions"] = versions()
    print(table)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
