"""Crowd-v0's agents against a peer's crowd: the humans driven by ORCA (van den Berg et al.
2011, through the ``rvo2`` binding ``pyrvo2-danieldugas``), CrowdNav's crowd model, or by
the social force model (``pysocialforce``) instead of the classic behaviours
(:data:`steer_env.tasks.crowd.PEER_CROWDS`). A generalisation test: the learned robot was
trained among the steering-behaviour pedestrians only.

``python -m agents.evaluation.peer_crowds --crowd orca --episodes 1000 --out
comparison.json`` plays the shipped robot and the scripted ones on the same seeded
episodes (the starts of ``steer_env/Crowd-v0``) and writes ``agents.compare``'s comparison
(``pip install -e ".[crowd]"`` installs both libraries).

The episodes' starts, rules, collisions, metrics and observations are the env's own; only
the humans' velocities come from ORCA.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from steer_env.tasks.crowd import PASSIVE_HUMANS, PEER_CROWDS, have_peer

ENV_ID = "steer_env/Crowd-v0"


def play(
    policy: Any, episodes: int, seed: int, overrides: dict[str, Any], crowd: str = "orca"
) -> Any:
    """Episode results (:class:`agents.evaluation.results.EpisodeResults`) of the robot
    ``policy`` (a learned policy, or the name of a scripted baseline) among the humans of
    the peer crowd ``crowd`` (:data:`~steer_env.tasks.crowd.PEER_CROWDS`), episode ``k``
    from seed ``seed + k``."""
    import steer_env  # noqa: F401
    from agents.evaluation.compare import play_episodes
    from agents.evaluation.policies import make_scripted

    def wrap(venv: Any) -> Any:
        return PEER_CROWDS[crowd](venv)

    def policy_fn(venv: Any, s: int) -> Any:
        return make_scripted(policy, venv, s) if isinstance(policy, str) else policy

    kwargs = {**overrides, "human_strategy": PASSIVE_HUMANS}
    return play_episodes(ENV_ID, policy_fn, episodes, seed, kwargs, wrap=wrap)


def main(argv: Sequence[str] | None = None) -> int:
    from agents.evaluation.compare import DEFAULT_SEED, atomic_write_json, format_table, summarize
    from agents.evaluation.policies import agent_label, load_policy
    from steer_env.cli import OneLineParser, positive_int
    from steer_env.tasks import get_task

    parser = OneLineParser(
        prog="python -m agents.evaluation.peer_crowds",
        description="Crowd-v0's shipped robot and scripted robots among a peer's humans.",
    )
    parser.add_argument(
        "--crowd", choices=sorted(PEER_CROWDS), default="orca", help="the humans' model"
    )
    parser.add_argument("--episodes", type=positive_int, default=1000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--visible", action="store_true", help="the humans see the robot")
    parser.add_argument("--out", default=None, help="comparison JSON to write")
    args = parser.parse_args(argv)
    if not have_peer(args.crowd):
        module = PEER_CROWDS[args.crowd].module
        parser.error(f'--crowd {args.crowd} needs {module}: pip install -e ".[crowd]"')
    task = get_task(ENV_ID)
    overrides = {"visible": True} if args.visible else {}
    learned = load_policy(None, ENV_ID, env_kwargs=overrides)
    results = {"learned": play(learned, args.episodes, args.seed, overrides, args.crowd)}
    labels = {"learned": agent_label("learned", ENV_ID, learned)}
    for name in task.baselines:
        results[name] = play(name, args.episodes, args.seed, overrides, args.crowd)
        labels[name] = agent_label(name, ENV_ID)
    cfg = task.config(**overrides)
    summary = summarize(results, ENV_ID, cfg.dt, cfg.time_limit, labels)
    summary["seed"] = args.seed
    summary["crowd"] = args.crowd
    summary["command"] = "python -m agents.evaluation.peer_crowds " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(format_table(summary))
    if args.out:
        atomic_write_json(args.out, summary)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
