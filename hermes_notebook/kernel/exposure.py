"""Where the kernel's tool server listens and the URL Hermes is given: loopback unless the user says so.

A Hermes on another host or pod (a kernel started by Enterprise Gateway, a kernel pod, a shared Hermes)
cannot reach ``127.0.0.1``. These settings, read from the kernel's environment (a spawner or kernel
launcher sets them), open the server up:

- ``HERMES_TOOLS_BIND``: the address to listen on (default ``127.0.0.1``; ``0.0.0.0``: every interface).
- ``HERMES_TOOLS_PORT``: a fixed port (default: a free one).
- ``HERMES_TOOLS_URL``: the URL Hermes is given, a template of ``{host}``, ``{port}`` and ``{user}``, e.g.
  ``https://{host}:{port}/mcp`` or ``https://hub.example.org/user/{user}/proxy/{port}/mcp``.
- ``HERMES_TOOLS_HOST``: what ``{host}`` is (default: the bind address; this machine's name for a wildcard).
- ``HERMES_TOOLS_CERTFILE`` (and ``HERMES_TOOLS_KEYFILE`` unless the key is in it): serve TLS (PEM).
- ``HERMES_TOOLS_INSECURE_HTTP=1``: allow plain http off loopback (a network trusted end to end, a
  TLS-ending proxy in front); without it such a server is refused before it starts.
- ``HERMES_TOOLS_AUTHORIZATION``: where a proxy in front owns ``Authorization`` (the hub), what Hermes sends
  there: a template naming a variable of *Hermes'* environment, ``Bearer ${JUPYTERHUB_API_TOKEN}`` or
  ``token ${HUB_TOKEN}``, never a value; the tool token then goes in :data:`TOKEN_HEADER`.

``{user}`` is ``JUPYTERHUB_USER`` (set in every kernel of a hub's single-user server), else the OS user.
The bearer token is always required; where a proxy in front (the hub) owns ``Authorization``, the server
also takes it in a header of its own, :data:`TOKEN_HEADER`.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import re
import socket
import string
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import HermesUsageError
from ..settings import is_loopback

__all__ = ["LOOPBACK", "TOKEN_HEADER", "Exposure"]

LOOPBACK = "127.0.0.1"
#: The header that also carries the bearer token (its value is the bare token, no ``Bearer``).
TOKEN_HEADER = "X-Hermes-Notebook-Token"
_FIELDS = {"host", "port", "user"}
_AUTHORIZATION = re.compile(r"(Bearer|token) \$\{[A-Za-z_][A-Za-z0-9_]*\}")
_WILDCARDS = ("0.0.0.0", "::", "")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no")


@dataclass(frozen=True)
class Exposure:
    """Where the tool server listens and what it advertises (the module docstring); checked when made."""

    bind: str = LOOPBACK
    port: int = 0
    url_template: str | None = None
    host: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    insecure_http: bool = False
    user: str | None = None
    #: The Authorization header template for Hermes where a proxy owns that header (None: the tool token).
    authorization: str | None = None

    def __post_init__(self) -> None:
        if self.keyfile and not self.certfile:
            raise HermesUsageError("HERMES_TOOLS_KEYFILE needs HERMES_TOOLS_CERTFILE (the certificate)")
        for path in (self.certfile, self.keyfile):
            if path and not os.path.isfile(path):
                raise HermesUsageError(f"the tool server's TLS file {path!r} does not exist")
        if not 0 <= self.port < 65536:
            raise HermesUsageError(f"HERMES_TOOLS_PORT must be a port number, got {self.port}")
        if self.bind not in _WILDCARDS:
            try:
                ipaddress.ip_address(self.bind)
            except ValueError:
                raise HermesUsageError(
                    f"HERMES_TOOLS_BIND must be an IP address (or 0.0.0.0), got {self.bind!r}"
                ) from None
        if self.url_template is not None:
            self._check_template(self.url_template)
        if self.authorization is not None and not _AUTHORIZATION.fullmatch(self.authorization):
            raise HermesUsageError(
                "HERMES_TOOLS_AUTHORIZATION must be 'Bearer ${VARIABLE}' or 'token ${VARIABLE}', naming a "
                "variable of Hermes' own environment (a value here would be written into its config.yaml)"
            )
        exposed = not _loopback_address(self.bind) or not is_loopback(self.advertise(1))
        if exposed and not self.tls and not self.insecure_http:
            raise HermesUsageError(
                "the kernel's tool server would take its bearer token over plain http off this machine: set "
                "HERMES_TOOLS_CERTFILE (TLS), or HERMES_TOOLS_INSECURE_HTTP=1 where a network you trust or a "
                "TLS-ending proxy carries it"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Exposure:
        """The settings of the module docstring (all optional: loopback, a free port, plain http)."""
        env = os.environ if env is None else env
        port = env.get("HERMES_TOOLS_PORT", "").strip() or "0"
        if not port.isdigit():
            raise HermesUsageError(f"HERMES_TOOLS_PORT must be a port number, got {port!r}")
        return cls(
            bind=env.get("HERMES_TOOLS_BIND", "").strip() or LOOPBACK,
            port=int(port),
            url_template=env.get("HERMES_TOOLS_URL", "").strip() or None,
            host=env.get("HERMES_TOOLS_HOST", "").strip() or None,
            certfile=env.get("HERMES_TOOLS_CERTFILE", "").strip() or None,
            keyfile=env.get("HERMES_TOOLS_KEYFILE", "").strip() or None,
            insecure_http=_truthy(env.get("HERMES_TOOLS_INSECURE_HTTP")),
            user=env.get("JUPYTERHUB_USER", "").strip() or None,
            authorization=env.get("HERMES_TOOLS_AUTHORIZATION", "").strip() or None,
        )

    @property
    def tls(self) -> bool:
        return self.certfile is not None

    @property
    def local(self) -> bool:
        """True for the default: loopback only, advertised as such."""
        return _loopback_address(self.bind) and is_loopback(self.advertise(1))

    @property
    def family(self) -> socket.AddressFamily:
        return socket.AF_INET6 if ":" in self.bind else socket.AF_INET

    def advertise(self, port: int) -> str:
        """The URL Hermes is given for a server listening on ``port``."""
        if self.url_template is None:
            host = self._host()
            shown = f"[{host}]" if ":" in host else host
            return f"{'https' if self.tls else 'http'}://{shown}:{port}/mcp"
        user = self.user or getpass.getuser()
        return self.url_template.format(host=self._host(), port=port, user=user)

    def headers(self, token_variable: str) -> dict[str, str] | None:
        """The headers Hermes sends where a proxy owns Authorization (templates: the proxy's credential, and
        the tool token from ``token_variable``); None for the usual ``Authorization: Bearer <token>``."""
        if self.authorization is None:
            return None
        return {"Authorization": self.authorization, TOKEN_HEADER: f"${{{token_variable}}}"}

    def allowed_hosts(self, port: int) -> list[str]:
        """The ``Host`` headers the server accepts (DNS-rebinding protection): loopback, the bind address and
        the advertised URL's host, which a proxy in front may pass on."""
        names = {self._host(), urlsplit(self.advertise(port)).hostname or ""} - {""}
        hosts = {"127.0.0.1:*", "localhost:*", "[::1]:*"}
        for name in names:
            shown = f"[{name}]" if ":" in name else name
            hosts |= {shown, f"{shown}:*"}
        return sorted(hosts)

    def _host(self) -> str:
        if self.host:
            return self.host
        if self.bind in _WILDCARDS:
            return socket.gethostname()
        return self.bind

    @staticmethod
    def _check_template(template: str) -> None:
        if not template.startswith(("http://", "https://")):
            raise HermesUsageError(f"HERMES_TOOLS_URL must start with http:// or https://, got {template!r}")
        try:
            fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
        except ValueError as exc:
            raise HermesUsageError(f"HERMES_TOOLS_URL is not a template: {exc}") from None
        unknown = sorted(fields - _FIELDS)
        if unknown:
            raise HermesUsageError(
                f"HERMES_TOOLS_URL names {', '.join('{' + f + '}' for f in unknown)}; it may use {{host}}, "
                "{port} and {user}"
            )


def _loopback_address(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
