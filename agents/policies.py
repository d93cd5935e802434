"""Deprecated: moved to :mod:`agents.evaluation.policies`. Its names still resolve here for one
release, with a ``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names("agents.policies", "agents.evaluation.policies")
