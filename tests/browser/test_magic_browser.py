"""``%hermes`` under Run All in a real browser: buttons work while the cell blocks (the comm pump), on
ipykernel 6.29 and 7.4, in JupyterLab 4 (and once in Notebook 7), against the real Hermes.

Each notebook has three cells, ``r = %hermes ...`` / ``print(r.text)`` / ``print("after")``, run with Run All;
the test clicks in cell 1's live view while cell 1 is still running. Click-to-handler times (browser
``Date.now()`` at the click vs kernel ``time.time()`` in the handler, same clock) are written to
``test-artifacts/magic-latency.json``.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import JS_START_RUN_ALL, KERNELS, TURN_TIMEOUT_MS

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts"))
FACADE = "get_ipython().magics_manager.registry['HermesMagics'].facade"

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.both_servers]  # both Hermes servers


def _record(name: str, value: float) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "magic-latency.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault(name, []).append(round(value, 1))
    path.write_text(json.dumps(data, indent=1))


def _stream(outputs: list[Any]) -> str:
    return "".join(
        o["text"] if isinstance(o["text"], str) else "".join(o["text"])
        for o in outputs
        if o.get("output_type") == "stream"
    )


def _run_all_and_click(nb: Any, selector: str, timeout_ms: int = TURN_TIMEOUT_MS) -> float:
    """Start Run All, wait for ``selector`` in cell 1's live view, click it; return the browser click time
    (ms)."""
    nb.page.evaluate(JS_START_RUN_ALL, {"path": nb.path})
    button = nb.page.locator(selector).first
    button.wait_for(state="visible", timeout=timeout_ms)
    assert nb.page.evaluate("() => window.__hnRunAll") == "running"  # cell 1 is still blocking
    # the live view has no text box, so no Queue/Steer choice either: Stop alone
    view = nb.page.locator(".hn-chat[data-mode='turn']").first
    assert view.locator(".hn-stop").is_visible() and not view.locator(".hn-send-mode").is_visible()
    clicked_ms = nb.page.evaluate("() => Date.now()")
    button.click()
    return float(clicked_ms)


def _wait_run_all(nb: Any, timeout_ms: int = TURN_TIMEOUT_MS) -> list[Any]:
    nb.page.wait_for_function("() => window.__hnRunAll !== 'running'", timeout=timeout_ms, polling=50)
    assert nb.page.evaluate("() => window.__hnRunAll") == "done"
    return nb.outputs()


def _counts(nb: Any) -> list[int | None]:
    return nb.page.evaluate(
        """({path}) => { const app = window.jupyterapp;
        const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
        return nb.content.widgets.map(c => c.model.executionCount); }""",
        {"path": nb.path},
    )


def _cells(prompt: str) -> list[str]:
    return [f"%load_ext hermes_notebook\nr = %hermes {prompt}", "print(r.text)", 'print("after")']


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("choice", ["once", "deny"])
def test_approval_buttons_under_run_all(
    open_notebook: Any, kernel_names: dict[str, str], hermes: Any, kernel: str, choice: str
) -> None:
    """Approval buttons appear in cell 1 while it runs; "once" runs the command, "deny" does not; cells 2-3
    follow."""
    target = hermes.workdir / f"magic-{choice}-{uuid.uuid4().hex[:6]}"
    target.mkdir()
    nb = open_notebook(_cells(f"DANGER {target.name}"), kernel=kernel)
    clicked_ms = _run_all_and_click(
        nb, f".hn-interaction[data-kind='approval'] button[data-choice='{choice}']"
    )
    outputs = _wait_run_all(nb)
    handled = nb.kernel_eval(
        f"next(iter({FACADE}.last_turn.answered_at.values()))"
    )  # approval-1, or an srq- id
    _record(f"approval-click-to-handler-ms[{kernel}]", handled * 1000 - clicked_ms)
    assert _counts(nb) == sorted(_counts(nb)) and None not in _counts(nb)
    if choice == "once":
        assert "Dangerous command ran" in _stream(outputs[1])
        assert not target.exists()
    else:
        assert "Dangerous command was blocked" in _stream(outputs[1])
        assert target.exists()
    assert _stream(outputs[2]) == "after\n"
    # The live view became the static transcript (what the saved notebook keeps).
    first = [o for o in outputs[0] if o.get("output_type") == "display_data"]
    assert first and "application/vnd.jupyter.widget-view+json" not in first[0]["data"]
    assert "Hermes" in first[0]["data"]["text/plain"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_clarify_button_under_run_all(open_notebook: Any, kernel_names: dict[str, str], kernel: str) -> None:
    """A clarify question is answered by clicking a choice while the cell runs; the next cell prints it.

    (No "?" at the end: the cell that loads the extension is parsed before its prompt protection exists.)
    """
    nb = open_notebook(_cells("CLARIFY Pick one"), kernel=kernel)
    clicked_ms = _run_all_and_click(nb, ".hn-interaction[data-kind='clarify'] button[data-choice='B']")
    outputs = _wait_run_all(nb)
    answered = nb.kernel_eval(f"list({FACADE}.last_turn.answered_at.values())[0]")
    _record(f"clarify-click-to-handler-ms[{kernel}]", answered * 1000 - clicked_ms)
    assert _stream(outputs[1]) == "You chose: B\n"
    assert _stream(outputs[2]) == "after\n"


@pytest.mark.parametrize("kernel", KERNELS)
def test_stop_button_ends_a_slow_turn(open_notebook: Any, kernel_names: dict[str, str], kernel: str) -> None:
    """The stop button ends a SLOW turn at once (the time goes to the benchmark record); Run All continues and
    the kernel stays usable."""
    nb = open_notebook(
        ["%load_ext hermes_notebook\nr = %hermes --new SLOW 80", "print(r.status)", 'print("after")'],
        kernel=kernel,
    )
    nb.page.evaluate(JS_START_RUN_ALL, {"path": nb.path})
    nb.page.locator(".hn-part[data-kind='text']", has_text="tick 2").first.wait_for(timeout=TURN_TIMEOUT_MS)
    stop = nb.page.locator(".hn-stop").first
    stop.wait_for(state="visible")
    t0 = time.monotonic()
    stop.click()
    outputs = _wait_run_all(nb, timeout_ms=10_000)
    elapsed = time.monotonic() - t0
    _record(f"stop-click-to-cells-done-s[{kernel}]", elapsed)
    # The turn would run 80 s on its own: ending within 10 s means the stop ended it. The time itself (with
    # cells 2 and 3 and Playwright's polling) is a number for the record, not a bound: CI machines are loaded.
    assert elapsed < 10, elapsed
    assert _stream(outputs[1]) == "interrupted\n"
    assert _stream(outputs[2]) == "after\n"
    assert nb.cell_text(2) == "after\n"  # the kernel takes new work at once


def test_approval_in_notebook7(open_notebook: Any, kernel_names: dict[str, str], hermes: Any) -> None:
    """The same approval flow works in Notebook 7 (ipykernel 7.4)."""
    target = hermes.workdir / f"magic-nb7-{uuid.uuid4().hex[:6]}"
    target.mkdir()
    nb = open_notebook(_cells(f"DANGER {target.name}"), app="notebook7", kernel="hn-k74")
    _run_all_and_click(nb, ".hn-interaction[data-kind='approval'] button[data-choice='once']")
    outputs = _wait_run_all(nb)
    assert not target.exists()
    assert "Dangerous command ran" in _stream(outputs[1]) and _stream(outputs[2]) == "after\n"


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_interrupt_stops_the_turn_on_the_server(
    open_notebook: Any, kernel_names: dict[str, str], kernel: str
) -> None:
    """Kernel > Interrupt during ``%hermes`` interrupts the turn on the server at once (the time goes to the
    record); the kernel stays usable."""
    nb = open_notebook(
        ["%load_ext hermes_notebook\nr = %hermes --new SLOW 80", "print(r.status)", 'print("after")'],
        kernel=kernel,
    )
    nb.page.evaluate(JS_START_RUN_ALL, {"path": nb.path})
    nb.page.locator(".hn-part[data-kind='text']", has_text="tick 2").first.wait_for(timeout=TURN_TIMEOUT_MS)
    t0 = time.monotonic()
    nb.page.evaluate(
        """({path}) => { const app = window.jupyterapp;
        const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
        return nb.sessionContext.session.kernel.interrupt(); }""",
        {"path": nb.path},
    )
    nb.page.wait_for_function("() => window.__hnRunAll !== 'running'", timeout=10_000, polling=50)
    elapsed = time.monotonic() - t0
    _record(f"kernel-interrupt-to-cell-done-s[{kernel}]", elapsed)
    assert elapsed < 10, elapsed  # the turn would run 80 s on its own: the interrupt ended it
    errors = [o for o in nb.outputs()[0] if o.get("output_type") == "error"]
    assert errors and errors[0]["ename"] == "KeyboardInterrupt"
    status = nb.wait_kernel(
        f"{FACADE}.last_turn.status in ('interrupted', 'cancelled') and {FACADE}.last_turn.status",
        timeout_s=5,
    )
    assert status == "interrupted"  # the server ended the turn: it was interrupted there, not just abandoned
    assert nb.cell_text(2) == "after\n"
