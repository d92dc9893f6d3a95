"""The kernel's tool server for a Hermes on another host: where it listens, the URL it advertises, TLS, and
its token in a header of its own (``kernel/exposure.py``, ``kernel/server.py``).

Only loopback addresses: ``127.0.0.2`` stands for "another host" where a server must really listen (it is a
different address than the default ``127.0.0.1``), and the refusals are checked on settings that never bind.
"""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_notebook.errors import HermesUsageError
from hermes_notebook.kernel.exposure import TOKEN_HEADER, Exposure
from hermes_notebook.kernel.images import ToolAnswer
from hermes_notebook.launch.processes import free_port
from tests.helpers import mcp_initialize

OTHER_HOST = "127.0.0.2"


async def _nothing(tool: str, arguments: dict[str, Any]) -> ToolAnswer:
    return ToolAnswer("unused")


@pytest.fixture
def served() -> Iterator[list[Any]]:
    """Tool servers started by a test, all stopped after it."""
    from hermes_notebook.kernel.server import tools_available

    if not tools_available():
        pytest.skip("the tools extra (mcp) is not installed")
    servers: list[Any] = []
    yield servers
    for server in servers:
        server.stop()
    assert all(not server.running for server in servers)


def _start(served: list[Any], exposure: Exposure) -> Any:
    from hermes_notebook.kernel.server import ToolServer

    server = ToolServer(_nothing, exposure=exposure)
    served.append(server)
    return server.start()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for ``127.0.0.2`` (openssl, a second)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=kernel",
         "-addext", f"subjectAltName=IP:{OTHER_HOST}", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


def test_plain_http_off_loopback_is_refused_unless_the_user_opts_in(tmp_path: Path) -> None:
    """Listening on every interface, or advertising a URL of another host, over plain http is refused before
    anything listens, naming the ways out; TLS or HERMES_TOOLS_INSECURE_HTTP=1 lets it start; a template
    with an unknown field and a key without a certificate are errors naming the setting; the default is
    loopback only."""
    assert Exposure().local and Exposure.from_env({}).advertise(4321) == "http://127.0.0.1:4321/mcp"
    for settings in (
        {"HERMES_TOOLS_BIND": "0.0.0.0"},
        {"HERMES_TOOLS_URL": "http://hub.example.org/user/{user}/proxy/{port}/mcp"},
        {"HERMES_TOOLS_BIND": "10.1.2.3", "HERMES_TOOLS_INSECURE_HTTP": "0"},
    ):
        with pytest.raises(HermesUsageError, match="plain http off this machine.*HERMES_TOOLS_CERTFILE"):
            Exposure.from_env(settings)
    opted = Exposure.from_env(
        {
            "HERMES_TOOLS_BIND": "0.0.0.0",
            "HERMES_TOOLS_HOST": "kernel-7.example.org",
            "HERMES_TOOLS_URL": "http://{host}:{port}/user/{user}/mcp",
            "HERMES_TOOLS_INSECURE_HTTP": "1",
            "JUPYTERHUB_USER": "alice",
        }
    )
    assert opted.advertise(9000) == "http://kernel-7.example.org:9000/user/alice/mcp" and not opted.local
    with pytest.raises(
        HermesUsageError, match=r"names \{token\}; it may use \{host\}, \{port\} and \{user\}"
    ):
        Exposure.from_env({"HERMES_TOOLS_URL": "http://127.0.0.1:{port}/{token}"})
    with pytest.raises(HermesUsageError, match="HERMES_TOOLS_KEYFILE needs HERMES_TOOLS_CERTFILE"):
        Exposure(keyfile=str(tmp_path))
    with pytest.raises(HermesUsageError, match="HERMES_TOOLS_PORT must be a port number"):
        Exposure.from_env({"HERMES_TOOLS_PORT": "eighty"})
    with pytest.raises(HermesUsageError, match="HERMES_TOOLS_BIND must be an IP address"):
        Exposure.from_env({"HERMES_TOOLS_BIND": "kernel.local"})


def test_a_server_on_another_address_advertises_it_and_takes_the_token_in_either_header(
    served: list[Any],
) -> None:
    """Bound to 127.0.0.2 (standing for another host) on a fixed port, the server listens there and not on
    127.0.0.1, advertises its template's URL, answers with the token as ``Authorization: Bearer`` or in
    X-Hermes-Notebook-Token (where a proxy owns Authorization), and refuses every other combination."""
    port = free_port(OTHER_HOST)
    exposure = Exposure(bind=OTHER_HOST, port=port, url_template="http://{host}:{port}/mcp", user="alice")
    server = _start(served, exposure)
    assert server.port == port and server.url == f"http://{OTHER_HOST}:{port}/mcp"
    token = server.token.reveal()
    assert mcp_initialize(server.url, authorization=f"Bearer {token}") == 200
    assert mcp_initialize(server.url, **{TOKEN_HEADER: token, "authorization": "token the-hubs-own"}) == 200
    assert mcp_initialize(server.url) == 401
    assert mcp_initialize(server.url, authorization="Bearer wrong", **{TOKEN_HEADER: "wrong"}) == 401
    assert mcp_initialize(server.url, **{TOKEN_HEADER: f"Bearer {token}"}) == 401  # the bare token only
    with pytest.raises(httpx.ConnectError):
        mcp_initialize(f"http://127.0.0.1:{server.port}/mcp", authorization=f"Bearer {token}")


def test_tls_from_a_certificate(served: list[Any], certificate: tuple[Path, Path]) -> None:
    """With a certificate the server speaks TLS only and advertises https://; a client that checks the
    certificate gets through, plain http does not."""
    cert, key = certificate
    server = _start(served, Exposure(bind=OTHER_HOST, certfile=str(cert), keyfile=str(key)))
    assert server.url == f"https://{OTHER_HOST}:{server.port}/mcp"
    token = server.token.reveal()
    checked = ssl.create_default_context(cafile=str(cert))
    assert mcp_initialize(server.url, verify=checked, authorization=f"Bearer {token}") == 200
    with pytest.raises(httpx.HTTPError):
        mcp_initialize(server.url.replace("https://", "http://"), authorization=f"Bearer {token}")
