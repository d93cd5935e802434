"""Episode results and how the comparison tools write them: :class:`EpisodeResults`,
interval formatting, JSON and CSV written atomically. Shared by the single-agent comparison
(:mod:`agents.evaluation.compare`) and the cross-play (:mod:`agents.evaluation.cross_play`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation import stats
from steer_env import cli


@dataclass
class EpisodeResults:
    """Outcome of the first episode of each of ``n`` environments. ``captured`` and
    ``capture_step`` are the task's timed event (a capture, the flock penned: its
    ``metrics.time_key``); ``outcomes`` the task's further per-episode numbers
    (``metrics.outcomes``)."""

    success: np.ndarray  # (n,) bool
    captured: np.ndarray  # (n,) bool
    capture_step: np.ndarray  # (n,) int, -1 without the event
    length: np.ndarray  # (n,) int, steps played
    outcomes: dict[str, np.ndarray] = field(default_factory=dict)  # (n,) float each


def format_interval(
    iv: stats.Interval, scale: float = 1.0, digits: int = 1, sign: bool = False
) -> str:
    """``mean [lo, hi]`` of an interval times ``scale`` (the mean alone when the interval is
    undefined)."""
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    if math.isnan(iv.lo):
        return f.format(iv.mean * scale)
    return f"{f.format(iv.mean * scale)} [{f.format(iv.lo * scale)}, {f.format(iv.hi * scale)}]"


atomic_write_bytes = cli.atomic_write_bytes


def json_safe(x: Any) -> Any:
    """``x`` with numpy scalars made Python numbers and NaN/inf made JSON-safe (``None``,
    ``"inf"``)."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_safe(v) for v in x]
    if isinstance(x, float | np.floating):
        v = float(x)
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def json_number(v: Any) -> float:
    """A number of a file :func:`json_safe` wrote, decoded: ``"inf"``/``"-inf"`` as
    infinities and ``None`` as NaN."""
    if v is None:
        return math.nan
    return float(v)


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON (:func:`json_safe`) through a temp file and ``os.replace``."""
    atomic_write_bytes(path, (json.dumps(json_safe(obj), indent=2) + "\n").encode())


def csv_bytes(rows: list[dict[str, Any]]) -> bytes:
    """The CSV text of ``rows`` (header from the first row's keys)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()
