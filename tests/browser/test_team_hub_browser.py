"""Hermes for a team, for real: a JupyterHub from PyPI with two users, each with their own Hermes.

One hub for the module (``tests/hub/hub.py``: the built-in test login, the simple local spawner, the
pure-Python proxy, ``.venv-hub`` from ``scripts/setup-hub``). Each user's single-user server runs the per-user
launcher (``hermes_notebook.launch``), which starts that user's own real Hermes (the newer one; only the model
is scripted) on the server's loopback and hands its settings to the kernels. The tests reach the kernels only
through the hub (REST and kernel WebSocket under ``/user/<name>/``, with that user's token), and the browser
logs in through the hub's login page. The hub, the users' servers and their Hermes are stopped by PID at the
end, and the module checks that no Hermes process outlived its server.

It lives with the browser tests so that one hub serves the API checks and the page (the browser run is its
own pytest process: tests/browser/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.processes import find_hermes_bin
from hermes_notebook._demo.scripted_model import ScriptedModel
from tests.browser.lab import JS_KERNEL_READY, TURN_TIMEOUT_MS
from tests.helpers import REPO, mcp_initialize
from tests.hub.hub import HUB_VENV, Hub, start_hub
from tests.hub.kernels import HubKernel

ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", REPO / "test-artifacts"))
USERS = ["alice", "bob"]
#: What the launcher logs once the user's Hermes answers (hermes_notebook/launch/extension.py).
STARTED = re.compile(r"Hermes for this user: Dashboard (\S+), .*PIDs \[([\d, ]+)\]")


@dataclass
class Team:
    """The running hub, the users' server start times and their Hermes PIDs (from the launcher's log)."""

    hub: Hub
    spawn_seconds: dict[str, float]
    hermes_pids: list[int]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, widget_bundle: Path) -> Iterator[Team]:
    """The hub with alice and bob's servers running, each with their own Hermes (see the module docstring)."""
    if not (HUB_VENV / "bin" / "jupyterhub").exists():
        message = "no .venv-hub: run scripts/setup-hub"
        if os.environ.get("BROWSER_TESTS_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("hub")
    hermes_bin = find_hermes_bin(server="newer")
    model = ScriptedModel()
    model.start()
    for user in USERS:  # each user's HERMES_HOME: an offline config, the scripted model as the provider
        local = LocalHermes(
            hermes_bin=hermes_bin, model_url=model.base_url, home=base / "home" / user / ".hermes"
        )
        local.write_home()
        local.close()
    enabled = (
        base / "etc" / "jupyter" / "jupyter_server_config.d"
    )  # what `jupyter server extension enable` writes
    enabled.mkdir(parents=True)
    (enabled / "hermes_notebook_launch.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"hermes_notebook.launch": True}}})
    )
    user_env = {
        "HERMES_BIN": hermes_bin,
        "JUPYTER_CONFIG_PATH": str(base / "etc" / "jupyter"),
        # The newer Hermes refuses to open ~/.hermes/state.db under a pytest ancestor (its own test guard):
        # HERMES_HOME is ~/.hermes of the spawner's HOME here, as it would be for a real user.
        "HERMES_STATE_DB_GUARD_BYPASS": "1",
    }
    hub = start_hub(base, USERS, user_env)
    pids: list[int] = []
    try:
        took = hub.spawn(*USERS)
        pids = [int(p) for m in STARTED.finditer(hub.log.read_text()) for p in m.group(2).split(",")]
        assert len(pids) == 2 * len(USERS), hub.log_tail()
        yield Team(hub, took, pids)
    finally:
        hub.stop_servers(*USERS)
        hub.stop()
        model.stop()
    survivors = [pid for pid in pids if _alive(pid)]
    for pid in survivors:  # never leave them running, but say so: the launcher should have stopped them
        os.killpg(pid, 9)
    assert survivors == [], f"Hermes processes outlived their servers: {survivors}"


def _share(kernel: HubKernel, variable: str, value: str) -> dict[str, Any]:
    """In ``kernel``: a variable of its own, a connection from the environment, the kernel shared (reads
    on)."""
    out = kernel.run(
        "import json, os, hashlib\n"
        "import hermes_notebook as hn\n"
        f"{variable} = {value!r}\n"
        "hermes = hn.connect()\n"
        "share = hermes.share_kernel(read=True)\n"
        "print(json.dumps({'dashboard': hermes.settings.dashboard_url, 'url': share.url,\n"
        "    'token': hashlib.sha256(os.environ['HERMES_DASHBOARD_TOKEN'].encode()).hexdigest(),\n"
        "    'registered': share.registered, 'share': str(share),\n"
        "    'pid': os.getpid(), 'server': os.getppid()}))\n"
    )
    return json.loads(out.strip().splitlines()[-1])


def _ask(kernel: HubKernel, prompt: str) -> str:
    out = kernel.run(f"print(hermes.ask({prompt!r}).text)", timeout=150)
    return out


def _listed(kernel: HubKernel) -> dict[str, str]:
    """The MCP servers the kernel's own Hermes lists (name -> URL)."""
    out = kernel.run(
        "from hermes_notebook.runtime import run_sync\n"
        "print(json.dumps(run_sync(hermes.conversation.mcp.listed())))"
    )
    return json.loads(out.strip().splitlines()[-1])


def _memory_mib(*pids: int) -> dict[str, int]:
    """Resident and proportional set size (shared pages split among the processes that map them) of
    ``pids``, summed, in MiB."""
    total = {"rss_mib": 0, "pss_mib": 0}
    for pid in pids:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            field, _, rest = line.partition(":")
            if field in ("Rss", "Pss"):
                total[f"{field.lower()}_mib"] += int(rest.split()[0])
    return {key: round(value / 1024) for key, value in total.items()}


def test_each_user_has_their_own_hermes_and_reaches_only_their_own_kernel(team: Team) -> None:
    """Through the hub only: each user's kernel reaches that user's own Hermes (its own Dashboard and token
    from the launcher), shares itself, and the agent reads only that user's variables; the other Hermes never
    lists this kernel's server; a user's token gets 403 on the other's server. Records the spawn times and
    each user's memory (kernel, server, Hermes) for benchmarks/README.md."""
    hub = team.hub
    clock = time.monotonic()
    timings: dict[str, float] = {}

    def lap(what: str) -> None:
        nonlocal clock
        timings[what] = round(time.monotonic() - clock, 1)
        clock = time.monotonic()

    kernels = {user: HubKernel(hub, user) for user in USERS}
    lap("kernels")
    try:
        with ThreadPoolExecutor(len(USERS)) as pool:  # the users work side by side, as they would
            shares = {
                u: pool.submit(_share, kernels[u], f"{u}_notes", f"{u.upper()}-PRIVATE-42") for u in USERS
            }
            shared = {user: future.result() for user, future in shares.items()}
            lap("share")
            asked = {user: pool.submit(_ask, kernels[user], "KERNEL list_variables") for user in USERS}
            replies = {user: future.result() for user, future in asked.items()}
            lap("turns")
        alice, bob = shared["alice"], shared["bob"]
        assert alice["dashboard"] != bob["dashboard"] and alice["token"] != bob["token"]
        assert alice["registered"] and bob["registered"]
        assert "every session of the Dashboard's default profile sees the tools" in alice["share"]
        for user, other in (("alice", "bob"), ("bob", "alice")):
            reply = replies[user]
            assert f"{user}_notes" in reply and f"{other}_notes" not in reply, reply
            listed = _listed(kernels[user])
            assert shared[user]["url"] in listed.values(), listed
            assert shared[other]["url"] not in listed.values(), listed
        for user, other in (("alice", "bob"), ("bob", "alice")):
            token = hub.token_of(user)
            assert hub.user_request(user, "GET", "/api/status", token=token).status_code == 200
            assert hub.user_request(other, "GET", "/api/status", token=token).status_code == 403
            assert hub.user_request(other, "GET", "/api/kernels", token=token).status_code == 403
        hermes = dict(
            zip(USERS, zip(team.hermes_pids[::2], team.hermes_pids[1::2], strict=True), strict=True)
        )
        memory = {
            user: {
                "kernel": _memory_mib(shared[user]["pid"]),
                "server": _memory_mib(shared[user]["server"]),
                "hermes": _memory_mib(*hermes[user]),
            }
            for user in USERS
        }
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "team-hub.json").write_text(
            json.dumps(
                {
                    "hub_start_s": hub.startup_seconds,
                    "spawn_s": team.spawn_seconds,
                    "test_s": timings,
                    "memory": memory,
                }
            )
        )
    finally:
        for kernel in kernels.values():
            kernel.close()


JS_RUN_ALL = """async ([path, ms]) => {
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  if (!nb) throw new Error('notebook ' + path + ' is not open');
  await nb.sessionContext.ready;
  await Promise.race([app.commands.execute('notebook:run-all-cells'),
      new Promise((_, rej) => setTimeout(() => rej(new Error('run all timed out')), ms))]);
  return true;
}"""


def test_the_chat_works_in_lab_under_the_users_prefix(team: Team, chromium: Any) -> None:
    """alice logs in through the hub's login page and opens JupyterLab at /user/alice/lab: the chat widget
    answers a prompt from her own Hermes, and every request the page makes (HTTP and WebSocket) after the
    login stays under /user/alice/."""
    hub = team.hub
    home = hub.base / "home" / "alice"
    name = f"team-chat-{uuid.uuid4().hex[:6]}.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell("import hermes_notebook as hn\nchat = hn.Chat()\nchat")]
    nbformat.write(notebook, home / name)
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
    page = context.new_page()
    try:
        page.goto(f"{hub.url}/hub/login")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", hub.password)
        page.click("input[type=submit], button[type=submit]")
        page.wait_for_url(re.compile(r"/user/alice/"), timeout=60_000)
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("websocket", lambda socket: requests.append(socket.url))
        page.goto(f"{hub.url}/user/alice/lab/tree/{name}")
        page.wait_for_function(JS_KERNEL_READY, arg=name, timeout=60_000, polling=100)
        page.evaluate(JS_RUN_ALL, [name, 60_000])
        page.locator(".hn-chat").wait_for(state="visible", timeout=60_000)
        page.get_by_role("textbox", name="Message to Hermes").fill("hello from alice's lab")
        page.locator(".hn-send").click()
        reply = page.locator(".hn-message[data-role='assistant'][data-status='complete']").last
        reply.wait_for(timeout=TURN_TIMEOUT_MS)
        assert "You said: hello from alice's lab" in reply.inner_text()
        page.screenshot(path=str(ARTIFACTS / "team-hub-alice-lab.png"))
        prefix = re.compile(rf"^(http|ws)://127\.0\.0\.1:{hub.url.rsplit(':', 1)[1]}/user/alice/")
        outside = sorted({url for url in requests if not prefix.match(url) and not url.startswith("data:")})
        assert requests and outside == [], outside
    finally:
        context.close()
        for session in hub.user_request("alice", "GET", "/api/sessions", token=hub.token_of("alice")).json():
            hub.user_request("alice", "DELETE", f"/api/sessions/{session['id']}", token=hub.token_of("alice"))


def test_the_tool_server_through_the_hub_answers_hermes_and_refuses_a_wrong_token(team: Team) -> None:
    """alice's kernel advertises its tool server through the hub (``HERMES_TOOLS_URL``: the hub's URL under
    /user/{user}/proxy/{port}/, jupyter-server-proxy in front; ``HERMES_TOOLS_AUTHORIZATION``: the hub's
    credential from Hermes' own environment, so the tool token travels in X-Hermes-Notebook-Token): her
    Hermes registers that URL and its turn reads her variable through the hub; through the same URL the hub
    token with a wrong tool token is refused by the tool server, the right one answers, and a request without
    the hub's credential never reaches it."""
    hub = team.hub
    kernel = HubKernel(hub, "alice")
    try:
        out = kernel.run(
            "import json, os\n"
            f"os.environ['HERMES_TOOLS_URL'] = '{hub.url}/user/{{user}}/proxy/{{port}}/mcp'\n"
            "os.environ['HERMES_TOOLS_AUTHORIZATION'] = 'Bearer ${JUPYTERHUB_API_TOKEN}'\n"
            "import hermes_notebook as hn\n"
            "through_the_hub = 'VIA-HUB-17'\n"
            "hermes = hn.connect()\n"
            "share = hermes.share_kernel(read=True)\n"
            "print(json.dumps({'url': share.url, 'name': share.name, 'registered': share.registered}))\n"
        )
        shared = json.loads(out.strip().splitlines()[-1])
        url, name = shared["url"], shared["name"]
        assert shared["registered"] and url.startswith(f"{hub.url}/user/alice/proxy/"), shared
        assert _listed(kernel)[name] == url
        reply = _ask(kernel, f"KERNEL@{name} list_variables")
        assert "through_the_hub" in reply, reply
        dotenv = (hub.base / "home" / "alice" / ".hermes" / ".env").read_text()
        tool_token = re.search(rf"^MCP_{name.upper()}_API_KEY=(\S+)$", dotenv, re.MULTILINE)
        assert tool_token is not None
        hub_auth = {"authorization": f"token {hub.token_of('alice')}"}
        assert mcp_initialize(url, **hub_auth, **{"x-hermes-notebook-token": "wrong"}) == 401
        assert mcp_initialize(url, **hub_auth, **{"x-hermes-notebook-token": tool_token.group(1)}) == 200
        assert mcp_initialize(url, **{"x-hermes-notebook-token": tool_token.group(1)}) in (302, 403)
    finally:
        kernel.close()
