"""How fast the turn model is: history folding (target: 10,000 rows well under 0.5 s) and live deltas.

Run: ``.venv/bin/python benchmarks/bench_history.py [ROWS]``

History rows are the real REST rows of tests/fixtures/ws_rest_history.json (23 rows: plain, reasoning, tool,
approval, clarify and interrupted turns, every column the server sends) repeated with fresh ids up to ROWS.
The live part folds 100,000 real-shaped ``message.delta`` frames through ``json.loads`` ->
``Event.from_dashboard_frame`` -> ``TurnFolder.apply`` and compares with a bare ``json.loads`` loop, the
yardstick the Dashboard connection is held to.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermes_notebook.turns import TurnFolder, fold_history  # noqa: E402
from hermes_notebook.turns.events import Event  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "ws_rest_history.json"


def history_rows(n: int) -> list[dict[str, Any]]:
    """``n`` REST rows built from the captured ones (ids renumbered so every turn id is unique)."""
    data = json.loads(FIXTURE.read_text())
    template = data["/api/sessions/20261202_103140_fee333/messages"]["body"]["messages"]
    rows: list[dict[str, Any]] = []
    while len(rows) < n:
        for row in template:
            rows.append({**row, "id": len(rows) + 1})
    return rows[:n]


def best_of(repeats: int, fn: Any) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_history(n: int) -> float:
    rows = history_rows(n)
    messages = fold_history(rows)
    elapsed = best_of(5, lambda: fold_history(rows))
    print(f"fold_history: {n:,} rows -> {len(messages):,} messages in {elapsed * 1e3:.1f} ms (best of 5)")
    return elapsed


def bench_live(frames: int = 100_000) -> None:
    raws = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "event",
                "params": {
                    "type": "message.delta",
                    "session_id": "ac585278",
                    "payload": {"text": f"tick {i} "},
                },
            }
        )
        for i in range(frames)
    ]
    loads = json.loads
    parse = Event.from_dashboard_frame

    def bare() -> None:
        for raw in raws:
            loads(raw)

    def parsed() -> None:
        for raw in raws:
            parse(loads(raw))

    def folded() -> None:
        apply = TurnFolder("bench").apply
        for raw in raws:
            apply(parse(loads(raw)))

    t_bare, t_parse, t_fold = best_of(5, bare), best_of(5, parsed), best_of(5, folded)
    per = 1e9 / frames
    print(f"live: {frames:,} message.delta frames")
    print(f"  json.loads only                 {t_bare * 1e3:7.1f} ms  {t_bare * per:6.0f} ns/frame  1.00x")
    print(
        f"  + Event.from_dashboard_frame    {t_parse * 1e3:7.1f} ms  {t_parse * per:6.0f} ns/frame  "
        f"{t_parse / t_bare:.2f}x"
    )
    print(
        f"  + TurnFolder.apply              {t_fold * 1e3:7.1f} ms  {t_fold * per:6.0f} ns/frame  "
        f"{t_fold / t_bare:.2f}x"
    )


if __name__ == "__main__":
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    elapsed = bench_history(rows)
    bench_live()
    if rows == 10_000 and elapsed >= 0.5:
        sys.exit(f"history fold too slow: {elapsed:.3f} s for 10,000 rows (target < 0.5 s)")
