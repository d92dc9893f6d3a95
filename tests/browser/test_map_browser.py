"""``hermes.map`` in a real JupyterLab against the real Hermes: one progress bar in the cell that moves as
prompts end, and a Stop that ends the running prompts and starts no more.

The cell maps 24 model-bound prompts (about 1 s each) two at a time under Run All; the test waits for the bar
to move, clicks Stop while the cell still blocks (the kernel takes the click on its comm subshell, or the comm
pump), and reads what the cell left: a static summary line where the bar was, the result with stopped and
not-run prompts, and nothing of the bar left open in the kernel.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.lab import JS_START_RUN_ALL, TURN_TIMEOUT_MS

pytestmark = pytest.mark.usefixtures("hermes")

CELLS = [
    "import hermes_notebook as hn\n"
    "hermes = hn.connect()\n"
    'result = hermes.map([f"SLOW 3 row {i}" for i in range(24)], concurrency=2, approve="deny", clarify="A")',
    "import json\nprint(json.dumps(result.counts()))\nprint(len(get_ipython().kernel.comm_manager.comms))",
]

#: The bar's value (prompts ended), read from the one progress element in the cell's output.
JS_BAR = """() => { const bars = document.querySelectorAll('.hn-progress progress');
  return {count: bars.length, value: bars.length ? bars[0].value : -1, max: bars.length ? bars[0].max : -1,
          text: document.querySelector('.hn-progress-status')?.textContent ?? ''}; }"""


def _stream(outputs: list[Any]) -> str:
    return "".join(
        o["text"] if isinstance(o["text"], str) else "".join(o["text"])
        for o in outputs
        if o.get("output_type") == "stream"
    )


def test_one_progress_bar_moves_and_stop_ends_the_rest(open_notebook: Any) -> None:
    """One bar (24 prompts) that moves while the cell runs; Stop ends the running prompts and starts no more;
    the bar becomes a static line, the result keeps what finished, and the bar's comm is closed."""
    nb = open_notebook(CELLS)
    nb.page.evaluate(JS_START_RUN_ALL, {"path": nb.path})
    nb.page.locator(".hn-progress").first.wait_for(state="visible", timeout=TURN_TIMEOUT_MS)
    first = nb.page.evaluate(JS_BAR)
    assert first["count"] == 1 and first["max"] == 24, first
    nb.page.wait_for_function(
        "() => (document.querySelector('.hn-progress progress')?.value ?? 0) >= 2",
        timeout=TURN_TIMEOUT_MS,
        polling=100,
    )
    moved = nb.page.evaluate(JS_BAR)
    assert moved["count"] == 1 and moved["value"] >= 2 and "done" in moved["text"], moved
    assert "elapsed" in moved["text"] and "left" in moved["text"], moved["text"]  # the ETA is known now
    nb.screenshot("map-progress-running")
    assert nb.page.evaluate("() => window.__hnRunAll") == "running"  # the map's cell still blocks

    stop = nb.page.locator(".hn-progress").get_by_role("button", name="Stop")
    stop.click()
    nb.page.wait_for_function("() => window.__hnRunAll !== 'running'", timeout=TURN_TIMEOUT_MS, polling=100)
    assert nb.page.evaluate("() => window.__hnRunAll") == "done"

    outputs = nb.outputs()
    summary = next(
        o["data"]["text/plain"]
        for o in outputs[0]
        if o.get("output_type") == "display_data"
        and "hermes.map:" in str(o.get("data", {}).get("text/plain"))
    )
    assert "stopped" in summary and "of 24" in summary, summary
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs[0])
    assert nb.page.locator(".hn-progress").count() == 0  # the live bar is gone, the static line stays
    counts, comms = _stream(outputs[1]).splitlines()
    tally = json.loads(counts)
    assert 2 <= tally["done"] < 24 and tally["not run"] > 0 and sum(tally.values()) == 24, tally
    assert int(comms.strip()) == 0  # the bar's comm (and its layout's) closed with it
    nb.screenshot("map-progress-stopped")
