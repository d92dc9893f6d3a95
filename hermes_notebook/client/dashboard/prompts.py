"""The connection's side of server -> client prompts: the capability handshake, routing request frames to their
session's turn, refusing what we cannot show, and sending answers back as result frames.

The pure mapping (request -> prompt event, answer string -> result object) is in :mod:`.server_requests`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from ...errors import HermesGatewayClosedError, HermesRPCError, HermesUsageError
from ...turns.events import Event
from .rpc import encode_error, encode_result
from .server_requests import PROMPT_METHODS, ServerRequest, answer_result, prompt_event

if TYPE_CHECKING:
    from ...turns import TurnFolder
    from .connection import DashboardConnection
    from .session import SessionRef, _Session
    from .turn import Turn

__all__ = ["RESPOND_METHODS", "RESPOND_VALUE_KEYS", "answer", "answer_server_request", "forget_requests", "handshake", "mark_answered", "on_broadcast",
           "on_server_request", "send_soon"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")
METHOD_NOT_FOUND = -32601
# 0.19.0: answers to blocking prompts and the parameter that carries the answer
# (docs/protocol/dashboard.md §3.1, §4.2).
RESPOND_METHODS = {"clarify": "clarify.respond", "sudo": "sudo.respond", "secret": "secret.respond"}
RESPOND_VALUE_KEYS = {
    "clarify.respond": "answer",
    "sudo.respond": "password",
    "secret.respond": "value",
    "terminal.read.respond": "text",
}


async def handshake(conn: DashboardConnection) -> None:
    """Advertise that we answer server requests (newer Dashboards withdraw every prompt otherwise).

    Sent on every socket: the server forgets the advertisement when a socket closes. A 0.19.0 server answers
    -32601, which is how it is told apart (docs/protocol/dashboard-newer.md §1.2, §7).
    """
    try:
        result = await conn._call("client.capabilities", {"server_requests": True})
    except HermesRPCError as exc:
        if exc.code != METHOD_NOT_FOUND:
            logger.warning("client.capabilities failed; prompts may be withdrawn by the server: %s", exc)
        return
    methods = result.get("server_requests") if isinstance(result, Mapping) else None
    conn._server_request_methods = frozenset(
        m for m in (methods if isinstance(methods, list) else PROMPT_METHODS) if isinstance(m, str)
    )


def on_broadcast(conn: DashboardConnection, event: Event) -> None:
    """Session-less events: ``gateway.ready`` (features) and newer servers' ``*.changed`` refetch signals."""
    kind = event.type
    if kind == "gateway.ready":
        conn._ready = event.payload
    elif kind.endswith(".changed") and conn._change_listeners:
        for callback in conn._change_listeners:
            try:
                callback(kind[: -len(".changed")])
            except Exception as exc:  # noqa: BLE001 - one bad callback must not stop the others
                conn._report("listener", exc)


def on_server_request(conn: DashboardConnection, obj: Mapping[str, Any], method: object) -> None:
    """A server -> client request: a prompt becomes an interaction of its session; anything else is refused."""
    request_id = obj.get("id")
    params = obj.get("params")
    if isinstance(request_id, str) and isinstance(method, str) and method in PROMPT_METHODS:
        request = ServerRequest(request_id, method, params if isinstance(params, Mapping) else {})
        event = prompt_event(request)
        if event is not None:
            conn._open_requests[request_id] = request
            session = conn._by_live.get(request.session_id)
            if session is not None:
                session.feed(event)
            # else: the server only asks clients attached to the session, so a resume of it is under way
            # (its reply was read, its binding not yet made): _bind shows the prompt. Never refused: an
            # error answer would withdraw it for every client.
            return
    # Answer at once: the agent would otherwise wait out its timeout on a prompt nobody here can show.
    send_soon(conn, encode_error(request_id, METHOD_NOT_FOUND, f"method not handled by this client: {method}"))


def forget_requests(conn: DashboardConnection, live_id: str) -> None:
    """Drop the open prompts of a session whose turn ended (settled elsewhere, without a cancel)."""
    for request_id in [k for k, r in conn._open_requests.items() if r.session_id == live_id]:
        del conn._open_requests[request_id]


def send_soon(conn: DashboardConnection, frame: str) -> None:
    """Send a frame from the read loop (which cannot await); a closed socket just drops it."""
    ws = conn._ws
    if ws is not None:
        conn._spawn(_send_quietly(ws, frame))


async def answer(
    conn: DashboardConnection, session: _Session, ref: SessionRef,
    found: tuple[TurnFolder, Any, Turn | None], request_id: str, response: str,
) -> None:
    """Answer an interaction: a newer server's request by its result frame, else 0.19.0's ``*.respond`` RPCs."""
    folder, inter, turn = found
    if request_id in conn._open_requests:
        if inter.kind == "approval" and inter.choices and response not in inter.choices:
            raise HermesUsageError(f"{response!r} is not one of the approval's choices {inter.choices}")
        await answer_server_request(conn, request_id, response)
        return

    def answered() -> None:
        # Recorded as soon as the answer is on the wire: the tool can complete (and its event arrive) before
        # the reply does, and a completed tool would otherwise show the interaction as cancelled.
        changes = folder.answer(request_id, response)
        if turn is not None and changes:
            turn._push(changes)

    if inter.kind == "approval":
        if inter.choices and response not in inter.choices:
            raise HermesUsageError(f"{response!r} is not one of the approval's choices {inter.choices}")
        oldest = next(
            (i for t in session.turns for i in t._folder.pending() if i.kind == "approval"), None
        ) or inter
        if oldest.request_id != request_id:
            raise HermesUsageError(
                f"answer {oldest.request_id} first: approval.respond resolves the oldest pending approval"
            )
        await conn._call("approval.respond", {"session_id": ref.live_id, "choice": response}, answered)
    else:
        method = RESPOND_METHODS.get(inter.kind)
        if method is None:
            raise HermesUsageError(f"cannot answer a {inter.kind!r} interaction")
        await conn._call(method, {"request_id": request_id, RESPOND_VALUE_KEYS[method]: response}, answered)


async def answer_server_request(conn: DashboardConnection, request_id: str, response: str) -> None:
    """Send the result frame for an open server request and record the answer (no reply comes back)."""
    request = conn._open_requests.get(request_id)
    if request is None:
        raise HermesUsageError(f"no pending interaction {request_id!r}")
    frame = encode_result(request_id, answer_result(request, response))
    await conn._ensure_connected()
    ws = conn._ws
    if ws is None:
        raise HermesGatewayClosedError("the answer was not sent: the Dashboard connection is closed")
    try:
        await ws.send(frame)
    except ConnectionClosed:
        raise HermesGatewayClosedError("the answer was not sent: the Dashboard connection closed") from None
    finally:
        del frame  # it may hold a sudo password or secret value
    conn._open_requests.pop(request_id, None)
    mark_answered(conn, request_id, response)


def mark_answered(conn: DashboardConnection, request_id: str, value: str) -> None:
    """Record an answer on the open turn holding the interaction (sudo/secret values redacted by the model)."""
    for session in conn._sessions.values():
        found = session.find_interaction(request_id)
        if found is not None:
            folder, _, turn = found
            changes = folder.answer(request_id, value)
            if turn is not None and changes:
                turn._push(changes)
            return


async def _send_quietly(ws: ClientConnection, frame: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(frame)
