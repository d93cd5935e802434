"""Render episodes of learned or scripted agents to a GIF or MP4 (or a window).

    python -m agents.render --agent learned --out episode.gif            # shipped pursuit model
    python -m agents.render --agent classic --env evasion --seed 3 --out classic.gif
    python -m agents.render --side-by-side --model runs/x/model.zip --out both.gif
    python -m agents.render --agent learned --human --episodes 3 --speed 2  # live window

Agents: ``learned`` (``--model``, default the shipped model of ``--env``), ``classic``,
``naive`` (pursuit only), or the long names ``classic-pursuer``, ``naive-pursuer``,
``classic-evader``. ``--side-by-side`` plays the learned agent and the classic agent on the
same seed and puts the two episodes next to each other in one GIF. Frames come from the
env's ``render_mode="rgb_array"``; each panel gets a caption with the agent and the outcome.
``--human`` plays ``--episodes`` episodes (from ``--seed`` on) in a pygame window at
``--speed`` times real time instead, with the overlay of keyboard play
(:class:`steer_env.live.Overlay`: reward, return, time left, outcome); ESC stops.
The file type follows ``--out``'s extension: ``.gif`` (Pillow, one shared palette; read it
back with ``imageio.v3.imread(path, index=None)``), ``.mp4`` (H.264 through imageio's ffmpeg
plugin, ``pip install "steer-env[render]"``) or ``.png`` (the last frame); it is written by
:func:`steer_env.rendering.write_animation` to a temp file in the target folder and moved
into place.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agents.evaluation.compare import comparison_of, model_env
from agents.evaluation.episodes import Episode as Episode
from agents.evaluation.episodes import episode_frames as episode_frames
from agents.evaluation.episodes import play_episode as play_episode
from agents.evaluation.episodes import render_gif
from agents.evaluation.frames import DEFAULT_WIDTH as DEFAULT_WIDTH
from agents.evaluation.frames import captioned as captioned
from agents.evaluation.frames import side_by_side as side_by_side
from agents.evaluation.frames import write_gif as write_gif
from agents.evaluation.policies import (
    SCRIPTED_NAMES,
    PolicyLoadError,
    UsageError,
    add_config_option,
    env_arg,
    task_names,
)
from steer_env.tasks import TASKS, TEAM_TASKS

PROG = "python -m agents.render"


def agent_help() -> str:
    """``--agent``'s help, from the registry: each task's scripted agents of the learned
    role (a team task's: its scripted teams of the first role)."""
    parts = [f"{task.name}: {', '.join(task.baselines)}" for task in TASKS.values()]
    for name, task in TEAM_TASKS.items():
        if task.env_id is None:  # a team task without a single-agent form
            role, teams = next(iter(task.baselines.items()))
            parts.append(f"{name}: a scripted {role} team ({', '.join(teams)})")
    return (
        "learned (the default), or a scripted agent of the task ("
        + "; ".join(parts)
        + "; classic-pursuer, naive-pursuer and classic-evader name the task too)"
    )


def build_parser() -> Any:
    from steer_env import cli

    p = cli.OneLineParser(
        prog=PROG,
        description="Render an episode of a learned or scripted agent to a GIF or MP4.",
    )
    p.add_argument("--agent", default="learned", help=agent_help())
    p.add_argument(
        "--model",
        type=Path,
        default=None,
        help="SB3 model zip for --agent learned (default: the shipped model)",
    )
    p.add_argument(
        "--env",
        type=env_arg,
        default=None,
        help=f"{task_names()} (default: from the model, or from a long agent name, else pursuit)",
    )
    cli.add_seed(p, 0, "episode seed")
    p.add_argument(
        "--out",
        type=Path,
        default=Path("episode.gif"),
        help="output file: .gif, .mp4 or .png (last frame), by extension (default episode.gif)",
    )
    p.add_argument(
        "--side-by-side",
        action="store_true",
        help="learned and classic agent on the same seed in one animation",
    )
    p.add_argument(
        "--human",
        action="store_true",
        help="play episodes in a window at real time instead, with the overlay of "
        "python -m steer_env.play (ESC: stop)",
    )
    p.add_argument(
        "--episodes",
        type=cli.positive_int,
        default=None,
        help="episodes to play with --human, from --seed on (default 1)",
    )
    p.add_argument(
        "--speed",
        type=cli.positive_float,
        default=1.0,
        help="with --human: times real time (2: twice as fast; default 1)",
    )
    cli.add_width(p, DEFAULT_WIDTH)
    cli.add_fps(p, 10)
    cli.add_device(p, "cpu, fastest for one small network")
    add_config_option(p)
    return p


def main(argv: list[str] | None = None) -> int:
    from steer_env import cli
    from steer_env.rendering import AnimationOutputError

    args = build_parser().parse_args(argv)
    try:
        env = model_env(args)
        agent = args.agent.strip().lower()
        if env is None and args.model is None and agent in SCRIPTED_NAMES:
            env = SCRIPTED_NAMES[agent][0]  # a long name says its task: classic-evader
        args.env = env
        return comparison_of(env).render(args, PROG)
    except (PolicyLoadError, UsageError, AnimationOutputError) as exc:
        return cli.fail(PROG, exc, 1 if isinstance(exc, PolicyLoadError) else 2)
    except OSError as exc:
        return cli.fail(PROG, exc)
    except ImportError as exc:
        return cli.fail(PROG, exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


#: Same function under the name that says what it writes now.
render_animation = render_gif

if __name__ == "__main__":
    sys.exit(main())
