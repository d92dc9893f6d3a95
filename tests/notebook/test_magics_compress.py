"""``%hermes compress`` against the real Dashboards: one line saying what happened, then a marker on the next
reply."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

pytestmark = pytest.mark.both_servers


@pytest.fixture
def ip(hermes_shell: InteractiveShell) -> InteractiveShell:
    return hermes_shell


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
