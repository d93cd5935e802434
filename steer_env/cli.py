"""Command-line helpers shared by the project's tools (gallery, training, comparison,
rendering, benchmarks): user mistakes become one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are a single line on stderr (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` accepting integers in ``[low, high]`` (no upper bound when
    ``high`` is None; ``_`` separators allowed)."""
    if high is not None:
        what = f"an integer in [{low}, {high}]"
    else:
        what = {0: "an integer >= 0", 1: "a positive integer"}.get(low, f"an integer >= {low}")

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


#: Integers >= 1 and >= 0, the common cases.
positive_int = int_in(1)
non_negative_int = int_in(0)


def positive_float(text: str) -> float:
    """An argparse ``type`` accepting finite numbers > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value
