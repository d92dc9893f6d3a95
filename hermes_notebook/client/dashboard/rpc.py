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

from ...errors import HermesRPCError

__all__ = ["encode_error", "encode_request", "encode_result", "rpc_error"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_request(request_id: int, method: str, params: Mapping[str, Any] | None) -> str:
    """One request frame. ``params`` is always an object (a non-object gets -32602, §2)."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params or {})})


def encode_result(request_id: str, result: Mapping[str, Any]) -> str:
    """The answer to a server -> client request (newer Dashboards): no reply frame comes back."""
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": dict(result)})


def encode_error(request_id: object, code: int, message: str) -> str:
    """Refuse a server -> client request (e.g. -32601 for a method we do not handle) so nothing waits on us."""
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
