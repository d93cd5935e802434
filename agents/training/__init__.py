"""Training of ``train.py``: options and run folder, the run lifecycle both frameworks
share, and the SB3 pieces.

* :mod:`~agents.training.options` -- options of a new or resumed run.
* :mod:`~agents.training.run` -- run folder, ``config.json``, seeds, interruption, the
  final comparison.

This package was the module ``agents.training``; its names still resolve here for one
release, with a ``DeprecationWarning`` naming the module that holds them now.
"""

from __future__ import annotations

from agents.deprecation import forward_moved_names

__getattr__ = forward_moved_names("agents.training", "agents.training.run")
