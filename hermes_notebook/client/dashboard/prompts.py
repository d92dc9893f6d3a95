"""The connection's side of prompts: the capability handshake, and answers sent back (a newer server's result
frames, or 0.19.0's ``*.respond`` RPCs).

Routing request frames to their session's turn and refusing what we cannot show is the core's
(:mod:`.core`); the pure mapping (request -> prompt event, answer string -> result object) is in
:mod:`.server_requests`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from websockets.exceptions import ConnectionClosed

from ...errors import HermesGatewayClosedError, HermesRPCError, HermesUsageError
from .core import METHOD_NOT_FOUND

if TYPE_CHECKING:
    from ...turns import TurnFolder
    from .connection import DashboardConnection
    from .session import SessionRef, _Session
    from .turn import Turn

__all__ = ["RESPOND_METHODS", "RESPOND_VALUE_KEYS", "answer", "answer_server_request", "handshake", "request"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")
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
    conn._core.set_capabilities(result)


async def request(conn: DashboardConnection, method: str, params: dict[str, Any]) -> Any:
    """``DashboardConnection.request``: answers sent as ``*.respond`` calls also mark the interaction answered.

    A newer Dashboard asks by server request and no longer has those RPCs (-32601), so an answer to one of its
    open requests goes back as the request's result frame instead.
    """
    value_key = RESPOND_VALUE_KEYS.get(method)
    on_sent = None
    if value_key is not None and "request_id" in params:
        request_id, value = str(params["request_id"]), str(params.get(value_key, ""))
        if request_id in conn._core.open_requests:
            await answer_server_request(conn, request_id, value)
            return {"ok": True}
        on_sent = lambda: conn._core.mark_answered(request_id, value)  # noqa: E731
    return await conn._call(method, params, on_sent)


async def answer(
    conn: DashboardConnection, session: _Session, ref: SessionRef,
    found: tuple[TurnFolder, Any, Turn | None], request_id: str, response: str,
) -> None:
    """Answer an interaction: a newer server's request by its result frame, else 0.19.0's ``*.respond`` RPCs."""
    folder, inter, turn = found
    if inter.kind == "code":  # asked by this client (a kernel tool), answered here: nothing goes to the server
        if response not in inter.choices:
            raise HermesUsageError(f"{response!r} is not one of the offered choices {inter.choices}")
        if turn is None or not turn.answer_asked(request_id, response):
            raise HermesUsageError(f"{request_id!r} is no longer waiting for an answer")
        return
    if request_id in conn._core.open_requests:
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
    frame = conn._core.answer_frame(request_id, response)
    await conn._ensure_connected()
    locks = conn._core.lock_params(request_id, response)
    if locks is not None and await _lock(conn, request_id, locks):
        conn._core.answered(request_id, response)
        return
    ws = conn._ws
    if ws is None:
        raise HermesGatewayClosedError("the answer was not sent: the Dashboard connection is closed")
    try:
        await ws.send(frame)
    except ConnectionClosed:
        raise HermesGatewayClosedError("the answer was not sent: the Dashboard connection closed") from None
    finally:
        del frame  # it may hold a sudo password or secret value
    conn._core.answered(request_id, response)


async def _lock(conn: DashboardConnection, request_id: str, locks: list[dict[str, Any]]) -> bool:
    """Send a clarify's answers with ``clarify.lock``, one acknowledged call per question.

    False when the server has no such method (-32601: the result frame goes instead). A lock answered
    ``expired`` means the request settled on the server first (timed out, or answered by another client).
    """
    for params in locks:
        try:
            result = await conn._call("clarify.lock", params)
        except HermesRPCError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise
            conn._core.clarify_locks = False
            return False
        conn._core.clarify_locks = True
        if isinstance(result, Mapping) and result.get("status") == "expired":
            conn._core.open_requests.pop(request_id, None)
            raise HermesUsageError(
                f"clarify {request_id} was already settled by the server (it expired or was answered elsewhere); "
                "the answer was not taken"
            )
    return True
