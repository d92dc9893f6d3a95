"""Calling a Dashboard method that not every Hermes has, and saying so in one line when it is missing.

Which methods a server has is learned from its answer, never from a version string: a server without the
method answers JSON-RPC -32601 (docs/protocol/dashboard-newer.md §1.2), which becomes a
:class:`HermesNotOfferedError` "... is not offered by this Hermes (<method>)". A live id the server no longer
holds (4001, docs/protocol/dashboard.md §2.1) is resumed once and the call sent again. A session Hermes still
calls busy (4009) right after its turn ended here is asked again for a moment, as :mod:`.compaction` does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import HermesNotOfferedError, HermesRPCError
from .compaction import BUSY, RETRY_EVERY, SETTLE_SECONDS
from .core import METHOD_NOT_FOUND

if TYPE_CHECKING:
    from .session import SessionRef

__all__ = ["STALE_SESSION", "Requester", "call_offered", "not_offered"]


class Requester(Protocol):
    """What :func:`call_offered` needs of a connection (a protocol, so the connection itself may call it)."""

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any: ...

    async def resume(self, stored_id: str | SessionRef) -> SessionRef: ...

    def open_turns(self, stored_id: str | SessionRef) -> int: ...


#: The server no longer holds that live session id (§2.1): resume by stored id and retry once.
STALE_SESSION = 4001


def not_offered(what: str, method: str) -> HermesNotOfferedError:
    """The one-line refusal for a feature this server does not have."""
    return HermesNotOfferedError(what, method)


async def call_offered(
    conn: Requester,
    method: str,
    params: Mapping[str, Any],
    *,
    what: str,
    ref: SessionRef | None = None,
) -> Any:
    """``conn.request(method, params)``, with ``ref``'s live id as ``session_id``; -32601 is
    :func:`not_offered`."""
    resumed = False
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while True:
        sent = {**params, "session_id": ref.live_id} if ref is not None else dict(params)
        try:
            return await conn.request(method, sent)
        except HermesRPCError as exc:
            if exc.code == METHOD_NOT_FOUND:
                raise not_offered(what, method) from None
            if exc.code == STALE_SESSION and ref is not None and not resumed:
                resumed = True
                await conn.resume(ref)
                continue
            idle_here = ref is not None and conn.open_turns(ref) == 0
            if exc.code == BUSY and idle_here and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(RETRY_EVERY)
                continue
            raise
