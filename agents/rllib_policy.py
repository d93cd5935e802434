"""Deprecated: moved to :mod:`agents.rllib.policy`. Its names still resolve here for one
release, with a ``DeprecationWarning`` naming the new module.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names("agents.rllib_policy", "agents.rllib.policy")
