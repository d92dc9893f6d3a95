"""What the agent hears when an edit or deletion was based on a cell that changed since it read it.

The page refused the proposal before showing anything (:mod:`.versions`); its refusal carries the cell at the
index as it is now. The agent gets one plain paragraph, then that source in a fence it cannot close, and its
version: it re-reads, and proposes again from what the user has now. What it was shown is remembered as read,
so the next proposal from it goes through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .call import ToolCall
from .cells import clip
from .reading import bounded
from .versions import cell_version, parse_version

__all__ = ["MAX_SHOWN_CHARS", "fence", "stale_refusal"]

#: Characters of the current source the refusal shows.
MAX_SHOWN_CHARS = 20_000


def fence(source: str) -> str:
    """``source`` in a Markdown code fence longer than any run of backticks inside it."""
    longest, run = 0, 0
    for char in source:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{source}\n{ticks}"


def stale_refusal(
    call: ToolCall, tool: str, index: int, stale: Mapping[str, Any], data: Mapping[str, Any]
) -> str:
    """The refusal of a stale ``tool`` call at ``index``: why, and the cell as it is now (then read)."""
    source = clip(stale.get("source"), MAX_SHOWN_CHARS + 1)
    cut = len(source) > MAX_SHOWN_CHARS
    source = source[:MAX_SHOWN_CHARS]
    cell_id = clip(stale.get("id"), 100)
    version = parse_version(stale.get("version"))
    if version is None or cut:
        version = None if cut else cell_version(source)
    if cell_id and version is not None:
        call.seen.saw(call.session_id, index, cell_id, version)
    moved = stale.get("moved") is True
    why = (
        f"index {index} now names another cell (cells moved since you read them)"
        if moved
        else f"cell {index} changed since you last read it (the user typed in it, or another change was kept)"
    )
    path = clip(data.get("path"), 200)
    where = f" of {path}" if path else ""
    kind = clip(stale.get("type"), 20) or "code"
    shown = f"version {version}" if version is not None else "too long to show whole"
    return bounded(
        f"Refused: {why}; nothing was shown to the user and nothing was changed. Cell {index}{where} is now "
        f"a {kind} cell ({shown}):\n{fence(source)}\n"
        f"Base your change on this source and call {tool} again."
    )
