"""The checks every ask makes before anything is sent (``ask``, ``ask_async``, ``start``, ``%hermes``): one
place, so each refusal reads the same whichever face took the prompt.

``HERMES_NOTEBOOK_UNATTENDED=1`` in the kernel's environment says nobody is there to click: CI runs the
example notebooks that way, so their cells hold no code of CI's own. Every ask without a policy of its own
then answers an approval Allow once, a question with its first choice, and a Run card Run (what a person who
says yes to everything would click). A command Hermes partly hid is still denied
(:func:`.interactions.policy_refusal`). Never set it where a person works.
"""

from __future__ import annotations

import os
from typing import Any, TypedDict

from ..errors import HermesUsageError
from ..session import VIAS, Resume
from ..settings import Settings
from .handle import TurnOptions
from .interactions import Policy, check_policy

__all__ = ["UNATTENDED_ENV", "AskOptions", "check_unseen", "first_choice", "turn_options", "unattended"]

#: The environment variable that says nobody is there to answer (see the module docstring).
UNATTENDED_ENV = "HERMES_NOTEBOOK_UNATTENDED"


def unattended() -> bool:
    """Whether this kernel runs unattended (``HERMES_NOTEBOOK_UNATTENDED=1``)."""
    return os.environ.get(UNATTENDED_ENV) == "1"


def first_choice(request: dict[str, Any]) -> str | None:
    """An unattended answer to a question: its first choice (None for an open question: nobody to type)."""
    choices = request.get("choices") or []
    return str(choices[0]) if choices else None


class AskOptions(TypedDict, total=False):
    """The keyword options of ``ask`` and ``ask_async`` besides ``preview`` (their overloads take these)."""

    session: str | None
    via: str | None
    approve: Policy
    clarify: Policy
    new: bool
    instructions: str | None
    model: str | None
    images: Any
    timeout: float | None
    context: bool
    files: Any
    show: bool | None


def turn_options(
    settings: Settings,
    default_via: str,
    prompt: str,
    *,
    session: str | None = None,
    via: str | None = None,
    approve: Policy = None,
    clarify: Policy = None,
    new: bool = False,
    instructions: str | None = None,
    model: str | None = None,
    images: Any = None,
    files: Any = None,
    filled: int = 0,
    show: bool = True,
    unseen: str = "show=False shows nothing",
    follow: bool = True,
) -> TurnOptions:
    """The checked :class:`TurnOptions` of one ask, or :class:`HermesUsageError` naming what is wrong.

    ``show=False`` (and every ``hermes.map`` item: ``unseen`` says which) has no view whose buttons could
    answer an approval or a question, so both need a policy, refused here, before anything is sent."""
    if not isinstance(prompt, str):
        raise HermesUsageError(f"a prompt is text, not {type(prompt).__name__}")
    if not prompt.strip():
        raise HermesUsageError("the prompt is empty")
    path: str = via if via is not None else ("api" if instructions is not None else default_via)
    if path not in VIAS:
        raise HermesUsageError(f"via must be 'dashboard' or 'api', not {path!r}")
    check_policy("approve", approve)
    check_policy("clarify", clarify)
    if path == "api":
        if clarify is not None:
            raise HermesUsageError(
                "clarify is not available with via='api': the API Server's runs have no clarify questions "
                "(use via='dashboard')"
            )
        if images or files:
            raise HermesUsageError("images and files need via='dashboard' (API Server runs take text only)")
    else:
        if not settings.dashboard_token:
            raise HermesUsageError(
                "no Dashboard token: set HERMES_DASHBOARD_TOKEN (or pass dashboard_token= to connect()), "
                "or use via='api'"
            )
        if instructions is not None:
            raise HermesUsageError("instructions need via='api' (the Dashboard has no per-turn instructions)")
    if session is not None and (not isinstance(session, str) or not session.strip()):
        raise HermesUsageError("session must be a non-empty name or id")
    if new and isinstance(session, Resume):
        raise HermesUsageError(
            "new=True starts a session and hn.resume() joins a stored one: pass one of them"
        )
    code: Policy = None
    if unattended():
        approve = "once" if approve is None else approve
        clarify = first_choice if clarify is None and path == "dashboard" else clarify
        code = "run"
    if not show:  # after the unattended answers: a kernel nobody attends answers with them
        check_unseen(unseen, approve, clarify, questions=path != "api")
    return TurnOptions(
        prompt=prompt,
        session=session,
        via=path,
        approve=approve,
        clarify=clarify,
        code=code,
        new=bool(new),
        instructions=instructions,
        model=model,
        images=images,
        files=files,
        filled=filled,
        secrets=(settings.api_key, settings.dashboard_token),
        show=bool(show),
        follow=follow,
    )


def check_unseen(unseen: str, approve: Policy, clarify: Policy, *, questions: bool = True) -> None:
    """Refuse asks nobody can answer: with no view, approvals and questions (``questions``: the server asks
    them: the Dashboard) need a policy."""
    missing = [
        f"{name}= ({example})"
        for name, policy, example in (
            ("approve", approve, '"deny", "once" or a callable given the request'),
            ("clarify", clarify if questions else "", "an answer, or a callable given the question"),
        )
        if policy is None
    ]
    if missing:
        raise HermesUsageError(
            f"{unseen}, so nobody could answer an approval or a question: pass {' and '.join(missing)}, "
            "or set it for the connection (hermes.approve = ..., hermes.clarify = ...)"
        )
