"""A Hermes profile on the API Server: its ``/p/<profile>/`` routes, checked before the first request.

Every API Server route is also mounted at ``/p/<profile>/<path>`` (docs/protocol/api-server.md §10). A gateway
that serves several profiles (``gateway.multiplex_profiles``) answers a profile it does not serve with 404
``{"error": "Unknown or unconfigured profile"}``; a newer single-profile gateway does the same for any profile
but its own. hermes-agent 0.19.0 without multiplexing *ignores* the prefix and answers as its own profile, so
a run meant for profile ``work`` would silently run in another one. Hence the check: a profile name that
cannot exist must be refused (else the server ignores prefixes: profiles are "not offered"), and the chosen
one must be served. A named profile checks the bearer key against its own ``API_SERVER_KEY``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Protocol

from ..errors import HermesAuthError, HermesUsageError, error_for_status
from ..settings import Settings

__all__ = ["UNKNOWN_PROFILE", "Prober", "check_api_profile", "profile_base_url"]


class Prober(Protocol):
    """What the check needs of the transport: a keyed GET of any URL that returns its status and body."""

    async def probe(self, url: str) -> tuple[int, str]: ...


#: What a gateway that knows profile prefixes answers for one it does not serve (the body of its 404).
UNKNOWN_PROFILE = "Unknown or unconfigured profile"


def profile_base_url(settings: Settings) -> str:
    """The API Server URL every path of these settings goes under: ``<api_url>/p/<profile>`` with a
    profile."""
    return settings.api_url if settings.profile is None else f"{settings.api_url}/p/{settings.profile}"


def check_api_profile(settings: Settings) -> Callable[[Prober], Awaitable[None]]:
    """The transport's preflight for ``settings.profile`` (see the module docstring); raises before any
    request."""
    profile = settings.profile
    root = settings.api_url

    async def check(http: Prober) -> None:
        # a profile name no one has (a valid one: only the prefix is new)
        nonce = f"hn-probe-{secrets.token_hex(6)}"
        status, _ = await http.probe(f"{root}/p/{nonce}/v1/models")
        if status != 404:
            raise HermesUsageError(
                "profiles are not offered by this Hermes API Server (it answers /p/<profile>/ routes as "
                "its own "
                f"profile: HTTP {status} for a profile that does not exist); not sending anything for "
                "profile "
                f"{profile!r}",
                param="profile",
            )
        status, body = await http.probe(f"{root}/p/{profile}/v1/models")
        if status == 404:
            raise HermesUsageError(
                f"the Hermes API Server at {root} serves no profile {profile!r} (a gateway serves other "
                "profiles than its own only with gateway.multiplex_profiles: true)",
                param="profile",
            )
        if status in (401, 403):
            raise HermesAuthError(
                f"the API key is not accepted for profile {profile!r} (a named profile checks its own "
                "API_SERVER_KEY, from that profile's .env)",
                status=status,
                endpoint=f"GET /p/{profile}/v1/models",
            )
        if status >= 400:
            raise error_for_status(status, body, endpoint=f"GET /p/{profile}/v1/models")

    return check
