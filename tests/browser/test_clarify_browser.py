"""A newer Hermes' multi-question clarify in real JupyterLab: one card, one answer per question, reaching the
model. (0.19.0 clarify asks one question only; see test_chat_browser.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, last_assistant, open_chat, send

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]


def test_three_questions_are_answered_in_one_card(open_notebook: Any) -> None:
    """Pick one radio, two checkboxes and type a name, press Answer once: the model quotes every answer."""
    nb = open_chat(open_notebook)
    send(nb, "CLARIFY3")
    card = nb.page.locator(".hn-interaction[data-kind='clarify'][data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    assert card.locator("fieldset.hn-question").count() == 3
    card.locator("fieldset[data-qid='q0'] input[value='B']").check()
    card.locator("fieldset[data-qid='q1'] input[value='X']").check()
    card.locator("fieldset[data-qid='q1'] input[value='Z']").check()
    name = card.get_by_role("textbox", name="Answer to: Your name?")
    name.fill("Ann")
    card.get_by_role("button", name="Answer").click()
    message = last_assistant(nb, "complete")
    assert "You chose: B; X, Z; Ann" in message.inner_text()
    done = message.locator(".hn-interaction[data-kind='clarify']")
    assert done.get_attribute("data-status") == "answered"
    assert "Answered: B; X, Z; Ann" in done.inner_text()
