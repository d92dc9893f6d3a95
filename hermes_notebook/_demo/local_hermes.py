"""Start the real Hermes Agent servers locally, offline, against the scripted model.

:class:`LocalHermes` prepares a throwaway ``HERMES_HOME`` (an offline config: the scripted model as the only
provider), then runs ``hermes gateway run`` (the API Server) and ``hermes dashboard`` on free loopback ports,
each in its own process group, and waits until both answer. Only the model is fake; everything else is the
real Hermes. It is shared by the tests and the demo, so it installs nothing and touches nothing outside its
home.

    with LocalHermes() as hermes:
        settings = hermes.settings()      # hermes_notebook.settings.Settings for both servers
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from ..settings import Secret, Settings
from .chart import PICTURES_VARIABLE, pictures_folder
from .processes import (
    HERMES_SERVERS,
    LOOPBACK,
    PROVIDER_KEY_NAMES,
    REFUSAL,
    REPO_ROOT,
    SCRUB_NAMES,
    SCRUB_PREFIXES,
    HermesStartError,
    ServerProcess,
    deep_merge,
    find_hermes_bin,
    free_port,
    installed_version,
    retry_on_port_clash,
    to_yaml,
)
from .scripted_model import MODEL_ID, ScriptedModel

#: How many times :meth:`LocalHermes.start` tries fresh ports when a server finds its port taken.
PORT_ATTEMPTS = 3

__all__ = ["HERMES_SERVERS", "PROVIDER_KEY_NAMES", "HermesStartError", "LocalHermes", "find_hermes_bin"]


class LocalHermes:
    """The real Hermes API Server and Dashboard on loopback, in a temp ``HERMES_HOME``, for tests and demos.

    Args:
        hermes_bin: the ``hermes`` executable (see :func:`find_hermes_bin`).
        model_url: an OpenAI-compatible base URL (ending in ``/v1``); ``None`` starts a
        :class:`ScriptedModel`.
        model_in_process: run that scripted model on a thread here (then :attr:`model` gives access to its
            request log and :meth:`ScriptedModel.push`) rather than as a subprocess.
        config_overrides: deep-merged into ``config.yaml``,
            e.g. ``{"gateway": {"api_server": {"max_concurrent_runs": 1}}}``.
        api, dashboard: which servers to run.
        approval_timeout: seconds until an unanswered dangerous-command approval is denied.
        checkpoints: Hermes snapshots a folder before a turn's file edits, so undo can put files back
            (``checkpoints.enabled``; a 0.19.0 Dashboard reads only ``HERMES_TUI_CHECKPOINTS``).
        home: the ``HERMES_HOME`` to use (created if needed, kept); default a temp dir removed by
        :meth:`stop`.
        extra_env: more environment variables for the Hermes processes.
        startup_timeout: seconds to wait for each server to become healthy.
        estimate_usage: the scripted model reports the prompt's real size (the demo: its context gauge moves)
            instead of a fixed 10 tokens (the tests).
    """

    def __init__(
        self,
        *,
        hermes_bin: str | os.PathLike[str] | None = None,
        model_url: str | None = None,
        model_in_process: bool = True,
        config_overrides: Mapping[str, Any] | None = None,
        api: bool = True,
        dashboard: bool = True,
        approval_timeout: float = 300,
        checkpoints: bool = True,
        home: str | os.PathLike[str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        startup_timeout: float = 60.0,
        estimate_usage: bool = False,
    ) -> None:
        if not (api or dashboard):
            raise ValueError("start at least one of api/dashboard")
        self.hermes_bin = find_hermes_bin(hermes_bin)
        self._model_url = model_url
        self._own_model = model_url is None
        self._model_in_process = model_in_process
        self._config_overrides = dict(config_overrides or {})
        self._want_api, self._want_dashboard = api, dashboard
        self._approval_timeout = approval_timeout
        self._checkpoints = checkpoints
        self._own_home = home is None
        self._home = Path(home) if home is not None else None
        self._extra_env = dict(extra_env or {})
        self._startup_timeout = startup_timeout
        self._estimate_usage = estimate_usage
        self._api_key = secrets.token_hex(16)  # 32 characters: the API Server refuses keys under 16
        self._dashboard_token = secrets.token_urlsafe(32)
        self._api_port = free_port() if api else 0
        self._dashboard_port = free_port() if dashboard else 0
        #: The in-process scripted model (``None`` when ``model_url`` was given or it runs as a subprocess).
        self.model: ScriptedModel | None = None
        self._model_proc: ServerProcess | None = None
        self._gateway: ServerProcess | None = None
        self._dashboard: ServerProcess | None = None
        self._http = httpx.Client(trust_env=False, timeout=httpx.Timeout(5.0))
        #: Seconds the last :meth:`start` took until every server was healthy.
        self.startup_seconds: float | None = None

    # ----- properties -------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        """The installed Hermes version (from the venv's metadata), e.g. ``"0.19.0"`` or
        ``"0.22.2.post1"``."""
        return installed_version(self.hermes_bin)

    @property
    def home(self) -> Path:
        """The ``HERMES_HOME`` directory (config, state, logs; our process logs are in ``logs/``)."""
        if self._home is None:
            raise RuntimeError("LocalHermes has not been started")
        return self._home

    @property
    def workdir(self) -> Path:
        """The agent's terminal cwd (``<home>/work``): where ``RUN`` commands take effect."""
        return self.home / "work"

    @property
    def api_url(self) -> str:
        return f"http://{LOOPBACK}:{self._api_port}"

    @property
    def api_key(self) -> str:
        return self._api_key

    @property
    def dashboard_url(self) -> str:
        return f"http://{LOOPBACK}:{self._dashboard_port}"

    @property
    def dashboard_token(self) -> str:
        return self._dashboard_token

    @property
    def model_url(self) -> str:
        """The base URL Hermes uses for its model."""
        if self._model_url is None:
            raise RuntimeError("LocalHermes has not been started")
        return self._model_url

    @property
    def gateway_pid(self) -> int | None:
        """PID (and process-group id) of the running gateway, if any."""
        return self._gateway.popen.pid if self._gateway and self._gateway.popen else None

    @property
    def dashboard_pid(self) -> int | None:
        """PID (and process-group id) of the running Dashboard, if any."""
        return self._dashboard.popen.pid if self._dashboard and self._dashboard.popen else None

    @property
    def gateway_log(self) -> Path:
        return self.home / "logs" / "local-gateway.log"

    @property
    def dashboard_log(self) -> Path:
        return self.home / "logs" / "local-dashboard.log"

    def log_tails(self, lines: int = 30) -> dict[str, str]:
        """The last ``lines`` lines of each server log that exists, by file name (for failure reports)."""
        if self._home is None:
            return {}
        tails = {}
        for log in (self.gateway_log, self.dashboard_log):
            if log.exists():
                tails[log.name] = "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
        return tails

    def settings(self, **changes: Any) -> Settings:
        """Client settings for these servers (``changes`` are passed on, e.g. timeouts)."""
        return Settings(
            api_url=self.api_url,
            api_key=Secret(self._api_key),
            dashboard_url=self.dashboard_url,
            dashboard_token=Secret(self._dashboard_token),
            **changes,
        )

    def __repr__(self) -> str:
        state = "running" if (self._gateway or self._dashboard) else "stopped"
        return f"<LocalHermes {state} api={self.api_url} dashboard={self.dashboard_url} home={self._home}>"

    # ----- lifecycle --------------------------------------------------------------------------------

    def start(self) -> LocalHermes:
        """Prepare the home, start the model (if needed) and the servers, and wait until all are healthy.

        A port found free can be taken by another process before a server binds it: a server that exits with
        "address already in use" is started again on new ports (``PORT_ATTEMPTS`` times in all).
        """
        return retry_on_port_clash(self._start_once, PORT_ATTEMPTS, self._new_ports)

    def _new_ports(self) -> None:
        self._api_port = free_port() if self._want_api else 0
        self._dashboard_port = free_port() if self._want_dashboard else 0

    def _start_once(self) -> LocalHermes:
        started = time.monotonic()
        try:
            self._prepare_home()
            self._start_model()
            self.write_config()
            if self._want_api:
                self._gateway = self._spawn("gateway", ["gateway", "run"], self.gateway_log)
            if self._want_dashboard:
                self._dashboard = self._spawn_dashboard()
            if self._gateway is not None:
                self._wait_api_healthy()
            if self._dashboard is not None:
                self._wait_dashboard_healthy()
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM every process group we started, SIGKILL after ``grace`` s; stop the model; clean up."""
        procs = [p for p in (self._dashboard, self._gateway, self._model_proc) if p is not None]
        for proc in procs:
            proc.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in procs:
            proc.wait(deadline)
        self._dashboard = self._gateway = self._model_proc = None
        if self.model is not None:
            self.model.stop()
            self.model = None
        if self._own_model:
            self._model_url = None
        atexit.unregister(self.stop)
        if self._own_home and self._home is not None and self._home.exists():
            shutil.rmtree(self._home, ignore_errors=True)

    def close(self) -> None:
        """Stop everything and release the HTTP client used for health checks."""
        self.stop()
        self._http.close()

    def stop_dashboard(self, grace: float = 10.0) -> None:
        """Stop only the Dashboard (its port and token are kept for :meth:`start_dashboard`)."""
        if self._dashboard is not None:
            self._dashboard.signal(signal.SIGTERM)
            self._dashboard.wait(time.monotonic() + grace)
            self._dashboard = None

    def start_dashboard(self) -> None:
        """Start the Dashboard again on the same port with the same token, and wait until it is healthy."""
        if self._dashboard is not None and self._dashboard.running:
            return
        self._dashboard_port = self._dashboard_port or free_port()
        self._dashboard = self._spawn_dashboard()
        self._wait_dashboard_healthy()

    def restart_dashboard(self) -> None:
        """Stop and start the Dashboard (same port and token); clients see their WebSocket close."""
        self.stop_dashboard()
        self.start_dashboard()

    def stop_api(self, grace: float = 10.0) -> None:
        """Stop only the gateway (API Server); its port and key are kept for :meth:`start_api`."""
        if self._gateway is not None:
            self._gateway.signal(signal.SIGTERM)
            self._gateway.wait(time.monotonic() + grace)
            self._gateway = None

    def start_api(self) -> None:
        """Start the gateway again on the same port with the same key, and wait until it is healthy."""
        if self._gateway is not None and self._gateway.running:
            return
        self._api_port = self._api_port or free_port()
        self.write_config()
        self._gateway = self._spawn("gateway", ["gateway", "run"], self.gateway_log)
        self._wait_api_healthy()

    def __enter__(self) -> LocalHermes:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- setup ------------------------------------------------------------------------------------

    def _prepare_home(self) -> None:
        if self._home is None:
            self._home = Path(tempfile.mkdtemp(prefix="hermes-home-"))
        for sub in ("", "work", "logs"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        # A fresh update-check cache, or the Dashboard asks PyPI on first WebSocket use.
        update = {"ts": time.time(), "behind": 0, "rev": None, "ver": installed_version(self.hermes_bin)}
        (self.home / ".update_check").write_text(json.dumps(update))

    def config(self) -> dict[str, Any]:
        """The ``config.yaml`` contents (offline: the scripted model is the only provider), with the overrides
        merged in."""
        base: dict[str, Any] = {
            "model": {
                "default": MODEL_ID,
                "provider": "custom",
                "base_url": self.model_url,
                "api_key": "scripted-model-needs-no-key",
                "context_length": 200000,  # skips context-window lookups on the internet
            },
            "terminal": {"backend": "local", "cwd": str(self.workdir)},
            "approvals": {"mode": "manual", "timeout": self._approval_timeout},
            # tirith: otherwise it may try to download a scanner binary; lazy installs: otherwise importing a
            # provider's adapter (Bedrock's, for one) pip-installs its SDK into Hermes' own venv mid-run
            "security": {"tirith_enabled": False, "allow_lazy_installs": False},
            "display": {"tool_progress": "all", "show_reasoning": True},
            "agent": {"api_max_retries": 1},  # a failing model fails fast
            "checkpoints": {"enabled": self._checkpoints},
            "platforms": {
                "api_server": {
                    "enabled": self._want_api,
                    # host/port/key MUST be under `extra:`; keys beside `enabled` are ignored.
                    "extra": {
                        "host": LOOPBACK,
                        "port": self._api_port,
                        "key": self._api_key,
                        # No cors_origins: only the kernel calls the API Server; no web page may.
                    },
                }
            },
        }
        return deep_merge(base, self._config_overrides)

    def write_home(self) -> Path:
        """Prepare the home and write its offline ``config.yaml`` without starting anything (for a launcher
        that starts Hermes in it, such as the per-user one: its ``API_SERVER_*`` variables win over the
        config's); the home."""
        self._prepare_home()
        self.write_config()
        return self.home

    def write_config(self) -> None:
        """Write ``config.yaml`` (servers read it at start; call before a restart to apply changes)."""
        config = self.config()
        extra = config["platforms"]["api_server"]["extra"]
        self._api_key, self._api_port = str(extra["key"]), int(extra["port"])  # overrides win
        text = "# Written by hermes_notebook._demo.local_hermes: offline, loopback only.\n" + to_yaml(config)
        (self.home / "config.yaml").write_text(text + "\n")

    def _start_model(self) -> None:
        if self._model_url is not None:
            return
        if self._model_in_process:
            self.model = ScriptedModel(estimate_usage=self._estimate_usage)
            self.model.start()
            self._model_url = self.model.base_url
            return
        port = free_port()
        self._model_proc = ServerProcess(
            "scripted-model",
            [sys.executable, "-m", "hermes_notebook._demo.scripted_model", "--port", str(port)],
            cwd=self.home,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
            },
            log=self.home / "logs" / "scripted-model.log",
        )
        self._model_proc.start()
        self._model_url = f"http://{LOOPBACK}:{port}/v1"
        self._wait(self._model_proc, lambda: self._get(f"http://{LOOPBACK}:{port}/health").status_code == 200)

    def _env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(SCRUB_PREFIXES) and k not in SCRUB_NAMES
        }
        env.update(
            HERMES_HOME=str(self.home),
            TIRITH_ENABLED="false",
            PYTHONUNBUFFERED="1",
            NO_PROXY="127.0.0.1,localhost,::1",
            no_proxy="127.0.0.1,localhost,::1",
            HERMES_TUI_CHECKPOINTS="1" if self._checkpoints else "0",
        )
        env[PICTURES_VARIABLE] = str(pictures_folder())  # the scripted model's IMAGE copies from there
        env.update(self._extra_env)
        env.update(extra)
        return env

    def _spawn(self, name: str, args: list[str], log: Path, **env: str) -> ServerProcess:
        proc = ServerProcess(name, [self.hermes_bin, *args], cwd=self.workdir, env=self._env(**env), log=log)
        proc.start()
        return proc

    def _spawn_dashboard(self) -> ServerProcess:
        args = [
            "dashboard",
            "--host",
            LOOPBACK,
            "--port",
            str(self._dashboard_port),
            "--no-open",
            "--skip-build",
            # Newer Dashboards serve one host per machine unless isolated (a second one exits 78); 0.19.0 has
            # the flag too (profile scoping), so several test instances can run side by side on both.
            "--isolated",
        ]
        return self._spawn(
            "dashboard", args, self.dashboard_log, HERMES_DASHBOARD_SESSION_TOKEN=self._dashboard_token
        )

    # ----- readiness --------------------------------------------------------------------------------

    def _get(self, url: str, **headers: str) -> httpx.Response:
        return self._http.get(url, headers=headers)

    def _wait(
        self, proc: ServerProcess, healthy: Callable[[], bool], refuse: re.Pattern[str] | None = None
    ) -> None:
        """Poll ``healthy`` until it holds; fail at once if the process exits or logs a refusal."""
        proc.wait_until(healthy, self._startup_timeout, refuse)

    def _wait_api_healthy(self) -> None:
        assert self._gateway is not None
        auth = {"Authorization": f"Bearer {self._api_key}"}

        def healthy() -> bool:
            if self._get(f"{self.api_url}/health", **auth).status_code != 200:
                return False
            # The bearer check proves the key reached the adapter (a misplaced key would 401 here).
            models = self._get(f"{self.api_url}/v1/models", **auth)
            if models.status_code != 200:
                raise HermesStartError(
                    f"API Server answers /v1/models with {models.status_code}: {models.text}"
                )
            return True

        self._wait(self._gateway, healthy, refuse=REFUSAL)

    def _wait_dashboard_healthy(self) -> None:
        assert self._dashboard is not None
        self._wait(self._dashboard, lambda: self._get(f"{self.dashboard_url}/api/status").status_code == 200)
