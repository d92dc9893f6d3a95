"""The front end keeps the shape the Python side has: small modules, short functions, no import circles.

js/src is read as text (no node needed). A small lexer drops comments, strings, template text and regular
expressions, and keeps the tokens with their line numbers; from them the checks find each function (a
``function``, a method, an arrow) with the lines its body spans, and each module's relative imports. Every
check runs once on a source made to break it, so a checker that stopped seeing violations fails too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.test_conventions import import_cycles

ROOT = Path(__file__).resolve().parent.parent
JS_SRC = ROOT / "js" / "src"

#: No TypeScript module over this many lines (the Python modules' cap).
MAX_TS_MODULE_LINES = 500
#: No function (a ``function``, a method or an arrow, nested ones included in its span) over this many lines.
MAX_TS_FUNCTION_LINES = 150


@dataclass(frozen=True)
class Token:
    """One token of code: an identifier, a number, or one punctuator (``=>``, ``?.`` and ``...`` whole)."""

    text: str
    line: int


_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"\d[\w.]*")
_PUNCTUATORS = ("=>", "?.", "...")
#: After these a ``/`` starts a regular expression, not a division.
_REGEX_AFTER = frozenset("( , = : [ ! & | ? { } ; + - * % < > ~ ^".split()) | {
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "await",
    "yield",
    "=>",
    "",
}


def ts_tokens(source: str) -> list[Token]:
    """The code tokens of a TypeScript source: no comments, strings, template text or regex bodies."""
    tokens: list[Token] = []
    i, line, n = 0, 1, len(source)
    braces: list[str] = []  # "{" for a code brace, "${" for a template substitution
    previous = ""

    def template(i: int, line: int) -> tuple[int, int, bool]:
        """Skip template text from ``i``: (next index, line, True if a ``${`` substitution opened)."""
        while i < n:
            c = source[i]
            if c == "\\":
                i += 2
                continue
            if c == "\n":
                line += 1
            if c == "`":
                return i + 1, line, False
            if source.startswith("${", i):
                return i + 2, line, True
            i += 1
        return i, line, False

    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
        elif c in "'\"":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            tokens.append(Token('""', line))
            previous, i = '""', j + 1
        elif c == "`" or (c == "}" and braces and braces[-1] == "${"):
            if c == "}":
                braces.pop()
            i, line, opened = template(i + 1, line)
            if opened:
                braces.append("${")
            else:
                tokens.append(Token('""', line))
                previous = '""'
        elif c == "/" and previous in _REGEX_AFTER:
            j, in_class = i + 1, False
            while j < n and source[j] != "\n":
                if source[j] == "\\":
                    j += 2
                    continue
                if source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                elif source[j] == "/" and not in_class:
                    break
                j += 1
            j += 1
            while j < n and source[j].isalpha():
                j += 1
            tokens.append(Token('""', line))
            previous, i = '""', j
        elif match := _IDENT.match(source, i) or _NUMBER.match(source, i):
            tokens.append(Token(match.group(0), line))
            previous, i = match.group(0), match.end()
        else:
            text = next((p for p in _PUNCTUATORS if source.startswith(p, i)), c)
            if text == "{":
                braces.append("{")
            elif text == "}" and braces:
                braces.pop()
            tokens.append(Token(text, line))
            previous, i = text, i + len(text)
    return tokens


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CONTROL = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "typeof", "await"})
#: Words before a ``(`` that name no function (``async (a) =>``, ``x as (() => void)``).
_NOT_NAMES = frozenset(
    {"async", "as", "satisfies", "new", "in", "of", "void", "yield", "delete", "else", "do"}
)


def _matching(tokens: list[Token], at: int) -> int:
    """Index of the bracket closing the one at ``at`` (or the last token, on unbalanced input)."""
    depth = 0
    for k in range(at, len(tokens)):
        if tokens[k].text in _OPEN:
            depth += 1
        elif tokens[k].text in _OPEN.values():
            depth -= 1
            if depth == 0:
                return k
    return len(tokens) - 1


def _after_type(tokens: list[Token], at: int, *, named: bool) -> int:
    """From a return type's first token, the index of what ends it: the body's ``{``, an arrow's ``=>``, or
    anything that says this was no function (``;``, ``,``, a closer). A named function's return type may be a
    function type (``f(): (x: T) => void {``): its ``=>`` is the type's."""
    depth, k = 0, at
    while k < len(tokens):
        text = tokens[k].text
        before = tokens[k - 1].text if k > at else ":"
        if text == "{" and depth == 0 and before not in {":", "|", "&", "<", "(", ",", "=>", "[", "keyof"}:
            return k
        if text in _OPEN:
            k = _matching(tokens, k) + 1
            continue
        if text == "<":
            depth += 1
        elif text == ">" and depth > 0:
            depth -= 1
        elif depth == 0 and text in {";", ",", ")", "]", "}", "="} or (text == "=>" and not named):
            return k
        k += 1
    return k


def _body_end(tokens: list[Token], at: int) -> int:
    """The last token of an arrow's expression body starting at ``at``."""
    k = at
    while k < len(tokens):
        text = tokens[k].text
        if text in _OPEN:
            k = _matching(tokens, k) + 1
            continue
        if text in {",", ";", ")", "]", "}"}:
            return k - 1
        k += 1
    return len(tokens) - 1


@dataclass(frozen=True)
class Function:
    """A function in a TS source: what it is called (``<arrow>`` when it has no name) and its lines."""

    name: str
    start: int
    end: int

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


def ts_functions(source: str) -> list[Function]:
    """Every function of a TS source with the lines it spans: ``function`` declarations and expressions,
    methods (of classes and object literals, ``constructor`` and accessors included) and arrows."""
    tokens = ts_tokens(source)
    found: list[Function] = []
    arrows: set[int] = set()  # the ``=>`` of arrows found from their parameters
    in_type_until = 0  # a return type's tokens are no functions (``f(): (x: T) => void {``)
    for k, token in enumerate(tokens):
        if k < in_type_until:
            continue
        start: int | None = None
        name = "<arrow>"
        after: int | None = None  # the index after the parameters
        if token.text == "(":
            close = _matching(tokens, k)
            before = tokens[k - 1].text if k > 0 else ""
            if before == ">":  # type parameters: name<T>(
                depth, j = 0, k - 1
                while j > 0:
                    depth += {">": 1, "<": -1}.get(tokens[j].text, 0)
                    if depth == 0:
                        break
                    j -= 1
                before = tokens[j - 1].text if j > 0 else ""
            follows = tokens[close + 1].text if close + 1 < len(tokens) else ""
            if follows in {"{", ":", "=>"}:
                after = close + 1
                start = tokens[k].line
                named = _IDENT.fullmatch(before) is not None and before not in _CONTROL | _NOT_NAMES
                name = before if named and before != "function" else "<arrow>"
                if follows == "{" and not named:
                    start = None  # a parenthesised expression before a block: no function
        elif token.text == "=>" and k not in arrows and _IDENT.fullmatch(tokens[k - 1].text):
            found.append(_arrow_or_none(tokens, k, tokens[k - 1].line, "<arrow>"))
            continue
        if start is None or after is None:
            continue
        if tokens[after].text == ":":
            after = in_type_until = _after_type(tokens, after + 1, named=name != "<arrow>")
        if after >= len(tokens):
            continue
        if tokens[after].text == "{" and (name != "<arrow>" or before == "function"):
            found.append(Function(name, start, tokens[_matching(tokens, after)].line))
        elif tokens[after].text == "=>":
            arrows.add(after)
            found.append(_arrow_or_none(tokens, after, start, name if name != "<arrow>" else "<arrow>"))
    return [f for f in found if f.name != "<none>"]


def _arrow_or_none(tokens: list[Token], arrow: int, start: int, name: str) -> Function:
    body = arrow + 1
    if body >= len(tokens):
        return Function("<none>", start, start)
    end = _matching(tokens, body) if tokens[body].text == "{" else _body_end(tokens, body)
    return Function("<arrow>" if name in _CONTROL else name, start, tokens[end].line)


def ts_modules() -> dict[str, str]:
    """``{path from the repository root: source}`` of every TypeScript module in js/src."""
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(JS_SRC.rglob("*.ts"))
    }


def long_functions(sources: dict[str, str], limit: int = MAX_TS_FUNCTION_LINES) -> list[str]:
    """``path:line name (N lines)`` of each function over ``limit`` lines."""
    return [
        f"{path}:{f.start} {f.name} ({f.lines} lines)"
        for path, source in sources.items()
        for f in ts_functions(source)
        if f.lines > limit
    ]


def long_modules(sources: dict[str, str], limit: int = MAX_TS_MODULE_LINES) -> list[str]:
    """``path (N lines)`` of each module over ``limit`` lines."""
    return [
        f"{path} ({len(source.splitlines())} lines)"
        for path, source in sources.items()
        if len(source.splitlines()) > limit
    ]


_IMPORT = re.compile(r"""(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']""")
_BARE_IMPORT = re.compile(r"""(?:^|\n)\s*import\s*["']([^"']+)["']""")


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"(?m)^\s*//[^\n]*", "", source)


def ts_import_edges(sources: dict[str, str]) -> Iterator[tuple[str, str, str]]:
    """``(importer, imported, where)`` for each relative import or re-export, ``import type`` included (a
    circle of types is a circle of modules all the same)."""
    for path, source in sources.items():
        text = _strip_comments(source)
        for match in [*_IMPORT.finditer(text), *_BARE_IMPORT.finditer(text)]:
            spec = match.group(1)
            if not spec.startswith("."):
                continue
            base = (Path(path).parent / spec).as_posix()
            base = re.sub(r"(^|/)\./", r"\1", base)
            while "/../" in base:
                base = re.sub(r"[^/]+/\.\./", "", base, count=1)
            target = next((c for c in (f"{base}.ts", f"{base}/index.ts") if c in sources), f"{base}.ts")
            yield path, target, f"{path}:{text.count(chr(10), 0, match.start()) + 1}"


def ts_cycles(sources: dict[str, str]) -> list[list[str]]:
    """The import circles among the modules (each as the list of its modules)."""
    return import_cycles(ts_import_edges(sources))


# --- the checks -------------------------------------------------------------------------------------------


def test_no_typescript_module_over_500_lines() -> None:
    """No module of js/src is over 500 lines (types.ts had 752, chat/view.ts 606, jobs/view.ts 528)."""
    assert long_modules(ts_modules()) == []


def test_no_typescript_function_over_150_lines() -> None:
    """No function of js/src spans more than 150 lines (``createChatView`` had 454, with about 20 mutable
    locals: the chat view is now components that each own their state)."""
    assert long_functions(ts_modules()) == []


def test_no_typescript_import_circles() -> None:
    """No circle among js/src's imports, type-only ones included (chat/parts.ts and chat/activity.ts imported
    each other: ``PartView`` has its own module now)."""
    assert ts_cycles(ts_modules()) == []


def test_the_checkers_see_violations() -> None:
    """Each check fails on a source made to break it, and its reader finds the shapes the code uses."""
    body = "\n".join(f"  const v{i} = {i};" for i in range(151))
    sources = {
        "js/src/a.ts": (
            f'import type {{ B }} from "./b";\nexport function long(): {{ x: number }} {{\n{body}\n}}\n'
        ),
        "js/src/b.ts": 'import { long } from "./a";\nexport type B = ReturnType<typeof long>;\n',
        "js/src/c.ts": "\n" * 501,
    }
    assert long_functions(sources) == ["js/src/a.ts:2 long (153 lines)"]
    assert long_modules(sources) == ["js/src/c.ts (501 lines)"]
    assert ts_cycles(sources) != []
    shapes = """
    // function ghost() {
    const text = "function ghost() {";
    const re = /[{(]/g;
    class A extends B {
      constructor(x: number) {
        super(`${x} }`);
      }
      get size(): number {
        return 1;
      }
      private method<T>(a: T): { ok: boolean } {
        if (a) {
          return { ok: true };
        }
        return { ok: false };
      }
    }
    const arrow = async (a: number): Promise<void> => {
      await a;
    };
    const one = x => x + 1;
    function typed(): (x: number) => void {
      return (x) => {};
    }
    const obj = { run(a) { return a; }, f: function named() { return 0; } };
    """
    found = [(f.name, f.start, f.lines) for f in ts_functions(shapes)]
    assert found == [
        ("constructor", 6, 3),
        ("size", 9, 3),
        ("method", 12, 6),
        ("<arrow>", 19, 3),
        ("<arrow>", 22, 1),
        ("typed", 23, 3),
        ("<arrow>", 24, 1),
        ("run", 26, 1),
        ("named", 26, 1),
    ], found


def test_every_module_is_read_whole() -> None:
    """The lexer keeps every module's brackets balanced (a string, template or regex it misread would not), so
    the checks above read the code the compiler reads."""
    unbalanced = []
    for path, source in ts_modules().items():
        depth = 0
        for token in ts_tokens(source):
            depth += {"{": 1, "}": -1, "(": 1, ")": -1, "[": 1, "]": -1}.get(token.text, 0)
            if depth < 0:
                break
        if depth != 0:
            unbalanced.append(f"{path}: {depth:+d}")
    assert unbalanced == []
    # template text and strings drop out, a substitution's code stays, a regex after ";" is one token
    tokens = [t.text for t in ts_tokens('const a = `x ${"}"} ${b}` / 2; // }\n/[}]/.test(c);')]
    assert tokens == [
        "const",
        "a",
        "=",
        '""',
        "b",
        '""',
        "/",
        "2",
        ";",
        '""',
        ".",
        "test",
        "(",
        "c",
        ")",
        ";",
    ]
