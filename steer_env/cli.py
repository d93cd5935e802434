"""Command-line helpers shared by the project's tools (gallery, training, comparison,
rendering, benchmarks): user mistakes become one line on stderr and exit status 2, and every
file the tools write is written atomically.

Atomic files: :func:`atomic_output` yields a hidden temporary name in the target's folder
(``.<name>.<pid>.<8 hex>.tmp<suffix>``) and moves it onto the target with ``os.replace``
once complete, so a reader never sees a half-written file. A process killed with SIGKILL
mid-write cannot delete its temporary file; :func:`remove_stale_temporaries` finds such
files (the pid in the name is no longer running) and deletes them.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are a single line on stderr (exit status 2).

    Notes about deprecated spellings (:func:`add_alias`) are printed only once the command
    line is known to be valid, so a mistake is still exactly one line. ``check`` (a function
    of the parsed namespace that may call :meth:`error`) runs before they are printed."""

    def parse_args(self, args=None, namespace=None, check=None):  # type: ignore[override]
        self._pending_notes: list[str] = []
        parsed = super().parse_args(args, namespace)
        if check is not None:
            check(parsed)
        for note in self._pending_notes:
            print(note, file=sys.stderr)
        self._pending_notes = []
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        self._pending_notes = []
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def doc_summary(doc: str | None) -> str:
    """A module docstring's first paragraph as one line of ``--help`` text: without the
    reStructuredText double backquotes, and without a leading ``python -m tool:`` that only
    repeats the program's name."""
    first = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("``", "")
    head, sep, rest = first.partition(": ")
    return rest if sep and head.startswith("python ") else first


def fail(prog: str, message: object, status: int = 1) -> int:
    """Print ``<prog>: error: <message>`` as one line on stderr and return ``status``: the
    one error format of every tool (the same as :class:`OneLineParser`'s, without the
    ``(see --help)`` hint reserved for usage mistakes)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return status


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


# ------------------------------------------------------------------ the shared vocabulary
# Every tool spells the same thing the same way, with the same bounds:
#   --seed      a seed, an integer in [0, SEED_MAX]
#   --episodes  a number of episodes
#   --n-envs    a number of environments simulated at once
#   --width     frame width in pixels, in [WIDTH_MIN, WIDTH_MAX]
#   --fps       frames per second of an animation, in [1, FPS_MAX]
#   --device    torch device: auto (default), cpu or cuda
#: Largest seed the tools accept: numpy's legacy global RNG, SB3 and torch need seeds below
#: 2**32, and every seed a tool derives from ``--seed`` stays in range (see
#: ``agents.training.session_seed``).
SEED_MAX = 2**32 - 1
WIDTH_MIN, WIDTH_MAX = 64, 4096
FPS_MAX = 240
DEVICES = ("auto", "cpu", "cuda")

seed_int = int_in(0, SEED_MAX)
width_px = int_in(WIDTH_MIN, WIDTH_MAX)
fps_int = int_in(1, FPS_MAX)


def add_seed(
    parser: argparse.ArgumentParser, default: int | None, what: str, shown: int | None = None
) -> None:
    """``--seed`` in ``[0, SEED_MAX]``; ``what`` says what it seeds; ``shown`` is the
    default named in the help when ``default`` is None (filled in later)."""
    value = default if default is not None else shown
    tail = "" if value is None else f"; default {value}"
    parser.add_argument(
        "--seed", type=seed_int, default=default, help=f"{what} (0 to {SEED_MAX}{tail})"
    )


def add_width(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--width",
        type=width_px,
        default=default,
        help=f"frame width in pixels, {WIDTH_MIN} to {WIDTH_MAX} (default {default})",
    )


def add_fps(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--fps",
        type=fps_int,
        default=default,
        help=f"frames per second of the animation, 1 to {FPS_MAX} (default {default})",
    )


def add_device(parser: argparse.ArgumentParser, auto: str, default: str | None = "auto") -> None:
    """``--device auto|cpu|cuda`` (default ``auto``); ``auto`` explains what auto picks."""
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default=default,
        help=f"torch device (default auto: {auto})",
    )


class _DeprecatedAlias(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kw: object):
        self.new = new
        super().__init__(option_strings, dest, **kw)  # type: ignore[arg-type]

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        note = f"{parser.prog}: note: {option_string} is deprecated; use {self.new}"
        pending = getattr(parser, "_pending_notes", None)
        if pending is None:
            print(note, file=sys.stderr)
        else:
            pending.append(note)
        setattr(namespace, self.dest, values)


def add_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` as a deprecated spelling of the option ``new`` (already added): same
    destination and type, hidden from ``--help``, a one-line note on stderr when used."""
    target = next(a for a in parser._actions if new in a.option_strings)
    parser.add_argument(
        old,
        dest=target.dest,
        type=target.type,
        choices=target.choices,
        metavar=target.metavar,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
        action=_DeprecatedAlias,
        new=new,
    )


# ------------------------------------------------------------------ atomic files
#: Temporary files of :func:`atomic_output`: ``.<target name>.<pid>.<8 hex>.tmp[.ext]``.
TEMP_RE = re.compile(r"^\.(?P<target>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp(\.[A-Za-z0-9]+)?$")


def temp_path(path: str | os.PathLike[str], suffix: str = ".tmp") -> Path:
    """A fresh hidden file name next to ``path`` (same folder, so ``os.replace`` is atomic).
    ``suffix`` must start with ``.tmp`` (``.tmp.zip`` keeps the extension libraries look
    at)."""
    if not suffix.startswith(".tmp"):
        raise ValueError(f"suffix must start with '.tmp', got {suffix!r}")
    path = Path(path)
    return path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{suffix}"


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; when the block ends without an exception
    the temporary file is moved onto ``path`` (``os.replace``, with the usual ``0o666 &
    ~umask`` permissions), otherwise deleted. ``suffix`` defaults to ``.tmp`` plus
    ``path``'s extension, so writers that pick a format by extension still see it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path, suffix if suffix is not None else ".tmp" + path.suffix)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`)."""
    with atomic_output(path) as tmp, open(tmp, "xb") as f:
        f.write(data)


def _pid_running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return pid > 0  # someone else's live process (or an unknowable pid: keep the file)
    return True


def remove_stale_temporaries(folder: str | os.PathLike[str], recursive: bool = True) -> list[Path]:
    """Delete the temporary files of :func:`atomic_output` under ``folder`` whose writer is
    no longer running (a process killed mid-write); return what was removed."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for f in folder.rglob(".*") if recursive else folder.glob(".*"):
        m = TEMP_RE.match(f.name)
        if m and f.is_file() and not _pid_running(int(m.group("pid"))):
            with contextlib.suppress(FileNotFoundError):
                f.unlink()
                removed.append(f)
    return removed
