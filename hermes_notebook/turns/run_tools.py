"""Tool parts of an API Server run, which carry no id on the wire: numbered, and matched to completions by
name.

``tool.started {tool, preview}`` and ``tool.completed {tool, duration, error}`` name the tool but no call
(docs/protocol/api-server.md §3), so the parts are numbered ``tool:run-1``, ``tool:run-2``... (contract,
"Ids") and a completion goes to the oldest running part of that name.
"""

from __future__ import annotations

from collections import deque

from .changes import ToolStatus
from .model import Part

__all__ = ["RunTools"]


class RunTools:
    """The run dialect's tool numbering and, per tool name, its running parts oldest first (one per turn)."""

    __slots__ = ("_count", "_running")

    def __init__(self) -> None:
        self._count = 0
        self._running: dict[str, deque[Part]] = {}

    def _next_id(self) -> str:
        self._count += 1
        return f"tool:run-{self._count}"

    def start(self, name: str | None, preview: str | None) -> Part:
        """A new running part for ``tool.started``, queued under its name."""
        part = Part(self._next_id(), "tool", name=name, status="running", preview=preview)
        self._running.setdefault(name or "", deque()).append(part)
        return part

    def oldest_running(self, name: str | None) -> Part | None:
        """Take the oldest still-running part named ``name`` off its queue (None: nothing of that name
        runs)."""
        queue = self._running.get(name or "")
        while queue:
            part = queue.popleft()
            if part.status == "running":
                return part
        return None

    def finished(self, name: str | None, status: ToolStatus, duration: float | None) -> Part:
        """A part for a ``tool.completed`` with no running part to match (its start was never seen)."""
        return Part(self._next_id(), "tool", name=name, status=status, duration=duration)
