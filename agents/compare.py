"""``python -m agents.compare``: runs :mod:`agents.evaluation.compare`, where the code
lives now.

Importing names from ``agents.compare`` still works for one release, with a
``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

import sys

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names(
    "agents.compare", "agents.evaluation.compare", "agents.evaluation.results"
)

if __name__ == "__main__":
    from agents.evaluation.compare import main

    sys.exit(main())
