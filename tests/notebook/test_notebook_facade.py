"""The notebook facade (``hermes_notebook.connect()``) against the real Hermes servers and the scripted
model."""

from __future__ import annotations

import _thread
import inspect
import json
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook._demo.script import prompt_of
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.errors import HermesAuthError, HermesUsageError
from hermes_notebook.notebook import Hermes, Reply
from hermes_notebook.settings import Settings
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers  # real-server tests run on 0.19.0 and newer Hermes


@pytest.fixture(autouse=True)
def plain_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as a plain script would, even if another test module started an IPython shell in this process."""
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)


def test_public_names_are_lazy_exports() -> None:
    """``hermes_notebook`` exports connect, Hermes, Reply, Chat and Jobs lazily with a sorted ``__all__``."""
    assert hn.__all__ == sorted(hn.__all__, key=str.lower) or hn.__all__ == sorted(hn.__all__)
    for name in ("connect", "Hermes", "Reply", "Chat", "Jobs"):
        assert name in hn.__all__ and getattr(hn, name) is not None
    assert hn.connect is hn.notebook.connect


def test_ask_and_ask_async_signatures_match() -> None:
    """``ask`` and ``ask_async`` take exactly the same parameters, so docs and tests cover both."""
    sync = inspect.signature(Hermes.ask)
    async_ = inspect.signature(Hermes.ask_async)
    assert list(sync.parameters) == list(async_.parameters)
    assert [p.default for p in sync.parameters.values()] == [p.default for p in async_.parameters.values()]
    assert list(sync.parameters)[1:] == [
        "prompt",
        "session",
        "via",
        "approve",
        "clarify",
        "new",
        "instructions",
        "model",
        "images",
        "timeout",
        "preview",
        "context",
        "files",
        "show",
    ]
    assert sync.parameters["context"].default is False  # the prompt is sent as written unless asked to fill


def test_reply_fields(hermes_nb: Hermes) -> None:
    """A reply exposes text, reasoning, parts, status, session id, usage, the message dict and a
    transcript."""
    reply = hermes_nb.ask("THINK facade fields", new=True)
    assert reply.text == "I thought about it: the answer is 42." == str(reply)
    assert reply.reasoning.startswith("Let me think about this.")
    assert [p["kind"] for p in reply.parts] == ["reasoning", "text"]
    assert reply.status == "complete" and reply.ok and reply.tools == []
    assert reply.session_id == hermes_nb.session_id and reply.session_id
    assert reply.usage and reply.usage.get("total")
    assert reply.message["role"] == "assistant" and reply.message["parts"] == reply.parts
    bundle = reply._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "the answer is 42" in bundle["text/plain"] and "<script" not in bundle["text/html"]


def test_session_continuity_new_and_named(hermes_nb: Hermes) -> None:
    """Asks continue one session; ``new=True`` starts another; ``session=`` picks one by name or id."""
    a = hermes_nb.ask("continuity a", new=True)
    b = hermes_nb.ask("continuity b")
    c = hermes_nb.ask("continuity c", new=True, session="facade-named-" + uuid.uuid4().hex[:6])
    d = hermes_nb.ask("continuity d", session=a.session_id)
    assert a.session_id == b.session_id == d.session_id != c.session_id
    users = [m["parts"][0]["text"] for m in hermes_nb.history(a.session_id) if m["role"] == "user"]
    assert users == ["continuity a", "continuity b", "continuity d"]


def test_approve_policies(hermes_nb: Hermes, workdir: Path) -> None:
    """``approve="deny"`` keeps the directory; a callable gets the request and its ``"once"`` runs the
    command."""
    workdir.mkdir()
    denied = hermes_nb.ask(f"DANGER {workdir.name}", approve="deny")
    assert workdir.exists() and "blocked" in denied.text
    seen: list[dict[str, Any]] = []

    def policy(request: dict[str, Any]) -> str:
        seen.append(request)
        return "once"

    approved = hermes_nb.ask(f"DANGER {workdir.name}", approve=policy)
    assert not workdir.exists() and "ran" in approved.text
    assert seen[0]["kind"] == "approval" and seen[0]["command"] == f"rm -rf ./{workdir.name}"
    assert "once" in seen[0]["choices"]


def test_a_command_hermes_partly_hid_is_never_approved_by_a_policy(hermes_nb: Hermes, workdir: Path) -> None:
    """Hermes sends ``API_KEY=$(echo${IFS}x) rm -rf ./dir`` for approval as ``API_KEY=*** rm -rf ./dir`` and
    would run the original: even ``approve="always"`` denies it, the reply's notes say why, and nothing
    ran."""
    workdir.mkdir()
    reply = hermes_nb.ask(f"RUN API_KEY=$(echo${{IFS}}x) rm -rf ./{workdir.name}", approve="always")
    assert workdir.exists()
    [inter] = [t["interaction"] for t in reply.tools if t.get("interaction")]
    assert inter["masked"] is True and inter["command"] == f"API_KEY=*** rm -rf ./{workdir.name}"
    assert inter["choices"] == ["once", "deny"] and inter["response"] == "deny"
    assert any(note.startswith("Hermes hid part of this command") for note in reply.notes), reply.notes


def test_clarify_policies(hermes_nb: Hermes) -> None:
    """``clarify=`` answers a question with a fixed string or a callable's choice."""
    assert hermes_nb.ask("CLARIFY", clarify="B").text == "You chose: B"
    assert hermes_nb.ask("CLARIFY which?", clarify=lambda q: q["choices"][0]).text == "You chose: A"


def test_via_api_approval_and_refused_clarify(hermes_nb: Hermes, workdir: Path) -> None:
    """On the API path approvals go through the run approval endpoint; clarify is refused up front."""
    workdir.mkdir()
    reply = hermes_nb.ask(f"DANGER {workdir.name}", via="api", approve="approve")
    assert not workdir.exists() and reply.via == "api"
    assert reply.tools[0]["interaction"]["response"] == "once"
    with pytest.raises(HermesUsageError, match="clarify is not available with via='api'"):
        hermes_nb.ask("CLARIFY", via="api", clarify="A")


def test_bad_arguments_fail_before_sending(hermes_nb: Hermes) -> None:
    """Empty prompts, unknown paths and approval answers, and instructions on the Dashboard are usage
    errors."""
    with pytest.raises(HermesUsageError, match="empty"):
        hermes_nb.ask("  ")
    with pytest.raises(HermesUsageError, match="via"):
        hermes_nb.ask("x", via="carrier-pigeon")
    with pytest.raises(HermesUsageError, match="approve="):
        hermes_nb.ask("x", approve="maybe")
    with pytest.raises(HermesUsageError, match="instructions need via='api'"):
        hermes_nb.ask("x", via="dashboard", instructions="be brief")


def test_instructions_use_the_api_path(hermes_nb: Hermes, hermes: Any) -> None:
    """``instructions=`` without ``via`` goes to the API Server, which passes them to the model."""
    marker = "instruction-" + uuid.uuid4().hex[:8]
    reply = hermes_nb.ask("with instructions", instructions=f"Always mention {marker}.", new=True)
    assert reply.via == "api" and reply.ok
    # Any request of the run: a newer server also asks for a session title after the answer.
    system = [m for r in hermes.model.requests for m in r["messages"] if m.get("role") == "system"]
    assert any(marker in str(m.get("content")) for m in system)


def test_ask_async(hermes_nb: Hermes) -> None:
    """``ask_async`` returns the same kind of Reply when awaited on another loop."""
    import asyncio

    reply = asyncio.run(hermes_nb.ask_async("async hello", new=True))
    assert isinstance(reply, Reply) and reply.text.endswith("async hello")


def test_stop_a_started_turn(hermes_nb: Hermes) -> None:
    """``start`` returns a handle; ``stop()`` interrupts the turn on the server at once."""
    handle = hermes_nb.start("SLOW 40", new=True)
    eventually(lambda: "tick 1" in handle.text, timeout=20, what="the turn's second tick")
    t0 = time.monotonic()
    handle.stop()
    reply = handle.wait(timeout=10)
    assert time.monotonic() - t0 < 10  # SLOW 40 would run 40 s on its own: the stop ended it
    assert reply.status == "interrupted" and "the turn was interrupted" in reply.notes


def test_keyboard_interrupt_stops_the_turn(hermes_nb: Hermes) -> None:
    """Ctrl+C / Kernel > Interrupt during a blocking ask interrupts the server turn and returns at once."""
    hermes_nb.ask("warm up", new=True)
    fired: list[float] = []

    def interrupt_soon() -> None:
        time.sleep(1.0)
        fired.append(time.monotonic())
        _thread.interrupt_main()

    threading.Thread(target=interrupt_soon, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        hermes_nb.ask("SLOW 40")
    latency = time.monotonic() - fired[0]
    assert latency < 10, latency  # SLOW 40 would run 40 s on its own: the interrupt ended it
    turn = hermes_nb.last_turn
    assert turn is not None
    # The server really stopped: the session takes the next prompt at once (no queued turn behind SLOW).
    after = hermes_nb.ask("after the interrupt")
    assert after.ok and after.text.endswith("after the interrupt")


def test_unanswered_approval_is_denied_after_the_timeout(hermes_factory: Any, tmp_path: Path) -> None:
    """With no policy and nobody to click, the server's approval timeout denies the command and the reply says
    so."""
    local = hermes_factory(approval_timeout=2)
    facade = hn.connect(local.settings())
    try:
        (local.workdir / "keep-me").mkdir()
        reply = facade.ask("DANGER keep-me")
        assert (local.workdir / "keep-me").exists()
        assert reply.tools[0]["interaction"]["status"] == "expired"
        assert any("denied it after its timeout" in n for n in reply.notes)
        assert "denied it after its timeout" in reply._repr_mimebundle_()["text/plain"]
    finally:
        facade.close()


def test_sessions_history_status(hermes_nb: Hermes, hermes: Any) -> None:
    """``sessions()`` lists stored sessions, ``history()`` rebuilds turns, ``status()`` reports both
    servers."""
    reply = hermes_nb.ask("listing me", new=True)
    rows = hermes_nb.sessions()
    assert reply.session_id in [r["id"] for r in rows]
    assert "(current)" in rows._repr_html_()
    # started_at stays a number in the rows (for scripts) but reads as local time + "ago" in the table.
    current = next(r for r in rows if r["id"] == reply.session_id)
    assert isinstance(current["started_at"], (int, float))
    assert re.search(r"<td>\d{4}-\d\d-\d\d \d\d:\d\d \((just now|\d+ min ago)\)</td>", rows._repr_html_())
    assert str(current["started_at"]) not in rows._repr_html_() + str(rows)
    history = hermes_nb.history()
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[-1]["id"].startswith("assistant:hermes-row:")
    assert "listing me" in history._repr_mimebundle_()["text/plain"]
    status = hermes_nb.status()
    assert status["api"]["ok"] and status["api"]["version"] == hermes.version
    assert status["dashboard"]["ok"] and status["dashboard"]["connected"]
    assert "run_submission" in status["api"]["features"]


def test_jobs_blocking_and_async_twins(hermes_nb: Hermes) -> None:
    """``hermes.jobs`` has blocking methods and ``*_async`` twins made from one definition."""
    import asyncio

    jobs = hermes_nb.jobs
    for name in ("list", "get", "create", "update", "pause", "resume", "run", "delete"):
        assert inspect.iscoroutinefunction(getattr(type(jobs), f"{name}_async"))
        assert inspect.signature(getattr(type(jobs), name)) == inspect.signature(
            getattr(type(jobs), f"{name}_async")
        )
    job = jobs.create(name="facade-job-" + uuid.uuid4().hex[:6], schedule="every 30m", prompt="hello")
    try:
        assert job.id in [j.id for j in jobs.list()]
        paused = jobs.pause(job.id)
        assert paused.state == "paused"
        fetched = asyncio.run(jobs.get_async(job.id))
        assert fetched.id == job.id
    finally:
        jobs.delete(job.id)
    assert job.id not in [j.id for j in jobs.list()]


def test_jobs_list_is_a_table_and_bad_schedules_never_reach_the_server(hermes_nb: Hermes) -> None:
    """``jobs.list()`` renders as an HTML table, and ``jobs.create`` refuses ``@daily`` before any request."""
    from hermes_notebook.errors import HermesValidationError

    jobs = hermes_nb.jobs
    assert "<table" in jobs.list()._repr_html_()
    with pytest.raises(HermesValidationError, match="@daily") as info:
        jobs.create(name="facade-bad-" + uuid.uuid4().hex[:6], schedule="@daily", prompt="hello")
    assert info.value.status is None  # refused by our check, not an HTTP answer
    assert not [j for j in jobs.list() if j.name.startswith("facade-bad-")]


def test_chat_and_jobs_widget(hermes_nb: Hermes) -> None:
    """``chat()`` returns the Chat widget on this connection; ``jobs_widget()`` the Jobs widget."""
    chat = hermes_nb.chat()
    try:
        assert isinstance(chat, hn.Chat)
    finally:
        chat.close()
    widget = hermes_nb.jobs_widget()
    try:
        assert isinstance(widget, hn.Jobs)
    finally:
        widget.close()


def test_wrong_key_raises_auth_error_without_the_key(settings: Settings) -> None:
    """A wrong API key fails with HermesAuthError whose message does not contain the key."""
    wrong = "wrong-" + uuid.uuid4().hex
    facade = hn.connect(settings.with_(api_key=wrong))
    try:
        with pytest.raises(HermesAuthError) as info:
            facade.ask("x", via="api")
        assert wrong not in str(info.value) and wrong not in repr(facade.settings)
    finally:
        facade.close()


def test_connect_reads_the_environment(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """``connect()`` without arguments takes URLs and secrets from ``HERMES_*`` and checks them with
    check=True."""
    assert settings.api_key is not None and settings.dashboard_token is not None
    monkeypatch.setenv("HERMES_API_URL", settings.api_url)
    monkeypatch.setenv("HERMES_API_KEY", settings.api_key.reveal())
    monkeypatch.setenv("HERMES_DASHBOARD_URL", settings.dashboard_url)
    monkeypatch.setenv("HERMES_DASHBOARD_TOKEN", settings.dashboard_token.reveal())
    facade = hn.connect(check=True)
    try:
        assert facade.settings == settings.with_() and facade.default_via == "dashboard"
    finally:
        facade.close()


def test_connect_refuses_a_key_read_from_a_file_with_its_newline(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``open("key").read()`` keeps the newline: connect() says so in one line naming the setting, never the
    value, whether the key comes from an argument or the environment."""
    assert settings.api_key is not None and settings.dashboard_token is not None
    key, token = settings.api_key.reveal(), settings.dashboard_token.reveal()
    with pytest.raises(
        HermesUsageError, match=r"^the Dashboard token .* ends with a newline .*\.strip\(\)"
    ) as info:
        hn.connect(settings, dashboard_token=token + "\n")
    assert token not in str(info.value)
    monkeypatch.setenv("HERMES_API_KEY", key + "\n")
    with pytest.raises(
        HermesUsageError, match=r"^the API key \(api_key= or HERMES_API_KEY\) ends with a newline"
    ) as info:
        hn.connect()
    assert key not in str(info.value)


def _model_saw(model: ScriptedModel, prompt: str) -> str:
    """The whole agent request (history included) that carried ``prompt`` to the model."""
    bodies = [body for body in list(model.requests) if body.get("tools") and prompt_of(body) == prompt]
    assert bodies, f"{prompt!r} never reached the model"
    return json.dumps(bodies[-1])


@pytest.mark.parametrize(("via", "by"), [("dashboard", "title"), ("dashboard", "id"), ("api", "id")])
def test_a_session_name_joins_a_stored_session_only_when_resumed(
    settings: Settings, scripted_model: ScriptedModel, via: str, by: str
) -> None:
    """With someone else's session stored under NAME (its title or id), ``session=NAME`` starts this
    connection's own session and the model never sees that history; ``session=hn.resume(NAME)`` joins it,
    history and all."""
    secret = "their-plan-" + uuid.uuid4().hex[:8]
    title = "shared-" + uuid.uuid4().hex[:8]
    someone, me = hn.connect(settings), hn.connect(settings)
    try:
        theirs = someone.ask(f"remember {secret}", session=title, via=via)
        name = title if by == "title" else theirs.session_id
        assert name
        prompt = "what came before " + uuid.uuid4().hex[:6]
        mine = me.ask(prompt, session=name, via=via)
        assert mine.session_id != theirs.session_id and secret not in _model_saw(scripted_model, prompt)
        again = me.ask("and now " + uuid.uuid4().hex[:6], session=name, via=via)
        assert again.session_id == mine.session_id  # the name keeps meaning this connection's session
        joined_prompt = "joined " + uuid.uuid4().hex[:6]
        joined = me.ask(joined_prompt, session=hn.resume(name), via=via)
        assert joined.session_id == theirs.session_id and secret in _model_saw(scripted_model, joined_prompt)
    finally:
        someone.close()
        me.close()


def test_history_and_chat_take_a_session_like_ask(settings: Settings) -> None:
    """``history(NAME)`` of a stored session this connection never used is refused, pointing at ``hn.resume``;
    ``chat(NAME)`` opens a new session; both open the stored one with ``hn.resume``."""
    secret = "their-notes-" + uuid.uuid4().hex[:8]
    title = "shared-chat-" + uuid.uuid4().hex[:8]
    someone, me = hn.connect(settings), hn.connect(settings)
    try:
        theirs = someone.ask(f"remember {secret}", session=title)
        assert theirs.session_id
        with pytest.raises(HermesUsageError, match=r"hn\.resume"):
            me.history(theirs.session_id)
        with pytest.raises(HermesUsageError, match="new=True"):
            me.ask("both", session=hn.resume(title), new=True)
        assert secret in str(me.history(hn.resume(theirs.session_id)))
        fresh = me.chat(title).wait_ready(30)
        try:
            assert fresh.session_id not in (None, theirs.session_id) and fresh.snapshot() == []
        finally:
            fresh.close()
        resumed = me.chat(hn.resume(title)).wait_ready(30)
        try:
            assert resumed.session_id == theirs.session_id and secret in json.dumps(resumed.snapshot())
        finally:
            resumed.close()
    finally:
        someone.close()
        me.close()


def test_repr_names_where_it_connects_without_credentials(settings: Settings) -> None:
    """``repr(hermes)`` names both servers, the default path and the session, never a key, a token or a
    password in a URL."""
    facade = hn.connect(settings.with_(api_url=settings.api_url.replace("http://", "http://user:pw-secret@")))
    try:
        shown = repr(facade)
        assert shown.startswith("<Hermes api=http://") and "via=dashboard session=none yet>" in shown
        assert "pw-secret" not in shown and settings.api_key.reveal() not in shown
        assert settings.dashboard_token.reveal() not in shown
    finally:
        facade.close()
