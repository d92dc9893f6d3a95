"""The per-user launcher without a hub: what it refuses before starting anything, and what a Hermes that
cannot start does to the Jupyter server (the whole path, with a real hub and real Hermes, is
tests/browser/test_team_hub_browser.py)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from hermes_notebook.launch.extension import HermesLauncher
from hermes_notebook.launch.processes import HermesStartError
from hermes_notebook.launch.user_hermes import UserHermes, overridden_in_dotenv


def test_the_launcher_refuses_a_home_whose_env_would_override_its_credentials(tmp_path: Path) -> None:
    """A HERMES_HOME whose .env sets the API Server's port or key or the Dashboard's token would silently
    replace what the launcher made for the spawn: refused before anything starts, naming the file and the
    variables (never their values); the kernels' settings name the servers' loopback URLs."""
    (tmp_path / ".env").write_text("OPENROUTER_API_KEY=sk-x\nexport API_SERVER_PORT=8642\nAPI_SERVER_KEY=k\n")
    assert overridden_in_dotenv(tmp_path) == ["API_SERVER_KEY", "API_SERVER_PORT"]
    hermes = UserHermes(hermes_bin=sys.executable, home=tmp_path)
    with pytest.raises(HermesStartError, match=r"\.env sets API_SERVER_KEY, API_SERVER_PORT") as caught:
        hermes.start()
    assert "sk-x" not in str(caught.value) and hermes.pids == []
    env = hermes.client_env()
    assert set(env) == {"HERMES_API_URL", "HERMES_API_KEY", "HERMES_DASHBOARD_URL", "HERMES_DASHBOARD_TOKEN"}
    assert (
        env["HERMES_DASHBOARD_TOKEN"] != UserHermes(hermes_bin=sys.executable, home=tmp_path).dashboard_token
    )
    with pytest.raises(HermesStartError, match="does not exist or is not executable"):
        UserHermes(hermes_bin=str(tmp_path / "no-hermes"))


def test_a_hermes_that_cannot_start_stops_the_server_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    """The extension turns a Hermes that cannot start into the server's exit (SystemExit 1: the hub reports a
    failed spawn) with a critical log line saying why, and exports no settings for kernels."""
    launcher = HermesLauncher(hermes_bin="/nonexistent/hermes")
    launcher.log = logging.getLogger("test-launcher")
    with caplog.at_level(logging.CRITICAL, logger="test-launcher"), pytest.raises(SystemExit) as stopped:
        launcher.initialize_settings()
    assert stopped.value.code == 1 and launcher.hermes is None
    assert (
        "this user's Hermes did not start, so neither does the server: the hermes executable" in caplog.text
    )


def test_hermes_gets_its_ports_and_credentials_and_no_hub_token_unless_asked(tmp_path: Path) -> None:
    """What each Hermes process starts with (a stand-in ``hermes`` that writes its environment and exits a
    second later without answering, so the start fails, saying so, and leaves nothing running): its home, the
    API Server's loopback address, port and key, the Dashboard's session token; never the kernels' HERMES_*
    settings, and the user's hub token only with ``hub_token=True``."""
    fake = tmp_path / "hermes"
    fake.write_text(
        '#!/bin/sh\nenv > "$HERMES_HOME/env-$1"\nexec sleep 1\n'
    )  # both write before either exits
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "JUPYTERHUB_API_TOKEN": "hub-secret", "HERMES_DASHBOARD_TOKEN": "old"}
    for hub_token in (False, True):
        home = tmp_path / f"home-{hub_token}"
        hermes = UserHermes(hermes_bin=str(fake), home=home, env=env, hub_token=hub_token, startup_timeout=10)
        with pytest.raises(HermesStartError, match="Hermes' gateway exited during startup"):
            hermes.start()
        assert hermes.pids == []
        gateway = dict(line.split("=", 1) for line in (home / "env-gateway").read_text().splitlines())
        dashboard = dict(line.split("=", 1) for line in (home / "env-dashboard").read_text().splitlines())
        assert gateway["HERMES_HOME"] == str(home) and gateway["API_SERVER_HOST"] == "127.0.0.1"
        assert (
            gateway["API_SERVER_PORT"] == str(hermes.api_port) and gateway["API_SERVER_KEY"] == hermes.api_key
        )
        assert dashboard["HERMES_DASHBOARD_SESSION_TOKEN"] == hermes.dashboard_token
        assert "API_SERVER_KEY" not in dashboard and "HERMES_DASHBOARD_TOKEN" not in gateway
        assert ("JUPYTERHUB_API_TOKEN" in gateway) is hub_token
