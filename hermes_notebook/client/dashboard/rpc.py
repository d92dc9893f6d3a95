"""JSON-RPC 2.0 framing for the Dashboard's ``/api/ws`` (the core matches replies to requests).

Wire rules this encodes (docs/protocol/dashboard.md §2 "WebSocket framing"):

- one JSON object per text frame in both directions; never newline-batch two requests (the server answers
  -32700) and never send binary (the server closes with ``receive_failed``);
- replies are matched by ``id`` only: pool handlers (``session.resume``, ``session.list``...) answer later
  and out of order, and a reply may arrive after events it caused;
- an error reply carries ``{"code", "message"}`` (§2.1 lists the codes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...errors import HermesProtocolError, HermesRPCError

__all__ = ["PendingCalls", "Reply", "encode_error", "encode_request", "encode_result", "rpc_error"]

#: ``(handle, result, error)``: the handle given to :meth:`PendingCalls.request` and what its reply said.
Reply = tuple[Any, Any, HermesRPCError | None]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_request(request_id: int, method: str, params: Mapping[str, Any] | None) -> str:
    """One request frame. ``params`` is always an object (a non-object gets -32602, §2)."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {})})


def encode_result(request_id: str, result: Mapping[str, Any]) -> str:
    """The answer to a server -> client request (newer Dashboards): no reply frame comes back."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": dict(result)})


def encode_error(request_id: object, code: int, message: str) -> str:
    """Refuse a server -> client request (e.g. -32601 for a method we do not handle) so nothing waits on
    us."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


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


class PendingCalls:
    """Requests awaiting a reply, by id, each with the caller's handle (a future, for the asyncio shell).

    Ids keep counting across sockets, so a late reply to a request of a closed socket never matches a new one.
    """

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, tuple[str, Any]] = {}  # id -> (method, the caller's handle)

    def request(self, method: str, params: Mapping[str, Any] | None, handle: Any = None) -> tuple[int, str]:
        """Reserve an id for a request and return ``(id, frame)``; its reply comes back with ``handle``."""
        self._next_id += 1
        request_id = self._next_id
        self._pending[request_id] = (method, handle)
        return request_id, encode_request(request_id, method, params)

    def forget(self, request_id: int) -> None:
        """The caller stopped waiting (sent nothing, cancelled or timed out): a late reply is a fault."""
        self._pending.pop(request_id, None)

    def fail_all(self) -> list[tuple[str, Any]]:
        """Every request still waiting, as ``(method, handle)``, forgotten (the socket is gone)."""
        pending, self._pending = self._pending, {}
        return list(pending.values())

    def reply(self, obj: Mapping[str, Any]) -> Reply:
        """Match a reply frame to its request; one for an id nobody waits for is a
        :class:`HermesProtocolError`."""
        request_id = obj.get("id")
        entry = self._pending.pop(request_id, None) if type(request_id) is int else None
        if entry is None:
            raise HermesProtocolError(
                f"the Dashboard sent a reply for unknown request id {request_id!r}: "
                f"{str(obj.get('error') or obj.get('result'))[:120]}"
            )
        method, handle = entry
        error = obj.get("error")
        if error is not None:
            return handle, None, rpc_error(error, method)
        return handle, obj.get("result"), None
