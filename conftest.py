"""Root settings of the test run: ``--doctest-modules`` collects the package's and the
baselines' modules too (pyproject's testpaths); these need an extra the main suite does not
install, and run with their integration's tests in its own venv (.ci/run)."""

from __future__ import annotations

import importlib.util
import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:
        return True


collect_ignore = [
    # the deprecated alias warns on import; its new home is steer_env/demos/gallery.py
    "steer_env/gallery.py",
]
if _missing("ray"):
    collect_ignore += [
        "agents/rllib/runner.py",
        "agents/rllib/team_env.py",
        # deprecated aliases of those two: their names resolve on first use
        "agents/rllib_runner.py",
        "agents/rllib_team_env.py",
    ]
if _missing("benchmarl"):
    collect_ignore += ["steer_env/integrations/benchmarl.py"]
