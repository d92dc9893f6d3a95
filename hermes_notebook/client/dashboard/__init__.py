"""The Dashboard client: JSON-RPC 2.0 over ``/api/ws`` plus REST history, with reconnects.

``connection.DashboardConnection`` is the asyncio shell; ``rpc`` frames requests and matches replies,
``ws`` dials, ``session``/``turn`` track listened sessions and open turns, ``backoff`` paces reconnects,
``server_requests`` maps a newer Dashboard's server -> client prompts onto the turn model and back.
"""

from __future__ import annotations

from .backoff import Backoff
from .connection import DashboardConnection, SessionRef
from .session import Listener, ListenerItem
from .turn import Turn

__all__ = ["Backoff", "DashboardConnection", "Listener", "ListenerItem", "SessionRef", "Turn"]
