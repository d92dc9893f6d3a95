"""A Dashboard session's stored transcript over REST (``GET /api/sessions/{id}/messages``), folded into
messages.

httpx is imported only when history is used. Rows are folded by the same turn model as live events, so part
ids match the live ones. 0.19.0 returns every row of the compression tip segment; newer servers return the
latest 500 without ``limit`` (docs/protocol/dashboard-newer.md §5.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from ...errors import HermesNotFoundError, HermesProtocolError
from ...settings import Settings
from ...turns import Message, TransformOutput, fold_history

__all__ = ["fetch_history"]


async def fetch_history(
    settings: Settings, stored_id: str, limit: int | None, transform_output: TransformOutput | None
) -> list[Message]:
    """The session's messages; a 404 (unknown id, or a session never prompted) is an empty history."""
    from .._http import HttpTransport

    path = f"/api/sessions/{quote(stored_id, safe='')}/messages"
    async with HttpTransport(
        settings.dashboard_url,
        settings.dashboard_token,
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        auth_header="X-Hermes-Session-Token",
        auth_scheme=None,
        missing_key_hint="pass token=... or set HERMES_DASHBOARD_TOKEN",
        proxy=settings.proxy_for(settings.dashboard_url),
    ) as http:
        try:
            params: dict[str, str | int] = {"limit": limit} if limit else {}
            if settings.profile is not None:  # that profile's state.db (client/dashboard/profiles.py)
                params["profile"] = settings.profile
            body = await http.request_json("GET", path, params=params or None)
        except HermesNotFoundError:
            return []
    rows = body.get("messages") if isinstance(body, Mapping) else None
    if not isinstance(rows, list):
        raise HermesProtocolError(f"GET {path} answered without a messages list")
    return fold_history(rows, transform_output=transform_output)
