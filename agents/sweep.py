"""``python -m agents.sweep``: a task's agents across values of its configuration
(:mod:`agents.evaluation.sweep`)."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from agents.evaluation.sweep import main

    sys.exit(main())
