"""What waiting for Hermes to let go of a session costs a turn (client/dashboard/settling.py).

``DashboardConnection.submit`` waits, before it sends, until Hermes has let go of the session after the turn
before (its ``session.info`` saying ``running: false`` after the turn's ``message.complete``); a server that
takes ``queued`` gets the prompt at once, queued. This runs back-to-back raw
turns on one session, as a script would, and times the wait inside each ``submit`` against the whole turn
(submit to reply). Plain turns: Hermes' post-turn work is only its bookkeeping (no ``/goal`` judge).

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_settling.py [--turns 60] [--hermes 0.19.0|newer]
[--always-wait]`` (starts a local Hermes Dashboard; ``--json``). ``--always-wait``, the comparison: a server
that takes ``queued`` is treated as one that does not (it waits as 0.19.0 does, and is never sent ``queued``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from hermes_notebook._demo.local_hermes import LocalHermes, find_hermes_bin
from hermes_notebook.client.dashboard import DashboardConnection, SessionRef, connection, settling
from hermes_notebook.client.dashboard.core import DashboardCore


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "mean_ms": round(1000 * statistics.fmean(ordered), 2),
        "p50_ms": round(1000 * ordered[len(ordered) // 2], 2),
        "p95_ms": round(1000 * ordered[int(len(ordered) * 0.95)], 2),
        "max_ms": round(1000 * ordered[-1], 2),
    }


async def _measure(conn: DashboardConnection, turns: int) -> dict[str, Any]:
    waits: list[float] = []
    real = settling.until_let_go

    async def timed(*args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        await real(*args, **kwargs)
        waits.append(time.perf_counter() - start)

    connection.until_let_go = timed  # type: ignore[assignment]  # the seam submit calls, timed here only
    try:
        ref: SessionRef = await conn.create_session()
        await (await conn.submit(ref, "warm up"))
        marks: list[tuple[str, float]] = []
        conn.listen(
            ref, lambda item: item.event is None or marks.append((item.event.type, time.perf_counter()))
        )
        waits.clear()
        durations: list[float] = []
        queued = 0
        for i in range(turns):
            start = time.perf_counter()
            turn = await conn.submit(ref, f"turn {i}")
            queued += turn.status == "queued"
            message = await turn
            durations.append(time.perf_counter() - start)
            assert message.status == "complete", message
    finally:
        connection.until_let_go = real  # type: ignore[assignment]
    waited = [w for w in waits if w > 0.0005]
    # Dead time between turns: from a turn's message.complete to the next turn's message.start, as the
    # listener saw them (the turns themselves, the scripted model's work, are left out).
    ends = [t for kind, t in marks if kind == "message.complete"]
    starts = [t for kind, t in marks if kind == "message.start"]
    gaps = [start - end for end, start in zip(ends, starts[1:], strict=False)]
    return {
        "turns": turns,
        "turn": _summary(durations),
        "wait": _summary(waits),
        "gap": _summary(gaps),
        "turns_that_waited": len(waited),
        "accepted_queued": queued,
        "wait_share_of_turn_time": round(sum(waits) / sum(durations), 4),
    }


def _always_wait() -> None:
    """The comparison run: no server is taken to take ``queued``, so every one waits as 0.19.0 does."""
    DashboardCore.takes_queued = property(lambda core: False)  # type: ignore[assignment,method-assign]


async def _run(server: str, turns: int) -> dict[str, Any]:
    local = LocalHermes(hermes_bin=find_hermes_bin(server=server), api=False).start()
    try:
        conn = DashboardConnection(local.settings())
        try:
            return {"hermes": server, "version": local.version, **await _measure(conn, turns)}
        finally:
            await conn.close()
    finally:
        local.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--hermes", choices=["0.19.0", "newer"], action="append")
    parser.add_argument("--always-wait", action="store_true", help="newer: wait until let go, never queue")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.always_wait:
        _always_wait()
    results = [asyncio.run(_run(server, args.turns)) for server in args.hermes or ["0.19.0", "newer"]]
    if args.json:
        print(json.dumps(results))
        return
    for r in results:
        turn, wait, gap = r["turn"], r["wait"], r["gap"]
        print(
            f"{r['hermes']} ({r['version']}): {r['turns']} back-to-back turns, turn p50 {turn['p50_ms']} ms;"
            f" wait before submit mean {wait['mean_ms']} ms, p50 {wait['p50_ms']} ms,"
            f" p95 {wait['p95_ms']} ms, max {wait['max_ms']} ms; {r['turns_that_waited']} turns waited,"
            f" {r['accepted_queued']} queued; {100 * r['wait_share_of_turn_time']:.2f}% of turn time;"
            f" message.complete to the next message.start mean {gap['mean_ms']} ms, p50 {gap['p50_ms']} ms,"
            f" p95 {gap['p95_ms']} ms"
        )


if __name__ == "__main__":
    main()
