"""The test harness itself works against the REAL Hermes servers (only the model is scripted)."""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fast_cron
import httpx
import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.scripted_model import ScriptedModel, prompt_of
from tests.helpers import eventually


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """A raw loopback HTTP client (no proxies from the environment)."""
    with httpx.Client(trust_env=False, timeout=httpx.Timeout(60.0, connect=5.0)) as client:
        yield client


def run_events(http: httpx.Client, hermes: LocalHermes, text: str) -> list[dict[str, Any]]:
    """Start a run with raw ``POST /v1/runs`` and return its decoded SSE events until the stream closes."""
    auth = {"Authorization": f"Bearer {hermes.api_key}"}
    started = http.post(f"{hermes.api_url}/v1/runs", json={"input": text}, headers=auth)
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    events = []
    with http.stream("GET", f"{hermes.api_url}/v1/runs/{run_id}/events", headers=auth) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line.removeprefix("data: ")))
    return events


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def test_both_servers_are_healthy(hermes: LocalHermes, http: httpx.Client) -> None:
    """The API Server and the Dashboard answer their health routes and accept the harness's credentials."""
    health = http.get(f"{hermes.api_url}/health", headers={"Authorization": f"Bearer {hermes.api_key}"})
    assert health.json() == {"status": "ok", "platform": "hermes-agent", "version": "0.19.0"}
    models = http.get(f"{hermes.api_url}/v1/models", headers={"Authorization": f"Bearer {hermes.api_key}"})
    assert models.status_code == 200
    assert http.get(f"{hermes.api_url}/v1/models").status_code == 401

    status = http.get(f"{hermes.dashboard_url}/api/status").json()
    assert status["hermes_home"] == str(hermes.home)
    assert status["gateway_platforms"]["api_server"]["state"] == "connected"
    token = {"X-Hermes-Session-Token": hermes.dashboard_token}
    assert http.get(f"{hermes.dashboard_url}/api/sessions", headers=token).status_code == 200
    assert http.get(f"{hermes.dashboard_url}/api/sessions").status_code == 401

    settings = hermes.settings()
    assert settings.api_url == hermes.api_url and settings.dashboard_url == hermes.dashboard_url
    assert settings.api_key is not None and settings.api_key.reveal() == hermes.api_key


@pytest.mark.servers("0.19.0", "newer")
def test_cron_ticks_every_second_on_the_test_servers(hermes: LocalHermes) -> None:
    """tests/fast_cron.py is in force on both servers: Hermes loaded the provider and its own ticker runs
    every second (falling back to the 60 s ticker fails nothing else, it only makes every cron test wait)."""

    def logs() -> str:
        return "".join(p.read_text(errors="replace") for p in (hermes.home / "logs").rglob("*.log"))

    eventually(lambda: "In-process cron scheduler started" in logs(), 30, "the cron ticker to start")
    assert f"Using cron scheduler provider: {fast_cron.NAME}" in logs()
    assert f"In-process cron scheduler started (interval={fast_cron.INTERVAL_S}s)" in logs()


def test_plain_run_streams_the_scripted_text(hermes: LocalHermes, http: httpx.Client) -> None:
    """A plain prompt sent with raw POST /v1/runs comes back as the scripted greeting, delta by delta."""
    text = unique("hello harness")
    events = run_events(http, hermes, text)
    expected = f"Hello from the scripted model. You said: {text}"
    deltas = [e["delta"] for e in events if e["event"] == "message.delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == expected
    assert events[-1]["event"] == "run.completed"
    assert events[-1]["output"] == expected
    assert events[-1]["usage"] == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}


def test_scripted_model_receives_the_agent_request(
    hermes: LocalHermes, scripted_model: ScriptedModel, http: httpx.Client
) -> None:
    """Hermes forwards the prompt to the scripted model as a streamed request that offers the terminal
    tool."""
    text = unique("request log")
    run_events(http, hermes, text)
    bodies = [body for body in scripted_model.requests if prompt_of(body) == text]
    assert len(bodies) == 1
    body = bodies[0]
    assert body["stream"] is True
    assert body["messages"][-1] == {"role": "user", "content": text}
    assert "terminal" in {tool["function"]["name"] for tool in body["tools"]}


def test_run_prompt_executes_the_command_in_workdir(
    hermes: LocalHermes, http: httpx.Client, workdir: Path
) -> None:
    """A RUN prompt makes Hermes run the shell command in its work dir: the file appears on disk."""
    command = (
        f"mkdir {workdir.name} && echo harness-ok > {workdir.name}/proof.txt && cat {workdir.name}/proof.txt"
    )
    events = run_events(http, hermes, f"RUN {command}")
    assert [e["event"] for e in events if e["event"].startswith("tool.")] == [
        "tool.started",
        "tool.completed",
    ]
    assert events[0]["tool"] == "terminal"
    assert events[-1]["event"] == "run.completed"
    assert events[-1]["output"] == "Command output:\n```\nharness-ok\n```"
    assert (workdir / "proof.txt").read_text() == "harness-ok\n"


def test_restart_dashboard_keeps_port_and_token(
    hermes_factory: Callable[..., LocalHermes], http: httpx.Client
) -> None:
    """restart_dashboard() brings the Dashboard back on the same port, accepting the same token."""
    local = hermes_factory(api=False)
    url, token = local.dashboard_url, local.dashboard_token
    first_pid = local.dashboard_pid

    local.stop_dashboard()
    assert local.dashboard_pid is None
    with pytest.raises(httpx.ConnectError):
        http.get(f"{url}/api/status")
    local.start_dashboard()
    local.restart_dashboard()

    assert (local.dashboard_url, local.dashboard_token) == (url, token)
    assert local.dashboard_pid not in (None, first_pid)
    assert http.get(f"{url}/api/status").status_code == 200
    assert http.get(f"{url}/api/sessions", headers={"X-Hermes-Session-Token": token}).status_code == 200


def test_stopping_a_slow_run_hangs_up_on_the_scripted_model(
    hermes_factory: Callable[..., LocalHermes], http: httpx.Client
) -> None:
    """POST /stop cancels a SLOW run, and Hermes closes the model stream, which the scripted model notices."""
    local = hermes_factory(dashboard=False)
    assert local.model is not None
    auth = {"Authorization": f"Bearer {local.api_key}"}
    run_id = http.post(f"{local.api_url}/v1/runs", json={"input": "SLOW 200"}, headers=auth).json()["run_id"]
    events = []
    with http.stream("GET", f"{local.api_url}/v1/runs/{run_id}/events", headers=auth) as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            events.append(json.loads(line.removeprefix("data: ")))
            if events[-1].get("delta") == "tick 2 ":
                assert local.model.active_streams == 1
                assert http.post(f"{local.api_url}/v1/runs/{run_id}/stop", headers=auth).status_code == 200
    assert events[-1]["event"] == "run.cancelled"
    assert len([e for e in events if e["event"] == "message.delta"]) < 10
    # SLOW would run for 50 s; the hang-up must be seen within a tick or two.
    eventually(lambda: local.model.active_streams == 0, timeout=5, what="the model seeing the stream hang up")


def test_a_port_taken_before_the_server_binds_it_is_replaced(hermes_bin: str, tmp_path: Path) -> None:
    """A port found free can be taken before the Dashboard binds it (another test's server, or anything else
    on the machine): start() tries again on new ports instead of failing the test that wanted a server."""
    local = LocalHermes(hermes_bin=hermes_bin, home=tmp_path / "home", api=False)
    taken = local.dashboard_url
    port = int(taken.rsplit(":", 1)[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        try:
            local.start()
            assert local.dashboard_url != taken
            assert (
                httpx.get(f"{local.dashboard_url}/api/status", trust_env=False, timeout=10).status_code == 200
            )
        finally:
            local.close()


def test_hermes_may_not_install_packages_into_its_own_venv(tmp_path: Path) -> None:
    """0.19.0 pip-installs a provider's SDK when its adapter is imported (Bedrock's: boto3), into Hermes' own
    venv, mid-run; the config LocalHermes writes turns that off, as Hermes' own check reads it (no install is
    tried)."""
    import subprocess

    from hermes_notebook._demo.local_hermes import find_hermes_bin

    try:
        hermes_bin = find_hermes_bin(server="0.19.0")
    except Exception as exc:  # the venvs come from scripts/setup
        pytest.skip(f"no hermes-agent 0.19.0 venv: {exc}")
    local = LocalHermes(hermes_bin=hermes_bin, home=tmp_path, model_url="http://127.0.0.1:9/v1")
    local.write_config()
    python = Path(hermes_bin).parent / "python"
    check = "from tools.lazy_deps import _allow_lazy_installs; print(_allow_lazy_installs())"
    out = subprocess.run(
        [str(python), "-c", check],
        env={**os.environ, "HERMES_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]
