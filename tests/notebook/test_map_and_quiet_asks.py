"""``hermes.map`` and quiet asks (``show=False``) without a server: bad input refused before anything is sent,
and a map's result in input order, resumed for only what did not finish.

``map`` against the real servers is tests/notebook/test_map_hermes.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook.asking import UNATTENDED_ENV, first_choice, turn_options
from hermes_notebook.notebook.map_results import NOT_RUN, MapFailure, MapResult
from hermes_notebook.notebook.results import Reply
from hermes_notebook.settings import Secret, Settings

#: Nothing listens here: a request that went out would fail with a connection error, not a usage error.
OFFLINE = Settings(
    api_url="http://127.0.0.1:9",
    api_key=Secret("k" * 32),
    dashboard_url="http://127.0.0.1:9",
    dashboard_token=Secret("t" * 32),
)


def test_map_and_quiet_asks_refuse_bad_input_before_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bad input is one HermesUsageError naming what is wrong, raised before anything is sent (nothing
    listens at OFFLINE: a request would fail otherwise). An unattended kernel's own answers stand in for the
    policies a quiet ask needs."""
    hermes = hn.connect(OFFLINE)
    policies = {"approve": "deny", "clarify": "A"}
    try:
        cases: list[tuple[Any, dict[str, Any], str]] = [
            (["a", "b"], {"concurrency": 0, **policies}, "a whole number >= 1, not 0"),
            (["a"], {"concurrency": 2.5, **policies}, "a whole number >= 1"),
            (["a", 3], policies, "prompt 1 is int, not text"),
            (["a", "  "], policies, "prompt 1 is empty"),
            ("one prompt", policies, "for one prompt use hermes.ask"),
            (["a"], {}, "pass approve= "),
            (["a"], {"approve": "deny"}, "pass clarify= "),
            (["a"], {"approve": "maybe", "clarify": "A"}, "approve= must be one of"),
            (["a"], {"session": "x", **policies}, "does not take session"),
            (["a"], {"resume": ["x"], **policies}, "resume= takes what an earlier hermes.map returned"),
        ]
        for prompts, options, says in cases:
            with pytest.raises(HermesUsageError) as caught:
                hermes.map(prompts, **options)
            assert says in str(caught.value), (options, str(caught.value))
        with pytest.raises(HermesUsageError, match="nobody could answer an approval"):
            hermes.ask("hello", show=False)
        with pytest.raises(HermesUsageError, match="the prompt must be a string, not int"):
            hermes.ask(3, show=False, approve="deny", clarify="A")  # type: ignore[call-overload]
        hermes.show = False  # the connection's default: every ask is quiet, so the same refusal
        with pytest.raises(HermesUsageError, match="show=False shows nothing"):
            hermes.ask("hello")
        hermes.show = True
        monkeypatch.setenv(UNATTENDED_ENV, "1")  # nobody attends: approvals Allow once, questions the first
        quiet = turn_options(OFFLINE, "dashboard", "hello", show=False)
        assert quiet.approve == "once" and quiet.clarify is first_choice and not quiet.show
        monkeypatch.delenv(UNATTENDED_ENV)
        hermes.approve, hermes.clarify = "deny", "A"  # the connection's defaults answer
        with pytest.raises(HermesUsageError, match="resume= holds 1 prompts and this map 2"):
            hermes.map(["a", "b"], resume=MapResult([MapFailure("a", NOT_RUN)]))
        # via="api" asks no questions: an approval policy is enough there.
        hermes.clarify = None
        with pytest.raises(HermesUsageError, match="pass clarify="):
            hermes.ask("hello", show=False)
        with pytest.raises(HermesUsageError, match="clarify is not available with via='api'"):
            hermes.ask("hello", show=False, via="api", clarify="A")
    finally:
        hermes.close()


def test_a_map_result_reads_in_input_order_and_resumes_only_what_did_not_finish() -> None:
    """MapResult: replies and failures in input order, counts, a short inert table, a DataFrame with the
    Series' index; resume= keeps the finished replies and plans only the rest."""
    from hermes_notebook.notebook.mapping import plan_map

    done = Reply(
        {
            "id": "a:1",
            "role": "assistant",
            "status": "complete",
            "parts": [{"kind": "text", "text": "<b>4</b>"}],
        },
        prompt="2+2",
    )
    failed = MapFailure("boom", "failed", RuntimeError("the model failed"))
    result = MapResult([done, failed, MapFailure("later", NOT_RUN)])
    assert result.replies == [done] and result.failures == [failed, result[2]] and not result.ok
    assert result.counts() == {"done": 1, "failed": 1, "stopped": 0, "not run": 1}
    assert repr(result) == "<MapResult 1 done, 1 failed, 1 not run of 3>"
    html = result._repr_html_()
    assert (
        "&lt;b&gt;4&lt;/b&gt;" in html and "<b>4</b>" not in html and "RuntimeError: the model failed" in html
    )
    pandas = pytest.importorskip("pandas")
    frame = result.to_frame(pandas.Index(["x", "y", "z"]))
    assert list(frame.index) == ["x", "y", "z"] and list(frame["status"]) == ["done", "failed", "not run"]

    class Face:
        settings, show, timeout, last_map = OFFLINE, True, None, None

    made: list[str] = []

    def turn(prepared: Any, preview: bool, **options: Any) -> Any:
        made.append(prepared.text)
        return object()

    plan = plan_map(Face(), ["2+2", "boom", "later"], turn, resume=frame, approve="deny", clarify="A")
    assert plan.todo == [1, 2] and plan.kept[0] is done and made == ["boom"]  # the options checked once
    assert asyncio.iscoroutinefunction(hn.Hermes.map_async)
