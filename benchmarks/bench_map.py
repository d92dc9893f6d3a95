"""``hermes.map`` against one after another: 40 model-bound prompts at concurrency 4 and at concurrency 1.

Each prompt is ``SLOW 3 <words>``: the scripted model streams it over about 1 s, as a real model's turn is
bound by the model (measured here, four 4-second turns at once took 4.7 s against 4.2 s for one). With instant
turns the 2 cores and Hermes itself are the bound, so that is not the measure. Every prompt runs in a new
session of its own (``map``'s default), through the real Hermes (``LocalHermes``, the scripted model in this
process), from plain Python (no kernel, no progress bar). The rounds alternate which kind runs first, so drift
in the machine's load hits both.

Printed per round: seconds for each kind and their ratio (target >= 3x); then the median ratio.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_map.py [--prompts 40] [--concurrency 4] [--rounds 2]
[--hermes newer|0.19.0] [--via dashboard|api]`` (``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
import uuid

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes, find_hermes_bin

POLICIES = {"approve": "deny", "clarify": "A"}


def timed_map(hermes: hn.Hermes, prompts: list[str], concurrency: int, via: str) -> float:
    """Seconds one ``map`` took; every prompt must have finished."""
    options = {"approve": "deny"} if via == "api" else POLICIES
    started = time.perf_counter()
    result = hermes.map(prompts, concurrency=concurrency, via=via, **options)
    seconds = time.perf_counter() - started
    assert result.ok, result.failures[:3]
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hermes", default="newer", choices=["newer", "0.19.0"])
    parser.add_argument("--via", default="dashboard", choices=["dashboard", "api"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a kill stops the servers and kernel too
    local = LocalHermes(hermes_bin=find_hermes_bin(server=args.hermes)).start()
    hermes = hn.connect(local.settings())
    rounds = []
    try:
        hermes.map([f"SLOW 3 warm {i}" for i in range(4)], concurrency=4, via=args.via, **POLICIES)
        for n in range(args.rounds):
            times: dict[int, float] = {}
            order = [args.concurrency, 1] if n % 2 == 0 else [1, args.concurrency]
            for concurrency in order:
                tag = uuid.uuid4().hex[:6]
                prompts = [f"SLOW 3 item {i} {tag}" for i in range(args.prompts)]
                times[concurrency] = timed_map(hermes, prompts, concurrency, args.via)
            ratio = times[1] / times[args.concurrency]
            rounds.append({"concurrent_s": times[args.concurrency], "sequential_s": times[1], "ratio": ratio})
            if not args.json:
                print(
                    f"round {n + 1}: {args.prompts} prompts at concurrency {args.concurrency} "
                    f"{times[args.concurrency]:.1f} s, one after another {times[1]:.1f} s: {ratio:.2f}x",
                    flush=True,
                )
    finally:
        hermes.close()
        local.close()
    median = statistics.median(r["ratio"] for r in rounds)
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"rounds": rounds, "median_ratio": median, "load": load, **vars(args)}))
    else:
        print(f"median {median:.2f}x (target >= 3x) on Hermes {args.hermes} via {args.via}; load {load:.1f}")


if __name__ == "__main__":
    main()
