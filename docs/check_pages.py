"""Check the built documentation in a headless browser: ``python docs/check_pages.py``
(after ``python -m sphinx -W -b html docs docs/_build/html``; needs ``chromium``).

For the front page and every environment page it takes a screenshot of the top of the
page as a reader first sees it (1200 x 1300 px) with headless Chromium and checks what the
page must open with: on an environment page the animation and the summary table (action
space, observation space, the line that makes the env, the learned-vs-classic headline)
before the first section after the description, and, in the screenshot, the animation's
dark frames; on the front page the task gallery's animations and the example. The
screenshots go to ``--out`` (default ``docs/_build/screenshots``). Exits non-zero, naming
the page and what it misses, when a check fails.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "docs" / "_build" / "html"
#: The animations' background colour (``steer_env.rendering.ROLE_COLORS["background"]``).
BACKGROUND = np.array([18, 20, 27])
WINDOW = (1200, 1300)
#: The environment pages and the top card's Gymnasium id or PettingZoo module.
ENV_PAGES = ("pursuit", "evasion", "team_pursuit", "herding", "crowd", "flocking")


def screenshot(browser: str, page: Path, out: Path) -> np.ndarray:
    """The top of ``page`` as the browser draws it, ``(H, W, 3)`` uint8 (also saved to
    ``out``)."""
    from PIL import Image

    w, h = WINDOW
    subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={w},{h}", f"--screenshot={out}", page.as_uri(),
        ],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return np.asarray(Image.open(out).convert("RGB"))


def dark_fraction(image: np.ndarray) -> float:
    """The fraction of the pixels in the animations' background colour."""
    return float((np.abs(image.astype(int) - BACKGROUND).sum(axis=2) < 12).mean())


def check_env_page(html: str) -> list[str]:
    """What an environment page's source misses at its top."""
    problems = []
    top = html.split('id="action-space"')[0]
    if "<img" not in top or ".gif" not in top:
        problems.append("no animation before the Action Space section")
    for row in ("Action space", "Observation space", "Import", "Learned vs classic"):
        if f"<td><p>{row}</p></td>" not in top:
            problems.append(f"no summary row {row!r} before the Action Space section")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python docs/check_pages.py", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "_build" / "screenshots")
    parser.add_argument("--browser", default=None, help="the browser (default: chromium)")
    args = parser.parse_args(argv)
    browser = args.browser or shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        parser.error("no chromium on PATH (Debian: apt-get install chromium)")
    if not (HTML / "index.html").is_file():
        parser.error(f"no built site in {HTML}: python -m sphinx -W -b html docs {HTML}")
    args.out.mkdir(parents=True, exist_ok=True)
    failures = []
    pages = {"index": HTML / "index.html", **{n: HTML / "envs" / f"{n}.html" for n in ENV_PAGES}}
    for name, page in pages.items():
        html = page.read_text()
        problems = check_env_page(html) if name != "index" else []
        if name == "index":
            shown = html.count(".gif")
            if shown < len(ENV_PAGES):
                problems.append(f"{shown} animations in the gallery, fewer than the tasks")
            if "steer_env/Crowd-v0" not in html:
                problems.append("no example")
        image = screenshot(browser, page, args.out / f"{name}.png")
        # The animation (or the gallery) is in view at the top: its dark frames show.
        if dark_fraction(image) < 0.03:
            problems.append(f"no animation in view ({dark_fraction(image):.1%} dark pixels)")
        status = "ok" if not problems else "; ".join(problems)
        print(f"{name}: {status} ({args.out / (name + '.png')})")
        failures += [f"{name}: {p}" for p in problems]
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
