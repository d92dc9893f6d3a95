"""Async iterators over the API Server's streamed answers: chat completions and responses.

Section numbers (§N) refer to ``docs/protocol/api-server.md`` (hermes-agent 0.19.0). Import these
names from :mod:`hermes_notebook.client.api`, which re-exports them; this module only keeps ``api.py`` small.
:class:`AsyncStream` is also the base of :class:`~hermes_notebook.client.run_events.RunEventStream`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import httpx

from ._http import HttpTransport, translate_errors
from ._mapping import raw as _raw

__all__ = [
    "AsyncStream",
    "ChatChunk",
    "ChatCompletion",
    "ChatStream",
    "HermesResponse",
    "ResponseEvent",
    "ResponseStream",
    "ToolProgress",
]

T = TypeVar("T")


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
    """One ``response.*`` stream event (``event:`` line + ``data:`` JSON with ``type``,
    ``sequence_number``)."""

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

    async def _items_from(
        self, response: httpx.Response, http: HttpTransport
    ) -> AsyncGenerator[ResponseEvent, None]:
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
