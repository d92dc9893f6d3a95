"""One turn running on the package loop: :class:`TurnHandle`, what ``%hermes -b`` and ``Hermes.start`` return.

The turn runner (:mod:`.runner`) drives it on the package loop and pushes change records into it; views listen
to those records. Notebook code waits on it (``wait()``, ``await``) or reads the turn so far. Button and prompt
callbacks only complete thread-safe futures (:meth:`TurnHandle.answer` / :meth:`TurnHandle.stop`): they may run
on the main thread (the comm pump), a JupyterLab comm subshell thread, or elsewhere.
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
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import runtime
from ..errors import HermesError
from ..turns.changes import MessageStore
from .interactions import Policy, normalize_answer, policy_refusal, prompt_text
from .results import Reply
from .wait import wait_blocking

__all__ = ["INTERRUPT_GRACE", "VIAS", "TurnHandle", "TurnOptions", "Via"]

log = logging.getLogger(__name__)

Via = Literal["dashboard", "api"]
VIAS: tuple[str, ...] = ("dashboard", "api")
#: Seconds a kernel interrupt waits for the server to end the turn before giving up on it.
INTERRUPT_GRACE = 0.8

ChangeBatch = Sequence[Any]  # change records (turns.ChangeRecord) or plain dicts shaped like them
Listener = Callable[[list[Any]], None]


@dataclass
class TurnOptions:
    """One ask's checked options (``Hermes.ask`` builds it)."""

    prompt: str
    session: str | None
    via: str
    approve: Policy
    clarify: Policy
    new: bool
    instructions: str | None
    model: str | None
    images: Any
    #: How many ``{placeholders}`` were filled into ``prompt`` (the live view and transcript show it as sent).
    filled: int = 0
    #: Text files and PDFs to attach (paths or ``(name, bytes)`` pairs; Dashboard only).
    files: Any = None
    #: The connection's key and token: every view of the turn scrubs them (``Secret`` values; never shown).
    secrets: tuple[object, ...] = field(default=(), repr=False)


@dataclass
class _Ask:
    """An interaction waiting for a text answer on the main thread."""

    request: dict[str, Any]
    future: concurrent.futures.Future[str] = field(default_factory=concurrent.futures.Future)


class TurnHandle:
    """A turn running on the package loop. ``%hermes -b`` returns one.

    ``await handle`` or ``handle.wait()`` give the :class:`Reply`; ``text``, ``parts``, ``status`` ... show the
    turn so far; ``stop()`` interrupts it on the server. Thread-safe.

    ``run`` is the coroutine function that drives the turn (the facade's turn runner). ``buttons`` (a live view
    shows buttons) and ``text_prompts`` (answer on stdin) say who can answer an interaction besides a policy.
    """

    def __init__(self, options: TurnOptions, run: Callable[[TurnHandle], Coroutine[Any, Any, Reply]]) -> None:
        self.options = options
        self._run = run
        self.prompt = options.prompt
        #: How many ``{placeholders}`` were filled into ``prompt``.
        self.filled = options.filled
        #: What every view of this turn scrubs (the connection's key and token).
        self.secrets = options.secrets
        self.via = options.via
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
        self._stop_requested = False
        self._stop_event: asyncio.Event | None = None
        self._interrupt: Callable[[], Awaitable[Any]] | None = None
        self._interrupted = False
        #: When each interaction was answered from a view or prompt (``time.time()``; latency measurements).
        self.answered_at: dict[str, float] = {}
        #: When ``stop()`` was first called (``time.time()``).
        self.stop_requested_at: float | None = None

    # --- views ---

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(changes)`` with every batch of change records (any thread; keep it quick)."""
        with self._lock:
            self._listeners.append(listener)
            backlog: list[Any] = [{"op": "message", "message": dict(m)} for m in self._store.values()]
        if backlog:
            listener(backlog)

    def push(self, changes: ChangeBatch) -> None:
        """Apply a batch of the assistant message's change records and pass it to the listeners (the runner's side).

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
                return {"id": None, "role": "assistant", "status": "submitting", "parts": [], "usage": None,
                        "error": None}
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
        return f"<TurnHandle {self.status}, {len(self.text)} characters so far; .wait() or await it for the Reply>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    # --- control (thread-safe) ---

    def answer(self, request_id: str, value: str) -> bool:
        """Answer a pending interaction (what the buttons call). False if nothing waits for it."""
        future = self._answers.get(request_id)
        if future is None:
            return False
        try:
            future.set_result(value)
        except concurrent.futures.InvalidStateError:
            return False
        self.answered_at[request_id] = time.time()
        return True

    def stop(self) -> None:
        """Ask the server to interrupt the turn (returns at once; what the stop button calls)."""
        if self.stop_requested_at is None:
            self.stop_requested_at = time.time()
        self._stop_requested = True
        event = self._stop_event
        if event is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nothing left to stop
                runtime.call_soon(event.set)

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

    def start(self) -> TurnHandle:
        """Start driving the turn on the package loop (once); returns the handle."""
        if self._future is None:
            self._future = runtime.submit(self._run(self))
        return self

    # --- the runner's side (package loop) ---

    async def watch_stop(self) -> None:
        """Wait for :meth:`stop`, then interrupt the turn on the server."""
        event = self._stop_event = asyncio.Event()
        if self._stop_requested:
            event.set()
        await event.wait()
        await self.interrupt_now()

    async def arm_interrupt(self, interrupt: Callable[[], Awaitable[Any]]) -> None:
        """Set how to interrupt this turn on the server; interrupts at once if a stop came before."""
        self._interrupt = interrupt
        if self._stop_requested:
            await self.interrupt_now()

    async def interrupt_now(self) -> None:
        """Interrupt the turn on the server (once; a no-op before :meth:`arm_interrupt`)."""
        if self._interrupted or self._interrupt is None:
            return
        self._interrupted = True
        try:
            await self._interrupt()
        except HermesError as exc:  # e.g. the run already ended: nothing to stop
            log.debug("interrupt: %s", exc)

    async def obtain(self, request: dict[str, Any]) -> str | None:
        """The answer to an interaction, or None to leave it to the server's timeout."""
        kind = request.get("kind")
        policy = {"approval": self.options.approve, "clarify": self.options.clarify}.get(str(kind))
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
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._answers[request["request_id"]] = future
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
