"""``python -m agents.render``: runs :mod:`agents.evaluation.render`, where the code
lives now.

Importing names from ``agents.render`` still works for one release, with a
``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

import sys

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names(
    "agents.render", "agents.evaluation.render", "agents.evaluation.frames"
)

if __name__ == "__main__":
    from agents.evaluation.render import main

    sys.exit(main())
