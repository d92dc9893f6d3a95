"""Reading one ``{placeholder}`` of a prompt: names, public attributes and constant subscripts, never code.

Why not ``eval``: a prompt can hold text someone else wrote (a model's reply pasted into an f-string), and
``eval`` would run whatever that text put in braces. So a placeholder is parsed (``ast.parse(...,
mode="eval")``) and walked: a name is looked up in the namespace, ``a.b`` is a plain ``getattr`` of a public
name, ``d['k']`` / ``xs[0]`` / ``xs[-1]`` index with a constant. Anything else (calls, operators,
comprehensions, lambdas, names starting with ``_``, f-strings, ...) is refused with one line before anything
is read. Properties and ``__getitem__`` of the user's own objects still run; that is the user's own code, not
the prompt's.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import HermesUsageError

__all__ = ["PromptContextError", "resolve"]

#: How to send braces without filling, named by every refusal.
RAW_HINT = "send braces as written with hn.raw(text) or %hermes --raw"
#: What an undefined name or unreadable placeholder says (literal braces are doubled).
LITERAL_HINT = "write {{ and }} for literal braces"


class PromptContextError(HermesUsageError):
    """Raised when a placeholder in a prompt cannot be filled (undefined name, refused expression, no error
    yet)."""


_REFUSED: list[tuple[tuple[type[ast.AST], ...], str]] = [
    ((ast.Call,), "calls"),
    ((ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp), "operators"),
    ((ast.Lambda,), "lambdas"),
    ((ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp), "comprehensions"),
    ((ast.JoinedStr, ast.FormattedValue), "f-strings"),
    ((ast.NamedExpr,), "assignments"),
    ((ast.Await, ast.Yield, ast.YieldFrom), "await and yield"),
    ((ast.Slice,), "slices"),
    ((ast.Starred,), "starred expressions"),
    ((ast.List, ast.Tuple, ast.Set, ast.Dict), "literal collections"),
    ((ast.Constant,), "literals"),
]


def _refuse(expr: str, what: str) -> PromptContextError:
    return PromptContextError(
        f"{{{expr}}} in the prompt: only names, public attributes and constant subscripts are filled "
        f"({what} are not); {RAW_HINT}"
    )


def _what(node: ast.AST) -> str:
    for types, what in _REFUSED:
        if isinstance(node, types):
            return what
    return f"{type(node).__name__} expressions"


def _constant_key(node: ast.expr) -> int | str | None:
    """``'k'``, ``0`` or ``-1`` as a subscript key; None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, str):
        return node.value if isinstance(node.value, (int, str)) else None
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        value = node.operand.value
        return -value if type(value) is int else None
    return None


def _check(expr: str, node: ast.expr) -> None:
    """Refuse the placeholder unless every node is an allowed one (before any value is read)."""
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            raise _refuse(expr, "names starting with _")
    elif isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            raise _refuse(expr, "names starting with _")
        _check(expr, node.value)
    elif isinstance(node, ast.Subscript):
        if _constant_key(node.slice) is None:
            raise _refuse(
                expr, _what(node.slice) if not isinstance(node.slice, ast.Name) else "variable subscripts"
            )
        _check(expr, node.value)
    else:
        raise _refuse(expr, _what(node))


def resolve(expr: str, namespace: Mapping[str, Any], missing: Callable[[str], Any] | None = None) -> Any:
    """The value of placeholder ``expr`` read from ``namespace``; :class:`PromptContextError` if refused or
    unreadable.

    ``missing(name)`` is asked for a name the namespace lacks (``Err``: the last error) and raises
    ``KeyError`` when it has none either.
    """
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise PromptContextError(
            f"cannot read {{{expr}}} in the prompt: {exc.msg} ({LITERAL_HINT}, or {RAW_HINT})"
        ) from None
    _check(expr, tree.body)
    return _read(expr, tree.body, namespace, missing)


def _read(
    expr: str, node: ast.expr, namespace: Mapping[str, Any], missing: Callable[[str], Any] | None
) -> Any:
    if isinstance(node, ast.Name):
        if node.id in namespace:
            return namespace[node.id]
        if missing is not None:
            try:
                return missing(node.id)
            except KeyError:
                pass
        raise PromptContextError(f"{{{expr}}} in the prompt: {node.id!r} is not defined ({LITERAL_HINT})")
    if isinstance(node, ast.Attribute):
        value = _read(expr, node.value, namespace, missing)
        return _step(expr, lambda: getattr(value, node.attr))
    assert isinstance(node, ast.Subscript)  # _check let nothing else through
    value = _read(expr, node.value, namespace, missing)
    key = _constant_key(node.slice)
    return _step(expr, lambda: value[key])


def _step(expr: str, read: Callable[[], Any]) -> Any:
    try:
        return read()
    except PromptContextError:
        raise
    except Exception as exc:
        text = " ".join(str(exc).split())
        raise PromptContextError(f"{{{expr}}} in the prompt raised {type(exc).__name__}: {text}") from None
