"""Who answers an approval, clarify, sudo or secret request, and how an answer is checked.

A policy (``approve=`` / ``clarify=``: a choice string or a callable given the request dict) answers first;
otherwise the live view's buttons or a text prompt (``input()``/``getpass``) on the main thread. Everything
the prompt writes goes through :func:`_say` / :func:`_ask` (:func:`~hermes_notebook.inert.terminal_safe`):
server text carries no escape sequence to the terminal or notebook stream it asks on.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import HermesUsageError
from ..inert import CARD_LINES, reveal, reveal_lines, terminal_safe
from ..turns import APPROVAL_CHOICES, CODE_CHOICES, DEFAULT_APPROVAL_CHOICES, MASKED_APPROVAL_CHOICES
from ..turns.masked import MASKED_NOTICE

__all__ = [
    "APPROVAL_ALIASES",
    "APPROVAL_CHOICES",
    "Policy",
    "check_policy",
    "normalize_answer",
    "policy_refusal",
    "prompt_text",
]

#: A policy: a fixed answer, or a callable given the request dict (kind, command/question, choices, ...)
#: returning the answer (``None`` means "ask interactively after all").
Policy = str | Callable[[dict[str, Any]], str | None] | None

#: Friendlier spellings accepted for approval answers (the servers know only the four choices).
APPROVAL_ALIASES = {
    "approve": "once",
    "approved": "once",
    "allow": "once",
    "yes": "once",
    "y": "once",
    "ok": "once",
    "no": "deny",
    "n": "deny",
    "reject": "deny",
    "denied": "deny",
}


def normalize_answer(request: Mapping[str, Any], answer: str, notes: list[str]) -> str:
    """An approval answer as one of the request's choices (an unknown one denies, with a note)."""
    if request.get("kind") == "code":  # runs only on an exact "run": anything else leaves the kernel alone
        return answer if answer in (request.get("choices") or CODE_CHOICES) else "deny"
    if request.get("kind") != "approval":
        return answer
    choice = answer.strip().lower()
    choice = APPROVAL_ALIASES.get(choice, choice)
    # No choices from the server: only what grants nothing beyond this command (the card offers the same
    # pair).
    allowed = list(request.get("choices") or DEFAULT_APPROVAL_CHOICES)
    if request.get("masked"):  # Hermes hid part of the command: never a session or permanent grant
        allowed = [c for c in allowed if c in MASKED_APPROVAL_CHOICES]
    if choice not in allowed:
        # Fail closed: an answer outside the offered choices is refused, never mapped onto another choice.
        notes.append(f"{answer!r} is not one of {allowed}; the command was denied")
        return "deny"
    return choice


def policy_refusal(request: Mapping[str, Any]) -> str | None:
    """Why a policy (``approve=``) may not answer this request, or None. A command Hermes partly hid is never
    approved unattended: nobody could have seen what runs. The reply's notes say so; the answer is "deny"."""
    if request.get("kind") == "approval" and request.get("masked"):
        return f"{MASKED_NOTICE} approve= does not answer such a command, so it was denied."
    return None


def check_policy(name: str, policy: Policy) -> None:
    """Raise ``HermesUsageError`` naming ``name=`` when the policy is neither a known choice nor a
    callable."""
    if policy is None or callable(policy):
        return
    if not isinstance(policy, str):
        raise HermesUsageError(f"{name}= must be a string or a callable, not {type(policy).__name__}")
    if name == "approve":
        choice = APPROVAL_ALIASES.get(policy.strip().lower(), policy.strip().lower())
        if choice not in APPROVAL_CHOICES:
            raise HermesUsageError(
                f"approve= must be one of {', '.join(APPROVAL_CHOICES)} (or a callable), not {policy!r}"
            )


def _say(text: str) -> None:
    """Print one line of the prompt with no control character in it (no escape sequence can hide the
    command)."""
    print(terminal_safe(text))


def _ask(prompt: str) -> str:
    return input(terminal_safe(prompt))


def _print_command(command: str, limit: int | None) -> None:
    """The command as it will run (hidden characters and blank runs made visible), and how much is not
    shown."""
    lines, hidden = reveal_lines(command, limit if limit is not None else sys.maxsize)
    _say(f"Hermes wants to run: {lines[0]}")
    for line in lines[1:]:
        _say(f"  | {line}")
    if hidden:
        _say(f"  ... {hidden} more line{'s' if hidden != 1 else ''} hidden (type 'show' to see them all)")


def prompt_text(request: Mapping[str, Any]) -> str:
    """Ask for the answer on stdin (``getpass`` for a sudo password or secret: never echoed)."""
    kind = request.get("kind")
    if kind == "approval":
        choices = list(request.get("choices") or DEFAULT_APPROVAL_CHOICES)
        command = str(request.get("command") or "(a command)")
        _print_command(command, CARD_LINES)
        if request.get("masked"):
            _say(f"  {MASKED_NOTICE}")
        if request.get("description"):
            _say(f"  ({reveal(str(request['description']))})")
        while True:
            answer = (
                _ask(f"Allow? [{'/'.join(map(reveal, choices))}] (Enter = deny): ").strip().lower() or "deny"
            )
            if answer == "show":
                _print_command(command, None)
                continue
            answer = APPROVAL_ALIASES.get(answer, answer)
            if answer in choices:
                return answer
            _say(f"  please type one of {', '.join(map(reveal, choices))}")
    if kind == "code":
        choices = list(request.get("choices") or CODE_CHOICES)
        # The card's own title where it has one (a preview runs in a copy), then what the run does (a restart
        # loses the kernel's state) before the code, as the chat's card says it.
        _say(f"{reveal(str(request.get('title') or 'Hermes wants to run this code in your kernel'))}:")
        if request.get("description"):
            _say(f"  {reveal(str(request['description']))}")
        _print_command(str(request.get("command") or ""), None)  # the whole code: it runs as shown
        answer = (
            _ask(f"Run it? [{'/'.join(map(reveal, choices))}] (Enter = deny): ").strip().lower() or "deny"
        )
        return answer if answer in choices else "deny"
    if kind == "clarify":
        _say(f"Hermes asks: {reveal(str(request.get('question') or ''))}")
        choices = list(request.get("choices") or [])
        for i, choice in enumerate(choices, 1):
            _say(f"  {i}) {reveal(str(choice))}")
        answer = _ask("Your answer: ").strip()
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return answer
    label = (
        "sudo password"
        if kind == "sudo"
        else reveal(str(request.get("question") or request.get("description") or "secret"))
    )
    return getpass.getpass(terminal_safe(f"Hermes needs a {label} (Enter to skip): "))
