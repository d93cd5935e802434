"""The stable-baselines3 pieces of a training run: hyperparameters adapted to the run,
model zips and checkpoints written atomically, the checkpoint and evaluation callbacks.

Checkpoints are ``checkpoints/ckpt_<timesteps>_steps.zip`` (+ ``replay_buffer.pkl`` for
SAC); the run folder and lifecycle around them are :mod:`agents.training.run`'s.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.compare import task_of
from agents.evaluation.cross_play import (
    check_opponent_strategy,
    learned_of,
    load_team_policy,
    other_role,
    role_of,
    team_overrides,
    team_slots,
    trained_role,
)
from agents.evaluation.mixture import load_members, mixture_of_pool, read_pool
from agents.evaluation.policies import (
    METADATA_KEY,
    ON_POLICY,
    UsageError,
    algo_class,
    config_overrides,
    env_tag,
    resolve_device,
)
from agents.training import options
from agents.training.defaults import training_defaults
from agents.training.run import EvaluationRecord, InterruptGuard, RunPaths, prepare_run_dir
from steer_env.cli import atomic_output

#: Algorithms ``train.py`` trains.
TRAIN_ALGOS = ("ppo", "sac")

CHECKPOINT_RE = re.compile(r"^ckpt_(\d+)_steps\.zip$")


def trained_timesteps(algo: str, hp: dict[str, Any], n_envs: int, remaining: int) -> int:
    """How many timesteps ``model.learn(remaining)`` really trains: SB3 collects whole
    rollouts (PPO: ``n_steps * n_envs`` timesteps) or whole vector steps (SAC: ``n_envs``
    per step) until it has at least ``remaining``."""
    if remaining <= 0:
        return 0
    chunk = hp["n_steps"] * n_envs if algo in ON_POLICY else n_envs * int(hp.get("train_freq", 1))
    return -(-remaining // chunk) * chunk


def hyperparameters(algo: str, env_id: str, n_envs: int, timesteps: int) -> dict[str, Any]:
    """The hyperparameters of ``algo`` on ``env_id`` (:data:`TRAINING_DEFAULTS
    <agents.training.defaults.TRAINING_DEFAULTS>`) adapted to ``n_envs`` and the budget."""
    hp = json.loads(json.dumps(training_defaults(algo, env_id).hyperparameters))
    if algo == "ppo":
        rollout = hp["n_steps"] * n_envs
        batch = min(hp["batch_size"], rollout)
        while rollout % batch:  # a divisor of the rollout: no truncated mini-batch
            batch -= 1
        hp["batch_size"] = max(batch, 2)
    else:
        hp["buffer_size"] = int(min(hp["buffer_size"], max(timesteps, 10_000)))
        hp["learning_starts"] = int(min(hp["learning_starts"], max(timesteps // 10, 100)))
    return hp


def curriculum(
    stages: tuple[Mapping[str, Any], ...], timesteps: int, config: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """A new run's curriculum (the task's ``training`` entry's, :func:`steer_env.tasks.
    training.defaults`) in timesteps of its budget ``timesteps``: ``[{"until": timesteps,
    "config": {...}}, ...]``. A key the run sets itself (``--set``, ``config``) is the run's
    from the start: it leaves every stage, and a stage left empty is dropped."""
    given = set(config or {})
    resolved = []
    for stage in stages:
        overrides = {k: v for k, v in stage["config"].items() if k not in given}
        until = int(stage["until"] * timesteps)
        if overrides and until > 0:
            resolved.append({"until": until, "config": overrides})
    return resolved


def stages_from(opts: dict[str, Any], start_timesteps: int) -> list[tuple[int, dict[str, Any]]]:
    """The stages still to train from ``start_timesteps``: ``(until, config overrides)``
    pairs, the curriculum's then the task's own configuration (no overrides) up to the
    run's budget."""
    total = int(opts["timesteps"])
    stages = [(int(s["until"]), dict(s["config"])) for s in opts.get("curriculum") or []]
    stages = [(until, over) for until, over in stages if until < total] + [(total, {})]
    return [(until, over) for until, over in stages if until > start_timesteps]


def describe_curriculum(stages: list[dict[str, Any]]) -> str:
    """One line for a run's curriculum: ``caught_penalty=2.0 until 12,000,000 timesteps,
    then the task's configuration``."""
    parts = [
        " ".join(f"{k}={v}" for k, v in s["config"].items()) + f" until {s['until']:,} timesteps"
        for s in stages
    ]
    return "curriculum: " + ", then ".join(parts) + ", then the task's configuration"


def seed_everything(seed: int, threads: int = 1) -> None:
    """Seed every random source a training run draws from, before any is created (CleanRL
    style): Python's, numpy's legacy global generator (SB3 seeds it too) and torch's, with
    deterministic cuDNN and ``threads`` torch CPU threads (1 is fastest for these small
    networks on 2 cores)."""
    import random

    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002  (legacy global RNG, as SB3 seeds it)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.set_num_threads(int(threads))


#: ``policy_kwargs["activation_fn"]`` by name (the tables and ``config.json`` hold JSON).
ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU"}


def model_kwargs(hp: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of SB3's constructor for hyperparameters ``hp``: an
    ``activation_fn`` named in ``policy_kwargs`` (``"relu"``, ``"tanh"``) becomes the torch
    module class. ``ValueError`` naming the accepted names for another."""
    kwargs = dict(hp.get("policy_kwargs") or {})
    name = kwargs.get("activation_fn")
    if isinstance(name, str):
        if name not in ACTIVATIONS:
            accepted = ", ".join(ACTIVATIONS)
            raise ValueError(f"policy_kwargs activation_fn must be one of {accepted}, got {name!r}")
        import torch

        kwargs["activation_fn"] = getattr(torch.nn, ACTIVATIONS[name])
    if not kwargs:
        return dict(hp)
    return {**hp, "policy_kwargs": kwargs}


def build_model(
    opts: dict[str, Any],
    hp: dict[str, Any],
    env: Any,
    device: str,
    paths: RunPaths,
    seed: int,
    start: tuple[Path, int] | None = None,
) -> Any:
    """The run's SB3 model on ``env``, seeded with the session's ``seed``: the checkpoint
    ``start`` (``(path, timesteps)``) of a resumed run with its replay buffer (off-policy),
    or the network and weights of ``--init-model`` with the run's hyperparameters ``hp``
    (:class:`UsageError`, one line, when its spaces are not the env's), or a new network."""
    algo = opts["algo"]
    cls = algo_class(algo)
    tb = str(paths.tensorboard)
    if start:
        model = cls.load(start[0], env=env, device=device, tensorboard_log=tb)
        model.set_random_seed(seed)
        if algo not in ON_POLICY and paths.replay_buffer.is_file():
            model.load_replay_buffer(paths.replay_buffer)
        options.print_resuming(paths, start[0], start[1])
        return model
    init = opts.get("init_model")
    if not init:
        return cls("MlpPolicy", env, seed=seed, device=device, verbose=0,
                   tensorboard_log=tb, **model_kwargs(hp))  # fmt: skip
    run_hp = {k: v for k, v in model_kwargs(hp).items() if k != "policy_kwargs"}
    try:
        model = cls.load(init, env=env, device=device, tensorboard_log=tb, **run_hp)
    except ValueError as exc:  # SB3: the model's spaces are not this env's
        raise UsageError(f"--init-model {init}: {exc}") from None
    model.set_random_seed(seed)
    print(f"starting from the weights of {init}")
    return model


def model_timesteps(path: Path) -> int | None:
    """``num_timesteps`` stored in an SB3 zip (None if unreadable)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data"))
        return int(data["num_timesteps"])
    except Exception:
        return None


def latest_checkpoint(paths: RunPaths) -> tuple[Path, int] | None:
    """The most advanced resumable model of a run: the newest readable checkpoint, or
    ``model.zip`` when it holds more timesteps."""
    found: list[tuple[int, Path]] = []
    if paths.checkpoints.is_dir():
        for f in paths.checkpoints.iterdir():
            m = CHECKPOINT_RE.match(f.name)
            if m and model_timesteps(f) is not None:
                found.append((int(m.group(1)), f))
    if paths.model.is_file():
        t = model_timesteps(paths.model)
        if t is not None:
            found.append((t, paths.model))
    if not found:
        return None
    t, f = max(found, key=lambda x: (x[0], x[1].name != "model.zip"))
    return f, t


def save_model_atomic(model: Any, path: Path, metadata: dict[str, Any]) -> Path:
    """``model.save`` to a temp zip in ``path``'s folder, then ``os.replace`` onto ``path``
    (:func:`steer_env.cli.atomic_output`). ``metadata`` is stored in the zip's ``data`` JSON
    under ``steer_env``."""
    path = Path(path)
    setattr(model, METADATA_KEY, {**metadata, "num_timesteps": int(model.num_timesteps)})
    with atomic_output(path, ".tmp.zip") as tmp:
        model.save(tmp)
    return path


def save_replay_buffer_atomic(model: Any, path: Path) -> None:
    with atomic_output(path, ".tmp.pkl") as tmp:
        model.save_replay_buffer(tmp)


def save_checkpoint(model: Any, paths: RunPaths, metadata: dict[str, Any]) -> Path:
    """Checkpoint ``model`` (and, off-policy, its replay buffer) under ``checkpoints/``."""
    path = save_model_atomic(model, paths.checkpoint(int(model.num_timesteps)), metadata)
    if hasattr(model, "replay_buffer") and getattr(model, "replay_buffer", None) is not None:
        save_replay_buffer_atomic(model, paths.replay_buffer)
    return path


def make_callbacks(
    paths: RunPaths,
    checkpoint_freq: int,
    metadata: dict[str, Any],
    guard: InterruptGuard,
    eval_env: Any,
    eval_freq: int,
    eval_seed: int,
    n_envs: int,
) -> tuple[Any, Any]:
    """``(checkpointer, CallbackList)``: periodic atomic checkpoints + stop on interrupt, and
    an :class:`~stable_baselines3.common.callbacks.EvalCallback` on a separate seeded
    eval env (success rate from ``infos["is_success"]``), its history kept across resumes.
    Every SB3 slot of ``eval_env`` plays one episode per evaluation: a single-agent run's
    slots are its episodes, a team's the agents of its episodes."""
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, EvalCallback

    class Checkpointer(BaseCallback):
        """Checkpoints when a new rollout starts (the model has then been trained on every
        counted step) and stops training when an interrupt was requested."""

        def __init__(self) -> None:
            super().__init__()
            self.rollout_start = 0
            self.last_saved: Path | None = None
            self._next = checkpoint_freq

        def _init_callback(self) -> None:
            t = int(self.model.num_timesteps)
            self.rollout_start = t
            self._next = (t // checkpoint_freq + 1) * checkpoint_freq

        def _on_rollout_start(self) -> None:
            t = int(self.model.num_timesteps)
            self.rollout_start = t
            if t >= self._next:
                self.last_saved = save_checkpoint(self.model, paths, metadata)
                self._next = (t // checkpoint_freq + 1) * checkpoint_freq

        def _on_step(self) -> bool:
            return not guard.requested

    class SeededEval(EvalCallback):
        """EvalCallback that reseeds its env before each evaluation (same episodes every
        time) and continues the history in ``eval/evaluations.npz`` after a resume."""

        def _init_callback(self) -> None:
            super()._init_callback()
            # The run's record up to the checkpoint the training resumes from (the one
            # reader of the file, shared with RLlib's runs).
            record = EvaluationRecord(
                paths.evaluations,
                ("results", "ep_lengths", "successes"),
                int(self.model.num_timesteps),
            )
            self.evaluations_timesteps = list(record.columns["timesteps"])
            self.evaluations_results = [list(r) for r in record.columns["results"]]
            self.evaluations_length = [list(r) for r in record.columns["ep_lengths"]]
            self.evaluations_successes = [list(r) for r in record.columns["successes"]]

        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(eval_seed)
            return super()._on_step()

    ckpt = Checkpointer()
    evaluator = SeededEval(
        eval_env,
        n_eval_episodes=eval_env.num_envs,
        eval_freq=max(1, eval_freq // n_envs),
        log_path=str(paths.eval),
        best_model_save_path=None,
        deterministic=True,
        verbose=0,
    )
    return ckpt, CallbackList([ckpt, evaluator])


# ------------------------------------------------------------------ options
#: Options a resumed run takes from its config.json unless given again.
RESUMABLE = (*options.RESUMABLE, "device")
#: Options fixed for the life of a run.
FIXED = (
    "env",
    "algo",
    "n_envs",
    "seed",
    "learned",
    "opponent_model",
    "opponent_strategy",
    "opponent_pool",
    "init_model",
    "config",
    "curriculum",
)
#: Options of ``--framework rllib`` only.
RLLIB_ONLY = ("address", "num_env_runners", "envs_per_runner", "num_learners")


def algo_arg(text: str) -> str:
    """An argparse ``type``: an algorithm of :data:`TRAIN_ALGOS`, any case."""
    key = text.strip().lower()
    if key not in TRAIN_ALGOS:
        raise argparse.ArgumentTypeError(
            f"unknown algorithm {text!r}: use one of {', '.join(TRAIN_ALGOS)}"
        )
    return key


def resolve_options(
    args: Any, given: dict[str, Any], prog: str
) -> tuple[dict[str, Any], RunPaths, dict[str, Any]]:
    """All options of the current session (``args``: defaults filled in; or taken from the run's
    config.json when resuming, ``given`` replacing the resumable ones), the run paths and
    the previous config (``{}`` for a new run). :class:`UsageError` for options of another
    framework or task, and for CUDA asked for but missing (before a folder is created)."""
    for key in RLLIB_ONLY:
        if key in given:
            raise UsageError(f"{options.flag(key)} needs --framework rllib")
    if args.device == "cuda":
        resolve_device("cuda", args.algo)
    previous: dict[str, Any] = {}
    if args.resume and "curriculum" in given:
        raise UsageError(
            "a resumed run keeps the curriculum it started with: drop "
            f"--{'' if given['curriculum'] else 'no-'}curriculum"
        )
    if args.resume:
        opts, paths, previous, stale = options.resumed_run(args, FIXED, RESUMABLE, given=given)
    else:
        env, algo, seed = args.env, args.algo, args.seed
        name = args.name or options.run_name(env_tag(env), algo, seed)
        paths = RunPaths(args.out / name)
        config = config_overrides(args.config, env, several=True)
        setup = setup_of(env, config)
        setup.check_options(given)
        defaults = training_defaults(algo, env)
        timesteps = args.timesteps or defaults.timesteps
        opts = {
            "env": env,
            "algo": algo,
            "seed": seed,
            "name": name,
            "timesteps": timesteps,
            "n_envs": args.n_envs or defaults.n_envs,
            "device": args.device,
            "config": config,
            **options.new_run_options(args, timesteps),
            **setup.options(args),
        }
        opts["curriculum"] = curriculum(
            defaults.curriculum if args.curriculum else (), timesteps, config
        )
        opts["init_model"] = check_init_model(args.init_model, opts)
        stale = prepare_run_dir(paths, resume=False, overwrite=args.overwrite)
    options.note_stale(prog, paths, stale)
    opts["out"] = str(args.out)
    return opts, paths, previous


def check_init_model(path: Path | None, opts: dict[str, Any]) -> str | None:
    """``train.py --init-model``: the absolute path of a model of the run's task, algorithm
    and (for a team task) role, whose weights the new run starts from;
    :class:`UsageError` (one line) otherwise."""
    if path is None:
        return None
    from agents.evaluation.policies import PolicyLoadError, read_data_json

    p = Path(path)
    try:
        meta = read_data_json(p).get(METADATA_KEY) or {}
    except PolicyLoadError as exc:  # missing, not a zip, corrupt
        raise UsageError(f"--init-model {p}: {exc}") from None
    env = opts["env"]
    if meta.get("env_id") not in (env, env_tag(env)):
        raise UsageError(f"--init-model {p} was trained on {meta.get('env_id')}, not {env}")
    if meta.get("algo", opts["algo"]) != opts["algo"]:
        raise UsageError(f"--init-model {p} is a {meta['algo'].upper()} model, not "
                         f"{opts['algo'].upper()}")  # fmt: skip
    learned = opts.get("learned")
    if "role" in meta and learned and learned_of(meta["role"], opts["env"]) != learned:
        raise UsageError(f"--init-model {p} is a {meta['role']} policy (--learned {learned})")
    return str(p.resolve())


# ------------------------------------------------------------------ envs
class SingleAgentSetup:
    """How SB3 trains a task with one learned agent (``metrics.layout`` ``"agents"``): its
    Gymnasium form on the native batch, one SB3 env slot per env."""

    def check_options(self, given: dict[str, Any]) -> None:
        """:class:`UsageError` for an option of the roles' choice (``--learned``, ...)."""
        for key in ("learned", "opponent_model", "opponent_strategy", "opponent_pool"):
            if key in given:
                raise UsageError(options.team_only(key))

    def options(self, args: Any) -> dict[str, Any]:
        """What a new run's options add for the task: nothing."""
        return {}

    def agent_slots(self, opts: dict[str, Any]) -> int:
        return int(opts["n_envs"])

    def eval_envs(self, episodes: int) -> int:
        """One env per periodic-evaluation episode: every episode in one batch."""
        return episodes

    def env_factory(
        self, opts: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> tuple[Callable[[int, int], Any], Any, dict[str, Any]]:
        from steer_env.envs.sb3 import make_sb3_vec_env

        env_id = opts["env"]

        def make_env(n: int, seed: int) -> Any:
            return make_sb3_vec_env(env_id, n_envs=n, seed=seed, **env_kwargs)

        return make_env, None, {}


class SharedPolicySetup:
    """How SB3 trains one role of a team task (``metrics.layout`` ``"cross_play"``): one
    shared policy, one SB3 env slot per agent of the trained role
    (:class:`steer_env.envs.sb3.TeamSB3VecEnv`), the other role scripted or a frozen
    model."""

    def check_options(self, given: dict[str, Any]) -> None:
        """Every option applies; the roles' choice has its own options, not ``--set``."""
        team_overrides(given.get("config"), given.get("env"))

    def options(self, args: Any) -> dict[str, Any]:
        """The trained role and the other role's opponent (a frozen model or a strategy)."""
        if args.learned == "both":
            raise UsageError(
                "stable-baselines3 trains one role at a time: train against a frozen "
                "--opponent-model, or train both roles with --framework rllib"
            )
        opponent = str(args.opponent_model) if args.opponent_model is not None else None
        pool = None
        if args.opponent_pool is not None:
            if opponent is not None or args.opponent_strategy is not None:
                raise UsageError(
                    "give one of --opponent-pool, --opponent-model or --opponent-strategy"
                )
            other = other_role(trained_role(args.learned, args.env).name, args.env)
            read_pool(args.opponent_pool, other)  # a bad file fails before the run folder
            pool = str(Path(args.opponent_pool).resolve())
        return {
            "learned": args.learned,
            "opponent_model": opponent,
            "opponent_strategy": check_opponent_strategy(
                args.learned, args.opponent_strategy, opponent, args.env
            ),
            "opponent_pool": pool,
        }

    def agent_slots(self, opts: dict[str, Any]) -> int:
        return int(opts["n_envs"]) * team_slots(opts, opts["env"])

    def eval_envs(self, episodes: int) -> int:
        """One team env per periodic-evaluation episode; each of its SB3 slots plays that
        episode once (:func:`make_callbacks`)."""
        return episodes

    def env_factory(
        self, opts: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> tuple[Callable[[int, int], Any], Any, dict[str, Any]]:
        from steer_env.envs.sb3 import make_team_sb3_vec_env

        task = opts["env"]
        role = trained_role(opts["learned"], task).name
        other = other_role(role, task)
        team_config: dict[str, Any] = {"learned": opts["learned"]}
        if opts.get("opponent_strategy"):
            team_config[role_of(other, task).strategy_key] = opts["opponent_strategy"]
        opponent = None
        if opts.get("opponent_model"):
            opponent = load_team_policy(opts["opponent_model"], other, device="cpu", task=task)
            team_config["learned"] = "both"
        extra: dict[str, Any] = {"role": role}
        pool_policies: list[Any] = []
        if opts.get("opponent_pool"):
            # A mixture: each env plays a member drawn at each of its resets (a fresh
            # mixture per vec env, seeded by its seed, so the training and evaluation envs
            # draw apart and reproducibly).
            _, members = read_pool(opts["opponent_pool"], other)
            both = {**team_config, "learned": "both"}
            pool_policies = load_members(members, other, both, task=task)
            team_config["learned"] = "both"
            extra["opponent_pool"] = [m.to_json() for m in members]
        assert team_config["learned"] in (learned_of(role, task), "both")
        per_env = team_slots({"learned": learned_of(other, task), "config": env_kwargs}, task)

        def make_team_env(n: int, seed: int) -> Any:
            against = opponent
            if pool_policies:
                against = mixture_of_pool(members, other, per_env, seed, policies=pool_policies)
            return make_team_sb3_vec_env(
                n, seed=seed, role=role, opponent=against, task=task, **team_config, **env_kwargs
            )

        return make_team_env, opponent, extra


class SharedAgentsSetup(SingleAgentSetup):
    """How SB3 trains a task of one learned role (``metrics.layout`` ``"agents"``) whose
    configuration has several learned agents of that role (``--set n_dogs=2``,
    :func:`agents.evaluation.shared.several_agents`): one policy shared by every agent, one
    SB3 env slot per agent (:class:`steer_env.envs.sb3.TeamSB3VecEnv`) over the task's
    PettingZoo batch."""

    def agent_slots(self, opts: dict[str, Any]) -> int:
        from agents.evaluation.shared import learned_agents

        return int(opts["n_envs"]) * learned_agents(opts["env"], opts.get("config"))

    def eval_envs(self, episodes: int) -> int:
        """One env per periodic-evaluation episode, as :class:`SharedPolicySetup`'s."""
        return episodes

    def env_factory(
        self, opts: dict[str, Any], env_kwargs: dict[str, Any]
    ) -> tuple[Callable[[int, int], Any], Any, dict[str, Any]]:
        from agents.evaluation.shared import learned_agents, team_batch
        from steer_env.envs.sb3 import TeamSB3VecEnv

        env = opts["env"]
        role = task_of(env).learned_team

        def make_env(n: int, seed: int) -> Any:
            venv = TeamSB3VecEnv(team_batch(env, n, env_kwargs), role=role)
            venv.seed(seed)
            return venv

        return make_env, None, {"role": role, "agents": learned_agents(env, env_kwargs)}


#: How SB3 trains a task, by its ``metrics.layout``.
SETUPS: dict[str, Any] = {"agents": SingleAgentSetup(), "cross_play": SharedPolicySetup()}
#: The ``"agents"`` layout's setup for a configuration with several learned agents.
SHARED_AGENTS = SharedAgentsSetup()


def setup_of(env: str, config: dict[str, Any] | None = None) -> Any:
    """The training setup of the task ``env`` (its name or env id) with the ``--set``
    configuration ``config``: its layout's (:data:`SETUPS`), or :data:`SHARED_AGENTS` when
    ``config`` has several learned agents of the task's one learned role."""
    from agents.evaluation.shared import several_agents

    if task_of(env).metrics.layout == "agents" and several_agents(env, config):
        return SHARED_AGENTS
    return SETUPS[task_of(env).metrics.layout]


def agent_slots(opts: dict[str, Any]) -> int:
    """SB3's ``n_envs``: the envs, or the agent slots of the trained role (a team task, or
    several agents of one role)."""
    return setup_of(opts["env"], opts.get("config")).agent_slots(opts)


def env_factory(
    opts: dict[str, Any], env_kwargs: dict[str, Any]
) -> tuple[Callable[[int, int], Any], Any, dict[str, Any]]:
    """``(make_env(n, seed), opponent, metadata)``: the SB3 vec env of ``n`` envs of the run's
    task, the frozen opponent model of a team run (or None) and what the model's metadata
    adds for it (:func:`setup_of`)."""
    return setup_of(opts["env"], opts.get("config")).env_factory(opts, env_kwargs)


def eval_envs(env: str, episodes: int, config: dict[str, Any] | None = None) -> int:
    """Envs of the periodic evaluation's env of ``episodes`` episodes (:func:`setup_of`)."""
    return setup_of(env, config).eval_envs(episodes)


#: A warm-up longer than this was a compile, which the run reports.
COMPILE_NOTE_S = 5.0


def warm_engine(env: str, make_env: Callable[[int, int], Any]) -> float:
    """Compile (or load from numba's cache) what the run steps, in this process: a reset
    and a step of a one-env copy of its training env (``make_env(n, seed)``: the same task,
    configuration, scripted strategies and opponents), and nothing else (not the task's
    other forms and strategies, which :func:`steer_env.warmup.warm` compiles). The seconds
    it took, printed when it was a compile (a fresh install, or an engine edited since the
    cache was written)."""
    t0 = time.perf_counter()
    venv = make_env(1, 0)
    venv.reset()
    venv.step(np.zeros((venv.num_envs, *venv.action_space.shape), dtype=np.float32))
    venv.close()
    seconds = time.perf_counter() - t0
    if seconds > COMPILE_NOTE_S:
        name = task_of(env).name
        print(f"compiled the {name} engine in {seconds:.1f} s (first use; cached from now on)")
    return seconds


def progress_bar(opts: dict[str, Any], prog: str) -> bool:
    """Whether to show SB3's progress bar: asked for, and tqdm and rich are installed (a
    note on stderr otherwise)."""
    if not opts["progress"]:
        return False
    try:
        import rich  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError:
        print(
            f"{prog}: note: progress bar needs tqdm and rich; training without it",
            file=sys.stderr,
        )
        return False
    return True


def print_training(
    opts: dict[str, Any], hp: dict[str, Any], slots: int, start: int, device: str, root: Path
) -> None:
    """The line that starts training, after a note when SB3 trains more timesteps than
    asked (whole rollouts or whole vector steps)."""
    algo, n_envs = opts["algo"], int(opts["n_envs"])
    remaining = int(opts["timesteps"]) - start
    steps = trained_timesteps(algo, hp, slots, remaining)
    team_note = f" x {slots // n_envs} shared-policy agents" if slots != n_envs else ""
    if steps != remaining:
        unit = (
            f"whole rollouts of {hp['n_steps'] * slots:,} timesteps "
            f"(n_steps {hp['n_steps']} x {slots} envs)"
            if algo in ON_POLICY
            else f"whole steps of the {slots} envs"
        )
        print(
            f"note: {algo.upper()} trains in {unit}: {steps:,} timesteps instead of the "
            f"{remaining:,} asked for (run total {start + steps:,})",
            flush=True,
        )
    print(
        f"training {algo.upper()} on {opts['env']} for {steps:,} timesteps "
        f"({n_envs} envs{team_note}, {device}) -> {root}",
        flush=True,
    )
