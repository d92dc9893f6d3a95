"""The link between this kernel and the notebook document: a comm with hermes-notebook's front-end extension.

Why a comm the kernel opens: the notebook (its cells, their outputs, what the user sees) lives in the front
end, and only the JupyterLab / Notebook 7 extension (``js/src/labextension.ts``) can read it or show a change
on a cell. The kernel opens a comm to the target :data:`TARGET` when the kernel is shared
(``Hermes.share_kernel``), so it works whenever the package is imported, and again after a restart. A front
end with the extension answers ``hello`` (a page that reloads finds the open comm through ``comm_info`` and
says ``hello`` again); one without it closes the comm at once (JupyterLab closes a comm whose target it does
not know); one that ignores it says nothing. So the cell tools are offered only while some front end has said
``hello`` and not ``bye``: feature detection, with :meth:`DocumentLink.on_change` telling the tool server when
that changes.

Requests go to one front end (the newest to say hello) and wait for its ``reply`` with the same id. The comm's
messages may be handled on a kernel subshell thread
(:func:`~hermes_notebook.shell.subshells.follow_frontend_subshells`, so a reply gets through while a cell
runs) or on the main thread; everything here is thread-safe and short.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..shell import host
from ..shell.subshells import follow_frontend_subshells

__all__ = [
    "DOCUMENT",
    "PROTOCOL",
    "REQUEST_TIMEOUT",
    "TARGET",
    "Answer",
    "DocumentLink",
    "FrontEnd",
    "Transport",
]

log = logging.getLogger(__name__)

#: The comm target the front-end extension registers.
TARGET = "hermes_notebook.document"
#: The message protocol's version (sent on open; a front end speaking another says so in its hello).
PROTOCOL = 1
#: Seconds a request waits for the front end's reply (reading or proposing is immediate in a live page).
REQUEST_TIMEOUT = 10.0
#: Longest id or name accepted from the front end.
_MAX_ID = 100
#: Longest notebook path accepted from the front end.
_MAX_PATH = 500


class Transport(Protocol):
    """How messages reach the front end: an ipykernel comm, or a test's scripted front end."""

    def send(self, data: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class FrontEnd:
    """A page that said hello: its random id, the app (``lab`` or ``notebook``), when it came, and the path of
    the notebook it shows (the chat header names it: the notebook the cell tools act on)."""

    id: str
    app: str
    since: float
    path: str = ""


@dataclass(frozen=True)
class Answer:
    """A front end's reply to a request: ``ok`` with its fields, or why not (``error``, for the agent)."""

    ok: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""


class DocumentLink:
    """The comm with the notebook's front end (see the module docstring); one per process:
    :data:`DOCUMENT`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._transport: Transport | None = None
        self._front_ends: dict[str, FrontEnd] = {}
        self._waiting: dict[str, tuple[str, concurrent.futures.Future[Answer]]] = {}
        self._ids = itertools.count(1)
        self._listeners: list[Callable[[bool], None]] = []
        self._path_listeners: list[Callable[[str], None]] = []
        self._actions: dict[str, Callable[[str, Mapping[str, Any]], None]] = {}
        self._routing = (
            "none"  # shell.subshells.Routing of the comm: do the page's replies pass a busy kernel?
        )

    # --- the comm -------------------------------------------------------------------------------------------

    def open(self) -> bool:
        """Open the comm to the front end if none is open (a cell calls this); False outside a kernel."""
        with self._lock:
            if self._transport is not None:
                return True
        comm = _kernel_comm()
        if comm is None:
            return False
        comm.on_msg(lambda msg: self.receive((msg.get("content") or {}).get("data")))
        comm.on_close(lambda _msg: self.closed())
        routing = follow_frontend_subshells(comm)  # replies get through while a cell runs (ipykernel 7.4)
        self.connect(_CommTransport(comm), answers_while_busy=routing != "none")
        return True

    def connect(self, transport: Transport, *, answers_while_busy: bool = False) -> None:
        """Use ``transport`` from now on (:meth:`open` does this with a comm; tests with a scripted front
        end). ``answers_while_busy``: the page's replies are handled while a cell runs (kernel subshells)."""
        with self._lock:
            self._transport = transport
            self._routing = "subshells" if answers_while_busy else "none"

    @property
    def answers_while_busy(self) -> bool:
        """True when the page's replies reach the kernel while a cell runs (kernel subshells, ipykernel >=
        7)."""
        with self._lock:
            return self._routing != "none"

    def closed(self) -> None:
        """The front end closed the comm (or it was never understood): no front end is attached."""
        with self._lock:
            self._transport = None
        self._forget_all("the notebook's front end closed the connection")

    def close(self) -> None:
        """Close the comm from the kernel's side (the kernel shuts down)."""
        with self._lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()
        self._forget_all("the kernel closed the connection")

    # --- who is attached ------------------------------------------------------------------------------------

    @property
    def attached(self) -> bool:
        """True while a front end with the extension is attached (the cell tools are offered then)."""
        with self._lock:
            return self._transport is not None and bool(self._front_ends)

    def front_end(self) -> FrontEnd | None:
        """The front end requests go to: the newest that said hello."""
        with self._lock:
            return max(self._front_ends.values(), key=lambda f: f.since, default=None)

    @property
    def path(self) -> str:
        """The path of the notebook the cell tools act on (the target page's), "" while none is attached."""
        front_end = self.front_end() if self.attached else None
        return front_end.path if front_end is not None else ""

    def on_path(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(path)`` whenever :attr:`path` may have changed (a page came, went, was renamed)."""
        with self._lock:
            self._path_listeners.append(callback)

    def on_change(self, callback: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``callback(attached)`` whenever :attr:`attached` changes (on any thread); returns an
        unsubscribe."""
        with self._lock:
            self._listeners.append(callback)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return unsubscribe

    def on_action(self, kind: str, handler: Callable[[str, Mapping[str, Any]], None]) -> None:
        """Handle a page's own messages of ``kind`` (a user's click: ``handler(client, data)``, on the comm's
        thread: it must return at once)."""
        with self._lock:
            self._actions[kind] = handler

    def tell(self, client: str, data: dict[str, Any]) -> bool:
        """Send ``data`` to page ``client`` (what became of its action); False when no comm is open."""
        with self._lock:
            transport = self._transport
        if transport is None:
            return False
        try:
            transport.send({**data, "to": client})
        except Exception:  # the comm is gone: the page learns nothing more of it
            log.debug("document: telling the page failed", exc_info=True)
            return False
        return True

    # --- requests -------------------------------------------------------------------------------------------

    async def request(self, op: str, timeout: float = REQUEST_TIMEOUT, **fields: Any) -> Answer:
        """Ask the front end to do ``op`` and wait for its reply (an :class:`Answer`, never an exception)."""
        front_end = self.front_end()
        with self._lock:
            transport = self._transport
        if front_end is None or transport is None:
            return Answer(False, error="no notebook front end with the hermes-notebook extension is attached")
        request_id = f"r{next(self._ids)}"
        future: concurrent.futures.Future[Answer] = concurrent.futures.Future()
        with self._lock:
            self._waiting[request_id] = (front_end.id, future)
        try:
            transport.send({"type": "request", "id": request_id, "to": front_end.id, "op": op, **fields})
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            return Answer(False, error=f"the notebook did not answer within {timeout:g} s")
        except Exception as exc:  # the comm is gone mid-send: a closed kernel socket, a dead transport
            log.debug("document request %s failed", op, exc_info=True)
            return Answer(False, error=f"the notebook could not be reached ({type(exc).__name__})")
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)

    # --- messages from the front end (a shell or subshell thread) ------------------------------------------

    def receive(self, data: object) -> None:
        """Handle one message from the front end: ``hello``, ``bye`` or a ``reply``; anything else is
        dropped."""
        if not isinstance(data, Mapping):
            return
        kind, client = data.get("type"), data.get("client")
        if not isinstance(client, str) or not 0 < len(client) <= _MAX_ID:
            return
        if kind == "hello":
            app = data.get("app")
            kind_of = app if app in ("lab", "notebook") else "other"
            self._hello(FrontEnd(client, kind_of, time.monotonic(), _path(data.get("path"))))
        elif kind == "path":  # the notebook was renamed: the same page, the same place in the order
            with self._lock:
                known = self._front_ends.get(client)
                if known is not None:
                    self._front_ends[client] = FrontEnd(
                        known.id, known.app, known.since, _path(data.get("path"))
                    )
            self._paths()
        elif kind == "bye":
            self._bye(client)
        elif kind == "reply":
            self._reply(client, data)
        elif isinstance(kind, str) and kind in self._actions:
            with self._lock:
                said_hello = client in self._front_ends
            if said_hello:  # a page that said hello: its user's own click (Preview)
                self._actions[kind](client, data)

    def _hello(self, front_end: FrontEnd) -> None:
        with self._lock:
            before = self._transport is not None and bool(self._front_ends)
            self._front_ends[front_end.id] = front_end
        self._changed(before)

    def _bye(self, client: str) -> None:
        with self._lock:
            before = self._transport is not None and bool(self._front_ends)
            self._front_ends.pop(client, None)
            orphans = [f for c, f in self._waiting.values() if c == client]
        for future in orphans:
            _settle(future, Answer(False, error="the notebook page was closed"))
        self._changed(before)

    def _reply(self, client: str, data: Mapping[str, Any]) -> None:
        request_id = data.get("id")
        with self._lock:
            waiting = self._waiting.get(request_id) if isinstance(request_id, str) else None
        if waiting is None or waiting[0] != client:
            return  # late, unknown, or from a page the request did not go to
        if data.get("ok") is True:
            _settle(
                waiting[1], Answer(True, {k: v for k, v in data.items() if k not in ("type", "id", "client")})
            )
        else:
            error = data.get("error")
            stale = data.get("stale")  # a stale edit's refusal carries the cell as it is now
            _settle(
                waiting[1],
                Answer(
                    False,
                    {"stale": stale} if isinstance(stale, Mapping) else {},
                    error[:500] if isinstance(error, str) else "the notebook refused",
                ),
            )

    def _forget_all(self, why: str) -> None:
        with self._lock:
            before = bool(self._front_ends)
            self._front_ends.clear()
            orphans = [future for _client, future in self._waiting.values()]
        for future in orphans:
            _settle(future, Answer(False, error=why))
        self._changed(before)

    def _paths(self) -> None:
        with self._lock:
            listeners = list(self._path_listeners)
        path = self.path
        for callback in listeners:
            try:
                callback(path)
            except Exception:  # a listener's failure must not break the comm handler
                log.exception("document path listener failed")

    def _changed(self, before: bool) -> None:
        self._paths()  # a page came or went: the target (and its path) may be another
        now = self.attached
        if now == before:
            return
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback(now)
            except Exception:  # a listener's failure must not break the comm handler
                log.exception("document listener failed")


def _path(value: object) -> str:
    """A notebook path a page sent: text, one line, bounded ("" for anything else)."""
    return " ".join(value.split())[:_MAX_PATH] if isinstance(value, str) else ""


def _settle(future: concurrent.futures.Future[Answer], answer: Answer) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(answer)


class _CommTransport:
    def __init__(self, comm: Any) -> None:
        self._comm = comm

    def send(self, data: dict[str, Any]) -> None:
        self._comm.send(data)

    def close(self) -> None:
        self._comm.close()


def _kernel_comm() -> Any | None:
    """A new comm to :data:`TARGET` when running in an IPython kernel, else None (plain Python, a
    terminal)."""
    if host.environment() != "kernel":
        return None
    try:
        from comm import create_comm
    except ImportError:
        return None
    return create_comm(target_name=TARGET, data={"protocol": PROTOCOL})


#: The one link of this process.
DOCUMENT = DocumentLink()
