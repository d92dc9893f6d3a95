"""Settings resolution order and Secret redaction (hermes_notebook/settings.py)."""

from __future__ import annotations

import logging
import pickle

import pytest

from hermes_notebook.settings import DEFAULT_API_URL, DEFAULT_DASHBOARD_URL, Secret, Settings

KEY = "api-key-0123456789abcdef"
TOKEN = "dash-token-0123456789abcdef"
ENV = {
    "HERMES_API_URL": "http://env-api:1/",
    "HERMES_API_KEY": "env-key-0123456789abcdef",
    "HERMES_DASHBOARD_URL": "https://env-dash:2",
    "HERMES_DASHBOARD_TOKEN": "env-token-0123456789abcdef",
}


def test_arguments_win_over_environment() -> None:
    """Explicit arguments take precedence over every HERMES_* environment variable."""
    s = Settings.resolve(api_url="http://arg:3", api_key=KEY, dashboard_url="http://arg:4", dashboard_token=TOKEN,
                         env=ENV)
    assert (s.api_url, s.dashboard_url) == ("http://arg:3", "http://arg:4")
    assert s.api_key is not None and s.api_key.reveal() == KEY
    assert s.dashboard_token is not None and s.dashboard_token.reveal() == TOKEN


def test_environment_wins_over_defaults() -> None:
    """Without arguments the HERMES_* variables are used, with trailing slashes removed."""
    s = Settings.resolve(env=ENV)
    assert (s.api_url, s.dashboard_url) == ("http://env-api:1", "https://env-dash:2")
    assert s.api_key == Secret(ENV["HERMES_API_KEY"])
    assert s.dashboard_ws_url == "wss://env-dash:2/api/ws"


def test_defaults_are_loopback_without_secrets() -> None:
    """With neither arguments nor environment the loopback defaults apply and no secret is set."""
    s = Settings.resolve(env={"HERMES_API_KEY": ""})
    assert (s.api_url, s.dashboard_url) == (DEFAULT_API_URL, DEFAULT_DASHBOARD_URL)
    assert s.api_key is None and s.dashboard_token is None
    assert s.dashboard_ws_url == "ws://127.0.0.1:9119/api/ws"


def test_resolve_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """resolve() without env= reads the process environment."""
    monkeypatch.setenv("HERMES_API_URL", "http://from-os:5")
    monkeypatch.setenv("HERMES_API_KEY", KEY)
    s = Settings.resolve()
    assert s.api_url == "http://from-os:5" and s.api_key == Secret(KEY)


def test_secrets_are_redacted_everywhere(caplog: pytest.LogCaptureFixture) -> None:
    """repr, str, f-strings, logging and pickling of settings never reveal the key or token."""
    s = Settings.resolve(api_key=KEY, dashboard_token=TOKEN, env={})
    caplog.set_level(logging.DEBUG)
    logging.getLogger("test").debug("settings %s %r", s, s.api_key)
    texts = [repr(s), str(s), f"{s}", f"{s.api_key}", repr(s.dashboard_token), caplog.text]
    for text in texts:
        assert KEY not in text and TOKEN not in text
    assert "Secret('********')" in repr(s)
    with pytest.raises(TypeError):
        pickle.dumps(s.api_key)
    assert repr(Secret("")) == "Secret('')" and not Secret("")


def test_with_changes_fields_and_wraps_plain_keys() -> None:
    """with_() returns a copy whose plain-string key becomes a Secret; bad URLs are refused."""
    s = Settings().with_(api_key=KEY, request_timeout=1.5)
    assert isinstance(s.api_key, Secret) and s.request_timeout == 1.5
    with pytest.raises(ValueError, match="http"):
        Settings(api_url="127.0.0.1:8642")
    with pytest.raises(TypeError):
        Secret(123)  # type: ignore[arg-type]
