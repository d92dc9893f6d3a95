"""Shared test helpers: wait until something observable happens (never for a fixed time); read the widget
wire."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_notebook._demo.follow_up import is_title_request

if TYPE_CHECKING:
    from hermes_notebook._demo.local_hermes import LocalHermes

T = TypeVar("T")

#: The tests folder, the repository around it and the recorded fixtures: a test reaches files through these,
# wherever in the folders that mirror the package it sits.
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"

#: Seconds between polls: short enough that a wait ends within a few ms of the condition.
POLL_INTERVAL = 0.005


def eventually(predicate: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """Poll ``predicate()`` on this thread until it is truthy and return that value.

    Raises ``AssertionError`` naming ``what`` after ``timeout`` seconds. For state other threads change (the
    package loop, a server, a kernel).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        time.sleep(POLL_INTERVAL)


async def eventually_async(predicate: Callable[[], T], timeout: float = 5.0, what: str = "condition") -> T:
    """:func:`eventually` for a coroutine: polls with ``asyncio.sleep`` so the running loop keeps working."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout} s")
        await asyncio.sleep(POLL_INTERVAL)


class MoreReader:
    """Reads kernel -> view custom messages as the view's decoder (js/src/chat/wire.ts) does: a short ``more``
    batch becomes the ``changes`` batch it stands for (an ``append`` to where the previous batch ended
    appending). A ``more`` that does not directly follow an append batch fails the test."""

    def __init__(self) -> None:
        self._target: tuple[int, str, str] | None = None

    def read(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("type") == "more":
            target = self._target
            assert target is not None and message["seq"] == target[0] + 1, (
                f"a 'more' with nothing to follow: {message}"
            )
            message = {
                "type": "changes",
                "seq": message["seq"],
                "changes": [
                    {"op": "append", "message_id": target[1], "part_id": target[2], "text": message["text"]}
                ],
            }
        if message.get("type") == "snapshot":
            self._target = None
        elif message.get("type") == "changes":
            last = message["changes"][-1]
            self._target = (
                (message["seq"], last["message_id"], last["part_id"]) if last["op"] == "append" else None
            )
        return message


def expand_more(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with every ``more`` batch written out (see :class:`MoreReader`)."""
    reader = MoreReader()
    return [reader.read(m) for m in messages]


@contextlib.contextmanager
def offline_jobs_widget() -> Iterator[tuple[Any, list[Any]]]:
    """A Jobs widget whose client records each request instead of sending it, for "nothing reaches the server"
    checks; ``(widget, requests)``, closed afterwards."""
    import httpx

    from hermes_notebook import runtime
    from hermes_notebook.client.jobs import JobsClient
    from hermes_notebook.jobs.api import JobsAPI
    from hermes_notebook.widgets.jobs import Jobs

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"jobs": []})

    client = JobsClient(url="http://127.0.0.1:9", key="k" * 32, transport=httpx.MockTransport(handler))
    widget = Jobs(JobsAPI(client), auto_refresh=0, refresh=False)
    try:
        yield widget, seen
    finally:
        widget.close()
        runtime.run_sync(client.aclose())


def registered_mcp_servers(settings: Any) -> dict[str, str]:
    """MCP servers registered on a newer Dashboard (name -> URL), asked over a connection of its own."""
    from hermes_notebook.client.dashboard import DashboardConnection
    from hermes_notebook.runtime import run_sync

    async def servers() -> dict[str, str]:
        conn = DashboardConnection(settings)
        await conn.connect()
        try:
            listed = await conn.request("mcp.servers.list", {})
        finally:
            await conn.close()
        return {s["name"]: s["url"] for s in listed["servers"]}

    return run_sync(servers())


def mcp_tool_names(url: str, token: str) -> set[str]:
    """The tools an MCP server lists, asked as any client does: ``initialize`` opens a session, then
    ``tools/list`` in it (the kernel's server keeps sessions, so it can tell them when the list changes)."""
    import httpx

    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token}"}
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"},
    }
    init = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        headers=headers,
        trust_env=False,
    )
    init.raise_for_status()
    headers["mcp-session-id"] = init.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = mcp_result(init)["protocolVersion"]
    httpx.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, trust_env=False
    ).raise_for_status()
    listed = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        headers=headers,
        trust_env=False,
    )
    listed.raise_for_status()
    return {tool["name"] for tool in mcp_result(listed)["tools"]}


def mcp_result(response: Any) -> Any:
    """The JSON-RPC result of an MCP server's answer to a POST: an SSE stream (the kernel's server streams
    answers, pinging while a long call runs) whose event with an id is the answer, or plain JSON."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.json()["result"]
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if "id" in message:
                return message["result"]
    raise AssertionError(f"no answer in the stream: {response.text[:500]}")


def png_bytes(width: int = 8, height: int = 6, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A real, small PNG (one colour), made without an imaging library: what a plot's output holds."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


@contextlib.contextmanager
def native_images(home: Any) -> Iterator[None]:
    """Turn on a newer Hermes' native image lane for the scripted model (``agent.image_input_mode: native``,
    ``model.supports_vision: true`` in ``config.yaml``, re-read on change), then off again; the rest of the
    file (the MCP servers Hermes registered meanwhile) is kept."""
    import yaml

    path = home / "config.yaml"

    def edit(on: bool) -> None:
        config = yaml.safe_load(path.read_text()) or {}
        for section, key, value in (
            ("agent", "image_input_mode", "native"),
            ("model", "supports_vision", True),
        ):
            if on:
                config.setdefault(section, {})[key] = value
            else:
                config.get(section, {}).pop(key, None)
        path.write_text(yaml.safe_dump(config, sort_keys=False))

    edit(True)
    try:
        yield
    finally:
        edit(False)


def agent_requests(model: Any) -> list[dict[str, Any]]:
    """The scripted model's request log without Hermes' session-title requests.

    After a session's first reply Hermes asks the model for a title on a thread of its own, quoting the turn
    without its attachments or context; that request may land before or after a test reads the log, so a test
    looking for the latest request that names its prompt reads this instead of ``model.requests``.
    """

    return [body for body in list(model.requests) if not is_title_request(body)]


@contextlib.contextmanager
def profiles_hermes(hermes_bin: str, home: Path, *profiles: str) -> Iterator[LocalHermes]:
    """A started Hermes (the newer one) whose one gateway serves ``default`` and each of ``profiles``, a home
    of its own under ``<home>/profiles/`` with the same scripted model, as a team's shared Hermes would;
    closed on exit."""
    from hermes_notebook._demo.local_hermes import LocalHermes
    from hermes_notebook._demo.processes import to_yaml

    local = LocalHermes(
        hermes_bin=hermes_bin, home=home, config_overrides={"gateway": {"multiplex_profiles": True}}
    )
    try:
        local.start()
        config = local.config()
        config.pop("platforms")  # the host gateway serves each profile on its own listener
        for name in profiles:
            profile = local.home / "profiles" / name
            profile.mkdir(parents=True)
            (profile / "config.yaml").write_text(to_yaml(config) + "\n")
            # A named profile checks its own key.
            (profile / ".env").write_text(f"API_SERVER_KEY={local.api_key}\n")
        yield local
    finally:
        local.close()


def mcp_initialize(url: str, verify: Any = False, **headers: str) -> int:
    """The HTTP status of an MCP ``initialize`` posted to ``url`` with ``headers`` (no redirect followed):
    what reaches an MCP server and what is refused on the way."""
    import httpx

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {"accept": "application/json, text/event-stream", **headers}
    with httpx.Client(trust_env=False, verify=verify, timeout=30) as http:
        return http.post(url, json=body, headers=headers).status_code
