"""The Python and TypeScript halves of the view contract agree: turns/changes.py and widgets/messages.py
against js/src/types/ (one module per widget: turns.ts, chat.ts, jobs.ts, with widget.ts and answers.ts for
what they share).

The TypeScript modules are read as text (no node needed): each ``export interface`` gives its keys, each
``export type X = "a" | "b"`` its string literals. A key or literal added on one side only fails here.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from hermes_notebook.turns import changes

TYPES_DIR = Path(__file__).resolve().parent.parent / "js" / "src" / "types"
#: The root of the repository (the contract's other modules are read from it).
ROOT = TYPES_DIR.parent.parent.parent

# TypeScript interface -> the TypedDict that mirrors it.
INTERFACES = {
    "Interaction": changes.InteractionDict,
    "Part": changes.PartDict,
    "Message": changes.MessageDict,
    "MessageChange": changes.MessageChange,
    "PartChange": changes.PartChange,
    "AppendChange": changes.AppendChange,
    "PatchChange": changes.PatchChange,
    "FinishChange": changes.FinishChange,
    "TodoItem": changes.TodoItemDict,
    "Subagent": changes.SubagentDict,
    "SubagentTool": changes.SubagentToolDict,
    "CellChange": changes.CellChangeDict,
    "Risk": changes.RiskDict,
    "ImageRef": changes.ImageDict,
    "ToolLabel": changes.ToolLabelDict,
}
LITERALS = {
    "MessageStatus": changes.MessageStatus,
    "PartKind": changes.PartKind,
    "ToolStatus": changes.ToolStatus,
    "InteractionKind": changes.InteractionKind,
    "InteractionStatus": changes.InteractionStatus,
    "TodoStatus": changes.TodoStatus,
    "SubagentStatus": changes.SubagentStatus,
    "CellChangeKind": changes.CellChangeKind,
    "RiskLevel": changes.RiskLevel,
    "ImageSource": changes.ImageSource,
}


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def ts_interfaces(source: str) -> dict[str, dict[str, str]]:
    """``{interface name: {key: type text}}`` for every top-level ``export interface`` (one key per line)."""
    found: dict[str, dict[str, str]] = {}
    for match in re.finditer(
        r"export interface (\w+)(?:<[^>]*>)?\s*\{(.*?)\n\}", _strip_comments(source), re.S
    ):
        keys: dict[str, str] = {}
        for line in match.group(2).splitlines():
            field = re.match(r"\s*(\w+)\??\s*:\s*(.+?);?\s*$", line)
            if field:
                keys[field.group(1)] = field.group(2)
        found[match.group(1)] = keys
    return found


def ts_string_unions(source: str) -> dict[str, set[str]]:
    """``{type name: {literals}}`` for every ``export type X = "a" | "b";`` made only of string literals."""
    found: dict[str, set[str]] = {}
    for match in re.finditer(r"export type (\w+)\s*=\s*([^;]+);", _strip_comments(source)):
        members = [m.strip() for m in match.group(2).split("|")]
        if members and all(re.fullmatch(r'"[^"]*"', m) for m in members):
            found[match.group(1)] = {m.strip('"') for m in members}
    return found


def _literal_values(alias: object) -> set[str]:
    return {str(value) for value in typing.get_args(alias)}


def type_modules() -> dict[str, str]:
    """``{module name: source}`` of js/src/types/."""
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(TYPES_DIR.glob("*.ts"))}


@pytest.fixture(scope="module")
def ts_source() -> str:
    """Every module of js/src/types/ in one text (each name is defined in one of them only: checked below)."""
    return "\n".join(type_modules().values())


def test_each_type_is_defined_in_one_module_and_the_widgets_have_theirs() -> None:
    """The shapes are split by widget (turns, chat, jobs; widget and answers shared), and no name is exported
    by two modules, so reading them as one text is reading the contract."""
    modules = type_modules()
    assert {"turns.ts", "chat.ts", "jobs.ts", "widget.ts", "answers.ts"} <= set(modules)
    names = [
        name
        for source in modules.values()
        for name in re.findall(r"^export (?:interface|type) (\w+)", _strip_comments(source), re.M)
    ]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert "export interface Message {" in modules["turns.ts"] and "ChatState" in modules["chat.ts"]
    assert (
        "export interface JobsState {" in modules["jobs.ts"]
        and "export interface Answers {" in modules["answers.ts"]
    )


@pytest.mark.parametrize(("ts_name", "typed_dict"), INTERFACES.items(), ids=list(INTERFACES))
def test_typed_dict_keys_match_the_typescript_interface(
    ts_source: str, ts_name: str, typed_dict: type
) -> None:
    """Each change record and Message/Part/Interaction TypedDict has exactly the keys of its TS interface."""
    interfaces = ts_interfaces(ts_source)
    assert ts_name in interfaces, f"js/src/types/ has no interface {ts_name}"
    assert sorted(typed_dict.__annotations__) == sorted(interfaces[ts_name])


@pytest.mark.parametrize("name", LITERALS, ids=list(LITERALS))
def test_status_and_kind_literals_match_the_typescript_unions(ts_source: str, name: str) -> None:
    """Every Literal alias (statuses, kinds) allows exactly the strings of the TS union of the same name."""
    unions = ts_string_unions(ts_source)
    assert name in unions, f"js/src/types/ has no string union {name}"
    assert _literal_values(LITERALS[name]) == unions[name]


def test_change_ops_match_the_typescript_op_literals(ts_source: str) -> None:
    """Each change record's ``op`` Literal is the op string its TS interface declares."""
    interfaces = ts_interfaces(ts_source)
    for ts_name in ("MessageChange", "PartChange", "AppendChange", "PatchChange", "FinishChange"):
        python_op = _literal_values(typing.get_type_hints(INTERFACES[ts_name])["op"])
        assert python_op == {interfaces[ts_name]["op"].strip('"')}, ts_name
    assert {f"{t}" for t in typing.get_args(changes.ChangeRecord)} == {
        f"{INTERFACES[name]}"
        for name in ("MessageChange", "PartChange", "AppendChange", "PatchChange", "FinishChange")
    }


def test_patch_fields_are_part_keys_without_id_and_kind(ts_source: str) -> None:
    """A patch may set any Part field but ``id`` and ``kind`` (TS: ``Partial<Omit<Part, "id" | "kind">>``)."""
    interfaces = ts_interfaces(ts_source)
    assert interfaces["PatchChange"]["fields"].replace(" ", "") == 'Partial<Omit<Part,"id"|"kind">>'
    assert set(changes.PartFields.__annotations__) == set(interfaces["Part"]) - {"id", "kind"}
    assert changes.PartFields.__required_keys__ == frozenset()


def test_the_parsers_see_a_difference() -> None:
    """The TS readers pick up keys, optional keys and unions, and skip comments (a self-test)."""
    source = (
        "// export interface Ghost { x: number; }\n"
        "export interface A {\n  a: string;\n  /** doc */\n  b?: number | null;\n}\n"
        'export type U = "x" | "y";\nexport type V = U | "z";\n'
    )
    assert ts_interfaces(source) == {"A": {"a": "string", "b": "number | null"}}
    assert ts_string_unions(source) == {"U": {"x", "y"}}


def test_message_role_literal_matches_the_typescript_field(ts_source: str) -> None:
    """``Role`` allows exactly the strings of the TS ``Message.role`` union."""
    role = ts_interfaces(ts_source)["Message"]["role"]
    assert _literal_values(changes.Role) == {m.strip().strip('"') for m in role.split("|")}


def test_one_image_limit_and_the_browser_stays_under_it() -> None:
    """``MAX_IMAGE_BYTES`` is defined once in the package; the composer's limit never lets through what it
    refuses."""
    import ast

    root = ROOT
    defined = [
        f"{path.relative_to(root)}"
        for path in (root / "hermes_notebook").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "MAX_IMAGE_BYTES" for t in node.targets)
    ]
    assert defined == ["hermes_notebook/client/dashboard/attachments.py"]
    from hermes_notebook.client.dashboard.attachments import MAX_IMAGE_BYTES
    from hermes_notebook.widgets import inbound

    assert (
        inbound.MAX_IMAGE_BYTES is MAX_IMAGE_BYTES
    )  # the kernel's check of browser images (widgets/inbound.py)
    composer = (root / "js" / "src" / "chat" / "composer.ts").read_text(encoding="utf-8")
    match = re.search(r"export const MAX_IMAGE_BYTES = ([\d\s*]+);", composer)
    assert match is not None
    browser_limit = 1
    for factor in match.group(1).split("*"):
        browser_limit *= int(factor)
    assert 0 < browser_limit <= MAX_IMAGE_BYTES


APPROVAL_WORDS = frozenset({"once", "session", "always", "deny"})


def approval_choice_literals(tree: object, label: str) -> list[str]:
    """``label:line`` of each tuple/list/set literal made of two or more approval choice strings."""
    import ast

    assert isinstance(tree, ast.AST)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) >= 2:
            values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(values) == len(node.elts) and set(values) <= APPROVAL_WORDS:
                found.append(f"{label}:{node.lineno}")
    return found


def test_approval_choices_are_spelled_out_once() -> None:
    """The approval choices and their default pair are written only in turns/model.py; every check and
    fallback (client, inbound browser messages, the notebook's text prompts) imports them from there."""
    import ast

    root = ROOT
    found = [
        hit
        for path in sorted((root / "hermes_notebook").rglob("*.py"))
        for hit in approval_choice_literals(
            ast.parse(path.read_text(encoding="utf-8")), f"{path.relative_to(root)}"
        )
    ]
    assert [hit.split(":")[0] for hit in found] == ["hermes_notebook/turns/model.py"] * 2, found
    source = 'A = ("once", "deny")\nB = ["once", "x"]\nC = {"session", "always"}\nD = ("deny",)\n'
    assert approval_choice_literals(ast.parse(source), "m.py") == ["m.py:1", "m.py:3"]  # a self-test


def test_the_view_offers_the_kernels_default_approval_pair() -> None:
    """An approval listing no choices shows the same buttons the kernel would accept
    (js/src/chat/interactions.ts)."""
    from hermes_notebook.turns import DEFAULT_APPROVAL_CHOICES

    source = (ROOT / "js" / "src" / "chat" / "interactions.ts").read_text(encoding="utf-8")
    match = re.search(r"DEFAULT_APPROVAL_CHOICES = \[([^\]]*)\]", source)
    assert match is not None, "interactions.ts no longer names DEFAULT_APPROVAL_CHOICES"
    assert tuple(re.findall(r'"([a-z]+)"', match.group(1))) == tuple(DEFAULT_APPROVAL_CHOICES)


# --- the widgets' messages: one idiom (js/src/invoke.ts, widgets/replies.py), both sides typed alike
# ------------


def ts_fields(source: str) -> dict[str, dict[str, bool]]:
    """``{interface: {key: optional}}`` for every top-level ``export interface`` (one key per line)."""
    found: dict[str, dict[str, bool]] = {}
    for match in re.finditer(
        r"export interface (\w+)(?:<[^>]*>)?\s*\{(.*?)\n\}", _strip_comments(source), re.S
    ):
        found[match.group(1)] = {
            field.group(1): field.group(2) == "?"
            for line in match.group(2).splitlines()
            if (field := re.match(r"\s*(\w+)(\??)\s*:", line))
        }
    return found


def ts_type_unions(source: str) -> dict[str, list[str]]:
    """``{type name: [member names]}`` for every ``export type X = A | B;`` made of names only."""
    found: dict[str, list[str]] = {}
    for match in re.finditer(r"export type (\w+)\s*=\s*([^;]+);", _strip_comments(source)):
        members = [m.strip() for m in match.group(2).split("|") if m.strip()]
        if members and all(re.fullmatch(r"[A-Z]\w*", m) for m in members):
            found[match.group(1)] = members
    return found


def _members(unions: dict[str, list[str]], name: str) -> list[str]:
    """The interfaces a union is made of, unions in it expanded."""
    return [
        leaf
        for member in unions[name]
        for leaf in (_members(unions, member) if member in unions else [member])
    ]


def _literal(source: str, interface: str) -> str:
    """The ``type`` literal of an interface."""
    match = re.search(
        rf"export interface {interface}\s*\{{[^}}]*?\btype: \"(\w+)\"", _strip_comments(source), re.S
    )
    assert match is not None, f"{interface} has no type literal"
    return match.group(1)


@pytest.mark.parametrize(
    ("union", "group"), [("KernelMsg", "CHAT_KERNEL_MESSAGES"), ("JobsKernelMsg", "JOBS_KERNEL_MESSAGES")]
)
def test_kernel_messages_match_the_typescript_unions(ts_source: str, union: str, group: str) -> None:
    """Every message the kernel sends a view is a TypedDict of widgets/messages.py with exactly the keys (and
    the optional ones) of the TS interface of the same name, and the TS union lists exactly those messages."""
    from hermes_notebook.widgets import messages

    typed = getattr(messages, group)
    fields, unions = ts_fields(ts_source), ts_type_unions(ts_source)
    assert sorted(_members(unions, union)) == sorted(t.__name__ for t in typed)
    for message in typed:
        ts = fields[message.__name__]
        assert sorted(message.__annotations__) == sorted(ts), message.__name__
        assert sorted(message.__optional_keys__) == sorted(k for k, optional in ts.items() if optional), (
            message.__name__
        )
        assert (
            _literal(ts_source, message.__name__)
            == typing.get_args(typing.get_type_hints(message)["type"])[0]
        )


@pytest.mark.parametrize(
    ("union", "table"), [("ChatChannelMsg", "CHAT_MESSAGES"), ("JobsViewMsg", "JOBS_MESSAGES")]
)
def test_view_messages_match_the_kernels_checks(ts_source: str, union: str, table: str) -> None:
    """Every message type a view may send has a TS interface whose fields are exactly the ones
    widgets/inbound.py checks for that type, and the kernel checks no type the view cannot send."""
    from hermes_notebook.widgets import inbound

    checks = getattr(inbound, table)
    fields = ts_fields(ts_source)
    sent = {_literal(ts_source, name): name for name in _members(ts_type_unions(ts_source), union)}
    assert sorted(sent) == sorted(checks)
    for kind, interface in sent.items():
        assert sorted(set(fields[interface]) - {"type"}) == sorted(checks[kind]), interface


def test_every_question_has_its_answer_on_both_sides(ts_source: str) -> None:
    """The questions (view messages with a ``request`` id) are the keys of TS ``Answers`` and of
    ``messages.QUESTIONS``, each answered by the same message on both sides, which can carry the id back."""
    from hermes_notebook.widgets import inbound, messages

    fields = ts_fields(ts_source)
    answers = {key: ts.strip() for key, ts in ts_interfaces(ts_source)["Answers"].items()}
    asked = sorted(
        kind
        for table in (inbound.CHAT_MESSAGES, inbound.JOBS_MESSAGES)
        for kind, f in table.items()
        if "request" in f
    )
    assert asked == sorted(answers) == sorted(messages.QUESTIONS)
    assert {k: v.__name__ for k, v in messages.QUESTIONS.items()} == answers
    assert all("request" in fields[name] for name in answers.values())
    assert _members({"U": ["A", "V"], "V": ["B"]}, "U") == [
        "A",
        "B",
    ]  # the union reader expands (a self-test)
