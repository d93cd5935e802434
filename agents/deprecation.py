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
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

#: What a module does not have.
MISSING = object()


def forward_moved_names(
    old: str, *new: str, replaced: Mapping[str, tuple[str, Callable[[], Any]]] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the old module ``old``: a name is looked up in the
    modules ``new``, in order, and returned with a ``DeprecationWarning`` naming the module
    that holds it now; a name none of them has is an ``AttributeError`` as usual.
    ``replaced`` maps the old names that have no single new home to what replaces them
    (named in the warning) and a function that builds the old value from it."""

    def __getattr__(name: str) -> Any:
        if name in (replaced or {}):
            instead, build = (replaced or {})[name]
            warnings.warn(
                f"{old}.{name} is deprecated: use {instead} "
                f"({old}.{name} will be removed in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
            return build()
        if not name.startswith("__"):
            for target in new:
                module = importlib.import_module(target)
                value = getattr(module, name, MISSING)
                # A module a target imports is not a moved name (it may be a submodule of
                # the package that was the old module).
                if value is MISSING or isinstance(value, ModuleType):
                    continue
                warnings.warn(
                    f"{old}.{name} is deprecated: import it from {target} "
                    f"({old}.{name} will be removed in the next release)",
                    DeprecationWarning,
                    stacklevel=2,
                )
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def old_task_predicate() -> Callable[[str | None], bool]:
    """The old predicate: whether ``name`` is a task whose PettingZoo form is more than the
    one-agent view of its Gymnasium env (a task without a Gymnasium form, or one whose
    learned role may have several agents)."""
    from steer_env.tasks import REGISTRY

    def has_team_form(name: str | None) -> bool:
        task = REGISTRY.get(str(name))
        if task is None or task.env_module is None:
            return False
        return task.env_id is None or task.agent_count is not None

    return has_team_form
