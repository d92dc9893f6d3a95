"""Connection settings: explicit arguments, then environment, then loopback defaults.

Secrets (the API Server key, the Dashboard token) are held in :class:`Secret`, whose ``repr`` and ``str``
are redacted, so a settings object can be printed, logged or shown in a notebook without leaking them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import NoReturn

__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_DASHBOARD_URL",
    "Secret",
    "Settings",
]

DEFAULT_API_URL = "http://127.0.0.1:8642"
DEFAULT_DASHBOARD_URL = "http://127.0.0.1:9119"

ENV_API_URL = "HERMES_API_URL"
ENV_API_KEY = "HERMES_API_KEY"
ENV_DASHBOARD_URL = "HERMES_DASHBOARD_URL"
ENV_DASHBOARD_TOKEN = "HERMES_DASHBOARD_TOKEN"


class Secret:
    """A string that never shows itself in reprs, str(), logs or tracebacks.

    Call :meth:`reveal` at the one place that must send it over the wire.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"a secret must be a string, not {type(value).__name__}")
        self._value = value

    def reveal(self) -> str:
        """Return the plain value, for building an auth header."""
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            return self._value == other._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __repr__(self) -> str:
        return "Secret('********')" if self._value else "Secret('')"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:  # pickling would carry the value into places we do not control
        raise TypeError("Secret values cannot be pickled")


def _secret(value: str | Secret | None) -> Secret | None:
    if value is None or isinstance(value, Secret):
        return value
    return Secret(value)


def _clean_url(url: str, what: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{what} must start with http:// or https://, got {url!r}")
    return url


@dataclass(frozen=True)
class Settings:
    """Where the two Hermes servers are and how to authenticate to them.

    Build it with :meth:`resolve` so that missing values come from the environment and then the defaults.
    """

    api_url: str = DEFAULT_API_URL
    api_key: Secret | None = field(default=None)
    dashboard_url: str = DEFAULT_DASHBOARD_URL
    dashboard_token: Secret | None = field(default=None)
    #: Connect timeout for every request, in seconds.
    connect_timeout: float = 5.0
    #: Read timeout for non-streaming requests; agent calls can take minutes (httpx's 5 s is too short).
    request_timeout: float = 600.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_url", _clean_url(self.api_url, "the API Server URL"))
        object.__setattr__(self, "dashboard_url", _clean_url(self.dashboard_url, "the Dashboard URL"))
        object.__setattr__(self, "api_key", _secret(self.api_key))
        object.__setattr__(self, "dashboard_token", _secret(self.dashboard_token))

    @classmethod
    def resolve(
        cls,
        *,
        api_url: str | None = None,
        api_key: str | Secret | None = None,
        dashboard_url: str | None = None,
        dashboard_token: str | Secret | None = None,
        env: Mapping[str, str] | None = None,
        **timeouts: float,
    ) -> Settings:
        """Arguments first, then ``HERMES_*`` environment variables, then loopback defaults."""
        env = os.environ if env is None else env
        return cls(
            api_url=api_url or env.get(ENV_API_URL) or DEFAULT_API_URL,
            api_key=_secret(api_key) or _secret(env.get(ENV_API_KEY) or None),
            dashboard_url=dashboard_url or env.get(ENV_DASHBOARD_URL) or DEFAULT_DASHBOARD_URL,
            dashboard_token=_secret(dashboard_token) or _secret(env.get(ENV_DASHBOARD_TOKEN) or None),
            **timeouts,
        )

    def with_(self, **changes: object) -> Settings:
        """Return a copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def dashboard_ws_url(self) -> str:
        """The JSON-RPC WebSocket endpoint (``/api/ws``) derived from the Dashboard URL."""
        scheme, rest = self.dashboard_url.split("://", 1)
        return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/api/ws"
