"""``python -m agents.league``: population training for the team task
(:mod:`agents.evaluation.league`)."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from agents.evaluation.league import main

    sys.exit(main())
