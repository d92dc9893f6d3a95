"""Profiles against the real servers: a connection kept in one Hermes profile, and a name that is none.

The newer Hermes runs here as one gateway serving two profiles (``gateway.multiplex_profiles``: ``default`` and
``work``, a second home under ``<home>/profiles/work``) next to its Dashboard, which serves every profile of the
machine. What lands where is read from each profile's own files (``state.db``, ``cron/jobs.json``,
``config.yaml``), so a call that silently went to the launch profile fails here. hermes-agent 0.19.0 has no
``profiles.list`` and ignores unknown ``/p/<profile>/`` prefixes: there a profile is refused before anything is
sent (docs/protocol/dashboard-newer.md §12).
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
from hermes_notebook._demo.processes import to_yaml
from hermes_notebook.client.api import ApiClient
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.profiles import list_profiles
from hermes_notebook.client.jobs import JobsClient
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.settings import Settings

WORK = "work"


def _stored_ids(db: Path) -> set[str]:
    """Session ids stored in one profile's ``state.db``."""
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM sessions")}


@pytest.fixture(scope="module")
def multi(hermes_bin: str, hermes_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHermes]:
    """A newer Hermes serving ``default`` and ``work``: the second profile is a home of its own, same model."""
    local = LocalHermes(hermes_bin=hermes_bin, home=tmp_path_factory.mktemp("hermes-profiles"),
                        config_overrides={"gateway": {"multiplex_profiles": True}})
    try:
        local.start()
        config = local.config()
        config.pop("platforms")  # the host gateway serves the profile on its own listener
        home = local.home / "profiles" / WORK
        home.mkdir(parents=True)
        (home / "config.yaml").write_text(to_yaml(config) + "\n")
        (home / ".env").write_text(f"API_SERVER_KEY={local.api_key}\n")  # a named profile checks its own key
        yield local
    finally:
        local.close()


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
        # The kernel tools' registration (mcp.servers.add) goes to the profile's config.yaml, not the default's.
        await work.request("mcp.servers.add", {"name": "hn_profile_probe", "config": {"url": "http://127.0.0.1:9/mcp"}})
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
    """``/p/work/``: a run's session is stored in work's home, a cron job lands in work's jobs, and the default
    profile's job list does not show it."""
    prompt = f"profile run {uuid.uuid4().hex[:8]}"
    async with ApiClient(multi.settings(profile=WORK)) as api, JobsClient(multi.settings(profile=WORK)) as jobs, \
            JobsClient(multi.settings()) as default_jobs:
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
    requests_before = len(multi.model.requests)
    sessions_before = _stored_ids(multi.home / "state.db")
    conn = DashboardConnection(multi.settings(profile="nope"))
    try:
        with pytest.raises(HermesUsageError, match=r"no profile 'nope' \(its profiles: default, work\)"):
            await conn.submit("", "never sent")
    finally:
        await conn.close()
    async with ApiClient(multi.settings(profile="nope")) as api:
        with pytest.raises(HermesUsageError, match="serves no profile 'nope'"):
            await api.start_run("never sent either")
    with pytest.raises(HermesUsageError, match="profile names are lowercase"):
        Settings(profile="Work")
    assert len(multi.model.requests) == requests_before
    assert _stored_ids(multi.home / "state.db") == sessions_before


@pytest.mark.servers("0.19.0")
@pytest.mark.asyncio(loop_scope="module")
async def test_hermes_0_19_refuses_profiles_by_name(settings: Settings, scripted_model: Any) -> None:
    """0.19.0: no ``profiles.list``, and its API Server answers a prefix it does not know as its own profile, so
    both clients refuse a profile in one line and send nothing of the caller's."""
    requests_before = len(scripted_model.requests)
    conn = DashboardConnection(settings.with_(profile="default"))
    try:
        with pytest.raises(HermesUsageError, match=r"choosing a profile is not offered by this Hermes \(profiles.list\)"):
            await conn.connect()
    finally:
        await conn.close()
    async with ApiClient(settings.with_(profile="default")) as api:
        with pytest.raises(HermesUsageError, match="profiles are not offered by this Hermes API Server"):
            await api.start_run("never sent")
    assert len(scripted_model.requests) == requests_before
