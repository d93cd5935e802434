"""The steering library page: every behavior of ``steer_env.behaviors`` has a card there, and
every card's picture (a still of its gallery scene) is committed and small."""

from __future__ import annotations

import re
from pathlib import Path

from steer_env.demos.gallery import BEHAVIOR_SCENES, BEHAVIORS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "library.md"
PICTURES = ROOT / "docs" / "_static" / "behaviors"
CARDS = re.findall(r"```\{behavior-card\} (\w+)", PAGE.read_text())


def test_every_behavior_has_a_card():
    assert sorted(CARDS) == sorted(BEHAVIOR_SCENES)
    assert len(CARDS) == len(set(CARDS))


def test_every_card_has_its_picture():
    for name in CARDS:
        picture = PICTURES / f"{BEHAVIOR_SCENES[name]}.png"
        assert picture.is_file(), f"{name}: no {picture.relative_to(ROOT)}"
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert picture.stat().st_size < 60_000, picture


def test_the_pictures_are_the_gallery_scenes():
    assert sorted(p.stem for p in PICTURES.glob("*.png")) == sorted(BEHAVIORS)
    assert "python -m steer_env.demos.gallery --stills docs/_static/behaviors" in PAGE.read_text()
