"""Settings resolution order and Secret redaction (hermes_notebook/settings.py)."""

from __future__ import annotations

import logging
import pickle
import traceback
from collections.abc import Callable

import pytest

from hermes_notebook.errors import HermesUsageError
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
    s = Settings.resolve(
        api_url="http://arg:3", api_key=KEY, dashboard_url="http://arg:4", dashboard_token=TOKEN, env=ENV
    )
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


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (KEY + "\n", "ends with a newline (read from a file? use .strip())"),
        (KEY + "\r\n", "ends with a newline"),
        (" " + KEY, "starts with a space"),
        (KEY[:8] + "\t" + KEY[8:], "contains a control character"),
        (KEY[:8] + "\x7f" + KEY[8:], "contains a control character"),
        (KEY + "\u2013", "contains a non-ASCII character"),
    ],
)
def test_a_key_or_token_a_header_cannot_carry_is_refused_naming_the_setting(value: str, why: str) -> None:
    """From arguments, the environment or with_(), such a key or token fails at once with one line that names
    the setting and the cause and never shows the value (httpx would refuse it later, quoting it)."""
    builds: list[tuple[Callable[[], Settings], str, str]] = [
        (lambda: Settings.resolve(api_key=value, env={}), "the API key", "api_key"),
        (
            lambda: Settings.resolve(env={"HERMES_DASHBOARD_TOKEN": value}),
            "the Dashboard token",
            "dashboard_token",
        ),
        (lambda: Settings().with_(dashboard_token=value), "the Dashboard token", "dashboard_token"),
    ]
    for build, what, param in builds:
        with pytest.raises(HermesUsageError) as info:
            build()
        message = str(info.value)
        assert message.startswith(what) and why in message and "\n" not in message
        assert isinstance(info.value, ValueError) and info.value.param == param
        assert KEY[8:] not in "".join(traceback.format_exception(info.value))
    assert Settings.resolve(api_key="inner space is fine", env={}).api_key == Secret("inner space is fine")


def test_hermes_profile_is_the_default_profile_and_the_lock_refuses_every_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HERMES_PROFILE gives the profile when none is passed; with HERMES_PROFILE_LOCK every connection in
    another profile (an argument, a copy with another profile, none at all) is refused naming the pinned one;
    without the lock another profile is fine."""
    from hermes_notebook.settings import pinned_profile

    env = {"HERMES_DASHBOARD_TOKEN": "t", "HERMES_PROFILE": "bob"}
    monkeypatch.delenv("HERMES_PROFILE_LOCK", raising=False)
    assert Settings.resolve(env=env).profile == "bob" and Settings.resolve(env={}).profile is None
    assert Settings.resolve(profile="alice", env=env).profile == "alice" and pinned_profile() is None
    monkeypatch.setenv("HERMES_PROFILE", "bob")
    monkeypatch.setenv("HERMES_PROFILE_LOCK", "1")
    assert (
        pinned_profile() == "bob" and Settings.resolve(env=env).with_(api_url="http://h:1").profile == "bob"
    )
    pinned = "pinned to the Hermes profile 'bob'"
    with pytest.raises(HermesUsageError, match=f"{pinned}.*profile 'alice' is refused"):
        Settings.resolve(profile="alice", env=env)
    with pytest.raises(HermesUsageError, match=f"{pinned}.*profile 'alice' is refused"):
        Settings.resolve(env=env).with_(profile="alice")
    with pytest.raises(HermesUsageError, match=rf"{pinned}.*the server's default profile \(no profile=\)"):
        Settings()
    monkeypatch.setenv("HERMES_PROFILE_LOCK", "no")
    assert Settings(profile="alice").profile == "alice"
