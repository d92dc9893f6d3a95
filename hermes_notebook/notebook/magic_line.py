"""Reading a ``%hermes`` line: its leading options, its permission-mode words, and prompts that end in ``?``.

Why apart from the magic: what a line means is plain text handling with rules of its own (a prompt is prose,
so an apostrophe is never a quote; ``--kernel read,allow`` spells modes as words; IPython must not read a
trailing ``?`` as a help request), and every error it raises is one line the magic shows as it is.
"""

from __future__ import annotations

import io
import re
import shlex

from IPython.core.error import UsageError

from ..inert import terminal_safe
from ..scrub import scrub

__all__ = ["KERNEL_MODES", "VALUE_OPTIONS", "kernel_modes", "one_line", "protect_prompts", "split_options"]

#: Options that take a value (the rest of a line after the options is the prompt, taken verbatim).
VALUE_OPTIONS = frozenset(
    {
        "-s",
        "--session",
        "--via",
        "-o",
        "--out",
        "--instructions",
        "--model",
        "--approve",
        "--clarify",
        "--timeout",
        "--kernel",
        "--profile",
        "--file",
    }
)
#: ``--kernel MODE[,MODE...]`` -> ``share_kernel(read=..., edit=..., run=...)``: each word sets one permission
# mode (the rest keep the safe defaults: reads off, edits propose, runs ask); ``read-only`` sets all three.
KERNEL_MODES: dict[str, dict[str, str]] = {
    "read": {"read": "on"},
    "no-read": {"read": "off"},
    "propose": {"edit": "propose"},
    "no-edit": {"edit": "off"},
    "ask": {"run": "ask"},
    "allow": {"run": "allow"},
    "never": {"run": "never"},
    "read-only": {"read": "on", "edit": "off", "run": "never"},
}

_OPTION = re.compile(r"\s*-")
_MAGIC_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<target>[\w.]+)[ \t]*=[ \t]*)?%hermes(?P<rest>(?:[ \t].*)?)$"
)


def kernel_modes(spec: str) -> dict[str, str]:
    """``read,allow`` -> ``{"read": "on", "run": "allow"}`` (argparse's ``type`` for ``--kernel``)."""
    modes: dict[str, str] = {}
    for word in filter(None, (w.strip() for w in spec.split(","))):
        if word not in KERNEL_MODES:
            raise ValueError(word)
        modes.update(KERNEL_MODES[word])
    if not modes:
        raise ValueError(spec)
    return modes


kernel_modes.__name__ = "kernel mode"  # argparse names the type in its error: "invalid kernel mode value"


def split_options(line: str) -> tuple[list[str], str]:
    """Leading ``-x`` options (shell-quoted values allowed) and the rest of the line verbatim as the prompt.

    Why not shlex the whole line: prompts are prose ("what's wrong?"), and an apostrophe must not be a quote.
    """
    stream = io.StringIO(line)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens: list[str] = []
    expect_value = False
    while True:
        rest = line[stream.tell() :]
        if not expect_value and not _OPTION.match(rest):
            return tokens, rest.strip()
        try:
            token = lexer.get_token()
        except ValueError as exc:  # unbalanced quote inside the options
            raise UsageError(f"cannot read the options: {exc}") from None
        if token is None:
            return tokens, ""
        tokens.append(token)
        if expect_value:
            expect_value = False
        elif token == "--":
            tokens.pop()
            return tokens, line[stream.tell() :].strip()
        elif token in VALUE_OPTIONS:
            expect_value = True


def one_line(error: BaseException, *secrets: object) -> str:
    """An error as one line for the terminal: server text in it carries no escape sequence and no secret."""
    text = " ".join(str(error).split()) or type(error).__name__
    return terminal_safe(scrub(text, secrets))


def protect_prompts(lines: list[str]) -> list[str]:
    """Input transformer: turn ``%hermes ...`` lines into plain calls before IPython reads a trailing ``?``.

    Why: IPython treats a line ending in ``?`` as a help request, so ``r = %hermes Which one?`` would show
    "Object `one` not found" instead of asking. ``%hermes?`` alone still shows the help; ``%%hermes`` cells
    are left alone (their body is the prompt).
    """
    if not lines or lines[0].lstrip().startswith("%%"):
        return lines
    out = []
    for line in lines:
        body = line.rstrip("\n")
        match = _MAGIC_LINE.match(body)
        if (
            match is None
            or not match.group("rest").strip()
            or body.rstrip().endswith(("%hermes?", "%hermes??"))
        ):
            out.append(line)
            continue
        call = f"get_ipython().run_line_magic('hermes', {match.group('rest').strip()!r})"
        target = match.group("target")
        newline = "\n" if line.endswith("\n") else ""
        out.append(f"{match.group('indent')}{target + ' = ' if target else ''}{call}{newline}")
    return out
