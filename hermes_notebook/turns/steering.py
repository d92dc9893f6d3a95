"""Steering a running turn, as the conversation shows it: a marker where the user's guidance went in.

A steer is the user's words, sent while a turn runs (``session.steer``): Hermes adds it to the next tool
result, and no event says so (docs/protocol/dashboard-newer.md §16). Live, the client marks the turn when the
server accepted the text; a newer Hermes stores it, wrapped in its out-of-band marker, as a user row of its
own (``display_kind: "steer"``), which history folds into the same marker part in the same turn. (0.19.0
appends it to the tool result only in memory, after storing that row: its history keeps no steer. A stored
tool result that does carry a steer block loses it here too.) Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_STEER_SHOWN", "STEER_EVENT", "is_steer_row", "split_steers", "steer_marker"]

#: The synthetic history event a stored steer becomes (no server sends it; the folder turns it into a marker).
STEER_EVENT = "history.steer"
#: Characters of a steer shown in its marker.
MAX_STEER_SHOWN = 200
# agent/prompt_builder.py format_steer_marker (both servers; the opening line's wording differs between them).
_BLOCK = re.compile(
    r"\n*\[OUT-OF-BAND USER MESSAGE[^\]\n]*\]\n(?P<text>.*?)\n\[/OUT-OF-BAND USER MESSAGE\]", re.S
)


def steer_marker(text: str) -> str:
    """The marker's words for a steer: ``Steered: <text>`` (one line, clipped)."""
    line = " ".join(str(text).split())
    return f"Steered: {line if len(line) <= MAX_STEER_SHOWN else line[:MAX_STEER_SHOWN] + '…'}"


def split_steers(content: str) -> tuple[str, list[str]]:
    """A stored text without Hermes' steer blocks, and the steers' texts in order."""
    if "[OUT-OF-BAND USER MESSAGE" not in content:
        return content, []
    texts = [m.group("text") for m in _BLOCK.finditer(content)]
    return _BLOCK.sub("", content), texts


def is_steer_row(row: Mapping[str, Any], text: str) -> bool:
    """A user row that is a steer delivered as a message of its own (newer Hermes), not a new prompt."""
    return row.get("display_kind") == "steer" or (
        text.lstrip().startswith("[OUT-OF-BAND USER MESSAGE") and not split_steers(text)[0].strip()
    )
