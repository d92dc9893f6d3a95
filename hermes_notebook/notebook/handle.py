"""One turn running on the package loop: :class:`TurnHandle`, what ``%hermes -b`` and ``Hermes.start`` return.

The handle is the facade's :class:`~hermes_notebook.session.TurnSink`: the conversation's one turn runner
drives the turn on the package loop and pushes its change records here; views listen to those records.
Notebook code waits on it (``wait()``, ``await``) or reads the turn so far. Button and prompt callbacks only
complete thread-safe futures (:meth:`TurnHandle.answer` / :meth:`TurnHandle.stop`): they may run on the main
thread (the comm pump), a JupyterLab comm subshell thread, or elsewhere.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import logging
import queue
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import runtime
from ..errors import HermesError, HermesTimeoutError
from ..session import Conversation, TurnControl, TurnRequest
from ..session.media import read_media_images
from ..turns.store import MessageStore
from .interactions import Policy, normalize_answer, policy_refusal, prompt_text
from .results import Reply
from .wait import wait_blocking

__all__ = ["INTERRUPT_GRACE", "TurnHandle", "TurnOptions", "reply_for"]

log = logging.getLogger(__name__)

#: Seconds a kernel interrupt waits for the server to end the turn before giving up on it.
INTERRUPT_GRACE = 0.8

ChangeBatch = Sequence[Any]  # change records (turns.ChangeRecord) or plain dicts shaped like them
Listener = Callable[[list[Any]], None]


@dataclass(kw_only=True)
class TurnOptions(TurnRequest):
    """One ask's checked options (``Hermes.ask`` builds it): the turn's request plus who answers its
    questions."""

    approve: Policy = None
    clarify: Policy = None
    #: Who answers a Run card (code in the kernel): nobody but its buttons, unless the kernel runs unattended
    #: (asking.py: ``HERMES_NOTEBOOK_UNATTENDED``).
    code: Policy = None
    #: How many ``{placeholders}`` were filled into ``prompt`` (the live view and transcript show it as sent).
    filled: int = 0
    #: The connection's key and token: every view of the turn scrubs them (``Secret`` values; never shown).
    secrets: tuple[object, ...] = field(default=(), repr=False)
    #: Show the turn where it runs (a live view in a kernel); False: nothing is shown and no view is made.
    show: bool = True


@dataclass
class _Ask:
    """An interaction waiting for a text answer on the main thread."""

    request: dict[str, Any]
    future: concurrent.futures.Future[str] = field(default_factory=concurrent.futures.Future)


def reply_for(handle: TurnHandle, message: Mapping[str, Any]) -> Reply:
    """The :class:`Reply`, with notes for what the transcript does not say by itself."""
    notes = list(handle.notes)
    for part in message.get("parts") or []:
        inter: Mapping[str, Any] = part.get("interaction") or {}
        if inter.get("status") == "expired":
            kind = inter.get("kind")
            what = inter.get("command") or inter.get("question") or kind
            notes.append(
                f"nobody answered the {kind} request ({what}); the server denied it after its "
                "timeout. Pass approve=/clarify= (or --approve in %hermes) for unattended runs."
                if kind == "approval"
                else f"nobody answered the {kind} request ({what}) before the server's timeout."
            )
    if message.get("status") in ("interrupted", "cancelled"):
        notes.append("the turn was interrupted")
    options = handle.options
    return Reply(
        dict(message),
        session_id=handle.session_id,
        prompt=options.prompt,
        via=options.via,
        notes=notes,
        filled=options.filled,
        profile=handle.profile,
    )


class TurnHandle:
    """A turn running on the package loop. ``%hermes -b`` returns one.

    ``await handle`` or ``handle.wait()`` give the :class:`Reply`; ``text``, ``parts``, ``status`` ... show
    the turn so far; ``stop()`` interrupts it on the server. Thread-safe.

    ``conversation`` runs the turn (its one turn runner, after the session's earlier turns); ``on_reply`` is
    told each reply (the facade keeps them for exports). ``buttons`` (a live view shows buttons) and
    ``text_prompts`` (answer on stdin) say who can answer an interaction besides a policy.
    """

    def __init__(
        self,
        options: TurnOptions,
        conversation: Conversation,
        *,
        on_reply: Callable[[Reply], None] | None = None,
    ) -> None:
        self.options = options
        self._conversation = conversation
        self._on_reply = on_reply
        #: The Hermes profile the turn runs in (None: the server's own).
        self.profile = conversation.profile
        #: How the turn is stopped (shared with the runner, which interrupts it on the server).
        self.control = TurnControl()
        self.prompt = options.prompt
        #: How many ``{placeholders}`` were filled into ``prompt``.
        self.filled = options.filled
        #: What every view of this turn scrubs (the connection's key and token).
        self.secrets = options.secrets
        self.via = options.via
        #: Show the turn (False: no view is made; policies answer its approvals and questions).
        self.show = options.show
        self.session_id: str | None = None
        self.notes: list[str] = []
        self.buttons = False
        self.text_prompts = False
        self._lock = threading.Lock()
        self._store = MessageStore()  # appends cost O(their own text), not O(the reply so far)
        self._message_id: str | None = None
        self._listeners: list[Listener] = []
        self._future: concurrent.futures.Future[Reply] | None = None
        self._answers: dict[str, concurrent.futures.Future[str]] = {}
        self._asks: queue.Queue[_Ask] = queue.Queue()
        #: When each interaction was answered from a view or prompt (``time.time()``; latency measurements).
        self.answered_at: dict[str, float] = {}

    @property
    def stop_requested_at(self) -> float | None:
        """When ``stop()`` was first called (``time.time()``)."""
        return self.control.stop_requested_at

    # --- views ---

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(changes)`` with every batch of change records (any thread; keep it quick)."""
        with self._lock:
            self._listeners.append(listener)
            backlog: list[Any] = [{"op": "message", "message": dict(m)} for m in self._store.values()]
        if backlog:
            listener(backlog)

    def started(self, session_id: str) -> None:
        """The runner resolved the turn's session (the runner's side)."""
        self.session_id = session_id

    def note(self, text: str) -> None:
        """Something the reply's notes should say (the runner's side)."""
        self.notes.append(text)

    def failed(self, error: HermesError) -> None:
        """The connection dropped under the turn: the reply keeps what arrived, and says so."""
        self.notes.append(f"the connection to the Dashboard dropped: {error}")

    def push(self, changes: ChangeBatch) -> None:
        """Apply a batch of the assistant message's change records and pass it to the listeners (the runner's
        side).

        The user message's record is dropped: the cell shows the prompt already.
        """
        batch = [c for c in changes if not (c.get("op") == "message" and c["message"].get("role") == "user")]
        if not batch:
            return
        with self._lock:
            for change in batch:
                if change.get("op") == "message":
                    self._message_id = change["message"]["id"]
            self._store.apply(batch)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(batch)
            except Exception:  # a broken view must not end the turn
                log.exception("a turn listener failed")

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message so far (a copy)."""
        with self._lock:
            message = self._store.get(self._message_id or "")
            if message is None:
                return {
                    "id": None,
                    "role": "assistant",
                    "status": "submitting",
                    "parts": [],
                    "usage": None,
                    "error": None,
                }
            return copy.deepcopy(message)

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The parts so far."""
        return list(self.message["parts"])

    @property
    def text(self) -> str:
        """The answer text so far."""
        return Reply(self.message).text

    @property
    def reasoning(self) -> str:
        """The reasoning so far."""
        return Reply(self.message).reasoning

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool parts so far."""
        return Reply(self.message).tools

    @property
    def status(self) -> str:
        """``submitting``, ``queued``, ``streaming``, or the final status."""
        return str(self.message["status"])

    @property
    def reply(self) -> Reply | None:
        """The reply once the turn has ended, else None."""
        future = self._future
        if future is None or not future.done() or future.cancelled() or future.exception() is not None:
            return None
        return future.result()

    @property
    def future(self) -> concurrent.futures.Future[Reply]:
        """The thread-safe future of the :class:`Reply` (raises ``RuntimeError`` before :meth:`start`)."""
        if self._future is None:
            raise RuntimeError("the turn was not started")
        return self._future

    def done(self) -> bool:
        """True once the turn has ended (or failed to start)."""
        return self._future is not None and self._future.done()

    def __repr__(self) -> str:
        return (
            f"<TurnHandle {self.status}, {len(self.text)} characters so far; .wait() or await it for the "
            "Reply>"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    # --- control (thread-safe) ---

    def answer(self, request_id: str, value: str) -> bool:
        """Answer a pending interaction (what the buttons call). False if nothing waits for it.

        A view shows a request as soon as its record arrives, a moment before the runner starts waiting for
        its
        answer: a click in between is kept for it, not lost."""
        with self._lock:
            future = self._answers.get(request_id)
            if future is None and self._is_pending(request_id):
                future = self._answers[request_id] = concurrent.futures.Future()
        if future is None:
            return False
        try:
            future.set_result(value)
        except concurrent.futures.InvalidStateError:
            return False
        self.answered_at[request_id] = time.time()
        return True

    def _is_pending(self, request_id: str) -> bool:
        message = self._store.get(self._message_id or "") or {}
        return any(
            (p.get("interaction") or {}).get("request_id") == request_id
            and (p.get("interaction") or {}).get("status") == "pending"
            for p in message.get("parts") or ()
        )

    def stop(self) -> None:
        """Ask the server to interrupt the turn (returns at once; what the stop button calls)."""
        self.control.stop()

    def interrupt(self, grace: float = INTERRUPT_GRACE) -> None:
        """Stop the turn and wait up to ``grace`` seconds for it to end; then stop waiting for it."""
        self.stop()
        future = self._future
        if future is None:
            return
        with contextlib.suppress(BaseException):
            future.result(timeout=grace)
        if not future.done():
            future.cancel()

    # --- waiting ---

    def wait(self, timeout: float | None = None) -> Reply:
        """Block until the turn ends and return its :class:`Reply` (the view's buttons keep working)."""
        return wait_blocking(self, timeout=timeout)

    def __await__(self) -> Generator[Any, None, Reply]:
        return runtime.wrap_future(self.future).__await__()

    async def wait_async(self, timeout: float | None = None) -> Reply:
        """``await`` the :class:`Reply` from any loop; after ``timeout`` seconds the turn is interrupted and
        :class:`~hermes_notebook.errors.HermesTimeoutError` raised (a cancelled wait interrupts it too)."""
        try:
            return await asyncio.wait_for(runtime.wrap_future(self.future), timeout or None)
        except asyncio.TimeoutError:
            self.stop()
            raise HermesTimeoutError(
                f"the turn did not finish within {timeout:g} s; it was interrupted"
            ) from None
        except asyncio.CancelledError:
            self.stop()
            raise

    def start(self) -> TurnHandle:
        """Start driving the turn on the package loop (once); returns the handle."""
        if self._future is None:
            self._future = runtime.submit(self._drive())
        return self

    async def image(self, path: str) -> Any:
        """A ``media`` image the turn names, read through the conversation (its ``mime`` and ``data``)."""
        return await self._conversation.image(path)

    async def _drive(self) -> Reply:
        try:
            outcome = await self._conversation.run(self.options, self, self.control)
        finally:
            with self._lock:  # the turn is over: its views settle and nothing here keeps them alive
                self._listeners.clear()
        self.session_id = outcome.session_id
        message = await read_media_images(
            outcome.message, self._conversation.image
        )  # Reply.images: bytes here
        reply = reply_for(self, message).hide(*self.secrets)
        if self._on_reply is not None:
            self._on_reply(reply)
        return reply

    # --- the runner's side (package loop) ---

    async def obtain(self, request: dict[str, Any]) -> str | None:
        """The answer to an interaction, or None to leave it to the server's timeout."""
        kind = request.get("kind")
        if (
            kind == "run"
        ):  # an approved kernel run in progress: only its Stop button answers it (never a policy)
            return None
        options = self.options
        policy = {"approval": options.approve, "clarify": options.clarify, "code": options.code}.get(
            str(kind)
        )
        if policy is not None and (refusal := policy_refusal(request)) is not None:
            self.notes.append(refusal)
            return "deny"
        if policy is not None:
            answer = policy if isinstance(policy, str) else await asyncio.to_thread(policy, dict(request))
            if answer is not None:
                return normalize_answer(request, str(answer), self.notes)
        if not (self.buttons or self.text_prompts):
            if kind == "code":  # nobody can click Run here: the code is not run
                self.notes.append("nobody could answer the request to run code in the kernel; it was denied")
                return "deny"
            return None
        with self._lock:  # a click may have come first (see answer())
            future = self._answers.setdefault(request["request_id"], concurrent.futures.Future())
        if self.text_prompts:
            self._asks.put(_Ask(request, future))
        try:
            value = await asyncio.wrap_future(future)
        finally:
            self._answers.pop(request["request_id"], None)
            if not future.done():
                future.cancel()
        return value if kind in ("sudo", "secret") else normalize_answer(request, value, self.notes)

    # --- the waiting thread's side ---

    def serve_text_prompts(self) -> None:
        """Ask queued interactions on this (main) thread with ``input()``/``getpass``."""
        while True:
            try:
                ask = self._asks.get_nowait()
            except queue.Empty:
                return
            if ask.future.done():
                continue
            try:
                value = prompt_text(ask.request)
            except (EOFError, OSError, RuntimeError) as exc:  # no stdin here after all
                log.debug("text prompt unavailable: %s", exc)
                continue
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                ask.future.set_result(value)
