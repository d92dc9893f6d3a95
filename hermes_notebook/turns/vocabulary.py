"""What the per-event handlers may do to a turn: the :class:`~.folder.TurnFolder`'s public vocabulary, as a
Protocol.

Why a Protocol: the handlers (:mod:`.dialects`, :mod:`.withdrawn`) are the folder's other half, but they reach
it only through these methods, and naming them here keeps the handler modules from importing the folder (which
imports them): no import circle, and no handler touches the folder's own fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from .asks import Asks
    from .changes import (
        ChangeRecord,
        MessageStatus,
        PartFields,
        PatchChange,
        ToolStatus,
    )
    from .model import Part
    from .run_tools import RunTools

__all__ = ["FolderOps"]


class FolderOps(Protocol):
    """The operations a handler turns one event into; each returns the change records it caused."""

    @property
    def message_id(self) -> str: ...

    @property
    def has_reasoning(self) -> bool: ...

    @property
    def run_tools(self) -> RunTools: ...

    @property
    def asks(self) -> Asks: ...

    def begin(self, status: Literal["streaming", "queued"] = "streaming") -> list[ChangeRecord]: ...

    def part(self, part_id: str) -> Part | None: ...

    def parts_of(self, kind: str) -> list[Part]: ...

    def add_text(self, text: str) -> list[ChangeRecord]: ...

    def add_marker(self, text: str) -> list[ChangeRecord]: ...

    def final_text(self, final: str) -> list[ChangeRecord]: ...

    def add_reasoning(self, text: str) -> list[ChangeRecord]: ...

    def add_tool(self, part: Part) -> list[ChangeRecord]: ...

    def patch(self, part: Part, fields: PartFields) -> PatchChange: ...

    def complete_tool(
        self,
        part: Part,
        status: ToolStatus,
        *,
        result: Any = ...,
        duration: float | None = None,
        arguments: Any = None,
        name: str | None = None,
    ) -> list[ChangeRecord]: ...

    def on_compacting(self, text: str) -> list[ChangeRecord]: ...

    def on_refused(self, text: str) -> list[ChangeRecord]: ...

    def on_compressions(self, count: int | None, text: str) -> list[ChangeRecord]: ...

    def end(self, status: MessageStatus, usage: Any, error: str | None) -> list[ChangeRecord]: ...
