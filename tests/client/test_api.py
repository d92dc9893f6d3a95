"""ApiClient against the real Hermes API Server (hermes-agent 0.19.0) driven by the scripted model."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client._http import MAX_BODY_BYTES, HttpTransport
from hermes_notebook.client.api import (
    ApiClient,
    ApprovalRequest,
    Capabilities,
    ChatChunk,
    ChatCompletion,
    ChatStream,
    Health,
    HermesResponse,
    MessageDelta,
    ModelInfo,
    ResponseStream,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    StreamLost,
    ToolCompleted,
    ToolProgress,
    ToolStarted,
)
from hermes_notebook.errors import (
    HermesAuthError,
    HermesClosedError,
    HermesConnectionError,
    HermesError,
    HermesNotFoundError,
    HermesRateLimitError,
    HermesRunError,
    HermesTimeoutError,
    HermesTooLargeError,
    HermesUsageError,
)
from hermes_notebook.settings import Secret, Settings
from hermes_notebook.turns.events import Event


def _closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest_asyncio.fixture(loop_scope="function")  # the test's own loop, not the session default
async def api(settings: Settings) -> AsyncIterator[ApiClient]:
    """A client for the shared servers, closed after the test."""
    async with ApiClient(settings) as client:
        yield client


@pytest.fixture
def offline_api() -> Callable[[], ApiClient]:
    """A client whose server does not exist: any request that reaches the network fails to connect."""
    return lambda: ApiClient(url=f"http://127.0.0.1:{_closed_port()}", key="k" * 32)


async def _collect(api: ApiClient, run_id: str) -> list[RunEvent]:
    return [event async for event in api.run_events(run_id)]


async def _events_until(stream: AsyncIterator[RunEvent], kind: type[RunEvent]) -> list[RunEvent]:
    seen = []
    async for event in stream:
        seen.append(event)
        if isinstance(event, kind):
            return seen
    raise AssertionError(f"stream ended without {kind.__name__}: {[e.type for e in seen]}")


# --- server info and auth -----------------------------------------------------------------------------------


async def test_health_models_capabilities_are_typed(api: ApiClient) -> None:
    """health(), models() and capabilities() return typed results with the server's values."""
    health = await api.health()
    assert isinstance(health, Health)
    assert (health.status, health.platform, health.version) == ("ok", "hermes-agent", "0.19.0")
    assert health.ok
    models = await api.models()
    assert models and all(isinstance(m, ModelInfo) for m in models)
    assert models[0].id == "hermes-agent" and models[0].owned_by == "hermes"
    caps = await api.capabilities()
    assert isinstance(caps, Capabilities)
    assert caps.supports("run_events_sse") and caps.supports("run_approval_response")
    assert not caps.supports(
        "jobs_admin"
    )  # reported false although /api/jobs works (docs/protocol/api-server.md §2)
    assert caps.endpoints["runs"] == {"method": "POST", "path": "/v1/runs"}


async def test_wrong_key_raises_auth_error_and_never_shows_the_key(
    hermes: LocalHermes, caplog: pytest.LogCaptureFixture
) -> None:
    """A wrong key raises HermesAuthError, and neither key appears in messages, reprs or DEBUG logs."""
    wrong = "wrong-key-" + "x" * 24
    caplog.set_level(logging.DEBUG)
    client = ApiClient(url=hermes.api_url, key=wrong)
    with pytest.raises(HermesAuthError) as info:
        await client.models()
    error = info.value
    assert error.status == 401 and error.code == "invalid_api_key" and error.endpoint == "GET /v1/models"
    good = ApiClient(hermes.settings())
    assert (await good.models())[0].id == "hermes-agent"
    texts = [
        str(error),
        repr(error),
        str(client),
        repr(client),
        repr(client.settings),
        str(client.settings),
        repr(good),
        repr(good.settings),
        repr(client._http),
        caplog.text,
    ]
    texts += [record.getMessage() for record in caplog.records]
    assert "/v1/models" in caplog.text  # httpx did log the requests we searched
    for text in texts:
        assert wrong not in text and hermes.api_key not in text
    await client.aclose()
    await good.aclose()


async def test_missing_key_is_a_usage_error_before_sending(offline_api: Callable[[], ApiClient]) -> None:
    """An authenticated call without any key raises HermesUsageError naming HERMES_API_KEY, not a 401."""
    client = ApiClient(Settings(api_url=offline_api().url))
    with pytest.raises(HermesUsageError, match="HERMES_API_KEY"):
        await client.models()
    await client.aclose()


# --- runs ---------------------------------------------------------------------------------------------------


async def test_plain_run_streams_deltas_and_completes(api: ApiClient) -> None:
    """A plain prompt streams message.delta events and ends with run.completed carrying the final output."""
    run = await api.start_run("hello plain run")
    assert run.id.startswith("run_") and run.status == "started"
    events = await _collect(api, run.id)
    deltas = [e for e in events if isinstance(e, MessageDelta)]
    final = events[-1]
    assert isinstance(final, RunCompleted) and not final.synthesized
    assert final.output == "Hello from the scripted model. You said: hello plain run"
    assert "".join(d.delta for d in deltas) == final.output
    assert final.usage is not None and final.usage["total_tokens"] > 0
    status = await api.run_status(run.id)
    assert (status.status, status.output) == ("completed", final.output) and status.done


async def test_run_events_convert_to_turn_model_events(api: ApiClient) -> None:
    """Each RunEvent converts to an events.Event of dialect "run" with the wire payload."""
    run = await api.start_run("hello conversion")
    events = await _collect(api, run.id)
    converted = [e.to_event() for e in events]
    assert all(isinstance(e, Event) and e.dialect == "run" and e.run_id == run.id for e in converted)
    assert converted[-1].type == "run.completed" and converted[-1].terminal
    assert converted[-1].payload["output"] == "Hello from the scripted model. You said: hello conversion"


async def test_run_command_yields_tool_started_and_completed(api: ApiClient) -> None:
    """A RUN prompt yields tool.started (with the command preview) and tool.completed before the answer."""
    run = await api.start_run("RUN echo tool-events-ok")
    events = await _collect(api, run.id)
    started = next(e for e in events if isinstance(e, ToolStarted))
    completed = next(e for e in events if isinstance(e, ToolCompleted))
    assert started.tool == completed.tool == "terminal"
    assert "echo tool-events-ok" in (started.preview or "")
    assert completed.error is False and (completed.duration or 0) >= 0
    assert events.index(started) < events.index(completed)
    final = events[-1]
    assert isinstance(final, RunCompleted) and "tool-events-ok" in final.output


async def _danger_run(api: ApiClient, workdir: Path, choice: str) -> list[RunEvent]:
    workdir.mkdir(parents=True)
    (workdir / "keep.txt").write_text("precious")
    run = await api.start_run(f"DANGER {workdir.name}")
    stream = api.run_events(run.id)
    seen = await _events_until(stream, ApprovalRequest)
    request = seen[-1]
    assert isinstance(request, ApprovalRequest)
    assert workdir.name in request.command and "once" in request.choices and "deny" in request.choices
    result = await api.approve_run(run.id, choice)
    assert (result.choice, result.resolved) == (choice, 1)
    seen += [event async for event in stream]
    return seen


async def test_danger_approved_once_runs_the_command(api: ApiClient, workdir: Path) -> None:
    """DANGER asks for approval; answering once lets rm -rf run, so the directory is gone."""
    events = await _danger_run(api, workdir, "once")
    assert isinstance(events[-1], RunCompleted)
    assert any(e.type == "approval.responded" for e in events)
    assert not workdir.exists()


async def test_danger_denied_blocks_the_command(api: ApiClient, workdir: Path) -> None:
    """DANGER answered with deny blocks rm -rf: the tool reports an error and the directory survives."""
    events = await _danger_run(api, workdir, "deny")
    tool = next(e for e in events if isinstance(e, ToolCompleted))
    assert tool.error is True
    assert isinstance(events[-1], RunCompleted) and "BLOCKED" in events[-1].output
    assert (workdir / "keep.txt").read_text() == "precious"


async def test_approve_run_rejects_unknown_choice_before_sending(
    offline_api: Callable[[], ApiClient],
) -> None:
    """approve_run validates the choice locally: an unknown one is a HermesUsageError, not a network call."""
    client = offline_api()
    with pytest.raises(HermesUsageError, match="once, session, always, deny"):
        await client.approve_run("run_" + "0" * 32, "yes")
    with pytest.raises(HermesConnectionError):  # a valid choice does reach for the (absent) server
        await client.approve_run("run_" + "0" * 32, "once")
    await client.aclose()


async def test_stop_ends_a_slow_run_as_cancelled(api: ApiClient) -> None:
    """stop_run() on a SLOW run ends its event stream with run.cancelled and status cancelled."""
    run = await api.start_run("SLOW 40")
    stream = api.run_events(run.id)
    first = await _events_until(stream, MessageDelta)
    assert first[-1].delta == "tick 0 "
    stopping = await api.stop_run(run.id)
    assert stopping.status == "stopping"
    rest = [event async for event in stream]
    assert isinstance(rest[-1], RunCancelled) and not rest[-1].synthesized
    assert len([e for e in rest if isinstance(e, MessageDelta)]) < 39
    assert (await api.run_status(run.id)).status == "cancelled"
    with pytest.raises(
        HermesNotFoundError
    ):  # a second stop: the run has ended (docs/protocol/api-server.md §3 "Stop")
        await api.stop_run(run.id)


async def test_dropped_stream_falls_back_to_polling_and_returns_the_output(api: ApiClient) -> None:
    """Killing the event stream after the first delta yields stream.lost, then the polled final output."""
    run = await api.start_run("SLOW 6")
    stream = api.run_events(run.id)
    events: list[RunEvent] = []
    async for event in stream:
        events.append(event)
        if isinstance(event, MessageDelta) and len(events) == 1:
            await stream._drop_connection()  # what a network drop does to the open response
    assert [e.type for e in events[-2:]] == ["stream.lost", "run.completed"]
    lost, final = events[-2], events[-1]
    assert isinstance(lost, StreamLost) and "broke" in lost.reason and stream.lost
    assert lost.status in ("running", "completed")
    assert isinstance(final, RunCompleted) and final.synthesized
    assert final.output == "".join(f"tick {i} " for i in range(6)).rstrip()
    assert sum(isinstance(e, MessageDelta) for e in events) == 1


async def test_second_reader_of_a_run_is_refused(api: ApiClient) -> None:
    """A second concurrent run_events() for one run raises HermesUsageError instead of splitting events."""
    run = await api.start_run("hello single reader")
    stream = api.run_events(run.id)
    first = await stream.__anext__()
    with pytest.raises(HermesUsageError, match="already has a reader"):
        api.run_events(run.id)
    rest = [event async for event in stream]
    assert isinstance(([first] + rest)[-1], RunCompleted)
    assert [e async for e in api.run_events(run.id)][0].type == "stream.lost"  # consumed: 404, then polled


async def test_failed_run_yields_run_failed_and_wait_run_raises(api: ApiClient) -> None:
    """A FAIL prompt ends with run.failed, and wait_run() on it raises HermesRunError with the reason."""
    run = await api.start_run("FAIL")
    events = await _collect(api, run.id)
    assert isinstance(events[-1], RunFailed) and "500" in events[-1].error
    with pytest.raises(HermesRunError, match="failed") as info:
        await api.wait_run(run.id)
    assert info.value.status == "failed" and info.value.run_id == run.id


async def test_wait_run_returns_the_final_output(api: ApiClient) -> None:
    """wait_run() polls without reading events and returns the completed status with the output."""
    run = await api.start_run("hello wait run")
    status = await api.wait_run(run.id, timeout=60)
    assert status.status == "completed"
    assert status.output == "Hello from the scripted model. You said: hello wait run"


async def test_unknown_run_raises_not_found(api: ApiClient) -> None:
    """Reading the events of a run the server never had ends in HermesNotFoundError from the status poll."""
    with pytest.raises(HermesNotFoundError) as info:
        await _collect(api, "run_" + "f" * 32)
    assert info.value.code == "run_not_found"


async def test_rate_limit_raises_with_retry_after(hermes_factory: Callable[..., LocalHermes]) -> None:
    """At max_concurrent_runs 1 a second run gets HTTP 429 as HermesRateLimitError with retry_after 1."""
    local = hermes_factory(
        dashboard=False, config_overrides={"gateway": {"api_server": {"max_concurrent_runs": 1}}}
    )
    async with ApiClient(local.settings()) as api:
        first = await api.start_run("SLOW 20")
        with pytest.raises(HermesRateLimitError) as info:
            await api.start_run("hello second")
        assert info.value.status == 429 and info.value.retry_after == 1.0
        assert info.value.code == "rate_limit_exceeded" and "max 1" in str(info.value)
        await api.stop_run(first.id)
        assert (await api.wait_run(first.id, timeout=60)).status == "cancelled"


async def test_oversize_input_is_refused_before_sending(offline_api: Callable[[], ApiClient]) -> None:
    """A run input over 10,000,000 bytes raises HermesTooLargeError naming size and limit, without a
    request."""
    client = offline_api()  # nothing listens: reaching the network would raise HermesConnectionError
    with pytest.raises(HermesTooLargeError) as info:
        await client.start_run("x" * (MAX_BODY_BYTES + 1))
    message = str(info.value)
    assert info.value.status is None and info.value.endpoint == "POST /v1/runs"
    assert "10,000,000" in message and "10,000,0" in message.split("is ")[1] and "not sent" in message
    await client.aclose()


async def test_connection_refused_and_read_timeout_become_hermes_errors() -> None:
    """A refused connection and a server that never answers surface as HermesConnectionError/TimeoutError."""
    async with ApiClient(url=f"http://127.0.0.1:{_closed_port()}", key="k" * 32) as client:
        with pytest.raises(HermesConnectionError, match="could not connect"):
            await client.health()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        await asyncio.sleep(5)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = Settings(api_url=f"http://127.0.0.1:{port}", api_key="k" * 32, request_timeout=0.3)
    async with server, ApiClient(settings) as client:
        started = time.monotonic()
        with pytest.raises(HermesTimeoutError) as info:
            await client.health()
        assert time.monotonic() - started < 3
        assert isinstance(info.value, HermesError) and "ReadTimeout" in str(info.value)
        assert info.value.__cause__ is None and info.value.__suppress_context__  # no library error chained


@pytest.mark.parametrize(
    ("server", "header", "scheme"),
    [
        ("api", "Authorization", "Bearer"),
        ("dashboard", "X-Hermes-Session-Token", None),
    ],
)
async def test_a_refused_key_is_in_no_message_and_no_chained_exception(
    hermes: LocalHermes, server: str, header: str, scheme: str | None
) -> None:
    """A key httpx refuses (a newline Settings would have caught) fails with one HermesError; neither it nor
    any exception in its chain, formatted whole as a saved traceback shows it, contains the key."""
    key = "k3y-" + uuid.uuid4().hex
    url = hermes.api_url if server == "api" else hermes.dashboard_url
    async with HttpTransport(url, Secret(key + "\n"), auth_header=header, auth_scheme=scheme) as http:
        with pytest.raises(HermesConnectionError) as info:
            await http.request("GET", "/v1/models" if server == "api" else "/api/sessions")
    error = info.value
    assert error.__cause__ is None and error.__suppress_context__
    assert key not in "".join(traceback.format_exception(error)) and key not in repr(error)


async def test_closed_client_raises_closed_error(settings: Settings) -> None:
    """Any call after aclose() raises HermesClosedError (a RuntimeError), also from async with."""
    client = ApiClient(settings)
    await client.aclose()
    with pytest.raises(HermesClosedError):
        await client.health()
    with pytest.raises(RuntimeError):
        async with client:
            pass


# --- chat completions and responses -------------------------------------------------------------------------


async def test_chat_non_stream_returns_text(api: ApiClient) -> None:
    """chat() without streaming returns a ChatCompletion whose text is the reply, with a session id."""
    reply = await api.chat([{"role": "user", "content": "hello chat plain"}])
    assert isinstance(reply, ChatCompletion)
    assert reply.text == "Hello from the scripted model. You said: hello chat plain"
    assert reply.finish_reason == "stop" and reply.session_id and reply.session_id.startswith("api-")


async def test_chat_stream_yields_chunks_and_tool_progress(api: ApiClient) -> None:
    """chat(stream=True) yields content chunks and typed hermes.tool.progress items, accumulating text."""
    stream = await api.chat([{"role": "user", "content": "RUN echo chat-stream-ok"}], stream=True)
    assert isinstance(stream, ChatStream)
    items = [item async for item in stream]
    progress = [i for i in items if isinstance(i, ToolProgress)]
    chunks = [i for i in items if isinstance(i, ChatChunk)]
    assert [p.status for p in progress] == ["running", "completed"]
    assert progress[0].tool == "terminal" and progress[0].tool_call_id == progress[1].tool_call_id
    assert "chat-stream-ok" in stream.text and stream.text == "".join(c.text for c in chunks)
    assert stream.finish_reason == "stop" and stream.usage is not None


async def test_responses_non_stream_and_stream_return_text(api: ApiClient) -> None:
    """create_response() returns text both ways; the stored response can be fetched and deleted."""
    reply = await api.create_response("hello responses plain")
    assert isinstance(reply, HermesResponse) and reply.id.startswith("resp_")
    assert reply.text == "Hello from the scripted model. You said: hello responses plain"
    stream = await api.create_response("hello responses stream", stream=True)
    assert isinstance(stream, ResponseStream)
    types = [event.type async for event in stream]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    assert stream.text == "Hello from the scripted model. You said: hello responses stream"
    assert stream.response is not None and stream.response.text == stream.text
    assert (await api.get_response(reply.id)).text == reply.text
    assert await api.delete_response(reply.id) is True
    with pytest.raises(HermesNotFoundError):
        await api.get_response(reply.id)


async def test_conversation_with_previous_response_id_is_refused_before_sending(
    offline_api: Callable[[], ApiClient],
) -> None:
    """conversation and previous_response_id together raise HermesUsageError without any request."""
    client = offline_api()
    with pytest.raises(HermesUsageError, match="not both"):
        await client.create_response("hi", conversation="c1", previous_response_id="resp_1")
    await client.aclose()


async def test_sessions_and_session_messages(api: ApiClient) -> None:
    """sessions() lists state.db sessions and session_messages() returns the stored user and assistant
    turns."""
    reply = await api.chat([{"role": "user", "content": "hello session listing"}])
    assert reply.session_id
    sessions = await api.sessions(limit=200)
    assert reply.session_id in {s.id for s in sessions}
    messages = await api.session_messages(reply.session_id)
    contents: list[Any] = [(m.role, m.content) for m in messages]
    assert ("user", "hello session listing") in contents
    assert ("assistant", reply.text) in contents
