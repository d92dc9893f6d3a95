"""Opening the Dashboard WebSocket: options from the protocol, errors as HermesErrors, the token kept secret.

The token can only travel in the URL query (``?token=``, docs/protocol/dashboard.md §1.4). That URL must never
reach a message, a traceback or a log line: websockets logs the request line at DEBUG, and ``InvalidURI``
quotes the URL, so its logger is wrapped with :func:`~hermes_notebook.errors.redact` and no library error is
chained to ours (``from None``: neither ``__cause__`` nor ``__context__`` shows in a traceback a notebook
saves). It also logs every frame at DEBUG with the start and end of its payload, and ``sudo.respond`` /
``secret.respond`` frames end with the password or secret value: frames are logged by opcode and size only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.frames import Frame

from ...errors import (
    HermesAuthError,
    HermesConnectionError,
    HermesTimeoutError,
    HermesUsageError,
    redact,
)
from ...settings import Secret, Settings

__all__ = ["close_detail", "dial", "resolve_settings"]


class _RedactingLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    """websockets logs the request line ``GET /api/ws?token=...`` at DEBUG: scrub it before any handler."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if not self.isEnabledFor(level):
            return
        kwargs.pop("stacklevel", None)
        if len(args) == 1 and isinstance(args[0], Frame):
            # "> %s" / "< %s" with a frame: its payload may be a password (sudo.respond) or a secret value.
            frame = args[0]
            self.logger.log(
                level, "%s %s [%d bytes]", str(msg)[:1], frame.opcode.name, len(frame.data), **kwargs
            )
            return
        try:
            text = str(msg) % args if args else str(msg)
        except (TypeError, ValueError):
            text = f"{msg} {args!r}"
        self.logger.log(level, "%s", redact(text), **kwargs)


_WS_LOGGER = _RedactingLogger(logging.getLogger("hermes_notebook.client.dashboard.ws"), {})


def resolve_settings(
    source: str | Settings | Callable[[], Settings] | None, token: Secret | None
) -> Settings:
    """The settings for the next connection attempt: a URL (``ws://.../api/ws`` accepted), Settings, a
    callable returning Settings, or None for ``Settings.resolve()``; an explicit ``token`` wins over the
    settings' own."""
    if callable(source) and not isinstance(source, (str, Settings)):
        settings = source()
    elif isinstance(source, Settings):
        settings = source
    else:
        url = source
        if isinstance(url, str) and url.startswith(("ws://", "wss://")):
            url = "http" + url[2:]
            url = url[: -len("/api/ws")] if url.endswith("/api/ws") else url
        settings = Settings.resolve(dashboard_url=url, dashboard_token=token)
    if token is not None and settings.dashboard_token != token:
        settings = settings.with_(dashboard_token=token)
    return settings


async def dial(settings: Settings) -> ClientConnection:
    """Open the socket; the token goes only into the URL given to websockets (§1.4), never a message."""
    token = settings.dashboard_token
    if not token:
        raise HermesUsageError(
            "no Dashboard token: pass token=..., set HERMES_DASHBOARD_TOKEN, or start the Dashboard with "
            "HERMES_DASHBOARD_SESSION_TOKEN"
        )
    url = settings.dashboard_ws_url
    settings.warn_if_exposed(url, token, "Dashboard token")
    try:
        return await ws_connect(
            f"{url}?token={quote(token.reveal(), safe='')}",
            # §2 "Max frame size": session.resume returns the whole transcript; the 1 MiB default is too
            # small.
            max_size=None,
            # §2 "Keepalive": the server may stall for minutes under GIL pressure; pings would kill the
            # socket.
            ping_interval=None,
            # Loopback: compression only costs CPU on the per-delta path.
            compression=None,
            max_queue=1024,
            # Never the environment's proxy (websockets >= 15 follows HTTP_PROXY by default; the token is in
            # the URL): only an explicit Settings.proxy, and never for loopback.
            proxy=settings.proxy_for(url),
            open_timeout=settings.connect_timeout,
            close_timeout=2,
            logger=_WS_LOGGER,
        )
    except InvalidStatus as exc:
        status = exc.response.status_code
        if status in (401, 403):
            # §1.4, §8.11: a bad token is a 403 on the handshake (close 4401 is never seen); a Host/Origin
            # rejection looks the same.
            raise HermesAuthError(
                f"the Dashboard at {url} refused the WebSocket (HTTP {status}): the token is wrong or "
                "missing (a Host/Origin mismatch also gives 403). Check HERMES_DASHBOARD_TOKEN.",
                status=status,
                endpoint="GET /api/ws",
            ) from None
        raise HermesConnectionError(f"the Dashboard at {url} refused the WebSocket (HTTP {status})") from None
    except (TimeoutError, asyncio.TimeoutError):
        raise HermesTimeoutError(f"connecting to the Dashboard at {url} timed out") from None
    except (OSError, WebSocketException) as exc:
        detail = redact(str(exc) or type(exc).__name__, token)
        raise HermesConnectionError(
            f"cannot reach the Dashboard at {url} ({type(exc).__name__}): {detail}"
        ) from None


def close_detail(cause: BaseException | None) -> str:
    if isinstance(cause, ConnectionClosed):
        frame = cause.rcvd or cause.sent
        if frame is not None:
            return f" (code {frame.code}{': ' + frame.reason if frame.reason else ''})"
        return " (no close frame)"
    if cause is not None:
        return f" ({type(cause).__name__})"
    return ""
