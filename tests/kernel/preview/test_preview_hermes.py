"""The agent's ``preview`` tool driven by a REAL Hermes turn (the newer Dashboard; 0.19.0 registers no tool
server without a restart): a real kernel shares its tools as a user does, a scripted page stands in for the
notebook, and the scripted model's ``PREVIEW`` keyword proposes a code cell and previews that proposal. What
the Run card shows, what reached the model, and what the kernel and the notebook are left with are all read
from one approved turn and one denied turn."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.follow_up import result_text
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.kernel.preview.report import CARD_SENTENCE
from hermes_notebook.kernel.preview.tool import RUNNING, TERMS, WHERE
from tests.kernels import Kernel

pytestmark = pytest.mark.servers("newer")

SETUP = """
import json, threading
import pandas as pd
import hermes_notebook as hn
from hermes_notebook.kernel.document import DOCUMENT
from tests.scripted_front_end import ScriptedFrontEnd, code_cell
df = pd.DataFrame({"x": [1, 2, 3]})
h = hn.connect()
share = h.share_kernel(read=True)
page = ScriptedFrontEnd(DOCUMENT, cells=[code_cell("a", "df = pd.DataFrame({'x': [1, 2, 3]})", 1)])
page.hello()

def turn(prompt, answer):
    '''One turn; its Run card is answered ``answer`` as the card's button would; what it left, as JSON.'''
    handle = h.start(prompt)
    handle.buttons = True
    cards = []

    def click():
        while not handle.done():
            for part in handle.parts:
                card = part.get("interaction") or {}
                if card.get("kind") == "code" and card.get("status") == "pending":
                    cards.append(dict(card))
                    handle.answer(card["request_id"], answer)
                    return
            threading.Event().wait(0.05)

    threading.Thread(target=click, daemon=True).start()
    reply = handle.wait(timeout=150)
    tool = next((t for t in reply.tools if str(t.get("name")).endswith("__preview")), {})
    print("TURN", json.dumps({
        "text": reply.text, "cards": cards, "result": str(tool.get("result")),
        "interaction": tool.get("interaction"), "label": tool.get("label"), "pending": sorted(page.pending),
        "cells": [c["source"] for c in page.cells], "ops": [r["op"] for r in page.requests],
        "columns": list(df.columns),
    }))
"""


@pytest.fixture
def kernel(hermes: LocalHermes, tmp_path: Path) -> Iterator[Kernel]:
    """A real kernel sharing its tools (runs ask) with the scripted page attached; shut down after."""
    started = Kernel(hermes, tmp_path)
    try:
        started.run(SETUP)
        yield started
    finally:
        started.stop()


def _turn(kernel: Kernel, prompt: str, answer: str) -> dict[str, Any]:
    printed = kernel.run(f"turn({prompt!r}, {answer!r})", timeout=200)
    match = re.search(r"^TURN (.*)$", printed, re.M)
    assert match, printed
    return dict(json.loads(match.group(1)))


def _told(hermes: LocalHermes) -> str:
    """The newest ``preview`` result the model received, as the model reads it (without Hermes' envelope)."""
    assert hermes.model is not None
    results = [
        str(m.get("content"))
        for body in hermes.model.requests
        for m in body.get("messages") or []
        if m.get("role") == "tool" and '__preview">' in str(m.get("content"))
    ]
    assert results, "no preview result reached the model"
    return result_text(results[-1])


def test_a_real_turn_previews_its_proposal_in_a_copy_and_the_model_reads_the_summary(
    hermes: LocalHermes, kernel: Kernel, tmp_path: Path
) -> None:
    """Approved on its Run card (which says it runs in a copy), the copy prints the sum and reports df changed
    in place; that summary is what the model read and quoted, as plain text; the kernel's df has no z and the
    proposal is still pending, not kept. Denied: nothing runs (the file it would write is not there) and the
    model is told so."""
    source = "df['z'] = df.x * 2; print(df.z.sum())"
    ran = _turn(kernel, f"PREVIEW 1 {source}", "run")
    [card] = ran["cards"]
    assert card["command"] == source
    assert card["description"] == f"{WHERE}, {TERMS}, only if you click Run."
    assert (ran["interaction"]["kind"], ran["interaction"]["response"]) == ("run", "finished")
    assert ran["interaction"]["description"].startswith(RUNNING)
    assert ran["label"]["name"] == "notebook: preview"
    told = _told(hermes)
    assert told.startswith("Preview finished in") and CARD_SENTENCE in told, told
    assert "\n\nprinted:\n12\n\n" in told and "- df: changed in place (DataFrame, 3x2)" in told, told
    assert "{" not in told and str(tmp_path) not in told and str(Path.home()) not in told, told
    assert ran["text"] == f"Preview result:\n```\n{told}\n```"  # the model quoted what it was told
    assert ran["columns"] == ["x"]  # the kernel's df never got z
    [change] = ran["pending"]
    assert ran["ops"] == ["propose"] and len(ran["cells"]) == 1  # still pending: neither kept nor run

    denied = _turn(kernel, "PREVIEW 1 open('preview-ran.txt', 'w').write('ran')", "deny")
    assert (denied["interaction"]["kind"], denied["interaction"]["response"]) == ("code", "deny")
    told = _told(hermes)
    assert told.startswith("The user denied it: the code was NOT run"), told
    assert denied["text"] == f"Preview result:\n```\n{told}\n```"
    assert not (tmp_path / "preview-ran.txt").exists() and denied["columns"] == ["x"]
    assert change in denied["pending"] and "run" not in denied["ops"]
