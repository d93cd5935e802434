"""Deprecated location of the behavior gallery: use :mod:`steer_env.demos.gallery`
(``python -m steer_env.demos.gallery``). This module and ``python -m steer_env.gallery``
keep working, with a ``DeprecationWarning``, until the next release."""

from __future__ import annotations

import sys
import warnings

MOVED = (
    "steer_env.gallery moved to steer_env.demos.gallery (python -m steer_env.demos.gallery); "
    "the old name will be removed in the next release"
)
# Run as a script, this module is __main__ and the warning is shown as its own.
warnings.warn(MOVED, DeprecationWarning, stacklevel=1 if __name__ == "__main__" else 2)

from steer_env.demos.gallery import *  # noqa: E402, F403
from steer_env.demos.gallery import BEHAVIORS, iter_frames, main  # noqa: E402, F401

if __name__ == "__main__":
    sys.exit(main())
