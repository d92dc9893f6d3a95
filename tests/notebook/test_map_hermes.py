"""``hermes.map`` against the real Hermes servers (both versions; only the model is scripted).

40 model-bound prompts (``SLOW 3 <words>``: about 1 s of streaming each) at concurrency 4, one of them failing
at the model: the replies come back in input order, the failure kept as an error beside the 39 replies, and
the connection's current session left alone. ``resume=`` runs only the failed prompt again, and a pandas
Series gets a DataFrame with its index. Over an API Server capped at 2 concurrent runs, 4 prompts at once
meet the cap: the real server answers 429 with ``Retry-After: 1``, and each turned-away prompt waits that long
before asking again. How much faster than one after another is a benchmark (benchmarks/bench_map.py), not a
test.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
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


def test_a_server_at_its_run_cap_is_waited_out_for_its_retry_after(
    hermes_factory: Callable[..., LocalHermes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 prompts at once over an API Server capped at 2 concurrent runs (``max_concurrent_runs``; 10 by
    default): the real server answers 429 with Retry-After 1 s; the turned-away prompts wait at least that
    long each time (about once a second while the first runs last), and all 4 finish in order."""
    import hermes_notebook as hn

    local = hermes_factory(
        dashboard=False, config_overrides={"gateway": {"api_server": {"max_concurrent_runs": 2}}}
    )
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)
    hermes = hn.connect(local.settings())
    tag = uuid.uuid4().hex[:8]
    # 3 s each: the two admitted runs are still going when the other two ask, however loaded the machine
    prompts = [f"SLOW 12 api {i} {tag}" for i in range(4)]
    started = time.monotonic()
    try:
        result = hermes.map(prompts, concurrency=4, via="api", approve="deny")
    finally:
        hermes.close()
    elapsed = time.monotonic() - started

    assert [isinstance(r, Reply) and r.text.endswith(f"for api {i} {tag}") for i, r in enumerate(result)] == [
        True
    ] * 4
    assert result.waits, "the server never answered 429: nothing was waited out"
    # Retry-After: 1, never a tight loop: every wait lasts at least the second the server asked for, and at
    # most two prompts (4 asked, 2 admitted) wait at any moment, so the waits add up to at most twice the
    # map's time
    assert min(result.waits) >= 1.0 and sum(result.waits) <= 2 * elapsed, (result.waits, elapsed)
