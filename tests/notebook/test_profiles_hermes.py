"""Profiles against the real servers: a connection kept in one Hermes profile, and a name that is none.

The newer Hermes runs here as one gateway serving two profiles (``gateway.multiplex_profiles``: ``default``
and ``work``, a second home under ``<home>/profiles/work``) next to its Dashboard, which serves every profile
of the machine. What lands where is read from each profile's own files (``state.db``, ``cron/jobs.json``,
``config.yaml``), so a call that silently went to the launch profile fails here. hermes-agent 0.19.0 has no
``profiles.list`` and ignores unknown ``/p/<profile>/`` prefixes: there a profile is refused before anything
is sent (docs/protocol/dashboard-newer.md §12).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client.api import ApiClient
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.profiles import list_profiles
from hermes_notebook.client.jobs import JobsClient
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.settings import Settings
from tests.helpers import profiles_hermes

WORK = "work"


def _sent(model: Any, tag: str) -> list[dict[str, Any]]:
    """The model requests that carry ``tag``: what of this test's reached the model. Counted by content, not
    by the log's length, since the model is shared: Hermes titles an earlier test's session on a thread of
    its own, and that request may land at any time."""
    return [body for body in list(model.requests) if tag in json.dumps(body)]


def _stored_ids(db: Path) -> set[str]:
    """Session ids stored in one profile's ``state.db``."""
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM sessions")}


@pytest.fixture(scope="module")
def multi(
    hermes_bin: str, hermes_server: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalHermes]:
    """A newer Hermes serving ``default`` and ``work``: the second profile is a home of its own, same
    model."""
    with profiles_hermes(hermes_bin, tmp_path_factory.mktemp("hermes-profiles"), WORK) as local:
        yield local


@pytest.mark.servers("newer")
@pytest.mark.asyncio(loop_scope="module")
async def test_a_connection_kept_in_a_profile_creates_lists_and_reads_only_there(multi: LocalHermes) -> None:
    """Sessions, the session list, history and MCP servers of a ``profile="work"`` connection are work's; the
    default connection sees none of them."""
    work = DashboardConnection(multi.settings(profile=WORK))
    default = DashboardConnection(multi.settings())
    try:
        names = {p.name: p for p in await list_profiles(default)}
        assert set(names) == {"default", WORK} and names["default"].is_default and not names[WORK].is_default
        ref = await work.create_session()
        prompt = f"profile check {uuid.uuid4().hex[:8]}"
        turn = await work.submit(ref, prompt)
        message = await asyncio.wait_for(turn, 60)
        assert message.status == "complete" and prompt in message.parts[-1].text
        assert ref.stored_id in _stored_ids(multi.home / "profiles" / WORK / "state.db")
        assert ref.stored_id not in _stored_ids(multi.home / "state.db")
        assert ref.stored_id in {s["id"] for s in await work.sessions()}
        assert ref.stored_id not in {s["id"] for s in await default.sessions()}
        assert [m.role for m in await work.history(ref)] == ["user", "assistant"]
        assert await default.history(ref.stored_id) == []  # not in the default profile's store
        # The kernel tools' registration (mcp.servers.add) goes to the profile's config.yaml, not the
        # default's.
        await work.request(
            "mcp.servers.add", {"name": "hn_profile_probe", "config": {"url": "http://127.0.0.1:9/mcp"}}
        )
        try:
            assert "hn_profile_probe" in (multi.home / "profiles" / WORK / "config.yaml").read_text()
            assert "hn_profile_probe" not in (multi.home / "config.yaml").read_text()
            listed = await default.request("mcp.servers.list", {})
            assert "hn_profile_probe" not in {s["name"] for s in listed["servers"]}
        finally:
            await work.request("mcp.servers.remove", {"name": "hn_profile_probe"})
    finally:
        await work.close()
        await default.close()


@pytest.mark.servers("newer")
@pytest.mark.asyncio(loop_scope="module")
async def test_runs_and_jobs_of_a_profile_use_its_routes(multi: LocalHermes) -> None:
    """``/p/work/``: a run's session is stored in work's home, a cron job lands in work's jobs, and the
    default profile's job list does not show it."""
    prompt = f"profile run {uuid.uuid4().hex[:8]}"
    async with (
        ApiClient(multi.settings(profile=WORK)) as api,
        JobsClient(multi.settings(profile=WORK)) as jobs,
        JobsClient(multi.settings()) as default_jobs,
    ):
        ref = await api.start_run(prompt, session_id=f"hn-profile-{uuid.uuid4().hex[:8]}")
        status = await api.wait_run(ref.id, timeout=60)
        assert status.status == "completed" and prompt in (status.output or "")
        job = await jobs.create(name="profile job", schedule="every 60m", prompt="PLAN")
        try:
            stored = json.loads((multi.home / "profiles" / WORK / "cron" / "jobs.json").read_text())
            assert job.id in json.dumps(stored)
            assert job.id not in {j.id for j in await default_jobs.list(include_disabled=True)}
        finally:
            await jobs.delete(job.id)


@pytest.mark.servers("newer")
@pytest.mark.asyncio(loop_scope="module")
async def test_a_profile_that_does_not_exist_is_refused_before_anything_is_sent(multi: LocalHermes) -> None:
    """No session is created, no run started and no model request made for a name that is no profile."""
    assert multi.model is not None
    tag = f"never sent {uuid.uuid4().hex[:8]}"
    sessions_before = _stored_ids(multi.home / "state.db")
    conn = DashboardConnection(multi.settings(profile="nope"))
    try:
        with pytest.raises(HermesUsageError, match=r"no profile 'nope' \(its profiles: default, work\)"):
            await conn.submit("", tag)
    finally:
        await conn.close()
    async with ApiClient(multi.settings(profile="nope")) as api:
        with pytest.raises(HermesUsageError, match="serves no profile 'nope'"):
            await api.start_run(f"{tag} either")
    with pytest.raises(HermesUsageError, match="profile names are lowercase"):
        Settings(profile="Work")
    assert _sent(multi.model, tag) == []
    assert _stored_ids(multi.home / "state.db") == sessions_before


@pytest.mark.servers("0.19.0")
@pytest.mark.asyncio(loop_scope="module")
async def test_hermes_0_19_refuses_profiles_by_name(settings: Settings, scripted_model: Any) -> None:
    """0.19.0: no ``profiles.list``, and its API Server answers a prefix it does not know as its own profile,
    so both clients refuse a profile in one line and send nothing of the caller's."""
    tag = f"never sent {uuid.uuid4().hex[:8]}"
    conn = DashboardConnection(settings.with_(profile="default"))
    try:
        with pytest.raises(
            HermesUsageError, match=r"choosing a profile is not offered by this Hermes \(profiles.list\)"
        ):
            await conn.connect()
    finally:
        await conn.close()
    async with ApiClient(settings.with_(profile="default")) as api:
        with pytest.raises(HermesUsageError, match="profiles are not offered by this Hermes API Server"):
            await api.start_run(tag)
    assert _sent(scripted_model, tag) == []


# --- the faces: hermes.profiles() / connect(profile=), %hermes profiles / --profile, the chat's picker ---


def _chat(settings: Settings) -> tuple[Any, list[dict[str, Any]]]:
    from hermes_notebook.widgets import Chat

    chat = Chat(settings)
    sent: list[dict[str, Any]] = []
    chat.send = lambda content, buffers=None: sent.append(json.loads(json.dumps(content)))  # type: ignore[method-assign]
    chat.wait_ready(30)
    return chat, sent


@pytest.fixture
def multi_shell(multi: LocalHermes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``%hermes`` pointed at the two-profile Hermes by environment; its connection closed afterwards."""
    from IPython.core.interactiveshell import InteractiveShell

    from hermes_notebook.notebook.magics import load_ipython_extension

    for name, value in {
        "HERMES_API_URL": multi.api_url,
        "HERMES_API_KEY": multi.api_key,
        "HERMES_DASHBOARD_URL": multi.dashboard_url,
        "HERMES_DASHBOARD_TOKEN": multi.dashboard_token,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)
    shell = InteractiveShell.instance()
    load_ipython_extension(shell)
    magics = shell.magics_manager.registry["HermesMagics"]
    magics._hermes = None
    yield shell
    if magics._hermes is not None:
        magics._hermes.close()
        magics._hermes = None


@pytest.mark.servers("newer")
def test_the_facade_and_the_magic_list_and_choose_profiles(multi: LocalHermes, multi_shell: Any) -> None:
    """``hermes.profiles()`` lists both (the connection's marked); ``connect(profile="work").ask`` stores its
    session in work's home and says so on the Reply; ``%hermes profiles`` lists, ``%hermes --profile work
    PROMPT`` moves the notebook there; a name that is no profile is refused with nothing sent."""
    from IPython.core.error import UsageError

    import hermes_notebook as hn

    default = hn.connect(multi.settings())
    work = hn.connect(multi.settings(profile=WORK))
    try:
        listed = default.profiles()
        assert [row["name"] for row in listed] == ["default", WORK] and listed.current == "default"
        assert work.profiles().current == WORK
        reply = work.ask(f"facade profile {uuid.uuid4().hex[:6]}")
        assert reply.profile == WORK and default.ask("default profile").profile is None
        assert reply.session_id in _stored_ids(multi.home / "profiles" / WORK / "state.db")
        assert reply.session_id not in _stored_ids(multi.home / "state.db")
    finally:
        default.close()
        work.close()
    assert multi.model is not None
    tag = f"never sent {uuid.uuid4().hex[:8]}"
    nope = hn.connect(multi.settings(profile="nope"))
    try:
        with pytest.raises(HermesUsageError, match="no profile 'nope'"):
            nope.ask(tag)
    finally:
        nope.close()
    assert _sent(multi.model, tag) == []
    ip = multi_shell
    assert [row["name"] for row in ip.run_line_magic("hermes", "profiles")] == ["default", WORK]
    reply = ip.run_line_magic("hermes", f"--profile {WORK} magic profile {uuid.uuid4().hex[:6]}")
    assert reply.profile == WORK and reply.session_id in _stored_ids(
        multi.home / "profiles" / WORK / "state.db"
    )
    assert ip.run_line_magic("hermes", "profiles").current == WORK
    with pytest.raises(UsageError, match="no profile 'nope'"):
        ip.run_line_magic("hermes", "--profile nope")
    assert ip.run_line_magic("hermes", "profiles").current == WORK  # the refused name changed nothing


@pytest.mark.servers("newer")
def test_the_chat_lists_profiles_and_switches_to_a_new_session_in_one(multi: LocalHermes) -> None:
    """The picker's ``profiles`` question is answered with both; ``switch_profile`` opens a new session in
    work (its prompts stored there); an unknown name is refused on the notice line and the chat stays where it
    was."""
    from tests.helpers import eventually

    chat, sent = _chat(multi.settings())
    try:
        chat._dispatch(chat, {"type": "profiles", "request": "p1"}, [])
        answer = eventually(
            lambda: next((m for m in sent if m.get("request") == "p1"), None), 30, "the answer"
        )
        assert answer["type"] == "profiles" and answer["current"] == "default"
        assert [p["name"] for p in answer["profiles"]] == ["default", WORK]
        first = chat.session_id
        chat._dispatch(chat, {"type": "switch_profile", "profile": "nope"}, [])
        eventually(lambda: "no profile 'nope'" in chat.notice, 30, "the refusal")
        assert chat.session_id == first and chat.conversation.profile is None
        chat._dispatch(chat, {"type": "switch_profile", "profile": WORK}, [])
        eventually(lambda: chat.conversation.profile == WORK and chat.session_id != first, 30, "the switch")
        prompt = f"chat in work {uuid.uuid4().hex[:6]}"
        chat._dispatch(chat, {"type": "send", "text": prompt, "images": []}, [])
        eventually(
            lambda: not chat.busy and any(m["role"] == "assistant" for m in chat.snapshot()), 60, "the reply"
        )
        with sqlite3.connect(multi.home / "profiles" / WORK / "state.db") as db:
            stored = [
                row[0]
                for row in db.execute("SELECT content FROM messages WHERE session_id = ?", (chat.session_id,))
            ]
        assert any(
            prompt in (text or "") for text in stored
        )  # stored in work's home: a session of that profile
        assert chat.session_id not in _stored_ids(multi.home / "state.db")
    finally:
        chat.close()


@pytest.mark.servers("0.19.0")
def test_hermes_0_19_refuses_profiles_in_every_face(settings: Settings, hermes_shell: Any) -> None:
    """0.19.0 lists no profiles: ``hermes.profiles()``, ``%hermes profiles`` / ``--profile`` and the chat's
    question are refused in one line (the picker stays hidden)."""
    from IPython.core.error import UsageError

    import hermes_notebook as hn
    from tests.helpers import eventually

    facade = hn.connect(settings)
    try:
        with pytest.raises(HermesUsageError, match=r"choosing a profile is not offered by this Hermes"):
            facade.profiles()
    finally:
        facade.close()
    with pytest.raises(UsageError, match="choosing a profile is not offered"):
        hermes_shell.run_line_magic("hermes", "profiles")
    with pytest.raises(UsageError, match="not offered"):
        hermes_shell.run_line_magic("hermes", "--profile default")
    chat, sent = _chat(settings)
    try:
        chat._dispatch(chat, {"type": "profiles", "request": "p1"}, [])
        answer = eventually(
            lambda: next((m for m in sent if m.get("request") == "p1"), None), 30, "the refusal"
        )
        assert answer["type"] == "error" and "not offered" in answer["message"]
        chat._dispatch(
            chat, {"type": "list_sessions", "request": "p2"}, []
        )  # answered after p1's handler ended
        eventually(lambda: any(m.get("request") == "p2" for m in sent), 30, "the session list")
        assert chat.notice == ""  # the view asks on open: its picker stays hidden, and no notice says so
    finally:
        chat.close()
