"""Two notebooks in one JupyterLab server, each with its own kernel and chat, on one newer Hermes: Hermes
offers both kernels' tools to every session of the profile, yet each notebook's proposals land only there.

Both chats run a turn at once, each proposing 25 cells through its own kernel's tools: the proposals
interleave at the two kernels, and every one must show in its own notebook (0 misrouted of 50). A turn of B
that calls A's server is refused, with a reason, and nothing changes in either. Each header names its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, open_chat, send, turn
from tests.browser.test_notebook_edits_browser import CELLS, READY

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

#: Proposals per notebook (50 in all: the most one notebook holds pending is 50).
EACH = 25


def pending_sources(nb: Any) -> list[str]:
    """The sources of the insertions pending on this page (the diff's added lines)."""
    return nb.page.locator(
        ".hn-pending[data-kind='insert'] .hn-pending-line[data-kind='add'] .hn-pending-text"
    ).all_inner_texts()


def fresh_session(nb: Any) -> None:
    """A new session for the chat, made after the cell tools were listed (Hermes keeps a session's tools)."""
    opened = nb.kernel_eval("chat.session['id']")
    nb.kernel_eval("chat._dispatch(chat, {'type': 'new_session'}, []) or True")
    nb.wait_kernel(f"chat.ready.done() and chat.session is not None and chat.session['id'] != {opened!r}")


def test_two_notebooks_each_get_only_their_own_proposals(open_notebook: Any) -> None:
    """50 interleaved proposals from two chats at once: each lands in its own notebook, none in the other;
    B calling A's server is refused in one line; each header says which notebook its cell tools act on."""
    a = open_chat(open_notebook, cells=CELLS)
    b = open_chat(open_notebook, cells=CELLS)
    for nb in (a, b):
        nb.wait_kernel(READY, timeout_s=90)
    for nb in (a, b):
        fresh_session(nb)
    names = {nb.path: nb.kernel_eval("share.name") for nb in (a, b)}
    assert len(set(names.values())) == 2
    for nb in (a, b):
        expect(nb.page.locator(".hn-kernel-notebook")).to_have_text(f"· cell tools act on {nb.path}")

    # Both turns at once, each through its own kernel's server: the calls interleave at the two kernels.
    for nb, tag in ((a, "A"), (b, "B")):
        steps = " ;; ".join(f"insert_cell 0 {tag}-{i}" for i in range(EACH))
        send(nb, f"KERNELS@{names[nb.path]} {steps}")
    done = ".hn-message[data-role='assistant'][data-status='complete']"
    for nb in (a, b):
        expect(nb.page.locator(done).last).to_contain_text(
            "Kernel tool results:", timeout=TURN_TIMEOUT_MS * 2
        )
    shown = {tag: pending_sources(nb) for nb, tag in ((a, "A"), (b, "B"))}
    misrouted = sum(s.startswith("B-") for s in shown["A"]) + sum(s.startswith("A-") for s in shown["B"])
    assert misrouted == 0, shown
    assert sorted(shown["A"]) == sorted(f"A-{i}" for i in range(EACH))
    assert sorted(shown["B"]) == sorted(f"B-{i}" for i in range(EACH))

    # B's turn calling A's server: refused with the reason, and neither notebook changes.
    refused = turn(b, f"KERNEL@{names[a.path]} insert_cell 0 crossed")
    expect(refused).to_contain_text("Refused: no turn started from this notebook is calling this tool")
    assert len(pending_sources(a)) == EACH and len(pending_sources(b)) == EACH
    assert not any("crossed" in s for nb in (a, b) for s in pending_sources(nb))
