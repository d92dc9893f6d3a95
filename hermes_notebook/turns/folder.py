"""TurnFolder: the events of one assistant turn in, a Message and per-event change records out.

Everything a view shows of a turn is decided here, once, for both servers and for history. The per-event
handlers of each dialect live in :mod:`.dialects`; they are the folder's other half and use its public
vocabulary (:class:`~.vocabulary.FolderOps`: ``add_text``, ``add_tool``, ``resolve``, ``end``...), never its
fields. Per-delta work is O(1): text is kept as a list of chunks and joined only when a snapshot is asked for.
No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from .asks import Asks
from .changes import (
    ChangeRecord,
    MessageStatus,
    PartFields,
    PatchChange,
    ToolStatus,
)
from .dialects import HANDLERS
from .events import Event
from .labels import tool_label
from .model import (
    Interaction,
    Message,
    Part,
    Source,
    TransformContext,
    TransformOutput,
)
from .payload import timed_out
from .run_tools import RunTools

__all__ = ["END_STATUSES", "TurnFolder"]

END_STATUSES = frozenset({"complete", "interrupted", "error", "cancelled"})


class TurnFolder:
    """Folds the events of one assistant turn into a :class:`Message`, returning change records per event.

    ``apply`` is O(1) per text delta. The first call (or :meth:`begin`) emits the ``message`` op; the end (a
    terminal event or :meth:`finish`) emits the end-of-turn patches and ``finish``; after that every call
    returns ``[]``."""

    __slots__ = (
        "turn_id",
        "source",
        "message_id",
        "_transform",
        "_msg",
        "_started",
        "_done",
        "_segment",
        "_parts",
        "_chunks",
        "_text_id",
        "_text_chunks",
        "_reasoning_id",
        "_reasoning_chunks",
        "_has_text",
        "_has_reasoning",
        "run_tools",
        "asks",
        "_compressions",
        "_marker_count",
    )

    def __init__(
        self,
        turn_id: str,
        *,
        source: Source = "live",
        transform_output: TransformOutput | None = None,
        compressions: int | None = None,
    ) -> None:
        self.turn_id = turn_id
        self.source = source
        self.message_id = f"assistant:{turn_id}"
        self._transform = transform_output
        self._msg = Message(self.message_id, "assistant")
        self._started = False
        self._done = False
        self._segment = 0  # N in reasoning:N / text:N; +1 after each tool part (contract, "Ids")
        self._parts: dict[str, Part] = {}
        self._chunks: dict[str, list[str]] = {}  # text/reasoning part id -> chunks not yet joined
        self._text_id = ""  # the current segment's text part, once it exists ("" before)
        self._text_chunks: list[str] | None = None
        self._reasoning_id = ""
        self._reasoning_chunks: list[str] | None = None
        self._has_text = False
        self._has_reasoning = False
        #: The run dialect's tool parts, numbered and matched to completions by name (its handlers drive it).
        self.run_tools = RunTools()
        #: The turn's questions and the running tool parts they hang on (the handlers reach them here).
        self.asks = Asks(self)
        # The session's usage.compressions when the turn opened (None: unknown) and the markers added so far:
        # a count that grew at the end with no marker shown means a compaction nobody announced.
        self._compressions = compressions
        self._marker_count = 0

    # -- public ----------------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the turn has ended (terminal event or :meth:`finish`)."""
        return self._done

    @property
    def message(self) -> Message:
        """A snapshot of the message so far (a copy: it does not change as more events arrive)."""
        self._sync()
        return self._msg.copy()

    def ended_message(self) -> Message:
        """The message itself, not a copy, once the turn has ended (history skips a copy); RuntimeError
        before."""
        if not self._done:
            raise RuntimeError("ended_message() is only available after the turn has ended")
        return self._msg

    def pending(self) -> list[Interaction]:
        """Copies of the interactions still waiting for an answer, in request order (approvals resolve
        FIFO)."""
        return self.asks.pending()

    @property
    def has_reasoning(self) -> bool:
        """Whether reasoning streamed in this turn (a final message then adds none)."""
        return self._has_reasoning

    def part(self, part_id: str) -> Part | None:
        """The part with id ``part_id``, if this turn has one."""
        return self._parts.get(part_id)

    def parts_of(self, kind: str) -> list[Part]:
        """This turn's parts of ``kind`` (``text``, ``tool``...), in order, their text joined."""
        self._sync()
        return [p for p in self._msg.parts if p.kind == kind]

    def begin(self, status: Literal["streaming", "queued"] = "streaming") -> list[ChangeRecord]:
        """Emit the ``message`` op now (after ``prompt.submit``; ``queued``: the server queued it);
        idempotent."""
        if self._done or (self._started and self._msg.status == status):
            return []
        self._started = True
        self._msg.status = status
        self._sync()
        return [{"op": "message", "message": self._msg.to_dict()}]

    def apply(self, event: Event) -> list[ChangeRecord]:
        """Fold one event; returns its change records in order (``[]`` for ignored events and after the
        end)."""
        if self._done:
            return []
        chunks = self._text_chunks
        if chunks is not None and event.type == "message.delta" and self._transform is None:
            # The hot path (most frames of a turn), inlined: one chunk append and one record, no lookups.
            text = event.payload.get("text" if event.dialect == "dashboard" else "delta")
            if text and type(text) is str:
                chunks.append(text)
                return [
                    {"op": "append", "message_id": self.message_id, "part_id": self._text_id, "text": text}
                ]
            return []
        handler = HANDLERS[event.dialect].get(event.type)
        if self._started:
            changes = handler(self, event) if handler is not None else []
        else:
            changes = self.begin()
            if handler is not None:
                changes.extend(handler(self, event))
        if self._transform is not None:
            ctx = TransformContext(self.source, self.turn_id, self.message_id, changes)
            replaced = self._transform(event, ctx)
            if replaced is not None:
                # The folder's own state keeps following the default handling; the hook shapes what views see.
                return list(replaced)
        return changes

    def finish(self, status: MessageStatus | str, error: str | None = None) -> list[ChangeRecord]:
        """End the turn from outside (e.g. the connection dropped): same end-of-turn rules, then
        ``finish``."""
        if status not in END_STATUSES:
            raise ValueError(f"finish status must be one of {sorted(END_STATUSES)}, not {status!r}")
        if self._done:
            return []
        changes = self.begin() if not self._started else []
        changes.extend(self.end(cast(MessageStatus, status), None, error))
        return changes

    def answer(self, request_id: str, response: str) -> list[ChangeRecord]:
        """Record the view's answer to a pending interaction, so views and history agree (sends nothing); a
        sudo password or secret value is recorded as ``"********"``. ``[]`` when ``request_id`` is not
        pending."""
        return [] if self._done else self.asks.answer(request_id, response)

    def ask(self, part_id: str, inter: Interaction) -> list[ChangeRecord]:
        """Hang a question the client asks itself (a kernel tool's Run/Deny) on running tool part ``part_id``,
        shown and answered like a server's; ``[]`` when that tool is not running."""
        part = self._parts.get(part_id)
        return [] if part is None or self._done else self.asks.ask(part, inter)

    def add_marker(self, text: str) -> list[ChangeRecord]:
        """Add a ``marker`` part (e.g. a compression that happened before this turn); text after it streams on
        in a new text part. Returns ``[]`` once the turn has ended or for a blank text."""
        text = text.strip()
        if self._done or not text:
            return []
        changes = self.begin() if not self._started else []
        changes.extend(self._add_marker(text))
        return changes

    # -- markers ---------------------------------------------------------------------------------------------

    def _add_marker(self, text: str) -> list[ChangeRecord]:
        # Like a tool part, a marker closes the segment: text after it goes to text:N+1, so the turn keeps
        # streaming below the marker instead of into the text above it.
        self._marker_count += 1
        self._segment += 1
        self._text_id, self._text_chunks = "", None
        self._reasoning_id, self._reasoning_chunks = "", None
        return self._add_part(Part(f"marker:{self._marker_count}", "marker", text))

    def _last_marker(self) -> Part | None:
        """The last part when it is a marker (nothing was added after it)."""
        parts = self._msg.parts
        return parts[-1] if parts and parts[-1].kind == "marker" else None

    def on_compacting(self, text: str) -> list[ChangeRecord]:
        # One compaction can be announced several times (a newer server retries before the next model call):
        # one marker until something else happens.
        last = self._last_marker()
        if last is not None:
            return []
        return self._add_marker(text)

    def on_refused(self, text: str) -> list[ChangeRecord]:
        last = self._last_marker()
        if last is None or last.text == text:
            return []
        last.text = text
        return [self.patch(last, {"text": text})]

    def on_compressions(self, count: int | None, text: str) -> list[ChangeRecord]:
        """At the end of the turn: a grown ``usage.compressions`` with no marker shown adds one."""
        base = self._compressions
        if count is None or base is None or count <= base or self._marker_count:
            return []
        return self._add_marker(text)

    # -- text ------------------------------------------------------------------------------------------------

    def add_text(self, text: str) -> list[ChangeRecord]:
        chunks = self._text_chunks
        if chunks is not None:
            chunks.append(text)
            return [{"op": "append", "message_id": self.message_id, "part_id": self._text_id, "text": text}]
        # A new text part. The server prefixes the first text after a tool round with "\n\n"
        # (run_agent.py:5158-5214; docs/protocol/api-server.md §3 message.delta, docs/protocol/dashboard.md
        # §4.4 "Tool"). It is a separator for terminals, not content: history rows store the text without it,
        # so stripping leading whitespace until real text arrives keeps live and history identical and avoids
        # empty parts.
        text = text.lstrip()
        if not text:
            return []
        pid = f"text:{self._segment}"
        part = Part(pid, "text", text)
        self._text_id = pid
        self._text_chunks = self._chunks[pid] = [text]
        self._has_text = True
        return self._add_part(part)

    def final_text(self, final: str) -> list[ChangeRecord]:
        """Reconcile the streamed text with the final reply text of message.complete / run.completed.

        Nothing streamed: the final text becomes the text part (a failed call, streaming off). The current
        text part is a proper prefix of it (deltas lost in a reconnect, or a synthesized terminal event after
        a lost stream): patched to the full text. The last segment has no text and the final text appears
        nowhere
        yet: added. Otherwise the streamed text stands."""
        final = final.strip()
        if not final:
            return []
        if not self._has_text:
            return self.add_text(final)
        chunks = self._text_chunks
        if chunks is None:
            self._sync()
            streamed = "".join(p.text for p in self._msg.parts if p.kind == "text")
            return [] if final in streamed else self.add_text(final)
        current = "".join(chunks).rstrip()
        if len(final) <= len(current) or not final.startswith(current):
            return []
        chunks[:] = [final]
        part = self._parts[self._text_id]
        part.text = final
        return [self.patch(part, {"text": final})]

    def add_reasoning(self, text: str) -> list[ChangeRecord]:
        chunks = self._reasoning_chunks
        if chunks is not None:
            chunks.append(text)
            return [
                {"op": "append", "message_id": self.message_id, "part_id": self._reasoning_id, "text": text}
            ]
        # Same rule as text: leading whitespace of a reasoning block is layout, and an all-blank start would
        # otherwise leave an empty part behind after the end-of-turn trim.
        text = text.lstrip()
        if not text:
            return []
        pid = f"reasoning:{self._segment}"
        part = Part(pid, "reasoning", text)
        self._reasoning_id = pid
        self._reasoning_chunks = self._chunks[pid] = [text]
        self._has_reasoning = True
        return self._add_part(part)

    def _sync(self) -> None:
        # Join pending chunks into Part.text (amortised: each chunk is joined once per snapshot).
        for pid, chunks in self._chunks.items():
            if len(chunks) > 1:
                joined = "".join(chunks)
                chunks[:] = [joined]
                self._parts[pid].text = joined

    # -- parts -----------------------------------------------------------------------------------------------

    def _add_part(self, part: Part) -> list[ChangeRecord]:
        self._msg.parts.append(part)
        self._parts[part.id] = part
        return [{"op": "part", "message_id": self.message_id, "part": part.to_dict()}]

    def add_tool(self, part: Part) -> list[ChangeRecord]:
        # A tool part closes the segment: later reasoning/text go to reasoning:N+1 / text:N+1 (contract,
        # "Ids").
        self._segment += 1
        self._text_id, self._text_chunks = "", None
        self._reasoning_id, self._reasoning_chunks = "", None
        if part.status == "running" and part.kind == "tool":  # a running subagent part holds no interaction
            self.asks.started(part)
        if part.kind == "tool":
            part.label = tool_label(part.name, part.preview, part.arguments)
        return self._add_part(part)

    def patch(self, part: Part, fields: PartFields) -> PatchChange:
        if part.kind == "tool" and fields.keys() & {"name", "preview", "arguments"}:  # what its label says
            label = tool_label(part.name, part.preview, part.arguments)
            if part.named is not None:  # its handler named the call: the arguments do not rename it
                label["detail"] = part.named
            if label != part.label:
                part.label = fields["label"] = label
        return {"op": "patch", "message_id": self.message_id, "part_id": part.id, "fields": fields}

    def complete_tool(
        self,
        part: Part,
        status: ToolStatus,
        *,
        result: Any = ...,
        duration: float | None = None,
        arguments: Any = None,
        name: str | None = None,
    ) -> list[ChangeRecord]:
        if part.status == "running":
            self.asks.ended(part)
        fields: PartFields = {"status": status}
        part.status = status
        if name and name != part.name:
            part.name = fields["name"] = name
        if arguments is not None:
            part.arguments = fields["arguments"] = arguments
        if result is not ...:
            part.result = fields["result"] = result
        if duration is not None:
            part.duration = fields["duration"] = duration
        inter = part.interaction
        if inter is not None and inter.status == "pending":
            # The tool finished without our answer: the server stopped waiting (timeout, another client, or an
            # interrupt). Keep the buttons from staying live. An answered interaction stays answered.
            inter.status = "expired" if timed_out(part.result) else "cancelled"
            fields["interaction"] = inter.to_dict()
        return [self.patch(part, fields)]

    # -- end of turn -----------------------------------------------------------------------------------------

    def end(self, status: MessageStatus, usage: Any, error: str | None) -> list[ChangeRecord]:
        # Contract "End of turn": trim trailing whitespace of text/reasoning, cancel pending interactions,
        # cancel running tools unless the turn completed normally, then finish.
        self._sync()
        changes: list[ChangeRecord] = []
        for part in self._msg.parts:
            if part.kind == "marker":
                continue
            if part.kind in (
                "text",
                "reasoning",
            ):  # todo/subagent parts end like tools: a running one is cancelled
                text = part.text
                trimmed = text.rstrip()
                if trimmed != text:
                    part.text = trimmed
                    self._chunks[part.id][:] = [trimmed]
                    changes.append(self.patch(part, {"text": trimmed}))
                continue
            fields: PartFields = {}
            inter = part.interaction
            if inter is not None and inter.status == "pending":
                inter.status = "cancelled"
                fields["interaction"] = inter.to_dict()
                if self.asks.is_synthetic(part) and part.status == "running":
                    part.status = fields["status"] = "cancelled"
            if part.status == "running" and status != "complete":
                part.status = fields["status"] = "cancelled"
            if fields:
                changes.append(self.patch(part, fields))
        self.asks.ended()
        msg = self._msg
        msg.status = status
        msg.usage = dict(usage) if isinstance(usage, Mapping) else None
        msg.error = error
        self._done = True
        changes.append(
            {
                "op": "finish",
                "message_id": self.message_id,
                "status": status,
                "usage": None if msg.usage is None else dict(msg.usage),
                "error": error,
            }
        )
        return changes
