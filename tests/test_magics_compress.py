"""``%hermes compress`` against the real Dashboards: one line saying what happened, then a marker on the next reply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.notebook.magics import load_ipython_extension

pytestmark = pytest.mark.both_servers


@pytest.fixture
def ip(hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """The process-wide IPython shell with fresh %hermes magics pointed at the shared test Hermes."""
    for name, value in {
        "HERMES_API_URL": hermes.api_url, "HERMES_API_KEY": hermes.api_key,
        "HERMES_DASHBOARD_URL": hermes.dashboard_url, "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
    }.items():
        monkeypatch.setenv(name, value)
    shell = InteractiveShell.instance()
    load_ipython_extension(shell)
    magics = shell.magics_manager.registry["HermesMagics"]
    yield shell
    if magics._hermes is not None:
        magics._hermes.close()


def _run(ip: InteractiveShell, code: str) -> Any:
    result = ip.run_cell(code)
    result.raise_error()
    return result.result


def test_compress_subcommand(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a session it is a one-line error; after four turns it prints the summary line and the next
    reply opens with the same text as a marker part."""
    ip.run_cell("%hermes compress")
    assert "no session yet" in capsys.readouterr().err
    _run(ip, "%hermes --new magic warm-up 0")
    for i in range(1, 4):
        _run(ip, f"%hermes magic warm-up {i}")
    capsys.readouterr()
    _run(ip, "%hermes compress")
    line = capsys.readouterr().out.strip()
    assert "8 → 6 messages" in line or "(8 messages kept)" in line  # 0.19.0 compacts, the newer one refuses
    reply = _run(ip, "%hermes after the magic compress")
    assert [(p["kind"], p["text"]) for p in reply.parts][0] == ("marker", line)
    assert reply.text == "Hello from the scripted model. You said: after the magic compress"
