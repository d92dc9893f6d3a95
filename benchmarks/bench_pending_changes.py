"""Pending changes in the notebook extension: 50 proposals across two notebooks rendered (the diff, the
reveal, the lookalike marks and the view) and kept, each timed.

Bundles ``benchmarks/bench_pending_entry.ts`` with the front end's own esbuild (``js/node_modules``) and runs
it in Debian's Chromium (Playwright): the extension's real modules and the browser's layout, without
JupyterLab around them. Prints p50 / p95 / max per proposal (target: p95 <= 16 ms, one frame).

    .venv/bin/python benchmarks/bench_pending_changes.py [--proposals 50] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "js"


def main() -> None:
    """Bundle, run, print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--proposals", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bundle = Path(folder) / "bench.js"
        subprocess.run(
            [
                str(JS / "node_modules/.bin/esbuild"),
                str(ROOT / "benchmarks/bench_pending_entry.ts"),
                "--bundle",
                "--platform=browser",
                "--format=iife",
                "--loader:.json=json",
                f"--outfile={bundle}",
                "--log-level=warning",
            ],
            check=True,
            cwd=JS,
        )
        (Path(folder) / "index.html").write_text(
            '<!doctype html><meta charset="utf-8"><body></body><script src="bench.js"></script>'
        )
        result = _run_in_chromium(Path(folder) / "index.html", args.proposals, args.rounds)
    for what in ("render_ms", "keep_ms"):
        n = result[what]
        print(f"{what[:-3]:>6}: p50 {n['p50']:.2f} ms, p95 {n['p95']:.2f} ms, max {n['max']:.2f} ms")
    print(json.dumps(result))


def _run_in_chromium(page_file: Path, proposals: int, rounds: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{page_file.as_uri()}#proposals={proposals}&rounds={rounds}")
            page.wait_for_function("() => window.benchResult !== undefined", timeout=120_000)
            return dict(page.evaluate("() => window.benchResult"))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
