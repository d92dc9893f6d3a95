"""The Dashboard client: JSON-RPC 2.0 over ``/api/ws`` plus REST history, with reconnects.

Two sides. The pure one holds the protocol state and decisions and imports no event loop or transport:
``core.DashboardCore`` (frames in; replies, listener items and frames out) with ``routing`` (a session's
events to its turns, catch-up after a drop), ``turn_state`` (a turn's producer side), ``prompts`` (open server
requests and how an answer goes back), ``server_requests`` and ``rpc``. The asyncio shell around it:
``channel.Channel`` owns the socket and its read loop, ``reconnect.Reconnector`` the waits and resumes after a
drop, ``turn.Turn`` is the caller's handle on a turn, and ``connection.DashboardConnection`` is the public
API, delegating to them.
"""

from __future__ import annotations

from .backoff import Backoff
from .connection import DashboardConnection, SessionRef
from .session import Listener, ListenerItem
from .turn import Turn

__all__ = ["Backoff", "DashboardConnection", "Listener", "ListenerItem", "SessionRef", "Turn"]
