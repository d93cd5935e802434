"""Sphinx configuration of the steer-env documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are errors).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The repository's package first (not another installed copy), then the docs' extensions.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import steer_env  # noqa: E402

project = "steer-env"
author = "steer-env contributors"
release = steer_env.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "steer_docs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3
# A Markdown link to a page or heading that does not exist is a warning, so an error under -W.
myst_all_links_external = False

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Members inherited from Gymnasium, PettingZoo or SB3 keep their docstrings there.
autodoc_inherit_docstrings = False
# The API pages need only the docs extra: the heavy dependencies of a few modules (Ray for
# agents' RLlib modules, torch and stable-baselines3 for the SB3 adapter) are stood in for
# when they are not installed.


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:
        return True


autodoc_mock_imports = [m for m in ("ray", "torch", "stable_baselines3") if _missing(m)]

html_theme = "furo"
html_title = f"steer-env {release}"
html_static_path: list[str] = []
