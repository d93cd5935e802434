"""The named alternative forms of three classic behaviours, and their integer codes.

The literature differs on three formulas; each alternative is an explicit option of the one
kernel (:mod:`steer_env.core.behaviors`), chosen by name in the numpy API
(:mod:`steer_env.behaviors`) and in a strategy's :class:`~steer_env.engine.strategy.Behavior`,
and passed to the kernels as the name's index in its tuple here. The first name of each
tuple is the default. This module imports neither numba nor numpy.

* ``separation_form``: ``"reynolds"``, the desired velocity at max speed along the summed
  push, minus the velocity (Reynolds 1999); ``"buckland"``, the 1/d-weighted push itself as
  the force (Buckland 2005, ``Separation``), so nearer neighbours push harder.
* ``wander_form``: ``"seek"``, seek the wander target; ``"offset"``, the offset from the
  vehicle to the wander target as the force (Buckland 2005, ``Wander``, and the seed
  document's ``Wander::calculate``).
* ``prediction_form``: look-ahead time of pursuit and evade, ``"buckland"``,
  ``d / (max_speed + target_speed)`` (Buckland 2005, ``Pursuit``); ``"seed"``,
  ``d / target_max_speed`` (the seed document's ``pursue``/``evade``).
"""

from __future__ import annotations

from typing import Any

SEPARATION_FORMS = ("reynolds", "buckland")
WANDER_FORMS = ("seek", "offset")
PREDICTION_FORMS = ("buckland", "seed")

#: Kernel codes (the index of the name in its tuple).
SEPARATION_REYNOLDS, SEPARATION_BUCKLAND = 0, 1
WANDER_SEEK, WANDER_OFFSET = 0, 1
PREDICTION_BUCKLAND, PREDICTION_SEED = 0, 1

#: Every option by parameter name: the accepted names, default first.
OPTIONS: dict[str, tuple[str, ...]] = {
    "separation_form": SEPARATION_FORMS,
    "wander_form": WANDER_FORMS,
    "prediction_form": PREDICTION_FORMS,
}


def option_code(name: str, value: Any, label: str | None = None) -> int:
    """The kernel code of option ``name``'s ``value``; ``ValueError`` naming the parameter
    (as ``label`` when given) and the accepted values otherwise."""
    accepted = OPTIONS[name]
    if isinstance(value, str) and value in accepted:
        return accepted.index(value)
    raise ValueError(
        f"{label or name} must be one of {', '.join(map(repr, accepted))}, got {value!r}"
    )
