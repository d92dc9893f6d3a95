"""Async clients for the two Hermes servers: the API Server (HTTP) and the Dashboard (JSON-RPC WebSocket).

Names are imported lazily so that importing one client does not import the other's transport.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ApiClient",
    "Backoff",
    "DashboardConnection",
    "Job",
    "JobsClient",
    "ListenerItem",
    "RunEvent",
    "RunRef",
    "SessionRef",
    "Turn",
]

_WHERE = {
    "ApiClient": ".api",
    "RunEvent": ".api",
    "RunRef": ".api",
    "Job": ".jobs",
    "JobsClient": ".jobs",
    "Backoff": ".dashboard",
    "DashboardConnection": ".dashboard",
    "SessionRef": ".dashboard",
    "ListenerItem": ".dashboard",
    "Turn": ".dashboard",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
