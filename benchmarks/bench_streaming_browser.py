"""Streaming and long histories in a real browser: JupyterLab + Debian Chromium, the real widget, side by
side.

What it measures (one JupyterLab, one Chromium, one kernel, one run):

1. ``stream``: a 1 MB markdown reply with a 200 KB fenced code block, pushed through
   :class:`hermes_notebook.widgets._stream.StreamingWidget` (what ``Chat`` and ``%hermes`` use; the coalescer
   caps it at 30 batches a second) at ``--rate`` bytes a second, into two views in the same notebook:
   the incremental renderer, and a naive one (hidden benchmark flag ``window.__hnBench.naive``: every update
   re-renders and re-highlights the whole message and the scroll-follow forces a layout, like common chat
   widgets). Per applied batch the view records the main-thread time of the render plus the style and layout
   it causes (forced at once while measuring), both as wall time (``performance.now()``) and as the renderer
   thread's CPU time from a Chromium trace (``FireAnimationFrame`` thread time; robust when other processes
   load the machine); a ``longtask`` PerformanceObserver records tasks over 50 ms. The per-batch cost is
   fitted against the KB already in the message (least squares slope). Kernel -> browser bytes: the widget's
   custom messages plus its ``index`` traffic, against the reply's size.
2. ``history``: a 10,000-message session (reset into a widget before display): first paint, from running the
   cell to the first frame after the newest message is in the DOM; then a fling scroll to the top (wheel
   events every frame) while rAF timestamps record frame lengths.
3. ``ten``: ten widgets streaming at once from ten kernel threads (30 KB/s each, a push every 20 ms); each
   view's applied batches per second, and the round trip of an ``execute_request`` (``1``) sent every 100 ms
   meanwhile, measured by the page's kernel client (so it includes the page's own busy time), and by a second
   client of our own connected straight to the kernel (the kernel's own latency).

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_streaming_browser.py`` (needs ``js`` built and
``/usr/bin/chromium``; ``--json`` for machine output; ``--rate`` bytes/s, default 100000).

Before and after a front-end change: build the old commit's bundle, copy its
``hermes_notebook/static/chat.js`` aside, and pass it as ``--baseline-esm PATH --parts stream``: the stream
part then streams the same reply into a view of that bundle and one of this tree's, alternating which goes
first, ``--rounds`` times each, in one Lab and one page (``side_by_side`` pools each bundle's per-batch CPU
time).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from hermes_notebook._demo.chromium import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"

# ---- kernel-side code (the notebook's cells) -------------------------------------------------------------

SETUP = r'''
import json, threading, time, random
from hermes_notebook.widgets._stream import StreamingWidget

def _part(pid, text):
    return {"id": pid, "kind": "text", "text": text, "name": None, "status": None, "arguments": None,
            "preview": None, "result": None, "duration": None, "interaction": None}

def _msg(mid, role, text, status):
    return {"id": mid, "role": role, "status": status, "parts": [_part("text:0", text)], "usage": None,
            "error": None}

def make_reply(total=1_000_000, code=200_000):
    rnd = random.Random(7)
    words = ("the model streams tokens while the notebook keeps every finished block as it is and only the"
             " tail moves").split()
    def para():
        return " ".join(rnd.choice(words) for _ in range(rnd.randint(40, 90))).capitalize() + "."
    def block(i):
        kind = i % 6
        if kind == 0: return f"## Section {i}\n\n" + para()
        if kind == 1: return "\n".join(f"- item {j}: " + para()[:80] for j in range(5))
        if kind == 2:
            defs = (f"def f{i}_{j}(x):\n    return x * {j}  # {para()[:40]}" for j in range(6))
            return "```python\n" + "\n".join(defs) + "\n```"
        if kind == 3:
            rows = (f"| {j} | {para()[:20]} | **{j*j}** |" for j in range(6))
            return "| a | b | c |\n|---|---|---|\n" + "\n".join(rows)
        if kind == 4: return "> " + para() + "\n> with `inline code` and https://example.com/x"
        return para() + " " + para()
    big = "```python\n" + "".join(
        f"def big_{j}(value):\n    return [v * {j} for v in range(value)]  # line {j}\n" for j in range(4000)
    )
    big = big[: code - 4] + "\n```"
    head, tail, i = [], [], 0
    while sum(len(b) + 2 for b in head) < (total - code) // 2:
        head.append(block(i)); i += 1
    while sum(len(b) + 2 for b in head) + len(big) + 2 + sum(len(b) + 2 for b in tail) < total:
        tail.append(block(i)); i += 1
    return "\n\n".join(head + [big] + tail)

REPLY = make_reply()
DONE = {}

def stream(w, key, text=REPLY, rate=100_000, tick=0.005):
    """Push ``text`` into ``w`` as small appends at ``rate`` chars/s, from a thread (the kernel stays
    free)."""
    mid = f"assistant:{key}"
    w.push([{"op": "message", "message": _msg(mid, "assistant", "", "streaming")}])
    def run():
        per = max(1, int(rate * tick)); t0 = time.monotonic(); sent = 0
        while sent < len(text):
            w.push([{"op": "append", "message_id": mid, "part_id": "text:0", "text": text[sent:sent + per]}])
            sent += per
            delay = t0 + sent / rate - time.monotonic()
            if delay > 0: time.sleep(delay)
        w.push([{"op": "finish", "message_id": mid, "status": "complete", "usage": None, "error": None}])
        w.flush()
        DONE[key] = time.monotonic() - t0
    threading.Thread(target=run, daemon=True).start()

def history(n=10_000):
    rnd = random.Random(3)
    out = []
    for i in range(n // 2):
        out.append(_msg(f"user:{i}", "user", f"Question {i}: how does part {i} work?", "complete"))
        words = ["tokens", "blocks", "render", "notebook", "scroll"]
        body = f"Answer {i}. " + " ".join(rnd.choice(words) for _ in range(40))
        if i % 5 == 0: body += f"\n\n```python\nprint({i})\n```"
        if i % 7 == 0: body += "\n\n- one\n- two\n- three"
        out.append(_msg(f"assistant:{i}", "assistant", body, "complete"))
    return out

HISTORY = history()
'''

CELLS = [
    SETUP,
    "w_inc = StreamingWidget(mode='turn')\nw_inc",
    "w_naive = StreamingWidget(mode='turn')\nw_naive",
    "w_hist = StreamingWidget(mode='turn')\nw_hist.reset(HISTORY)\nw_hist",
    "ten = [StreamingWidget(mode='turn') for _ in range(10)]\nfor _w in ten: display(_w)",
]

# ---- browser-side helpers -------------------------------------------------------------------------------

JS_PRELUDE = """
  const withTimeout = (p, ms, what) => Promise.race([p, new Promise((_, rej) =>
      setTimeout(() => rej(new Error(what + ' timed out after ' + ms + ' ms')), ms))]);
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
"""

JS_READY = """(path) => {
  const app = window.jupyterapp; if (!app) return false;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  const k = nb && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!(k && k.connectionStatus === 'connected' && k.status === 'idle');
}"""

JS_RUN_CELL = (
    """async ({path, index, naive}) => {"""
    + JS_PRELUDE
    + """
  window.__hnBench = {naive, samples: []};
  app.shell.activateById(nb.id);
  nb.content.activeCellIndex = index;
  const t0 = performance.now();
  await withTimeout(app.commands.execute('notebook:run-cell'), 120000, 'run cell');
  return performance.now() - t0;
}"""
)

JS_EXEC = (
    """async ({path, code}) => {"""
    + JS_PRELUDE
    + """
  const fut = nb.sessionContext.session.kernel.requestExecute({code, store_history: false});
  let out = '';
  fut.onIOPub = (m) => { if (m.header.msg_type === 'stream') out += m.content.text;
                         if (m.header.msg_type === 'error') out += 'ERROR ' + m.content.evalue; };
  await withTimeout(fut.done, 60000, 'execute');
  return out;
}"""
)

JS_OBSERVE_LONG = """() => {
  window.__hnLong = [];
  if (window.__hnLongObs) window.__hnLongObs.disconnect();
  window.__hnLongObs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__hnLong.push(e.duration);
  });
  window.__hnLongObs.observe({type: 'longtask'});
  return true;
}"""

# First paint of the history widget: run its cell, then wait for the newest message and one more frame.
JS_HISTORY_PAINT = (
    """async ({path, index}) => {"""
    + JS_PRELUDE
    + """
  window.__hnBench = null;
  app.shell.activateById(nb.id);
  nb.content.activeCellIndex = index;
  const cell = nb.content.widgets[index];
  const t0 = performance.now();
  const run = app.commands.execute('notebook:run-cell');
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  let view = null;
  let ran = null;
  run.then(() => { ran = performance.now() - t0; });
  while (performance.now() - t0 < 60000) {
    await frame();
    if (view === null && cell.node.querySelector('.hn-chat')) view = performance.now() - t0;
    const last = cell.node.querySelector('.hn-message[data-message-id="assistant:4999"]');
    if (last) { await frame(); break; }
  }
  const painted = performance.now() - t0;
  await withTimeout(run, 60000, 'run');
  return {painted, view, ran, rendered: cell.node.querySelectorAll('.hn-message').length};
}"""
)

# Fling: wheel up hard every frame over the history until its top, recording frame lengths. The chat grows in
# the notebook (no scroll area of its own), so the notebook's own scroller is what scrolls.
JS_FLING = (
    """async ({path, index}) => {"""
    + JS_PRELUDE
    + """
  const list = nb.content.widgets[index].node.querySelector('.hn-messages');
  list.scrollIntoView({block: 'end'});
  let scroller = list.parentElement;
  while (scroller && !(/(auto|scroll)/.test(getComputedStyle(scroller).overflowY)
                       && scroller.scrollHeight > scroller.clientHeight)) scroller = scroller.parentElement;
  scroller = scroller || document.scrollingElement;
  const frames = [];
  let last = null, stop = false, grown = 0;
  const tick = (t) => {
    if (last !== null) frames.push(t - last);
    last = t;
    if (!stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  const t0 = performance.now();
  const before = list.querySelectorAll('.hn-message').length;
  while (performance.now() - t0 < 8000) {
    list.dispatchEvent(new WheelEvent('wheel', {deltaY: -1200, bubbles: true, cancelable: true}));
    scroller.scrollTop -= 1200;
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  stop = true;
  grown = list.querySelectorAll('.hn-message').length - before;
  return {frames, rendered_before: before, rendered_after: before + grown, scrollTop: scroller.scrollTop};
}"""
)

JS_WAIT_COMPLETE = (
    """async ({path, index, id, ms}) => {"""
    + JS_PRELUDE
    + """
  const cell = nb.content.widgets[index];
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const m = cell.node.querySelector(`.hn-message[data-message-id="${id}"][data-status="complete"]`);
    if (m) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}"""
)

JS_SCROLL_TO = (
    """({path, index}) => {"""
    + JS_PRELUDE
    + """
  nb.content.widgets[index].node.scrollIntoView({block: 'center'});
  return true;
}"""
)

# Ten views: per view, applied batches (flushes) and when; plus execute_request round trips every 100 ms.
JS_TEN = (
    """async ({path, seconds}) => {"""
    + JS_PRELUDE
    + """
  const kernel = nb.sessionContext.session.kernel;
  const rtts = [];
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    const s = performance.now();
    const fut = kernel.requestExecute({code: '1', store_history: false, silent: true});
    await withTimeout(fut.done, 30000, 'execute');
    rtts.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, 100));
  }
  return rtts;
}"""
)


def _direct_rtts(runtime_dir: Path, seconds: float, out: list[float]) -> None:
    """``1+1`` round trips from our own client to the notebook's kernel (its connection file), every 100
    ms."""
    from jupyter_client import BlockingKernelClient

    [connection] = sorted(runtime_dir.glob("kernel-*.json"))
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels(iopub=False, stdin=False, hb=False, control=False)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            s = time.perf_counter()
            msg_id = client.execute("1+1", silent=True, store_history=False)
            while client.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
                pass
            out.append((time.perf_counter() - s) * 1000)
            time.sleep(0.1)
    finally:
        client.stop_channels()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def start_lab(base: Path) -> tuple[subprocess.Popen[bytes], str]:
    root = base / "root"
    root.mkdir(parents=True)
    settings = base / "user-settings"
    for rel, data in {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
            "doNotDisturbMode": True,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(json.dumps(data))
    port = _free_port()
    flags = {
        "ServerApp.ip": "127.0.0.1",
        "ServerApp.port": port,
        "ServerApp.port_retries": 0,
        "IdentityProvider.token": TOKEN,
        "ServerApp.root_dir": root,
        "ServerApp.allow_root": True,
        "ServerApp.terminals_enabled": False,
        "LabApp.expose_app_in_browser": True,
        "LabApp.user_settings_dir": settings,
        "LabApp.workspaces_dir": base / "workspaces",
        "LabApp.news_url": None,
        "LabApp.check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
        "LabApp.extension_manager": "readonly",
        "ZMQChannelsWebsocketConnection.iopub_msg_rate_limit": 0,
        "ZMQChannelsWebsocketConnection.iopub_data_rate_limit": 0,
    }
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONPATH=str(ROOT),
    )
    log = open(base / "lab.log", "wb")  # noqa: SIM115 (kept open for the server's lifetime)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", *[f"--{k}={v}" for k, v in flags.items()]],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        preexec_fn=_die_with_parent,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2).read()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError("JupyterLab did not start; see " + str(base / "lab.log"))


def stop_lab(proc: subprocess.Popen[bytes], url: str) -> None:
    try:
        req = urllib.request.Request(f"{url}/api/shutdown?token={TOKEN}", method="POST")
        urllib.request.urlopen(req, timeout=5).read()
        proc.wait(10)
    except Exception:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def write_notebook(root: Path, name: str, baseline: Path | None = None) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = list(CELLS)
    if baseline is not None:  # cell 5: the same widget drawn by another build of js/src/chat.ts
        cells.append(
            "from pathlib import Path as _Path\n"
            f"class Baseline(StreamingWidget):\n    _esm = _Path({str(baseline)!r})\n"
            "w_baseline = Baseline(mode='turn')\nw_baseline"
        )
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nbformat.write(nb, root / name)


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def batch_cpu_ms(trace: dict[str, Any]) -> list[float]:
    """Main-thread CPU time of each animation frame that applied a batch (holds an ``hn-batch`` mark), in ms.

    Thread time (``tdur``), not wall time: on a loaded machine the wall clock also counts the time the
    renderer waited for a core. The view forces its style and layout inside that frame while measuring, so
    they count.
    """
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    marks = sorted((e["ts"], e["tid"]) for e in events if e.get("name") == "hn-batch")
    frames = [
        e for e in events if e.get("name") == "FireAnimationFrame" and e.get("ph") == "X" and "tdur" in e
    ]
    out: list[float] = []
    for ts, tid in marks:
        frame = next((f for f in frames if f["tid"] == tid and f["ts"] <= ts <= f["ts"] + f["dur"]), None)
        if frame is not None:
            out.append(frame["tdur"] / 1000)
    return out


def summarize(samples: list[dict[str, float]], long_tasks: list[float], cpu: list[float]) -> dict[str, Any]:
    # Samples and marks come in the same order; the first batch of a stream (the empty message) has chars ==
    # 0.
    pairs = (
        [(s, c) for s, c in zip(samples, cpu, strict=True) if s["chars"] > 0]
        if len(cpu) == len(samples)
        else []
    )
    streaming = [s for s in samples if s["chars"] > 0]
    ms = [s["ms"] for s in streaming]
    cpu_ms = [c for _, c in pairs]
    return {
        "batches": len(ms),
        "cpu_p50_ms": round(percentile(cpu_ms, 50), 2),
        "cpu_p95_ms": round(percentile(cpu_ms, 95), 2),
        "cpu_max_ms": round(max(cpu_ms, default=float("nan")), 1),
        "cpu_slope_ms_per_kb": round(slope([(s["chars"] / 1024, c) for s, c in pairs]), 4),
        "wall_p50_ms": round(percentile(ms, 50), 2),
        "wall_p95_ms": round(percentile(ms, 95), 2),
        "wall_max_ms": round(max(ms, default=float("nan")), 1),
        "wall_slope_ms_per_kb": round(slope([(s["chars"] / 1024, s["ms"]) for s in streaming]), 4),
        "long_tasks": len(long_tasks),
        "long_task_max_ms": round(max(long_tasks, default=0.0), 1),
        "long_task_total_ms": round(sum(long_tasks), 1),
    }


def run(rate: int, parts: set[str], baseline: Path | None = None, rounds: int = 2) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    result: dict[str, Any] = {"rate": rate}
    with tempfile.TemporaryDirectory(prefix="hn-bench-") as tmp:
        base = Path(tmp)
        proc, url = start_lab(base)
        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            write_notebook(base / "root", "bench.ipynb", baseline)
            context = browser.new_context(viewport={"width": 1280, "height": 1000})
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
            page = context.new_page()
            page.goto(f"{url}/lab/tree/bench.ipynb?reset&token={TOKEN}")
            page.wait_for_function(JS_READY, arg="bench.ipynb", timeout=60_000)
            path = "bench.ipynb"
            page.evaluate(JS_RUN_CELL, {"path": path, "index": 0, "naive": False})

            def exec_(code: str) -> str:
                return str(page.evaluate(JS_EXEC, {"path": path, "code": code}))

            reply_chars = int(exec_("print(len(REPLY))").strip())
            result["reply_chars"] = reply_chars

            def measure_stream(key: str, index: int, naive: bool) -> dict[str, Any]:
                """Run cell ``index`` (a fresh widget and view), stream the reply into it, and summarise."""
                page.evaluate(JS_RUN_CELL, {"path": path, "index": index, "naive": naive})
                page.evaluate(JS_SCROLL_TO, {"path": path, "index": index})
                page.wait_for_timeout(500)
                page.evaluate("() => { window.__hnBench.samples.length = 0; }")
                page.evaluate(JS_OBSERVE_LONG)
                browser.start_tracing(page=page, categories=["devtools.timeline", "blink.user_timing"])
                widget = f"w_{key}"
                exec_(f"{widget}.bytes_sent = 0\nstream({widget}, '{key}', rate={rate})")
                done = page.evaluate(
                    JS_WAIT_COMPLETE,
                    {"path": path, "index": index, "id": f"assistant:{key}", "ms": 600_000},
                )
                samples = page.evaluate(f"() => window.__hnBench.samples")  # noqa: F541
                # this cell's view holds the same object as window.__hnBench (set when it was created)
                long_tasks = page.evaluate("() => window.__hnLong")
                cpu = batch_cpu_ms(json.loads(browser.stop_tracing()))
                stats = summarize(samples, long_tasks, cpu)
                stats["cpu_samples"] = len(cpu)
                stats["completed"] = bool(done)
                sent = json.loads(
                    exec_(
                        f"print(json.dumps({{'bytes': {widget}.bytes_sent, 'seconds': DONE.get('{key}')}}))"
                    )
                )
                stats["kernel_bytes"] = sent["bytes"]
                stats["bytes_ratio"] = round(sent["bytes"] / reply_chars, 3)
                stats["stream_seconds"] = round(sent["seconds"] or 0, 2)
                if os.environ.get("HN_BENCH_DUMP"):
                    Path(os.environ["HN_BENCH_DUMP"] + f".{key}.json").write_text(json.dumps([samples, cpu]))
                stats["cpu"] = cpu
                return stats

            if "stream" in parts and baseline is None:
                for key, index, naive in (("inc", 1, False), ("naive", 2, True)):
                    stats = measure_stream(key, index, naive)
                    del stats["cpu"]
                    result[f"stream_{key}"] = stats
            if "stream" in parts and baseline is not None:
                # Side by side: the same stream into the other bundle's view and this one's, alternating which
                # goes first, in one Lab, one page, one kernel.
                pooled: dict[str, list[float]] = {"baseline": [], "inc": []}
                for r in range(rounds):
                    order = (("baseline", 5), ("inc", 1)) if r % 2 == 0 else (("inc", 1), ("baseline", 5))
                    for key, index in order:
                        stats = measure_stream(key, index, False)
                        pooled[key] += stats.pop("cpu")
                        result[f"stream_{key}_{r + 1}"] = stats
                result["side_by_side"] = {
                    key: {
                        "batches": len(cpu),
                        "cpu_p50_ms": round(percentile(cpu, 50), 2),
                        "cpu_p95_ms": round(percentile(cpu, 95), 2),
                        "cpu_mean_ms": round(sum(cpu) / max(1, len(cpu)), 3),
                    }
                    for key, cpu in pooled.items()
                }
            if "history" in parts:
                paint = page.evaluate(JS_HISTORY_PAINT, {"path": path, "index": 3})
                page.evaluate(JS_OBSERVE_LONG)
                fling = page.evaluate(JS_FLING, {"path": path, "index": 3})
                frames = fling["frames"]
                long_tasks = page.evaluate("() => window.__hnLong")
                result["history"] = {
                    "first_paint_s": round(paint["painted"] / 1000, 3),
                    "cell_done_s": round((paint["ran"] or 0) / 1000, 3),
                    "view_created_s": round((paint["view"] or 0) / 1000, 3),
                    "rendered_at_first": paint["rendered"],
                    "fling_frames": len(frames),
                    "fling_frame_p95_ms": round(percentile(frames, 95), 1),
                    "fling_frame_max_ms": round(max(frames, default=0.0), 1),
                    "fling_long_tasks": len(long_tasks),
                    "fling_long_task_max_ms": round(max(long_tasks, default=0.0), 1),
                    "rendered_after_fling": fling["rendered_after"],
                }
            if "ten" in parts:
                # A light page for this one: the earlier widgets' views go away with their models.
                exec_("for _old in (w_inc, w_naive, w_hist): _old.close()")
                page.wait_for_timeout(1000)
                page.evaluate(JS_RUN_CELL, {"path": path, "index": 4, "naive": False})
                page.evaluate(JS_SCROLL_TO, {"path": path, "index": 4})
                page.evaluate("() => { window.__hnBench.samples.length = 0; }")
                t_start = page.evaluate("() => performance.now()")
                exec_(
                    "for _i, _w in enumerate(ten): stream(_w, f'ten{_i}', text=REPLY[:300_000], rate=30_000, "
                    "tick=0.02)"
                )
                direct: list[float] = []
                side = threading.Thread(
                    target=_direct_rtts, args=(base / "runtime", 8.0, direct), daemon=True
                )
                side.start()
                rtts = page.evaluate(JS_TEN, {"path": path, "seconds": 8})
                side.join(60)
                samples = page.evaluate("() => window.__hnBench.samples")
                t_end = page.evaluate("() => performance.now()")
                # samples are per flush of any of the ten views; per view: count them by view id
                per_view: dict[int, int] = {}
                for s in samples:
                    per_view[int(s.get("view", 0))] = per_view.get(int(s.get("view", 0)), 0) + 1
                span = (t_end - t_start) / 1000
                rates = sorted(round(n / span, 1) for n in per_view.values())
                result["ten"] = {
                    "views": len(per_view),
                    "batches_per_s_per_view_min": rates[0] if rates else 0,
                    "batches_per_s_per_view_max": rates[-1] if rates else 0,
                    "exec_rtt_p50_ms": round(percentile(rtts, 50), 1),
                    "exec_rtt_p95_ms": round(percentile(rtts, 95), 1),
                    "exec_rtt_max_ms": round(max(rtts, default=0.0), 1),
                    "exec_count": len(rtts),
                    # the same, from a second client straight to the kernel's shell channel (no page, no
                    # server)
                    "direct_exec_rtt_p50_ms": round(percentile(direct, 50), 1),
                    "direct_exec_rtt_p95_ms": round(percentile(direct, 95), 1),
                    "direct_exec_rtt_max_ms": round(max(direct, default=0.0), 1),
                }
            page.close()
            context.close()
        finally:
            browser.close()
            pw.stop()
            stop_lab(proc, url)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=100_000, help="reply chars per second (default 100000)")
    parser.add_argument("--parts", default="stream,history,ten", help="comma-separated: stream,history,ten")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--baseline-esm",
        type=Path,
        help="another build of the chat bundle (hermes_notebook/static/chat.js of a commit to compare): the "
        "stream part then measures it and this tree's side by side, alternating, instead of the naive view",
    )
    parser.add_argument("--rounds", type=int, default=2, help="streams per bundle with --baseline-esm")
    args = parser.parse_args()
    baseline = args.baseline_esm.resolve() if args.baseline_esm else None
    result = run(args.rate, set(args.parts.split(",")), baseline, args.rounds)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
