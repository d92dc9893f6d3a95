"""widgets/static_twin.py: a live widget plus its static twin output, shown and updated under one display
id."""

from __future__ import annotations

from typing import Any

import anywidget
import pytest

from hermes_notebook.widgets import Chat, Jobs
from hermes_notebook.widgets.static_twin import StaticTwin


class _Twin(StaticTwin, anywidget.AnyWidget):
    _esm = "export default { render() {} };"
    live_text = "a live twin"

    def __init__(self) -> None:
        super().__init__()
        self._init_static_twin("twin")
        self.count = 0

    def static_bundle(self) -> dict[str, str]:
        return {
            "text/plain": f"count {self.count}",
            "text/html": f"<div class='hn-twin'>count {self.count}</div>",
        }


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any, dict[str, Any]]]:
    """What IPython.display.display / update_display were called with."""
    seen: list[tuple[str, Any, dict[str, Any]]] = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: seen.append(("display", obj, kw)))
    monkeypatch.setattr(IPython.display, "update_display", lambda obj, **kw: seen.append(("update", obj, kw)))
    return seen


def test_display_shows_the_widget_then_its_twin_under_a_display_id(calls: list[Any]) -> None:
    """The widget output says what it is in text/plain; the twin follows under its own display id."""
    twin = _Twin()
    twin.update_static()
    assert calls == []  # nothing shown yet: nothing to update
    twin._ipython_display_()
    (kind1, widget, kw1), (kind2, static, kw2) = calls
    assert kind1 == kind2 == "display" and kw1["raw"] and kw2["raw"]
    assert widget["text/plain"] == "a live twin" and "application/vnd.jupyter.widget-view+json" in widget
    assert static == {"text/plain": "count 0", "text/html": "<div class='hn-twin'>count 0</div>"}
    twin.count = 2
    twin.update_static()
    kind3, updated, kw3 = calls[-1]
    assert kind3 == "update" and kw3["display_id"] == kw2["display_id"] and updated["text/plain"] == "count 2"
    twin.close()


def test_chat_and_jobs_are_static_twins() -> None:
    """Both notebook widgets get their saved-notebook copy from the one mixin."""
    assert issubclass(Chat, StaticTwin) and issubclass(Jobs, StaticTwin)
    assert (
        Chat.static_bundle is not StaticTwin.static_bundle
        and Jobs.static_bundle is not StaticTwin.static_bundle
    )
