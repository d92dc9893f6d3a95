"""``Chat``: one Hermes session as a live widget in a notebook cell.

Where things run: every Hermes call happens in the kernel on the package loop (:mod:`hermes_notebook.runtime`).
The browser view talks only to this object through comm messages (``send``, ``stop``, ``respond``, ...), so
the API key and the Dashboard token never reach the browser, the widget state or the saved notebook. Browser
actions are handled by scheduling a coroutine on the package loop and returning at once: a click never blocks
the kernel's shell thread, and every piece of mutable state below is touched only on that loop.

What the views get: the turn's change records, streamed through :class:`StreamingWidget` (coalesced custom
messages and snapshots), plus small traitlets (session, connection banner, busy/queued, notice). The picker's
list of other sessions is never state (that is saved): ``list_sessions`` asks, a ``sessions`` message answers.

Saved notebooks: ``_ipython_display_`` shows the widget *and* a second output, a static transcript (text/plain and
text/html from :func:`render.transcript_bundle`) under a ``display_id`` updated at message boundaries. The live
view hides that output once it has content from the kernel (js/src/twin.ts); nbviewer, GitHub and nbconvert,
which run no widget JS, show it. Updating the widget's own output instead would re-create the live view and lose
what the user was typing.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import traitlets

from .. import runtime
from ..errors import HermesError, HermesGatewayClosedError, redact
from ..inert import terminal_safe
from ..render import transcript_bundle
from ..settings import Settings
from ..turns import user_message
from ..turns.withdrawn import withdraw_pending
from . import inbound
from ._stream import StreamingWidget
from .chat_actions import install_actions
from .chat_export import on_export
from .chat_session import ChatSession
from .static_twin import StaticTwin

if TYPE_CHECKING:
    from ..client import ListenerItem, SessionRef

__all__ = ["TRANSCRIPT_CLASS", "Chat"]

log = logging.getLogger(__name__)

#: The class of the element wrapping the static transcript; the live widget's CSS hides it.
TRANSCRIPT_CLASS = "hn-transcript"

#: Transcript updates closer together than this are merged (a burst of boundaries re-renders once).
TRANSCRIPT_DEBOUNCE_S = 0.25


@dataclass
class _Prompt:
    """A prompt the user sent: shown at once, submitted when the session is free."""

    turn_id: str
    text: str
    images: list[tuple[str, bytes]]


class Chat(StaticTwin, ChatSession, StreamingWidget):
    """A chat with one Hermes session: history, live turns, interactions, session picker, connection banner.

    ``Chat(connection_or_settings=None, session=None)``: pass a connected ``DashboardConnection`` (the facade
    does; it stays the caller's to close), or ``Settings`` / ``None`` (then the chat opens and owns its own
    connection from ``Settings.resolve()``). ``session``: a stored id/title to resume or an open ``SessionRef``;
    else a new session. ``secrets``: the connection's key and token, never shown (the facade passes them).
    """

    #: The open session: ``{"id": stored id, "title": str | None}``; None until it is open.
    session = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    #: True while history or a session switch is loading.
    loading = traitlets.Bool(False).tag(sync=True)
    kernel_modes = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)  # chat_kernel.py: its header

    def __init__(
        self,
        connection_or_settings: Any = None,
        session: str | SessionRef | None = None,
        *,
        max_rate: float | None = None,
        secrets: Sequence[object] = (),
        **kwargs: Any,
    ) -> None:
        if max_rate is not None:
            kwargs["max_rate"] = max_rate
        settings: Settings | None = None
        if connection_or_settings is None or isinstance(connection_or_settings, Settings):
            settings = connection_or_settings or Settings.resolve()
            secrets = (*secrets, settings.api_key, settings.dashboard_token)
        super().__init__(mode="chat", secrets=secrets, **kwargs)
        self._settings = settings
        self._conn: Any = None if settings is not None else connection_or_settings
        self._owns_conn = settings is not None
        self.sessions: list[dict[str, Any]] = []  # the picker's [{"id", "title"}]: sent on request, never synced
        self._ref: Any = None
        self._off: Callable[[], None] | None = None
        self._off_change: Callable[[], None] | None = None  # a newer Dashboard's sessions.changed signal
        self._queue: deque[_Prompt] = deque()
        self._turn: Any = None
        self._turn_task: asyncio.Task[None] | None = None
        self._answered: set[tuple[str, str]] = set()
        self._live_ids: set[str] = set()  # messages of the running turn (kept across history re-fetches)
        self._closed = False
        self._init_static_twin("hermes-chat-transcript")
        self._transcript_handle: asyncio.TimerHandle | None = None
        for name, handler in {
            "send": self._on_send,
            "stop": self._on_stop,
            "respond": self._on_respond,
            "secret": self._on_secret,
            "new_session": self._on_new_session,
            "switch_session": self._on_switch_session,
            "refresh": self._on_refresh,
            "list_sessions": lambda _content: self.run_in_background(self._refresh_sessions(), "listing sessions"),  # picker
        }.items():
            self.on_action(name, handler)
        self.on_action("export", lambda content: on_export(self, content))  # Export button (chat_export.py)
        install_actions(self)  # message buttons (undo, regenerate, branch, edit) and file attachments
        #: Resolves once the session is open and its history shown (tests and the facade may wait on it).
        self.ready = self.run_in_background(self._open(session), "opening the chat")

    # --- public, blocking helpers (cells and tests) ----------------------------------------------------

    def wait_ready(self, timeout: float = 60.0) -> Chat:
        """Block until the session is open (its history loaded). Returns self, so ``Chat().wait_ready()`` works."""
        self.ready.result(timeout)
        return self

    def send_prompt(self, text: str, images: Sequence[tuple[str, bytes]] = ()) -> None:
        """Send a prompt as if typed in the composer (queued behind a running turn)."""
        prompt = _Prompt(_new_turn_id(), text, list(images))
        self.run_in_background(self._enqueue(prompt), "sending the prompt")

    def stop(self) -> None:
        """Interrupt the running turn (and drop queued prompts), like the stop button."""
        self.run_in_background(self._stop(), "stopping the turn")

    def compress(self, focus_topic: str | None = None) -> Any:
        """Compress the open session's context now (``session.compress``); the next reply opens with a marker.

        Returns a future done once the server answered; a failure shows as the notice line."""
        return self.run_in_background(self._compress(focus_topic), "compressing the context")

    async def _compress(self, focus_topic: str | None) -> None:
        conn = await self._connection()
        if self._ref is not None:
            await conn.compress(self._ref, focus_topic)

    async def session_handle(self) -> tuple[Any, Any]:
        """The connection and the open session's ref (None before it opens), for helpers such as chat_actions."""
        return await self._connection(), self._ref

    def refresh(self) -> None:
        """Re-fetch the session's history and the session list."""
        self.run_in_background(self.refetch(), "refreshing")

    @traitlets.validate("session")
    def _scrub_session(self, proposal: Any) -> Any:  # a title is model text: it may quote a key
        return None if proposal["value"] is None else self._scrubber.message(proposal["value"])

    @property
    def session_id(self) -> str | None:
        """The stored id of the open session (None until open)."""
        return None if self.session is None else self.session.get("id")

    def close(self) -> None:
        """Stop listening, close an owned connection, and close the widget's comm."""
        if not self._closed:
            self._closed = True
            runtime.submit(self._shutdown())
        super().close()

    # --- display: live widget + static transcript (StaticTwin) ------------------------------------------

    def _live_text(self) -> str:
        title = (self.session or {}).get("title") or "Hermes chat"
        return f"{title} (live chat widget; transcript below)"

    def static_bundle(self) -> dict[str, str]:
        """The static twin: :meth:`transcript_bundle`."""
        return self.transcript_bundle()

    def transcript_bundle(self) -> dict[str, str]:
        """The static transcript shown beside the widget: what a saved notebook keeps for kernel-less viewers."""
        bundle = transcript_bundle(self.snapshot(), secrets=self._scrubber.secrets)
        title = (self.session or {}).get("title")
        heading = f"Hermes chat: {title}" if title else "Hermes chat"
        bundle["text/html"] = f'<div class="{TRANSCRIPT_CLASS}" data-hn-transcript="{self.model_id}">{bundle["text/html"]}</div>'
        bundle["text/plain"] = f"{terminal_safe(heading)}\n\n{bundle['text/plain']}"
        return bundle

    def _update_transcript(self) -> None:
        self._transcript_handle = None
        if not self._closed:
            self.update_static()

    def _schedule_transcript(self) -> None:
        """Re-render the transcript soon (boundaries come in bursts; one update covers them)."""
        if not self.static_shown:
            return
        loop = runtime.get_loop()

        def arm() -> None:
            if self._transcript_handle is None:
                self._transcript_handle = loop.call_later(TRANSCRIPT_DEBOUNCE_S, self._update_transcript)

        loop.call_soon_threadsafe(arm)

    def push(self, changes: Sequence[dict[str, Any]]) -> None:
        """Apply change records and stream them (see :class:`StreamingWidget`); boundaries refresh the transcript."""
        super().push(changes)
        if any(c.get("op") in ("message", "finish") for c in changes):
            self._schedule_transcript()

    def reset(self, messages: Any) -> None:
        """Replace the conversation (history load or re-fetch) and refresh the transcript."""
        super().reset(messages)
        self._schedule_transcript()

    # --- browser actions (comm thread): validate, then hand over to the loop -----------------------------

    def _on_send(self, content: dict[str, Any]) -> None:
        # ``content`` was checked by inbound.validate (types, sizes, image count and types); decoding checks bytes.
        text: str = content["text"]
        images = inbound.decode_images(content["images"])
        if not text.strip() and not images:
            return
        self.notice = ""
        self.run_in_background(self._enqueue(_Prompt(_new_turn_id(), text, images)), "sending the prompt")

    def _on_stop(self, _content: dict[str, Any]) -> None:
        self.run_in_background(self._stop(), "stopping the turn")

    def _on_respond(self, content: dict[str, Any]) -> None:
        key = (content["message_id"], content["request_id"])
        self.run_in_background(self._respond(key, content["response"], content["part_id"]), "answering")

    def _on_secret(self, content: dict[str, Any]) -> None:
        # The value was taken out of the comm message by inbound.validate; it lives only in the coroutine.
        key = (content["message_id"], content["request_id"])
        self.run_in_background(self._send_secret(key, content["kind"], content.pop("value"), content["part_id"]), "answering")

    def _on_new_session(self, _content: dict[str, Any]) -> None:
        self.run_in_background(self.switch(None), "creating a new session")

    def _on_switch_session(self, content: dict[str, Any]) -> None:
        self.run_in_background(self.switch(content["session_id"]), "opening the session")

    def _on_refresh(self, _content: dict[str, Any]) -> None:
        self.run_in_background(self.refetch(), "refreshing")

    # --- the loop side ----------------------------------------------------------------------------------

    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any:
        """Run ``coro`` on the package loop; any failure becomes the ``notice`` line, never a traceback."""

        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except inbound.Refused as exc:
                self.notice = f"Refused: {exc}."
            except Exception as exc:
                self._fail(what, exc)

        return runtime.submit(guarded())

    def _fail(self, what: str, exc: BaseException) -> None:
        message = redact(str(exc) or type(exc).__name__, *self._scrubber.secrets)
        if not isinstance(exc, HermesError):
            log.warning("%s failed", what, exc_info=exc)
        self.notice = f"{what[:1].upper()}{what[1:]} failed: {message}"

    async def _connection(self) -> Any:
        if self._conn is None:
            from ..client.dashboard import DashboardConnection

            assert self._settings is not None
            self._conn = DashboardConnection(self._settings)
            await self._conn.connect()
        return self._conn

    async def _open(self, session: str | SessionRef | None) -> None:
        self.loading = True
        try:
            conn = await self._connection()
            if self._off_change is None and hasattr(conn, "on_change"):
                self._off_change = conn.on_change(self._on_change)
            await self._open_session(conn, session)
        finally:
            self.loading = False
        await self._refresh_sessions()

    async def _open_session(self, conn: Any, session: str | SessionRef | None) -> None:
        if self._off is not None:
            self._off()
            self._off = None
        if session is None:
            ref = await conn.create_session()
            messages: list[dict[str, Any]] = []
        else:
            ref = await conn.resume(session) if isinstance(session, str) else session  # a ref is open already
            messages = _message_dicts(await conn.history(ref.stored_id))
        self._ref = ref
        self._answered.clear()
        self.reset(messages)
        self.session = {"id": ref.stored_id, "title": _title_of(ref)}
        self._off = conn.listen(ref.stored_id, self._on_listen)

    async def _refresh_sessions(self) -> None:
        conn = await self._connection()
        try:
            listed = await conn.sessions()
        except HermesError as exc:
            log.info("could not list sessions: %s", exc)
            return
        self.sessions = [self._scrubber.message(_session_entry(s)) for s in listed]
        self._send_custom({"type": "sessions", "sessions": self.sessions})
        current = self.session_id
        for entry in self.sessions:
            if entry["id"] == current and entry.get("title") and self.session is not None:
                self.session = {"id": current, "title": entry["title"]}

    async def refetch(self) -> None:
        conn = await self._connection()
        if self._ref is not None:
            ref = self._ref
            history = _message_dicts(await conn.history(ref.stored_id))
            if self._ref is ref:  # no session switch meanwhile
                self._apply_history(history)
        await self._refresh_sessions()

    def _apply_history(self, history: list[dict[str, Any]]) -> None:
        """Show the stored history, keeping what is live here and not stored yet (a running or queued turn).

        The fetch is awaited, so a prompt may have started meanwhile; dropping its messages would break the
        change records still streaming into them.
        """
        with self._lock:
            stored = {m["id"] for m in history}
            live = [
                m for m in self._store.values()
                if m["id"] not in stored and (m["id"] in self._live_ids or m.get("status") in ("streaming", "queued"))
            ]
        self.reset([*history, *live])

    async def switch(self, session: str | None) -> None:
        if self.busy:
            self.notice = "Stop the running turn before changing sessions."
            return
        self._drop_queue()
        self.loading = True
        try:
            await self._open_session(await self._connection(), session)
        finally:
            self.loading = False
        self.notice = ""
        await self._refresh_sessions()

    # -- turns --

    async def _enqueue(self, prompt: _Prompt) -> None:
        await asyncio.wrap_future(self.ready) if not self.ready.done() else None
        if self._ref is None:
            raise HermesError("the session is not open")
        user = user_message(prompt.turn_id, prompt.text).to_dict()
        if self._turn_task is not None and len(self._queue) >= inbound.MAX_QUEUED_PROMPTS:
            raise inbound.Refused(f"{len(self._queue)} prompts are already waiting; send this one when Hermes is done")
        if self._turn_task is not None:
            user["status"] = "queued"
            self._queue.append(prompt)
            self.queued = len(self._queue)
            self.push([{"op": "message", "message": user}])
            return
        self.push([{"op": "message", "message": user}])
        self._start_turn(prompt)

    def _start_turn(self, prompt: _Prompt) -> None:
        self.busy = True
        self._turn_task = asyncio.get_running_loop().create_task(self._run_turn(prompt))

    async def _run_turn(self, prompt: _Prompt) -> None:
        conn = self._conn
        message_id: str | None = None
        self._live_ids = {f"user:{prompt.turn_id}"}
        try:
            turn = await _submit(conn, self._ref, prompt)
            self._turn = turn
            resync = False
            async for change in turn:
                if change.get("op") == "message":
                    if change["message"].get("role") == "user":
                        continue  # our own user message went up before submit, so it showed at once
                    message_id = change["message"]["id"]
                    self._live_ids.add(message_id)
                try:
                    self.push([change])
                except KeyError:  # its message was replaced under it (a session switch or reset): resync below
                    resync = True
            if resync and message_id is not None:
                self.push([{"op": "message", "message": turn.message.to_dict()}])
        except HermesGatewayClosedError:
            # The connection dropped under the turn; after the reconnect the history re-fetch shows its end.
            self._finish_locally(message_id, "interrupted", "The connection to Hermes dropped.")
        except Exception as exc:
            self._finish_locally(message_id, "error", str(exc))
            self._fail("the turn", exc)
        finally:
            self._turn = None
            self._turn_task = None
            self._live_ids = set()
            self.busy = False
            self._next_in_queue()
            if not self._closed:  # Hermes titles a session after its first turn: refresh the picker
                self.run_in_background(self._refresh_sessions(), "listing sessions")

    def _finish_locally(self, message_id: str | None, status: str, error: str) -> None:
        if message_id is None:
            return
        with self._lock:
            message = self._store.get(message_id)
            live = message is not None and message.get("status") in ("streaming", "queued")
            withdrawn: list[Any] = withdraw_pending(message) if live else []  # its cards go inert with it
        if live:
            self.push([*withdrawn, {"op": "finish", "message_id": message_id, "status": status, "usage": None,
                                    "error": error}])

    def _next_in_queue(self) -> None:
        if self._closed or not self._queue:
            self.queued = len(self._queue)
            return
        prompt = self._queue.popleft()
        self.queued = len(self._queue)
        self.push([{"op": "message", "message": user_message(prompt.turn_id, prompt.text).to_dict()}])
        self._start_turn(prompt)

    def _drop_queue(self) -> None:
        dropped = list(self._queue)
        self._queue.clear()
        self.queued = 0
        changes = []
        for prompt in dropped:
            user = user_message(prompt.turn_id, prompt.text).to_dict()
            user["status"] = "cancelled"
            changes.append({"op": "message", "message": user})
        self.push(changes)

    async def _stop(self) -> None:
        self._drop_queue()
        if self._turn_task is None or self._ref is None:
            return
        await self._conn.interrupt(self._ref)

    async def _respond(self, key: tuple[str, str], response: str, part_id: str = "") -> None:
        # Request ids repeat across turns (approval-1 in every turn), so answers are keyed by message too.
        request_id = key[1]
        if key in self._answered:
            self.notice = "That request was already answered."
            return
        with self._lock:
            message = self._store.get(key[0])
            interaction = inbound.find_interaction(message, part_id, request_id)
            inbound.check_answer(interaction, ("approval", "clarify", "code", "run"), response)
            inbound.check_open_turn(message, self._live_ids)
        if self._ref is None:
            self.notice = "That request is no longer waiting for an answer."
            return
        self._answered.add(key)
        try:
            # The connection marks the interaction answered on its turn; the change reaches us through the turn.
            await self._conn.respond(self._ref, request_id, response)
        except Exception:
            self._answered.discard(key)
            raise

    async def _send_secret(self, key: tuple[str, str], kind: str, value: str, part_id: str = "") -> None:
        request_id = key[1]
        if key in self._answered:
            self.notice = "That request was already answered."
            return
        with self._lock:
            message = self._store.get(key[0])
            interaction = inbound.find_interaction(message, part_id, request_id)
            inbound.check_answer(interaction, (kind,))
            inbound.check_open_turn(message, self._live_ids)
        self._answered.add(key)
        method, field = ("sudo.respond", "password") if kind == "sudo" else ("secret.respond", "value")
        try:
            # request() marks the interaction answered with "********" (never the value) on the open turn.
            await self._conn.request(method, {"request_id": request_id, field: value})
        except Exception:
            self._answered.discard(key)
            raise
        finally:
            del value

    # -- connection banner --

    def _on_change(self, kind: str) -> None:
        """A newer Dashboard says a list changed elsewhere (another client, a cron run): re-list the picker."""
        if kind == "sessions" and not self._closed:
            self.run_in_background(self._refresh_sessions(), "listing sessions")

    def _on_listen(self, item: ListenerItem) -> None:
        """Listener callback of the connection (any thread): drive the banner; re-fetch after a reconnect."""
        kind = item.kind
        if kind == "connection":
            retry = float(item.retry_in) if item.retry_in else None
            message = _short(item.error) if item.error else None
            if item.status == "disconnected":
                self.connection = _banner("disconnected", retry, message or "The connection to Hermes dropped.")
            elif item.status == "reconnecting":
                self.connection = _banner("reconnecting", retry, message)
            elif item.status in ("reconnected", "connected"):
                self.connection = _banner("reconnected", None, None)
                self.run_in_background(self.refetch(), "re-fetching the history after the reconnect")
        elif kind == "event":
            turn_id = item.turn_id or ""
            if not turn_id.startswith("unsolicited-"):
                return  # our own turns stream through their Turn objects
            # A turn nobody submitted here (still running after a reconnect, or from another client).
            runtime.call_soon(self._push_unsolicited, list(item.changes or []))
            if item.event is not None and item.event.type == "message.complete" and self._turn_task is None:
                self.run_in_background(self.refetch(), "re-fetching the history")

    def _push_unsolicited(self, changes: list[dict[str, Any]]) -> None:
        with self._lock:
            known = all(c.get("op") == "message" or c.get("message_id") in self._store for c in changes)
        if changes and known:
            self.push(changes)

    async def _shutdown(self) -> None:
        if self._off is not None:
            self._off()
            self._off = None
        if self._off_change is not None:
            self._off_change()
            self._off_change = None
        if self._turn_task is not None:
            self._turn_task.cancel()
        if self._owns_conn and self._conn is not None:
            await self._conn.close()


# --- helpers ------------------------------------------------------------------------------------------------


def _new_turn_id() -> str:
    return uuid.uuid4().hex[:12]


async def _submit(conn: Any, ref: Any, prompt: _Prompt) -> Any:
    # The user message shown before sending is ``user:<turn id>``: the reply shares that id (the contract).
    return await conn.submit(ref, prompt.text, images=prompt.images or None, turn_id=prompt.turn_id)


def _message_dicts(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return [m.to_dict() if hasattr(m, "to_dict") else dict(m) for m in messages]


def _title_of(ref: Any) -> str | None:
    title = getattr(ref, "title", None)
    return title if isinstance(title, str) and title else None


def _session_entry(item: Any) -> dict[str, Any]:
    get = item.get if isinstance(item, Mapping) else (lambda k, d=None: getattr(item, k, d))
    sid = get("id") or get("stored_id") or get("session_id")
    # No preview: synced state is saved with the notebook, and a first message can hold anything.
    return {"id": str(sid), "title": get("title") or None}


def _short(value: Any, limit: int = 200) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _banner(status: str, retry_in: float | None, message: str | None) -> dict[str, Any]:
    """The ``connection`` traitlet value the front end's banner reads."""
    return {"status": status, "retry_in": retry_in, "message": message}
