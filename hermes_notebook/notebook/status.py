"""``Hermes.status()``: both servers reachable or not, their versions and features, and this connection's
state; and the facade's one-line repr of the same state.

Why its own module: it asks each server in turn and turns every failure into a line of the result (a status
check never raises), which is not the facade's business; the facade hands over its client factories.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import HermesError
from ..inert import redact_url
from ..kernel.share import KERNEL
from .results import Status

if TYPE_CHECKING:
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection
    from ..session import Conversation
    from ..settings import Settings

__all__ = ["facade_repr", "facade_status", "gather_status"]


class StatusSource(Protocol):
    """What :func:`facade_status` uses of the facade."""

    settings: Settings
    default_via: str
    conversation: Conversation


def facade_repr(hermes: StatusSource) -> str:
    """``repr(hermes)``: where it connects (no credentials in the URLs), its default path and session."""
    settings = hermes.settings
    dashboard = redact_url(settings.dashboard_url) if settings.dashboard_token else "not configured"
    return (
        f"<Hermes api={redact_url(settings.api_url)} dashboard={dashboard} via={hermes.default_via} "
        f"session={hermes.conversation.current or 'none yet'}>"
    )


async def facade_status(hermes: StatusSource) -> Status:
    """``hermes.status()``: both servers, this connection's session, and what it shares of the kernel."""
    conversation = hermes.conversation
    status = await gather_status(
        hermes.settings, hermes.default_via, conversation.current, conversation.api, conversation.dashboard
    )
    return Status({**status, "kernel": KERNEL.summary(conversation)})


async def gather_status(
    settings: Settings,
    via: str,
    session: str | None,
    api_client: Callable[[], Awaitable[ApiClient]],
    dashboard: Callable[[], Awaitable[DashboardConnection]],
) -> Status:
    """Ask the API Server (health, capabilities) and, when a token is set, the Dashboard; failures become
    lines."""
    info: dict[str, Any] = {"via": via, "session": session}
    api = await api_client()
    try:
        health = await api.health()
        info["api"] = {"url": settings.api_url, "ok": health.ok, "version": health.version}
        try:
            caps = await api.capabilities()
            info["api"]["features"] = sorted(k for k, v in caps.features.items() if v)
        except HermesError as exc:
            info["api"]["error"] = str(exc)
    except HermesError as exc:
        info["api"] = {"url": settings.api_url, "ok": False, "error": str(exc)}
    if settings.dashboard_token:
        try:
            conn = await dashboard()
            info["dashboard"] = {"url": settings.dashboard_url, "ok": True, "connected": conn.connected}
            with contextlib.suppress(Exception):
                info["dashboard"]["version"] = await _dashboard_version(settings)
        except HermesError as exc:
            info["dashboard"] = {"url": settings.dashboard_url, "ok": False, "error": str(exc)}
    else:
        info["dashboard"] = {
            "url": settings.dashboard_url,
            "ok": False,
            "error": "no token configured (HERMES_DASHBOARD_TOKEN)",
        }
    return Status(info)


async def _dashboard_version(settings: Settings) -> str | None:
    import httpx

    async with httpx.AsyncClient(
        trust_env=False,
        proxy=settings.proxy_for(settings.dashboard_url),
        timeout=settings.connect_timeout,
    ) as http:
        data = (await http.get(f"{settings.dashboard_url}/api/status")).json()
    return data.get("version") if isinstance(data, dict) else None
