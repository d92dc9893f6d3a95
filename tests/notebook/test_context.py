"""Prompt context without a server: value summaries, placeholder filling, the last error, previews."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook.notebook.context import (
    PromptContextError,
    fix_prompt,
    interpolate,
    last_error,
    summarize,
)


def test_dataframe_summary_has_shape_dtypes_and_head_not_every_row() -> None:
    """Dataframe summary has shape dtypes and head not every row."""
    df = pd.DataFrame({"city": [f"c{i}" for i in range(1000)], "temp": [float(i) for i in range(1000)]})
    text = summarize(df).text
    assert text.startswith("DataFrame: 1,000 rows × 2 columns")
    assert "temp: float64" in text
    assert "c4" in text and "c5 " not in text and "c999" not in text
    assert len(text) < 400


def test_series_array_and_collections_are_bounded_and_typed() -> None:
    """Series array and collections are bounded and typed."""
    series = summarize(pd.Series(range(100), name="n")).text
    assert series.startswith("Series 'n': 100 values, dtype int64")
    import numpy as np

    array = summarize(np.zeros((100, 100))).text
    assert array.startswith("ndarray shape=(100, 100) dtype=float64") and "..." in array
    big = summarize(list(range(10_000))).text
    assert big.startswith("list of 10,000 items: 0, 1") and "… [9,980 more items]" in big
    mapping = summarize({"a": 1, "b": [1, 2]}).text
    assert mapping == "dict of 2 items: 'a': 1, 'b': [1, 2]"


def test_long_string_is_cut_with_a_marker() -> None:
    """Long string is cut with a marker."""
    text = summarize("x" * 5000, limit=100).text
    assert text == "x" * 100 + "… [cut: 4,900 more characters]"


def test_a_broken_repr_does_not_stop_the_prompt() -> None:
    """A broken repr does not stop the prompt."""

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert "repr failed: RuntimeError" in summarize(Broken()).text


def test_figure_goes_as_a_png_attachment() -> None:
    """Figure goes as a png attachment."""

    class Figure:  # matplotlib is not installed here: the summary recognises the type by module and name
        dpi = 100

        def get_size_inches(self) -> Any:
            import numpy as np

            return np.array([6.4, 4.8])

        def savefig(self, buffer: Any, format: str, bbox_inches: str) -> None:  # noqa: A002 - matplotlib's name
            buffer.write(b"\x89PNG\r\n\x1a\nfake")

    Figure.__module__ = "matplotlib.figure"
    preview = interpolate("plot: {fig}", {"fig": Figure()})
    assert preview.text == "plot: [figure 640×480 px, attached as an image]"
    assert preview.images == [("image/png", b"\x89PNG\r\n\x1a\nfake")]
    assert "1 image(s) (12 bytes)" in str(preview)


def test_names_attributes_constant_subscripts_escapes_and_a_lone_brace() -> None:
    """Names, public attributes and constant subscripts are filled; ``{{``/``}}`` and a lone ``}`` stay
    braces."""

    class Run:
        lr = 0.01

    namespace = {"x": 1, "k": "a", "d": {"a": [1, 2]}, "xs": [10, 20, 30], "run": Run()}
    preview = interpolate(
        "{{x}} is {x}; d[{k}] = {d['a']}, {xs[0]}..{xs[-1]}, lr {run.lr}, {d['a'][1]} }", namespace
    )
    assert preview.text == "{x} is 1; d[a] = list of 2 items: 1, 2, 10..30, lr 0.01, 2 }"
    assert preview.values == [
        ("x", "int", 1),
        ("k", "str", 1),
        ("d['a']", "list", 21),
        ("xs[0]", "int", 2),
        ("xs[-1]", "int", 2),
        ("run.lr", "float", 4),
        ("d['a'][1]", "int", 1),
    ]


@pytest.mark.parametrize(
    ("placeholder", "what"),
    [
        ("__import__('pathlib').Path('PWNED').write_text('x')", "calls"),
        ("open('PWNED', 'w')", "calls"),
        ("x()", "calls"),
        ("x.__class__", "names starting with _"),
        ("x.__class__.__subclasses__", "names starting with _"),
        ("__builtins__", "names starting with _"),
        ("obj._private", "names starting with _"),
        ("x + 1", "operators"),
        ("-x", "operators"),
        ("x if x else x", "operators"),
        ("[y for y in x]", "comprehensions"),
        ("lambda: 1", "lambdas"),
        ("f'{x}'", "f-strings"),
        ("(y := 1)", "assignments"),
        ("xs[k]", "variable subscripts"),
        ("xs[1:2]", "slices"),
        ("'literal'", "literals"),
    ],
)
def test_anything_but_names_attributes_and_constant_subscripts_is_refused(
    placeholder: str, what: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call, dunder or private name, operator, comprehension, ... is refused in one line naming hn.raw,
    unrun."""
    monkeypatch.chdir(tmp_path)
    calls: list[str] = []

    class Obj:
        _private = "hidden"

        def __call__(self) -> None:
            calls.append("called")

    namespace = {"x": Obj(), "obj": Obj(), "xs": [1, 2, 3], "k": 0}
    with pytest.raises(PromptContextError) as info:
        interpolate(f"look: {{{placeholder}}}", namespace)
    message = str(info.value)
    assert message == (
        f"{{{placeholder}}} in the prompt: only names, public attributes and constant subscripts "
        f"are filled ({what} are not); send braces as written with hn.raw(text) or %hermes --raw"
    )
    assert not calls and not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("what is {nope}?", "{nope} in the prompt: 'nope' is not defined"),
        ("{a", "unclosed placeholder '{a'"),
        ("{}", "empty placeholder {}"),
        ("{1 +}", "cannot read {1 +} in the prompt"),
        ("{d['missing']}", "{d['missing']} in the prompt raised KeyError: 'missing'"),
        ("{d.nope}", "{d.nope} in the prompt raised AttributeError: 'dict' object has no attribute 'nope'"),
    ],
)
def test_bad_placeholders_are_one_line_errors(template: str, message: str) -> None:
    """Bad placeholders are one line errors."""
    with pytest.raises(PromptContextError) as info:
        interpolate(template, {"d": {}})
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.fixture
def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    return ip


def test_in_out_and_err_come_from_the_shell(shell: InteractiveShell) -> None:
    """In out and err come from the shell."""
    shell.run_cell("value = 6 * 7\nvalue", store_history=True)
    count = shell.execution_count - 1
    failing = shell.run_cell("def helper():\n    return {}['missing']\nhelper()", store_history=True)
    assert failing.error_in_exec is not None
    preview = interpolate(f"{{In[{count}]}} gave {{Out[{count}]}}; then {{Err}}", shell.user_ns, shell=shell)
    # Values that run over several lines are named in the sentence and shown in full above it.
    assert preview.text.startswith(f"`In[{count}]`:\n```python\nvalue = 6 * 7\nvalue\n```\n\n")
    assert "`Err` (KeyError: 'missing'):\n```\nTraceback (most recent call last):" in preview.text
    assert preview.text.endswith(f"`In[{count}]` gave 42; then `Err`")
    assert "return {}['missing']" in preview.text  # the traceback tail names the failing line
    info = last_error(shell)
    assert info.cell_source == "def helper():\n    return {}['missing']\nhelper()\n"
    fix = fix_prompt(shell, "")
    assert "Cell In[" in fix.text and "helper()" in fix.text and "KeyError: 'missing'" in fix.text


def test_secret_values_are_withheld_and_fix_scrubs_the_cells_key(shell: InteractiveShell) -> None:
    """``{db_password}`` and ``{cfg.db_password}`` fill ``<withheld: N chars>`` (the name says it is secret;
    no shape would catch ``hunter2``), so does a secret-named key in a mapping; ``%hermes fix`` sends a
    failing cell's ``OpenAI(api_key="...")`` and a DSN's password as ``********``."""
    from types import SimpleNamespace

    ns = {
        "db_password": "hunter2",
        "cfg": SimpleNamespace(db_password="hunter2"),
        "env": {"HOME": "/home/me", "AWS_SECRET_ACCESS_KEY": "hunter2x"},
    }
    text = interpolate("{db_password} | {cfg.db_password} | {env}", ns).text
    assert text == (
        "<withheld: 7 chars> | <withheld: 7 chars> | "
        "dict of 2 items: 'HOME': '/home/me', 'AWS_SECRET_ACCESS_KEY': <withheld: 8 chars>"
    )
    failing = shell.run_cell(
        'client = OpenAI(api_key="abcd1234efgh5678")  # postgresql://me:pw-42x@db/x\n'
        "raise ValueError('no model')",
        store_history=True,
    )
    assert failing.error_in_exec is not None
    fix = fix_prompt(shell, "").text
    assert "abcd1234efgh5678" not in fix and "pw-42x" not in fix
    assert 'OpenAI(api_key="********")' in fix and "postgresql://me:********@db/x" in fix


def test_err_before_any_error_is_a_clear_error() -> None:
    """Err before any error is a clear error."""
    code = textwrap.dedent("""
        import sys
        from hermes_notebook.notebook.context import PromptContextError, interpolate
        try:
            interpolate("{Err}", {})
        except PromptContextError as exc:
            print(exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("no error yet")


def test_summaries_do_not_import_pandas() -> None:
    """Summaries do not import pandas."""
    code = textwrap.dedent("""
        import sys
        from hermes_notebook.notebook.context import interpolate
        interpolate("{x} {y}", {"x": list(range(50)), "y": "text"})
        print(sorted(m for m in ("pandas", "numpy", "matplotlib") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ask_preview_sees_the_callers_locals_sync_and_async() -> None:
    """``ask``/``ask_async`` with ``context=True`` and ``preview=True`` fill from the calling function, send
    nothing."""
    import asyncio

    from hermes_notebook import connect

    client = connect(api_url="http://127.0.0.1:9", api_key="k" * 8)  # nothing is contacted by a preview
    try:
        rows = list(range(30))  # noqa: F841 - read by the prompt's placeholder
        assert client.ask("rows: {rows}", via="api", preview=True, context=True).text.startswith(
            "rows: list of 30 items: 0, 1"
        )

        async def inside() -> str:
            name = "async caller"  # noqa: F841 - read by the prompt's placeholder
            return (await client.ask_async("hi {name}", via="api", preview=True, context=True)).text

        assert asyncio.run(inside()) == "hi async caller"
        with pytest.raises(PromptContextError, match="'missing' is not defined"):
            client.ask("{missing}", via="api", context=True)
    finally:
        client.close()


PAYLOAD = "{__import__('pathlib').Path('PWNED').write_text('x')}"


def test_ask_sends_a_models_braces_as_written_by_default(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ask(f"...{reply.text}")`` with a model's braces in it runs nothing and sends the braces verbatim."""
    import asyncio

    import hermes_notebook as hn

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HERMES_API_KEY", "sk-test-" + "e" * 24)
    client = hn.connect(api_url="http://127.0.0.1:9", api_key="k" * 8)
    try:
        model_text = f"Sure. {PAYLOAD} and {{os.environ['HERMES_API_KEY']}}"
        assert (
            client.ask(f"Translate: {model_text}", via="api", preview=True).text == f"Translate: {model_text}"
        )

        async def later() -> str:
            return (await client.ask_async(f"Again: {model_text}", via="api", preview=True)).text

        assert asyncio.run(later()) == f"Again: {model_text}"
        assert not (tmp_path / "PWNED").exists()
    finally:
        client.close()


def test_context_true_and_fill_opt_in_to_filling() -> None:
    """``context=True`` and ``hn.fill(text)`` fill; ``hn.raw`` wins over ``context=True``; calls stay
    refused."""
    import hermes_notebook as hn

    client = hn.connect(api_url="http://127.0.0.1:9", api_key="k" * 8)
    try:
        city = "Oslo"  # noqa: F841 - read by the prompt's placeholder
        assert client.ask(hn.fill("weather in {city}?"), via="api", preview=True).text == "weather in Oslo?"
        assert (
            client.ask("weather in {city}?", via="api", preview=True, context=True).text == "weather in Oslo?"
        )
        assert client.ask("weather in {city}?", via="api", preview=True).text == "weather in {city}?"
        assert client.ask(hn.raw("in {city}"), via="api", preview=True, context=True).text == "in {city}"
        with pytest.raises(
            PromptContextError, match=r"\(calls are not\); send braces as written with hn.raw"
        ):
            client.ask(hn.fill(PAYLOAD), via="api", preview=True)
    finally:
        client.close()


def test_filled_values_are_scrubbed_of_the_connections_key_and_key_shapes() -> None:
    """A value holding the connection's own key or an ``sk-...`` key is filled as ``********``; a secret-named
    key's value is withheld whole."""
    import hermes_notebook as hn

    own_key = "own-api-key-0123456789"
    client = hn.connect(api_url="http://127.0.0.1:9", api_key=own_key, dashboard_token="dash-token-abcdef123")
    try:
        config = {  # noqa: F841 - read below, by the {config} placeholder
            "url": "http://x",
            "key": own_key,
            "openai": "sk-" + "a" * 32,
            "token": "dash-token-abcdef123",
        }
        preview = client.ask("my config: {config}", via="api", preview=True, context=True)
        assert own_key not in preview.text and "sk-aaaa" not in preview.text
        assert "dash-token-abcdef123" not in preview.text
        assert preview.text.count("********") == 2 and "'url': 'http://x'" in preview.text
        assert "'token': <withheld: 20 chars>" in preview.text
    finally:
        client.close()


def test_code_in_the_prompt_is_sent_as_written() -> None:
    """Braces inside fenced blocks and inline code stay code; placeholders around them are still filled."""
    template = (
        "Why does this fail with {n} rows?\n```python\nd = {'a': 1}\nprint(f\"{name}\")\n```\n"
        "and `{x}` vs {n}\n~~~\n{unclosed\n"
    )
    preview = interpolate(template, {"n": 3})
    assert preview.text == (
        "Why does this fail with 3 rows?\n```python\nd = {'a': 1}\nprint(f\"{name}\")\n```\n"
        "and `{x}` vs 3\n~~~\n{unclosed\n"
    )
    assert preview.values == [("n", "int", 1), ("n", "int", 1)]


def test_raw_sends_text_with_braces_as_written() -> None:
    """``ask(raw(text))`` fills nothing, for text that is already formatted (JSON, f-strings)."""
    import hermes_notebook as hn

    client = hn.connect(api_url="http://127.0.0.1:9", api_key="k" * 8)
    try:
        json_text = '{"a": {"b": 1}}'
        assert (
            client.ask(hn.raw(f"Explain {json_text}"), via="api", preview=True).text == f"Explain {json_text}"
        )
        assert client.ask(f"Explain {json_text}", via="api", preview=True).text == f"Explain {json_text}"
        with pytest.raises(PromptContextError):
            client.ask(f"Explain {json_text}", via="api", preview=True, context=True)
    finally:
        client.close()


def test_live_view_shows_the_prompt_as_sent_collapsed_when_values_were_filled() -> None:
    """The ``%hermes`` live view's state holds the filled prompt as a titled (collapsed) user part; unfilled,
    nothing."""
    from hermes_notebook.notebook.handle import TurnHandle, TurnOptions
    from hermes_notebook.notebook.presenters import WidgetPresenter
    from hermes_notebook.session import Conversation
    from hermes_notebook.settings import Settings

    never_run = Conversation(
        Settings.resolve(api_url="http://127.0.0.1:9")
    )  # never contacted: nothing starts

    sent = "check dict of 1 items: 'key': '********'"
    filled = WidgetPresenter(TurnHandle(TurnOptions(prompt=sent, via="api", filled=1), never_run))
    plain = WidgetPresenter(TurnHandle(TurnOptions(prompt="hello", via="api"), never_run))
    try:
        [message] = filled.view.snapshot()
        assert message["role"] == "user" and message["status"] == "complete"
        assert [(p["kind"], p["name"], p["text"]) for p in message["parts"]] == [
            ("text", "prompt as sent (1 value filled)", sent)
        ]
        assert plain.view.snapshot() == []
    finally:
        filled.view.close()
        plain.view.close()


def test_a_table_is_named_in_the_question_and_shown_in_full_above_it() -> None:
    """``What stands out in {sales}?``: the question keeps the variable's name and its question mark; the
    table's summary (headline, then the rest fenced) comes first, as context."""
    pd = pytest.importorskip("pandas")
    sales = pd.DataFrame({"city": ["Oslo", "Lima"], "units": [12, 40]})
    text = interpolate("What stands out in {sales}?", {"sales": sales}).text
    context, question = text.rsplit("\n\n", 1)
    assert question == "What stands out in `sales`?"
    assert context.startswith("`sales` (DataFrame: 2 rows × 2 columns):\n```\ndtypes: city:")
    assert context.endswith("1  Lima     40\n```")
