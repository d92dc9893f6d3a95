"""JSON-RPC 2.0 framing for the Dashboard's ``/api/ws`` and the table of requests awaiting a reply.

Wire rules this encodes (docs/protocol/dashboard.md §2 "WebSocket framing"):

- one JSON object per text frame in both directions; never newline-batch two requests (the server answers
  -32700) and never send binary (the server closes with ``receive_failed``);
- replies are matched by ``id`` only: pool handlers (``session.resume``, ``session.list``...) answer later
  and out of order, and a reply may arrive after events it caused;
- an error reply carries ``{"code", "message"}`` (§2.1 lists the codes).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import HermesProtocolError, HermesRPCError

__all__ = ["PendingRequests", "decode_frame", "encode_request", "rpc_error"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_loads = json.loads


def encode_request(request_id: int, method: str, params: Mapping[str, Any] | None) -> str:
    """One request frame. ``params`` is always an object (a non-object gets -32602, §2)."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {})})


def decode_frame(raw: str | bytes) -> dict[str, Any]:
    """Parse one inbound frame, raising :class:`HermesProtocolError` for anything but a JSON object.

    Binary frames are refused: the server only ever sends text (``send_text``, §2).
    """
    if not isinstance(raw, str):
        raise HermesProtocolError(f"the Dashboard sent a binary frame of {len(raw)} bytes; expected JSON text")
    try:
        obj = _loads(raw)
    except ValueError as exc:
        raise HermesProtocolError(f"the Dashboard sent a frame that is not JSON: {_preview(raw)}") from exc
    if type(obj) is not dict:
        raise HermesProtocolError(
            f"the Dashboard sent a JSON {type(obj).__name__}, expected an object: {_preview(raw)}"
        )
    return obj


def _preview(raw: str, limit: int = 80) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "...")


def rpc_error(error: object, method: str | None) -> HermesRPCError:
    """Build the exception for an ``error`` member; the message names the method and the server's words."""
    if isinstance(error, Mapping):
        code = error.get("code")
        text = str(error.get("message") or "no message")
    else:
        code, text = None, str(error)
    code_int = code if isinstance(code, int) else None
    where = method or "a request"
    return HermesRPCError(f"{where} failed: {text} (code {code_int})", code=code_int, method=method)


class PendingRequests:
    """Requests sent and not yet answered: ``id -> (future, method)``.

    Ids are small integers, unique per connection object (they keep counting across reconnects, so a late
    reply from an old socket can never be taken for a new request's).
    """

    __slots__ = ("_next_id", "_pending")

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, tuple[asyncio.Future[Any], str]] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, method: str) -> tuple[int, asyncio.Future[Any]]:
        """Reserve an id and the future its reply will resolve."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = (future, method)
        return self._next_id, future

    def discard(self, request_id: int) -> None:
        """Forget a request whose caller stopped waiting (cancelled or timed out)."""
        self._pending.pop(request_id, None)

    def resolve(self, obj: Mapping[str, Any]) -> bool:
        """Settle the future for a reply frame; False when no request has that id."""
        entry = self._pending.pop(obj.get("id"), None)  # type: ignore[arg-type]
        if entry is None:
            return False
        future, method = entry
        if not future.done():
            if "error" in obj and obj["error"] is not None:
                future.set_exception(rpc_error(obj["error"], method))
            else:
                future.set_result(obj.get("result"))
        return True

    def fail_all(self, make_error: Callable[[str], BaseException]) -> None:
        """Fail every waiting request (the socket is gone); ``make_error(method)`` builds each exception."""
        pending, self._pending = self._pending, {}
        for future, method in pending.values():
            if not future.done():
                future.set_exception(make_error(method))
