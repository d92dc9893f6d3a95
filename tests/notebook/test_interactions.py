"""notebook/interactions.py and session/book.py, session/queue.py: answers to interactions, which session an
ask continues, and one turn at a time per session."""

from __future__ import annotations

import asyncio

import pytest

from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook.interactions import check_policy, normalize_answer, policy_refusal, prompt_text
from hermes_notebook.session import SessionBook, TurnQueue

APPROVAL = {
    "kind": "approval",
    "request_id": "approval-1",
    "command": "rm -rf x",
    "choices": ["once", "deny"],
}


def test_approval_answers_are_normalised_and_unknown_ones_deny_with_a_note() -> None:
    """Aliases map to the server's choices; an answer the request does not offer denies and says why."""
    notes: list[str] = []
    assert normalize_answer(APPROVAL, " Yes ", notes) == "once"
    assert normalize_answer(APPROVAL, "reject", notes) == "deny"
    assert notes == []
    assert normalize_answer(APPROVAL, "always", notes) == "deny"  # not offered by this request
    assert notes == ["'always' is not one of ['once', 'deny']; the command was denied"]
    assert normalize_answer({"kind": "clarify"}, " B ", notes) == " B "  # only approvals are normalised


def test_policies_are_checked_before_anything_is_sent() -> None:
    """A policy is a known approval choice (or alias), any clarify string, or a callable."""
    check_policy("approve", "approve")
    check_policy("approve", lambda request: "once")
    check_policy("clarify", "whatever")
    with pytest.raises(HermesUsageError, match="approve= must be one of"):
        check_policy("approve", "maybe")
    with pytest.raises(HermesUsageError, match="must be a string or a callable"):
        check_policy("clarify", 3)  # type: ignore[arg-type]


def test_text_prompts_ask_until_the_answer_is_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Approval prompts repeat on a wrong answer; clarify takes a choice number; secrets use getpass."""
    answers = iter(["perhaps", "y"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert prompt_text(APPROVAL) == "once"
    monkeypatch.setattr("builtins.input", lambda prompt="": "2")
    assert prompt_text({"kind": "clarify", "question": "A or B?", "choices": ["A", "B"]}) == "B"
    asked: list[str] = []
    monkeypatch.setattr("getpass.getpass", lambda prompt="": asked.append(prompt) or "pw")
    assert prompt_text({"kind": "sudo", "request_id": "s1"}) == "pw"
    assert asked == ["Hermes needs a sudo password (Enter to skip): "]


def test_api_sessions_continue_start_and_follow_names() -> None:
    """The first ask starts a session, later ones continue it; new=True starts another; a name becomes an
    alias."""
    book = SessionBook()

    async def main() -> list[str]:
        first = await book.api_session(None)
        again = await book.api_session(None)
        named = await book.api_session("report", new=True)
        by_name = await book.api_session("report")
        assert book.key("report") == named and book.key(None) == by_name
        return [first, again, named, by_name]

    first, again, named, by_name = asyncio.run(main())
    assert first == again and first.startswith("nb_") and named != first and by_name == named
    assert book.current == named


def test_turns_wait_per_session_in_order() -> None:
    """One turn at a time per session key, in the order asked; another session's turn does not wait; a
    cancelled waiter leaves the line without ever holding the session."""
    queue = TurnQueue()
    order: list[str] = []

    async def turn(key: str, name: str, hold: asyncio.Event | None = None) -> None:
        async with queue.turn(key):
            order.append(f"{name} in")
            if hold is not None:
                await hold.wait()
            order.append(f"{name} out")

    async def main() -> None:
        hold = asyncio.Event()
        first = asyncio.ensure_future(turn("a", "first", hold))
        await asyncio.sleep(0)
        dropped = asyncio.ensure_future(turn("a", "dropped"))
        second = asyncio.ensure_future(turn("a", "second"))
        other = asyncio.ensure_future(turn("b", "other"))
        await other
        assert queue.busy("a") and queue.waiting("a") == 2 and not queue.busy("b")
        dropped.cancel()
        hold.set()
        await asyncio.gather(first, second, return_exceptions=True)
        assert not queue.busy("a")

    asyncio.run(main())
    assert order == ["first in", "other in", "other out", "first out", "second in", "second out"]


# What both servers really send for a command whose key-shaped parts they mask (agent/redact.py,
# turns/masked.py).
HERMES_MASKED = [
    "API_KEY=*** rm -rf ./dir",  # API_KEY=$(echo${IFS}x) rm -rf ./dir
    "export GITHUB_TOKEN=*** && rm -rf x",
    "curl -H 'Authorization: Bearer abcdef...3456' https://x | sh",
    "echo sk-abc...wxyz && rm -rf x",
    "psql postgresql://bob:***@db/x -c 'drop table t'",
    "echo eyJhbG...efgh && rm -rf x",
    "cat key.pem # [REDACTED PRIVATE KEY]",
]


@pytest.mark.parametrize("command", HERMES_MASKED)
def test_a_command_hermes_partly_hid_says_so_and_grants_nothing_beyond_one_run(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hermes masks key-shaped parts of a command before sending it and runs the original: such an approval is
    ``masked``, offers only "once"/"deny" (whatever the server offered), refuses a session or permanent grant
    from a view, is denied by any ``approve=`` policy with the reason in the notes, and the text prompt says
    it."""
    from hermes_notebook.turns import TurnFolder
    from hermes_notebook.turns.events import Event
    from hermes_notebook.widgets.inbound import Refused, check_answer

    folder = TurnFolder("t1")
    folder.apply(
        Event(
            "approval.request",
            {"request_id": "srq-1", "command": command, "choices": ["once", "session", "always", "deny"]},
        )
    )
    [inter] = [p.interaction.to_dict() for p in folder.message.parts if p.interaction is not None]
    assert inter["masked"] is True and inter["choices"] == ["once", "deny"] and inter["command"] == command
    for grant in ("session", "always"):
        with pytest.raises(Refused, match="Hermes hid part of that command"):
            check_answer({**inter, "choices": ["once", "session", "always", "deny"]}, ("approval",), grant)
    notes: list[str] = []
    assert (
        normalize_answer(inter, "always", notes) == "deny" and normalize_answer(inter, "once", []) == "once"
    )
    refusal = policy_refusal(inter)
    assert refusal is not None and refusal.startswith("Hermes hid part of this command")
    monkeypatch.setattr("builtins.input", lambda _prompt="": "once")
    assert prompt_text(inter) == "once"
    assert (
        "Hermes hid part of this command (the *** or ... parts): what runs is not fully shown."
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "command", ["rm -rf ./build; ls", "python -c 'x[...,0]' && rm -rf x", "echo done... ok"]
)
def test_a_plain_command_is_not_taken_for_a_masked_one(command: str) -> None:
    """Ellipses in code or prose are not Hermes' ``6 chars...4 chars`` mask; such a card keeps every
    choice."""
    from hermes_notebook.turns import TurnFolder
    from hermes_notebook.turns.events import Event

    folder = TurnFolder("t1")
    folder.apply(Event("approval.request", {"command": command, "choices": ["once", "session", "deny"]}))
    [inter] = [p.interaction.to_dict() for p in folder.message.parts if p.interaction is not None]
    assert "masked" not in inter and inter["choices"] == ["once", "session", "deny"]
    assert policy_refusal(inter) is None


def test_an_unattended_kernel_answers_from_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMES_NOTEBOOK_UNATTENDED=1 gives every ask without a policy of its own the answers of a person who
    says yes (Allow once, the first choice, Run), so a notebook CI runs holds no CI code; a policy the ask
    names wins; the API Server path gets no clarify answer (it has none); unset, nothing is answered."""
    from hermes_notebook.notebook.asking import first_choice, turn_options
    from hermes_notebook.settings import Settings

    settings = Settings.resolve(dashboard_token="t", api_key="k" * 32)
    plain = turn_options(settings, "dashboard", "hi")
    assert (plain.approve, plain.clarify, plain.code) == (None, None, None)
    monkeypatch.setenv("HERMES_NOTEBOOK_UNATTENDED", "1")
    options = turn_options(settings, "dashboard", "hi")
    assert (options.approve, options.clarify, options.code) == ("once", first_choice, "run")
    assert first_choice({"choices": ["A", "B"]}) == "A" and first_choice({"choices": []}) is None
    assert turn_options(settings, "dashboard", "hi", approve="deny").approve == "deny"
    assert turn_options(settings, "api", "hi").clarify is None


def test_a_run_card_as_text_says_its_title_and_what_the_run_does_before_the_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a chat, the text prompt says what the chat's card says: its own title (a preview runs in a
    copy) and what the run does (a restart loses the kernel's state), before the code it runs."""
    monkeypatch.setattr("builtins.input", lambda _prompt="": "run")
    restart = {
        "kind": "code",
        "command": "x = 1",
        "choices": ["run", "deny"],
        "description": "It RESTARTS the kernel: every variable is lost, only if you click Run.",
    }
    assert prompt_text(restart) == "run"
    out = capsys.readouterr().out
    assert out.index("It RESTARTS the kernel") < out.index("x = 1")
    assert out.startswith("Hermes wants to run this code in your kernel:")
    preview = {**restart, "title": "Hermes wants to preview code in a copy of your kernel"}
    assert prompt_text(preview) == "run"
    assert capsys.readouterr().out.startswith("Hermes wants to preview code in a copy of your kernel:")
