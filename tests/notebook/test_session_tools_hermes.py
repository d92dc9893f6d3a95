"""Models, usage and Hermes' own commands from notebook code, against the real servers and the scripted model.

Which model name reached the model is read from the scripted model's request log, so a ``model=`` that the
server ignored fails here.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.script import MODEL_ID, prompt_of
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.offered import call_offered
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook import Hermes, Reply
from hermes_notebook.notebook.session_results import CommandResult, SessionUsage
from hermes_notebook.settings import Settings

pytestmark = pytest.mark.both_servers


@pytest.fixture(autouse=True)
def plain_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a plain script would, even if another test module started an IPython shell in this process."""
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)


def _model_for(model: ScriptedModel, prompt: str) -> str | None:
    """The model name of the last request whose prompt was ``prompt``."""
    names = [body.get("model") for body in model.requests if prompt_of(body) == prompt]
    assert names, f"no request carried {prompt!r}"
    return names[-1]


def _unique(text: str) -> str:
    return f"{text} {uuid.uuid4().hex[:8]}"


def test_models_lists_the_configured_model(hermes_nb: Hermes) -> None:
    """``models()`` is a table holding the configured model, marked current."""
    table = hermes_nb.models()
    assert {"model": MODEL_ID, "provider": "custom", "current": True} in table
    assert MODEL_ID in str(table) and MODEL_ID in table._repr_html_()


def test_set_model_reaches_the_model(hermes_nb: Hermes, scripted_model: ScriptedModel) -> None:
    """After ``set_model`` the session's next turn is sent to the model under the new name, and the session
    keeps it."""
    first = _unique("before the switch")
    hermes_nb.ask(first, new=True)
    answer = hermes_nb.set_model("switched-model")
    assert answer["value"] == "switched-model"
    second, third = _unique("after the switch"), _unique("still switched")
    hermes_nb.ask(second)
    hermes_nb.ask(third)
    assert _model_for(scripted_model, first) == MODEL_ID
    assert _model_for(scripted_model, second) == _model_for(scripted_model, third) == "switched-model"
    assert {"model": "switched-model", "provider": "custom", "current": True} in hermes_nb.models()


def test_ask_model_switches_the_dashboard_session(hermes_nb: Hermes, scripted_model: ScriptedModel) -> None:
    """``ask(model=...)`` on the Dashboard switches the session before the prompt; Hermes' warning is a
    note."""
    prompt = _unique("asked with a model")
    reply = hermes_nb.ask(prompt, new=True, model="asked-model")
    assert _model_for(scripted_model, prompt) == "asked-model"
    assert any("asked-model" in note for note in reply.notes)  # the provider does not list it


def test_ask_model_on_an_existing_session(hermes_nb: Hermes, scripted_model: ScriptedModel) -> None:
    """A ``model=`` on a session that already ran a turn is honoured too (it used to be refused or
    ignored)."""
    hermes_nb.ask(_unique("first turn"), new=True)
    prompt = _unique("second turn, other model")
    hermes_nb.ask(prompt, model="later-model")
    assert _model_for(scripted_model, prompt) == "later-model"


def test_api_run_model_is_honoured_or_refused(
    hermes_nb: Hermes,
    scripted_model: ScriptedModel,
    hermes_server: str,
) -> None:
    """Via the API Server a newer Hermes sends the run to the named model; 0.19.0 would ignore it, so it is
    refused."""
    prompt = _unique("api run with a model")
    if hermes_server == "newer":
        hermes_nb.ask(prompt, via="api", model="api-model")
        assert _model_for(scripted_model, prompt) == "api-model"
        return
    with pytest.raises(HermesUsageError, match="would ignore model='api-model'"):
        hermes_nb.ask(prompt, via="api", model="api-model")
    assert not [b for b in scripted_model.requests if prompt_of(b) == prompt]


def test_a_model_name_that_is_a_flag_is_refused(hermes_nb: Hermes, scripted_model: ScriptedModel) -> None:
    """A "model" Hermes would read as a flag (``--global``) or several words is refused before anything is
    sent."""
    before = len(scripted_model.requests)
    for name in ("--global", "a b", "x\nprovider"):
        with pytest.raises(HermesUsageError, match="one model name"):
            hermes_nb.set_model(name)
        with pytest.raises(HermesUsageError, match="one model name"):
            hermes_nb.ask(_unique("never sent"), new=True, model=name)
    with pytest.raises(HermesUsageError, match="one model name"):
        hermes_nb.set_model("")
    assert len(scripted_model.requests) == before


def test_usage_reports_tokens_cache_and_the_context_breakdown(hermes_nb: Hermes, hermes_server: str) -> None:
    """``usage()`` after a turn: tokens, calls, the context window and its categories; a newer Hermes the
    cache."""
    with pytest.raises(HermesUsageError, match="no session yet"):
        hermes_nb.usage()
    hermes_nb.ask(_unique("CACHED usage check"), new=True)
    usage = hermes_nb.usage()
    assert isinstance(usage, SessionUsage) and usage.session_id == hermes_nb.session_id
    # Hermes counts the 60 cached prompt tokens apart: 40 fresh input tokens of a 100-token prompt
    assert (
        usage.input_tokens == 40
        and usage.raw["prompt"] == 100
        and usage.output_tokens == 5
        and usage.calls == 1
    )
    assert usage.context_max and usage.model == MODEL_ID
    labels = {share.label for share in usage.breakdown}
    assert {"System prompt", "Conversation"} <= labels or {"system prompt", "conversation"} <= labels
    text = str(usage)
    assert "40 in · 5 out tokens" in text and "Conversation" in text.title()
    if hermes_server == "newer":
        assert usage.raw.get("cache_hit_pct") == 60 and "cache 60% hit" in text
    assert "<script" not in usage._repr_html_() and "hn-inert" in usage._repr_html_()


def test_usage_on_the_api_server_says_what_it_lacks(settings: Settings) -> None:
    """Without a Dashboard, usage is the last reply's, with a note saying there are no session totals."""
    facade = hn.connect(settings.with_(dashboard_token=None))
    try:
        facade.ask(_unique("api usage"), via="api")
        usage = facade.usage()
        assert usage.input_tokens == 10 and usage.output_tokens == 5
        assert usage.notes and "per run only" in usage.notes[0] and "note: the API Server" in str(usage)
        with pytest.raises(HermesUsageError, match="need the Dashboard"):
            facade.command("/help")
        with pytest.raises(HermesUsageError, match="needs the Dashboard"):
            facade.set_model("other")
    finally:
        facade.close()


def test_command_runs_a_hermes_slash_command(hermes_nb: Hermes) -> None:
    """``command("/model")`` prints Hermes' own answer, shown inert; a line without a slash is refused."""
    hermes_nb.ask(_unique("before a command"), new=True)
    result = hermes_nb.command("/model")
    assert isinstance(result, CommandResult)
    assert result.output.startswith("Current model:") and MODEL_ID in result.output
    assert "<pre>Current model:" in result._repr_html_()
    usage = hermes_nb.command("/usage")
    assert isinstance(usage, CommandResult) and "Total tokens" in usage.output
    with pytest.raises(HermesUsageError, match="starts with '/'"):
        hermes_nb.command("help")


def test_command_without_a_session_starts_one(hermes_nb: Hermes) -> None:
    """A command before any ask opens a session for it, which later asks continue."""
    assert hermes_nb.session_id is None
    result = hermes_nb.command("/model")
    assert isinstance(result, CommandResult) and hermes_nb.session_id is not None
    session = hermes_nb.session_id
    reply = hermes_nb.ask(_unique("after the command"))
    assert isinstance(reply, Reply) and reply.session_id == session


@pytest.mark.asyncio(loop_scope="module")
async def test_a_missing_method_is_not_offered(hermes: LocalHermes) -> None:
    """A method the server lacks (-32601) is a one-line "not offered by this Hermes (<method>)" usage
    error."""
    async with DashboardConnection(hermes.settings()) as conn:
        with pytest.raises(
            HermesUsageError, match=r"^widgets is not offered by this Hermes \(widget\.catalog\)$"
        ):
            await call_offered(conn, "widget.catalog", {}, what="widgets")


# --- %hermes
# ---------------------------------------------------------------------------------------------------


def _run(ip: InteractiveShell, code: str) -> Any:
    result = ip.run_cell(code)
    result.raise_error()
    return result.result


def test_magic_models_usage_and_slash_commands(
    hermes_shell: InteractiveShell,
    scripted_model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``%hermes models``, ``%hermes usage``, ``%hermes /model`` and ``%hermes --model NAME`` all work."""
    ip = hermes_shell
    ip.run_cell("%hermes usage")
    assert "no session yet" in capsys.readouterr().err
    table = _run(ip, "%hermes models")
    assert any(row["model"] == MODEL_ID for row in table)
    prompt = _unique("magic with a model")
    _run(ip, f"%hermes --new --model magic-model {prompt}")
    assert _model_for(scripted_model, prompt) == "magic-model"
    usage = _run(ip, "%hermes usage")
    assert isinstance(usage, SessionUsage) and usage.model == "magic-model"
    result = _run(ip, "%hermes /model")
    assert isinstance(result, CommandResult) and "magic-model" in result.output
    ip.run_cell("%hermes --new --model=-global x")
    assert "one model name" in capsys.readouterr().err
