"""The streaming half of our widgets: change records in, coalesced custom messages out.

Why not traitlets for everything: resending a whole message per delta costs O(n^2) bytes and floods the
browser, and resending finished messages (or even a compact list of them) at every boundary costs the whole
history per message. So the kernel keeps the full state here and everything reaches views as custom messages:
live changes (append-only, coalesced, at most 30 batches a second) and ``snapshot`` answers. The conversation
in brief, the *index* (one ``{"id", "role", "status", "usage", "error", "rev"}`` entry per message, no part
contents), travels as changes too: a batch holding a record that leaves a message settled carries that
message's entry (``"index": [...]``), and a snapshot implies the entries of every message it holds. So a
settled message costs one entry (~100 bytes), not the whole index. The views compare the entries against what
they hold, and ask for a snapshot for settled messages they lack or hold a stale copy of. One small synced
traitlet, ``settled_seq`` (the seq of the last batch that carried index entries), lets a view that lost such a
batch (custom messages are not replayed) notice; a gap in batch seqs tells it the same.

``rev`` is a per-message revision both sides compute from the change records alone: every record adds 1,
except ``append``, which adds the length of its text in UTF-16 code units (JavaScript's ``length``). That sum
doesn't change when the coalescer merges consecutive appends, so a view that applied every batch holds the
same ``rev`` as the kernel; a ``snapshot`` answer carries the kernel's ``revs``.

On the wire a ``patch`` that replaces a part's whole ``text`` while keeping most of it (the end-of-turn trim
of trailing whitespace) is sent as ``{"op": "splice", "message_id", "part_id", "keep", "text"}``: keep the
first ``keep`` UTF-16 units, then append ``text``. It weighs 1, like the patch it stands for.

While a reply streams, nearly every batch is one ``append`` to the part the batch before it appended to. Such
a batch goes out as ``{"type": "more", "seq", "text"}``: the same append, its target being the last record of
the previous batch. At 10 KB/s (30 batches of ~330 bytes a second) the full form's ids and keys cost about a
third of the text again; this form costs ~35 bytes. Every view gets every batch (a gap in seqs makes it
resync), and every snapshot ends the run (the next append names its part), so a view that starts from a
snapshot never meets a ``more`` it cannot place.

Every view asks for a snapshot when it is created (custom messages sent before a view exists are lost) and
then applies only changes with a larger ``seq``. So ``reset()`` sends its snapshot only once some view has
asked for
one: before that no view exists that could use it. A snapshot of a long conversation holds only its newest
``SNAPSHOT_FIRST_MESSAGES`` (``"partial": true, "older": n``); when the reader scrolls up to the oldest
message a view holds, it asks for the ``OLDER_PAGE_MESSAGES`` before it (``{"type": "older", "before": id}``).
So a 10,000-message history is never built, serialised and parsed in one piece (megabytes: a long frame)
before or while it is read. Every send (change batches, snapshots, index updates) happens under the widget's
lock, so seqs go out in order and a snapshot holds exactly the batches up to its ``seq``.

Secrets: nothing that reaches a traitlet or a custom message here ever holds a key, token or sudo/secret
value; interaction responses for sudo/secret are already redacted by the turn model. Every change record and
every message given to ``reset()`` goes through the one scrubber (:mod:`hermes_notebook.scrub`, with the
connection's own key and token passed as ``secrets=``) before the store keeps it, so custom messages,
snapshots and the static twin built from ``snapshot()`` hold no key; streamed text is released only where no
key can straddle two appends (:mod:`.stream_scrub`). The ``notice`` and ``connection`` traitlets are scrubbed
the same way.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import traitlets

from .. import runtime
from ..scrub import scrub, scrub_value
from ..shell.subshells import Routing, follow_frontend_subshells
from ..turns.store import MessageStore
from . import inbound
from .base import Bundle, LeanWidget
from .coalesce import DEFAULT_MAX_RATE, Coalescer
from .stream_images import ImageLoad, install_image_answers
from .stream_scrub import StreamScrubber
from .wire import change_weight, splice_of

__all__ = ["StreamingWidget", "change_weight"]

log = logging.getLogger(__name__)

#: The fields of a message that go into its ``index`` entry (plus ``rev``); never its parts.
INDEX_FIELDS = ("id", "role", "status", "usage", "error")


#: A snapshot holds at most this many messages (the newest; ``partial``); views ask for older ones a page at a
# time.
SNAPSHOT_FIRST_MESSAGES = 100
#: Messages per ``older`` answer (about 90 KB of JSON for typical chat messages: a few ms to parse).
OLDER_PAGE_MESSAGES = 200


def _target(change: Mapping[str, Any]) -> str:
    if change.get("op") == "message":
        return str(change["message"]["id"])
    return str(change.get("message_id"))


class _Coalescer(Coalescer):
    """The coalescer, flushing under the widget's lock and telling the widget after each flush."""

    def __init__(
        self,
        send: Callable[[int, list[dict[str, Any]]], None],
        *,
        lock: threading.RLock,
        after_flush: Callable[[], None],
        **kwargs: Any,
    ) -> None:
        super().__init__(send, **kwargs)
        self._widget_lock = lock
        self._after_flush = after_flush

    def flush(self) -> None:
        # Holding the widget lock: no batch can overtake another, nor a snapshot taken after it.
        with self._widget_lock:
            super().flush()
            self._after_flush()


class StreamingWidget(LeanWidget):
    """Base for widgets that show messages made of parts (the chat and the ``%hermes`` live turn).

    ``images``: reads a part's ``media`` image for a view that asks (``Conversation.image``;
    :mod:`.stream_images`).
    """

    _esm = Bundle("chat.js")
    _css = Bundle("chat.css")

    #: "chat" shows the composer and session controls; "turn" shows only the conversation (for ``%hermes``).
    mode = traitlets.Unicode("chat").tag(sync=True)
    #: The seq of the last batch that carried index entries (or of the last reset's snapshot): a view behind
    # it : lost a batch and asks for a snapshot. The index itself travels in the batches (see the module
    # docstring).
    settled_seq = traitlets.Int(0).tag(sync=True)
    #: True while a turn runs (shows the stop button).
    busy = traitlets.Bool(False).tag(sync=True)
    #: Prompts waiting behind the running turn.
    queued = traitlets.Int(0).tag(sync=True)
    #: Connection banner: {"status", "retry_in", "message"}.
    connection = traitlets.Dict({"status": "connected", "retry_in": None, "message": None}).tag(sync=True)
    #: A one-line notice for the user (errors, refused attachments), "" when none.
    notice = traitlets.Unicode("").tag(sync=True)
    #: Messages before the first one the kernel holds (on the server only: widgets/windowed.py).
    before = 0

    def __init__(
        self,
        *,
        max_rate: float = DEFAULT_MAX_RATE,
        secrets: Sequence[object] = (),
        images: ImageLoad | None = None,
        **kwargs: Any,
    ) -> None:
        self._scrubber = StreamScrubber(secrets)  # before traitlets are set: their validators scrub
        super().__init__(**kwargs)
        self._lock = threading.RLock()
        #: appends are O(their own text): a part's text is joined only when the message is read
        self._store = MessageStore()
        self._revs: dict[str, int] = {}
        #: messages settled since the last batch went out: their index entries ride in the next one
        self._settled: dict[str, None] = {}
        self._settled_seq_due: int | None = None
        #: (message id, part id) the last batch sent ended appending to: the next append there goes as
        # ``more``
        self._append_target: tuple[str, str] | None = None
        #: Some view asked for a snapshot, so views may exist: resets must reach them.
        self._viewed = False
        self._coalescer = _Coalescer(
            self._send_changes,
            lock=self._lock,
            after_flush=self._after_flush,
            loop=runtime.get_loop(),
            max_rate=max_rate,
        )
        self._actions: dict[str, Callable[[dict[str, Any]], object]] = {
            "snapshot": self._on_snapshot_request,
            "older": self._on_older_request,
        }
        #: Bytes of custom messages sent so far (benchmarks read it).
        self.bytes_sent = 0
        self.on_msg(self._dispatch)
        install_image_answers(
            self, images
        )  # a view's ``image`` question: a part's image, read here (stream_images.py)
        #: Where the views' messages run: on the front end's subshell while a cell runs, where the kernel has
        #: subshells (shell/subshells.py). Every handler only checks and schedules, so any thread will do.
        self.comm_routing: Routing = follow_frontend_subshells(self)

    @traitlets.validate("notice")
    def _scrub_notice(self, proposal: Any) -> str:
        return scrub(str(proposal["value"]), self._scrubber.secrets)

    @traitlets.validate("connection")
    def _scrub_connection(self, proposal: Any) -> Any:
        return scrub_value(proposal["value"], self._scrubber.secrets)

    # --- kernel side: feeding changes ---------------------------------------------------------------

    def push(self, changes: Sequence[dict[str, Any]]) -> None:
        """Apply change records to the kernel-side state and stream them to every view. Thread-safe.

        At a message boundary (a record leaving its message settled: finished, queued, or a user message) the
        ``index`` follows once the batch holding that record has been sent.
        """
        if not changes:
            return
        with self._lock:
            changes = self._scrubber.records(changes, self._has_part)  # no secret gets into the store or out
            if not changes:
                return
            try:
                wire = self._apply(changes)
            except Exception:
                # Partly applied and not streamed: make these messages' revs differ from every view's copy,
                # so views holding them finished ask for a snapshot instead of trusting what they have.
                for mid in {_target(c) for c in changes}:
                    if mid in self._store:
                        self._revs[mid] = (
                            self._revs.get(mid, 0)
                            + 1
                            + sum(change_weight(c) for c in changes if _target(c) == mid)
                        )
                        self._settled[mid] = None
                self._coalescer.flush()  # pending changes go first, carrying these entries if there are any
                if self._settled:  # nothing was pending: the entries go on their own
                    self._send_custom({"type": "index", "index": self._take_settled()})
                raise
            for change in changes:
                mid = _target(change)
                self._revs[mid] = self._revs.get(mid, 0) + change_weight(change)
                # Views compare only settled entries, so only a settled message's entry is sent.
                if self._store.raw(mid).get("status") != "streaming":
                    self._settled[mid] = None
            self._coalescer.push(wire)

    def _has_part(self, message_id: str, part_id: str) -> bool:
        parts = self._store.raw(message_id).get("parts") if message_id in self._store else None
        return any(p.get("id") == part_id for p in parts or ())

    def _apply(self, changes: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
        """Apply records to the store; return them as they go on the wire (text patches become splices)."""
        wire: list[dict[str, Any]] | None = None
        start = 0
        for i, change in enumerate(changes):
            fields = change.get("fields")
            if change.get("op") != "patch" or not isinstance(fields, Mapping) or set(fields) != {"text"}:
                continue
            self._store.apply(changes[start:i])
            splice = self._splice(change)
            self._store.apply([change])
            start = i + 1
            if splice is not None:
                wire = wire if wire is not None else list(changes)
                wire[i] = splice
        self._store.apply(changes[start:] if start else changes)
        return changes if wire is None else wire

    def _splice(self, patch: Mapping[str, Any]) -> dict[str, Any] | None:
        """A ``splice`` record for a patch of a part's whole ``text`` that keeps most of it (the end-of-turn
        trim of trailing whitespace, a final text extending the streamed one), so the text isn't sent
        twice."""
        message = self._store.get(patch.get("message_id"))  # type: ignore[arg-type]
        part = next(
            (p for p in (message or {}).get("parts", ()) if p.get("id") == patch.get("part_id")), None
        )
        return splice_of(part.get("text") if part is not None else None, patch)

    def reset(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        """Replace the whole conversation (a session switch or a history re-fetch) and tell the views.

        ``keep``: messages held now to keep after ``messages`` (a turn still running through a re-fetch), kept
        as the same objects so they keep their revs and views go on applying their changes.

        The content goes out once, as a ``snapshot`` message to every view (the snapshot implies the index),
        or not at all while no view has asked for one yet: views created later ask for it themselves.
        """
        with self._lock:
            self._coalescer.flush()  # what is pending belongs to the old state: send it before the snapshot
            self._settled.clear()  # the snapshot implies every entry
            old, old_revs = self._store, self._revs
            kept = [m for m in old.values() if keep(m)] if keep is not None else []
            # Scrubbed unless it is the store's own (already scrubbed) object: a live turn keeps its identity.
            fresh = [
                m if m.get("id") in old and old.raw(m["id"]) is m else self._scrubber.message(dict(m))
                for m in messages
            ]
            self._store = MessageStore([*fresh, *kept])
            self._scrubber.forget(self._store)
            # A message kept as the same object (a live turn surviving a history re-fetch) keeps its rev, so
            # views go on applying its changes; any other replaced message gets a new rev. (``old.get`` also
            # joins the old store's pending appends into that shared object, so the new store holds all its
            # text.)
            self._revs = {
                mid: old_revs.get(mid, 0) + (0 if old.get(mid) is m else 1) for mid, m in self._store.items()
            }
            if self._viewed:
                self._send_snapshot(self._coalescer.seq, reset=True)
            self.settled_seq = self._coalescer.seq

    def snapshot(self) -> list[dict[str, Any]]:
        """All messages as the views should show them now, live ones included."""
        with self._lock:
            return [dict(m) for m in self._store.values()]

    def message(self, message_id: str | None) -> dict[str, Any] | None:
        """One message as the views show it now (a copy), or None."""
        with self._lock:
            found = self._store.get(message_id) if message_id is not None else None
            return dict(found) if found is not None else None

    def holds(self, message_id: str | None) -> bool:
        """True when the conversation holds the message ``message_id``."""
        with self._lock:
            return message_id is not None and message_id in self._store

    @property
    def secrets(self) -> tuple[object, ...]:
        """The connection's key and token, which nothing this widget sends or keeps may hold."""
        return tuple(self._scrubber.secrets)

    def scrub_value(self, value: Any) -> Any:
        """``value`` (text, or a JSON-like value) without :attr:`secrets` in it."""
        return scrub_value(value, self._scrubber.secrets)

    def send_to_views(self, content: dict[str, Any]) -> None:
        """Send one custom message to every view (an answer to a view's question, a list it asked for)."""
        self._send_custom(content)

    def flush(self) -> None:
        """Send pending changes (with the index entries of messages they settle) now instead of at the next
        tick."""
        self._coalescer.flush()

    @property
    def index(self) -> list[dict[str, Any]]:
        """The conversation in brief, as the views hold it: ``[{"id", "role", "status", "usage", "error",
        "rev"}]``."""
        with self._lock:
            return [self._entry(mid) for mid in self._store]

    def _entry(self, mid: str) -> dict[str, Any]:
        message = self._store.raw(mid)  # no part text in an entry: don't join it
        return {**{k: message.get(k) for k in INDEX_FIELDS}, "rev": self._revs.get(mid, 0)}

    def _take_settled(self) -> list[dict[str, Any]]:
        entries = [self._entry(mid) for mid in self._settled if mid in self._store]
        self._settled.clear()
        return entries

    def _after_flush(self) -> None:
        # Called under the lock right after a batch went out: ``settled_seq`` never gets ahead of the changes.
        if self._settled_seq_due is not None:
            self.settled_seq, self._settled_seq_due = self._settled_seq_due, None

    def _send_changes(self, seq: int, changes: list[dict[str, Any]]) -> None:
        last = changes[-1]
        target = (last["message_id"], last["part_id"]) if last.get("op") == "append" else None
        if len(changes) == 1 and target is not None and target == self._append_target and not self._settled:
            self._send_custom({"type": "more", "seq": seq, "text": last["text"]})
            return
        self._append_target = target
        content: dict[str, Any] = {"type": "changes", "seq": seq, "changes": changes}
        if self._settled:
            # Computed now, under the lock: the revs include exactly the records of this batch and earlier
            # ones.
            content["index"] = self._take_settled()
            self._settled_seq_due = seq
        self._send_custom(content)

    def _send_snapshot(self, seq: int, *, reset: bool = False) -> None:
        """Send the conversation as of ``seq``: only its newest messages if it is long (``older`` says how
        many precede them; views fetch those a page at a time as the reader scrolls up)."""
        with self._lock:
            content: dict[str, Any] = {"type": "snapshot", "seq": seq}
            ids = list(self._store)
            if len(ids) > SNAPSHOT_FIRST_MESSAGES or self.before:
                ids = ids[-SNAPSHOT_FIRST_MESSAGES:]
                content.update(partial=True, older=len(self._store) - len(ids) + self.before)
            content["messages"] = [dict(self._store[mid]) for mid in ids]
            content["revs"] = {mid: self._revs.get(mid, 0) for mid in ids}
            if reset:
                content["reset"] = True
            self._append_target = None  # a view starting from this snapshot knows of no earlier append
            self._send_custom(content)

    def _send_custom(self, content: dict[str, Any]) -> None:
        # Not named ``_send``: that is ipywidgets' own method for state updates (``_send(msg, buffers)``),
        # and overriding it broke every traitlet sync.
        if self.comm is None:  # closed widget
            return
        try:
            self.send(content)
        except Exception:  # a view can go away at any time; the kernel must not care
            log.debug("could not send to the widget's views", exc_info=True)
            return
        self.bytes_sent += _approx_size(content)

    # --- browser side: actions ----------------------------------------------------------------------

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None:
        """Register what to do for a browser message ``{"type": name, ...}``."""
        self._actions[name] = handler

    def _dispatch(self, _widget: object, content: object, _buffers: object) -> None:
        # Every browser message is checked once (shape, types, sizes) before a handler sees it.
        try:
            message = inbound.validate(content, inbound.CHAT_MESSAGES)
            handler = self._actions.get(message["type"])
            if handler is None:
                raise inbound.Refused(f"this view does not handle {message['type']!r} messages")
        except inbound.Refused as exc:
            log.warning("refused a message from the browser view: %s", exc)
            self.notice = f"Refused a message from the view: {exc}."
            return
        try:
            handler(message)
        except inbound.Refused as exc:
            self.notice = f"Refused: {exc}."
        except Exception as exc:  # never let a click raise into the comm handler: show it instead
            log.exception("handling %r failed", message["type"])
            self.notice = f"{message['type']} failed: {exc}"

    def _on_snapshot_request(self, _content: dict[str, Any]) -> None:
        with self._lock:
            self._viewed = True
            seq = self._coalescer.snapshot_seq()  # flushes pending changes (and a pending index) first
            self._send_snapshot(seq)

    def _on_older_request(self, content: dict[str, Any]) -> None:
        """The page of messages before ``before`` (the oldest a view holds), as of the current ``seq``.

        Consistent without a snapshot: every batch up to that ``seq`` went out before the answer, and a view
        that got a change for a message it did not hold yet has asked for a snapshot already. An unknown
        ``before`` (a reset came in between) gets an empty page, which the view ignores like any page not
        fitting what it holds.
        """
        with self._lock:
            seq = self._coalescer.snapshot_seq()
            ids = list(self._store)
            at = ids.index(content["before"]) if content["before"] in self._store else 0
            page = ids[max(0, at - OLDER_PAGE_MESSAGES) : at]
            self._send_custom(
                {
                    "type": "older",
                    "seq": seq,
                    "before": content["before"],
                    "messages": [dict(self._store[mid]) for mid in page],
                    "revs": {mid: self._revs.get(mid, 0) for mid in page},
                    "older": max(0, at - OLDER_PAGE_MESSAGES),
                }
            )


def _approx_size(content: dict[str, Any]) -> int:
    # As Jupyter packs it (UTF-8, non-ASCII characters unescaped), minus the message envelope.
    return len(json.dumps(content, separators=(",", ":"), ensure_ascii=False, default=str).encode())
