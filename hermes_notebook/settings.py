"""Connection settings: explicit arguments, then environment, then loopback defaults.

Secrets (the API Server key, the Dashboard token) are held in :class:`Secret`, whose ``repr`` and ``str``
are redacted, so a settings object can be printed, logged or shown in a notebook without leaking them.
"""

from __future__ import annotations

import ipaddress
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import NoReturn
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_DASHBOARD_URL",
    "PROFILE_NAME",
    "InsecureTransportWarning",
    "Secret",
    "Settings",
    "check_profile_name",
    "is_loopback",
    "pinned_profile",
]

DEFAULT_API_URL = "http://127.0.0.1:8642"
DEFAULT_DASHBOARD_URL = "http://127.0.0.1:9119"

ENV_API_URL = "HERMES_API_URL"
ENV_API_KEY = "HERMES_API_KEY"
ENV_DASHBOARD_URL = "HERMES_DASHBOARD_URL"
ENV_DASHBOARD_TOKEN = "HERMES_DASHBOARD_TOKEN"
#: The Hermes profile a connection is kept in when ``profile=`` is not given (a spawner pins one with it).
ENV_PROFILE = "HERMES_PROFILE"
#: Set (to anything but ``""``/``0``/``false``/``no``) by a spawner that pins the profile: every connection
#: made in this process must then be kept in ``HERMES_PROFILE`` (:func:`pinned_profile`). A guard against
#: mistakes, not a boundary: code in the kernel can change its own environment, and the Dashboard token it
#: holds reaches every profile of that Hermes (docs/teams.md).
ENV_PROFILE_LOCK = "HERMES_PROFILE_LOCK"
#: Our own proxy setting. HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are ignored on purpose: they would hand the API key
# and : the Dashboard token, in clear over http, to whatever proxy the environment names, even for 127.0.0.1.
ENV_PROXY = "HERMES_PROXY"
#: A Hermes profile name as Hermes itself accepts one (``hermes_constants.PROFILE_ID_RE``: lowercase letters,
#: digits, ``-`` and ``_``, starting with a letter or digit, at most 64), or ``default``. It becomes a URL
# path : segment (``/p/<profile>/``) and a JSON-RPC parameter, so nothing else is let through.
PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class InsecureTransportWarning(UserWarning):
    """Credentials are about to travel over plain http to a host that is not this machine."""


def is_loopback(url: str) -> bool:
    """Is ``url``'s host this machine (``localhost``, 127.0.0.0/8, ``::1``)?"""
    host = (urlsplit(url).hostname or "").strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
            return self._value == other.reveal()
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


#: What each secret is called in messages: the argument and the environment variable it can come from.
_SECRET_NAMES = {
    "api_key": "the API key (api_key= or HERMES_API_KEY)",
    "dashboard_token": "the Dashboard token (dashboard_token= or HERMES_DASHBOARD_TOKEN)",
}


def _check_secret(secret: Secret | None, setting: str) -> None:
    """Refuse a key or token that cannot travel in an HTTP header, before a library quotes it in its error.

    httpx (and h11 under it) refuse such a header with an error that contains the value. A newline at the end
    is the usual cause (``open("key").read()``); it is refused, not stripped, so the value we send is always
    the value the user gave. The message never contains the value.
    """
    if not secret:
        return
    from .errors import HermesUsageError

    value = secret.reveal()
    what = _SECRET_NAMES[setting]
    if value != value.strip():
        edge = value[-1] if value[-1].isspace() else value[0]
        where = "ends" if value[-1].isspace() else "starts"
        kind = "a newline" if edge in "\r\n" else "a space" if edge == " " else "whitespace"
        raise HermesUsageError(f"{what} {where} with {kind} (read from a file? use .strip())", param=setting)
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise HermesUsageError(
            f"{what} contains a control character (such as a newline or tab); HTTP headers cannot carry it",
            param=setting,
        )
    if not value.isascii():
        raise HermesUsageError(
            f"{what} contains a non-ASCII character; HTTP headers carry ASCII only (was it copied with a "
            "typographic quote or dash?)",
            param=setting,
        )


def check_profile_name(name: object) -> str:
    """``name`` if it is a Hermes profile name, else :class:`~hermes_notebook.errors.HermesUsageError` saying
    why."""
    if isinstance(name, str) and PROFILE_NAME.fullmatch(name):
        return name
    from .errors import HermesUsageError

    shown = repr(name[:70]) if isinstance(name, str) else type(name).__name__
    hint = (
        " (profile names are lowercase)"
        if isinstance(name, str) and PROFILE_NAME.fullmatch(name.lower())
        else ""
    )
    raise HermesUsageError(
        "profile must be a Hermes profile name (lowercase letters, digits, '-' and '_', starting with a "
        "letter "
        f"or digit, at most 64 characters); got {shown}{hint}",
        param="profile",
    )


def pinned_profile(env: Mapping[str, str] | None = None) -> str | None:
    """The profile this process is pinned to (``HERMES_PROFILE`` while ``HERMES_PROFILE_LOCK`` is set), else
    None."""
    env = os.environ if env is None else env
    if env.get(ENV_PROFILE_LOCK, "").strip().lower() in ("", "0", "false", "no"):
        return None
    return env.get(ENV_PROFILE) or "default"


def _check_pinned(profile: str | None) -> None:
    """Refuse a connection kept in another profile than the one this process is pinned to."""
    pinned = pinned_profile()
    if pinned is None or profile == pinned or (profile is None and pinned == "default"):
        return
    from .errors import HermesUsageError

    wanted = "the server's default profile (no profile=)" if profile is None else f"profile {profile!r}"
    raise HermesUsageError(
        f"this kernel is pinned to the Hermes profile {pinned!r} (HERMES_PROFILE with HERMES_PROFILE_LOCK, "
        f"set by whoever started it): {wanted} is refused",
        param="profile",
    )


def _clean_url(url: str, what: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        from .inert import redact_url

        raise ValueError(f"{what} must start with http:// or https://, got {redact_url(url)!r}")
    return url


@dataclass(frozen=True)
class Settings:
    """Where the two Hermes servers are and how to authenticate to them.

    Build it with :meth:`resolve` so that missing values come from the environment and then the defaults.
    A key or token that an HTTP header cannot carry (surrounding whitespace such as the newline a key file
    ends with, control or non-ASCII characters) raises :class:`~hermes_notebook.errors.HermesUsageError`
    (a ``ValueError``) naming the setting; it is never stripped silently.
    """

    api_url: str = DEFAULT_API_URL
    api_key: Secret | None = field(default=None)
    dashboard_url: str = DEFAULT_DASHBOARD_URL
    dashboard_token: Secret | None = field(default=None)
    #: Connect timeout for every request, in seconds.
    connect_timeout: float = 5.0
    #: Read timeout for non-streaming requests; agent calls can take minutes (httpx's 5 s is too short).
    request_timeout: float = 600.0
    #: An HTTP(S) proxy for a remote Hermes behind one (``HERMES_PROXY``). Never used for loopback servers,
    # and : the environment's ``HTTP_PROXY`` family is never used at all.
    proxy: str | None = None
    #: The Hermes profile every session, job and kernel-tool registration of these clients belongs to (the API
    #: Server's ``/p/<profile>/`` routes, the Dashboard's ``profile`` parameters); ``None``: the profile the
    #: servers were started with. Checked against the servers before the first request that needs it.
    profile: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_url", _clean_url(self.api_url, "the API Server URL"))
        object.__setattr__(self, "dashboard_url", _clean_url(self.dashboard_url, "the Dashboard URL"))
        object.__setattr__(self, "api_key", _secret(self.api_key))
        object.__setattr__(self, "dashboard_token", _secret(self.dashboard_token))
        _check_secret(self.api_key, "api_key")
        _check_secret(self.dashboard_token, "dashboard_token")
        if self.proxy is not None:
            object.__setattr__(
                self, "proxy", _clean_url(self.proxy, "the proxy URL") if self.proxy.strip() else None
            )
        if self.profile is not None:
            check_profile_name(self.profile)
        _check_pinned(self.profile)

    def __repr__(self) -> str:
        from .inert import redact_url

        proxy = None if self.proxy is None else redact_url(self.proxy)
        return (
            f"Settings(api_url={redact_url(self.api_url)!r}, api_key={self.api_key!r}, "
            f"dashboard_url={redact_url(self.dashboard_url)!r}, dashboard_token={self.dashboard_token!r}, "
            f"connect_timeout={self.connect_timeout!r}, request_timeout={self.request_timeout!r}, "
            f"proxy={proxy!r}, "
            f"profile={self.profile!r})"
        )

    def proxy_for(self, url: str) -> str | None:
        """The proxy to reach ``url`` through: none for this machine, else the explicit ``proxy`` setting."""
        return None if is_loopback(url) else self.proxy

    @staticmethod
    def warn_if_exposed(url: str, secret: Secret | None, what: str) -> None:
        """Warn when ``secret`` would go in clear (plain http) to a host that is not this machine."""
        if secret and url.startswith(("http://", "ws://")) and not is_loopback(url):
            warnings.warn(
                f"the {what} is sent over plain http to {urlsplit(url).hostname}: anyone on the network "
                "path can read it; use https:// (or an SSH tunnel to 127.0.0.1)",
                InsecureTransportWarning,
                stacklevel=3,
            )

    @classmethod
    def resolve(
        cls,
        *,
        api_url: str | None = None,
        api_key: str | Secret | None = None,
        dashboard_url: str | None = None,
        dashboard_token: str | Secret | None = None,
        proxy: str | None = None,
        profile: str | None = None,
        env: Mapping[str, str] | None = None,
        **timeouts: float,
    ) -> Settings:
        """Arguments first, then ``HERMES_*`` environment variables (``HERMES_PROFILE`` for the profile), then
        loopback defaults."""
        env = os.environ if env is None else env
        return cls(
            api_url=api_url or env.get(ENV_API_URL) or DEFAULT_API_URL,
            api_key=_secret(api_key) or _secret(env.get(ENV_API_KEY) or None),
            dashboard_url=dashboard_url or env.get(ENV_DASHBOARD_URL) or DEFAULT_DASHBOARD_URL,
            dashboard_token=_secret(dashboard_token) or _secret(env.get(ENV_DASHBOARD_TOKEN) or None),
            proxy=proxy or env.get(ENV_PROXY) or None,
            profile=profile or env.get(ENV_PROFILE) or None,
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
