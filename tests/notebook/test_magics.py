"""``%hermes`` in an in-process IPython shell against the real Hermes servers (scripted offline model)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.notebook import Reply, TurnHandle
from hermes_notebook.notebook.magic_line import split_options
from hermes_notebook.notebook.magics import HermesMagics, load_ipython_extension
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers  # real-server tests run on 0.19.0 and newer Hermes


def _env(monkeypatch: pytest.MonkeyPatch, hermes: LocalHermes, **override: str) -> None:
    values = {
        "HERMES_API_URL": hermes.api_url,
        "HERMES_API_KEY": hermes.api_key,
        "HERMES_DASHBOARD_URL": hermes.dashboard_url,
        "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
        **override,
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The process-wide IPython shell with a fresh set of %hermes magics (a new connection per test)."""
    ip = InteractiveShell.instance()
    load_ipython_extension(ip)
    magics = _magics(ip)
    yield ip
    if magics._hermes is not None:
        magics._hermes.close()
    ip.user_ns.pop("r", None)


def _magics(ip: InteractiveShell) -> HermesMagics:
    return ip.magics_manager.registry["HermesMagics"]


@pytest.fixture
def ip(shell: InteractiveShell, hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch) -> InteractiveShell:
    """The shell, with the environment pointing at the shared test Hermes."""
    _env(monkeypatch, hermes)
    return shell


def run(ip: InteractiveShell, code: str) -> Any:
    """Run a cell; return its result (raising what the cell raised)."""
    result = ip.run_cell(code)
    result.raise_error()
    return result.result


def test_out_var_stores_the_reply(ip: InteractiveShell) -> None:
    """``-o VAR`` puts the Reply in the user namespace and leaves no cell value behind."""
    value = run(ip, "%hermes -o answer hello out-var")
    reply = ip.user_ns["answer"]
    assert value is None
    assert isinstance(reply, Reply)
    assert reply.text == "Hello from the scripted model. You said: hello out-var"
    assert reply.status == "complete"


def test_cell_value_is_the_reply(ip: InteractiveShell) -> None:
    """A bare ``%hermes`` line's value is the Reply; ``r = %hermes`` feeds the next cell; prose quotes are
    fine."""
    value = run(ip, "%hermes what's the cell value? it's this")
    assert isinstance(value, Reply) and "what's the cell value? it's this" in value.text
    run(ip, "r = %hermes second one")
    assert run(ip, "r.text") == "Hello from the scripted model. You said: second one"


def test_cell_magic_takes_the_body_as_prompt(ip: InteractiveShell) -> None:
    """``%%hermes`` sends the cell body (multi-line) as the prompt."""
    value = run(ip, "%%hermes --new\nfirst line\n\nTHINK second paragraph")
    assert value.text == "I thought about it: the answer is 42."
    assert value.reasoning.startswith("Let me think about this.")


def test_background_returns_a_live_handle(ip: InteractiveShell) -> None:
    """``-b`` returns a TurnHandle at once; ``.wait()`` gives the Reply and ``await`` works too."""
    started = time.monotonic()
    handle = run(ip, "%hermes -b SLOW 6")
    returned_after = time.monotonic() - started
    assert isinstance(handle, TurnHandle)
    assert returned_after < 1.0 and not handle.done()
    reply = handle.wait(timeout=30)
    assert reply.text == "tick 0 tick 1 tick 2 tick 3 tick 4 tick 5"
    assert handle.done() and handle.text == reply.text and handle.reply is reply
    run(ip, "h2 = %hermes -b -o h3 hello background")
    awaited = run(ip, "await h3")
    assert isinstance(awaited, Reply) and awaited.text.endswith("hello background")


def test_consecutive_calls_continue_one_session(ip: InteractiveShell) -> None:
    """Two plain ``%hermes`` calls share a session; the second turn's history holds both prompts."""
    first = run(ip, "%hermes continuity one")
    second = run(ip, "%hermes continuity two")
    assert first.session_id == second.session_id
    history = _magics(ip).facade.history()
    assert [m["parts"][0]["text"] for m in history if m["role"] == "user"][-2:] == [
        "continuity one",
        "continuity two",
    ]


def test_new_starts_another_session(ip: InteractiveShell) -> None:
    """``--new`` starts a fresh session, which later calls then continue."""
    first = run(ip, "%hermes before new")
    second = run(ip, "%hermes --new after new")
    third = run(ip, "%hermes after new again")
    assert first.session_id != second.session_id
    assert third.session_id == second.session_id


def test_session_names_a_session(ip: InteractiveShell) -> None:
    """``-s NAME`` creates a session titled NAME once and finds it again by name later."""
    name = f"research-{uuid.uuid4().hex[:6]}"
    first = run(ip, f"%hermes -s {name} named one")
    run(ip, "%hermes --new somewhere else")
    again = run(ip, f"%hermes --session {name} named two")
    assert again.session_id == first.session_id
    titles = {row["id"]: row["title"] for row in _magics(ip).facade.sessions(limit=200)}
    assert titles[first.session_id] == name


def test_resume_joins_a_stored_session_and_a_plain_name_does_not(
    ip: InteractiveShell, hermes: LocalHermes
) -> None:
    """``--session NAME`` starts the notebook's own session even when a stored session has that title;
    ``--resume`` joins the stored one, and ``history --resume ID`` reads it (without ``--resume`` it is
    refused)."""
    from IPython.core.error import UsageError

    import hermes_notebook as hn

    title = f"stored-{uuid.uuid4().hex[:6]}"
    elsewhere = hn.connect(hermes.settings())
    try:
        theirs = elsewhere.ask("said elsewhere", session=title)
    finally:
        elsewhere.close()
    mine = run(ip, f"%hermes --session {title} plain name")
    joined = run(ip, f"%hermes --session {title} --resume joined by title")
    assert mine.session_id != theirs.session_id == joined.session_id
    assert "said elsewhere" in str(run(ip, f"%hermes history --resume {theirs.session_id}"))
    with pytest.raises(UsageError, match="--resume"):
        run(ip, f"%hermes history {mine.session_id}x")


def test_via_api_runs_on_the_api_server(ip: InteractiveShell, hermes: LocalHermes) -> None:
    """``--via api`` uses /v1/runs: tools show as run tools, and a follow-up run sees the earlier turn."""
    first = run(ip, "%hermes --via api --new RUN echo via-api")
    assert first.via == "api"
    assert first.tools[0]["id"] == "tool:run-1" and first.tools[0]["status"] == "completed"
    assert "via-api" in first.text
    second = run(ip, "%hermes --via api follow-up")
    assert second.session_id == first.session_id
    assert hermes.model is not None
    last = hermes.model.requests[-1]["messages"]
    assert any("RUN echo via-api" in str(m.get("content")) for m in last if m.get("role") == "user")


def test_approve_option_answers_approvals(ip: InteractiveShell, workdir: Any) -> None:
    """``--approve once`` lets a dangerous command run unattended; ``--approve deny`` blocks it."""
    workdir.mkdir()
    denied = run(ip, f"%hermes --approve deny DANGER {workdir.name}")
    assert workdir.exists() and denied.tools[0]["interaction"]["response"] == "deny"
    approved = run(ip, f"%hermes --approve once DANGER {workdir.name}")
    assert not workdir.exists() and approved.tools[0]["interaction"]["response"] == "once"


def test_config_sets_defaults(ip: InteractiveShell) -> None:
    """``%config HermesMagics.via = 'api'`` changes the default path of later calls."""
    run(ip, "%config HermesMagics.via = 'api'")
    try:
        reply = run(ip, "%hermes --new config default")
        assert reply.via == "api"
    finally:
        run(ip, "%config HermesMagics.via = ''")


def test_subcommands(ip: InteractiveShell, hermes: LocalHermes, capsys: pytest.CaptureFixture[str]) -> None:
    """``status`` prints both servers, ``sessions`` lists the current one, ``history`` shows its turns."""
    reply = run(ip, "%hermes subcommands hello")
    capsys.readouterr()
    run(ip, "%hermes status")
    out = capsys.readouterr().out
    assert (
        "API Server:" in out
        and f"ok, Hermes {hermes.version}" in out
        and "Dashboard:" in out
        and "connected" in out
    )
    sessions = run(ip, "%hermes sessions")
    assert reply.session_id in [row["id"] for row in sessions]
    history = run(ip, "%hermes history")
    assert history[-1]["parts"][-1]["text"] == reply.text
    assert run(ip, "%hermes jobs") is not None


def test_stop_subcommand_stops_a_background_turn(ip: InteractiveShell) -> None:
    """``%hermes stop`` interrupts the running ``-b`` turn within a second."""
    handle = run(ip, "%hermes -b --new SLOW 40")
    eventually(lambda: "tick 1" in handle.text, timeout=20, what="the turn's second tick")
    stopped_at = time.monotonic()
    run(ip, "%hermes stop")
    reply = handle.wait(timeout=10)
    assert time.monotonic() - stopped_at < 1.5
    assert reply.status == "interrupted" and "tick 39" not in reply.text


def test_help_lists_the_options(ip: InteractiveShell) -> None:
    """``%hermes?`` shows argparse help built by magic_arguments."""
    doc = ip.find_line_magic("hermes").__doc__
    for option in ("--session", "--new", "--via", "--out", "--background", "--instructions", "--model"):
        assert option in doc


def _error_line(ip: InteractiveShell, code: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    result = ip.run_cell(code)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert not result.success
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_unknown_flag_is_one_line(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown option is a one-line UsageError."""
    assert _error_line(ip, "%hermes --bogus hi", capsys) == "UsageError: unrecognized arguments: --bogus"


def test_empty_prompt_is_one_line(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty prompt (line or cell) is a one-line UsageError."""
    assert "the prompt is empty" in _error_line(ip, "%hermes   ", capsys)
    assert "the prompt is empty" in _error_line(ip, "%%hermes --new\n\n", capsys)


def test_api_clarify_is_refused(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    """Asking for a clarify answer on the API path says clarify is not available there."""
    line = _error_line(ip, "%hermes --via api --clarify A CLARIFY", capsys)
    assert "clarify is not available with via='api'" in line


class _ServerSaysEscapes:
    """Stands in for the facade where only what the magic prints is under test: the server's words carry
    terminal escape sequences (clear screen, a window title, hidden text) and a key."""

    settings = type("S", (), {"api_key": None, "dashboard_token": None})()
    session_id = "s1"

    def ask(self, *_args: Any, **_kwargs: Any) -> Any:
        from hermes_notebook.errors import HermesRPCError

        raise HermesRPCError("\x1b[2J\x1b]0;all good\x07boom sk-" + "k" * 24, code=5000)

    def branch(self, _session: Any, **_options: Any) -> str:
        return "20300101_000000_ab\x1b[8m hidden"

    def close(self) -> None:
        """Nothing to close."""


def test_server_text_in_error_lines_and_branch_output_obeys_no_escape(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``%hermes`` error line and the ``%hermes branch`` line show the server's escape sequences as text
    (and no key), never send them to the terminal."""
    _magics(shell)._hermes = _ServerSaysEscapes()  # type: ignore[assignment]
    line = _error_line(shell, "%hermes hello", capsys)
    assert "\x1b" not in line and "\x07" not in line and "sk-kkkk" not in line
    assert "⟦U+001B⟧[2J⟦U+001B⟧]0;all good⟦U+0007⟧boom" in line
    run(shell, "%hermes branch")
    printed = capsys.readouterr().out
    assert printed == "branched: the notebook continues in session 20300101_000000_ab⟦U+001B⟧[8m hidden\n"


def test_no_server_is_one_line(
    shell: InteractiveShell,
    hermes: LocalHermes,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With nothing listening, the error names the server and is one line."""
    _env(monkeypatch, hermes, HERMES_API_URL="http://127.0.0.1:9", HERMES_DASHBOARD_URL="http://127.0.0.1:9")
    line = _error_line(shell, "%hermes hello nobody", capsys)
    assert line.startswith("UsageError:") and "127.0.0.1:9" in line
    assert hermes.dashboard_token not in line


def test_wrong_key_is_one_line_without_the_key(
    shell: InteractiveShell,
    hermes: LocalHermes,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A wrong API key or Dashboard token is one line that never contains the secret."""
    wrong_key = "wrong-key-" + uuid.uuid4().hex
    _env(monkeypatch, hermes, HERMES_API_KEY=wrong_key)
    line = _error_line(shell, "%hermes --via api hello wrong key", capsys)
    assert "credentials" in line and wrong_key not in line and hermes.api_key not in line
    _magics(shell)._hermes = None
    wrong_token = "wrong-token-" + uuid.uuid4().hex
    _env(monkeypatch, hermes, HERMES_DASHBOARD_TOKEN=wrong_token)
    line = _error_line(shell, "%hermes hello wrong token", capsys)
    assert line.startswith("UsageError:") and wrong_token not in line and hermes.dashboard_token not in line


def test_split_options_keeps_prose_verbatim() -> None:
    """Options are shell-split; the prompt after them is taken as typed (quotes, dashes and all)."""
    assert split_options('-s "my session" --new it\'s -- fine') == (
        ["-s", "my session", "--new"],
        "it's -- fine",
    )
    assert split_options("--via api -- -starts with a dash") == (["--via", "api"], "-starts with a dash")
    assert split_options("plain prompt") == ([], "plain prompt")


def test_prompt_ending_in_question_mark_is_a_prompt(ip: InteractiveShell) -> None:
    """``r = %hermes ... ?`` asks Hermes (IPython would otherwise treat the trailing ``?`` as a help
    request)."""
    run(ip, "r = %hermes is this a question?")
    assert ip.user_ns["r"].text.endswith("is this a question?")
    value = run(ip, "%hermes and this one?")
    assert value.text.endswith("and this one?")


def test_terminal_asks_approvals_with_input(
    ip: InteractiveShell, workdir: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In terminal IPython the turn streams as text and an approval is asked with ``input()`` on the main
    thread."""
    import threading

    asked: list[tuple[str, bool]] = []

    def fake_input(prompt: str = "") -> str:
        asked.append((prompt, threading.current_thread() is threading.main_thread()))
        return "once"

    monkeypatch.setattr("hermes_notebook.shell.host.stdin_allowed", lambda: True)
    monkeypatch.setattr("builtins.input", fake_input)
    workdir.mkdir()
    capsys.readouterr()
    reply = run(ip, f"r = %hermes DANGER {workdir.name}")
    out = capsys.readouterr().out
    assert reply is None and not workdir.exists()
    assert asked and asked[0][1] and "once" in asked[0][0]
    assert f"Hermes wants to run: rm -rf ./{workdir.name}" in out
    assert "[tool] terminal:" in out and "Dangerous command ran" in out


def test_turn_view_hands_a_secret_over_once_and_takes_it_out_of_the_message() -> None:
    """The live view's ``secret`` action gives the value to ``on_respond`` and leaves none in the comm
    message."""
    from hermes_notebook.widgets.turn import TurnView

    answers: list[tuple[str, str]] = []
    view = TurnView(on_respond=lambda rid, value: answers.append((rid, value)))
    try:
        stray = {
            "type": "secret",
            "message_id": "assistant:t1",
            "part_id": "tool:c1",
            "request_id": "s1",
            "kind": "sudo",
            "value": "pw-turn-view",
        }
        view._dispatch(view, stray, [])  # nothing is waiting for it yet: refused, and nothing handed over
        assert answers == [] and "not one this chat is waiting on" in view.notice and "value" not in stray
        view.push(
            [
                {
                    "op": "message",
                    "message": {
                        "id": "assistant:t1",
                        "role": "assistant",
                        "status": "streaming",
                        "usage": None,
                        "error": None,
                        "parts": [
                            {
                                "id": "tool:c1",
                                "kind": "tool",
                                "name": "terminal",
                                "status": "running",
                                "interaction": {"kind": "sudo", "request_id": "s1", "status": "pending"},
                            }
                        ],
                    },
                }
            ]
        )
        view.actions_seen.clear()
        content = {
            "type": "secret",
            "message_id": "assistant:t1",
            "part_id": "tool:c1",
            "request_id": "s1",
            "kind": "sudo",
            "value": "pw-turn-view",
        }
        view._dispatch(view, content, [])
        assert answers == [("s1", "pw-turn-view")] and view.actions_seen == {"secret": 1}
        assert "value" not in content  # the kernel keeps the comm message as its shell parent for a while
        assert "pw-turn-view" not in repr(view.get_state())
    finally:
        view.close()
