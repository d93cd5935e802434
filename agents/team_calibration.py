"""``python -m agents.team_calibration``: runs :mod:`agents.evaluation.team_calibration`,
where the code lives now.

Importing names from ``agents.team_calibration`` still works for one release, with a
``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

import sys

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names("agents.team_calibration", "agents.evaluation.team_calibration")

if __name__ == "__main__":
    from agents.evaluation.team_calibration import main

    sys.exit(main())
