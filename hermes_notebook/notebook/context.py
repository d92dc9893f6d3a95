"""The kernel's values as prompt context: ``{name}``, ``{obj.attr}``, ``{d['k']}``, ``{In[n]}``, ``{Out[n]}``,
``{Err}``.

Why a module of its own: a prompt that quotes a DataFrame should not paste megabytes of ``str(df)`` into the
model, and a typo in a placeholder should fail before anything is sent. Each value becomes a bounded, typed
summary (:func:`~hermes_notebook.shell.values.summarize`: a secret-named value is withheld), scrubbed of
secrets; a figure becomes an image attachment. ``{{`` and ``}}`` are literal braces. A placeholder is read,
never run (:mod:`~hermes_notebook.shell.placeholders`). ``%hermes`` fills placeholders; ``ask()`` sends its
prompt as written unless asked to fill (``context=True`` or :func:`fill`).

Nothing here imports pandas, numpy or matplotlib: values are recognised by their type's module and name, so
the summaries work when those libraries are installed and cost nothing when they are not.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import HermesUsageError
from ..inert import escape_html, html_block, markdown_fence, terminal_safe
from ..scrub import scrub
from ..shell.last_error import ErrorInfo, last_error
from ..shell.placeholders import PromptContextError, resolve
from ..shell.values import Summary, cut, summarize

__all__ = [
    "FillPrompt",
    "PromptContextError",
    "PromptPreview",
    "RawPrompt",
    "Summary",
    "caller_namespace",
    "fill",
    "fix_prompt",
    "interpolate",
    "last_error",
    "merge_images",
    "prepare_ask",
    "prepare_magic",
    "raw",
    "summarize",
]

#: Characters of a cell's source quoted by ``%hermes fix``.
CELL_CHARS = 4000


class RawPrompt(str):
    """A prompt sent exactly as written: ``ask(raw(text))`` fills no ``{placeholder}`` (for text with
    braces)."""


class FillPrompt(str):
    """A prompt whose ``{placeholders}`` ``ask`` fills from the caller's values: ``ask(fill("Explain
    {df}"))``."""


def raw(text: str) -> RawPrompt:
    """Mark ``text`` to be sent as written, e.g. ``%hermes`` text or ``hermes.ask(raw(f"Explain
    {json_text}"))``."""
    return RawPrompt(text)


def fill(text: str) -> FillPrompt:
    """Mark ``text`` to have its placeholders filled by ``ask`` (``ask`` sends text as written by default).

    Only for text you wrote: ``hermes.ask(hn.fill("what stands out in {df}?"))``. Never wrap text that came
    from a model or a file; its braces would read your variables into the prompt.
    """
    return FillPrompt(text)


@dataclass
class PromptPreview:
    """Exactly what a prompt will send: the text, the attachments, and what each placeholder became."""

    text: str
    images: list[tuple[str, bytes]] = field(default_factory=list)
    #: (placeholder, kind, characters) for every ``{...}`` that was filled.
    values: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def size(self) -> int:
        """Bytes sent: the prompt in UTF-8 plus the attachments."""
        return len(self.text.encode()) + sum(len(data) for _, data in self.images)

    def header(self) -> str:
        chars = len(self.text)
        images = sum(len(data) for _, data in self.images)
        line = f"dry run, nothing sent: {chars:,} characters ({len(self.text.encode()):,} bytes)"
        if self.images:
            line += f" + {len(self.images)} image(s) ({images:,} bytes)"
        filled = ", ".join(f"{{{p}}} -> {k} ({n:,} chars)" for p, k, n in self.values)
        return line + (f"\nfilled: {filled}" if filled else "")

    def __str__(self) -> str:
        return terminal_safe(
            f"{self.header()}\n---\n{self.text}"
        )  # filled values can be model or server text

    def __repr__(self) -> str:
        return f"<PromptPreview {len(self.text)} chars, {len(self.images)} image(s)>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        # The filled-in values can hold model or server text: escaped, in the inert (MathJax-ignored)
        # container.
        return html_block(
            f'<div style="opacity:.8">{escape_html(self.header())}</div>'
            f'<pre style="white-space:pre-wrap">{escape_html(self.text)}</pre>',
            extra_class="hn-preview",
        )


def fix_prompt(shell: Any = None, question: str = "", secrets: Sequence[object] = ()) -> PromptPreview:
    """The prompt of ``%hermes fix``: the failing cell's source and the traceback tail, then a question.

    Scrubbed (:func:`~hermes_notebook.scrub.scrub` with the connection's ``secrets``): a cell or traceback
    that holds a key sends ``********`` instead.
    """
    try:
        err = last_error(shell)
    except PromptContextError as exc:
        raise PromptContextError(f"{exc} (a prompt that starts with 'fix': %hermes -- fix ...)") from None
    ask = question.strip() or "Why does this fail, and how do I fix it?"
    parts = [f"My notebook cell raised {err.type}. {ask}"]
    if err.cell_source:
        fence = "````" if "```" in err.cell_source else "```"
        parts.append(
            f"Cell {err.cell_label}:\n{fence}python\n{cut(err.cell_source.rstrip(), CELL_CHARS)}\n{fence}"
        )
    parts.append(f"Error:\n```\n{err.summary()}\n```")
    text = scrub("\n\n".join(parts), secrets)
    return PromptPreview(text, values=[("Err", "error", len(scrub(err.summary(), secrets)))])


# --- interpolation ----------------------------------------------------------------------------------------

_OPEN = "([{"
_CLOSE = {")": "(", "]": "[", "}": "{"}


def _placeholder_end(template: str, start: int) -> int:
    """Index of the ``}`` closing the placeholder opened at ``start`` (brackets and quotes nest)."""
    stack: list[str] = []
    quote: str | None = None
    i = start + 1
    while i < len(template):
        char = template[i]
        if quote is not None:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            stack.append(char)
        elif char in _CLOSE:
            if not stack:
                if char == "}":
                    return i
                break
            if stack.pop() != _CLOSE[char]:
                break
        i += 1
    snippet = template[start : start + 40]
    raise PromptContextError(
        f"unclosed placeholder {snippet!r} in the prompt (write {{{{ and }}}} for literal braces)"
    )


def _evaluate(expr: str, namespace: Mapping[str, Any], shell: Any) -> Any:
    """The placeholder's value, read by :func:`~hermes_notebook.shell.placeholders.resolve` (never ``eval``);
    ``Err``: the last error."""

    def missing(name: str) -> Any:
        if name == "Err":
            return last_error(shell)
        raise KeyError(name)

    return resolve(expr, namespace, missing)


def _render(expr: str, value: Any, shell: Any) -> Summary:
    if isinstance(value, ErrorInfo):
        return Summary("error", value.summary())
    if expr.replace(" ", "").startswith("In[") and isinstance(value, str):
        fence = "````" if "```" in value else "```"
        return Summary("cell", f"{fence}python\n{cut(value.rstrip(), CELL_CHARS)}\n{fence}")
    return summarize(value, name=_last_name(expr))


def _last_name(expr: str) -> str | None:
    """The name a placeholder reads its value by: ``db_password`` of ``{cfg.db_password}``, ``api_key`` of
    ``{d['api_key']}`` (a secret-looking one withholds the value)."""
    last = re.findall(r"[A-Za-z_]\w*|'[^']*'|\"[^\"]*\"", expr)
    return last[-1].strip("'\"") if last else None


#: Markdown code: a fenced block (to its closing fence, or the end) or an inline span. Braces in code are
# code.
_CODE = re.compile(r"(^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\2[ \t]*$|\Z)|`[^`\n]+`)", re.M | re.S)


def interpolate(
    template: str, namespace: Mapping[str, Any], *, shell: Any = None, secrets: Sequence[object] = ()
) -> PromptPreview:
    """Fill every ``{placeholder}`` from ``namespace`` with its scrubbed summary; ``{{``/``}}`` are literal
    braces.

    A placeholder is a name, public attributes and constant subscripts (``{df}``, ``{run.config.lr}``,
    ``{d['k']}``, ``{In[3]}``), read and never run. Code in the prompt (fenced blocks and inline backtick
    spans) is sent as written: a pasted dict literal or f-string stays code. Raises
    :class:`PromptContextError` (one line, before anything is sent) for an undefined name, a refused
    expression (a call, an operator, ...), a read that fails, or an unclosed brace. A ``}`` with no ``{`` is
    kept as it is. Each filled value goes through :func:`~hermes_notebook.scrub.scrub` with ``secrets`` (the
    connection's key and token).
    """
    result = PromptPreview("")
    last = 0
    pieces: list[str] = []
    blocks: list[str] = []
    for code in _CODE.finditer(template):
        _fill(template[last : code.start()], namespace, shell, pieces, result, secrets, blocks)
        pieces.append(code.group(0))
        last = code.end()
    _fill(template[last:], namespace, shell, pieces, result, secrets, blocks)
    # A value that runs over several lines is named where it was asked about and shown in full above the
    # prompt, as context (the question stays one sentence; its ? does not end up on a table's last row).
    result.text = "".join([*(f"{block}\n\n" for block in blocks), *pieces])
    return result


def _named_block(expr: str, text: str) -> str:
    """A multi-line value as context: its name and headline (``DataFrame: 4 rows × 3 columns``), then the rest
    in a fence (a cell's source is one already)."""
    if text.lstrip().startswith(("```", "~~~")):
        return f"`{expr}`:\n{text}"
    head, _, rest = text.partition("\n")
    return f"`{expr}` ({head}):\n{markdown_fence(rest)}"


def _fill(
    template: str,
    namespace: Mapping[str, Any],
    shell: Any,
    out: list[str],
    result: PromptPreview,
    secrets: Sequence[object],
    blocks: list[str],
) -> None:
    images, values = result.images, result.values
    i = 0
    while i < len(template):
        char = template[i]
        if char == "{" and template.startswith("{{", i):
            out.append("{")
            i += 2
        elif char == "}" and template.startswith("}}", i):
            out.append("}")
            i += 2
        elif char == "{":
            end = _placeholder_end(template, i)
            expr = template[i + 1 : end].strip()
            if not expr:
                raise PromptContextError("empty placeholder {} in the prompt (write {{}} for literal braces)")
            summary = _render(expr, _evaluate(expr, namespace, shell), shell)
            text = scrub(summary.text, secrets)
            if "\n" in text.strip():
                blocks.append(_named_block(expr, text.strip()))
                out.append(f"`{expr}`")
            else:
                out.append(text)
            images.extend(summary.images)
            values.append((expr, summary.kind, len(text)))
            i = end + 1
        else:
            out.append(char)
            i += 1


def caller_namespace(depth: int = 2) -> dict[str, Any]:
    """The globals and locals of the code that called our caller (a notebook cell: the user namespace)."""
    frame = sys._getframe(depth)
    return {**frame.f_globals, **frame.f_locals}


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return get_ipython()


def prepare_ask(prompt: object, *, context: bool = False, secrets: Sequence[object] = ()) -> PromptPreview:
    """``ask``'s prompt as it will be sent: as written, unless ``context=True`` or :func:`fill` asks for
    filling.

    Why not fill by default: ``ask(f"Translate: {reply.text}")`` puts someone else's text in the prompt, and
    its braces must stay text. Filling reads the namespace of ``ask``'s caller; :func:`raw` always wins. A
    :class:`PromptPreview` (from ``preview=True`` or ``%hermes``) is sent as it is.
    """
    if isinstance(prompt, PromptPreview):
        return prompt
    if not isinstance(prompt, str):
        raise HermesUsageError(f"the prompt must be a string, not {type(prompt).__name__}")
    if isinstance(prompt, RawPrompt) or not (context or isinstance(prompt, FillPrompt)):
        return PromptPreview(str(prompt))
    return interpolate(prompt, caller_namespace(3), shell=_shell(), secrets=secrets)


def prepare_magic(
    prompt: str, shell: Any, *, raw: bool = False, secrets: Sequence[object] = ()
) -> PromptPreview:
    """``%hermes``'s prompt filled from the user namespace and scrubbed of ``secrets`` (``raw``: sent as
    written)."""
    if raw:
        return PromptPreview(prompt)
    return interpolate(prompt, getattr(shell, "user_ns", {}) or {}, shell=shell, secrets=secrets)


def merge_images(preview: PromptPreview, images: Any) -> Any:
    """The caller's own ``images=`` followed by the figures the placeholders attached (None when neither)."""
    if not preview.images:
        return list(images) if images is not None and not isinstance(images, list) else images
    return list(images or ()) + list(preview.images)
