"""The reconnect delay policy, alone and driving DashboardConnection's reconnects with a fake clock."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest

from hermes_notebook.client.dashboard import DashboardConnection, ListenerItem
from hermes_notebook.client.dashboard.backoff import (
    BACKOFF_FACTOR,
    BACKOFF_MAX_DELAY,
    BACKOFF_MIN_DELAY,
    Backoff,
)
from tests.fake_ws_server import FakeDashboard
from tests.helpers import eventually_async

SCHEDULE = [1, 2, 4, 8, 16, 30, 30]


def test_defaults_come_from_the_module_constants() -> None:
    """Backoff() uses BACKOFF_MIN_DELAY, BACKOFF_MAX_DELAY and BACKOFF_FACTOR (1 s doubling to 30 s)."""
    backoff = Backoff()
    assert (
        (backoff.min_delay, backoff.max_delay, backoff.factor)
        == (BACKOFF_MIN_DELAY, BACKOFF_MAX_DELAY, BACKOFF_FACTOR)
        == (1.0, 30.0, 2.0)
    )


def test_iterating_yields_the_schedule_and_a_new_iterator_resets() -> None:
    """Each iter() yields 1, 2, 4, 8, 16, 30, 30 ... from the start."""
    backoff = Backoff()
    assert list(itertools.islice(backoff, 7)) == SCHEDULE
    assert list(itertools.islice(backoff, 3)) == [1, 2, 4]


def test_stateful_next_delay_and_reset() -> None:
    """next_delay() walks the schedule; reset() after a success starts it over."""
    backoff = Backoff()
    assert [backoff.next_delay() for _ in range(7)] == SCHEDULE
    backoff.reset()
    assert [backoff.next_delay() for _ in range(2)] == [1, 2]


def test_custom_values_and_validation() -> None:
    """Custom bounds are honoured and nonsensical ones are refused."""
    assert list(itertools.islice(Backoff(0.5, 3, 3), 4)) == [0.5, 1.5, 3, 3]
    for args in ((-1, 2, 2), (5, 1, 2), (1, 2, 0.5)):
        with pytest.raises(ValueError, match="must be"):
            Backoff(*args)
    assert (
        Backoff() == Backoff(1, 30, 2) and repr(Backoff()) == "Backoff(min_delay=1, max_delay=30, factor=2)"
    )


@pytest.mark.asyncio(loop_scope="function")
async def test_connection_reconnects_on_the_schedule_and_resets_after_success() -> None:
    """After a drop the connection waits 1, 2, 4, 8, 16, 30, 30 (fake clock) and starts at 1 again next
    time."""
    fake = await FakeDashboard().start()
    slept: list[float] = []
    server_back = asyncio.Event()

    async def fake_sleep(delay: float) -> None:
        slept.append(delay)
        if len(slept) == len(SCHEDULE):  # the Dashboard comes back during the 7th wait
            await fake.start()
            server_back.set()
        await asyncio.sleep(0)

    items: list[ListenerItem] = []
    conn = DashboardConnection(fake.settings(), sleep=fake_sleep)
    try:
        ref = await conn.create_session()
        first_live = ref.live_id
        conn.listen(ref, items.append)
        await fake.stop()  # killed: sockets aborted, port closed
        await eventually_async(lambda: any(i.status == "reconnected" for i in items))
        assert slept == SCHEDULE
        statuses = [i.status for i in items if i.kind == "connection"]
        assert statuses[0] == "disconnected" and statuses[-1] == "reconnected"
        assert statuses.count("reconnecting") == len(SCHEDULE) - 1  # every failed attempt is reported
        assert ref.live_id != first_live  # re-resumed by stored id; the same ref object follows
        assert fake.requests("session.resume")[-1]["params"] == {"session_id": ref.stored_id}

        slept.clear()
        await fake.drop()
        await eventually_async(lambda: [i.status for i in items].count("reconnected") == 2)
        assert slept == [1.0]  # reset after the successful reconnect
        assert (await (await conn.submit(ref, "after"))).status == "complete"
    finally:
        await conn.close()
        await fake.stop()


@pytest.mark.asyncio(loop_scope="function")
async def test_failed_resubscribe_is_reported_and_retried() -> None:
    """A resume that fails after reconnecting goes to on_error("listen") and is retried until it works."""
    errors: list[tuple[str, BaseException]] = []
    slept: list[float] = []
    fails = {"left": 2}

    async def flaky_resume(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        if fails["left"]:
            fails["left"] -= 1
            error = {"code": 4090, "message": "cap reached"}
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": frame["id"], "error": error}))
        else:
            await server._on_session_resume(ws, frame)

    async def fake_sleep(delay: float) -> None:
        slept.append(delay)
        await asyncio.sleep(0)

    async with FakeDashboard() as fake:
        conn = DashboardConnection(
            fake.settings(), sleep=fake_sleep, on_error=lambda k, e: errors.append((k, e))
        )
        items: list[ListenerItem] = []
        ref = await conn.create_session()
        conn.listen(ref, items.append)
        fake.handlers["session.resume"] = flaky_resume
        await fake.drop()
        await eventually_async(lambda: any(i.status == "reconnected" for i in items))
        assert [k for k, _ in errors] == ["listen", "listen"]
        # The waits keep growing while resumes fail: the schedule resets only after a full resubscribe round.
        assert slept == [1.0, 2.0, 4.0]
        await conn.close()


@pytest.mark.asyncio(loop_scope="function")
async def test_reconnect_false_only_reports_the_drop() -> None:
    """With reconnect=False listeners get "disconnected" and nothing reconnects."""
    slept: list[float] = []

    async def instant_sleep(delay: float) -> None:  # a reconnect loop would be back within the window below
        slept.append(delay)
        await asyncio.sleep(0)

    async with FakeDashboard() as fake:
        conn = DashboardConnection(fake.settings(), reconnect=False, sleep=instant_sleep)
        items: list[ListenerItem] = []
        ref = await conn.create_session()
        conn.listen(ref, items.append)
        await fake.drop()
        await eventually_async(lambda: bool(items))
        await asyncio.sleep(0.05)
        assert [(i.status, i.retry_in) for i in items] == [("disconnected", None)]
        assert fake.handshakes == 1 and slept == []
        await conn.connect()  # an explicit connect() resumes the listened session
        assert fake.handshakes == 2 and [i.status for i in items] == ["disconnected", "reconnected"]
        await conn.close()


@pytest.mark.asyncio(loop_scope="function")
async def test_a_server_that_accepts_and_drops_is_retried_with_growing_waits() -> None:
    """Opening the socket is not success: a server that accepts, then drops before the session is back, is
    retried at min, 2*min, 4*min ... (measured on the real clock with a scaled-down schedule), never every min
    seconds."""
    handshakes: list[float] = []
    loop = asyncio.get_running_loop()
    async with FakeDashboard() as fake:
        conn = DashboardConnection(fake.settings(), reconnect=Backoff(0.1, 5, 2))
        ref = await conn.create_session()
        conn.listen(ref, lambda item: None)

        async def accept_and_drop(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
            handshakes.append(loop.time())
            ws.transport.abort()

        fake.handlers["session.resume"] = (
            accept_and_drop  # the socket opens fine; the session never comes back
        )
        await fake.drop()
        await eventually_async(lambda: len(handshakes) >= 5, timeout=10)
        await conn.close()
    gaps = [b - a for a, b in itertools.pairwise(handshakes)]
    # Each gap is the backoff wait plus a loopback handshake: 0.2, 0.4, 0.8, 1.6 s (+ a few ms; a loaded CI
    # machine may add more, never less). The lower bounds are what the fix is about.
    for gap, expected in zip(gaps, [0.2, 0.4, 0.8, 1.6], strict=False):
        assert expected - 0.02 <= gap < expected + 0.5, gaps


@pytest.mark.asyncio(loop_scope="function")
async def test_a_drop_during_send_leaves_no_unretrieved_future(caplog: Any) -> None:
    """A request whose send is cut by a drop fails with HermesGatewayClosedError, and its future is retrieved
    (asyncio would log "Future exception was never retrieved" when it is collected)."""
    import gc
    import logging

    from hermes_notebook.errors import HermesGatewayClosedError

    caplog.set_level(logging.ERROR, logger="asyncio")
    async with FakeDashboard() as fake:
        conn = DashboardConnection(fake.settings(), reconnect=False)
        ref = await conn.create_session()
        big = "x" * (64 * 1024 * 1024)  # large enough that the send is still draining when the socket dies
        submit = asyncio.ensure_future(conn.submit(ref, big))
        await asyncio.sleep(0.05)
        await fake.drop()
        with pytest.raises(HermesGatewayClosedError):
            await submit
        del submit
        await conn.close()
    gc.collect()
    await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text
