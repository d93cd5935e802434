"""Deprecated: moved to :mod:`agents.evaluation.cross_play`. Its names still resolve here for one
release, with a ``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names, old_task_predicate

__getattr__ = forward_moved_names(
    "agents.team",
    "agents.evaluation.cross_play",
    replaced={
        "is_team_env": (
            "agents.evaluation.compare.comparison_of (the task's metrics.layout)",
            old_task_predicate,
        )
    },
)
