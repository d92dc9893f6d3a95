"""The one seam where httpx, httpx-sse and JSON decoding failures become :class:`HermesError` subclasses.

Every HTTP call of the package (API Server runs, chat, responses, sessions, cron jobs, and the Dashboard's
REST routes) goes through :class:`HttpTransport`. It owns one ``httpx.AsyncClient`` and:

- sends the key through an :class:`httpx.Auth` flow, so the key is never in the client's default headers,
  in a message, a repr or a log line (httpx itself masks ``Authorization`` in header reprs);
- serialises JSON bodies itself and refuses bodies over :data:`MAX_BODY_BYTES` before sending, because the
  API Server turns a chunked oversize body into a misleading 400 "Invalid JSON"
  (docs/protocol/api-server.md §8);
- turns error answers into exceptions with :func:`~hermes_notebook.errors.error_for_status`, naming the
  endpoint ("POST /v1/runs");
- uses the settings' request timeout for ordinary calls and :data:`STREAM_READ_TIMEOUT` between bytes of a
  stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx
import httpx_sse

from ..errors import (
    HermesClosedError,
    HermesConnectionError,
    HermesError,
    HermesProtocolError,
    HermesTimeoutError,
    HermesTooLargeError,
    HermesUsageError,
    error_for_status,
    redact,
)
from ..inert import redact_url
from ..settings import Secret, Settings, is_loopback

__all__ = [
    "MAX_BODY_BYTES",
    "STREAM_READ_TIMEOUT",
    "ApiServerClient",
    "HttpTransport",
    "api_server_transport",
    "encode_json",
    "translate_errors",
]

#: The API Server's body limit (``client_max_size``, api:124; docs/protocol/api-server.md §8).
MAX_BODY_BYTES = 10_000_000

#: Longest silence tolerated inside an SSE stream, in seconds. The server sends ``: keepalive`` after 30 s
#: without an event (docs/protocol/api-server.md §3 "Wire format", §5, §8), so three missed keepalives mean
# the : connection is dead, not that the agent is slow. ``None`` would wait forever on a half-open socket.
STREAM_READ_TIMEOUT: float | None = 95.0


class _SecretAuth(httpx.Auth):
    """Adds the auth header per request, so the key never sits in ``client.headers``."""

    def __init__(self, secret: Secret, header: str, scheme: str | None) -> None:
        self._secret = secret
        self._header = header
        self._scheme = scheme

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        value = self._secret.reveal()
        request.headers[self._header] = f"{self._scheme} {value}" if self._scheme else value
        yield request

    def __repr__(self) -> str:
        return f"<_SecretAuth {self._header}: ********>"


def encode_json(body: object, *, endpoint: str) -> bytes:
    """Serialise a request body, refusing it before sending if it is over :data:`MAX_BODY_BYTES`."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_BODY_BYTES:
        raise HermesTooLargeError(
            f"{endpoint} was not sent: the request body is {len(data):,} bytes, over the server's limit "
            f"of {MAX_BODY_BYTES:,} bytes.",
            status=None,
            endpoint=endpoint,
        )
    return data


@contextmanager
def translate_errors(endpoint: str, *, secrets: tuple[object, ...] = ()) -> Iterator[None]:
    """Map transport exceptions raised inside the block to HermesErrors, never chained to the original.

    ``secrets`` are scrubbed from the original exception's text before it becomes part of our message. The
    original is not chained (``from None``, which also hides ``__context__``): its text may quote the key
    (h11's "Illegal header value b'Bearer ...'"), and a notebook saves the whole chain of a traceback.
    """
    try:
        yield
    except HermesError:
        raise
    except Exception as exc:
        mapped = _map_exception(exc, endpoint, secrets)
        if mapped is None:
            raise
        raise mapped from None


def _map_exception(exc: Exception, endpoint: str, secrets: tuple[object, ...]) -> HermesError | None:
    kind = type(exc).__name__
    text = redact(str(exc), *secrets)
    detail = f"{kind}: {text}" if text and text != kind else kind
    if isinstance(exc, httpx.TimeoutException):
        return HermesTimeoutError(f"{endpoint} timed out ({detail})")
    if isinstance(exc, httpx_sse.SSEError):
        return HermesProtocolError(f"{endpoint} did not answer with an event stream ({detail})")
    if isinstance(exc, json.JSONDecodeError):
        return HermesProtocolError(f"{endpoint} answered with JSON that does not parse ({detail})")
    if isinstance(exc, httpx.ConnectError):
        return HermesConnectionError(f"{endpoint} could not connect to the server ({detail})")
    if isinstance(exc, (httpx.HTTPError, httpx.StreamError)):
        # ReadError, RemoteProtocolError, StreamClosed (a response closed under us), ...
        return HermesConnectionError(f"{endpoint} lost the connection to the server ({detail})")
    if isinstance(exc, httpx.InvalidURL):
        return HermesConnectionError(f"{endpoint} has an invalid URL ({detail})")
    return None


class HttpTransport:
    """An ``httpx.AsyncClient`` for one server, with auth, timeouts and error translation.

    ``auth_header``/``auth_scheme`` select the header: ``Authorization: Bearer <key>`` for the API Server
    (docs/protocol/api-server.md §1 "Auth"), ``X-Hermes-Session-Token: <token>`` (scheme ``None``) for the
    Dashboard's REST routes. ``transport`` is for tests of pure request building (``httpx.MockTransport``).
    """

    def __init__(
        self,
        base_url: str,
        secret: Secret | None,
        *,
        connect_timeout: float = 5.0,
        request_timeout: float = 600.0,
        # auth
        auth_header: str = "Authorization",
        auth_scheme: str | None = "Bearer",
        missing_key_hint: str = "pass key=... or set HERMES_API_KEY",
        proxy: str | None = None,
        preflight: Callable[[HttpTransport], Awaitable[None]] | None = None,
        # testing seam
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url
        # Run once before the first request (e.g. checking a profile exists); retried until it succeeds.
        self._preflight = preflight
        self._preflight_lock: asyncio.Lock | None = None
        self._secret = secret
        self._connect_timeout = connect_timeout
        self._auth = _SecretAuth(secret, auth_header, auth_scheme) if secret else None
        self._missing_key_hint = missing_key_hint
        Settings.warn_if_exposed(base_url, secret, "credential")
        self._client = httpx.AsyncClient(
            base_url=base_url,
            timeout=httpx.Timeout(request_timeout, connect=connect_timeout),
            transport=transport,
            headers={"Accept": "application/json"},
            # Never the environment's proxy: HTTP_PROXY would receive the key in clear, even for 127.0.0.1.
            # A remote Hermes behind a proxy gets one explicitly (Settings.proxy; never for loopback).
            trust_env=False,
            proxy=None if is_loopback(base_url) else proxy,
        )
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True after :meth:`aclose`."""
        return self._closed

    async def aclose(self) -> None:
        """Close the connection pool (and any open stream); later calls raise HermesClosedError."""
        self._closed = True
        await self._client.aclose()

    async def __aenter__(self) -> HttpTransport:
        self._check_open("enter")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<HttpTransport {redact_url(self.base_url)} key={'set' if self._secret else 'none'} {state}>"

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise HermesClosedError(f"cannot {what}: the client for {self.base_url} is closed")

    def _check_ready(self, endpoint: str, auth: bool) -> None:
        self._check_open(f"call {endpoint}")
        if auth and self._auth is None:
            # The API Server refuses to start without a key (docs/protocol/api-server.md §1), so a keyless
            # request can only be a configuration mistake: say so instead of showing a bare 401.
            raise HermesUsageError(
                f"{endpoint} needs a key, but none is configured: {self._missing_key_hint}"
            )

    # --- requests ----------------------------------------------------------------------------------------

    def endpoint(self, method: str, path: str) -> str:
        """The name used in messages, e.g. ``POST /v1/runs``."""
        return f"{method.upper()} {path}"

    async def _before_first_request(self) -> None:
        if self._preflight is None:
            return
        if self._preflight_lock is None:
            self._preflight_lock = asyncio.Lock()
        async with self._preflight_lock:
            if self._preflight is not None:
                await self._preflight(self)
                self._preflight = None

    async def probe(self, url: str) -> tuple[int, str]:
        """``GET url`` (absolute, outside ``base_url``) with the key; ``(status, body)`` whatever the status.

        For checks that read a refusal as an answer (a profile prefix the server does not know is a 404).
        """
        name = f"GET {url.split('//', 1)[-1].split('/', 1)[-1]}"
        self._check_ready(name, True)
        with translate_errors(name, secrets=self._secrets()):
            response = await self._client.get(url, auth=self._auth)
        return response.status_code, response.text[:2000]

    async def request(
        self,
        method: str,
        path: str,
        *,
        json_body: object = None,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: bool = True,
        validation_on_500: bool = False,
        endpoint: str | None = None,
    ) -> httpx.Response:
        """Send one request and return the (fully read) response; error statuses raise HermesHTTPError."""
        name = endpoint or self.endpoint(method, path)
        self._check_ready(name, auth)
        await self._before_first_request()
        request = self._build(
            method, path, json_body=json_body, params=params, headers=headers, endpoint=name
        )
        with translate_errors(name, secrets=self._secrets()):
            response = await self._client.send(request, auth=self._auth if auth else None)
        self._raise_for_status(response, name, validation_on_500=validation_on_500)
        return response

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        json_body: object = None,
        params: Mapping[str, str | int] | None = None,
        auth: bool = True,
        validation_on_500: bool = False,
    ) -> Any:
        """Like :meth:`request`, returning the parsed JSON body (HermesProtocolError if it does not parse)."""
        name = self.endpoint(method, path)
        response = await self.request(
            method,
            path,
            json_body=json_body,
            params=params,
            auth=auth,
            validation_on_500=validation_on_500,
            endpoint=name,
        )
        with translate_errors(name):
            return response.json()

    async def open_stream(
        self,
        method: str,
        path: str,
        *,
        json_body: object = None,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send a request whose answer is a stream; the caller must ``aclose()`` the returned response.

        The read timeout between bytes is :data:`STREAM_READ_TIMEOUT`. An error status is read in full and
        raised here, so a 401/404/429 surfaces before any iteration starts.
        """
        name = self.endpoint(method, path)
        self._check_ready(name, True)
        await self._before_first_request()
        request = self._build(
            method, path, json_body=json_body, params=params, headers=headers, endpoint=name
        )
        request.extensions["timeout"] = httpx.Timeout(
            STREAM_READ_TIMEOUT, connect=self._connect_timeout
        ).as_dict()
        request.headers["Accept"] = "text/event-stream"
        with translate_errors(name, secrets=self._secrets()):
            response = await self._client.send(request, auth=self._auth, stream=True)
            if response.is_error:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
        self._raise_for_status(response, name)
        return response

    async def iter_sse(
        self, response: httpx.Response, endpoint: str
    ) -> AsyncGenerator[httpx_sse.ServerSentEvent, None]:
        """Yield the SSE events of an open stream response, translating transport errors.

        Comments (``: keepalive``, ``: stream closed``) are consumed by the decoder and never yielded.
        """
        source = httpx_sse.EventSource(response)
        iterator: AsyncIterator[httpx_sse.ServerSentEvent] = source.aiter_sse()
        while True:
            with translate_errors(endpoint, secrets=self._secrets()):
                try:
                    event = await iterator.__anext__()
                except StopAsyncIteration:
                    return
            yield event

    def _build(
        self,
        method: str,
        path: str,
        *,
        json_body: object,
        params: Mapping[str, str | int] | None,
        headers: Mapping[str, str] | None,
        endpoint: str,
    ) -> httpx.Request:
        content = None if json_body is None else encode_json(json_body, endpoint=endpoint)
        all_headers = dict(headers or {})
        if content is not None:
            all_headers["Content-Type"] = "application/json"
        with translate_errors(endpoint):
            return self._client.build_request(
                method, path, content=content, params=params, headers=all_headers
            )

    def _raise_for_status(
        self, response: httpx.Response, endpoint: str, *, validation_on_500: bool = False
    ) -> None:
        if not response.is_error:
            return
        raise error_for_status(
            response.status_code,
            response.text,
            endpoint=endpoint,
            retry_after=response.headers.get("Retry-After"),
            secrets=self._secrets(),
            validation_on_500=validation_on_500,
        )

    def _secrets(self) -> tuple[object, ...]:
        return (self._secret,) if self._secret else ()


ClientT = TypeVar("ClientT", bound="ApiServerClient")


class ApiServerClient:
    """What :class:`~hermes_notebook.client.api.ApiClient` and
    :class:`~hermes_notebook.client.jobs.JobsClient`
    share: one server, one bearer key, the same lifecycle (``async with`` or :meth:`aclose`) and a repr that
    says whether a key is set, never what it is.

    ``settings`` defaults to :meth:`Settings.resolve` (arguments, then ``HERMES_API_URL``/``HERMES_API_KEY``,
    then ``http://127.0.0.1:8642``); ``url``/``key`` override it.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        url: str | None = None,
        key: str | Secret | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings, self._http = api_server_transport(settings, url=url, key=key, transport=transport)

    @property
    def url(self) -> str:
        """The API Server base URL."""
        return self.settings.api_url

    async def aclose(self) -> None:
        """Close connections; later calls raise HermesClosedError."""
        await self._http.aclose()

    async def __aenter__(self: ClientT) -> ClientT:
        await self._http.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._http.closed else "open"
        return (
            f"<{type(self).__name__} {redact_url(self.url)} "
            f"key={'set' if self.settings.api_key else 'none'} {state}>"
        )


def api_server_transport(
    settings: Settings | None,
    *,
    url: str | None,
    key: str | Secret | None,
    transport: httpx.AsyncBaseTransport | None,
) -> tuple[Settings, HttpTransport]:
    """Resolve settings (explicit ``url``/``key`` win) and build the API Server transport.

    Shared by :class:`~hermes_notebook.client.api.ApiClient` and
    :class:`~hermes_notebook.client.jobs.JobsClient`, which talk to the same server with the same bearer key.
    """
    from .api_profile import check_api_profile, profile_base_url

    if settings is None:
        settings = Settings.resolve(api_url=url, api_key=key)
    elif url is not None or key is not None:
        settings = settings.with_(api_url=url or settings.api_url, api_key=key or settings.api_key)
    http = HttpTransport(
        profile_base_url(settings),
        settings.api_key,
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        missing_key_hint="pass key=... or set HERMES_API_KEY",
        proxy=settings.proxy_for(settings.api_url),
        preflight=None if settings.profile is None else check_api_profile(settings),
        transport=transport,
    )
    return settings, http
