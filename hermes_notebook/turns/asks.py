"""A turn's questions: which running tool part each hangs on, answered, resolved, expired.

Why apart from the folder: the folder builds the message (parts, text streams, markers, the end); a question
(an approval, clarify, sudo or secret from the server, or a Run card the client asks itself) lives on a part
and ends by rules of its own (a part made only to hold it lives exactly as long as it does; approvals resolve
first in, first out: :class:`~.requests.RequestBook`). The folder hands every such event here, and the
handlers reach it as ``folder.asks`` (:class:`~.vocabulary.FolderOps`).
"""

from __future__ import annotations

from typing import Protocol

from .changes import ChangeRecord, InteractionKind, InteractionStatus, PartFields, PatchChange
from .events import Event
from .model import REDACTED, Interaction, Part
from .requests import RequestBook

__all__ = ["Asks"]


class _Folder(Protocol):
    """What the questions use of the folder: adding a part, and a patch record of one."""

    def add_tool(self, part: Part) -> list[ChangeRecord]: ...

    def patch(self, part: Part, fields: PartFields) -> PatchChange: ...


class Asks:
    """The running tool parts of a turn and the questions they hold (see the module docstring)."""

    __slots__ = ("_folder", "_requests", "_running")

    def __init__(self, folder: _Folder) -> None:
        self._folder = folder
        self._requests = RequestBook()  # server prompts: ids, holding parts, approval order
        self._running: list[Part] = []  # running tool parts, oldest first

    # --- the running tool parts (the folder says when one starts and ends) ---------------------------------

    def started(self, part: Part) -> None:
        """A tool part started running (a question may hang on it)."""
        self._running.append(part)

    def ended(self, part: Part | None = None) -> None:
        """``part`` is no longer running (None: the turn ended, none is)."""
        if part is None:
            self._running.clear()
        elif part in self._running:
            self._running.remove(part)

    def is_synthetic(self, part: Part) -> bool:
        """True for a part made only to hold a question."""
        return self._requests.is_synthetic(part)

    # --- questions ------------------------------------------------------------------------------------------

    def pending(self) -> list[Interaction]:
        """Copies of the questions still waiting for an answer, in request order."""
        return [p.interaction.copy() for p in self._requests.pending_parts() if p.interaction is not None]

    def pending_part(self, request_id: str) -> Part | None:
        """The part holding the still-pending question ``request_id``."""
        return self._requests.pending_part(request_id)

    def answer(self, request_id: str, response: str) -> list[ChangeRecord]:
        """Record a view's answer (a sudo password or secret as ``"********"``); ``[]`` when not pending."""
        part = self.pending_part(request_id)
        if part is None:
            return []
        if part.interaction is not None and part.interaction.kind in ("sudo", "secret"):
            response = REDACTED
        return self.resolve(part, "answered", response)

    def ask(self, part: Part, inter: Interaction) -> list[ChangeRecord]:
        """Hang a question the client asks itself on running tool part ``part``; ``[]`` when it is shown."""
        if part.status != "running" or inter.request_id in self._requests:
            return []
        part.interaction = inter
        self._requests.hold(inter.request_id, part)
        return [self._folder.patch(part, {"interaction": inter.to_dict()})]

    def on_approval_request(self, event: Event) -> list[ChangeRecord]:
        """An ``approval.request``: hung on the newest running tool (or a part of its own)."""
        inter = self._requests.approval_from(event)
        return [] if inter is None else self._attach(inter)

    def on_request(self, event: Event, kind: InteractionKind) -> list[ChangeRecord]:
        """A clarify, sudo or secret request: hung on the newest running tool (clarify's first)."""
        inter = self._requests.request_from(event, kind)
        return [] if inter is None else self._attach(inter, "clarify" if kind == "clarify" else None)

    def on_expire(self, event: Event) -> list[ChangeRecord]:
        """``sudo.expire`` / ``secret.expire`` {request_id} after 120 s / 300 s (docs/protocol/dashboard.md
        §4.2)."""
        rid = event.payload.get("request_id")
        part = None if rid is None else self.pending_part(str(rid))
        return [] if part is None else self.resolve(part, "expired")

    def resolve(
        self, part: Part, status: InteractionStatus, response: str | None = None
    ) -> list[ChangeRecord]:
        """End ``part``'s question with ``status`` (and ``response``)."""
        inter = part.interaction
        assert inter is not None
        inter.status = status
        if response is not None:
            inter.response = response
        fields: PartFields = {"interaction": inter.to_dict()}
        if self._requests.is_synthetic(part) and part.status == "running":
            # A part made only for the question lives exactly as long as the question does.
            part.status = fields["status"] = "completed" if status == "answered" else "cancelled"
            self.ended(part)
        return [self._folder.patch(part, fields)]

    def resolve_oldest_approvals(
        self, count: int, choice: str | None, named: str | None = None
    ) -> list[ChangeRecord]:
        """The server resolved its ``count`` oldest approvals (FIFO), or exactly the one it ``named`` (newer
        servers); one already answered keeps its answer."""
        changes: list[ChangeRecord] = []
        for rid in self._requests.approvals_resolved(count, named):
            part = self.pending_part(rid)
            if part is not None:
                changes.extend(self.resolve(part, "answered", choice))
        return changes

    def _attach(self, inter: Interaction, prefer_name: str | None = None) -> list[ChangeRecord]:
        """Hang ``inter`` on the most recent running tool (of ``prefer_name`` first), else a synthetic
        part."""
        candidates = [
            p for p in reversed(self._running) if p.interaction is None or p.interaction.status != "pending"
        ]
        target = next((p for p in candidates if p.name == prefer_name), None) if prefer_name else None
        if target is None and candidates:
            target = candidates[0]
        if target is None:
            suffix = inter.request_id if inter.kind == "approval" else f"{inter.kind}-{inter.request_id}"
            part = Part(f"tool:{suffix}", "tool", name=inter.kind, status="running", interaction=inter)
            self._requests.hold(inter.request_id, part, synthetic=True)
            return self._folder.add_tool(part)
        target.interaction = inter
        self._requests.hold(inter.request_id, target)
        return [self._folder.patch(target, {"interaction": inter.to_dict()})]
