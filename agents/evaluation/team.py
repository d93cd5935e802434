"""Deprecated: the team task's comparison is the cross-play layout of the one comparison
stack, :mod:`agents.evaluation.cross_play` (chosen by the task's ``metrics.layout``). Its
names still resolve here for one release, with a ``DeprecationWarning`` naming the new
module.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names, old_task_predicate

__getattr__ = forward_moved_names(
    "agents.evaluation.team",
    "agents.evaluation.cross_play",
    replaced={
        "is_team_env": (
            "agents.evaluation.compare.comparison_of (the task's metrics.layout)",
            old_task_predicate,
        )
    },
)
