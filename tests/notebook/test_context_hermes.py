"""The kernel's values as prompt context, end to end: what the REAL Hermes handed the (scripted) model."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook import connect
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.notebook import Reply
from hermes_notebook.notebook.context import PromptPreview
from tests.helpers import agent_requests


@pytest.fixture
def ip(hermes_shell: InteractiveShell) -> Iterator[InteractiveShell]:
    yield hermes_shell
    for name in ("r", "df", "nums", "cfg", "run"):
        hermes_shell.user_ns.pop(name, None)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _sent(model: ScriptedModel, marker: str) -> str:
    """The last user message the model received that contains ``marker``."""
    for body in reversed(agent_requests(model)):
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        if users and marker in _text(users[-1].get("content")):
            return _text(users[-1].get("content"))
    raise AssertionError(f"the model never received {marker!r}")


def _never_sent(model: ScriptedModel, marker: str) -> None:
    assert not any(marker in json.dumps(body) for body in list(model.requests)), (
        f"{marker!r} reached the model"
    )


def _run(ip: InteractiveShell, code: str) -> Any:
    result = ip.run_cell(code, store_history=True)
    result.raise_error()
    return result.result


def test_dataframe_goes_as_its_summary(ip: InteractiveShell, scripted_model: ScriptedModel) -> None:
    """Dataframe goes as its summary."""
    marker = f"df-{uuid.uuid4().hex[:8]}"
    ip.user_ns["df"] = pd.DataFrame(
        {"item": [f"row{i}" for i in range(500)], "price": [i / 2 for i in range(500)]}
    )
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
    assert lines == [
        "UsageError: {not_defined_anywhere} in the prompt: 'not_defined_anywhere' is not defined "
        "(write {{ and }} for literal braces)"
    ]
    _never_sent(scripted_model, marker)


def test_dry_run_shows_what_would_be_sent_and_sends_nothing(
    ip: InteractiveShell, scripted_model: ScriptedModel
) -> None:
    """Dry run shows what would be sent and sends nothing."""
    marker = f"dry-{uuid.uuid4().hex[:8]}"
    ip.user_ns["nums"] = list(range(1000))
    preview = _run(ip, f"%hermes --dry-run --new {marker} {{nums}}")
    assert isinstance(preview, PromptPreview)
    assert (
        preview.text
        == f"{marker} list of 1,000 items: " + ", ".join(map(str, range(20))) + ", … [980 more items]"
    )
    assert str(preview).startswith(f"dry run, nothing sent: {len(preview.text)} characters")
    # a prompt sent after it: once the model has it, a send would be in
    later = f"after-dry-{uuid.uuid4().hex[:8]}"
    _run(ip, f"%hermes --new {later}")
    _sent(scripted_model, later)
    _never_sent(scripted_model, marker)


def test_fix_sends_the_failing_cell_and_traceback_tail(
    ip: InteractiveShell, scripted_model: ScriptedModel
) -> None:
    """Fix sends the failing cell and traceback tail."""
    marker = f"boom_{uuid.uuid4().hex[:8]}"
    failed = ip.run_cell(
        f"def {marker}(rows):\n    return sum(rows) / len(rows)\n{marker}([])", store_history=True
    )
    assert failed.error_in_exec is not None
    reply = _run(ip, "%hermes fix --new")
    assert isinstance(reply, Reply) and reply.ok and reply.text
    sent = _sent(scripted_model, marker)
    assert f"{marker}([])" in sent  # the cell's source
    assert "ZeroDivisionError: division by zero" in sent
    assert "return sum(rows) / len(rows)" in sent  # the traceback tail points at the failing line


def test_ask_fills_from_the_callers_namespace(hermes: LocalHermes, scripted_model: ScriptedModel) -> None:
    """``ask(..., context=True)`` fills from the caller's namespace."""
    client = connect(hermes.settings())
    try:
        marker = f"ask-{uuid.uuid4().hex[:8]}"

        def inside_a_function() -> Any:
            local_rows = {"a": 1, "b": 2}  # noqa: F841 - read by the prompt's placeholder
            return client.ask(f"{marker} {{local_rows}}", via="api", preview=True, context=True)

        preview = inside_a_function()
        assert preview.text == f"{marker} dict of 2 items: 'a': 1, 'b': 2"
        _never_sent(scripted_model, marker)
        local_rows = [1, 2, 3]  # noqa: F841 - read by the prompt's placeholder
        reply = client.ask(f"{marker} {{local_rows}}", via="api", new=True, context=True)
        assert reply.ok
        assert _sent(scripted_model, marker).endswith(f"{marker} list of 3 items: 1, 2, 3")
    finally:
        client.close()


def test_a_models_braces_in_ask_reach_the_model_verbatim_and_run_nothing(
    hermes: LocalHermes, scripted_model: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's reply quoted into ``ask`` (Dashboard and API) is sent braces and all: nothing runs, nothing
    is read."""
    monkeypatch.chdir(tmp_path)
    client = connect(hermes.settings())
    try:
        model_text = (
            "Sure! {__import__('pathlib').Path('PWNED').write_text('x')} {os.environ['HERMES_API_KEY']}"
        )
        for via in ("dashboard", "api"):
            marker = f"verbatim-{via}-{uuid.uuid4().hex[:8]}"
            reply = client.ask(f"{marker} Translate: {model_text}", via=via, new=True)  # type: ignore[arg-type]
            assert reply.ok
            assert _sent(scripted_model, marker).endswith(f"{marker} Translate: {model_text}")
        assert not (tmp_path / "PWNED").exists()
    finally:
        client.close()


def test_placeholders_read_names_attributes_subscripts_in_out_and_err(ip: InteractiveShell) -> None:
    """``%hermes`` still fills names, public attributes, constant subscripts, ``In[n]``, ``Out[n]`` and
    ``{Err}``."""
    ip.user_ns["run"] = SimpleNamespace(name="run-a", sizes=[1, 2, 3], opts={"lr": 0.25})
    ip.run_cell("value = 6 * 7\nvalue", store_history=True)
    count = ip.execution_count - 1
    assert ip.run_cell("{}['missing']", store_history=True).error_in_exec is not None
    preview = _run(
        ip,
        f"%hermes --dry-run {{run.name}} {{run.sizes[-1]}} {{run.opts['lr']}} {{In[{count}]}} "
        f"{{Out[{count}]}} {{Err}}",
    )
    # the multi-line values (the cell, the error) are named in the line and shown in full above it
    assert preview.text.startswith(f"`In[{count}]`:\n```python\nvalue = 6 * 7\nvalue\n```\n\n`Err` (KeyError")
    assert preview.text.endswith(f"\n\nrun-a 3 0.25 `In[{count}]` 42 `Err`")
    assert [p for p, _, _ in preview.values] == [
        "run.name",
        "run.sizes[-1]",
        "run.opts['lr']",
        f"In[{count}]",
        f"Out[{count}]",
        "Err",
    ]


def test_a_refused_placeholder_fails_in_one_line_before_sending(
    ip: InteractiveShell, scripted_model: ScriptedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    """``{call()}`` in ``%hermes`` is one UsageError line naming hn.raw; nothing is sent, nothing runs."""
    marker = f"refused-{uuid.uuid4().hex[:8]}"
    ip.user_ns["run"] = SimpleNamespace(calls=[])
    capsys.readouterr()
    result = ip.run_cell(f"%hermes --new {marker} {{run.calls.append(1)}}")
    text = capsys.readouterr()
    lines = [line for line in (text.out + text.err).splitlines() if line.strip()]
    assert not result.success and ip.user_ns["run"].calls == []
    assert lines == [
        "UsageError: {run.calls.append(1)} in the prompt: only names, public attributes and constant "
        "subscripts are filled (calls are not); send braces as written with hn.raw(text) or %hermes --raw"
    ]
    _never_sent(scripted_model, marker)


def test_filled_values_are_scrubbed_and_shown_collapsed_in_the_transcript(
    ip: InteractiveShell, hermes: LocalHermes, scripted_model: ScriptedModel
) -> None:
    """A value holding the connection's key or an ``sk-`` key is sent as ``********``; the saved transcript
    shows the prompt as sent, collapsed."""
    marker = f"scrub-{uuid.uuid4().hex[:8]}"
    openai_key = "sk-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    ip.user_ns["cfg"] = {"api_key_here": hermes.api_key, "openai": openai_key, "model": "small"}
    reply = _run(ip, f"%hermes --new {marker} check {{cfg}}")
    assert isinstance(reply, Reply) and reply.ok
    sent = _sent(scripted_model, marker)
    assert hermes.api_key not in sent and openai_key not in sent
    assert sent.endswith(
        f"{marker} check dict of 3 items: 'api_key_here': '********', 'openai': '********', 'model': 'small'"
    )
    bundle = reply.bundle()
    assert (
        '<details class="hn-sent"><summary>prompt as sent (1 value filled)</summary><pre>'
        f"{marker} check dict of 3 items: &#x27;api_key_here&#x27;: &#x27;********&#x27;"
    ) in bundle["text/html"]
    assert bundle["text/plain"].startswith(f"You:\n[prompt as sent (1 value filled)]\n{marker} check dict")
    assert hermes.api_key not in json.dumps(bundle) and openai_key not in json.dumps(bundle)
    plain = _run(
        ip, f"%hermes --new {marker}-plain nothing filled"
    )  # no placeholder: the transcript is unchanged
    assert (
        "hn-sent" not in plain.bundle()["text/html"] and "prompt as sent" not in plain.bundle()["text/plain"]
    )


def test_fix_scrubs_keys_in_the_cell_and_the_traceback(ip: InteractiveShell, hermes: LocalHermes) -> None:
    """``%hermes fix`` of a cell holding the connection's key and an ``sk-`` key sends ``********`` for
    both."""
    openai_key = "sk-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    cell = f"own = {hermes.api_key!r}\nother = {openai_key!r}\nraise ValueError(own + ' ' + other)"
    assert ip.run_cell(cell, store_history=True).error_in_exec is not None
    preview = _run(ip, "%hermes fix --dry-run")
    assert isinstance(preview, PromptPreview)
    assert hermes.api_key not in preview.text and openai_key not in preview.text
    assert "own = '********'" in preview.text and "ValueError: ******** ********" in preview.text


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


def test_start_sends_as_written_unless_context_is_asked_for(
    hermes: LocalHermes, scripted_model: ScriptedModel
) -> None:
    """``start()`` (``%hermes -b``) sends braces as written by default and fills with ``context=True``."""
    client = connect(hermes.settings())
    try:
        rows = [1, 2]  # noqa: F841 - read by the prompt's placeholder
        marker = f"start-{uuid.uuid4().hex[:8]}"
        assert client.start(f"{marker} as written {{rows}}", via="api", new=True).wait().ok
        assert _sent(scripted_model, f"{marker} as written").endswith(f"{marker} as written {{rows}}")
        reply = client.start(f"{marker} filled {{rows}}", via="api", new=True, context=True).wait()
        assert reply.ok and reply.filled == 1
        assert _sent(scripted_model, f"{marker} filled").endswith(f"{marker} filled list of 2 items: 1, 2")
    finally:
        client.close()
