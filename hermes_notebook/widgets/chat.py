"""``Chat``: one Hermes session as a live widget in a notebook cell, a face over a
:class:`~hermes_notebook.session.Conversation`.

Where things run: every Hermes call happens in the kernel on the package loop
(:mod:`hermes_notebook.runtime`), through the chat's conversation, which owns every session operation.
``hermes.chat()`` shares the facade's, so a chat prompt and an ``ask()`` on one session wait for each other in
its one turn queue. The browser view talks only to this object through comm messages (``send``, ``stop``,
``respond``, ...), so the API key and the Dashboard token never reach the browser, the widget state or the
saved notebook. A click schedules a coroutine on the package loop and returns at once, and every piece of
mutable state below is touched only on that loop.

What the views get: change records, streamed through :class:`StreamingWidget`, plus small traitlets (session,
connection banner, busy/queued, notice, model, context gauge). The picker's list of other sessions is never
state (that is saved): ``list_sessions`` asks, a ``sessions`` message answers.

Saved notebooks: ``_ipython_display_`` shows the widget *and* a static transcript (text/plain and text/html
from :func:`render.transcript_bundle`) under a ``display_id`` updated at message boundaries; the live view
hides it (js/src/twin.ts), and nbviewer, GitHub and nbconvert, which run no widget JS, show it. Updating the
widget's own output instead would re-create the live view and lose what the user was typing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import traitlets

from .. import runtime
from ..errors import HermesError, redact
from ..inert import terminal_safe
from ..kernel.chat_resume import RESUME_HINTS
from ..render import transcript_bundle
from ..session import Conversation, resume
from ..settings import Settings
from ..turns.withdrawn import withdraw_pending
from . import inbound
from .chat_actions import install_actions
from .chat_answers import ChatAnswers
from .chat_events import on_change, on_listen
from .chat_export import on_export
from .chat_profiles import install_profiles
from .chat_run_undo import install_run_undo
from .chat_session import install_session_details, session_entry
from .chat_turns import ChatTurns
from .replies import answer, refusal
from .static_twin import StaticTwin
from .windowed import WindowedWidget

if TYPE_CHECKING:
    from ..client import DashboardConnection

__all__ = ["TRANSCRIPT_CLASS", "Chat"]

log = logging.getLogger(__name__)

#: The class of the element wrapping the static transcript; the live widget's CSS hides it.
TRANSCRIPT_CLASS = "hn-transcript"

#: Transcript updates closer together than this are merged (a burst of boundaries re-renders once).
TRANSCRIPT_DEBOUNCE_S = 0.25


class Chat(StaticTwin, WindowedWidget):
    """A chat with one Hermes session: history, live turns, interactions, session picker, connection banner.

    ``source``: a :class:`~hermes_notebook.session.Conversation` (the facade's; ``session`` then names a
    session as for ``ask``), a connected ``DashboardConnection`` (the caller's to close), or ``Settings`` /
    ``None`` (the chat owns a connection from ``Settings.resolve()``); without a conversation, ``session`` is
    a stored id/title to resume. None: a new session. ``secrets``: the connection's key and token, never
    shown."""

    #: The open session: ``{"id": stored id, "title": str | None}``; None until it is open.
    session = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    #: True while history or a session switch is loading.
    loading = traitlets.Bool(False).tag(sync=True)
    #: The open session's model as Hermes reports it ("" until known; the header's label).
    model = traitlets.Unicode("").tag(sync=True)
    #: The session's context window: ``{"used", "max", "percent", "categories"}``; None until a turn ran.
    context_usage: traitlets.Dict[str, Any] | None = traitlets.Dict(allow_none=True, default_value=None).tag(
        sync=True
    )
    #: What Hermes may do in this notebook's kernel (chat_kernel.py: the header's modes and Revoke); None: not
    # shared.
    kernel_modes = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(
        self,
        source: Conversation | DashboardConnection | Settings | None = None,
        session: str | None = None,
        *,
        max_rate: float | None = None,
        secrets: Sequence[object] = (),
        **kwargs: Any,
    ) -> None:
        if max_rate is not None:
            kwargs["max_rate"] = max_rate
        given = isinstance(source, Conversation)
        self._owned: Conversation | None = None
        if source is None or isinstance(source, Settings):
            settings = source or Settings.resolve()
            secrets = (*secrets, settings.api_key, settings.dashboard_token)
            source = self._owned = Conversation(settings)
        elif not isinstance(source, Conversation):
            source = Conversation(dashboard=source)  # the connection stays the caller's
        if session is not None and not isinstance(session, str):
            raise inbound.Refused(f"session must be a name or id, not {type(session).__name__}")
        super().__init__(
            mode="chat",
            secrets=secrets,
            images=lambda path: self.conversation.image(path),
            stored=lambda: self.conversation.history(self._open_id()),  # pages before the kernel's window
            **kwargs,
        )
        #: The conversation this chat is a face of (the facade's, when ``hermes.chat()`` opened it).
        self.conversation: Conversation = source
        self.sessions: list[dict[str, Any]] = []  # the picker's [{"id", "title"}]: asked for, never synced
        self.turns = ChatTurns(self, source)
        self._off: Callable[[], None] | None = None
        self._off_change: Callable[[], None] | None = None  # a newer Dashboard's sessions.changed signal
        self.answers = ChatAnswers(self)  # the cards' answers, once each (chat_answers.py)
        self._closed = False
        self._init_static_twin("hermes-chat-transcript")
        self._transcript_handle: asyncio.TimerHandle | None = None
        for name, handler in {
            "send": self._on_send,
            "stop": lambda _content: self.stop(),
            "respond": lambda c: self.run_in_background(self.answers.respond(c, c["response"]), "answering"),
            # The value was taken out of the comm message by inbound.validate; it lives only in the coroutine.
            "secret": lambda c: self.run_in_background(
                self.answers.respond(c, c.pop("value"), c["kind"]), "answering"
            ),
            "new_session": lambda _content: self.run_in_background(
                self.switch(None), "creating a new session"
            ),
            "switch_session": lambda c: self.run_in_background(
                self.switch(c["session_id"]), "opening the session"
            ),
            "refresh": lambda _content: self.refresh(),
            "list_sessions": lambda c: self.run_in_background(self.refresh_sessions(c), "listing sessions"),
            "export": lambda content: on_export(self, content),  # the Export button (chat_export.py)
        }.items():
            self.on_action(name, handler)
        install_session_details(self)  # the model label, context gauge and slash commands (chat_session.py)
        install_actions(self)  # message buttons (undo, regenerate, branch, edit) and file attachments
        install_profiles(self)  # the header's profile picker and the composer's Steer (chat_profiles.py)
        install_run_undo(self)  # a run_code part's Undo variables (chat_run_undo.py)
        # A conversation's own book says what a name means; a bare chat opens a stored session of the
        # server's.
        opening = session if given or session is None else resume(session)
        # After an approved restart_and_run_all, the session that asked for it (kernel/chat_resume.py).
        hinted = RESUME_HINTS.take(source.profile) if session is None else None
        #: Resolves once the session is open and its history shown (tests and the facade may wait on it).
        self.ready = self.run_in_background(self._open(opening, hinted), "opening the chat")

    # --- public, blocking helpers (cells and tests) ----------------------------------------------------

    def wait_ready(self, timeout: float = 60.0) -> Chat:
        """Block until the session is open (its history loaded). Returns self, so ``Chat().wait_ready()``
        works."""
        self.ready.result(timeout)
        return self

    def send_prompt(self, text: str, images: Sequence[tuple[str, bytes]] = ()) -> None:
        """Send a prompt as if typed in the composer (shown at once; queued behind a running turn)."""
        self.run_in_background(self._submit(text, list(images)), "sending the prompt")

    def stop(self) -> None:
        """Interrupt the running turn (and drop queued prompts), like the stop button."""
        runtime.call_soon(self.turns.stop)

    def compress(self, focus_topic: str | None = None) -> concurrent.futures.Future[None]:
        """Compress the open session's context now (``session.compress``); the next reply opens with a marker.

        Returns a future done once the server answered; a failure shows as the notice line."""
        return self.run_in_background(self._compress(focus_topic), "compressing the context")

    def set_model(self, name: str, *, confirm: bool = False) -> concurrent.futures.Future[None]:
        """Switch the open session's model (``config.set``); the header label follows. Returns a future."""
        return self.run_in_background(self._set_model(name, confirm), "switching the model")

    def refresh(self) -> None:
        """Re-fetch the session's history and the session list."""
        self.run_in_background(self.refetch(), "refreshing")

    @traitlets.validate("session")
    def _scrub_session(self, proposal: Any) -> Any:  # a title is model text: it may quote a key
        return None if proposal["value"] is None else self.scrub_value(proposal["value"])

    @property
    def session_id(self) -> str | None:
        """The stored id of the open session (None until open)."""
        return None if self.session is None else self.session.get("id")

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

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
        """The static transcript shown beside the widget: what a saved notebook keeps for kernel-less
        viewers."""
        earlier = [f"{self.before:,} earlier messages are in the session's history"] if self.before else []
        bundle = transcript_bundle(self.snapshot(), notes=earlier, secrets=self.secrets)
        title = (self.session or {}).get("title")
        heading = f"Hermes chat: {title}" if title else "Hermes chat"
        bundle["text/html"] = (
            f'<div class="{TRANSCRIPT_CLASS}" '
            f'data-hn-transcript="{self.model_id}">{bundle["text/html"]}</div>'
        )
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
        """Apply change records and stream them (see :class:`StreamingWidget`); boundaries refresh the
        transcript."""
        super().push(changes)
        if any(c.get("op") in ("message", "finish") for c in changes):
            self._schedule_transcript()

    def reset(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        """Replace the conversation (history load or re-fetch) and refresh the transcript."""
        super().reset(messages, keep=keep)
        self._schedule_transcript()

    # --- browser actions (comm thread): validate, then hand over to the loop -----------------------------

    def _on_send(self, content: dict[str, Any]) -> None:
        # ``content`` was checked by inbound.validate (types, sizes, image count and types); decoding checks
        # bytes.
        text: str = content["text"]
        images = inbound.decode_images(content["images"])
        if not text.strip() and not images:
            return
        self.notice = ""
        self.run_in_background(self._submit(text, images), "sending the prompt")

    # --- the loop side ----------------------------------------------------------------------------------

    def run_in_background(
        self, coro: Coroutine[Any, Any, None], what: str
    ) -> concurrent.futures.Future[None]:
        """Run ``coro`` on the package loop; any failure becomes the ``notice`` line, never a traceback."""

        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except inbound.Refused as exc:
                self.notice = f"Refused: {exc}."
            except Exception as exc:
                self.fail(what, exc)

        return runtime.submit(guarded())

    def fail(self, what: str, exc: BaseException) -> None:
        """Show a failure as the notice line (one sentence, no key or token in it)."""
        message = redact(str(exc) or type(exc).__name__, *self.secrets)
        if not isinstance(exc, HermesError):
            log.warning("%s failed", what, exc_info=exc)
        self.notice = f"{what[:1].upper()}{what[1:]} failed: {message}"

    def _open_id(self) -> str:
        if self.session_id is None:
            raise HermesError("the session is not open")
        return self.session_id

    async def _open(self, session: str | None, hinted: str | None = None) -> None:
        self.loading = True
        try:
            if self._off_change is None:
                self._off_change = await self.conversation.on_change(lambda kind: on_change(self, kind))
            try:
                await self._open_session(session if hinted is None else resume(hinted))
            except HermesError:
                if hinted is None:
                    raise
                await self._open_session(None)  # the restart's session is gone: a new one, as without a hint
        finally:
            self.loading = False
        await self.refresh_sessions()

    async def _open_session(self, session: str | None) -> None:
        if self._off is not None:
            self._off()
            self._off = None
        opened = await self.conversation.open(session)
        self.answers.clear()
        self.reset(opened.messages)
        self.session = {"id": opened.session_id, "title": opened.title}
        self._off = await self.conversation.listen(opened.session_id, lambda item: on_listen(self, item))

    async def refresh_sessions(self, question: Mapping[str, Any] | None = None) -> None:
        """List the stored sessions for the picker (answering the view's ``question``, if it asked)."""
        try:
            listed = await self.conversation.sessions()
        except HermesError as exc:
            log.info("could not list sessions: %s", exc)
            if question is not None:  # the view stops waiting at once
                self.send_to_views(refusal(question, self.scrub_value(str(exc))))
            return
        self.sessions = [self.scrub_value(session_entry(s)) for s in listed]
        self.send_to_views(answer(question, {"type": "sessions", "sessions": self.sessions}))
        current = self.session_id
        for entry in self.sessions:
            if entry["id"] == current and entry.get("title") and self.session is not None:
                self.session = {"id": current, "title": entry["title"]}

    async def refetch(self) -> None:
        """Fetch the open session's history again (keeping a turn that runs here) and the session list."""
        session_id = self.session_id
        if session_id is not None:
            history = await self.conversation.history(session_id)
            if self.session_id == session_id:  # no session switch meanwhile
                self._apply_history(history)
        await self.refresh_sessions()

    def _apply_history(self, history: Sequence[Mapping[str, Any]]) -> None:
        """Show the stored history, keeping what is live here and not stored yet (a running or queued turn).

        The fetch is awaited, so a prompt may have started meanwhile; dropping its messages would break the
        change records still streaming into them.
        """
        stored, live = {m["id"] for m in history}, self.turns.live_ids
        self.reset(
            history,
            keep=lambda m: (
                m["id"] not in stored and (m["id"] in live or m.get("status") in ("streaming", "queued"))
            ),
        )

    async def switch(self, session: str | None) -> None:
        """Open another stored session (the picker's choice; None: a new one); refused while a turn runs
        here."""
        if self.busy:
            self.notice = "Stop the running turn before changing sessions."
            return
        self.turns.drop_waiting()
        self.loading = True
        try:
            await self._open_session(None if session is None else resume(session))
        finally:
            self.loading = False
        self.notice = ""
        await self.refresh_sessions()

    async def rebind(self, conversation: Conversation) -> None:
        """Move to ``conversation`` (another profile's, which this chat then owns) and a new session there."""
        previous, owned, off = self.conversation, self._owned, self._off_change
        self.conversation, self.turns, self._off_change = conversation, ChatTurns(self, conversation), None
        try:
            await self._open(None)
        except Exception:
            self.conversation, self.turns, self._off_change = previous, ChatTurns(self, previous), off
            await conversation.close()
            raise
        self._owned = conversation
        if off is not None:
            off()
        if owned is not None:
            await owned.close()

    async def _submit(self, text: str, images: list[tuple[str, bytes]]) -> None:
        if not self.ready.done():
            await asyncio.wrap_future(self.ready)
        self.turns.send(self._open_id(), text, images)

    async def _compress(self, focus_topic: str | None) -> None:
        if self.session_id is not None:
            await self.conversation.compress(self.session_id, focus_topic)

    async def _set_model(self, name: str, confirm: bool) -> None:
        reply = await self.conversation.set_model(name, self._open_id(), confirm=confirm)
        self.model = self.scrub_value(str(reply.get("value") or name))[:200]
        if reply.get("warning"):
            self.notice = self.scrub_value(str(reply["warning"]).strip())[:500]

    def turn_ended(self) -> None:
        """A turn ended: re-list the picker (Hermes titles a session after its first turn)."""
        if not self._closed:
            self.run_in_background(self.refresh_sessions(), "listing sessions")

    def finish_locally(self, message_id: str | None, status: str, error: str) -> None:
        """End a message the server will not end (a dropped turn), its pending cards withdrawn with it."""
        message = self.message(message_id)
        if message is None or message.get("status") not in ("streaming", "queued"):
            return
        withdrawn: list[Any] = withdraw_pending(message)  # its cards go inert with it
        finish = {"op": "finish", "message_id": message_id, "status": status, "usage": None, "error": error}
        self.push([*withdrawn, finish])

    async def _shutdown(self) -> None:
        for off in (self._off, self._off_change):
            if off is not None:
                off()
        self._off = self._off_change = None
        self.turns.cancel_all()
        if self._owned is not None:
            await self._owned.close()
