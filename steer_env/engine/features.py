"""Observation feature tables: a task declares each feature of its observation once.

A :class:`FeatureTable` is a sequence of :class:`FeatureGroup`: features about the agent
itself, then groups repeated once per observed slot (the nearest teammates, the nearest
opponents, ...). Everything that needs the observation's layout is built from the table:

* the compiled writer and decoder read feature positions as constants
  (:meth:`FeatureGroup.index`), so no position is written by hand;
* the observation space's bounds (:meth:`FeatureTable.bounds`: the range the writer clips
  every feature to);
* the env docstring's observation table (:meth:`FeatureTable.markdown` or
  :meth:`FeatureTable.rst`, which a test compares with the docstring);
* decoders and baselines that read a feature by name (:meth:`FeatureTable.position`).

Pure Python: importing it costs nothing and needs no compiler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Feature:
    """One observed number.

    Attributes:
        name: identifier, unique in its group (``"velocity_forward"``).
        meaning: what it measures and what it is divided by, for the docs.
        low, high: the values it can take (within the table's clip range).
    """

    name: str
    meaning: str
    low: float = -1.0
    high: float = 1.0


@dataclass(frozen=True)
class FeatureGroup:
    """Features written together: once (``slots=None``) or once per slot, the number of
    slots being the world parameter named by ``slots`` (``"observed_opponents"``).

    ``rows`` groups consecutive features under one line of the docs table (a vector's two
    components share a line): each entry is ``(number of features, meaning)``; by default
    every feature has its own line."""

    name: str
    features: tuple[Feature, ...]
    slots: str | None = None
    rows: tuple[tuple[int, str], ...] | None = None

    def __post_init__(self) -> None:
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            raise ValueError(f"feature group {self.name!r} repeats a feature name: {names}")
        if self.rows is not None and sum(n for n, _ in self.rows) != len(self.features):
            raise ValueError(f"feature group {self.name!r}: rows must cover every feature")

    @property
    def width(self) -> int:
        """Features per slot (or in all, for a group written once)."""
        return len(self.features)

    def index(self, name: str) -> int:
        """Position of feature ``name`` within one slot of the group."""
        for i, feature in enumerate(self.features):
            if feature.name == name:
                return i
        accepted = ", ".join(f.name for f in self.features)
        raise KeyError(f"group {self.name!r} has no feature {name!r}; it has {accepted}")

    def count(self, world: object) -> int:
        """Slots of this group under ``world`` (1 for a group written once)."""
        return 1 if self.slots is None else int(getattr(world, self.slots))


class FeatureTable:
    """The observation of one task: its groups in the order they are written, every value
    clipped to ``clip`` (the observation space's bounds)."""

    def __init__(
        self, groups: Sequence[FeatureGroup], clip: tuple[float, float] = (-1.0, 1.0)
    ) -> None:
        self.groups = tuple(groups)
        self.clip = (float(clip[0]), float(clip[1]))
        names = [g.name for g in self.groups]
        if len(set(names)) != len(names):
            raise ValueError(f"feature groups repeat a name: {names}")
        for g in self.groups:
            for f in g.features:
                if not self.clip[0] <= f.low <= f.high <= self.clip[1]:
                    raise ValueError(
                        f"feature {g.name}.{f.name}: range [{f.low}, {f.high}] must lie "
                        f"within the clip range {list(self.clip)}"
                    )

    def group(self, name: str) -> FeatureGroup:
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(f"no feature group {name!r}; groups: {', '.join(self.group_names)}")

    @property
    def group_names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.groups)

    def offsets(self, world: object) -> dict[str, int]:
        """Start of each group in the observation vector under ``world``."""
        at = 0
        out = {}
        for g in self.groups:
            out[g.name] = at
            at += g.width * g.count(world)
        return out

    def size(self, world: object) -> int:
        """Length of the observation vector under ``world``."""
        return sum(g.width * g.count(world) for g in self.groups)

    def position(self, world: object, group: str, name: str, slot: int = 0) -> int:
        """Position of feature ``name`` of slot ``slot`` of ``group`` in the vector."""
        g = self.group(group)
        if not 0 <= slot < g.count(world):
            raise IndexError(f"{group} has {g.count(world)} slots, got slot {slot}")
        return self.offsets(world)[group] + slot * g.width + g.index(name)

    def names(self, world: object) -> list[str]:
        """Every position's name: ``"velocity_forward"`` for a group written once,
        ``"opponent_0.position_forward"`` for a slot."""
        out = []
        for g in self.groups:
            for s in range(g.count(world)):
                prefix = "" if g.slots is None else f"{g.name}_{s}."
                out.extend(prefix + f.name for f in g.features)
        return out

    def bounds(self, world: object) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """``(low, high)`` float32 arrays of the observation space under ``world``: the clip
        range for every position (a feature's narrower range is documentation; a space
        that kept it would change with every task option that adds a flag)."""
        size = self.size(world)
        return (
            np.full(size, self.clip[0], dtype=np.float32),
            np.full(size, self.clip[1], dtype=np.float32),
        )

    def rows(
        self, slot_counts: Mapping[str, str] | None = None, omit: Sequence[str] = ()
    ) -> list[tuple[str, str, str, str]]:
        """The docs table's rows ``(index, meaning, min, max)``: a row per row of each group
        (groups in ``omit`` left out, as a task without teammates leaves out their slots),
        indices in closed form: ``11 + 5k + 0, 1`` for the first row of slot ``k`` of a
        group after 11 features; a group after repeated ones adds their sizes, by the
        symbols ``slot_counts`` gives their slot counts (``{"teammate": "T"}``:
        ``11 + 5T + 5k``)."""
        slot_counts = dict(slot_counts or {})
        out = []
        fixed = 0
        repeated: list[str] = []
        for g in self.groups:
            if g.name in omit:
                continue
            rows = g.rows or tuple((1, f.meaning) for f in g.features)
            at = 0
            for n, meaning in rows:
                members = g.features[at : at + n]
                low = _number(min(f.low for f in members))
                high = _number(max(f.high for f in members))
                if g.slots is None and not repeated:
                    index = ", ".join(str(fixed + at + i) for i in range(n))
                elif g.slots is None:
                    # After repeated groups: their sizes in symbols, then the offsets.
                    base = " + ".join(repeated)
                    index = ", ".join(f"{fixed + at + i} + {base}" for i in range(n))
                else:
                    base = " + ".join([str(fixed), *repeated, f"{g.width}k"])
                    index = f"{base} + " + ", ".join(str(at + i) for i in range(n))
                out.append((index, meaning, low, high))
                at += n
            if g.slots is None:
                fixed += g.width
            else:
                repeated.append(f"{g.width}{slot_counts.get(g.name, g.slots)}")
        return out

    def markdown(
        self, slot_counts: Mapping[str, str] | None = None, omit: Sequence[str] = ()
    ) -> str:
        """:meth:`rows` as a Markdown table (the Gymnasium envs' docstrings)."""
        lines = ["| Index | Observation | Min | Max |", "|-------|-------------|-----|-----|"]
        lines += [f"| {i} | {m} | {lo} | {hi} |" for i, m, lo, hi in self.rows(slot_counts, omit)]
        return "\n".join(lines)

    def rst(self, slot_counts: Mapping[str, str] | None = None, omit: Sequence[str] = ()) -> str:
        """:meth:`rows` as a reStructuredText simple table (the PettingZoo modules'
        docstrings)."""
        rows = [("Index", "Observation", "Min", "Max"), *self.rows(slot_counts, omit)]
        widths = [max(len(r[c]) for r in rows) for c in range(4)]
        rule = " ".join("=" * w for w in widths)

        def line(r: tuple[str, ...]) -> str:
            return " ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()

        return "\n".join([rule, line(rows[0]), rule, *map(line, rows[1:]), rule])


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
