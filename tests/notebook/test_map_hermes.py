"""``hermes.map`` against the real Hermes servers (both versions; only the model is scripted).

40 model-bound prompts (``SLOW 3 <words>``: about 1 s of streaming each) at concurrency 4, one of them failing
at the model: the replies come back in input order, the failure kept as an error beside the 39 replies, and
the connection's current session left alone. ``resume=`` runs only the failed prompt again, and a pandas
Series gets a DataFrame with its index. Over the API Server, 12 prompts at once meet its cap of 10 concurrent
runs: the real server answers 429 with ``Retry-After: 1``, and each turned-away prompt waits that long before
asking again. How much faster than one after another is a benchmark (benchmarks/bench_map.py), not a test.
"""

from __future__ import annotations

import uuid

import pytest

from hermes_notebook._demo.script import prompt_of
from hermes_notebook._demo.scripted_model import ScriptedModel
from hermes_notebook.notebook.map_results import FAILED, MapFailure, MapResult
from hermes_notebook.notebook.results import Reply

pytestmark = pytest.mark.both_servers

POLICIES = {"approve": "deny", "clarify": "A"}


def _asked(model: ScriptedModel, tag: str) -> list[str]:
    """The prompts of this test the model was asked (agent requests, retries included; titles left out)."""
    return [p for p in (prompt_of(body) for body in model.requests if body.get("tools")) if tag in p]


def test_forty_prompts_four_at_a_time_in_order_with_a_failure_kept_and_resumed(
    hermes_nb: object, scripted_model: ScriptedModel
) -> None:
    """40 prompts at concurrency 4: 39 replies in input order and the failure as a MapFailure in its place;
    the current session unchanged; resume= asks the model only for the failed prompt, and a Series comes
    back as a DataFrame with its index."""
    pandas = pytest.importorskip("pandas")
    hermes = hermes_nb
    tag = uuid.uuid4().hex[:8]
    prompts = [f"SLOW 3 item {i} {tag}" for i in range(40)]
    prompts[17] = f"FAIL422 item 17 {tag}"  # a model error neither server retries (a 500 takes minutes)
    session = hermes.session_id  # type: ignore[attr-defined]

    result = hermes.map(prompts, concurrency=4, **POLICIES)  # type: ignore[attr-defined]

    assert isinstance(result, MapResult) and len(result) == 40
    assert [r.text.endswith(f"for item {i} {tag}") for i, r in enumerate(result) if i != 17] == [True] * 39
    assert [r.prompt for r in result] == prompts
    failure = result[17]
    assert isinstance(failure, MapFailure) and failure.status == FAILED
    assert (
        failure.reply is not None and failure.reply.status == "error" and failure.error == failure.reply.error
    )
    assert result.counts()["done"] == 39
    assert len({r.session_id for r in result.replies}) == 39  # each in a new session of its own
    assert hermes.session_id == session and hermes.last_map is result  # type: ignore[attr-defined]

    asked = len(_asked(scripted_model, tag))
    series = pandas.Series(prompts, index=[f"row{i}" for i in range(40)])
    frame = hermes.map(series, resume=result, **POLICIES)  # type: ignore[attr-defined]

    again = _asked(scripted_model, tag)[asked:]
    assert again and set(again) == {prompts[17]}  # only the failed prompt (and the server's own retries)
    assert list(frame.index) == list(series.index) and list(frame["prompt"]) == prompts
    assert list(frame["status"]).count("done") == 39 and frame.loc["row17", "status"] == FAILED
    assert all(frame["result"].iloc[i] is result[i] for i in range(40) if i != 17)  # kept, not re-run


def test_a_server_at_its_run_cap_is_waited_out_for_its_retry_after(hermes_nb: object) -> None:
    """12 prompts at once over the API Server (cap: 10 concurrent runs): the real server answers 429 with
    Retry-After 1 s; the turned-away prompts wait at least that long each time (about once a second while
    the first runs last), and all 12 finish in order."""
    hermes = hermes_nb
    tag = uuid.uuid4().hex[:8]
    # 6 s each: all 12 reach the server while the first 10 still run, even on a loaded machine (at 2 s and 3 s
    # the first runs sometimes ended before the last prompts arrived, and the server never needed to refuse)
    prompts = [f"SLOW 24 api {i} {tag}" for i in range(12)]

    result = hermes.map(prompts, concurrency=12, via="api", approve="deny")  # type: ignore[attr-defined]

    assert [isinstance(r, Reply) and r.text.endswith(f"for api {i} {tag}") for i, r in enumerate(result)] == [
        True
    ] * 12
    assert result.waits, "the server never answered 429: nothing was waited out"
    # Retry-After: 1, never a tight loop: each turned-away prompt asks again about once a second while the
    # 10 runs last
    assert min(result.waits) >= 1.0 and len(result.waits) <= 24
