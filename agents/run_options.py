"""Deprecated: moved to :mod:`agents.training.options` (the lifecycle's messages to
:mod:`agents.training.run`). Its names still resolve here for one release, with a
``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names(
    "agents.run_options", "agents.training.options", "agents.training.run"
)
