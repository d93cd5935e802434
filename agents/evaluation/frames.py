"""Frames of rendered episodes: captions, two episodes side by side and the animation
writer, shared by the episodes of one agent (:mod:`agents.evaluation.episodes`) and the
cross-play's (:mod:`agents.evaluation.cross_play`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

#: Height of the caption strip below each frame, and the gap between two panels (px).
CAPTION_PX = 22
GAP_PX = 4
#: Width of one panel (px).
DEFAULT_WIDTH = 360


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def captioned(
    frames: list[np.ndarray],
    caption: str,
    final_caption: str | None = None,
    width: int | None = DEFAULT_WIDTH,
) -> list[np.ndarray]:
    """Frames resized to ``width`` px (keeping the aspect ratio; ``None`` keeps the size)
    with a caption strip below; the last frame shows ``final_caption`` instead."""
    from PIL import Image, ImageDraw

    out = []
    font = _font(14)
    for i, f in enumerate(frames):
        img = Image.fromarray(np.asarray(f, dtype=np.uint8)[..., :3])
        if width is not None and img.width != width:
            img = img.resize((width, round(img.height * width / img.width)), Image.BILINEAR)
        canvas = Image.new("RGB", (img.width, img.height + CAPTION_PX), (18, 20, 27))
        canvas.paste(img, (0, 0))
        text = final_caption if (final_caption and i == len(frames) - 1) else caption
        ImageDraw.Draw(canvas).text((6, img.height + 3), text, fill=(226, 228, 235), font=font)
        out.append(np.asarray(canvas))
    return out


def side_by_side(left: list[np.ndarray], right: list[np.ndarray]) -> list[np.ndarray]:
    """Frames of two episodes next to each other; the shorter one holds its last frame."""
    n = max(len(left), len(right))
    h = max(left[0].shape[0], right[0].shape[0])
    out = []
    for i in range(n):
        a = left[min(i, len(left) - 1)]
        b = right[min(i, len(right) - 1)]
        canvas = np.zeros((h, a.shape[1] + GAP_PX + b.shape[1], 3), dtype=np.uint8)
        canvas[: a.shape[0], : a.shape[1]] = a
        canvas[: b.shape[0], a.shape[1] + GAP_PX :] = b
        out.append(canvas)
    return out


def write_gif(frames: list[np.ndarray], path: str | os.PathLike[str], fps: float = 10.0) -> Path:
    """Write ``frames`` to ``path``: the project's one animation writer,
    :func:`steer_env.rendering.write_animation` (GIF, MP4 or PNG by extension, atomic)."""
    from steer_env.rendering import write_animation

    return write_animation(path, frames, fps)
