"""Sudo passwords typed into the masked input of a real JupyterLab page reach the real Hermes and nothing
keeps them.

``RUN sudo echo ...`` makes Hermes ask for a sudo password (``sudo.request``) and block the tool until it gets
one. sudo itself is not installed here, so the command then fails; what matters is that the answer reaches
Hermes, the turn (and Run All) goes on to the end, and the saved notebook holds neither the password nor the
API key nor the Dashboard token.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import JS_START_RUN_ALL, KERNELS, TURN_TIMEOUT_MS

pytestmark = pytest.mark.usefixtures("hermes")


JS_SAVE_COMMAND = """async ({path}) => {
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  app.shell.activateById(nb.id);
  await app.commands.execute('docmanager:save');
  return nb.context.model.dirty;
}"""


def _stream(outputs: list[Any]) -> str:
    return "".join(
        o["text"] if isinstance(o["text"], str) else "".join(o["text"])
        for o in outputs
        if o.get("output_type") == "stream"
    )


def _answer_sudo(nb: Any, password: str, cell: int) -> None:
    """Wait for the masked sudo input in that cell, type the password and submit it; the input is cleared at
    once."""
    card = (
        nb.page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".hn-interaction[data-kind='sudo']").first
    )
    field = card.locator("input.hn-secret-input")
    field.wait_for(state="visible", timeout=TURN_TIMEOUT_MS)
    assert field.get_attribute("type") == "password"
    field.fill(password)
    card.locator(".hn-secret-submit").click()
    assert field.input_value() == ""


def _saved_without_secrets(nb: Any, hermes: Any, password: str) -> str:
    """Save through the app's save command, read the .ipynb from disk, and check no secret is in it."""
    dirty = nb.page.evaluate(JS_SAVE_COMMAND, {"path": nb.path})
    assert dirty is False, "outputs changed after the save"
    raw = Path(nb.server.root / nb.path).read_text()
    settings = hermes.settings()
    for secret in (password, settings.api_key.reveal(), settings.dashboard_token.reveal()):
        assert not [secret[i : i + 10] for i in range(len(secret) - 9) if secret[i : i + 10] in raw]
    return raw


@pytest.mark.parametrize("kernel", KERNELS)
def test_magic_sudo_password_under_run_all(
    open_notebook: Any, kernel_names: dict[str, str], hermes: Any, kernel: str
) -> None:
    """The masked input appears in the running ``%hermes`` cell; the password is sent, Run All goes on,
    nothing keeps it."""
    password = f"pw-{uuid.uuid4().hex}"
    nb = open_notebook(
        ["%load_ext hermes_notebook", "r = %hermes RUN sudo echo ok", "print(r.status)"], kernel=kernel
    )
    nb.page.evaluate(JS_START_RUN_ALL, {"path": nb.path})
    _answer_sudo(nb, password, cell=1)
    assert nb.page.evaluate("() => window.__hnRunAll") == "running"  # the %hermes cell was still blocking
    nb.page.wait_for_function("() => window.__hnRunAll !== 'running'", timeout=TURN_TIMEOUT_MS, polling=50)
    assert nb.page.evaluate("() => window.__hnRunAll") == "done"
    outputs = nb.outputs()
    assert _stream(outputs[2]) == "complete\n"
    tool = nb.kernel_eval("r.tools[0]")
    assert tool["arguments"] == {"command": "sudo echo ok"}
    assert (tool["interaction"]["kind"], tool["interaction"]["status"]) == ("sudo", "answered")
    assert tool["interaction"]["response"] == "********"
    assert password not in nb.page.content()
    raw = _saved_without_secrets(nb, hermes, password)
    assert "sudo echo ok" in raw  # the static transcript replaced the live view in the saved cell


def test_chat_sudo_password(open_notebook: Any, hermes: Any) -> None:
    """In the chat widget the masked input sends the password once; the turn completes and nothing keeps
    it."""
    password = f"pw-{uuid.uuid4().hex}"
    marker = f"chat-sudo-{uuid.uuid4().hex[:6]}"
    nb = open_notebook(["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"])
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(f"RUN sudo echo {marker}")
    nb.page.locator(".hn-send").click()
    _answer_sudo(nb, password, cell=1)
    card = nb.page.locator(".hn-interaction[data-kind='sudo'][data-status='answered']").first
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    assert "value hidden" in card.inner_text()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").last.wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    # The static transcript is re-rendered 0.25 s after the turn's last boundary: wait for that final update
    # (the prompt alone already names the command), else the save could race it.
    nb.wait_kernel("not chat.busy and chat._transcript_handle is None")
    nb.page.wait_for_function(
        "m => [...document.querySelectorAll('.hn-transcript')].some(e => e.textContent.includes(m))",
        arg="exit code 127",
        timeout=30_000,
    )
    assert nb.kernel_eval("chat.notice") == ""
    assert password not in nb.page.content()
    raw = _saved_without_secrets(nb, hermes, password)
    assert f"sudo echo {marker}" in raw


def test_chat_reply_quoting_keys_leaves_none_in_the_page_or_the_saved_notebook(
    open_notebook: Any, hermes: Any
) -> None:
    """A reply whose tool output prints an ``sk-`` key, an ``API_SERVER_KEY=`` assignment and the connection's
    own API key: the live view shows masks, and the saved .ipynb (the static transcript) holds none of
    them."""
    shaped = "sk-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    assignment = uuid.uuid4().hex
    own = hermes.settings().api_key.reveal()
    nb = open_notebook(["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"])
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(
        f"RUN echo {shaped} API_SERVER_KEY={assignment} {own}"
    )
    nb.page.locator(".hn-send").click()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").last.wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    nb.wait_kernel("not chat.busy and chat._transcript_handle is None")
    nb.page.wait_for_function(
        "() => [...document.querySelectorAll('.hn-transcript')].some(e => "
        "e.textContent.includes('API_SERVER_KEY='))",
        timeout=30_000,
    )
    content = nb.page.content()
    assert "API_SERVER_KEY=********" in content
    raw = _saved_without_secrets(nb, hermes, "no-password-in-this-test")
    for secret in (shaped, assignment, own):
        assert secret not in content and secret not in raw
    assert "API_SERVER_KEY=********" in raw
