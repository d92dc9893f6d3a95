"""Hermes while a cell runs: real JupyterLab 4 / Notebook 7, headless Chromium, real Hermes 0.19.0.

The notebook shows a chat, then runs a long cell (written as 90 s; it stops early when the test drops a flag
file, so the suite stays fast). With ipykernel 7.4 the front end sends the widget's messages on a subshell and
the chat follows it (hermes_notebook/shell/subshells.py): while the long cell runs, an approval card is
answered and takes effect, and a prompt is answered within 10 s; the long cell then ends with its own output,
complete and in order. With ipykernel 6.29 (no subshells) the chat says plainly that the kernel is busy and
shows the queued prompt, which is sent once the cell is done.

Timings go to ``test-artifacts/busy-kernel.json``.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts"))
TURN_TIMEOUT_MS = 90_000  # the first turn of a session builds the agent
BUSY_NOTE = "The kernel is busy running a cell; your prompt is queued and will be sent when it finishes."

pytestmark = pytest.mark.usefixtures("hermes")

#: The user's long cell: a step every 0.2 s for up to 90 s, or until the flag file exists.
LONG_CELL = """import os, time
t0 = time.time()
step = 0
while time.time() - t0 < 90 and not os.path.exists({flag!r}):
    print(f"step {{step}}", flush=True)
    step += 1
    time.sleep(0.2)
print(f"long cell done after {{step}} steps")"""

#: Runs one cell without awaiting it; its progress is in window.__hnCell.
JS_START_CELL = """({path, index}) => {
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  app.shell.activateById(nb.id);
  nb.content.activeCellIndex = index;
  window.__hnCell = 'running';
  app.commands.execute('notebook:run-cell').then(() => { window.__hnCell = 'done'; },
                                                (e) => { window.__hnCell = 'error: ' + e; });
  // Whether the busy note ever showed while the cell ran.
  window.__hnBusyNote = false;
  window.__hnBusyWatch = setInterval(() => {
    if (document.querySelector('.hn-kernel-busy:not([hidden])')) window.__hnBusyNote = true;
  }, 50);
  return true;
}"""


def _record(name: str, value: float) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "busy-kernel.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault(name, []).append(round(value, 2))
    path.write_text(json.dumps(data, indent=1))


def _stream(outputs: list[Any]) -> str:
    return "".join(
        o["text"] if isinstance(o["text"], str) else "".join(o["text"])
        for o in outputs
        if o.get("output_type") == "stream"
    )


def _open_busy_notebook(open_notebook: Any, app: str, kernel: str, flag: Path) -> Any:
    """A notebook with a ready chat (cell 0) and the long cell (cell 1) running."""
    nb = open_notebook(
        ["from hermes_notebook.widgets import Chat\nchat = Chat()\nchat", LONG_CELL.format(flag=str(flag))],
        app=app,
        kernel=kernel,
    )
    nb.run_cell(0)
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    nb.page.evaluate(JS_START_CELL, {"path": nb.path, "index": 1})
    nb.page.wait_for_function(
        """(path) => {
           const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === path);
           return JSON.stringify(nb.content.widgets[1].model.outputs.toJSON()).includes('step 1'); }""",
        arg=nb.path,
        timeout=30_000,
        polling=50,
    )
    return nb


def _still_running(nb: Any) -> bool:
    return bool(nb.page.evaluate("() => window.__hnCell") == "running")


def _send(nb: Any, text: str) -> float:
    """Type a prompt and press Ctrl+Enter, as a user would; returns the browser time of the key press (ms)."""
    box = nb.page.get_by_role("textbox", name="Message to Hermes")
    box.fill(text)
    at = float(nb.page.evaluate("() => Date.now()"))
    box.press("Control+Enter")
    return at


def _wait_reply(nb: Any, text: str, timeout_ms: int = TURN_TIMEOUT_MS) -> float:
    """Wait until an assistant message shows ``text``; returns the browser time it appeared (ms)."""
    return float(
        nb.page.wait_for_function(
            """(text) => [...document.querySelectorAll(".hn-message[data-role='assistant']")]
                       .some(m => m.textContent.includes(text)) && Date.now()""",
            arg=text,
            timeout=timeout_ms,
            polling=20,
        ).json_value()
    )


def _finish_long_cell(nb: Any, flag: Path) -> str:
    """Let the long cell end; return its output after checking it ran once, alone, without error."""
    flag.write_text("stop")
    nb.page.wait_for_function("() => window.__hnCell !== 'running'", timeout=30_000, polling=50)
    assert nb.page.evaluate("() => window.__hnCell") == "done"
    outputs = nb.outputs()[1]
    assert [
        o["output_type"] for o in outputs if o["output_type"] != "stream"
    ] == []  # no error, nothing foreign
    return _stream(outputs)


def _assert_intact(text: str) -> None:
    lines = text.splitlines()
    steps = int(lines[-1].split()[-2])
    assert lines == [f"step {i}" for i in range(steps)] + [f"long cell done after {steps} steps"], text[-500:]


@pytest.mark.parametrize("app", ["lab", "notebook7"])
def test_chat_works_while_a_long_cell_runs(
    open_notebook: Any, kernel_names: dict[str, str], app: str, workdir: Path
) -> None:
    """ipykernel 7.4: during a long cell an approval card is clicked and takes effect, a prompt is answered
    within 10 s, no busy note shows; the long cell is not interrupted and its output is intact and in
    order."""
    tag = uuid.uuid4().hex[:8]
    workdir.mkdir(parents=True)
    flag = workdir.parent / f"stop-{tag}"
    nb = _open_busy_notebook(open_notebook, app, kernel_names["7.4"], flag)
    try:
        # An approval card, answered while the cell runs, takes effect (the first turn also builds the agent).
        _send(nb, f"DANGER {workdir.name}")
        card = nb.page.locator(".hn-interaction[data-kind='approval'][data-status='pending']")
        card.wait_for(timeout=TURN_TIMEOUT_MS)
        card.locator("button[data-choice='once']").click()
        _wait_reply(nb, "Dangerous command ran")
        assert not workdir.exists()
        assert _still_running(nb)

        # A prompt is answered within 10 s.
        sent = _send(nb, f"hello while busy {tag}")
        shown = _wait_reply(nb, f"You said: hello while busy {tag}", timeout_ms=30_000)
        _record(f"prompt-to-reply-s[{app}, ipykernel 7.4, cell running]", (shown - sent) / 1000)
        assert (shown - sent) / 1000 < 10
        assert _still_running(nb)
        assert nb.page.evaluate("() => window.__hnBusyNote") is False  # the kernel took every message at once
        nb.screenshot(f"busy-kernel-{app}")
    finally:
        output = _finish_long_cell(nb, flag)
    _assert_intact(output)


def test_without_subshells_the_chat_says_the_kernel_is_busy(
    open_notebook: Any, kernel_names: dict[str, str], tmp_path: Path
) -> None:
    """ipykernel 6.29 (no subshells): a prompt sent while a cell runs shows the busy note with its text within
    2 s, is sent once the cell ends (the note goes), and is answered; the cell's output is intact."""
    tag = uuid.uuid4().hex[:8]
    flag = tmp_path / f"stop-{tag}"
    nb = _open_busy_notebook(open_notebook, "lab", kernel_names["6.29"], flag)
    try:
        sent = _send(nb, f"hello queued {tag}")
        note = nb.page.locator(".hn-kernel-busy")
        note.wait_for(state="visible", timeout=5_000)
        shown = float(nb.page.evaluate("() => Date.now()"))
        _record("prompt-to-busy-note-s[lab, ipykernel 6.29]", (shown - sent) / 1000)
        assert (shown - sent) / 1000 < 2
        assert note.inner_text().split("\n") == [BUSY_NOTE, f"hello queued {tag}"]
        assert nb.page.get_by_role("textbox", name="Message to Hermes").input_value() == ""
        nb.page.wait_for_timeout(1000)
        assert _still_running(nb) and nb.page.locator(".hn-message[data-role='user']").count() == 0
        nb.screenshot("busy-kernel-note-ipykernel-6.29")
    finally:
        output = _finish_long_cell(nb, flag)
    _assert_intact(output)
    note.wait_for(state="hidden", timeout=10_000)  # the kernel took the prompt
    _wait_reply(nb, f"You said: hello queued {tag}")
