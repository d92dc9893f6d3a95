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
