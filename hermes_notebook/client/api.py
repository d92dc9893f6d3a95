"""Async client for the Hermes API Server (health, models, runs and their events, chat, responses, sessions).

Section numbers (§N) refer to ``shared/hermes/api-server-protocol.md`` (hermes-agent 0.19.0).

Run events: the stream at ``GET /v1/runs/{id}/events`` has exactly one consumer and no resume (§3 "Late
connect, reconnect, several readers"). :meth:`ApiClient.run_events` therefore reads it once, stops at the first
terminal event, and if the stream breaks or is gone it never reconnects (a second reader can hang forever):
it polls ``GET /v1/runs/{id}`` instead, yields a :class:`StreamLost` marker and then a terminal event
synthesized from the status (``synthesized=True``), whose ``output`` is the complete final text.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import re
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Generic, Literal, TypeVar

import httpx

from ..errors import HermesConnectionError, HermesNotFoundError, HermesRunError, HermesUsageError
from ..events import Event
from ..settings import Secret, Settings
from ._http import HttpTransport, translate_errors

__all__ = [
    "APPROVAL_CHOICES",
    "ApiClient",
    "ApprovalRequest",
    "ApprovalResponded",
    "ApprovalResult",
    "AsyncStream",
    "Capabilities",
    "ChatChunk",
    "ChatCompletion",
    "ChatStream",
    "Health",
    "HermesResponse",
    "MessageDelta",
    "ModelInfo",
    "ReasoningAvailable",
    "ResponseEvent",
    "ResponseStream",
    "RunCancelled",
    "RunCompleted",
    "RunEvent",
    "RunEventStream",
    "RunFailed",
    "RunRef",
    "RunStatus",
    "SessionInfo",
    "SessionMessage",
    "StreamLost",
    "ToolCompleted",
    "ToolProgress",
    "ToolStarted",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Answers accepted by ``POST /v1/runs/{id}/approval`` (§3 "Approvals on /v1/runs").
APPROVAL_CHOICES = ("once", "session", "always", "deny")
#: Run statuses after which nothing changes (§3 "Lifecycle and status").
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
#: First and longest pause between status polls after a run's event stream was lost, in seconds.
POLL_MIN_DELAY = 0.25
POLL_MAX_DELAY = 2.0
#: How long polling tolerates the server being unreachable before giving up, in seconds.
POLL_UNREACHABLE_BUDGET = 30.0

_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,256}$")


def _check_id(value: object, what: str) -> str:
    """Ids go into URL paths: refuse anything that could change the path before sending."""
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise HermesUsageError(f"{what} must be a non-empty id of letters, digits and _.:- ; got {value!r}")
    return value


def _raw(data: object) -> dict[str, Any]:
    return dict(data) if isinstance(data, Mapping) else {}


# --- simple typed results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Health:
    """``GET /health`` (no auth): ``{"status","platform","version"}`` (§2)."""

    status: str
    platform: str | None = None
    version: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """True when the server says ``status: ok``."""
        return self.status == "ok"


@dataclass(frozen=True)
class ModelInfo:
    """One entry of ``GET /v1/models``: the advertised model name and any ``model_routes`` aliases (§2)."""

    id: str
    owned_by: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Capabilities:
    """``GET /v1/capabilities``. Note ``jobs_admin`` is reported false although ``/api/jobs`` works (§2)."""

    platform: str | None
    model: str | None
    features: Mapping[str, Any]
    endpoints: Mapping[str, Any]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def supports(self, feature: str) -> bool:
        """True when the feature flag is present and truthy."""
        return bool(self.features.get(feature))


@dataclass(frozen=True)
class RunRef:
    """What ``POST /v1/runs`` answers (202 ``{"run_id","status":"started"}``, §3)."""

    id: str
    status: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RunStatus:
    """``GET /v1/runs/{id}``: kept in server memory for 3600 s after the run ends (§3)."""

    run_id: str
    status: str
    output: str | None = None
    usage: Mapping[str, Any] | None = None
    error: str | None = None
    session_id: str | None = None
    model: str | None = None
    last_event: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        """True once the status is ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunStatus:
        """Build from the JSON body; unknown keys stay in ``raw``."""
        return cls(
            run_id=str(data.get("run_id", "")),
            status=str(data.get("status", "")),
            output=data.get("output"),
            usage=data.get("usage"),
            error=data.get("error"),
            session_id=data.get("session_id"),
            model=data.get("model"),
            last_event=data.get("last_event"),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            raw=_raw(data),
        )


@dataclass(frozen=True)
class ApprovalResult:
    """``POST /v1/runs/{id}/approval`` answer: how many pending approvals the choice resolved (§3)."""

    run_id: str
    choice: str
    resolved: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


# --- run events -------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunEvent:
    """One event of a run (§3 "Where events come from"); subclasses type the known ones.

    ``payload`` is the JSON object minus ``event``, ``run_id`` and ``timestamp``, as in
    ``hermes_notebook.events.Event``; :meth:`to_event` converts. ``synthesized`` is True for events the
    client made up after the stream was lost (:class:`StreamLost` and the terminal event that follows it).
    """

    type: str = ""
    run_id: str = ""
    timestamp: float | None = None
    payload: Mapping[str, Any] = field(default_factory=dict, repr=False)
    synthesized: bool = False

    TERMINAL: ClassVar[bool] = False
    _BY_TYPE: ClassVar[dict[str, builtins.type[RunEvent]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        wire_type = cls.__dict__.get("type")
        if isinstance(wire_type, str) and wire_type:
            RunEvent._BY_TYPE[wire_type] = cls

    @property
    def terminal(self) -> bool:
        """True for ``run.completed``, ``run.failed`` and ``run.cancelled``."""
        return self.TERMINAL

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> RunEvent:
        """Parse one SSE ``data:`` object; the name is the JSON key ``event`` (there is no ``event:`` line)."""
        wire_type = str(obj.get("event", ""))
        payload = {k: v for k, v in obj.items() if k not in ("event", "run_id", "timestamp")}
        target: builtins.type[RunEvent] = cls._BY_TYPE.get(wire_type, RunEvent)
        names = {f.name for f in fields(target)} - {f.name for f in fields(RunEvent)}
        typed = {k: v for k, v in payload.items() if k in names}
        timestamp = obj.get("timestamp")
        return target(
            type=wire_type,
            run_id=str(obj.get("run_id", "")),
            timestamp=float(timestamp) if isinstance(timestamp, (int, float)) else None,
            payload=payload,
            **typed,
        )

    def to_event(self) -> Event:
        """Convert to :class:`hermes_notebook.events.Event` (dialect ``run``) for the turn model."""
        return Event(type=self.type, payload=dict(self.payload), run_id=self.run_id, dialect="run")


@dataclass(frozen=True, kw_only=True)
class MessageDelta(RunEvent):
    """A piece of the answer. After a tool round the first delta starts with ``"\\n\\n"``."""

    type: Literal["message.delta"] = "message.delta"
    delta: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolStarted(RunEvent):
    """A tool began; runs carry no tool ids, only the name and a short preview (e.g. the command)."""

    type: Literal["tool.started"] = "tool.started"
    tool: str = ""
    preview: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCompleted(RunEvent):
    """A tool finished; ``error`` is True when it failed or its command was denied."""

    type: Literal["tool.completed"] = "tool.completed"
    tool: str = ""
    duration: float | None = None
    error: bool = False


@dataclass(frozen=True, kw_only=True)
class ReasoningAvailable(RunEvent):
    """Misnamed by the server: the first 500 characters of each LLM turn's *content*, not reasoning."""

    type: Literal["reasoning.available"] = "reasoning.available"
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest(RunEvent):
    """A dangerous command waits for :meth:`ApiClient.approve_run`; unanswered, it is denied after a timeout."""

    type: Literal["approval.request"] = "approval.request"
    command: str = ""
    description: str | None = None
    pattern_key: str | None = None
    pattern_keys: Sequence[str] = ()
    allow_permanent: bool = False
    smart_denied: bool = False
    choices: Sequence[str] = APPROVAL_CHOICES


@dataclass(frozen=True, kw_only=True)
class ApprovalResponded(RunEvent):
    """Someone answered an approval request."""

    type: Literal["approval.responded"] = "approval.responded"
    choice: str = ""
    resolved: int = 0


@dataclass(frozen=True, kw_only=True)
class RunCompleted(RunEvent):
    """The run finished; ``output`` is the final text (complete even when deltas were missed)."""

    type: Literal["run.completed"] = "run.completed"
    output: str = ""
    usage: Mapping[str, Any] | None = None
    TERMINAL: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class RunFailed(RunEvent):
    """The run failed; ``error`` is the server's (redacted) reason."""

    type: Literal["run.failed"] = "run.failed"
    error: str = ""
    TERMINAL: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class RunCancelled(RunEvent):
    """The run was stopped (``POST /v1/runs/{id}/stop``) or its task was cancelled."""

    type: Literal["run.cancelled"] = "run.cancelled"
    TERMINAL: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class StreamLost(RunEvent):
    """Client-side marker: the event stream broke or was gone before a terminal event.

    Events between the loss and the end of the run (deltas, tools, approval requests) were not seen; the
    client polled the run's status and the synthesized terminal event that follows carries the final result.
    """

    type: Literal["stream.lost"] = "stream.lost"
    reason: str = ""
    #: The run's status when the loss was noticed (e.g. ``waiting_for_approval``), None if unreachable.
    status: str | None = None
    synthesized: bool = True


def _terminal_from_status(status: RunStatus) -> RunEvent:
    common: dict[str, Any] = {"run_id": status.run_id, "timestamp": status.updated_at, "synthesized": True}
    if status.status == "completed":
        payload = {"output": status.output or "", "usage": status.usage}
        return RunCompleted(output=status.output or "", usage=status.usage, payload=payload, **common)
    if status.status == "failed":
        error = status.error or "the run failed"
        return RunFailed(error=error, payload={"error": error}, **common)
    return RunCancelled(**common)


# --- streams ----------------------------------------------------------------------------------------------


class AsyncStream(Generic[T]):
    """An async iterator over a server stream that closes its HTTP response when done, broken off or closed.

    Use ``async for item in stream`` and, to stop early, ``await stream.aclose()`` or ``async with stream``.
    """

    def __init__(self, items: AsyncGenerator[T, None], response: httpx.Response | None = None) -> None:
        self._items = items
        self._response = response

    def __aiter__(self) -> AsyncStream[T]:
        return self

    async def __anext__(self) -> T:
        return await self._items.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the connection."""
        await self._items.aclose()
        if self._response is not None:
            await self._response.aclose()

    async def __aenter__(self) -> AsyncStream[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class RunEventStream(AsyncStream[RunEvent]):
    """The events of one run, ending with its terminal event; see the module docstring for stream loss.

    ``lost`` is True once the stream was lost and the result came from polling.
    """

    def __init__(self, client: ApiClient, run_id: str) -> None:
        super().__init__(self._events())
        self.run_id = run_id
        self.lost = False
        self._client = client

    async def _drop_connection(self) -> None:
        """Close the underlying HTTP response as a network drop would (a test hook)."""
        if self._response is not None:
            await self._response.aclose()

    async def _events(self) -> AsyncGenerator[RunEvent, None]:
        client, run_id = self._client, self.run_id
        client._start_reading(run_id)
        try:
            reason = None
            async with aclosing(self._read_stream()) as events:
                async for event in events:
                    if isinstance(event, str):
                        reason = event
                        break
                    yield event
                    if event.terminal:
                        return
            self.lost = True
            logger.info("run %s: event stream lost (%s); polling its status", run_id, reason)
            status = await client._status_or_none(run_id)
            yield StreamLost(run_id=run_id, timestamp=time.time(), reason=reason or "unknown",
                             status=status.status if status else None)
            if status is None or not status.done:
                status = await client._poll_until_done(run_id)
            yield _terminal_from_status(status)
        finally:
            client._stop_reading(run_id)

    async def _read_stream(self) -> AsyncGenerator[RunEvent | str, None]:
        """Yield events, then a string saying why the stream ended without a terminal event (if it did)."""
        http = self._client._http
        path = f"/v1/runs/{self.run_id}/events"
        try:
            self._response = await http.open_stream("GET", path)
        except HermesNotFoundError as exc:  # consumed by an earlier reader, or swept after 300 s (§3)
            yield f"the event stream is gone ({exc.server_message or 'HTTP 404'})"
            return
        try:
            async for sse in http.iter_sse(self._response, f"GET {path}"):
                event = _parse_run_sse(sse.data, path)
                if event is not None:
                    yield event
                    if event.terminal:
                        return
            yield "the event stream ended before the run did"
        except HermesConnectionError as exc:  # includes timeouts and a response closed under us
            yield f"the event stream broke: {exc}"
        finally:
            await self._response.aclose()


def _parse_run_sse(data: str, path: str) -> RunEvent | None:
    if not data.strip():
        return None
    try:
        obj = json.loads(data)
    except ValueError:
        logger.warning("GET %s: skipped an event whose data is not JSON: %.80r", path, data)
        return None
    if not isinstance(obj, Mapping) or "event" not in obj:
        logger.warning("GET %s: skipped an event without an 'event' key: %.80r", path, data)
        return None
    return RunEvent.from_json(obj)


# --- chat completions -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatCompletion:
    """A non-streamed ``chat.completion`` (§5); ``hermes`` holds the incomplete-run block when present."""

    id: str
    model: str | None
    text: str
    finish_reason: str | None
    usage: Mapping[str, Any] | None
    session_id: str | None
    hermes: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], session_id: str | None) -> ChatCompletion:
        """Build from the body and the ``X-Hermes-Session-Id`` response header."""
        choice = (data.get("choices") or [{}])[0]
        return cls(
            id=str(data.get("id", "")),
            model=data.get("model"),
            text=str((choice.get("message") or {}).get("content") or ""),
            finish_reason=choice.get("finish_reason"),
            usage=data.get("usage"),
            session_id=session_id,
            hermes=data.get("hermes"),
            raw=_raw(data),
        )


@dataclass(frozen=True)
class ChatChunk:
    """One ``chat.completion.chunk``: ``text`` is the content delta ("" for role/final chunks)."""

    id: str
    text: str
    role: str | None = None
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    kind: Literal["chunk"] = "chunk"


@dataclass(frozen=True)
class ToolProgress:
    """An in-band ``event: hermes.tool.progress`` frame: a tool is ``running`` or ``completed`` (§5)."""

    tool: str
    status: str
    tool_call_id: str | None = None
    label: str | None = None
    emoji: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    kind: Literal["tool.progress"] = "tool.progress"


class ChatStream(AsyncStream[ChatChunk | ToolProgress]):
    """A streamed chat completion; ``text``, ``finish_reason`` and ``usage`` fill in as chunks arrive."""

    def __init__(self, response: httpx.Response, http: HttpTransport) -> None:
        super().__init__(self._items_from(response, http), response)
        self.session_id: str | None = response.headers.get("X-Hermes-Session-Id")
        self.text = ""
        self.finish_reason: str | None = None
        self.usage: Mapping[str, Any] | None = None

    async def _items_from(
        self, response: httpx.Response, http: HttpTransport
    ) -> AsyncGenerator[ChatChunk | ToolProgress, None]:
        endpoint = "POST /v1/chat/completions"
        try:
            async for sse in http.iter_sse(response, endpoint):
                if sse.data.strip() == "[DONE]":
                    return
                with translate_errors(endpoint):
                    obj = json.loads(sse.data)
                if sse.event == "hermes.tool.progress":
                    yield ToolProgress(
                        tool=str(obj.get("tool", "")),
                        status=str(obj.get("status", "")),
                        tool_call_id=obj.get("toolCallId"),
                        label=obj.get("label"),
                        emoji=obj.get("emoji"),
                        raw=obj,
                    )
                    continue
                yield self._chunk(obj)
        finally:
            await response.aclose()

    def _chunk(self, obj: Mapping[str, Any]) -> ChatChunk:
        choice = (obj.get("choices") or [{}])[0]
        delta = choice.get("delta") or {}
        chunk = ChatChunk(
            id=str(obj.get("id", "")),
            text=str(delta.get("content") or ""),
            role=delta.get("role"),
            finish_reason=choice.get("finish_reason"),
            usage=obj.get("usage"),
            raw=_raw(obj),
        )
        self.text += chunk.text
        self.finish_reason = chunk.finish_reason or self.finish_reason
        self.usage = chunk.usage or self.usage
        return chunk


# --- responses --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HermesResponse:
    """A Responses-API object (§4). ``status`` is ``completed`` even when the agent failed (server quirk)."""

    id: str
    status: str
    model: str | None
    text: str
    output: Sequence[Mapping[str, Any]]
    usage: Mapping[str, Any] | None
    session_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], session_id: str | None = None) -> HermesResponse:
        """Build from a response object; ``text`` joins the ``output_text`` parts of its message items."""
        output = [item for item in data.get("output") or [] if isinstance(item, Mapping)]
        texts = [
            str(part.get("text", ""))
            for item in output
            if item.get("type") == "message"
            for part in item.get("content") or []
            if isinstance(part, Mapping) and part.get("type") == "output_text"
        ]
        return cls(
            id=str(data.get("id", "")),
            status=str(data.get("status", "")),
            model=data.get("model"),
            text="".join(texts),
            output=output,
            usage=data.get("usage"),
            session_id=session_id,
            raw=_raw(data),
        )


@dataclass(frozen=True)
class ResponseEvent:
    """One ``response.*`` stream event (``event:`` line + ``data:`` JSON with ``type``, ``sequence_number``)."""

    type: str
    sequence_number: int | None
    data: Mapping[str, Any] = field(repr=False)

    @property
    def delta(self) -> str:
        """The text of a ``response.output_text.delta`` ("" for other events)."""
        return str(self.data.get("delta") or "") if self.type == "response.output_text.delta" else ""


class ResponseStream(AsyncStream[ResponseEvent]):
    """A streamed response; ``text`` accumulates deltas and ``response`` is set by the terminal event."""

    TERMINAL = frozenset({"response.completed", "response.failed"})

    def __init__(self, response: httpx.Response, http: HttpTransport) -> None:
        super().__init__(self._items_from(response, http), response)
        self.session_id: str | None = response.headers.get("X-Hermes-Session-Id")
        self.text = ""
        self.response: HermesResponse | None = None

    async def _items_from(self, response: httpx.Response, http: HttpTransport) -> AsyncGenerator[ResponseEvent, None]:
        endpoint = "POST /v1/responses"
        try:
            async for sse in http.iter_sse(response, endpoint):
                with translate_errors(endpoint):
                    obj = json.loads(sse.data)
                event = ResponseEvent(str(obj.get("type") or sse.event), obj.get("sequence_number"), obj)
                self.text += event.delta
                if event.type in self.TERMINAL and isinstance(obj.get("response"), Mapping):
                    self.response = HermesResponse.from_json(obj["response"], self.session_id)
                yield event
                if event.type in self.TERMINAL:  # no [DONE] on this stream (§4 "Streaming")
                    return
        finally:
            await response.aclose()


# --- sessions ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """A state.db session as listed by ``GET /api/sessions`` (§6)."""

    id: str
    source: str | None = None
    title: str | None = None
    model: str | None = None
    started_at: float | None = None
    last_active: float | None = None
    message_count: int | None = None
    preview: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionInfo:
        """Build from one ``data`` item; unknown keys stay in ``raw``."""
        known = {f.name for f in fields(cls)} - {"raw"}
        return cls(**{k: data.get(k) for k in known}, raw=_raw(data))  # type: ignore[arg-type]


@dataclass(frozen=True)
class SessionMessage:
    """One stored message of a session (``GET /api/sessions/{id}/messages``, §6)."""

    id: Any
    role: str
    content: Any
    tool_calls: Any = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    timestamp: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionMessage:
        """Build from one ``data`` item; unknown keys stay in ``raw``."""
        known = {f.name for f in fields(cls)} - {"raw"}
        return cls(**{k: data.get(k) for k in known}, raw=_raw(data))  # type: ignore[arg-type]


# --- the client -------------------------------------------------------------------------------------------


class ApiClient:
    """Async client for the API Server. Use ``async with ApiClient(...) as api:`` or call :meth:`aclose`.

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
        if settings is None:
            settings = Settings.resolve(api_url=url, api_key=key)
        elif url is not None or key is not None:
            settings = settings.with_(api_url=url or settings.api_url, api_key=key or settings.api_key)
        self.settings = settings
        self._http = HttpTransport(
            settings.api_url,
            settings.api_key,
            connect_timeout=settings.connect_timeout,
            request_timeout=settings.request_timeout,
            missing_key_hint="pass key=... or set HERMES_API_KEY",
            transport=transport,
        )
        self._readers: set[str] = set()

    # --- lifecycle ---

    @property
    def url(self) -> str:
        """The API Server base URL."""
        return self.settings.api_url

    async def aclose(self) -> None:
        """Close connections; later calls raise HermesClosedError."""
        await self._http.aclose()

    async def __aenter__(self) -> ApiClient:
        await self._http.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self._http.closed else "open"
        return f"<ApiClient {self.url} key={'set' if self.settings.api_key else 'none'} {state}>"

    # --- server info ---

    async def health(self) -> Health:
        """``GET /health`` without auth."""
        data = await self._http.request_json("GET", "/health", auth=False)
        return Health(status=str(data.get("status")), platform=data.get("platform"), version=data.get("version"),
                      raw=_raw(data))

    async def models(self) -> list[ModelInfo]:
        """``GET /v1/models``: the advertised model and aliases (the LLM itself comes from config.yaml)."""
        data = await self._http.request_json("GET", "/v1/models")
        return [ModelInfo(id=str(m.get("id")), owned_by=m.get("owned_by"), raw=_raw(m)) for m in data.get("data", [])]

    async def capabilities(self) -> Capabilities:
        """``GET /v1/capabilities``: feature flags and the endpoint map."""
        data = await self._http.request_json("GET", "/v1/capabilities")
        return Capabilities(
            platform=data.get("platform"),
            model=data.get("model"),
            features=_raw(data.get("features")),
            endpoints=_raw(data.get("endpoints")),
            raw=_raw(data),
        )

    # --- runs ---

    async def start_run(
        self,
        input: str | Sequence[Mapping[str, Any]],
        *,
        session_id: str | None = None,
        instructions: str | None = None,
        conversation_history: Sequence[Mapping[str, Any]] | None = None,
        previous_response_id: str | None = None,
        model: str | None = None,
    ) -> RunRef:
        """``POST /v1/runs`` (202). ``session_id`` only labels the session: it does not load history (§3)."""
        _check_run_input(input)
        if conversation_history is not None:
            _check_history(conversation_history, "conversation_history")
        body = _drop_none(
            input=input if isinstance(input, str) else list(input),
            session_id=session_id,
            instructions=instructions,
            conversation_history=None if conversation_history is None else list(conversation_history),
            previous_response_id=previous_response_id,
            model=model,
        )
        data = await self._http.request_json("POST", "/v1/runs", json_body=body)
        return RunRef(id=str(data.get("run_id")), status=str(data.get("status")), raw=_raw(data))

    def run_events(self, run_id: str) -> RunEventStream:
        """The run's events, ending with its terminal event (one reader per run; see the module docstring)."""
        _check_id(run_id, "run_id")
        if run_id in self._readers:
            raise HermesUsageError(
                f"run {run_id} already has a reader in this client; a second reader would steal its events (§3)"
            )
        return RunEventStream(self, run_id)

    async def run_status(self, run_id: str) -> RunStatus:
        """``GET /v1/runs/{id}``; HermesNotFoundError once the run is unknown or expired (1 h after its end)."""
        data = await self._http.request_json("GET", f"/v1/runs/{_check_id(run_id, 'run_id')}")
        return RunStatus.from_json(data)

    async def approve_run(self, run_id: str, choice: str, *, all: bool = False) -> ApprovalResult:
        """Answer the oldest pending approval (or every one with ``all=True``): once, session, always or deny."""
        _check_id(run_id, "run_id")
        if choice not in APPROVAL_CHOICES:
            raise HermesUsageError(f"approval choice must be one of {', '.join(APPROVAL_CHOICES)}; got {choice!r}")
        body: dict[str, Any] = {"choice": choice}
        if all:
            body["all"] = True
        data = await self._http.request_json("POST", f"/v1/runs/{run_id}/approval", json_body=body)
        return ApprovalResult(run_id=str(data.get("run_id", run_id)), choice=str(data.get("choice", choice)),
                              resolved=int(data.get("resolved") or 0), raw=_raw(data))

    async def stop_run(self, run_id: str) -> RunRef:
        """``POST /v1/runs/{id}/stop`` (cooperative; the run then ends ``cancelled``). 404 once it has ended."""
        data = await self._http.request_json("POST", f"/v1/runs/{_check_id(run_id, 'run_id')}/stop")
        return RunRef(id=str(data.get("run_id", run_id)), status=str(data.get("status")), raw=_raw(data))

    async def wait_run(self, run_id: str, *, timeout: float | None = None) -> RunStatus:
        """Poll until the run ends and return its final status (``output``, ``usage``).

        Polls rather than reading events so it never steals them from a reader. Raises HermesRunError if the
        run failed (a cancelled run is returned, ``status == "cancelled"``) and TimeoutError after ``timeout``.
        """
        _check_id(run_id, "run_id")
        status = await asyncio.wait_for(self._poll_until_done(run_id), timeout)
        if status.status == "failed":
            raise HermesRunError(f"run {run_id} failed: {status.error or 'no reason given'}",
                                 status="failed", run_id=run_id)
        return status

    async def _status_or_none(self, run_id: str) -> RunStatus | None:
        try:
            return await self.run_status(run_id)
        except HermesConnectionError:
            return None

    async def _poll_until_done(self, run_id: str) -> RunStatus:
        delay, unreachable_since = POLL_MIN_DELAY, None
        while True:
            try:
                status = await self.run_status(run_id)
                unreachable_since = None
            except HermesConnectionError:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since > POLL_UNREACHABLE_BUDGET:
                    raise
                logger.info("run %s: status poll failed; retrying in %.2f s", run_id, delay)
            else:
                if status.done:
                    return status
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX_DELAY)

    def _start_reading(self, run_id: str) -> None:
        if run_id in self._readers:
            raise HermesUsageError(f"run {run_id} already has a reader in this client")
        self._readers.add(run_id)

    def _stop_reading(self, run_id: str) -> None:
        self._readers.discard(run_id)

    # --- chat completions ---

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        stream: bool = False,
        session_id: str | None = None,
        model: str | None = None,
    ) -> ChatCompletion | ChatStream:
        """``POST /v1/chat/completions``. With ``stream=True`` returns a :class:`ChatStream` to iterate.

        ``session_id`` is sent as ``X-Hermes-Session-Id``: the server then loads that session's history and
        uses only the last message from ``messages`` (§5 "Session semantics").
        """
        _check_history(messages, "messages")
        if not messages:
            raise HermesUsageError("messages must not be empty")
        headers = {"X-Hermes-Session-Id": _check_id(session_id, "session_id")} if session_id else None
        body = _drop_none(messages=list(messages), model=model, stream=True if stream else None)
        if stream:
            response = await self._http.open_stream("POST", "/v1/chat/completions", json_body=body, headers=headers)
            return ChatStream(response, self._http)
        reply = await self._http.request("POST", "/v1/chat/completions", json_body=body, headers=headers)
        with translate_errors("POST /v1/chat/completions"):
            data = reply.json()
        return ChatCompletion.from_json(data, reply.headers.get("X-Hermes-Session-Id"))

    # --- responses ---

    async def create_response(
        self,
        input: str | Sequence[Any],
        *,
        instructions: str | None = None,
        previous_response_id: str | None = None,
        conversation: str | None = None,
        conversation_history: Sequence[Mapping[str, Any]] | None = None,
        store: bool | None = None,
        stream: bool = False,
        model: str | None = None,
        truncation: Literal["auto"] | None = None,
    ) -> HermesResponse | ResponseStream:
        """``POST /v1/responses``. With ``stream=True`` returns a :class:`ResponseStream` to iterate.

        Chaining with ``previous_response_id``/``conversation`` duplicates user turns in 0.19.0 (§4); prefer
        ``conversation_history`` for clean multi-turn context.
        """
        if conversation is not None and previous_response_id is not None:
            raise HermesUsageError("use either conversation or previous_response_id, not both (§4)")
        if not input:
            raise HermesUsageError("input must be a non-empty string or list")
        if conversation_history is not None:
            _check_history(conversation_history, "conversation_history")
        body = _drop_none(
            input=input if isinstance(input, str) else list(input),
            instructions=instructions,
            previous_response_id=previous_response_id,
            conversation=conversation,
            conversation_history=None if conversation_history is None else list(conversation_history),
            store=store,
            stream=True if stream else None,
            model=model,
            truncation=truncation,
        )
        if stream:
            response = await self._http.open_stream("POST", "/v1/responses", json_body=body)
            return ResponseStream(response, self._http)
        reply = await self._http.request("POST", "/v1/responses", json_body=body)
        with translate_errors("POST /v1/responses"):
            data = reply.json()
        return HermesResponse.from_json(data, reply.headers.get("X-Hermes-Session-Id"))

    async def get_response(self, response_id: str) -> HermesResponse:
        """``GET /v1/responses/{id}`` (stored responses: an LRU of 100)."""
        data = await self._http.request_json("GET", f"/v1/responses/{_check_id(response_id, 'response_id')}")
        return HermesResponse.from_json(data)

    async def delete_response(self, response_id: str) -> bool:
        """``DELETE /v1/responses/{id}``; also drops conversation names pointing at it."""
        data = await self._http.request_json("DELETE", f"/v1/responses/{_check_id(response_id, 'response_id')}")
        return bool(data.get("deleted"))

    # --- sessions ---

    async def sessions(
        self, limit: int = 50, offset: int = 0, *, source: str | None = None, include_children: bool = False
    ) -> list[SessionInfo]:
        """``GET /api/sessions`` (``limit`` at most 200), newest first."""
        if not 1 <= limit <= 200:
            raise HermesUsageError(f"limit must be between 1 and 200; got {limit}")
        params: dict[str, str | int] = {"limit": limit, "offset": offset}
        if source:
            params["source"] = source
        if include_children:
            params["include_children"] = "true"
        data = await self._http.request_json("GET", "/api/sessions", params=params)
        return [SessionInfo.from_json(item) for item in data.get("data", [])]

    async def session_messages(self, session_id: str) -> list[SessionMessage]:
        """``GET /api/sessions/{id}/messages``: the stored transcript, oldest first."""
        path = f"/api/sessions/{_check_id(session_id, 'session_id')}/messages"
        data = await self._http.request_json("GET", path)
        return [SessionMessage.from_json(item) for item in data.get("data", [])]


# --- request validation -----------------------------------------------------------------------------------


def _drop_none(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _check_run_input(value: object) -> None:
    """The server needs a truthy input, and 500s on an array whose last item is a bare string (§3)."""
    if isinstance(value, str):
        if not value:
            raise HermesUsageError("input must not be empty")
        return
    if not isinstance(value, Sequence) or not value:
        raise HermesUsageError("input must be a non-empty string or a non-empty list of {role, content} items")
    if not isinstance(value[-1], Mapping):
        raise HermesUsageError("the last input item must be a {role, content} object, not a bare value")


def _check_history(items: object, what: str) -> None:
    """Each item needs ``role`` and ``content`` (§3 conversation_history, §5 messages)."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise HermesUsageError(f"{what} must be a list of {{role, content}} objects")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or "role" not in item or "content" not in item:
            raise HermesUsageError(f"{what}[{i}] must have 'role' and 'content'")

