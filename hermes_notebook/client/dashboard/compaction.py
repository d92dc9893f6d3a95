"""``session.compress``: compress a Dashboard session's context on request, and remember to show it.

The server answers with counts (docs/protocol/dashboard.md §3 ``session.compress``); the session's next turn
opens with a ``marker`` part saying what happened (see :mod:`hermes_notebook.turns.compression`). The answer's
``messages`` (the whole compacted transcript) and ``info`` (the full session info) are not passed on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ...errors import HermesRPCError, HermesUsageError
from ...turns.compression import compress_result_text, compressions_of
from .channel import Channel
from .routing import SessionState

__all__ = ["BUSY", "RETRY_EVERY", "SETTLE_SECONDS", "compress_session"]

_DROPPED_KEYS = ("messages", "info", "host_ack")
BUSY = 4009  # "session busy": a turn is running (§1 error codes)
# The server sends message.complete before it marks the session idle, so a compress right after a turn can
# still be told "busy": retry for this long while we know of no open turn.
SETTLE_SECONDS = 3.0
RETRY_EVERY = 0.1


async def compress_session(
    channel: Channel, session: SessionState, focus_topic: str | None
) -> dict[str, Any]:
    """Call ``session.compress`` and queue the marker for the session's next turn.

    Raises :class:`HermesRPCError` 4009 while a turn of the session runs (after :data:`SETTLE_SECONDS` of
    retries when the turn already ended here and the server has not caught up).
    """
    if focus_topic is not None and not isinstance(focus_topic, str):
        raise HermesUsageError(f"focus_topic must be a string, not {type(focus_topic).__name__}")
    params: dict[str, Any] = {"session_id": session.ref.live_id}
    if focus_topic and focus_topic.strip():
        params["focus_topic"] = focus_topic.strip()
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while True:
        try:
            answer = await channel.call("session.compress", params)
            break
        except HermesRPCError as exc:
            if exc.code != BUSY or not session.idle or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(RETRY_EVERY)
    result = (
        {k: v for k, v in answer.items() if k not in _DROPPED_KEYS} if isinstance(answer, Mapping) else {}
    )
    session.note_compression(compress_result_text(result), compressions_of(result.get("usage")))
    return result
