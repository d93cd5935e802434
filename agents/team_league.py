"""``python -m agents.team_league``: runs :mod:`agents.evaluation.team_league`, where the code
lives now.

Importing names from ``agents.team_league`` still works for one release, with a
``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

import sys

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names("agents.team_league", "agents.evaluation.team_league")

if __name__ == "__main__":
    from agents.evaluation.team_league import main

    sys.exit(main())
