"""Lossless reconnects on newer Dashboards: open turns kept across a drop, the event gap filled, prompts restored.

A newer server numbers every session event (``seq``, scoped by ``gateway.ready.replay_epoch``) and keeps a
replay ring per session (docs/protocol/dashboard-newer.md §4). After a drop the connection keeps open turns
(``_Session.suspended``); when the session is resumed here with the same epoch and live id,
``session.events.since`` returns what was emitted meanwhile and the turn simply continues. A new epoch means the
Dashboard restarted and its turns died with it: the kept turns end with a message that says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import HermesError, HermesGatewayClosedError
from ...turns.events import Event
from .server_requests import PROMPT_METHODS, ServerRequest, prompt_event

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .core import DashboardCore
    from .session import _Session

__all__ = ["LOSSLESS_RECONNECT_WINDOW", "catch_up", "give_up_suspended", "restore_requests", "seed_inflight", "settle"]

#: Seconds open turns are kept across a drop (newer Dashboards) before they fail like on 0.19.0.
LOSSLESS_RECONNECT_WINDOW = 60.0
_from_frame = Event.from_dashboard_frame


def give_up_suspended(conn: DashboardConnection) -> None:
    """Open turns kept across a drop fail once the server has been away longer than the catch-up window."""
    if conn._ws is not None or not conn._core.has_suspended():
        return
    if asyncio.get_running_loop().time() - conn._dropped_at < LOSSLESS_RECONNECT_WINDOW:
        return
    text = conn._drop_text
    for session in conn._core.sessions.values():
        if session.suspended:
            session.end_turns("error", lambda: HermesGatewayClosedError(text), text)


async def catch_up(
    conn: DashboardConnection, session: _Session, resumed: Mapping[str, Any], same_stream: bool, epoch: str | None
) -> None:
    """After a (re)resume on a newer server: ask for the event gap (same stream only), then :func:`settle`."""
    since: Any = None
    failure: HermesError | None = None
    if same_stream:
        try:
            since = await conn._call(
                "session.events.since", {"session_id": session.ref.live_id, "last_seen": session.last_seq}
            )
        except HermesError as exc:
            failure = exc
    settle(conn._core, session, resumed, same_stream, epoch, since, failure)


def settle(
    core: DashboardCore, session: _Session, resumed: Mapping[str, Any], same_stream: bool, epoch: str | None,
    since: object = None, failure: HermesError | None = None,
) -> None:
    """Fill the event gap, restore open prompts, or end kept turns (no I/O: ``since`` is the server's answer).

    Same epoch and live id: ``session.events.since`` replays what was emitted while we were away, so an open
    turn continues; a new epoch (the Dashboard restarted: its turns died with it) or a truncated ring ends the
    turns kept open with a clear message. ``open_requests`` brings back prompts pending across the drop.
    """
    source: Mapping[str, Any] = resumed
    ended: str | None = None
    if same_stream:
        if failure is not None:
            ended = f"The Dashboard connection dropped and the missed events could not be fetched ({failure})."
        buffered, session.buffer = session.buffer or [], None
        if isinstance(since, Mapping) and since.get("truncated"):
            ended = ("The Dashboard connection dropped for so long that part of this turn was lost; "
                     "the session's history has the full reply.")
        if ended is None and isinstance(since, Mapping):
            source = since
            for params in since.get("events") or []:
                event = _from_frame({"method": "event", "params": params}) if isinstance(params, dict) else None
                seq = params.get("seq") if isinstance(params, dict) else None
                if event is not None and type(seq) is int:
                    session.feed_seq(seq, event)
            for seq, event in buffered:
                session.feed_seq(seq, event)
    else:
        session.buffer = None
        if session.suspended:
            ended = ("The Dashboard restarted while this turn was running, so the turn stopped there; "
                     "the session's history keeps what was said. Send the prompt again to continue.")
        if session.epoch != epoch:
            session.last_seq = 0
    if ended is not None:
        text = ended
        session.end_turns("error", lambda: HermesGatewayClosedError(text), text)
        session.last_seq = 0
    session.suspended = False
    session.epoch = epoch
    restore_requests(core, session, source.get("open_requests"))


def restore_requests(core: DashboardCore, session: _Session, entries: object) -> None:
    """Prompts still open on the server (``open_requests``): answerable again by their original id."""
    if not isinstance(entries, list):
        return
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        request_id, method, params = entry.get("id"), entry.get("method"), entry.get("params")
        if not (isinstance(request_id, str) and isinstance(method, str) and method in PROMPT_METHODS):
            continue
        request = ServerRequest(request_id, method, params if isinstance(params, Mapping) else {})
        core.open_requests[request_id] = request
        event = prompt_event(request)
        if event is not None:
            session.feed(event)  # the turn model ignores an id it already shows


def seed_inflight(session: _Session, inflight: Mapping[str, Any]) -> None:
    """A turn still running when we resumed: start its folder with the text so far.

    See docs/protocol/dashboard.md §5 (parked sessions) and docs/protocol/dashboard-newer.md §4.2.
    """
    folder = session.open_unsolicited()
    folder.apply(Event("message.start", {}, session.ref.live_id))
    text = inflight.get("assistant")
    if isinstance(text, str) and text:
        folder.apply(Event("message.delta", {"text": text}, session.ref.live_id))
