"""Masking the volatile parts of cell outputs (reproducibility/masking.py): pure, no kernel."""

from __future__ import annotations

import re

from hermes_notebook.reproducibility.masking import cell_lines, mask, output_lines


def test_volatile_parts_are_masked_and_the_rest_kept() -> None:
    """Execution counts, timings (``%time`` and ``%timeit``), memory addresses and object ids become tokens;
    the numbers that are results stay, so a changed result still shows."""
    assert mask("<__main__.Thing at 0x7f3ac81d2e90>") == mask("<__main__.Thing at 0x55d0c0ffee00>")
    assert mask("Wall time: 18.4 µs") == mask("Wall time: 2.1 ms") == "Wall time: <time>"
    assert mask("CPU times: user 14 µs, sys: 2 µs, total: 16 µs") == mask(
        "CPU times: user 1 s, sys: 0 ns, total: 1 s"
    )
    timeit = "1.23 µs ± 4.5 ns per loop (mean ± std. dev. of 7 runs, 1,000,000 loops each)"
    assert mask(timeit) == mask("980 ns ± 12 ns per loop (mean ± std. dev. of 5 runs, 100,000 loops each)")
    assert mask("Cell In[12], line 3") == mask("Cell In[3], line 3")
    assert mask("Figure(id=140234567890)") == mask("Figure(id=140999999999)")
    assert mask("\x1b[0;31mNameError\x1b[0m") == "NameError"
    saved_chat = '<div class="hn-static" data-hn-transcript="{}">You: hi</div>'
    assert mask(saved_chat.format("4f1c2a9be0d14e2b")) == mask(saved_chat.format("a7d09c21"))
    assert mask(saved_chat.format("4f1c")) != mask(saved_chat.format("4f1c").replace("hi", "ho"))
    # results are not volatile: 41 and 42 differ, and so do 10 and 12 seconds' worth of rows
    assert mask("41") != mask("42")
    assert mask("rows: 10") != mask("rows: 12")
    assert mask("run 2024-01-01", [(re.compile(r"\d{4}-\d\d-\d\d"), "<date>")]) == "run <date>"


def test_outputs_become_comparable_lines() -> None:
    """A stream is its name and masked text, split chunks joined; a result's mime bundle is compared per type
    (JSON sorted, images by digest, a widget's model id ignored); an error is its name and message; metadata
    and execution counts are never compared."""
    split = [
        {"output_type": "stream", "name": "stdout", "text": "a\nb"},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
    ]
    assert cell_lines(split) == cell_lines(
        [{"output_type": "stream", "name": "stdout", "text": ["a\n", "bc\n"]}]
    )
    result = {
        "output_type": "execute_result",
        "execution_count": 3,
        "metadata": {"k": 1},
        "data": {
            "text/plain": "<A at 0x7f0000001>",
            "application/json": {"b": 1, "a": 2},
            "image/png": "iVBOR\n",
        },
    }
    again = {
        **result,
        "execution_count": 9,
        "metadata": {},
        "data": {**result["data"], "text/plain": "<A at 0x7f9999999>"},
    }
    assert output_lines(result) == output_lines(again)
    changed_image = {**result, "data": {**result["data"], "image/png": "iVBOX\n"}}
    assert output_lines(result) != output_lines(changed_image)
    widget = "application/vnd.jupyter.widget-view+json"
    assert output_lines(
        {"output_type": "display_data", "data": {widget: {"model_id": "abc"}}}
    ) == output_lines({"output_type": "display_data", "data": {widget: {"model_id": "def"}}})
    error = {
        "output_type": "error",
        "ename": "NameError",
        "evalue": "name 'x' is not defined",
        "traceback": ["a"],
    }
    assert output_lines(error) == ["[error] NameError: name 'x' is not defined"]
