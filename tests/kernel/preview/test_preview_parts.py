"""The preview's pure parts in this process: refusals in one line, the limits' settings, and the variables
table's honesty (over the budget is "not checked", never left out as unchanged)."""

from __future__ import annotations

import pytest

from hermes_notebook.kernel.preview.limits import PreviewLimits, refusal
from hermes_notebook.kernel.preview.report import CARD_SENTENCE, PreviewReport
from hermes_notebook.kernel.preview.variables import compare, fingerprint


def test_refusals_are_one_line_and_name_the_reason() -> None:
    """Not on Linux, and a cell running: each a one-line reason; none on an idle Linux kernel."""
    mac = refusal(False, platform="darwin")
    busy = refusal(True, platform="linux")
    assert mac is not None and "only on Linux" in mac and "darwin" in mac and "\n" not in mac
    assert busy is not None and "a cell is running" in busy
    assert refusal(False, platform="linux") is None
    assert PreviewReport.refused(mac).summary() == f"Preview refused: {mac}"


def test_limits_come_from_arguments_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both settings: arguments win, then HERMES_PREVIEW_SECONDS / HERMES_PREVIEW_MEMORY_MB; the memory
    default is at most 1 GB; a limit that is not positive is refused with what was wrong."""
    monkeypatch.setenv("HERMES_PREVIEW_SECONDS", "7")
    monkeypatch.setenv("HERMES_PREVIEW_MEMORY_MB", "300")
    assert PreviewLimits.resolve() == PreviewLimits(7.0, 300 * 1024 * 1024)
    assert PreviewLimits.resolve(2, 100) == PreviewLimits(2.0, 100 * 1024 * 1024)
    monkeypatch.delenv("HERMES_PREVIEW_MEMORY_MB")
    assert 0 < PreviewLimits.resolve().memory <= 1024**3
    with pytest.raises(ValueError, match="positive"):
        PreviewLimits.resolve(0)


def test_the_variables_table_says_not_checked_rather_than_unchanged() -> None:
    """Created, changed in place, rebound, deleted; a list over the digest budget is "not checked" (even
    though it did not change), one within it that did not change is left out; an unpicklable object counts
    only where the code names it."""
    import threading

    big, small, same, lock = list(range(1000)), [1, 2], {"a": 1}, threading.Lock()
    namespace = {"big": big, "small": small, "same": same, "gone": 1, "rebound": "x", "lock": lock}
    before = fingerprint(namespace, first=["small"], budget=2000)
    small.append(3)
    namespace.update(rebound="y", new=5)
    del namespace["gone"]
    after = fingerprint(namespace, first=["small"], budget=2000)
    rows = {row.name: row.change for row in compare(before, after, ["small"])}
    assert rows == {
        "new": "created",
        "small": "changed in place",
        "rebound": "rebound",
        "gone": "deleted",
        "big": "not checked",
    }
    named = {row.name: row.change for row in compare(before, after, ["lock"])}
    assert named["lock"] == "not checked"
    assert "Files, network and databases are real." in CARD_SENTENCE
