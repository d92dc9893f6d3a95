"""A turn running on the package loop, how it is shown in a cell, and how a cell waits for it.

:class:`TurnHandle` is driven by :class:`hermes_notebook.notebook.Hermes` on the package loop; views listen to its
change records. A blocking wait runs on the calling thread and, in a kernel's main thread, pumps widget messages
(:mod:`hermes_notebook.notebook.comm_pump`) so the live view's buttons work while the cell waits; it also serves text
prompts (``input()``/``getpass``) where buttons cannot be shown. :class:`Reply` is what a finished turn gives.

Button and prompt callbacks only complete thread-safe futures (``TurnHandle.answer``/``stop``): they may run on
the main thread (the pump), a JupyterLab comm subshell thread, or elsewhere.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import getpass
import html
import logging
import queue
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .. import runtime
from ..errors import HermesError, HermesTimeoutError, HermesUsageError
from ..render import transcript_bundle
from ..turns import apply_changes
from .comm_pump import CommPump

if TYPE_CHECKING:
    from ..widgets.turn import TurnView
    from .facade import Hermes

__all__ = [
    "APPROVAL_ALIASES",
    "APPROVAL_CHOICES",
    "INTERRUPT_GRACE",
    "PUMP_INTERVAL",
    "Policy",
    "Reply",
    "TurnHandle",
    "environment",
]

log = logging.getLogger(__name__)

Via = Literal["dashboard", "api"]
#: A policy: a fixed answer, or a callable given the request dict (kind, command/question, choices, ...)
#: returning the answer (``None`` means "ask interactively after all").
Policy = str | Callable[[dict[str, Any]], str | None] | None

VIAS: tuple[str, ...] = ("dashboard", "api")
APPROVAL_CHOICES: tuple[str, ...] = ("once", "session", "always", "deny")
#: Friendlier spellings accepted for approval answers (the servers know only the four choices).
APPROVAL_ALIASES = {
    "approve": "once", "approved": "once", "allow": "once", "yes": "once", "y": "once", "ok": "once",
    "no": "deny", "n": "deny", "reject": "deny", "denied": "deny",
}
#: Seconds the blocking wait sleeps between pump rounds (clicks are handled within about this much).
PUMP_INTERVAL = 0.02
#: Seconds a kernel interrupt waits for the server to end the turn before giving up on it.
INTERRUPT_GRACE = 0.8

_DONE_STATUSES = frozenset({"complete", "interrupted", "error", "cancelled"})


# --- the reply --------------------------------------------------------------------------------------------


class Reply:
    """The outcome of one turn: the assistant message and what happened around it.

    ``str(reply)`` is the answer text; displayed, it is a static transcript (text, markdown and sanitized
    HTML), which is what a saved notebook keeps.
    """

    def __init__(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        prompt: str = "",
        via: str = "dashboard",
        notes: Sequence[str] = (),
    ) -> None:
        self.message: dict[str, Any] = dict(message)
        self.session_id = session_id
        self.prompt = prompt
        self.via = via
        #: Sentences about things the transcript does not show by itself (an approval nobody answered, ...).
        self.notes: list[str] = list(notes)
        self._live: tuple[str | None, int | None] | None = None  # (display id, execution count) of the live view

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The message parts (reasoning, text, tool), in order."""
        return list(self.message.get("parts") or [])

    @property
    def text(self) -> str:
        """The answer: the text parts joined by blank lines."""
        return "\n\n".join(p["text"] for p in self.parts if p.get("kind") == "text" and p.get("text"))

    @property
    def reasoning(self) -> str:
        """The model's reasoning, if it streamed any (Dashboard only)."""
        return "\n\n".join(p["text"] for p in self.parts if p.get("kind") == "reasoning" and p.get("text"))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool parts: ``name``, ``status``, ``preview``/``arguments``, ``result``, ``interaction``."""
        return [p for p in self.parts if p.get("kind") == "tool"]

    @property
    def status(self) -> str:
        """``complete``, ``interrupted``, ``error`` or ``cancelled``."""
        return str(self.message.get("status"))

    @property
    def usage(self) -> dict[str, Any] | None:
        """Token usage as the server reported it (Dashboard values are session totals)."""
        return self.message.get("usage")

    @property
    def error(self) -> str | None:
        """The server's error message when the turn failed."""
        return self.message.get("error")

    @property
    def ok(self) -> bool:
        """True when the turn completed normally."""
        return self.status == "complete"

    def to_markdown(self) -> str:
        """This turn (prompt and reply) as Markdown that reads well on GitHub; tools collapsed, no secrets."""
        from .export import messages_of, to_markdown

        return to_markdown(messages_of(self))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        text = self.text
        short = text if len(text) <= 60 else text[:57] + "..."
        tools = f", {len(self.tools)} tool(s)" if self.tools else ""
        return f"<Reply {self.status}{tools}: {short!r}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # ``%hermes``/``ask`` already showed this turn in the cell (a live view turned transcript, or text
        # printed as it streamed). When the reply is also that same cell's value, show it once.
        live, self._live = self._live, None
        if live is not None and _same_cell(live[1]):
            display_id = live[0]
            if display_id is None:
                return {"text/plain": repr(self)}
            from IPython.display import update_display

            update_display({"text/plain": ""}, raw=True, display_id=display_id)
        return self._bundle()

    def _bundle(self) -> dict[str, str]:
        bundle = transcript_bundle([self.message])
        if self.notes:
            bundle["text/plain"] += "".join(f"[note] {n}\n" for n in self.notes)
            bundle["text/markdown"] += "".join(f"\n_Note: {n}_\n" for n in self.notes)
            bundle["text/html"] += "".join(
                f'<div class="hn-meta" style="opacity:.8">Note: {html.escape(n)}</div>' for n in self.notes
            )
        return bundle


def _same_cell(count: int | None) -> bool:
    shell = _ipython()
    return shell is not None and count is not None and getattr(shell, "execution_count", None) == count


# --- one running turn -------------------------------------------------------------------------------------


@dataclass
class _Options:
    prompt: str
    session: str | None
    via: str
    approve: Policy
    clarify: Policy
    new: bool
    instructions: str | None
    model: str | None
    images: Any


@dataclass
class _Ask:
    """An interaction waiting for a text answer on the main thread."""

    request: dict[str, Any]
    future: concurrent.futures.Future[str] = field(default_factory=concurrent.futures.Future)


class TurnHandle:
    """A turn running on the package loop. ``%hermes -b`` returns one.

    ``await handle`` or ``handle.wait()`` give the :class:`Reply`; ``text``, ``parts``, ``status`` ... show the
    turn so far; ``stop()`` interrupts it on the server. Thread-safe.
    """

    def __init__(self, hermes: Hermes, options: _Options) -> None:
        self._hermes = hermes
        self._options = options
        self.prompt = options.prompt
        self.via = options.via
        self.session_id: str | None = None
        self.notes: list[str] = []
        self._lock = threading.Lock()
        self._store: dict[str, dict[str, Any]] = {}
        self._message_id: str | None = None
        self._listeners: list[Callable[[list[dict[str, Any]]], None]] = []
        self._future: concurrent.futures.Future[Reply] | None = None
        self._answers: dict[str, concurrent.futures.Future[str]] = {}
        self._asks: queue.Queue[_Ask] = queue.Queue()
        self._buttons = False
        self._text_prompts = False
        self._stop_requested = False
        self._stop_event: asyncio.Event | None = None
        self._interrupt: Callable[[], Awaitable[Any]] | None = None
        self._interrupted = False
        #: When each interaction was answered from a view or prompt (``time.time()``; latency measurements).
        self.answered_at: dict[str, float] = {}
        #: When ``stop()`` was first called (``time.time()``).
        self.stop_requested_at: float | None = None

    # --- views ---

    def add_listener(self, listener: Callable[[list[dict[str, Any]]], None]) -> None:
        """Call ``listener(changes)`` with every batch of change records (any thread; keep it quick)."""
        with self._lock:
            self._listeners.append(listener)
            backlog = [{"op": "message", "message": dict(m)} for m in self._store.values()]
        if backlog:
            listener(backlog)

    def _push(self, changes: list[dict[str, Any]]) -> None:
        changes = [c for c in changes if not (c.get("op") == "message" and c["message"].get("role") == "user")]
        if not changes:
            return
        with self._lock:
            for change in changes:
                if change.get("op") == "message":
                    self._message_id = change["message"]["id"]
            apply_changes(self._store, changes)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(changes)
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
            import copy

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
        return _wait_blocking(self, timeout=timeout)

    def __await__(self) -> Generator[Any, None, Reply]:
        assert self._future is not None, "the turn was not started"
        return runtime.wrap_future(self._future).__await__()

    # --- running (package loop) ---

    def _start(self) -> TurnHandle:
        self._future = runtime.submit(self._hermes._drive(self))
        return self

    async def _watch_stop(self) -> None:
        event = self._stop_event = asyncio.Event()
        if self._stop_requested:
            event.set()
        await event.wait()
        await self._do_interrupt()

    async def _do_interrupt(self) -> None:
        if self._interrupted or self._interrupt is None:
            return
        self._interrupted = True
        try:
            await self._interrupt()
        except HermesError as exc:  # e.g. the run already ended: nothing to stop
            log.debug("interrupt: %s", exc)

    async def _obtain(self, request: dict[str, Any]) -> str | None:
        """The answer to an interaction, or None to leave it to the server's timeout."""
        kind = request.get("kind")
        policy = {"approval": self._options.approve, "clarify": self._options.clarify}.get(str(kind))
        if policy is not None:
            answer = policy if isinstance(policy, str) else await asyncio.to_thread(policy, dict(request))
            if answer is not None:
                return _normalize(request, str(answer), self.notes)
        if not (self._buttons or self._text_prompts):
            return None
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._answers[request["request_id"]] = future
        if self._text_prompts:
            self._asks.put(_Ask(request, future))
        try:
            value = await asyncio.wrap_future(future)
        finally:
            self._answers.pop(request["request_id"], None)
            if not future.done():
                future.cancel()
        return value if kind in ("sudo", "secret") else _normalize(request, value, self.notes)

    def _serve_text_prompts(self) -> None:
        """Ask queued interactions on this (main) thread with ``input()``/``getpass``."""
        while True:
            try:
                ask = self._asks.get_nowait()
            except queue.Empty:
                return
            if ask.future.done():
                continue
            try:
                value = _prompt_text(ask.request)
            except (EOFError, OSError, RuntimeError) as exc:  # no stdin here after all
                log.debug("text prompt unavailable: %s", exc)
                continue
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                ask.future.set_result(value)


def _normalize(request: Mapping[str, Any], answer: str, notes: list[str]) -> str:
    if request.get("kind") != "approval":
        return answer
    choice = answer.strip().lower()
    choice = APPROVAL_ALIASES.get(choice, choice)
    allowed = list(request.get("choices") or APPROVAL_CHOICES)
    if choice not in allowed:
        notes.append(f"{answer!r} is not one of {allowed}; the command was denied")
        return "deny" if "deny" in allowed else allowed[-1]
    return choice


def _check_policy(name: str, policy: Policy) -> None:
    if policy is None or callable(policy):
        return
    if not isinstance(policy, str):
        raise HermesUsageError(f"{name}= must be a string or a callable, not {type(policy).__name__}")
    if name == "approve":
        choice = APPROVAL_ALIASES.get(policy.strip().lower(), policy.strip().lower())
        if choice not in APPROVAL_CHOICES:
            raise HermesUsageError(f"approve= must be one of {', '.join(APPROVAL_CHOICES)} (or a callable), not {policy!r}")


def _prompt_text(request: Mapping[str, Any]) -> str:
    kind = request.get("kind")
    if kind == "approval":
        choices = list(request.get("choices") or APPROVAL_CHOICES)
        print(f"Hermes wants to run: {request.get('command') or '(a command)'}")
        if request.get("description"):
            print(f"  ({request['description']})")
        while True:
            answer = input(f"Allow? [{'/'.join(choices)}] (Enter = deny): ").strip().lower() or "deny"
            answer = APPROVAL_ALIASES.get(answer, answer)
            if answer in choices:
                return answer
            print(f"  please type one of {', '.join(choices)}")
    if kind == "clarify":
        print(f"Hermes asks: {request.get('question') or ''}")
        choices = list(request.get("choices") or [])
        for i, choice in enumerate(choices, 1):
            print(f"  {i}) {choice}")
        answer = input("Your answer: ").strip()
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer
    label = "sudo password" if kind == "sudo" else (request.get("question") or request.get("description") or "secret")
    return getpass.getpass(f"Hermes needs a {label} (Enter to skip): ")


# --- presenting a turn --------------------------------------------------------------------------------------


def _ipython() -> Any:
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return None
    try:
        return ipython_module.get_ipython()
    except Exception:  # pragma: no cover - IPython half-initialised
        return None


def environment() -> Literal["kernel", "terminal", "plain"]:
    """Where we run: a Jupyter kernel (widgets possible), terminal IPython, or plain Python."""
    shell = _ipython()
    if shell is None:
        return "plain"
    return "kernel" if getattr(shell, "kernel", None) is not None else "terminal"


class _Presenter:
    """Shows a turn somewhere; the base class shows nothing."""

    buttons = False

    def finish(self, reply: Reply) -> None:
        """The turn ended: leave a static result behind."""

    def drain(self) -> None:
        """Main-thread housekeeping between pump rounds."""


class _WidgetPresenter(_Presenter):
    """A :class:`TurnView` under a display id; at the end that output becomes the static transcript."""

    buttons = True

    def __init__(self, handle: TurnHandle) -> None:
        from IPython.display import display

        from ..widgets.turn import TurnView

        self.view: TurnView = TurnView(on_respond=handle.answer, on_stop=handle.stop)
        self.view.busy = True  # shows the stop button while the turn runs
        self.display_id = uuid.uuid4().hex
        handle.add_listener(self.view.push)
        shell = _ipython()
        self.execution_count = getattr(shell, "execution_count", None)
        display(self.view, display_id=self.display_id)

    def finish(self, reply: Reply) -> None:
        from IPython.display import update_display

        self.view.busy = False
        update_display(reply._bundle(), raw=True, display_id=self.display_id)
        reply._live = (self.display_id, self.execution_count)
        with contextlib.suppress(Exception):
            self.view.close()


class _TextPresenter(_Presenter):
    """Terminal IPython: prints the answer as it streams and a line per tool."""

    def __init__(self, handle: TurnHandle, *, direct: bool = False) -> None:
        self._queue: queue.Queue[list[dict[str, Any]]] = queue.Queue()
        self._kinds: dict[str, str] = {}
        self._direct = direct
        self._open_line = False
        handle.add_listener(self._queue.put if not direct else self._print)

    def drain(self) -> None:
        while True:
            try:
                changes = self._queue.get_nowait()
            except queue.Empty:
                return
            self._print(changes)

    def _write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()
        self._open_line = not text.endswith("\n")

    def _print(self, changes: list[dict[str, Any]]) -> None:
        for change in changes:
            op = change.get("op")
            if op == "part":
                part = change["part"]
                self._kinds[part["id"]] = part["kind"]
                if part["kind"] == "tool":
                    self._write(("\n" if self._open_line else "") + f"[tool] {part.get('name') or 'tool'}: "
                                f"{part.get('preview') or part.get('arguments') or ''}\n")
                elif part["kind"] == "reasoning":
                    self._write(("\n" if self._open_line else "") + "[thinking] " + part.get("text", ""))
                else:
                    self._write(("\n" if self._open_line else "") + part.get("text", ""))
            elif op == "append":
                self._write(change["text"])
            elif op == "patch":
                status = change["fields"].get("status")
                if status in ("error", "cancelled"):
                    self._write(("\n" if self._open_line else "") + f"[tool {status}]\n")
            elif op == "finish":
                if self._open_line:
                    self._write("\n")
                if change.get("error"):
                    self._write(f"[error] {change['error']}\n")

    def finish(self, reply: Reply) -> None:
        self.drain()
        for note in reply.notes:
            self._write(f"[note] {note}\n")
        reply._live = (None, getattr(_ipython(), "execution_count", None))


def _presenter_for(handle: TurnHandle, *, blocking: bool, show: bool = True) -> _Presenter:
    on_main = threading.current_thread() is threading.main_thread()
    where = environment()
    if not show or not on_main:
        return _Presenter()
    if where == "kernel":
        try:
            return _WidgetPresenter(handle)
        except Exception as exc:  # widgets unusable here: fall back to text
            log.warning("cannot show the live view (%s); showing text", exc)
            return _TextPresenter(handle, direct=not blocking)
    if where == "terminal":
        return _TextPresenter(handle, direct=not blocking)
    return _Presenter()


def _stdin_allowed() -> bool:
    shell = _ipython()
    kernel = getattr(shell, "kernel", None) if shell is not None else None
    if kernel is not None:
        return bool(getattr(kernel, "_allow_stdin", False))
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _wait_blocking(
    handle: TurnHandle,
    *,
    timeout: float | None = None,
    presenter: _Presenter | None = None,
    pump: CommPump | None = None,
) -> Reply:
    """Wait on the calling thread, pumping widget messages and serving text prompts, until the turn ends."""
    future = handle._future
    assert future is not None, "the turn was not started"
    own_pump = pump is None and environment() == "kernel" and threading.current_thread() is threading.main_thread()
    if own_pump:
        pump = CommPump(warn=False)
    deadline = None if not timeout else time.monotonic() + timeout
    try:
        while True:
            if pump is not None:
                pump.poll()
            handle._serve_text_prompts()
            if presenter is not None:
                presenter.drain()
            try:
                return future.result(timeout=PUMP_INTERVAL)
            except concurrent.futures.TimeoutError:
                pass
            if deadline is not None and time.monotonic() > deadline:
                handle.interrupt()
                raise HermesTimeoutError(f"the turn did not finish within {timeout:g} s; it was interrupted")
    except KeyboardInterrupt:
        handle.interrupt()
        raise
    finally:
        if own_pump and pump is not None:
            pump.close()
        if presenter is not None:
            presenter.drain()
