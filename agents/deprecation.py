"""Old import paths of :mod:`agents` that keep working for one release.

A module that moved leaves a module at its old path whose ``__getattr__`` is
:func:`forward_moved_names`: every name still resolves, to the same object, with a
``DeprecationWarning`` that names the module to import it from now. The modules users run
with ``python -m`` (``agents.compare``, ``agents.render``, ``agents.team_calibration``,
``agents.team_league``) stay where they are as entry points, without a warning.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def forward_moved_names(old: str, *new: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the old module ``old``: a name is looked up in the
    modules ``new``, in order, and returned with a ``DeprecationWarning`` naming the module
    that holds it now; a name none of them has is an ``AttributeError`` as usual."""

    def __getattr__(name: str) -> Any:
        if not name.startswith("__"):
            for target in new:
                module = importlib.import_module(target)
                try:
                    value = getattr(module, name)
                except AttributeError:
                    continue
                warnings.warn(
                    f"{old}.{name} is deprecated: import it from {target} "
                    f"({old} will be removed in the next release)",
                    DeprecationWarning,
                    stacklevel=2,
                )
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__
