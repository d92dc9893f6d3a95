"""Drops and reconnects: fail or keep what was open, tell listeners, and bring sessions back with growing waits.

After a drop the connection waits (its :class:`~.backoff.Backoff`), reconnects and resumes every listened
session and every session whose turns a newer server lets us keep (docs/protocol/dashboard.md §5,
docs/protocol/dashboard-newer.md §4). Listeners are told ``disconnected``, ``reconnecting`` and ``reconnected``.
The waits reset only after a successful resubscribe round, so a server that accepts and drops is retried at
1, 2, 4... s rather than every second.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection

from ...errors import HermesClosedError, HermesGatewayClosedError
from . import replay
from .session import ListenerItem
from .ws import close_detail

if TYPE_CHECKING:
    from .connection import DashboardConnection

__all__ = ["bring_back", "notify", "on_drop", "resubscribe", "start"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")


def on_drop(conn: DashboardConnection, ws: ClientConnection, cause: BaseException | None) -> None:
    """The socket ``ws`` closed: fail waiting requests, fail or keep open turns, tell listeners, start retrying."""
    if conn._ws is not ws:
        return
    conn._ws = None
    conn._reader = None
    detail = close_detail(cause)
    for method, future in conn._core.fail_requests():
        if not future.done():
            future.set_exception(
                HermesGatewayClosedError(f"{method} got no reply: the Dashboard connection closed{detail}")
            )
    text = f"The Dashboard connection closed before the turn finished{detail}."
    # A newer server keeps a replay ring per session (replay_epoch): open turns stay open across the drop and
    # are caught up after the reconnect (session.events.since) instead of failing.
    conn._core.dropped(text, conn._reconnect is not None and conn.replay_epoch is not None and not conn._closed)
    if conn._closed:
        return
    conn._dropped_at = asyncio.get_running_loop().time()
    conn._drop_text = text
    will_retry = conn._reconnect is not None and (bool(conn._core.listeners) or conn._core.has_suspended())
    retry_in = conn._reconnect.min_delay if will_retry and conn._reconnect else None
    error = HermesGatewayClosedError(f"the Dashboard connection to {conn.url} closed{detail}")
    for stored_id in list(conn._core.listeners):
        conn._told_disconnected.add(stored_id)
        notify(conn, stored_id, "disconnected", retry_in, error)
    if will_retry:
        start(conn)


def start(conn: DashboardConnection) -> None:
    """Start the reconnect loop unless it runs already."""
    if conn._reconnect_task is None or conn._reconnect_task.done():
        conn._reconnect_task = asyncio.ensure_future(_loop(conn))


def _wanted(conn: DashboardConnection) -> bool:
    """Whether some session to maintain is not back on an open socket (and reconnects are on)."""
    if conn._closed or conn._reconnect is None:
        return False
    core = conn._core
    wanted = core.maintained()
    if not wanted:
        return False
    return conn._ws is None or any(
        (s := core.sessions.get(sid)) is None or s.ref._generation != core.generation or s.suspended
        for sid in wanted
    )


async def _loop(conn: DashboardConnection) -> None:
    """Wait, connect, resume listened sessions; repeat with growing waits until all are back (§5)."""
    assert conn._reconnect is not None
    delays = iter(conn._reconnect)
    while _wanted(conn):
        delay = next(delays)
        await _pause(conn, delay)
        if not _wanted(conn):
            break
        if conn._ws is None:
            try:
                await conn._open()
            except HermesClosedError:
                return
            except Exception as exc:  # noqa: BLE001 - every failure is retried; cancellation passes
                logger.info("Dashboard connect failed; reconnecting in %.1f s: %s", delay, exc)
                for stored_id in list(conn._core.listeners):
                    notify(conn, stored_id, "reconnecting", delay, exc)
                replay.give_up_suspended(conn)
                continue
        ws = conn._ws
        failed = await resubscribe(conn)
        if not failed and ws is not None and conn._ws is ws:
            # Reset only once the sessions are back on a socket that is still open: a server that accepts
            # and then drops (or fails every resume) keeps the waits growing.
            delays = iter(conn._reconnect)


async def _pause(conn: DashboardConnection, delay: float) -> None:
    """Sleep ``delay`` with the injectable clock, or less if a caller connected meanwhile."""
    if conn._wake is None:
        conn._wake = asyncio.Event()
    conn._wake.clear()
    sleeper = asyncio.ensure_future(conn._sleep(delay))
    waker = asyncio.ensure_future(conn._wake.wait())
    try:
        await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sleeper.cancel()
        waker.cancel()


async def bring_back(conn: DashboardConnection) -> None:
    """Resume what belongs on the current socket now; what fails is retried by the reconnect loop."""
    if await resubscribe(conn) and conn._reconnect is not None:
        start(conn)


async def resubscribe(conn: DashboardConnection) -> list[str]:
    """Resume every listened session not yet bound to this socket; returns the stored ids that failed."""
    failed: list[str] = []
    for stored_id in conn._core.maintained():
        session = conn._core.sessions.get(stored_id)
        if session is not None and session.ref._generation == conn._core.generation and not session.suspended:
            continue
        try:
            await conn.resume(stored_id)
        except HermesClosedError:
            return failed
        except Exception as exc:  # noqa: BLE001 - reported, then retried by the reconnect loop
            failed.append(stored_id)
            conn._callbacks.report("listen", exc)
            continue
        if stored_id in conn._told_disconnected:
            conn._told_disconnected.discard(stored_id)
            notify(conn, stored_id, "reconnected", None, None)
    return failed


def notify(
    conn: DashboardConnection, stored_id: str, status: Any, retry_in: float | None, error: BaseException | None
) -> None:
    """Hand a ``connection`` item (disconnected, reconnecting, reconnected) to the session's listeners."""
    listeners = conn._core.listeners.get(stored_id)
    if listeners:
        session = conn._core.sessions.get(stored_id)
        item = ListenerItem("connection", session.ref if session else None, status=status, retry_in=retry_in,
                            error=error)
        conn._callbacks.deliver(listeners, item)
