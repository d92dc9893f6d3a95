"""A notebook that asks ten thousand times: what each finished turn leaves in the kernel, and whether turns
slow down.

A real IPython kernel (``python3``: ipykernel 7.4 from this venv, started with ``jupyter_client``; its IOPub
drained the way a front end does) runs ``hermes.ask(...)`` in a loop against a real Hermes (``LocalHermes``,
the scripted model in this process), a new session every 100 asks, as a script-like notebook would. Each ask
shows its live view (``--quiet``: ``show=False``, no view). Every ``--every`` asks the kernel reports its RSS
(``/proc/self/status``), gc-tracked objects, open comms (the comm manager), registered widgets
(``Widget.widgets``) and the mean time of an ask since the last report.

Printed: a row per report; RSS per turn and objects per turn after the first 1,000 turns (target RSS <= 2 KB a
turn); the mean ask of the first and the last 1,000 and their ratio (target <= 1.1).

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_soak.py [--asks 10000] [--every 500] [--hermes
newer|0.19.0] [--quiet]`` (``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_busy_kernel import Kernel  # noqa: E402 - the benchmarks' shared kernel driver

import hermes_notebook as hn  # noqa: E402
from hermes_notebook._demo.local_hermes import LocalHermes, find_hermes_bin  # noqa: E402

#: Asks a client outside the kernel makes after every 100 of the kernel's (the pace to read them against).
CONTROL_ASKS = 5

SETUP = """
import collections, gc, json, time, warnings
import ipywidgets
import hermes_notebook as hn

hermes = hn.connect()
times = []

def report(turns):
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        widgets = len(ipywidgets.Widget.widgets)
    rss = int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1])
    mean = sum(times) / len(times) if times else 0.0
    times.clear()
    print("REPORT " + json.dumps({
        "turns": turns, "rss_kb": rss, "objects": len(gc.get_objects()), "ask_s": mean,
        "comms": len(get_ipython().kernel.comm_manager.comms), "widgets": widgets,
    }))
report(0)
"""

LOOP = """
for i in range({start}, {stop}):
    t = time.perf_counter()
    hermes.ask(f"soak {{i}}", new=i % 100 == 0{quiet})
    times.append(time.perf_counter() - t)
{report}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=500, help="asks between reports")
    parser.add_argument("--hermes", default="newer", choices=["newer", "0.19.0"])
    parser.add_argument("--quiet", action="store_true", help="show=False: no view at all")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--out", type=Path, help="also append each report to this JSON-lines file as it comes"
    )
    parser.add_argument("--summarize", type=Path, help="print the summary of a (cut-short) run's --out file")
    args = parser.parse_args()
    if args.summarize:
        reports = [{"turns": 0}] + [json.loads(line) for line in args.summarize.read_text().splitlines()]
        args.asks = reports[-1]["turns"]
        summary = _summary(reports, args, reports[-1].get("seconds", 0.0))
        print(json.dumps(summary) if args.json else _text(summary))
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a kill stops the servers and kernel too
    quiet = ', show=False, approve="deny", clarify="A"' if args.quiet else ""
    local = LocalHermes(hermes_bin=find_hermes_bin(server=args.hermes)).start()
    kernel = Kernel(local)
    reports: list[dict[str, Any]] = []
    started = time.monotonic()
    try:

        def collect(out: str) -> None:
            for line in out.splitlines():
                if line.startswith("REPORT "):
                    reports.append(json.loads(line.removeprefix("REPORT ")))

        if not args.json:
            print(
                f"{'turns':>6} {'RSS MB':>8} {'objects':>8} {'comms':>5} {'widgets':>7} {'ask ms':>7} "
                f"{'ctrl ms':>8} {'load':>5} {'srv MB':>7} {'db KB':>7} {'sess':>5}"
            )
        control = hn.connect(local.settings())  # plain Python in this process: no view, a fresh client
        controls: list[float] = []
        collect(kernel.run(SETUP))
        for start in range(0, args.asks, 100):  # one cell per 100 asks (a report every --every)
            stop = min(args.asks, start + 100)
            report = f"report({stop})" if stop % args.every == 0 or stop == args.asks else ""
            collect(kernel.run(LOOP.format(start=start, stop=stop, quiet=quiet, report=report), timeout=3600))
            controls += _control_asks(control, start)
            if report:
                reports[-1].update(control_s=sum(controls) / len(controls), load=os.getloadavg()[0])
                reports[-1].update(_server_figures(local), seconds=time.monotonic() - started)
                controls.clear()
                if args.out:
                    with args.out.open("a") as out:
                        out.write(json.dumps(reports[-1]) + "\n")
                if not args.json:
                    print(_row(reports[-1]), flush=True)
    finally:
        kernel.stop()
        local.close()
    summary = _summary(reports, args, time.monotonic() - started)
    print(json.dumps({"reports": reports, "summary": summary}) if args.json else _text(summary))


def _control_asks(control: hn.Hermes, start: int) -> list[float]:
    """Seconds of CONTROL_ASKS asks by a client outside the kernel, in a new session: the server's and the
    machine's pace right now, to read the kernel's asks against."""
    times = []
    for i in range(CONTROL_ASKS):
        began = time.perf_counter()
        control.ask(f"control {start + i}", new=i == 0)
        times.append(time.perf_counter() - began)
    return times


def _server_figures(local: LocalHermes) -> dict[str, Any]:
    """What the server holds now: its processes' RSS (the Dashboard and the API Server with their children),
    its ``*.db`` files' size and the sessions in its ``state.db``: growth per turn there is Hermes'."""
    rss = 0
    for pid in (local.dashboard_pid, local.gateway_pid):
        if pid is None:
            continue
        parent = psutil.Process(pid)
        for proc in [parent, *parent.children(recursive=True)]:
            try:
                rss += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
    db_bytes = sum(f.stat().st_size for f in local.home.rglob("*.db*") if f.is_file())
    sessions = None
    state = local.home / "state.db"
    if state.exists():
        with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
            sessions = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    return {"server_rss_kb": rss // 1024, "db_kb": db_bytes // 1024, "sessions": sessions}


def _row(r: dict[str, Any]) -> str:
    return (
        f"{r['turns']:>6} {r['rss_kb'] / 1024:>8.1f} {r['objects']:>8} {r['comms']:>5} {r['widgets']:>7} "
        f"{r['ask_s'] * 1000:>7.0f} {r.get('control_s', 0) * 1000:>8.0f} {r.get('load', 0):>5.1f} "
        f"{r.get('server_rss_kb', 0) / 1024:>7.1f} {r.get('db_kb', 0):>7} {r.get('sessions')!s:>5}"
    )


def _mean(reports: list[dict[str, Any]], first: int, last: int, key: str = "ask_s") -> float:
    """The mean of ``key`` over the reports covering turns (first, last], each weighted by its turns."""
    chosen = [(r, r["turns"] - p["turns"]) for p, r in zip(reports, reports[1:], strict=False)]
    chosen = [(r, n) for r, n in chosen if first < r["turns"] <= last and key in r]
    return sum(r[key] * n for r, n in chosen) / max(1, sum(n for _, n in chosen))


def _summary(reports: list[dict[str, Any]], args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    warm = next(r for r in reports if r["turns"] >= min(1000, args.asks // 2))
    end = reports[-1]
    turns = end["turns"] - warm["turns"]
    first = _mean(reports, 0, min(1000, end["turns"]))
    last = _mean(reports, max(0, end["turns"] - 1000), end["turns"])
    first_control = _mean(reports, 0, min(1000, end["turns"]), "control_s")
    last_control = _mean(reports, max(0, end["turns"] - 1000), end["turns"], "control_s")
    relative = (last / last_control) / (first / first_control) if first_control and last_control else None
    return {
        "hermes": args.hermes,
        "asks": end["turns"],
        "quiet": args.quiet,
        "minutes": round(seconds / 60, 1),
        "rss_kb_per_turn": round((end["rss_kb"] - warm["rss_kb"]) / turns, 3),
        "objects_per_turn": round((end["objects"] - warm["objects"]) / turns, 3),
        "comms": end["comms"],
        "widgets": end["widgets"],
        "first_1000_ask_ms": round(first * 1000, 1),
        "last_1000_ask_ms": round(last * 1000, 1),
        "last_over_first": round(last / first, 3) if first else None,
        "first_1000_control_ms": round(first_control * 1000, 1),
        "last_1000_control_ms": round(last_control * 1000, 1),
        "last_over_first_against_control": round(relative, 3) if relative else None,
        "measured_from_turn": warm["turns"],
        "server_rss_kb_per_turn": _per_turn(warm, end, "server_rss_kb", turns),
        "db_kb_per_turn": _per_turn(warm, end, "db_kb", turns),
        "sessions_at_end": end.get("sessions"),
    }


def _per_turn(warm: dict[str, Any], end: dict[str, Any], key: str, turns: int) -> float | None:
    """Growth of ``key`` per turn between two reports (None where the first report has no such figure)."""
    if key not in warm or key not in end:
        return None
    return round((end[key] - warm[key]) / turns, 3)


def _text(s: dict[str, Any]) -> str:
    return (
        f"\n{s['asks']} asks on Hermes {s['hermes']} ({'show=False' if s['quiet'] else 'live views'}) in "
        f"{s['minutes']} min\nafter turn {s['measured_from_turn']}: RSS {s['rss_kb_per_turn']} KB/turn "
        f"(target <= 2), {s['objects_per_turn']} objects/turn; {s['comms']} comms, {s['widgets']} widgets "
        f"open at the end\nmean ask: first 1,000 {s['first_1000_ask_ms']} ms, last 1,000 "
        f"{s['last_1000_ask_ms']} ms: {s['last_over_first']}x (target <= 1.1)\na client outside the kernel "
        f"meanwhile: {s['first_1000_control_ms']} ms, then {s['last_1000_control_ms']} ms; the kernel's asks "
        f"against it: {s['last_over_first_against_control']}x\nthe server meanwhile: RSS "
        f"{s['server_rss_kb_per_turn']} KB/turn, its databases {s['db_kb_per_turn']} KB/turn, "
        f"{s['sessions_at_end']} sessions at the end"
    )


if __name__ == "__main__":
    main()
