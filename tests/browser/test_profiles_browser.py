"""Browser test of the chat's profile picker and its Queue/Steer choice: real JupyterLab, Chromium and Hermes.

The newer Dashboard serves every profile of its machine: the test adds a second one (``work``, a home under
``<home>/profiles/work`` with the same model) whose description is a payload. The header's picker lists both
(the description only as text), and choosing ``work`` moves the chat to a new session in that profile. While a
turn runs, the composer offers Queue/Steer; Steer puts the text into the running turn, which shows where it
went.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_notebook._demo.processes import to_yaml
from hermes_notebook.turns.steering import steer_marker

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TIMEOUT_MS = 60_000
PAYLOAD = '<img src=x onerror="document.body.dataset.pwned=1">'


@pytest.fixture
def work_profile(hermes: Any) -> Iterator[str]:
    """A second profile on the shared newer Hermes, removed afterwards."""
    home = hermes.home / "profiles" / "work"
    home.mkdir(parents=True)
    config = hermes.config()
    config.pop("platforms", None)
    (home / "config.yaml").write_text(to_yaml(config) + "\n")
    (home / "profile.yaml").write_text(
        to_yaml({"description": PAYLOAD}) + "\n"
    )  # server text: an option's title
    try:
        yield "work"
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_profile_picker_switches_and_steer_goes_into_the_running_turn(
    open_notebook: Any, work_profile: str
) -> None:
    """The picker lists the profiles (hidden with one), switching opens a session in ``work``; Steer while a
    turn runs reaches that turn (a marker in it), and the choice is back to Queue afterwards."""
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    page = nb.page
    page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    picker = page.locator("select.hn-profile-picker")
    picker.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert picker.locator("option").all_inner_texts() == ["default (default)", work_profile]
    assert picker.input_value() == "default"
    assert (
        nb.kernel_eval("'profiles' in chat.get_state() or 'onerror' in str(chat.get_state())") is False
    )  # not state
    first = nb.kernel_eval("chat.session_id")
    picker.select_option(work_profile)
    nb.wait_kernel(f"chat.conversation.profile == {work_profile!r} and chat.session_id != {first!r}", 60)
    page.wait_for_function("() => document.querySelector('select.hn-profile-picker').value === 'work'")

    box = page.get_by_role("textbox", name="Message to Hermes")
    mode = page.locator("select.hn-send-mode")
    assert mode.is_hidden()
    box.fill("RUN sleep 4 && echo ran")
    box.press("Control+Enter")
    page.locator(".hn-tool").first.wait_for(timeout=TIMEOUT_MS)
    mode.wait_for(state="visible")
    assert mode.input_value() == "queue"
    mode.select_option("steer")
    guidance = "browser steer please"
    box.fill(guidance)
    box.press("Control+Enter")
    marker = page.locator(".hn-marker", has_text=steer_marker(guidance))
    marker.wait_for(timeout=TIMEOUT_MS)
    nb.wait_kernel("not chat.busy", 90)
    mode.wait_for(state="hidden")
    assert mode.input_value() == "queue"
    assert nb.kernel_eval("sum(m['role'] == 'user' for m in chat.snapshot())") == 1  # a steer is no prompt
    assert (
        page.evaluate("() => document.body.dataset.pwned") is None
        and page.locator(".hn-chat img").count() == 0
    )
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
