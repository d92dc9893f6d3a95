"""The pictures the scripted model's ``IMAGE`` keyword has Hermes write: real PNGs, drawn here without any
imaging library (the demo must run with nothing but the package).

:data:`IMAGE_PNG` is a small bar chart (the demo notebook's revenue by city) a person recognises as a chart;
:data:`DOT_PNG` is a single pixel, for checking how a view shows an image too small to see.
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DOT_PNG",
    "IMAGE_PNG",
    "PICTURES_VARIABLE",
    "bar_chart_png",
    "picture_file",
    "pictures_folder",
    "png",
]

_WHITE = b"\xff\xff\xff\xff"
_AXIS = b"\x44\x44\x44\xff"
_GRID = b"\xe4\xe4\xe4\xff"
#: One colour per bar (a colour-blind-safe set), repeated for more bars.
_BAR_COLOURS = (b"\x1f\x77\xb4\xff", b"\xff\x7f\x0e\xff", b"\x2c\xa0\x2c\xff", b"\x94\x67\xbd\xff")


def png(width: int, height: int, rows: Sequence[bytes]) -> bytes:
    """A truecolour-with-alpha PNG of ``rows`` (each ``width`` RGBA pixels, top to bottom)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    if len(rows) != height or any(len(row) != 4 * width for row in rows):
        raise ValueError(f"expected {height} rows of {width} RGBA pixels")
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def bar_chart_png(values: Sequence[float], width: int = 240, height: int = 140) -> bytes:
    """A bar chart of ``values`` (non-negative): white ground, light grid lines, one coloured bar per value,
    an axis along the bottom and the left."""
    margin, top = 16, 10
    floor = height - margin  # the row of the x axis
    peak = max(values, default=0) or 1
    slot = (width - 2 * margin) / max(1, len(values))
    bars = []
    for index, value in enumerate(values):
        left = margin + round(index * slot + slot * 0.2)
        right = margin + round((index + 1) * slot - slot * 0.2)
        bars.append((left, right, floor - round((floor - top) * value / peak), _BAR_COLOURS[index % 4]))
    rows = []
    for y in range(height):
        ground = _GRID if y < floor and (floor - y) % 20 == 0 else _WHITE
        row = bytearray(ground * width)
        for left, right, bar_top, colour in bars:
            if bar_top <= y < floor:
                row[4 * left : 4 * right] = colour * (right - left)
        if y == floor:
            row[4 * margin : 4 * (width - margin)] = _AXIS * (width - 2 * margin)
        if top <= y <= floor:
            row[4 * margin : 4 * margin + 4] = _AXIS
        rows.append(bytes(row))
    return png(width, height, rows)


#: What ``IMAGE`` writes: revenue by city, as in notebooks/working_with_data.ipynb.
IMAGE_PNG = bar_chart_png([3.5, 19.0, 7.25, 2.1])
#: What ``IMAGE <name> dot`` writes: one blue pixel (a real PNG every viewer decodes).
DOT_PNG = png(1, 1, [b"\x1f\x77\xb4\xff"])


#: The environment variable naming the folder of the pictures, set for every Hermes the harness starts
#: (``LocalHermes``): the agent's command says ``$HN_DEMO_PICTURES/chart.png``, so a tool's label reads as
#: what it does rather than as a temp path of this machine.
PICTURES_VARIABLE = "HN_DEMO_PICTURES"


def pictures_folder() -> Path:
    """Where the pictures are: one folder in the temp dir (the scripted model and Hermes always share the
    machine: loopback only)."""
    return Path(tempfile.gettempdir()) / "hermes-notebook-scripted-model"


def picture_file(name: str, data: bytes) -> str:
    """``$HN_DEMO_PICTURES/<name>.png`` for the agent's command to copy, the file holding ``data`` (written
    once, atomically, rewritten only if it ever differs); ``cp <file>`` reads better in a tool's label than
    the picture's base64."""
    folder = pictures_folder()
    path = folder / f"{name}.png"
    if not path.is_file() or path.read_bytes() != data:
        folder.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=folder, suffix=".part")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    return f'"${PICTURES_VARIABLE}/{name}.png"'
