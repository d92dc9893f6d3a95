"""A real JupyterHub for the team tests: the hub, its pure-Python proxy and the users' servers, on loopback.

The hub (``.venv-hub``, made by ``scripts/setup-hub``) runs with the built-in test login (DummyAuthenticator),
the simple local spawner and the pure-Python ``configurable-http-proxy`` (no Node). Every user's single-user
server runs ``jupyterhub-singleuser`` from the same venv with the ``hermes_notebook.launch`` extension enabled
the way ``jupyter server extension enable`` does it (a ``jupyter_server_config.d`` file on the config path),
so each starts that user's own real Hermes in ``<home>/<user>/.hermes``. The tests reach everything only
through the hub's public URL with per-user API tokens (``Hub.token_of``) made by an admin service.

The hub and the proxy are each started in a process group of their own and stopped by PID (the users' servers
first, through the hub's API, which stops their Hermes; the hub also stops them when it stops).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from hermes_notebook.launch.processes import LOOPBACK, free_port
from tests.helpers import REPO

HUB_VENV = Path(os.environ.get("HN_HUB_VENV", REPO / ".venv-hub"))


HUB_CONFIG = """
import json, os
settings = json.loads(os.environ["HN_HUB_SETTINGS"])
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = settings["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings["hub_port"]
c.JupyterHub.db_url = "sqlite:///" + settings["base"] + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = settings["base"] + "/cookie_secret"
c.JupyterHub.pid_file = settings["base"] + "/hub.pid"
c.ConfigurableHTTPProxy.command = [settings["venv"] + "/bin/configurable-http-proxy"]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%d" % settings["proxy_api_port"]
c.ConfigurableHTTPProxy.pid_file = settings["base"] + "/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = settings["password"]
c.Authenticator.allowed_users = set(settings["users"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = settings["base"] + "/home/{username}"
c.Spawner.cmd = [settings["venv"] + "/bin/jupyterhub-singleuser"]
c.Spawner.args = ["--allow-root", "--ServerApp.terminals_enabled=False", "--LabApp.news_url=None",
                  "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                  "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True",
                  "--HermesLauncher.pass_hub_token=True"]  # the tool server reached through the hub
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    **settings["user_env"],
    "HERMES_HOME": lambda spawner: settings["base"] + "/home/" + spawner.user.name + "/.hermes",
}
c.JupyterHub.services = [{"name": "hn-admin", "api_token": settings["admin_token"]}]
c.JupyterHub.load_roles = [{
    "name": "hn-admin",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users", "read:users"],
    "services": ["hn-admin"],
}]
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
"""


@dataclass
class Hub:
    """A running JupyterHub (see the module docstring)."""

    base: Path
    url: str
    admin_token: str
    process: subprocess.Popen[bytes]
    log: Path
    #: The test login's password (DummyAuthenticator: any allowed user name with it).
    password: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    startup_seconds: float = 0.0

    def api(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
        """A request to the hub's REST API (``/hub/api/...``) as the admin service (or ``token``)."""
        headers = {"Authorization": f"token {token or self.admin_token}"}
        return httpx.request(method, f"{self.url}/hub/api{path}", headers=headers, timeout=30, **kwargs)

    def user_request(self, user: str, method: str, path: str, *, token: str, **kwargs: Any) -> httpx.Response:
        """A request to ``/user/<user><path>`` through the hub's proxy with ``token``."""
        headers = {"Authorization": f"token {token}", **kwargs.pop("headers", {})}
        return httpx.request(method, f"{self.url}/user/{user}{path}", headers=headers, timeout=60, **kwargs)

    def token_of(self, user: str) -> str:
        """An API token of ``user`` (made once by the admin service; the user's own scopes)."""
        if user not in self.tokens:
            response = self.api("POST", f"/users/{user}/tokens", json={"note": "hermes-notebook tests"})
            response.raise_for_status()
            self.tokens[user] = response.json()["token"]
        return self.tokens[user]

    def spawn(self, *users: str, timeout: float = 150.0) -> dict[str, float]:
        """Start the users' servers side by side and wait until each is ready; seconds each took."""
        started = time.monotonic()
        for user in users:
            response = self.api("POST", f"/users/{user}/server")
            assert response.status_code in (201, 202), response.text
        took: dict[str, float] = {}
        deadline = started + timeout
        while len(took) < len(users):
            for user in users:
                if user in took:
                    continue
                info = self.api("GET", f"/users/{user}").json()
                server = (info.get("servers") or {}).get("", {})
                if server.get("ready"):
                    took[user] = time.monotonic() - started
                elif not server.get("pending") and not server:
                    raise AssertionError(f"{user}'s server stopped while starting:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"servers not ready after {timeout:.0f} s: {took}\n{self.log_tail()}")
            time.sleep(0.2)  # a readiness poll
        return took

    def stop_servers(self, *users: str, timeout: float = 60.0) -> None:
        """Stop the users' servers through the hub (each stops its Hermes) and wait until they are gone."""
        for user in users:
            with contextlib.suppress(httpx.HTTPError):
                self.api("DELETE", f"/users/{user}/server")
        deadline = time.monotonic() + timeout
        for user in users:
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.HTTPError):
                    if not (self.api("GET", f"/users/{user}").json().get("servers") or {}):
                        break
                time.sleep(0.2)  # a readiness poll

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM the hub's process group (hub and proxy), SIGKILL after ``grace`` s; by PID only."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


def start_hub(base: Path, users: list[str], user_env: Mapping[str, str]) -> Hub:
    """Start JupyterHub on free loopback ports with ``users`` allowed; ``user_env`` goes to every server."""
    if not (HUB_VENV / "bin" / "jupyterhub").exists():
        raise RuntimeError(f"{HUB_VENV} has no jupyterhub: run scripts/setup-hub")
    base.mkdir(parents=True, exist_ok=True)
    (base / "home").mkdir(exist_ok=True)
    config = base / "jupyterhub_config.py"
    config.write_text(HUB_CONFIG)
    port = free_port()
    admin_token = secrets.token_hex(32)
    settings = {
        "port": port,
        "hub_port": free_port(),
        "proxy_api_port": free_port(),
        "base": str(base),
        "venv": str(HUB_VENV),
        "users": users,
        "password": secrets.token_hex(8),
        "admin_token": admin_token,
        "user_env": dict(user_env),
    }
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "JUPYTER", "JPY_", "API_SERVER_"))
    }
    env.update(HN_HUB_SETTINGS=json.dumps(settings), CONFIGPROXY_AUTH_TOKEN=secrets.token_hex(16))
    log = base / "hub.log"
    started = time.monotonic()
    process = subprocess.Popen(
        [str(HUB_VENV / "bin" / "jupyterhub"), "-f", str(config)],
        cwd=base,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    hub = Hub(base, f"http://{LOOPBACK}:{port}", admin_token, process, log, str(settings["password"]))
    deadline = started + 90
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"jupyterhub exited ({process.returncode}):\n{hub.log_tail()}")
        with contextlib.suppress(httpx.HTTPError):
            if hub.api("GET", "/").status_code == 200:
                break
        if time.monotonic() > deadline:
            hub.stop()
            raise RuntimeError(f"jupyterhub did not answer:\n{hub.log_tail()}")
        time.sleep(0.2)  # a readiness poll
    hub.startup_seconds = time.monotonic() - started
    return hub
