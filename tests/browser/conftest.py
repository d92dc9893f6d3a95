"""The shared browser harness: real JupyterLab 4 / Notebook 7, real Debian Chromium, real Hermes.

Recipe and pitfalls: ``/work/shared/browser-testing.md`` (verified on this machine). In short:

* one JupyterLab and (on first use) one Notebook 7 server per pytest session, loopback only, isolated
  ``JUPYTER_*`` dirs, ``PR_SET_PDEATHSIG`` so they die with pytest, stopped by PID at the end;
* the servers' environment carries the real Hermes settings (``HERMES_API_URL/KEY``,
  ``HERMES_DASHBOARD_URL/TOKEN`` from the session's ``hermes`` fixture) and ``PYTHONPATH`` = this work tree,
  so every kernel they start can ``import hermes_notebook`` and reach Hermes; the notebooks never hold a
  secret;
* extra kernelspecs ``hn-k629`` (ipykernel 6.29.5) and ``hn-k74`` (ipykernel 7.4.0) when
  ``scripts/setup-kernels`` has built them (``kernel_names`` fixture; pass ``kernel=`` to ``open_notebook``);
* one Chromium (``/usr/bin/chromium`` via Playwright's ``executable_path``) per session, one browser
  context and one uniquely named notebook per test, non-loopback requests aborted;
* cells run through ``window.jupyterapp.commands`` (deterministic); every wait has a timeout, including the
  JS side of kernel executes; screenshots of every page go to ``test-artifacts/`` at teardown.

Use::

    def test_x(open_notebook):
        nb = open_notebook(["import hermes_notebook as hn", "chat = hn.Chat()\\nchat"])   # Lab
        nb.run_all()
        nb.page.get_by_role("button", name="Send").click()

    def test_y(open_notebook):
        nb = open_notebook(cells, app="notebook7", kernel="hn-k74")

``BROWSER_TESTS_REQUIRED=1`` (CI) turns a missing Chromium or kernel venv into a failure instead of a skip.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.browser.lab import JS_KERNEL_READY, write_notebook

playwright_sync = pytest.importorskip("playwright.sync_api")
nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("BROWSER_TESTS_REQUIRED") == "1"  # CI: fail instead of skip
ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts"))
KERNELS_DIR = Path(os.environ.get("HN_KERNELS_DIR", ROOT / ".venv-kernels"))
#: Extra kernelspecs made by scripts/setup-kernels: ipykernel version -> kernelspec name.
EXTRA_KERNELS = {"6.29": "hn-k629", "7.4": "hn-k74"}
DEFAULT_TIMEOUT_MS = 30_000
TOKEN = "browser-test-token"

if not Path(CHROMIUM).exists():
    _msg = f"{CHROMIUM} missing: apt-get update && apt-get install -y chromium"
    if REQUIRED:
        raise RuntimeError(_msg)
    pytest.skip(_msg, allow_module_level=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


# --------------------------------------------------------------------------- servers


def _free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:  # runs in the child between fork and exec (Linux only)
    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _write_lab_settings(settings_dir: Path, theme: str | None = None) -> None:
    settings: dict[str, Any] = {
        # no "official Jupyter news?" toast, no update check (both would go to the internet)
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
            "doNotDisturbMode": True,
        },
        # keep every cell in the DOM (no virtual scrolling of long notebooks)
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }
    if theme:
        settings["@jupyterlab/apputils-extension/themes.jupyterlab-settings"] = {"theme": theme}
    for rel, data in settings.items():
        p = settings_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(data))


@dataclass
class JupyterServer:
    """A running JupyterLab or Notebook 7 server (``app`` is "lab" or "notebook7")."""

    app: str
    proc: subprocess.Popen[bytes]
    url: str
    token: str
    root: Path
    log: Path
    startup_s: float

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            data=data,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def shutdown_all_sessions(self) -> None:
        for s in self.api("/api/sessions"):
            with contextlib.suppress(OSError):
                self.api(f"/api/sessions/{s['id']}", method="DELETE")

    def notebook_url(self, path: str) -> str:
        if self.app == "lab":
            # ?reset: start from an empty workspace, do not reopen earlier tests' notebooks.
            return f"{self.url}/lab/tree/{path}?reset&token={self.token}"
        return f"{self.url}/notebooks/{path}?token={self.token}"


def start_server(
    base: Path, app: str, env_extra: dict[str, str], overrides: dict[str, Any] | None = None
) -> JupyterServer:
    """Start JupyterLab (``app="lab"``) or Notebook 7 (``"notebook7"``) headless on a free loopback port."""
    root = base / "root"
    root.mkdir(parents=True, exist_ok=True)
    settings_dir = base / "user-settings"
    _write_lab_settings(settings_dir)
    port = _free_loopback_port()
    cls = "LabApp" if app == "lab" else "JupyterNotebookApp"
    flags: dict[str, Any] = {
        "ServerApp.ip": "127.0.0.1",
        "ServerApp.port": port,
        "ServerApp.port_retries": 0,
        "IdentityProvider.token": TOKEN,
        "ServerApp.root_dir": root,
        "ServerApp.allow_root": True,  # CI runs as root
        "ServerApp.terminals_enabled": False,
        f"{cls}.expose_app_in_browser": True,  # window.jupyterapp
        f"{cls}.user_settings_dir": settings_dir,
        f"{cls}.workspaces_dir": base / "workspaces",
        # Streaming bursts must never trip the IOPub rate limit silently (the chat coalesces anyway).
        "ZMQChannelsWebsocketConnection.iopub_msg_rate_limit": 0,
    }
    if app == "lab":
        flags.update(
            {
                "LabApp.news_url": None,
                "LabApp.check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                "LabApp.extension_manager": "readonly",  # never query PyPI
            }
        )
    # Merge, never repeat: a flag given twice makes the extension fail to link and the app silently runs
    # with none of these settings.
    flags.update(overrides or {})
    env = dict(os.environ)
    env.update(  # isolate from ~/.jupyter and friends
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    env.pop("JUPYTER_TOKEN", None)
    for key in [k for k in env if k.startswith("HERMES_")]:
        env.pop(key)
    env.update(env_extra)
    module = "jupyterlab" if app == "lab" else "notebook"
    log = base / f"{app}.log"
    cmd = [sys.executable, "-m", module, "--no-browser", *(f"--{k}={v}" for k, v in flags.items())]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )
    server = JupyterServer(app, proc, f"http://127.0.0.1:{port}", TOKEN, root, log, 0.0)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter {app} exited ({proc.returncode}):\n{log.read_text()[-4000:]}")
        try:
            server.api("/api/status")
            break
        except (OSError, urllib.error.URLError):
            if time.monotonic() > deadline:
                stop_server(server)
                raise TimeoutError(f"jupyter {app} did not answer:\n{log.read_text()[-4000:]}") from None
            time.sleep(0.1)
    server.startup_s = time.perf_counter() - t0
    if "error linking extension" in log.read_text():
        stop_server(server)
        raise RuntimeError(f"jupyter {app} config rejected:\n{log.read_text()[-4000:]}")
    return server


def stop_server(server: JupyterServer) -> None:
    """Shut the server (and its kernels) down through its API; SIGTERM then SIGKILL by PID if it hangs."""
    if server.proc.poll() is None:
        with contextlib.suppress(OSError):
            server.api("/api/shutdown", method="POST")  # shuts kernels down too
        try:
            server.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.proc.send_signal(signal.SIGTERM)  # its SIGTERM handler also shuts kernels down
            try:
                server.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.proc.kill()
                server.proc.wait()


# --------------------------------------------------------------------------- page helpers

# Shared JS prelude: every await is raced against a timer, every lookup is by notebook path.
_JS_PRELUDE = """
  const withTimeout = (p, ms, what) => Promise.race([p, new Promise((_, rej) =>
      setTimeout(() => rej(new Error(what + ' timed out after ' + ms + ' ms')), ms))]);
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  if (!nb) throw new Error('notebook ' + path + ' is not open');
"""

JS_RUN = (
    """async ({path, command, index, ms}) => {"""
    + _JS_PRELUDE
    + """
  app.shell.activateById(nb.id);
  if (index !== null) nb.content.activeCellIndex = index;
  // The command's promise resolves once the kernel has executed the cell(s).
  await withTimeout(app.commands.execute(command), ms, command);
  return nb.content.widgets.map(c => c.model.type !== 'code' ? null :
      {count: c.model.executionCount, outputs: c.model.outputs.toJSON()});
}"""
)

JS_KERNEL_EXEC = (
    """async ({path, code, ms}) => {"""
    + _JS_PRELUDE
    + """
  const fut = nb.sessionContext.session.kernel.requestExecute(
      {code, store_history: false, stop_on_error: true});
  const res = {stdout: '', stderr: '', error: null};
  fut.onIOPub = (m) => {
    const t = m.header.msg_type;
    if (t === 'stream') res[m.content.name] += m.content.text;
    if (t === 'error') res.error = m.content.ename + ': ' + m.content.evalue;
  };
  // fut.done needs the iopub 'idle' status; if iopub messages were dropped it never comes.
  await withTimeout(fut.done, ms, 'kernel execute');
  return res;
}"""
)

JS_SAVE = (
    """async ({path, ms}) => {"""
    + _JS_PRELUDE
    + """
  await withTimeout(nb.context.save(), ms, 'save');
  return true;
}"""
)

JS_OUTPUTS = (
    """({path}) => {"""
    + _JS_PRELUDE
    + """
  return nb.content.widgets.map(c => c.model.type !== 'code' ? null : c.model.outputs.toJSON());
}"""
)


@dataclass
class NotebookPage:
    """A notebook open in JupyterLab or Notebook 7 in its own Playwright page."""

    page: Any
    server: JupyterServer
    path: str
    timings: dict[str, float] = field(default_factory=dict)
    page_errors: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def run_all(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> list[Any]:
        """Run every cell; returns when the kernel has finished all of them."""
        return self.page.evaluate(
            JS_RUN, {"path": self.path, "command": "notebook:run-all-cells", "index": None, "ms": timeout_ms}
        )

    def run_cell(self, index: int, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[str, Any]:
        """Run one cell (like Ctrl+Enter) and return ``{count, outputs}`` for it."""
        cells = self.page.evaluate(
            JS_RUN, {"path": self.path, "command": "notebook:run-cell", "index": index, "ms": timeout_ms}
        )
        return cells[index]

    def cell_text(self, index: int, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> str:
        """Run one cell and return its stream output (print) as text."""
        outs = self.run_cell(index, timeout_ms)["outputs"]
        return "".join(
            o["text"] if isinstance(o["text"], str) else "".join(o["text"])
            for o in outs
            if o.get("output_type") == "stream"
        )

    def kernel_exec(self, code: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> dict[str, Any]:
        """Execute code in the notebook's kernel without touching the cells (widget messages still flow)."""
        res = self.page.evaluate(JS_KERNEL_EXEC, {"path": self.path, "code": code, "ms": timeout_ms})
        if res["error"]:
            raise AssertionError(f"kernel error: {res['error']}\n{res['stderr']}")
        return res

    def kernel_eval(self, expr: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Any:
        """Evaluate a JSON-able Python expression in the kernel and return its value."""
        out = self.kernel_exec(f"import json as _j; print(_j.dumps({expr}))", timeout_ms)["stdout"]
        return json.loads(out.strip().splitlines()[-1])

    def wait_kernel(self, expr: str, timeout_s: float = 30.0) -> Any:
        """Poll a Python expression in the kernel until it is truthy; returns its value (fails on timeout)."""
        deadline = time.monotonic() + timeout_s
        value: Any = None
        while time.monotonic() < deadline:
            value = self.kernel_eval(expr)
            if value:
                return value
            self.page.wait_for_timeout(100)
        raise AssertionError(f"{expr} stayed {value!r} for {timeout_s} s")

    def outputs(self) -> list[Any]:
        """The notebook model's outputs per cell, as they would be saved."""
        return self.page.evaluate(JS_OUTPUTS, {"path": self.path})

    def save(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Path:
        """Save the notebook through the app (as a user would) and return its path on disk."""
        self.page.evaluate(JS_SAVE, {"path": self.path, "ms": timeout_ms})
        return self.server.root / self.path

    def screenshot(self, name: str) -> Path:
        """Save a screenshot under the artifacts dir and return its path."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        target = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(target), full_page=False)
        return target

    def set_theme(self, theme: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        """Switch the app's theme ("JupyterLab Light" / "JupyterLab Dark") and wait until it applies."""
        self.page.evaluate(
            "([t, ms]) => Promise.race([window.jupyterapp.commands.execute('apputils:change-theme', "
            "{theme: t}),"
            " new Promise((_, rej) => setTimeout(() => rej(new Error('theme timed out')), ms))])",
            [theme, timeout_ms],
        )
        light = "true" if "Light" in theme else "false"
        self.page.wait_for_selector(
            f"body[data-jp-theme-light='{light}']", state="attached", timeout=timeout_ms
        )
        # Lab shows its splash screen over the page while the theme's CSS loads.
        self.page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=timeout_ms)


# --------------------------------------------------------------------------- fixtures


def _bundle_is_stale() -> bool:
    built = [
        ROOT / "hermes_notebook" / "static" / "chat.js",
        ROOT / "hermes_notebook" / "labextension" / "package.json",
    ]
    if not all(path.exists() for path in built):
        return True
    src = ROOT / "js" / "src"
    newest = max((p.stat().st_mtime for p in src.rglob("*") if p.is_file()), default=0.0)
    return newest > min(path.stat().st_mtime for path in built)


@pytest.fixture(scope="session")
def widget_bundle() -> Path:
    """The built front end (widget bundles and the JupyterLab extension); rebuilt with ``npm run build`` when
    js/src is newer than either."""
    static = ROOT / "hermes_notebook" / "static" / "chat.js"
    if _bundle_is_stale():
        npm = shutil.which("npm")
        if npm is None or not (ROOT / "js" / "node_modules").exists():
            if static.exists():
                return static
            pytest.fail("hermes_notebook/static/chat.js is missing: run `cd js && npm ci && npm run build`")
        subprocess.run([npm, "run", "build"], cwd=ROOT / "js", check=True, capture_output=True, timeout=300)
    return static


@pytest.fixture(scope="session")
def kernel_env(hermes: Any) -> dict[str, str]:
    """Environment for the Jupyter servers and so for every kernel: Hermes settings + this work tree."""
    settings = hermes.settings()
    env = {
        "HERMES_API_URL": settings.api_url,
        "HERMES_DASHBOARD_URL": settings.dashboard_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")])),
    }
    if settings.api_key:
        env["HERMES_API_KEY"] = settings.api_key.reveal()
    if settings.dashboard_token:
        env["HERMES_DASHBOARD_TOKEN"] = settings.dashboard_token.reveal()
    extra = KERNELS_DIR / "share" / "jupyter"
    if extra.exists():
        env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(extra), os.environ.get("JUPYTER_PATH", "")]))
    return env


@pytest.fixture(scope="session")
def kernel_names() -> dict[str, str]:
    """ipykernel version -> kernelspec name of the extra kernels (skips, or fails in CI, when not built)."""
    missing = [
        n
        for n in EXTRA_KERNELS.values()
        if not (KERNELS_DIR / "share" / "jupyter" / "kernels" / n / "kernel.json").exists()
    ]
    if missing:
        msg = f"kernelspecs {missing} missing: run scripts/setup-kernels"
        if REQUIRED:
            pytest.fail(msg)
        pytest.skip(msg)
    return dict(EXTRA_KERNELS)


@pytest.fixture(scope="session")
def jupyter_lab(
    tmp_path_factory: pytest.TempPathFactory, kernel_env: dict[str, str], widget_bundle: Path
) -> Iterator[JupyterServer]:
    """One JupyterLab 4 server for the whole session."""
    server = start_server(tmp_path_factory.mktemp("lab"), "lab", kernel_env)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def jupyter_notebook7(
    tmp_path_factory: pytest.TempPathFactory, kernel_env: dict[str, str], widget_bundle: Path
) -> Iterator[JupyterServer]:
    """One Notebook 7 server for the whole session (started on first use)."""
    server = start_server(tmp_path_factory.mktemp("nb7"), "notebook7", kernel_env)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Debian Chromium for the session."""
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


OpenNotebook = Callable[..., NotebookPage]


@pytest.fixture
def open_notebook(request: pytest.FixtureRequest, chromium: Any) -> Iterator[OpenNotebook]:
    """Factory: ``open_notebook(cells, app="lab"|"notebook7", kernel="python3", name=None)`` -> NotebookPage.

    Returns once the notebook is open and its kernel connected and idle. Each call gets its own browser
    context; at teardown every page is screenshotted into the artifacts dir and the kernels are shut down.
    """
    contexts: list[Any] = []
    servers: set[int] = set()
    used: list[JupyterServer] = []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)

    def _open(
        cells: list[str],
        app: str = "lab",
        kernel: str = "python3",
        name: str | None = None,
        path: str | None = None,
    ) -> NotebookPage:
        server: JupyterServer = request.getfixturevalue(
            "jupyter_lab" if app == "lab" else "jupyter_notebook7"
        )
        if id(server) not in servers:
            servers.add(id(server))
            used.append(server)
        if path is None:
            path = write_notebook(server.root, name or f"{safe}-{uuid.uuid4().hex[:6]}.ipynb", cells, kernel)
        ctx = chromium.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(ctx)
        # Nothing but loopback: fail fast instead of waiting on unreachable hosts.
        ctx.route(re.compile(r"^https?://(?!(127\.0\.0\.1|localhost)[:/])"), lambda r: r.abort())
        page = ctx.new_page()
        page.set_default_timeout(DEFAULT_TIMEOUT_MS)
        nb = NotebookPage(page, server, path)
        page.on("pageerror", lambda e: nb.page_errors.append(f"{e}\n{getattr(e, 'stack', '') or ''}"))
        page.on("console", lambda m: nb.console.append(f"{m.type}: {m.text}"))
        t0 = time.perf_counter()
        page.goto(server.notebook_url(path))
        page.wait_for_function(JS_KERNEL_READY, arg=path, timeout=60_000, polling=100)
        nb.timings["page_ready_s"] = time.perf_counter() - t0
        return nb

    yield _open
    for i, ctx in enumerate(contexts):
        for j, page in enumerate(ctx.pages):
            with contextlib.suppress(Exception):
                page.screenshot(path=str(ARTIFACTS / f"{safe}-{i}{j}.png"))
        ctx.close()
    for server in used:  # kernels must not pile up across tests
        with contextlib.suppress(Exception):
            server.shutdown_all_sessions()
