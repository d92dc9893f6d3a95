"""Browser tests of the chat widget: real JupyterLab 4 / Notebook 7, headless Chromium, real Hermes 0.19.0.

Each test opens its own notebook (one browser context) on the session's shared servers; prompts use the
scripted model's keywords (THINKRUN, DANGER, CLARIFY, SLOW; see ``hermes_notebook._demo.scripted_model``).
Screenshots of every page land in ``test-artifacts/`` at teardown; the theme test saves named ones, and the
latency/history measurements are written to ``test-artifacts/chat-latency.json``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts"))
NotebookPage = Any  # tests/browser/conftest.py's NotebookPage (conftest modules are not importable)
CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TURN_TIMEOUT_MS = 90_000  # the first turn of a session builds the agent (about 5 s here)

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.both_servers]  # both Hermes servers


def open_chat(open_notebook: Any, app: str = "lab", cells: list[str] | None = None) -> NotebookPage:
    """Open a notebook showing a fresh Chat and wait until its session is open in the kernel."""
    nb: NotebookPage = open_notebook(cells or CHAT_CELLS, app=app)
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    return nb


def send(nb: NotebookPage, text: str) -> None:
    """Type a prompt in the composer and press Send, as a user would."""
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(text)
    nb.page.locator(".hn-send").click()


def last_assistant(nb: NotebookPage, status: str | None = None, timeout_ms: int = TURN_TIMEOUT_MS) -> Any:
    """The newest assistant message element, after waiting for it (with that status)."""
    selector = ".hn-message[data-role='assistant']" + (f"[data-status='{status}']" if status else "")
    nb.page.locator(selector).last.wait_for(timeout=timeout_ms)
    return nb.page.locator(".hn-message[data-role='assistant']").last


def turn(nb: NotebookPage, text: str, status: str = "complete") -> Any:
    """Send a prompt and wait until the number of finished assistant messages grows; return the new one."""
    sel = f".hn-message[data-role='assistant'][data-status='{status}']"
    before = nb.page.locator(sel).count()
    send(nb, text)
    nb.page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length > n", arg=[sel, before], timeout=TURN_TIMEOUT_MS
    )
    return nb.page.locator(sel).last


# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("app", ["lab", "notebook7"])
def test_turn_renders_reasoning_tool_and_markdown_in_order(open_notebook: Any, app: str) -> None:
    """A THINKRUN turn shows reasoning (collapsed), a completed tool card and markdown text, in that order."""
    nb = open_chat(open_notebook, app)
    marker = f"hn-order-{uuid.uuid4().hex[:6]}"
    message = turn(nb, f"THINKRUN echo {marker}")
    kinds = message.locator(".hn-part").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["reasoning", "tool", "text"]
    reasoning = message.locator("details.hn-reasoning")
    assert reasoning.get_attribute("open") is None  # collapsed by default
    reasoning.locator("summary").click()
    expect(reasoning).to_have_attribute("open", "")
    expect(reasoning).to_contain_text("I will run the command")
    tool = message.locator(".hn-tool")
    assert tool.get_attribute("data-status") == "completed"
    assert "terminal" in tool.locator(".hn-tool-name").inner_text()
    text = message.locator(".hn-part[data-kind='text']")
    assert marker in text.locator("pre code").inner_text()  # the fenced block became a code block
    assert text.locator("button.hn-copy").count() >= 1
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours


def test_approval_deny_blocks_and_once_runs(open_notebook: Any, workdir: Path) -> None:
    """Clicking "deny" on an approval keeps the directory on disk; "once" lets the rm -rf run."""
    workdir.mkdir(parents=True)
    (workdir / "keep.txt").write_text("still here")
    nb = open_chat(open_notebook)
    card = ".hn-interaction[data-kind='approval']"

    send(nb, f"DANGER {workdir.name}")
    nb.page.locator(f"{card}[data-status='pending'] button[data-choice='deny']").click(
        timeout=TURN_TIMEOUT_MS
    )
    denied = last_assistant(nb, "complete")
    expect(denied).to_contain_text("Dangerous command was blocked")
    assert "Dangerous command was blocked" in denied.inner_text()
    assert denied.locator(card).get_attribute("data-status") == "answered"
    assert denied.locator(f"{card} button[data-choice='once']").is_disabled()
    assert (workdir / "keep.txt").exists()

    before = nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").count()
    send(nb, f"DANGER {workdir.name}")
    nb.page.locator(f"{card}[data-status='pending'] button[data-choice='once']").click(
        timeout=TURN_TIMEOUT_MS
    )
    nb.page.wait_for_function(
        "n => document.querySelectorAll("
        "\".hn-message[data-role='assistant'][data-status='complete']\").length > n",
        arg=before,
        timeout=TURN_TIMEOUT_MS,
    )
    assert "Dangerous command ran" in last_assistant(nb).inner_text()
    assert not workdir.exists()


@pytest.mark.parametrize("app", ["lab", "notebook7"])
def test_clarify_choice_reaches_the_model(open_notebook: Any, app: str) -> None:
    """Clicking a clarify choice sends it to Hermes, and the model's reply quotes it."""
    nb = open_chat(open_notebook, app)
    send(nb, "CLARIFY Which letter?")
    card = nb.page.locator(".hn-interaction[data-kind='clarify'][data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    assert "Which letter?" in card.inner_text()
    card.locator("button[data-choice='B']").click()
    message = last_assistant(nb, "complete")
    assert "You chose: B" in message.inner_text()
    assert message.locator(".hn-interaction[data-kind='clarify']").get_attribute("data-status") == "answered"


def test_stop_button_interrupts_a_slow_turn(open_notebook: Any) -> None:
    """The stop button interrupts a slow turn: it ends "interrupted" long before its 200 ticks."""
    nb = open_chat(open_notebook)
    send(nb, "SLOW 200")
    nb.page.wait_for_function(
        "() => /tick 3 /.test(document.querySelector(\".hn-message[data-role='assistant']\")?.textContent "
        "|| '')",
        timeout=TURN_TIMEOUT_MS,
    )
    stop = nb.page.get_by_role("button", name="Stop the response")
    assert stop.is_visible()
    t0 = time.monotonic()
    stop.click()
    message = last_assistant(nb, "interrupted", timeout_ms=30_000)
    assert time.monotonic() - t0 < 15
    assert "tick 199" not in message.inner_text()
    nb.page.locator(".hn-stop").wait_for(state="hidden")
    assert nb.kernel_eval("chat.busy") is False


def test_dashboard_restart_shows_banner_and_chat_recovers(open_notebook: Any, hermes: Any) -> None:
    """Killing the Dashboard shows "disconnected", restarting it shows "reconnected", and a new prompt
    works."""
    nb = open_chat(open_notebook)
    first = turn(nb, "before the restart")
    assert "You said: before the restart" in first.inner_text()
    nb.page.evaluate(
        """() => { const b = document.querySelector('.hn-banner'); window.__hnBanner = [];
           new MutationObserver(() => window.__hnBanner.push(b.dataset.status))
             .observe(b, {attributes: true, attributeFilter: ['data-status']}); }"""
    )
    hermes.stop_dashboard()
    try:
        nb.page.wait_for_function("() => window.__hnBanner.includes('disconnected')", timeout=30_000)
        assert nb.page.locator(".hn-banner").is_visible()
        nb.screenshot("chat-banner-disconnected")
    finally:
        hermes.start_dashboard()
    nb.page.wait_for_function("() => window.__hnBanner.includes('reconnected')", timeout=60_000)
    statuses = nb.page.evaluate("window.__hnBanner")
    assert statuses.index("disconnected") < statuses.index("reconnected")
    assert "Reconnected" in nb.page.locator(".hn-banner").inner_text()
    after = turn(nb, "after the restart")
    assert "You said: after the restart" in after.inner_text()
    assert "You said: before the restart" in nb.page.locator(".hn-messages").inner_text()


@pytest.mark.parametrize("app", ["lab", "notebook7"])
def test_reload_shows_the_same_conversation(open_notebook: Any, app: str) -> None:
    """After a page reload the widget is rebuilt from the kernel and shows the same conversation."""
    nb = open_chat(open_notebook, app)
    marker = f"reload-{uuid.uuid4().hex[:6]}"
    turn(nb, f"remember {marker}")
    before = nb.page.locator(".hn-messages").inner_text()
    nb.save()
    nb.page.reload()
    nb.page.locator(".hn-chat .hn-message[data-role='assistant'][data-status='complete']").first.wait_for(
        timeout=60_000
    )
    after = nb.page.locator(".hn-messages").inner_text()
    assert f"You said: remember {marker}" in after
    assert after.count(marker) == before.count(marker)
    # Still live: the composer works after the reload.
    assert "You said: still live" in turn(nb, "still live").inner_text()


def test_saved_notebook_has_transcript_and_no_secrets(
    open_notebook: Any, hermes: Any, tmp_path: Path
) -> None:
    """A saved chat notebook holds no key or token, and nbconvert's HTML shows the conversation text."""
    nb = open_chat(open_notebook)
    marker = f"static-{uuid.uuid4().hex[:6]}"
    turn(nb, f"MARKDOWN {marker}")
    turn(nb, f"say {marker}")
    # The transcript output is hidden in the live page while the widget is there.
    assert not nb.page.locator(".hn-transcript").first.is_visible()
    nb.page.wait_for_function(
        "m => [...document.querySelectorAll('.hn-transcript')].some(e => e.textContent.includes('You said: "
        "say ' + m))",
        arg=marker,
        timeout=30_000,
    )
    path = nb.save()
    raw = path.read_text()
    settings = hermes.settings()
    for secret in (settings.api_key.reveal(), settings.dashboard_token.reveal()):
        assert secret not in raw
    assert f"You said: say {marker}" in raw
    out = tmp_path / "chat.html"
    subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "html", str(path), "--output", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"},
    )
    html = out.read_text()
    assert f"You said: say {marker}" in html
    assert "Here is some markdown" in html or "<h1" in html or "<h2" in html
    for secret in (settings.api_key.reveal(), settings.dashboard_token.reveal()):
        assert secret not in html


def test_screenshots_light_and_dark(open_notebook: Any) -> None:
    """The chat reads well in both themes; named screenshots go to the artifacts dir."""
    nb = open_chat(open_notebook)
    turn(nb, "THINKRUN echo theme-check")
    send(nb, "CLARIFY Light or dark?")
    nb.page.locator(".hn-interaction[data-kind='clarify'][data-status='pending']").wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    colors = {}
    try:
        for theme, name in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
            nb.set_theme(theme)
            nb.page.locator(".hn-chat").scroll_into_view_if_needed()
            path = nb.screenshot(f"chat-{name}")
            assert path.stat().st_size > 10_000
            colors[name] = nb.page.evaluate(
                "() => { const s = getComputedStyle(document.querySelector('.hn-chat'));"
                " return [s.color, s.backgroundColor]; }"
            )
    finally:
        nb.set_theme("JupyterLab Light")  # the theme is a user setting: later tests must not inherit dark
    assert colors["light"][0] != colors["dark"][0]  # text colour follows the theme
    nb.page.locator(".hn-interaction[data-kind='clarify'] button[data-choice='A']").click()
    expect(nb.page.locator(".hn-message[data-role='assistant']").last).to_contain_text(
        "You chose: A", timeout=TURN_TIMEOUT_MS
    )


@pytest.mark.parametrize("kernel", ["hn-k629", "hn-k74"])
def test_extra_kernels_run_this_work_tree(
    open_notebook: Any, kernel: str, kernel_names: dict[str, str], hermes: Any
) -> None:
    """The ipykernel 6.29 / 7.4 kernelspecs start, import this work tree and see the Hermes settings."""
    nb = open_notebook(["import os, ipykernel, hermes_notebook"], kernel=kernel)
    nb.run_all()
    version, url, where = nb.kernel_eval(
        "[ipykernel.__version__, os.environ.get('HERMES_DASHBOARD_URL'), hermes_notebook.__file__]"
    )
    assert version == {"hn-k629": "6.29.5", "hn-k74": "7.4.0"}[kernel]
    assert url == hermes.dashboard_url
    assert where.startswith(str(ROOT))


# --- performance (numbers also written to test-artifacts/chat-latency.json) ---------------------------------

LATENCY_SETUP = r"""
import time as _t
from hermes_notebook.turns import Message as _M
_mid = "assistant:latency"
chat.push([{"op": "message", "message": {"id": _mid, "role": "assistant", "status": "streaming", "parts": [
    {"id": "text:0", "kind": "text", "text": "", "name": None, "status": None, "arguments": None,
     "preview": None, "result": None, "duration": None, "interaction": None}],
    "usage": None, "error": None}}])
"""

LATENCY_RUN = r"""
import threading as _th, time as _t
_sent = {{}}
def _produce(n={n}, gap={gap}):
    for i in range(n):
        _sent[i] = _t.time() * 1000
        # a finished word: the kernel holds back an unfinished one until the next append (secret scrubbing)
        chat.push([{{"op": "append", "message_id": "assistant:latency", "part_id": "text:0",
                     "text": f"LAT{{i:04d}} "}}])
        _t.sleep(gap)
_th.Thread(target=_produce, daemon=True).start()
"""

OBSERVER = r"""
() => { window.__hnSeen = {}; const root = document.querySelector('.hn-messages');
  const scan = () => { const now = Date.now(); const t = root.textContent; const re = /LAT(\d{4})/g; let m;
    while ((m = re.exec(t))) { if (!(m[1] in window.__hnSeen)) window.__hnSeen[m[1]] = now; } };
  new MutationObserver(scan).observe(root, {childList: true, subtree: true, characterData: true}); }
"""


def _record(name: str, value: Any) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "chat-latency.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = value
    path.write_text(json.dumps(data, indent=2))


def test_delta_to_dom_latency(open_notebook: Any) -> None:
    """Deltas pushed in the kernel reach the DOM while the reply streams, each on its own, not at its end. The
    latency is recorded for benchmarks/README.md (target: p95 within 50 ms plus the 33 ms coalescing window);
    it is a number measured on a quiet machine, not a bound here, where the CI box runs three suites at
    once."""
    nb = open_chat(open_notebook)
    nb.kernel_exec(LATENCY_SETUP)
    nb.page.locator(".hn-message[data-message-id='assistant:latency']").wait_for(state="attached")
    nb.page.evaluate(OBSERVER)
    n, gap = 200, 0.02
    nb.kernel_exec(LATENCY_RUN.format(n=n, gap=gap))
    nb.page.wait_for_function(f"() => Object.keys(window.__hnSeen).length >= {n}", timeout=60_000)
    sent = nb.kernel_eval("{str(k): v for k, v in _sent.items()}")
    seen = nb.page.evaluate("window.__hnSeen")
    latencies = sorted(seen[f"{i:04d}"] - sent[str(i)] for i in range(n))
    median = statistics.median(latencies)
    p95 = latencies[int(0.95 * (n - 1))]
    _record(
        "delta_to_dom_ms",
        {
            "n": n,
            "gap_ms": gap * 1000,
            "median": round(median, 1),
            "p95": round(p95, 1),
            "max": round(latencies[-1], 1),
        },
    )
    print(f"delta->DOM latency over {n} deltas: median {median:.1f} ms, p95 {p95:.1f} ms")
    # 200 deltas 20 ms apart stream for 4 s: a view that showed them only in bursts or at the end would be
    # seconds behind. Measured here: p95 47 ms on a quiet machine, 177 ms with a browser test and a build
    # beside CI.
    assert p95 < 1000, latencies[-10:]


HISTORY_2000 = r"""
from hermes_notebook.turns import user_message as _um
_msgs = []
for _i in range(1000):
    _msgs.append(_um(f"h{_i}", f"question {_i}: " + "lorem ipsum " * 8).to_dict())
    _msgs.append({"id": f"assistant:h{_i}", "role": "assistant", "status": "complete", "usage": None,
                  "error": None,
                  "parts": [{"id": "text:0", "kind": "text",
                             "text": f"**Answer {_i}**: " + "dolor sit amet " * 10,
                             "name": None, "status": None, "arguments": None, "preview": None, "result": None,
                             "duration": None, "interaction": None}]})
chat.reset(_msgs)
"""


def test_2000_message_history_renders_and_typing_stays_responsive(open_notebook: Any) -> None:
    """A 2,000-message history renders its newest messages (older ones on demand), and typing is not
    delayed."""
    nb = open_chat(open_notebook)
    t0 = time.perf_counter()
    nb.kernel_exec(HISTORY_2000)
    nb.page.wait_for_function(
        "() => document.querySelector('.hn-chat .hn-earlier:not([hidden])') !== null"
        " && document.querySelectorAll('.hn-chat .hn-message').length >= 60",
        timeout=60_000,
        polling=50,
    )
    render_s = time.perf_counter() - t0
    assert "Answer 999" in nb.page.locator(".hn-message").last.inner_text()
    assert nb.page.locator(".hn-message").count() < 200  # lazily: the newest window, not all 2,000
    # (dispatched: scrolling it into view for a real click already loads more, so it never holds still)
    nb.page.get_by_role("button", name="Show earlier messages").dispatch_event("click")
    nb.page.wait_for_function(
        "() => document.querySelectorAll('.hn-chat .hn-message').length >= 120", timeout=10_000
    )
    box = nb.page.get_by_role("textbox", name="Message to Hermes")
    box.click()
    # Per-keystroke delay: time from keydown to the input event having updated the textarea.
    nb.page.evaluate(
        """() => { window.__hnKeys = []; const ta = document.querySelector('.hn-composer textarea');
           let down = 0; ta.addEventListener('keydown', () => { down = performance.now(); });
           ta.addEventListener('input', () => requestAnimationFrame(() =>
             window.__hnKeys.push(performance.now() - down))); }"""
    )
    text = "typing stays responsive"
    t1 = time.perf_counter()
    nb.page.keyboard.type(text)
    type_s = time.perf_counter() - t1
    nb.page.wait_for_function(f"() => window.__hnKeys.length >= {len(text)}", timeout=10_000)
    keys = sorted(nb.page.evaluate("window.__hnKeys"))
    assert box.input_value() == text
    p95 = keys[int(0.95 * (len(keys) - 1))]
    _record(
        "history_2000",
        {
            "render_s": round(render_s, 2),
            "typing_total_s": round(type_s, 3),
            "key_to_frame_ms_median": round(statistics.median(keys), 1),
            "key_to_frame_ms_p95": round(p95, 1),
        },
    )
    print(f"2000-message history: rendered in {render_s:.2f} s; keystroke->frame p95 {p95:.1f} ms")
    assert render_s < 20
    assert p95 < 100  # a keystroke shows within a few frames
