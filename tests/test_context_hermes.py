"""The kernel's values as prompt context, end to end: what the REAL Hermes handed the (scripted) model."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook import connect
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.notebook import Reply
from hermes_notebook.notebook.context import PromptPreview


@pytest.fixture
def ip(hermes_shell: InteractiveShell) -> Iterator[InteractiveShell]:
    yield hermes_shell
    for name in ("r", "df", "nums"):
        hermes_shell.user_ns.pop(name, None)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _sent(model: ScriptedModel, marker: str) -> str:
    """The last user message the model received that contains ``marker``."""
    for body in reversed(model.requests):
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        if users and marker in _text(users[-1].get("content")):
            return _text(users[-1].get("content"))
    raise AssertionError(f"the model never received {marker!r}")


def _never_sent(model: ScriptedModel, marker: str) -> None:
    assert not any(marker in json.dumps(body) for body in list(model.requests)), f"{marker!r} reached the model"


def _run(ip: InteractiveShell, code: str) -> Any:
    result = ip.run_cell(code, store_history=True)
    result.raise_error()
    return result.result


def test_dataframe_goes_as_its_summary(ip: InteractiveShell, scripted_model: ScriptedModel) -> None:
    """Dataframe goes as its summary."""
    marker = f"df-{uuid.uuid4().hex[:8]}"
    ip.user_ns["df"] = pd.DataFrame({"item": [f"row{i}" for i in range(500)], "price": [i / 2 for i in range(500)]})
    reply = _run(ip, f"%hermes --new {marker} {{df}}")
    assert isinstance(reply, Reply) and reply.ok
    sent = _sent(scripted_model, marker)
    assert "DataFrame: 500 rows × 2 columns" in sent
    assert "price: float64" in sent and "row4" in sent
    assert "row5 " not in sent and "row499" not in sent  # a head, not the whole frame


def test_escaped_braces_are_sent_as_braces(ip: InteractiveShell, scripted_model: ScriptedModel) -> None:
    """Escaped braces are sent as braces."""
    marker = f"esc-{uuid.uuid4().hex[:8]}"
    _run(ip, f"%hermes --new {marker} {{{{x}}}} and {{{{}}}}")
    assert _sent(scripted_model, marker).endswith(f"{marker} {{x}} and {{}}")


def test_undefined_name_fails_before_sending(
    ip: InteractiveShell, scripted_model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    """Undefined name fails before sending."""
    marker = f"undefined-{uuid.uuid4().hex[:8]}"
    capsys.readouterr()
    result = ip.run_cell(f"%hermes --new {marker} what is {{not_defined_anywhere}}?")
    text = capsys.readouterr()
    lines = [line for line in (text.out + text.err).splitlines() if line.strip()]
    assert not result.success
    assert lines == ["UsageError: {not_defined_anywhere} in the prompt: 'not_defined_anywhere' is not defined "
                     "(write {{ and }} for literal braces)"]
    _never_sent(scripted_model, marker)


def test_dry_run_shows_what_would_be_sent_and_sends_nothing(
    ip: InteractiveShell, scripted_model: ScriptedModel
) -> None:
    """Dry run shows what would be sent and sends nothing."""
    marker = f"dry-{uuid.uuid4().hex[:8]}"
    ip.user_ns["nums"] = list(range(1000))
    preview = _run(ip, f"%hermes --dry-run --new {marker} {{nums}}")
    assert isinstance(preview, PromptPreview)
    assert preview.text == f"{marker} list of 1,000 items: " + ", ".join(map(str, range(20))) + ", … [980 more items]"
    assert str(preview).startswith(f"dry run, nothing sent: {len(preview.text)} characters")
    later = f"after-dry-{uuid.uuid4().hex[:8]}"  # a prompt sent after it: once the model has it, a send would be in
    _run(ip, f"%hermes --new {later}")
    _sent(scripted_model, later)
    _never_sent(scripted_model, marker)


def test_fix_sends_the_failing_cell_and_traceback_tail(ip: InteractiveShell, scripted_model: ScriptedModel) -> None:
    """Fix sends the failing cell and traceback tail."""
    marker = f"boom_{uuid.uuid4().hex[:8]}"
    failed = ip.run_cell(f"def {marker}(rows):\n    return sum(rows) / len(rows)\n{marker}([])", store_history=True)
    assert failed.error_in_exec is not None
    reply = _run(ip, "%hermes fix --new")
    assert isinstance(reply, Reply) and reply.ok and reply.text
    sent = _sent(scripted_model, marker)
    assert f"{marker}([])" in sent  # the cell's source
    assert "ZeroDivisionError: division by zero" in sent
    assert "return sum(rows) / len(rows)" in sent  # the traceback tail points at the failing line


def test_ask_fills_from_the_callers_namespace(hermes: LocalHermes, scripted_model: ScriptedModel) -> None:
    """Ask fills from the callers namespace."""
    client = connect(hermes.settings())
    try:
        marker = f"ask-{uuid.uuid4().hex[:8]}"

        def inside_a_function() -> Any:
            local_rows = {"a": 1, "b": 2}  # noqa: F841 - read by the prompt's placeholder
            return client.ask(f"{marker} {{local_rows}}", via="api", preview=True)

        preview = inside_a_function()
        assert preview.text == f"{marker} dict of 2 items: 'a': 1, 'b': 2"
        _never_sent(scripted_model, marker)
        local_rows = [1, 2, 3]  # noqa: F841 - read by the prompt's placeholder
        reply = client.ask(f"{marker} {{local_rows}}", via="api", new=True)
        assert reply.ok
        assert _sent(scripted_model, marker).endswith(f"{marker} list of 3 items: 1, 2, 3")
    finally:
        client.close()


def test_magic_export_writes_the_current_session(
    ip: InteractiveShell, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``%hermes export PATH`` writes the notebook's session and says where."""
    marker = f"magic-export-{uuid.uuid4().hex[:8]}"
    _run(ip, f"%hermes --new {marker}")
    capsys.readouterr()
    _run(ip, f"%hermes export {tmp_path}/session.md")
    assert capsys.readouterr().out.strip() == f"exported to {tmp_path}/session.md"
    text = (tmp_path / "session.md").read_text()
    assert text.startswith("### You\n\n" + marker) and f"You said: {marker}" in text
