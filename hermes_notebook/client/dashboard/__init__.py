"""The Dashboard client: JSON-RPC 2.0 over ``/api/ws`` plus REST history, with reconnects.

``connection.DashboardConnection`` is the asyncio shell around ``core.DashboardCore`` (the sans-I/O protocol:
frames in; replies, listener items and frames out); ``rpc`` frames requests, ``ws`` dials, ``session``/``turn``
track listened sessions and open turns, ``reconnect`` and ``backoff`` bring sessions back after a drop,
``server_requests`` maps a newer Dashboard's server -> client prompts onto the turn model and back.
"""

from __future__ import annotations

from .backoff import Backoff
from .connection import DashboardConnection, SessionRef
from .session import Listener, ListenerItem
from .turn import Turn

__all__ = ["Backoff", "DashboardConnection", "Listener", "ListenerItem", "SessionRef", "Turn"]
