"""Render episodes of learned or scripted agents to a GIF or MP4 (or a window).

    python -m agents.render --agent learned --out episode.gif            # shipped pursuit model
    python -m agents.render --agent classic --env evasion --seed 3 --out classic.gif
    python -m agents.render --side-by-side --model runs/x/model.zip --out both.gif
    python -m agents.render --agent learned --human                      # pygame window

Agents: ``learned`` (``--model``, default the shipped model of ``--env``), ``classic``,
``naive`` (pursuit only), or the long names ``classic-pursuer``, ``naive-pursuer``,
``classic-evader``. ``--side-by-side`` plays the learned agent and the classic agent on the
same seed and puts the two episodes next to each other in one GIF. Frames come from the
env's ``render_mode="rgb_array"``; each panel gets a caption with the agent and the outcome.
The file type follows ``--out``'s extension: ``.gif`` (Pillow, one shared palette; read it
back with ``imageio.v3.imread(path, index=None)``), ``.mp4`` (H.264 through imageio's ffmpeg
plugin, ``pip install "steer-env[render]"``) or ``.png`` (the last frame); it is written by
:func:`steer_env.rendering.write_animation` to a temp file in the target folder and moved
into place.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.frames import DEFAULT_WIDTH as DEFAULT_WIDTH
from agents.evaluation.frames import captioned as captioned
from agents.evaluation.frames import side_by_side as side_by_side
from agents.evaluation.frames import write_gif as write_gif
from agents.evaluation.policies import (
    ENV_SHORT,
    LearnedPolicy,
    PolicyLoadError,
    UsageError,
    agent_label,
    canonical_agent,
    env_arg,
    inference_device,
    load_policy,
    make_policy,
    read_model_metadata,
)


@dataclass
class Episode:
    frames: list[np.ndarray]
    label: str
    success: bool
    capture_step: int | None
    steps: int
    dt: float
    role: str

    @property
    def outcome(self) -> str:
        if self.capture_step is not None:
            what = "captured" if self.role == "pursuer" else "caught"
            return f"{what} at {self.capture_step * self.dt:.1f} s"
        return "no capture" if self.role == "pursuer" else "escaped"


def play_episode(
    env_id: str,
    agent: str,
    seed: int,
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    render_mode: str = "rgb_array",
    device: str = "cpu",
) -> Episode:
    """Play one episode from ``seed`` with ``agent`` and collect its frames (none in
    ``"human"`` mode, which draws to a window as it goes)."""
    import gymnasium as gym

    import steer_env  # noqa: F401

    env = gym.make(env_id, render_mode=render_mode)
    try:
        policy = make_policy(agent, env, env_id, model=model, seed=seed, device=device)
        label = agent_label(agent, env_id, policy)
        obs, _ = env.reset(seed=seed)
        frames: list[np.ndarray] = []
        if render_mode == "rgb_array":
            frames.append(np.asarray(env.render()))
        info: dict[str, Any] = {}
        steps = 0
        done = False
        while not done:
            action, _ = policy.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            done = terminated or truncated
            if render_mode == "rgb_array":
                frames.append(np.asarray(env.render()))
            renderer = getattr(env.unwrapped, "_renderer", None)
            if getattr(renderer, "quit_requested", False):
                break
        cfg = env.unwrapped.config
        role = env.unwrapped.agent_role
    finally:
        env.close()
    return Episode(
        frames,
        label,
        bool(info.get("is_success", False)),
        info["capture_step"] if info.get("capture_step", -1) >= 0 else None,
        steps,
        cfg.dt,
        role,
    )


def episode_frames(ep: Episode, width: int | None = DEFAULT_WIDTH) -> list[np.ndarray]:
    return captioned(ep.frames, ep.label, f"{ep.label}: {ep.outcome}", width)


def render_gif(
    env_id: str,
    out: str | os.PathLike[str],
    agent: str = "learned",
    model: LearnedPolicy | str | os.PathLike[str] | None = None,
    seed: int = 0,
    side: bool = False,
    width: int | None = DEFAULT_WIDTH,
    fps: float = 10.0,
    device: str = "cpu",
) -> tuple[Path, list[Episode]]:
    """Render ``agent`` (or, with ``side``, the learned and the classic agent on the same
    seed side by side) to ``out``: a GIF, an MP4 or a PNG of the last frame, by extension
    (:func:`steer_env.rendering.write_animation`; an unknown extension is refused before
    any episode is played)."""
    from steer_env.rendering import check_animation_path

    check_animation_path(out)
    if side:
        if isinstance(model, str | os.PathLike) or model is None:
            model = load_policy(model, env_id, device=device)
        eps = [play_episode(env_id, "learned", seed, model), play_episode(env_id, "classic", seed)]
        frames = side_by_side(episode_frames(eps[0], width), episode_frames(eps[1], width))
    else:
        eps = [play_episode(env_id, agent, seed, model, device=device)]
        frames = episode_frames(eps[0], width)
    return write_gif(frames, out, fps), eps


PROG = "python -m agents.render"


def build_parser() -> Any:
    from steer_env import cli

    p = cli.OneLineParser(
        prog=PROG,
        description="Render an episode of a learned or scripted agent to a GIF or MP4.",
    )
    p.add_argument(
        "--agent",
        default="learned",
        help="learned, classic, naive, classic-pursuer, naive-pursuer, classic-evader; "
        "team_pursuit: learned or a scripted team (reynolds, cooperative)",
    )
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
        help="pursuit, evasion or team_pursuit (default: from the model, or from a long "
        "agent name, else pursuit)",
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
    p.add_argument("--human", action="store_true", help="show the episode in a window instead")
    cli.add_width(p, DEFAULT_WIDTH)
    cli.add_fps(p, 10)
    cli.add_device(p, "cpu, fastest for one small network")
    return p


def main(argv: list[str] | None = None) -> int:
    from steer_env import cli
    from steer_env.rendering import AnimationOutputError, check_animation_path

    args = build_parser().parse_args(argv)
    try:
        env_id = args.env
        agent = args.agent.strip().lower()
        if env_id is None:
            if args.model is not None:
                meta = read_model_metadata(args.model)
                env_id = meta.get("env_id") or meta.get("team_task")
            elif agent in ("classic-evader",):
                env_id = "steer_env/Evasion-v0"
            env_id = env_id or "steer_env/Pursuit-v0"
        from agents.evaluation import team

        if team.is_team_env(env_id):
            return team.render_main(args)
        if args.side_by_side and args.human:
            raise UsageError("--side-by-side writes a file; it cannot be combined with --human")
        if args.side_by_side and agent not in ("learned",):
            raise UsageError("--side-by-side always shows learned vs classic; drop --agent")
        if not args.human:
            check_animation_path(args.out)
        short = canonical_agent(agent, env_id)
        device = inference_device(args.device)
        model = None
        if short == "learned" or args.side_by_side:
            model = load_policy(args.model, env_id, device=device)
            import torch

            torch.set_num_threads(1)
        elif args.model is not None:
            raise UsageError(f"--model is only used with --agent learned (got --agent {agent})")
        if args.human:
            try:
                ep = play_episode(env_id, agent, args.seed, model, render_mode="human")
            except (PolicyLoadError, UsageError):
                raise
            except Exception as exc:  # no display, pygame missing, ...
                raise UsageError(f"cannot show a window: {type(exc).__name__}: {exc}") from None
            print(f"{ep.label} on {ENV_SHORT[env_id]} seed {args.seed}: {ep.outcome}")
            return 0
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
        )
        for ep in eps:
            print(f"{ep.label} on {ENV_SHORT[env_id]} seed {args.seed}: {ep.outcome}")
        print(f"wrote {path}")
    except (PolicyLoadError, UsageError, AnimationOutputError) as exc:
        return cli.fail(PROG, exc, 1 if isinstance(exc, PolicyLoadError) else 2)
    except OSError as exc:
        return cli.fail(PROG, exc)
    except ImportError as exc:
        return cli.fail(PROG, exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0


#: Same function under the name that says what it writes now.
render_animation = render_gif

if __name__ == "__main__":
    sys.exit(main())
