"""The user's own Hermes: its API Server and Dashboard on this machine's loopback, with fresh credentials.

What the per-user launcher (:mod:`.extension`, a Jupyter server extension) runs once per single-user server:
``hermes gateway run`` (the API Server) and ``hermes dashboard --isolated`` in the user's own
``HERMES_HOME`` (their model, keys, memory and sessions), each in its own process group, on free loopback
ports, with an API key and a Dashboard token made for this spawn only. Hermes reads them from its
environment (``API_SERVER_*``, ``HERMES_DASHBOARD_SESSION_TOKEN``); a ``.env`` in the home that sets them
would win over ours, so such a home is refused before anything starts. :meth:`UserHermes.client_env` is
what every kernel of the server inherits (``HERMES_API_URL`` and the rest:
:class:`~hermes_notebook.settings.Settings` reads them), so ``hermes_notebook.connect()`` in any notebook
reaches the user's Hermes and no other.

    hermes = UserHermes(hermes_bin="hermes").start()
    os.environ.update(hermes.client_env())
    ...
    hermes.stop()
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from ..settings import (
    ENV_API_KEY,
    ENV_API_URL,
    ENV_DASHBOARD_TOKEN,
    ENV_DASHBOARD_URL,
    ENV_PROFILE,
    ENV_PROFILE_LOCK,
)
from .processes import LOOPBACK, REFUSAL, HermesStartError, ServerProcess, free_port, retry_on_port_clash

__all__ = ["CLIENT_VARIABLES", "HUB_TOKENS", "UserHermes", "find_hermes", "overridden_in_dotenv"]

#: The variables a kernel reads to reach Hermes: what the launcher sets and never hands to Hermes itself.
CLIENT_VARIABLES = (
    ENV_API_URL,
    ENV_API_KEY,
    ENV_DASHBOARD_URL,
    ENV_DASHBOARD_TOKEN,
    ENV_PROFILE,
    ENV_PROFILE_LOCK,
)
#: What we tell Hermes through its environment (a line for one in the home's ``.env`` would override it).
SPAWN_VARIABLES = (
    "API_SERVER_ENABLED",
    "API_SERVER_HOST",
    "API_SERVER_PORT",
    "API_SERVER_KEY",
    "HERMES_DASHBOARD_SESSION_TOKEN",
)
#: The user's hub credentials in a single-user server's environment: Hermes (whose agent runs shell commands)
#: gets them only when asked to (``hub_token=True``).
HUB_TOKENS = ("JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN")
#: How many times a start is tried on fresh ports when a server finds its port taken.
PORT_ATTEMPTS = 3
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


def find_hermes(explicit: str | None = None) -> str:
    """``explicit``, else ``$HERMES_BIN``, else ``hermes`` on ``PATH``; a clear error when there is none."""
    wanted = explicit or os.environ.get("HERMES_BIN")
    if wanted:
        path = shutil.which(wanted)
        if path is None:
            raise HermesStartError(f"the hermes executable {wanted!r} does not exist or is not executable")
        return path
    found = shutil.which("hermes")
    if found is None:
        raise HermesStartError(
            "no hermes executable on PATH: install hermes-agent in the user's image, or set "
            "c.HermesLauncher.hermes_bin (or HERMES_BIN) to its path"
        )
    return found


def overridden_in_dotenv(home: Path) -> list[str]:
    """The launcher's variables that ``<home>/.env`` assigns (Hermes lets its ``.env`` override the process
    environment, so those would silently replace the ports and credentials made for this spawn)."""
    try:
        text = (home / ".env").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    names = {m.group(1) for line in text.splitlines() if (m := _ASSIGNMENT.match(line))}
    return sorted(names & set(SPAWN_VARIABLES))


class UserHermes:
    """The user's Hermes servers on loopback (see the module docstring).

    Args:
        hermes_bin: the ``hermes`` executable (:func:`find_hermes`).
        home: the user's ``HERMES_HOME`` (default ``$HERMES_HOME``, else ``~/.hermes``); created if missing.
        api: also run the API Server (runs, cron jobs); the Dashboard always runs (chat, kernel tools).
        env: the environment Hermes starts from (default this process's), less :data:`CLIENT_VARIABLES`.
        hub_token: keep the user's hub token (:data:`HUB_TOKENS`) in Hermes' environment, for kernels whose
            tool server Hermes reaches through the hub (``Bearer ${JUPYTERHUB_API_TOKEN}``); off by default.
        startup_timeout: seconds each server has to answer.
    """

    def __init__(
        self,
        *,
        hermes_bin: str | None = None,
        home: str | os.PathLike[str] | None = None,
        api: bool = True,
        env: Mapping[str, str] | None = None,
        hub_token: bool = False,
        startup_timeout: float = 60.0,
    ) -> None:
        base = dict(os.environ if env is None else env)
        self.hermes_bin = find_hermes(hermes_bin)
        self.home = Path(home or base.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
        self._api = api
        withheld = set(CLIENT_VARIABLES) | (set() if hub_token else set(HUB_TOKENS))
        self._base_env = {k: v for k, v in base.items() if k not in withheld}
        self._startup_timeout = startup_timeout
        # Made for this spawn only: a server restarted by the hub gets new ones (kernels started before it
        # keep the old values and must be restarted; the settings say so when they fail to connect).
        self.api_key = secrets.token_hex(16)  # 32 characters: the API Server refuses keys under 16
        self.dashboard_token = secrets.token_urlsafe(32)
        self.api_port = self.dashboard_port = 0
        self._processes: list[ServerProcess] = []
        #: Seconds the last :meth:`start` took until both servers answered.
        self.startup_seconds: float | None = None

    @property
    def api_url(self) -> str:
        return f"http://{LOOPBACK}:{self.api_port}"

    @property
    def dashboard_url(self) -> str:
        return f"http://{LOOPBACK}:{self.dashboard_port}"

    @property
    def pids(self) -> list[int]:
        """The PIDs (each its own process group) of the running servers."""
        return [p.pid for p in self._processes if p.pid is not None]

    def __repr__(self) -> str:
        state = "running" if self._processes else "stopped"
        return f"<UserHermes {state} api={self.api_url} dashboard={self.dashboard_url} home={self.home}>"

    def client_env(self) -> dict[str, str]:
        """The ``HERMES_*`` settings a kernel needs to reach these servers (the secrets included: they go to
        the server's own environment, which only the user's kernels inherit)."""
        env = {ENV_DASHBOARD_URL: self.dashboard_url, ENV_DASHBOARD_TOKEN: self.dashboard_token}
        if self._api:
            env.update({ENV_API_URL: self.api_url, ENV_API_KEY: self.api_key})
        return env

    def start(self) -> UserHermes:
        """Start both servers and wait until each answers (fresh ports again when one was taken meanwhile)."""
        overridden = overridden_in_dotenv(self.home)
        if overridden:
            raise HermesStartError(
                f"{self.home / '.env'} sets {', '.join(overridden)}, which would override the ports and "
                "credentials the launcher makes for each spawn: remove those lines"
            )
        return retry_on_port_clash(self._start_once, PORT_ATTEMPTS)  # each attempt picks its own ports

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM each server's process group, SIGKILL after ``grace`` s (by PID: only what we started)."""
        processes, self._processes = self._processes, []
        for process in processes:
            process.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in processes:
            process.wait(deadline)

    def _start_once(self) -> UserHermes:
        started = time.monotonic()
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        self.api_port = free_port() if self._api else 0
        self.dashboard_port = free_port()
        try:
            if self._api:
                gateway = self._spawn("gateway", ["gateway", "run"])
            dashboard = self._spawn(
                "dashboard",
                ["dashboard", "--host", LOOPBACK, "--port", str(self.dashboard_port), "--no-open"]
                # --isolated: this user's own server, never attached to another Dashboard of the machine
                + ["--skip-build", "--isolated"],
            )
            with httpx.Client(trust_env=False, timeout=5.0) as http:
                if self._api:
                    auth = {"Authorization": f"Bearer {self.api_key}"}
                    models = f"{self.api_url}/v1/models"
                    gateway.wait_until(
                        lambda: http.get(models, headers=auth).status_code == 200,
                        self._startup_timeout,
                        REFUSAL,
                    )
                status = f"{self.dashboard_url}/api/status"
                dashboard.wait_until(
                    lambda: http.get(status).status_code == 200, self._startup_timeout, REFUSAL
                )
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _spawn(self, name: str, args: list[str]) -> ServerProcess:
        env = {
            **self._base_env,
            "HERMES_HOME": str(self.home),
            "HERMES_DASHBOARD_SESSION_TOKEN": self.dashboard_token,
            "NO_PROXY": "127.0.0.1,localhost,::1",
            "no_proxy": "127.0.0.1,localhost,::1",
        }
        if self._api and name == "gateway":
            env.update(
                API_SERVER_ENABLED="true",
                API_SERVER_HOST=LOOPBACK,
                API_SERVER_PORT=str(self.api_port),
                API_SERVER_KEY=self.api_key,
            )
        log = self.home / "logs" / f"notebook-{name}.log"
        argv = [self.hermes_bin, *args]
        process = ServerProcess(
            f"Hermes' {name}", argv, cwd=self.home, env=env, log=log, die_with_parent=True
        )
        self._processes.append(process)
        process.start()
        return process
