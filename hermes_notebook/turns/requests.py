"""A turn's server prompts (approvals, clarify, sudo, secret): their ids, which part holds each, approval
order.

Why its own owner: approvals carry no request id on 0.19.0 and resolve first in, first out
(docs/protocol/dashboard.md §4.2 and §8.6, docs/protocol/api-server.md §3 "Approvals"), so they are numbered
here and kept in server order; a repeated request keeps the first one. The folder asks this book and hangs the
interactions on parts; the book decides nothing about parts but which one holds a request.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping

from .changes import InteractionKind
from .events import Event
from .masked import hermes_masked
from .model import DEFAULT_APPROVAL_CHOICES, MASKED_APPROVAL_CHOICES, Interaction, Part
from .payload import choices_or_none, text_or_none

__all__ = ["RequestBook"]


class RequestBook:
    """Request id -> the part holding its interaction; approval numbering and their server order."""

    __slots__ = ("_holders", "_approval_count", "_approval_fifo", "_synthetic")

    def __init__(self) -> None:
        self._holders: dict[str, Part] = {}  # request id -> the part holding it
        self._approval_count = 0
        self._approval_fifo: deque[str] = deque()  # approvals in server order, for approval.responded
        self._synthetic: set[str] = set()  # tool parts made only to hold an interaction

    def approval_from(self, event: Event) -> Interaction | None:
        """The interaction of an ``approval.request`` (None: this request is shown already)."""
        p = event.payload
        self._approval_count += 1
        # A newer Dashboard's approval is a server request with its own id (docs/protocol/dashboard.md §4.2);
        # a newer API Server's run approval names its request_id too, and answers exactly the one named.
        given = p.get("request_id")
        if event.dialect == "run" and not (isinstance(given, str) and 0 < len(given) <= 256):
            given = None
        rid = str(given) if given else f"approval-{self._approval_count}"
        if rid in self._holders:
            return None
        self._approval_fifo.append(rid)
        # No choices (absent, or an empty list) means the default pair: every view and check then reads one
        # list.
        choices = choices_or_none(p.get("choices")) or list(DEFAULT_APPROVAL_CHOICES)
        command = text_or_none(p.get("command"))
        masked = hermes_masked(command)
        if masked:  # what runs is not fully shown: grant nothing beyond this one command
            choices = [c for c in choices if c in MASKED_APPROVAL_CHOICES] or list(DEFAULT_APPROVAL_CHOICES)
        return Interaction(
            "approval",
            rid,
            command=command,
            description=text_or_none(p.get("description")),
            choices=choices,
            masked=masked,
        )

    def request_from(self, event: Event, kind: InteractionKind) -> Interaction | None:
        """The interaction of a clarify/sudo/secret request (None: a repeat; the first one stands)."""
        # clarify/sudo/secret.request carry their own request_id (docs/protocol/dashboard.md §4.2).
        p = event.payload
        rid = p.get("request_id")
        rid = str(rid) if rid is not None else f"{kind}-{len(self._holders) + 1}"
        if rid in self._holders:
            return None
        if kind == "secret":
            return Interaction(
                kind, rid, question=text_or_none(p.get("prompt")), description=text_or_none(p.get("env_var"))
            )
        inter = Interaction(
            kind,
            rid,
            question=text_or_none(p.get("question")),
            choices=choices_or_none(p.get("choices")) or [],
        )
        questions = p.get("questions")
        if kind == "clarify" and isinstance(questions, list) and questions:  # newer servers: 1-5 questions
            inter.questions = [dict(q) for q in questions if isinstance(q, Mapping)]
        return inter

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._holders

    def hold(self, request_id: str, part: Part, *, synthetic: bool = False) -> None:
        """Record that ``part`` holds the interaction ``request_id`` (``synthetic``: made only to hold it)."""
        self._holders[request_id] = part
        if synthetic:
            self._synthetic.add(part.id)

    def is_synthetic(self, part: Part) -> bool:
        """Whether ``part`` exists only to hold an interaction (it then lives exactly as long as it)."""
        return part.id in self._synthetic

    def pending_part(self, request_id: str) -> Part | None:
        """The part holding the still-pending interaction ``request_id`` (a part's interaction can be
        replaced)."""
        part = self._holders.get(request_id)
        inter = None if part is None else part.interaction
        if inter is None or inter.request_id != request_id or inter.status != "pending":
            return None
        return part

    def pending_parts(self) -> Iterator[Part]:
        """The parts whose interaction still waits for an answer, in request order."""
        for rid in self._holders:
            part = self.pending_part(rid)
            if part is not None:
                yield part

    def approvals_resolved(self, count: int, named: str | None = None) -> Iterator[str]:
        """Take the approval the server ``named`` out of its order (newer servers), else up to ``count`` ids
        off the front (0.19.0 resolves its oldest pending approvals)."""
        if named is not None and named in self._approval_fifo:
            self._approval_fifo.remove(named)
            yield named
            return
        while count and self._approval_fifo:
            count -= 1
            yield self._approval_fifo.popleft()
