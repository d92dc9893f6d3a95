"""Typed events of an API Server run and :class:`RunEventStream`, the one reader of a run's event stream.

Section numbers (§N) refer to ``docs/protocol/api-server.md`` (hermes-agent 0.19.0). Import these
names from :mod:`hermes_notebook.client.api`, which re-exports them; this module only keeps ``api.py`` small.

Run events: the stream at ``GET /v1/runs/{id}/events`` has exactly one consumer and no resume (§3 "Late
connect, reconnect, several readers"). :meth:`ApiClient.run_events` therefore reads it once, stops at the
first terminal event, and if the stream breaks or is gone it never reconnects (a second reader can hang
forever): it polls ``GET /v1/runs/{id}`` instead, yields a :class:`StreamLost` marker and then a terminal
event synthesized from the status (``synthesized=True``), whose ``output`` is the complete final text.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from ..errors import HermesConnectionError, HermesNotFoundError, HermesUsageError
from ..turns.events import Event
from ..turns.model import APPROVAL_CHOICES
from .streams import AsyncStream

if TYPE_CHECKING:
    from ._http import HttpTransport
    from .api_types import RunStatus

__all__ = [
    "APPROVAL_CHOICES",
    "ApprovalRequest",
    "ApprovalResponded",
    "MessageDelta",
    "ReasoningAvailable",
    "RunCancelled",
    "RunCompleted",
    "RunEvent",
    "RunEventStream",
    "RunFailed",
    "RunInterrupted",
    "RunReaders",
    "RunSource",
    "StreamLost",
    "ToolCompleted",
    "ToolStarted",
]

# The logger of the module these classes came from, so existing logging configuration keeps covering them.
logger = logging.getLogger("hermes_notebook.client.api")
#: Re-opens of a broken run stream with ``Last-Event-ID`` (newer servers) before falling back to polling.
RESUME_ATTEMPTS = 3
#: Base pause before each re-open, in seconds (grows linearly).
RESUME_DELAY = 0.25

#: Answers accepted by ``POST /v1/runs/{id}/approval`` (§3 "Approvals on /v1/runs").


#: Wire event name -> its typed class (filled as the classes below are defined).
_EVENT_TYPES: dict[str, builtins.type[RunEvent]] = {}


@dataclass(frozen=True, kw_only=True)
class RunEvent:
    """One event of a run (§3 "Where events come from"); subclasses type the known ones.

    ``payload`` is the JSON object minus ``event``, ``run_id`` and ``timestamp``, as in
    ``hermes_notebook.turns.events.Event``; :meth:`to_event` converts. ``synthesized`` is True for events the
    client made up after the stream was lost (:class:`StreamLost` and the terminal event that follows it).
    """

    type: str = ""
    run_id: str = ""
    timestamp: float | None = None
    payload: Mapping[str, Any] = field(default_factory=dict, repr=False)
    synthesized: bool = False

    TERMINAL: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        wire_type = cls.__dict__.get("type")
        if isinstance(wire_type, str) and wire_type:
            _EVENT_TYPES[wire_type] = cls

    @property
    def terminal(self) -> bool:
        """True for ``run.completed``, ``run.failed`` and ``run.cancelled``."""
        return self.TERMINAL

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> RunEvent:
        """Parse one SSE ``data:`` object; the name is the JSON key ``event`` (there is no ``event:``
        line)."""
        wire_type = str(obj.get("event", ""))
        payload = {k: v for k, v in obj.items() if k not in ("event", "run_id", "timestamp")}
        target: builtins.type[RunEvent] = _EVENT_TYPES.get(wire_type, RunEvent)
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
        """Convert to :class:`hermes_notebook.turns.events.Event` (dialect ``run``) for the turn model."""
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
    """A dangerous command waits for :meth:`ApiClient.approve_run`; unanswered, it is denied after a timeout.

    ``request_id`` is set by newer servers only: pass it to :meth:`ApiClient.approve_run` to answer exactly
    this request. Without one (Hermes 0.19.0) the server answers the run's oldest pending approval.
    """

    type: Literal["approval.request"] = "approval.request"
    request_id: str | None = None
    command: str = ""
    description: str | None = None
    pattern_key: str | None = None
    pattern_keys: Sequence[str] = ()
    allow_permanent: bool = False
    smart_denied: bool = False
    choices: Sequence[str] = APPROVAL_CHOICES


@dataclass(frozen=True, kw_only=True)
class ApprovalResponded(RunEvent):
    """Someone answered an approval request (newer servers name it: ``request_id``)."""

    type: Literal["approval.responded"] = "approval.responded"
    choice: str = ""
    request_id: str | None = None
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
class RunInterrupted(RunEvent):
    """Newer API Servers: the gateway restarted or shut down before the run settled (``error`` says which)."""

    type: Literal["run.interrupted"] = "run.interrupted"
    error: str = ""
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
    if status.status == "interrupted":
        error = status.error or "the gateway restarted before the run settled"
        return RunInterrupted(error=error, payload={"error": error}, **common)
    return RunCancelled(**common)


class RunReaders:
    """The runs that have an event reader in one client: the server allows one reader per run (§3)."""

    def __init__(self) -> None:
        self._runs: set[str] = set()

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._runs

    def ensure_free(self, run_id: str) -> None:
        """HermesUsageError if ``run_id`` has a reader already: a second one would steal its events."""
        if run_id in self._runs:
            raise HermesUsageError(
                f"run {run_id} already has a reader in this client; a second reader would steal its "
                "events (§3)"
            )

    def claim(self, run_id: str) -> None:
        """Become the reader of ``run_id``; HermesUsageError if it already has one."""
        self.ensure_free(run_id)
        self._runs.add(run_id)

    def release(self, run_id: str) -> None:
        """The reader of ``run_id`` is done."""
        self._runs.discard(run_id)


class RunSource(Protocol):
    """What a run's event stream needs from its client (:class:`~hermes_notebook.client.api.ApiClient` is
    one)."""

    @property
    def http(self) -> HttpTransport: ...

    @property
    def readers(self) -> RunReaders: ...

    async def resumable_runs(self) -> bool: ...

    async def run_status_or_none(self, run_id: str) -> RunStatus | None: ...

    async def poll_run_until_done(self, run_id: str) -> RunStatus: ...


class RunEventStream(AsyncStream[RunEvent]):
    """The events of one run, ending with its terminal event; see the module docstring for stream loss.

    ``lost`` is True once the stream was lost and the result came from polling.
    """

    def __init__(self, client: RunSource, run_id: str) -> None:
        super().__init__(self._events())
        self.run_id = run_id
        self.lost = False
        #: How many times the stream was re-opened with ``Last-Event-ID`` after a break (newer servers).
        self.resumed = 0
        self._client = client
        self._last_id: str | None = None

    async def _drop_connection(self) -> None:
        """Close the underlying HTTP response as a network drop would (a test hook)."""
        if self._response is not None:
            await self._response.aclose()

    async def _events(self) -> AsyncGenerator[RunEvent, None]:
        client, run_id = self._client, self.run_id
        client.readers.claim(run_id)
        try:
            reason = None
            resumable = await client.resumable_runs()
            for attempt in range(1 + (RESUME_ATTEMPTS if resumable else 0)):
                if attempt:
                    if self._last_id is None:
                        break
                    await asyncio.sleep(RESUME_DELAY * attempt)
                    self.resumed += 1
                    logger.info(
                        "run %s: event stream broke (%s); resuming after id %s", run_id, reason, self._last_id
                    )
                reason = None
                async with aclosing(self._read_stream()) as events:
                    async for event in events:
                        if isinstance(event, str):
                            reason = event
                            break
                        yield event
                        if event.terminal:
                            return
                if reason is not None and reason.startswith("the event stream is gone"):
                    break  # 404: swept or never kept; only the status can tell the end
            self.lost = True
            logger.info("run %s: event stream lost (%s); polling its status", run_id, reason)
            status = await client.run_status_or_none(run_id)
            yield StreamLost(
                run_id=run_id,
                timestamp=time.time(),
                reason=reason or "unknown",
                status=status.status if status else None,
            )
            if status is None or not status.done:
                status = await client.poll_run_until_done(run_id)
            yield _terminal_from_status(status)
        finally:
            client.readers.release(run_id)

    async def _read_stream(self) -> AsyncGenerator[RunEvent | str, None]:
        """Yield events, then a string saying why the stream ended without a terminal event (if it did)."""
        http = self._client.http
        path = f"/v1/runs/{self.run_id}/events"
        last_id = self._last_id
        # A newer server replays from the event after Last-Event-ID, gaplessly (its frames carry ``id:``).
        headers = {"Last-Event-ID": last_id} if last_id is not None else None
        try:
            self._response = await http.open_stream("GET", path, headers=headers)
        except HermesNotFoundError as exc:  # consumed by an earlier reader, or swept after 300 s (§3)
            yield f"the event stream is gone ({exc.server_message or 'HTTP 404'})"
            return
        try:
            async for sse in http.iter_sse(self._response, f"GET {path}"):
                if sse.id:
                    if (
                        last_id is not None
                        and sse.id.isdigit()
                        and last_id.isdigit()
                        and int(sse.id) <= int(last_id)
                    ):
                        continue  # already delivered before the break
                    self._last_id = sse.id
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
