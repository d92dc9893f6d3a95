"""A conversation's two clients: the Dashboard connection and the API Server client, each opened on first use.

Why apart from :class:`~.conversation.Conversation`: which client exists, who opened it and who closes it is
one small piece of state with rules of its own (a connection given by the caller stays the caller's to close;
one made here is closed by :meth:`Clients.close`), and every session operation only asks for a client.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import HermesUsageError
from ..settings import Settings

if TYPE_CHECKING:
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection

__all__ = ["Clients", "Connect"]

Connect = Callable[[], Awaitable[Any]]


class Clients:
    """The clients of one conversation (see the module docstring). ``dashboard=``: a connected
    ``DashboardConnection`` to use (the caller's to close) or a coroutine function returning one; ``api=``: a
    coroutine function returning an ``ApiClient``."""

    def __init__(
        self,
        settings: Settings | None,
        dashboard: DashboardConnection | Connect | None = None,
        api: Callable[[], Awaitable[ApiClient]] | None = None,
    ) -> None:
        self.settings = settings
        factory = dashboard if callable(dashboard) else None
        self._dashboard_factory: Connect | None = factory
        self._given: DashboardConnection | None = None if factory is not None else dashboard  # type: ignore[assignment]
        self._dashboard: DashboardConnection | None = None
        self._api_factory = api
        self._api: ApiClient | None = None

    @property
    def has_dashboard(self) -> bool:
        """Whether a Dashboard can be reached (a token, or a connection given)."""
        return bool(
            self._given is not None
            or self._dashboard_factory is not None
            or (self.settings is not None and self.settings.dashboard_token)
        )

    async def dashboard(self) -> DashboardConnection:
        """The Dashboard connection, connected (opened here on first use unless one was given)."""
        if self._given is not None:
            return self._given
        if self._dashboard_factory is not None:
            conn: DashboardConnection = await self._dashboard_factory()
            return conn
        if self.settings is None or not self.settings.dashboard_token:
            raise HermesUsageError("no Dashboard token: set HERMES_DASHBOARD_TOKEN or pass dashboard_token=")
        if self._dashboard is None:
            from ..client.dashboard import DashboardConnection

            self._dashboard = DashboardConnection(self.settings)
        if not self._dashboard.connected:
            await self._dashboard.connect()
        return self._dashboard

    async def api(self) -> ApiClient:
        """The API Server client (created here on first use unless a factory was given)."""
        if self._api_factory is not None:
            return await self._api_factory()
        if self._api is None:
            from ..client.api import ApiClient

            self._api = ApiClient(self.settings)
        return self._api

    async def close(self) -> None:
        """Close the clients opened here (a given connection stays open: it is the caller's)."""
        dashboard, api, self._dashboard, self._api = self._dashboard, self._api, None, None
        for closer in (dashboard.close if dashboard else None, api.aclose if api else None):
            if closer is not None:
                with contextlib.suppress(Exception):  # one failing close must not keep the other open
                    await closer()
