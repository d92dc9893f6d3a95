"""Credentials never reach an environment proxy; an explicit proxy serves only a remote Hermes."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

import hermes_notebook as hn
from hermes_notebook.client._http import HttpTransport
from hermes_notebook.errors import HermesError
from hermes_notebook.settings import InsecureTransportWarning, Secret, Settings, is_loopback

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "WS_PROXY", "WSS_PROXY")


class RecordingProxy:
    """A loopback TCP listener that records every connection and what was sent on it, then hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self.sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    recorder = RecordingProxy()
    yield recorder
    recorder.close()


@pytest.fixture
def env_proxy(proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch) -> RecordingProxy:
    """Every proxy variable httpx, urllib and websockets read points at the recorder; nothing is exempt."""
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, proxy.url)
        monkeypatch.setenv(name.lower(), proxy.url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return proxy


def test_environment_proxy_receives_nothing_from_a_loopback_session(
    env_proxy: RecordingProxy,
    settings: Settings,
) -> None:
    """Dashboard turn, API Server turn, session list, status and jobs: not one byte goes to HTTP_PROXY."""
    facade = hn.connect(settings)
    try:
        assert facade.ask("hello through no proxy", new=True).ok
        assert facade.ask("hello via the API", via="api", new=True).ok
        assert len(facade.sessions()) >= 1
        status = facade.status()
        assert status["api"]["ok"] and status["dashboard"]["ok"]
        facade.jobs.list()
    finally:
        facade.close()
    assert env_proxy.received == []


def test_an_explicit_proxy_is_used_for_a_remote_server_only(proxy: RecordingProxy) -> None:
    """``proxy=`` carries requests to a remote Hermes; the same setting is skipped for 127.0.0.1."""
    remote = Settings.resolve(
        api_url="https://hermes.invalid:8642", api_key="k" * 20, proxy=proxy.url, env={}
    )
    assert remote.proxy_for(remote.api_url) == proxy.url
    assert remote.proxy_for("http://127.0.0.1:8642") is None and remote.proxy_for("http://[::1]:1") is None

    async def call() -> None:
        http = HttpTransport(remote.api_url, remote.api_key, proxy=remote.proxy_for(remote.api_url))
        try:
            await http.request_json("GET", "/health", auth=False)
        finally:
            await http.aclose()

    with pytest.raises(HermesError):
        asyncio.run(call())
    assert len(proxy.received) == 1 and proxy.received[0].startswith(b"CONNECT hermes.invalid:8642 ")
    assert b"kkkk" not in proxy.received[0]  # https: the key stays inside the tunnel


def test_proxy_setting_comes_from_hermes_proxy_not_http_proxy() -> None:
    """``HERMES_PROXY`` sets it; ``HTTP_PROXY`` never does. Userinfo in it is not shown."""
    env = {"HTTP_PROXY": "http://envproxy:1", "HERMES_PROXY": "http://user:pw@corp-proxy:3128"}
    s = Settings.resolve(env=env)
    assert s.proxy == "http://user:pw@corp-proxy:3128"
    assert "pw" not in repr(s) and "***@corp-proxy:3128" in repr(s)
    assert Settings.resolve(env={"HTTP_PROXY": "http://envproxy:1"}).proxy is None


def test_plain_http_to_a_remote_host_with_credentials_warns() -> None:
    """A key over http to another machine warns; https, loopback and no key do not."""
    with pytest.warns(InsecureTransportWarning, match="plain http to hermes.example"):
        Settings.warn_if_exposed("http://hermes.example:8642", Secret("k"), "API key")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Settings.warn_if_exposed("https://hermes.example:8642", Secret("k"), "API key")
        Settings.warn_if_exposed("http://127.0.0.1:8642", Secret("k"), "API key")
        Settings.warn_if_exposed("http://localhost:9119", Secret("k"), "API key")
        Settings.warn_if_exposed("http://hermes.example:8642", None, "API key")
    assert is_loopback("http://127.0.0.2:1") and not is_loopback("http://10.0.0.1:1")
