"""Async client for the Hermes API Server (health, models, runs and their events, chat, responses, sessions).

Section numbers (§N) refer to ``docs/protocol/api-server.md`` (hermes-agent 0.19.0).

Run events: the stream at ``GET /v1/runs/{id}/events`` has exactly one consumer and no resume (§3 "Late
connect, reconnect, several readers"). :meth:`ApiClient.run_events` therefore reads it once, stops at the
first terminal event, and if the stream breaks or is gone it never reconnects (a second reader can hang
forever): it polls ``GET /v1/runs/{id}`` instead, yields a :class:`StreamLost` marker and then a terminal
event synthesized from the status (``synthesized=True``), whose ``output`` is the complete final text.

The run-event types and :class:`RunEventStream` live in :mod:`hermes_notebook.client.run_events`, the chat and
response streams in :mod:`hermes_notebook.client.streams`; this module re-exports every one of them, so import
them from here.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import httpx

from ..errors import (
    HermesConnectionError,
    HermesError,
    HermesNotOfferedError,
    HermesRunError,
    HermesUsageError,
)
from ..settings import Secret, Settings
from ._http import ApiServerClient, HttpTransport, translate_errors
from ._mapping import raw as _raw
from .api_requests import IDEMPOTENCY_KEY, check_history, check_id, check_run_input, drop_none
from .api_types import (
    ApprovalResult,
    Capabilities,
    Health,
    ModelInfo,
    RunRef,
    RunStatus,
    SessionInfo,
    SessionMessage,
)
from .dashboard.offered import not_offered
from .run_events import (
    APPROVAL_CHOICES,
    ApprovalRequest,
    ApprovalResponded,
    MessageDelta,
    ReasoningAvailable,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunEventStream,
    RunFailed,
    RunInterrupted,
    RunReaders,
    StreamLost,
    ToolCompleted,
    ToolStarted,
)
from .streams import (
    AsyncStream,
    ChatChunk,
    ChatCompletion,
    ChatStream,
    HermesResponse,
    ResponseEvent,
    ResponseStream,
    ToolProgress,
)

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
    "RunInterrupted",
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

#: First and longest pause between status polls after a run's event stream was lost, in seconds.
POLL_MIN_DELAY = 0.25
POLL_MAX_DELAY = 2.0
#: How long polling tolerates the server being unreachable before giving up, in seconds.
POLL_UNREACHABLE_BUDGET = 30.0
# --- the client -------------------------------------------------------------------------------------------


class ApiClient(ApiServerClient):
    """Async client for the API Server. Use ``async with ApiClient(...) as api:`` or call :meth:`aclose`.

    Settings are resolved as in :class:`ApiServerClient`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        url: str | None = None,
        key: str | Secret | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(settings, url=url, key=key, transport=transport)
        self._readers = RunReaders()  # runs with an open event reader (the server allows only one)
        self._features: Mapping[str, Any] | None = None  # /v1/capabilities features, fetched once

    # --- server info ---

    async def health(self) -> Health:
        """``GET /health`` without auth."""
        data = await self._http.request_json("GET", "/health", auth=False)
        return Health(
            status=str(data.get("status")),
            platform=data.get("platform"),
            version=data.get("version"),
            raw=_raw(data),
        )

    async def models(self) -> list[ModelInfo]:
        """``GET /v1/models``: the advertised model and aliases (the LLM itself comes from config.yaml)."""
        data = await self._http.request_json("GET", "/v1/models")
        return [
            ModelInfo(id=str(m.get("id")), owned_by=m.get("owned_by"), raw=_raw(m))
            for m in data.get("data", [])
        ]

    async def model_options(self) -> dict[str, Any]:
        """``GET /api/model/options`` (newer servers: capability ``model_options``): providers and their
        models."""
        if not await self._feature("model_options"):
            raise HermesNotOfferedError("model options", "GET /api/model/options")
        return dict(await self._http.request_json("GET", "/api/model/options"))

    async def run_model_choice(self) -> bool:
        """Runs honour the request's ``model`` (newer servers: capability ``model_options``); 0.19.0 takes
        only ``model_routes`` aliases there and runs anything else on its configured model (§2)."""
        return bool(await self._feature("model_options"))

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

    async def _feature(self, name: str) -> Any:
        """One ``/v1/capabilities`` feature flag (fetched once per client; None when absent or
        unavailable)."""
        if self._features is None:
            try:
                self._features = (await self.capabilities()).features
            except HermesConnectionError:
                return None  # unreachable now: asked again next time; the request itself will say what failed
            except HermesError:  # an old server without the endpoint: no optional features
                self._features = {}
        return self._features.get(name)

    @property
    def http(self) -> HttpTransport:
        """The transport this client sends through (base URL, key, timeouts, error translation)."""
        return self._http

    @property
    def readers(self) -> RunReaders:
        """The runs this client reads events of (one reader per run)."""
        return self._readers

    async def resumable_runs(self) -> bool:
        """Run streams carry ``id:`` and resume from ``Last-Event-ID`` (newer servers: durable run
        records)."""
        try:
            return bool(await self._feature("runs_idempotency"))
        except HermesError:
            return False

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
        idempotency_key: str | None = None,
    ) -> RunRef:
        """``POST /v1/runs`` (202). ``session_id`` only labels the session: it does not load history (§3).

        Where the server offers durable run idempotency (``/v1/capabilities`` ``runs_idempotency``), the POST
        carries an ``Idempotency-Key`` (``idempotency_key`` or a fresh one) and is retried once with the same
        key after a connection failure: the server answers the same run (``RunRef.replayed``), never a second
        one.
        """
        check_run_input(input)
        if idempotency_key is not None and not IDEMPOTENCY_KEY.fullmatch(idempotency_key):
            raise HermesUsageError(
                "idempotency_key must be 1-255 visible ASCII characters (no spaces); got "
                f"{idempotency_key[:40]!r}"
            )
        if conversation_history is not None:
            check_history(conversation_history, "conversation_history")
        body = drop_none(
            input=input if isinstance(input, str) else list(input),
            session_id=session_id,
            instructions=instructions,
            conversation_history=None if conversation_history is None else list(conversation_history),
            previous_response_id=previous_response_id,
            model=model,
        )
        if idempotency_key is None and await self._feature("runs_idempotency"):
            idempotency_key = uuid.uuid4().hex
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None
        attempts = 2 if headers is not None else 1
        for attempt in range(1, attempts + 1):
            try:
                response = await self._http.request("POST", "/v1/runs", json_body=body, headers=headers)
                break
            except HermesConnectionError as exc:
                if attempt == attempts:
                    raise
                logger.info("POST /v1/runs failed (%s); retrying with the same Idempotency-Key", exc)
        with translate_errors("POST /v1/runs"):
            data = response.json()
        return RunRef(id=str(data.get("run_id")), status=str(data.get("status")), raw=_raw(data))

    async def steer_run(self, run_id: str, text: str) -> bool:
        """``POST /v1/runs/{id}/steer`` (newer servers): add guidance to a running run; True when accepted.

        The text reaches the model at its next tool result; text that never did comes back as
        ``pending_steer`` on the run's status. HermesHTTPError 409 once the run no longer accepts steering.
        """
        check_id(run_id, "run_id")
        if not isinstance(text, str) or not text.strip():
            raise HermesUsageError("steer text must be a non-empty string")
        if not await self._feature("run_steer"):  # 0.19.0 has no such route (docs/protocol/api-server.md §12)
            raise not_offered("steering a run", "POST /v1/runs/{id}/steer")
        data = await self._http.request_json("POST", f"/v1/runs/{run_id}/steer", json_body={"input": text})
        return bool(data.get("accepted"))

    def run_events(self, run_id: str) -> RunEventStream:
        """The run's events, ending with its terminal event (one reader per run; see the module docstring)."""
        check_id(run_id, "run_id")
        self._readers.ensure_free(run_id)
        return RunEventStream(self, run_id)

    async def run_status(self, run_id: str) -> RunStatus:
        """``GET /v1/runs/{id}``; HermesNotFoundError once the run is unknown or expired (1 h after its
        end)."""
        data = await self._http.request_json("GET", f"/v1/runs/{check_id(run_id, 'run_id')}")
        return RunStatus.from_json(data)

    async def approve_run(
        self,
        run_id: str,
        choice: str,
        *,
        all: bool = False,
        request_id: str | None = None,
    ) -> ApprovalResult:
        """Answer a pending approval of the run: once, session, always or deny.

        With ``request_id`` (from :class:`ApprovalRequest`, which only newer servers fill in) exactly that
        request is answered; the server refuses an id it is not waiting on (409). Without it the server
        answers the run's *oldest* pending approval (or every one with ``all=True``): Hermes 0.19.0 names no
        approvals and ignores the field, so there approvals must be answered in the order they were requested.
        """
        check_id(run_id, "run_id")
        if choice not in APPROVAL_CHOICES:
            raise HermesUsageError(
                f"approval choice must be one of {', '.join(APPROVAL_CHOICES)}; got {choice!r}"
            )
        body: dict[str, Any] = {"choice": choice}
        if all:
            body["all"] = True
        if request_id is not None:
            if all:
                raise HermesUsageError("approve_run takes request_id or all=True, not both")
            body["request_id"] = check_id(request_id, "request_id")
        data = await self._http.request_json("POST", f"/v1/runs/{run_id}/approval", json_body=body)
        return ApprovalResult(
            run_id=str(data.get("run_id", run_id)),
            choice=str(data.get("choice", choice)),
            resolved=int(data.get("resolved") or 0),
            raw=_raw(data),
        )

    async def stop_run(self, run_id: str) -> RunRef:
        """``POST /v1/runs/{id}/stop`` (cooperative; the run then ends ``cancelled``). 404 once it has
        ended."""
        data = await self._http.request_json("POST", f"/v1/runs/{check_id(run_id, 'run_id')}/stop")
        return RunRef(id=str(data.get("run_id", run_id)), status=str(data.get("status")), raw=_raw(data))

    async def wait_run(self, run_id: str, *, timeout: float | None = None) -> RunStatus:
        """Poll until the run ends and return its final status (``output``, ``usage``).

        Polls rather than reading events so it never steals them from a reader. Raises HermesRunError if the
        run failed (a cancelled run is returned, ``status == "cancelled"``) and TimeoutError after
        ``timeout``.
        """
        check_id(run_id, "run_id")
        status = await asyncio.wait_for(self.poll_run_until_done(run_id), timeout)
        if status.status == "failed":
            raise HermesRunError(
                f"run {run_id} failed: {status.error or 'no reason given'}", status="failed", run_id=run_id
            )
        return status

    async def run_status_or_none(self, run_id: str) -> RunStatus | None:
        """The run's status, or None while the server cannot be reached."""
        try:
            return await self.run_status(run_id)
        except HermesConnectionError:
            return None

    async def poll_run_until_done(self, run_id: str) -> RunStatus:
        """Poll the run's status with growing waits until it ends (unreachable for too long: the error)."""
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
        check_history(messages, "messages")
        if not messages:
            raise HermesUsageError("messages must not be empty")
        headers = {"X-Hermes-Session-Id": check_id(session_id, "session_id")} if session_id else None
        body = drop_none(messages=list(messages), model=model, stream=True if stream else None)
        if stream:
            response = await self._http.open_stream(
                "POST", "/v1/chat/completions", json_body=body, headers=headers
            )
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
            check_history(conversation_history, "conversation_history")
        body = drop_none(
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
        data = await self._http.request_json("GET", f"/v1/responses/{check_id(response_id, 'response_id')}")
        return HermesResponse.from_json(data)

    async def delete_response(self, response_id: str) -> bool:
        """``DELETE /v1/responses/{id}``; also drops conversation names pointing at it."""
        data = await self._http.request_json(
            "DELETE", f"/v1/responses/{check_id(response_id, 'response_id')}"
        )
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
        path = f"/api/sessions/{check_id(session_id, 'session_id')}/messages"
        data = await self._http.request_json("GET", path)
        return [SessionMessage.from_json(item) for item in data.get("data", [])]
