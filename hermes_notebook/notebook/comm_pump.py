"""Handle widget (comm) messages while a cell blocks, so buttons work mid-turn.

Why: ``%hermes`` must block (so Run All waits and ``r = %hermes ...`` feeds the next cell), yet the approval,
clarify and stop buttons it shows must reach the kernel while it waits. A blocked main thread never reads
the shell channel (ipykernel 6), nor the inproc socket the shell-channel thread forwards to it (ipykernel 7),
so a click would only be handled after the cell (and the cells queued behind it) finished.

The pump (the approach that worked when we measured ipykernel 6.29, 7.3 and 7.4) drains that stream
on the main thread: ``comm_open`` / ``comm_msg`` / ``comm_close`` are dispatched at once, with the comm
message as the kernel parent and busy/idle status around it; everything else (the queued ``execute_request``
of the next cells) is held in arrival order and handed back through the kernel's own path when the pump
closes, ahead of anything newer.

It uses private ipykernel names. :class:`CommPump` checks for them first; when something is missing it is
``available == False`` with a ``reason``, :meth:`CommPump.poll` does nothing, and the caller blocks anyway
(clicks then still work where the frontend routes comms to a subshell; ``input()`` is the text fallback).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["COMM_MSG_TYPES", "CommPump", "CommPumpWarning"]

log = logging.getLogger(__name__)

#: Shell messages the pump dispatches while the cell blocks; all others are held.
COMM_MSG_TYPES = frozenset({"comm_open", "comm_msg", "comm_close"})


class CommPumpWarning(UserWarning):
    """Warned when widget messages cannot be handled while a cell blocks (the kernel lacks the internals)."""


def _current_kernel() -> Any | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


class CommPump:
    """Dispatch comm messages now and hold every other shell message until :meth:`close`.

    Use it as a context manager around a wait loop on the kernel's main thread::

        with CommPump() as pump:
            while not done():
                pump.poll()
                time.sleep(0.02)

    ``poll()`` must run on the thread that owns the main shell stream (the main thread); anywhere else the
    pump is unavailable.
    """

    def __init__(self, kernel: Any | None = None, *, warn: bool = True) -> None:
        self.kernel: Any = kernel if kernel is not None else _current_kernel()
        self.stream: Any = None
        self.held: list[Any] = []
        #: Comm messages dispatched so far.
        self.dispatched = 0
        self.reason = ""
        self._closed = False
        self._original: Callable[..., Any] | None = None
        self._version = ""
        self.reason = self._locate()
        if self.reason and warn:
            warnings.warn(
                f"widget buttons may not respond while this cell waits ({self.reason})",
                CommPumpWarning,
                stacklevel=2,
            )

    @property
    def available(self) -> bool:
        """True when :meth:`poll` can handle comm messages on this kernel and thread."""
        return not self.reason and not self._closed

    @property
    def version(self) -> str:
        """Which kernel path is used: ``"ipykernel6"``, ``"ipykernel7"`` or ``""`` when unavailable."""
        return self._version

    # --- finding the stream -------------------------------------------------------------------------

    def _locate(self) -> str:
        kernel = self.kernel
        if kernel is None:
            return "not running in an IPython kernel"
        for name in ("session", "shell_handlers", "_publish_status", "set_parent", "get_parent"):
            if not hasattr(kernel, name):
                return f"the kernel has no {name!r}"
        channel_thread = getattr(kernel, "shell_channel_thread", None)
        if channel_thread:
            try:
                manager = channel_thread.manager
                stream = manager._shell_channel_to_main.to_stream
                owner = manager._parent_thread
            except AttributeError as exc:
                return f"ipykernel internals changed ({exc})"
            if owner is not threading.current_thread():
                return "not on the kernel's main thread"
            parent = kernel.get_parent("shell") or {}
            if (parent.get("header") or {}).get("subshell_id"):
                return "the cell runs in a subshell"
            self._version = "ipykernel7"
        else:
            stream = getattr(kernel, "shell_stream", None)
            if stream is None:
                return "the kernel has no shell stream"
            if not hasattr(kernel, "schedule_dispatch"):
                return "the kernel has no 'schedule_dispatch'"
            if threading.current_thread() is not threading.main_thread():
                return "not on the kernel's main thread"
            self._version = "ipykernel6"
        if stream is None or not hasattr(stream, "_recv_callback") or not hasattr(stream, "flush"):
            return "the shell stream has no '_recv_callback'/'flush'"
        if stream._recv_callback is None:
            return "the shell stream has no receive callback"
        self.stream = stream
        self._original = stream._recv_callback
        return ""

    # --- pumping --------------------------------------------------------------------------------------

    def poll(self) -> int:
        """Read what has arrived; dispatch comm messages now, hold the rest. Returns messages read."""
        if not self.available:
            return 0
        stream = self.stream
        received: list[Any] = []
        saved = stream._recv_callback
        stream._recv_callback = received.append
        try:
            stream.flush(_POLLIN)
        finally:
            stream._recv_callback = saved
        for frames in received:
            if self._is_comm(frames):
                self._dispatch(frames)
            else:
                self.held.append(frames)
        return len(received)

    def _is_comm(self, frames: Any) -> bool:
        session = self.kernel.session
        try:
            _idents, rest = session.feed_identities(frames, copy=False)
            header = session.deserialize(rest, content=False, copy=False)["header"]
        except Exception:  # not ours to judge: hand it back to the kernel untouched
            return False
        return header.get("msg_type") in COMM_MSG_TYPES

    def _dispatch(self, frames: Any) -> None:
        kernel = self.kernel
        session = kernel.session
        cell_ident = _parent_ident(kernel)
        cell_parent = kernel.get_parent("shell")
        try:
            idents, rest = session.feed_identities(frames, copy=False)
            msg = session.deserialize(rest, content=True, copy=False)
        except Exception:
            log.warning("dropping a comm message that does not parse", exc_info=True)
            return
        handler = kernel.shell_handlers.get(msg["header"]["msg_type"])
        if handler is None:
            return
        try:
            kernel.set_parent(idents, msg, channel="shell")
            kernel._publish_status("busy", "shell")
            try:
                result = handler(None, idents, msg)
                if inspect.isawaitable(result):  # not the case in 6.29-7.4; run it on the kernel loop
                    asyncio.ensure_future(result)
            except Exception:
                log.error("a widget message handler failed", exc_info=True)
            self.dispatched += 1
            kernel._publish_status("idle", "shell")
        finally:
            # The cell's later output must still go to the cell.
            kernel.set_parent(cell_ident, cell_parent, channel="shell")

    def close(self) -> None:
        """Hand the held messages back to the kernel, in arrival order, ahead of anything newer."""
        if self._closed:
            return
        self._closed = True
        held, self.held = self.held, []
        if not held or self._original is None:
            return
        original = self._original
        for frames in held:
            try:
                result = original(frames)
                if inspect.isawaitable(result):  # ipykernel 7: a task that queues on the main-shell lock
                    asyncio.ensure_future(result)
            except Exception:
                log.error("could not hand a held shell message back to the kernel", exc_info=True)

    def __enter__(self) -> CommPump:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parent_ident(kernel: Any) -> Any:
    try:
        return kernel._parent_ident["shell"]
    except (AttributeError, KeyError, TypeError):
        return b""


try:
    import zmq

    _POLLIN: int = int(zmq.POLLIN)
except ImportError:  # pragma: no cover - only inside kernels, which always have pyzmq
    _POLLIN = 1
