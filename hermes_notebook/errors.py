"""The one exception tree of hermes-notebook.

Everything the package raises on purpose derives from :class:`HermesError`::

    HermesError
    ├── HermesConnectionError          cannot reach a server (refused, DNS, TLS)
    │   ├── HermesTimeoutError         a connect/read timed out
    │   └── HermesGatewayClosedError   the Dashboard WebSocket closed under an open turn or request
    ├── HermesHTTPError                a server answered with an HTTP error status
    │   ├── HermesAuthError            401/403: wrong or missing key/token
    │   ├── HermesNotFoundError        404
    │   ├── HermesConflictError        409
    │   ├── HermesTooLargeError        413
    │   ├── HermesRateLimitError       429 (``retry_after``)
    │   ├── HermesValidationError      the server refused a value (400/422; the jobs API's 500: bad schedule)
    │   └── HermesServerError          5xx
    ├── HermesRPCError                 a JSON-RPC error reply from the Dashboard (``code``)
    ├── HermesProtocolError            a frame or event that does not parse
    ├── HermesUsageError               bad input caught before anything was sent (also ``ValueError``)
    │   ├── HermesUnsupportedAttachmentError   code ``UNSUPPORTED_ATTACHMENT``
    │   └── HermesNotOfferedError      this Hermes does not offer that feature (``feature``, ``method``)
    ├── HermesRunError                 a run or turn ended failed (``status``, ``message``)
    └── HermesClosedError              a closed client or connection was used (also ``RuntimeError``)

Messages are one sentence naming what failed. They never contain a key or token: the client never puts one
in a message, and :func:`redact` strips any that a server echoes back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .inert import redact_urls

__all__ = [
    "HermesAuthError",
    "HermesClosedError",
    "HermesConflictError",
    "HermesConnectionError",
    "HermesError",
    "HermesGatewayClosedError",
    "HermesHTTPError",
    "HermesNotFoundError",
    "HermesNotOfferedError",
    "HermesProtocolError",
    "HermesRPCError",
    "HermesRateLimitError",
    "HermesRunError",
    "HermesServerError",
    "HermesTimeoutError",
    "HermesTooLargeError",
    "HermesUnsupportedAttachmentError",
    "HermesUsageError",
    "HermesValidationError",
    "error_for_status",
    "parse_error_body",
    "redact",
]


class HermesError(Exception):
    """Raised when hermes-notebook reports any failure on purpose; catch this to catch them all."""

    def __init__(self, *args: object) -> None:
        # A URL in a message never shows its userinfo (https://user:password@host).
        super().__init__(*(redact_urls(a) if isinstance(a, str) else a for a in args))


class HermesConnectionError(HermesError):
    """Raised when a server cannot be reached (connection refused, reset, DNS, TLS)."""


class HermesTimeoutError(HermesConnectionError, TimeoutError):
    """Raised when connecting to or reading from a server took longer than the configured timeout."""


class HermesGatewayClosedError(HermesConnectionError):
    """Raised when the Dashboard WebSocket closed while a turn or request was waiting on it."""


class HermesHTTPError(HermesError):
    """Raised when a server answered with an HTTP error status.

    Carries what the body said: ``status``, ``type``, ``code``, ``param`` and ``message`` (from the
    OpenAI-style envelope, the jobs routes' ``{"error": str}``, FastAPI's ``{"detail": ...}`` or plain text).
    ``status`` is ``None`` when the client refused the request before sending it (e.g. a body over the limit).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        endpoint: str,
        type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        server_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.type = type
        self.code = code
        self.param = param
        self.server_message = server_message

    @property
    def message(self) -> str:
        """The one-sentence message (``str(error)``)."""
        return str(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r}, status={self.status!r}, code={self.code!r})"


class HermesAuthError(HermesHTTPError):
    """Raised when a server refused the API key or Dashboard token (HTTP 401, or 403 on the WebSocket)."""


class HermesNotFoundError(HermesHTTPError):
    """Raised when the server has no such run, job, session or response (HTTP 404)."""


class HermesConflictError(HermesHTTPError):
    """Raised when the request conflicts with the server's state, e.g. no approval is pending (HTTP 409)."""


class HermesTooLargeError(HermesHTTPError):
    """Raised when a request body is over the server's limit (HTTP 413, or refused before sending)."""


class HermesRateLimitError(HermesHTTPError):
    """Raised when the server is at its concurrent-run cap (HTTP 429); ``retry_after`` is in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class HermesValidationError(HermesHTTPError, ValueError):
    """Raised when a value was refused, by the server (400, or the jobs API's 500) or by us before sending."""


class HermesServerError(HermesHTTPError):
    """Raised when the server failed internally (HTTP 5xx)."""


class HermesRPCError(HermesError):
    """Raised when the Dashboard answered a JSON-RPC request with an error object (``code``, ``message``)."""

    def __init__(self, message: str, *, code: int | None = None, method: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.method = method


class HermesProtocolError(HermesError):
    """Raised when a frame, SSE event or reply does not have the shape the protocol promises."""


class HermesUsageError(HermesError, ValueError):
    """Raised when an argument is wrong, before anything is sent to a server.

    ``param`` names the argument (e.g. a job's ``"name"``), so a form can show the error next to its field.
    """

    def __init__(self, message: str, *, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.param = param


class HermesUnsupportedAttachmentError(HermesUsageError):
    """Raised when an attachment is not an inline ``image/*`` (code ``UNSUPPORTED_ATTACHMENT``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="UNSUPPORTED_ATTACHMENT")


class HermesNotOfferedError(HermesUsageError):
    """Raised when this Hermes does not offer a feature (a JSON-RPC method or a route it lacks), before or
    instead of using it.

    Learned from the server's answer (-32601, a missing capability), never from a version string. ``feature``
    says what was asked for ("branching", "model options") and ``method`` what the server lacks
    (``session.branch_whole``, ``GET /api/model/options``). A caller that can do without the feature catches
    this class, and only this one.
    """

    def __init__(self, feature: str, method: str, *, detail: str = "") -> None:
        super().__init__(f"{feature} is not offered by this Hermes ({method}{detail})")
        self.feature = feature
        self.method = method


class HermesRunError(HermesError):
    """Raised when waiting on a run or turn that ended ``failed``/``error`` (``status``, ``message``)."""

    def __init__(self, message: str, *, status: str | None = None, run_id: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.run_id = run_id


class HermesClosedError(HermesError, RuntimeError):
    """Raised when a client, connection or turn is used after it was closed."""


# --- secrets -------------------------------------------------------------------------------------------

_SECRET_PATTERNS = [
    re.compile(r"(Bearer\s+)[^\s\"']+", re.IGNORECASE),
    re.compile(r"([?&]token=)[^&\s\"']+"),
    re.compile(r"(X-Hermes-Session-Token:\s*)[^\s\"']+", re.IGNORECASE),
]


def redact(text: str, *secrets: object) -> str:
    """Remove the given secret values, and anything that looks like a bearer/token parameter, from text.

    A value is also removed as a library quotes it: escaped, as in ``b'key\\n'`` (h11's "Illegal header
    value").
    """
    for secret in secrets:
        value = secret.reveal() if hasattr(secret, "reveal") else secret
        if isinstance(value, str) and len(value) >= 4:
            escaped = (repr(value)[1:-1], value.encode("unicode_escape").decode("ascii"))
            for form in dict.fromkeys((value, *escaped)):
                text = text.replace(form, "********")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(r"\1********", text)
    return text


# --- HTTP status -> exception ----------------------------------------------------------------------------

_BY_STATUS: dict[int, type[HermesHTTPError]] = {
    400: HermesValidationError,
    401: HermesAuthError,
    403: HermesAuthError,
    404: HermesNotFoundError,
    409: HermesConflictError,
    413: HermesTooLargeError,
    422: HermesValidationError,
    429: HermesRateLimitError,
}


def parse_error_body(body: str) -> tuple[str | None, str | None, str | None, str | None]:
    """Return ``(message, type, code, param)`` from any of the servers' error bodies.

    Shapes seen from Hermes 0.19.0: ``{"error": {"message", "type", "code", "param"?}}`` (API Server),
    ``{"error": "text"}`` (jobs routes), ``{"detail": "text"}`` (Dashboard REST) and plain text
    (``404: Not Found`` from aiohttp, ``500 Internal Server Error``).
    """
    text = body.strip()
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data.get("detail"))
        if isinstance(err, dict):
            return (
                _str_or_none(err.get("message", err.get("detail"))),
                _str_or_none(err.get("type")),
                _str_or_none(err.get("code")),
                _str_or_none(err.get("param")),
            )
        if isinstance(err, list):  # FastAPI validation: [{"loc": [...], "msg": "...", "type": "..."}, ...]
            return _join_validation_items(err), None, None, None
        if err is not None:
            return str(err), None, None, None
    if not text:
        return None, None, None, None
    if text.lstrip().startswith("<"):  # an HTML error page (e.g. a proxy): its text is noise
        return f"non-JSON answer of {len(text)} characters", None, None, None
    return _shorten(text), None, None, None


def _join_validation_items(items: list[Any]) -> str:
    parts = []
    for item in items:
        if isinstance(item, dict):
            loc = ".".join(str(x) for x in item.get("loc", ()) if x != "body")
            msg = str(item.get("msg", item))
            parts.append(f"{loc}: {msg}" if loc else msg)
        else:
            parts.append(str(item))
    return _shorten("; ".join(parts))


def _shorten(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def error_for_status(
    status: int,
    body: str,
    *,
    endpoint: str,
    retry_after: str | None = None,
    secrets: tuple[object, ...] = (),
    validation_on_500: bool = False,
) -> HermesHTTPError:
    """Build the exception for an HTTP error answer, with a one-sentence message naming the endpoint.

    ``validation_on_500`` is for the jobs routes, which answer a bad value (such as a schedule) with 500.
    """
    message, type_, code, param = parse_error_body(redact(body, *secrets))
    cls: type[HermesHTTPError]
    if status in _BY_STATUS:
        cls = _BY_STATUS[status]
    elif status >= 500:
        cls = HermesValidationError if validation_on_500 else HermesServerError
    else:
        cls = HermesHTTPError
    detail = message or "no details"
    if cls is HermesAuthError:
        sentence = f"{endpoint} refused the credentials (HTTP {status}): {detail}. Check the key or token."
    else:
        sentence = f"{endpoint} failed with HTTP {status}: {detail}"
    if cls is HermesRateLimitError:
        seconds: float | None
        try:
            seconds = float(retry_after) if retry_after is not None else None
        except ValueError:
            seconds = None
        if seconds is not None:
            sentence += f" (retry after {seconds:g} s)"
        return HermesRateLimitError(
            sentence,
            retry_after=seconds,
            status=status,
            endpoint=endpoint,
            type=type_,
            code=code,
            param=param,
            server_message=message,
        )
    return cls(
        sentence, status=status, endpoint=endpoint, type=type_, code=code, param=param, server_message=message
    )
