"""The one check of what a browser view sends the kernel.

A view's messages arrive over the comm from a page that also shows model output, so they are input like any
other: wrong types, huge strings, unknown ids and answers nobody asked for must change nothing. Every widget
passes each message through :func:`validate` (shape, types, sizes, per message type) before a handler sees
it, and answers through :func:`check_answer` (is that interaction pending, of that kind, and is the answer
one of its choices?) and :func:`check_open_turn` (is it a request of the turn running now?). A refusal is a
:class:`Refused` whose message says what was wrong; widgets show it as their notice line.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

# Largest image (decoded bytes): the one limit, shared with the dashboard client's attachments. The base64
# length is checked first, so nothing larger is ever decoded.
from ..session import MAX_FILES, MAX_IMAGE_BYTES
from ..turns.model import DEFAULT_APPROVAL_CHOICES, MASKED_APPROVAL_CHOICES

__all__ = [
    "CHAT_MESSAGES",
    "IMAGE_TYPES",
    "JOBS_MESSAGES",
    "MAX_FILES",
    "MAX_IMAGES",
    "MAX_IMAGE_BYTES",
    "MAX_PROMPT_CHARS",
    "MAX_QUEUED_PROMPTS",
    "MAX_VIEW_FILE_BYTES",
    "PROGRESS_MESSAGES",
    "Refused",
    "check_answer",
    "check_open_turn",
    "decode_files",
    "decode_images",
    "find_interaction",
    "validate",
]

#: Longest prompt accepted from the composer (characters).
MAX_PROMPT_CHARS = 100_000
#: Prompts waiting behind a running turn; one more is refused.
MAX_QUEUED_PROMPTS = 20
#: Images per prompt.
MAX_IMAGES = 8
#: Image types Hermes' models accept, with the bytes each file starts with.
IMAGE_TYPES: Mapping[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
#: Largest text file or PDF a view may send (decoded bytes; the composer says so first): a comm message of
#: tens of megabytes would stall the kernel's shell channel. Code (``ask(files=)``) may send larger ones.
MAX_VIEW_FILE_BYTES = 10 * 1024 * 1024
MAX_ID_CHARS = 256
MAX_FILE_NAME_CHARS = 200
MAX_ANSWER_CHARS = 10_000
MAX_SECRET_CHARS = 10_000
MAX_SCHEDULE_CHARS = 1_000
#: Longest notebook path the jobs view may name.
MAX_PATH_CHARS = 4_096
MAX_FORM_CHARS = 200_000
#: Longest slash command line (the Dashboard client's limit, client/dashboard/commands.py).
MAX_COMMAND_CHARS = 4000
#: Longest profile name taken from the picker (Hermes' own names are short; the name is checked again).
MAX_PROFILE_CHARS = 64


class Refused(ValueError):
    """A browser message that was not acted on; the message says why, for the widget's notice line."""


# --- field checks
# ---------------------------------------------------------------------------------------------

Check = Callable[[str, Any], Any]


def text(limit: int, *, empty: bool = True) -> Check:
    def check(name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise Refused(f"{name} must be text, not {_kind(value)}")
        if len(value) > limit:
            raise Refused(f"{name} is too long ({len(value)} characters; at most {limit})")
        if not empty and not value:
            raise Refused(f"{name} is empty")
        return value

    return check


def one_of(*choices: str) -> Check:
    def check(name: str, value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise Refused(f"{name} must be one of {', '.join(choices)}")
        return value

    return check


def optional(inner: Check) -> Check:
    def check(name: str, value: Any) -> Any:
        return None if value is None else inner(name, value)

    return check


def flag(name: str, value: Any) -> bool:
    """A yes/no choice (a JSON boolean)."""
    if not isinstance(value, bool):
        raise Refused(f"{name} must be true or false, not {_kind(value)}")
    return value


def request_number(name: str, value: Any) -> int | str | None:
    """A question's request id (js/src/invoke.ts), echoed back in its answer (an id string, or a small
    int)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53):
        return value
    if isinstance(value, str) and len(value) <= MAX_ID_CHARS:
        return value
    raise Refused(f"{name} must be a request number")


def run_number(name: str, value: Any) -> int:
    """Which approved run (``kernel/undo/last_run.py`` numbers them from 1)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 2**53:
        raise Refused(f"{name} must be a run number")
    return value


def image_index(name: str, value: Any) -> int:
    """Which of a part's images (``images[index]``, at most :data:`MAX_IMAGES` per part)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < MAX_IMAGES:
        raise Refused(f"{name} must be an image index (0 to {MAX_IMAGES - 1})")
    return value


def form(name: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise Refused(f"{name} must be an object, not {_kind(value)}")
    size = sum(len(v) if isinstance(v, str) else 16 for v in value.values()) + sum(map(len, map(str, value)))
    if len(value) > 50 or size > MAX_FORM_CHARS:
        raise Refused(f"{name} is too large")
    return dict(value)


def images(name: str, value: Any) -> list[Mapping[str, Any]]:
    """The attachment list: count, types and base64 length are checked here, before anything is decoded."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"{name} must be a list, not {_kind(value)}")
    if len(value) > MAX_IMAGES:
        raise Refused(f"too many images ({len(value)}; at most {MAX_IMAGES} per prompt)")
    limit = 4 * ((MAX_IMAGE_BYTES + 2) // 3)
    out: list[Mapping[str, Any]] = []
    for item in value:
        if not isinstance(item, Mapping):
            raise Refused("that attachment could not be read")
        mime, data = item.get("mime"), item.get("data")
        if mime not in IMAGE_TYPES:
            shown = mime[:40] if isinstance(mime, str) and mime else "an unknown type"
            raise Refused(f"only PNG, JPEG, GIF and WebP images can be attached (got {shown})")
        if not isinstance(data, str):
            raise Refused("that attachment could not be read")
        if len(data) > limit:
            raise Refused(f"that image is too large (more than {MAX_IMAGE_BYTES // (1024 * 1024)} MB)")
        out.append({"mime": mime, "data": data})
    return out


def files(name: str, value: Any) -> list[Mapping[str, Any]]:
    """Attached text files and PDFs: count, name and base64 length are checked here, before anything is
    decoded."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"{name} must be a list, not {_kind(value)}")
    if len(value) > MAX_FILES:
        raise Refused(f"too many files ({len(value)}; at most {MAX_FILES} per prompt)")
    limit = 4 * ((MAX_VIEW_FILE_BYTES + 2) // 3)
    out: list[Mapping[str, Any]] = []
    for item in value:
        file_name = item.get("name") if isinstance(item, Mapping) else None
        data = item.get("data") if isinstance(item, Mapping) else None
        if not isinstance(file_name, str) or not file_name.strip() or len(file_name) > MAX_FILE_NAME_CHARS:
            raise Refused("an attached file needs a name of at most 200 characters")
        if not isinstance(data, str):
            raise Refused("that attachment could not be read")
        if len(data) > limit:
            raise Refused(f"that file is too large (more than {MAX_VIEW_FILE_BYTES // (1024 * 1024)} MB)")
        out.append({"name": file_name, "data": data})
    return out


# --- message shapes
# -------------------------------------------------------------------------------------------

_IDS = {
    "message_id": text(MAX_ID_CHARS),
    "part_id": text(MAX_ID_CHARS),
    "request_id": text(MAX_ID_CHARS, empty=False),
}
_IDS_OF_PART = {"message_id": text(MAX_ID_CHARS, empty=False), "part_id": text(MAX_ID_CHARS, empty=False)}

#: What the chat and turn views may send: type -> field -> check. Other keys are dropped.
CHAT_MESSAGES: Mapping[str, Mapping[str, Check]] = {
    "snapshot": {},
    "older": {"before": text(MAX_ID_CHARS, empty=False)},  # a page of the messages before this one
    "send": {"text": text(MAX_PROMPT_CHARS), "images": images},
    "stop": {},
    "respond": {**_IDS, "response": text(MAX_ANSWER_CHARS)},
    "secret": {**_IDS, "kind": one_of("sudo", "secret"), "value": text(MAX_SECRET_CHARS)},
    "new_session": {},
    "switch_session": {"session_id": text(MAX_ID_CHARS, empty=False)},
    "refresh": {},
    "list_sessions": {"request": request_number},  # the picker opened: answered by a ``sessions`` message
    "export": {"format": text(16)},  # which formats: chat_export.on_export says, naming them
    "commands": {
        "request": request_number
    },  # the composer's / menu opened: answered by a ``commands`` message
    # run a Hermes slash command (chat_session.py): answered by a ``command_output`` message
    "command": {"request": request_number, "line": text(MAX_COMMAND_CHARS, empty=False)},
    # the header's Revoke: what was allowed in the kernel for this session (chat_kernel.py)
    "kernel_revoke": {},
    # a run_code part's Undo variables (chat_run_undo.py): which approved run
    "undo_run": {"run": run_number},
    # message buttons and file attachments (chat_actions.py): which message is checked there, against the
    # store
    "send_files": {"text": text(MAX_PROMPT_CHARS), "images": images, "files": files},
    "undo": {
        "message_id": text(MAX_ID_CHARS, empty=False),
        "files": optional(flag),
    },  # files: put them back too
    # the last reply's Undo with files: answered by a ``turn_files`` message naming the files the turn changed
    "turn_files": {"request": request_number, "message_id": text(MAX_ID_CHARS, empty=False)},
    # Branch with files lists what it will put back first: answered by a ``branch_files`` message
    "branch_files": {"request": request_number, "message_id": text(MAX_ID_CHARS, empty=False)},
    "regenerate": {"message_id": text(MAX_ID_CHARS, empty=False)},
    "branch": {
        "message_id": text(MAX_ID_CHARS, empty=False),
        "files": optional(flag),
    },  # files: put them back too
    "edit": {"message_id": text(MAX_ID_CHARS, empty=False), "text": text(MAX_PROMPT_CHARS, empty=False)},
    # a part's image for the view to show (stream_images.py): answered by an ``image`` message with its bytes
    "image": {"request": request_number, **_IDS_OF_PART, "index": image_index},
    # the header's profile picker and the composer's Steer choice (chat_profiles.py)
    "profiles": {"request": request_number},  # answered by a ``profiles`` message
    "switch_profile": {"profile": text(MAX_PROFILE_CHARS, empty=False)},
    "steer": {"text": text(MAX_PROMPT_CHARS, empty=False)},
    # a running subagent part's Steer and Stop (chat_subagents.py); which ones this Hermes offers is asked
    # first
    "subagent_controls": {"request": request_number},  # answered by a ``subagent_controls`` message
    "subagent_steer": {
        "subagent_id": text(MAX_ID_CHARS, empty=False),
        "text": text(MAX_PROMPT_CHARS, empty=False),
    },
    "subagent_stop": {"subagent_id": text(MAX_ID_CHARS, empty=False)},
    "bundle": {"request": request_number},  # a %hermes live view's loader: the chat view's code (turn.py)
}

#: What the jobs view may send.
JOBS_MESSAGES: Mapping[str, Mapping[str, Check]] = {
    "refresh": {},
    "check_schedule": {"request": request_number, "schedule": text(MAX_SCHEDULE_CHARS)},
    "save": {"request": request_number, "id": optional(text(MAX_ID_CHARS)), "fields": form},
    "action": {
        "request": request_number,
        "action": one_of("pause", "resume", "run", "delete"),
        "id": text(MAX_ID_CHARS, empty=False),
    },
    "get_prompt": {"request": request_number, "id": text(MAX_ID_CHARS, empty=False)},
    # a scheduled reproducibility check of a notebook (hermes.jobs.reproduce): its path and schedule
    "reproduce": {
        "request": request_number,
        "notebook": text(MAX_PATH_CHARS),
        "schedule": text(MAX_SCHEDULE_CHARS),
    },
    "job_errors": {"request": request_number},  # the listed jobs' last errors (never synced state)
    "runs": {"request": request_number, "id": text(MAX_ID_CHARS, empty=False)},
    "transcript": {"request": request_number, "run_id": text(MAX_ID_CHARS, empty=False)},
}

# Fields a message may leave out (the view omits them when empty); every other listed field is required.
_OPTIONAL = {"images", "request", "id"}


#: The progress bar of ``hermes.map`` (widgets/progress.py): only its Stop button.
PROGRESS_MESSAGES: Mapping[str, Mapping[str, Check]] = {"stop": {}}


def validate(content: object, messages: Mapping[str, Mapping[str, Check]]) -> dict[str, Any]:
    """The checked message (``type`` plus its known fields), or :class:`Refused` saying what was wrong.

    A ``secret`` message's ``value`` is popped from ``content`` (the comm keeps the original message around as
    the kernel's parent header), so only the returned dict holds it.
    """
    if not isinstance(content, dict):
        raise Refused(f"a message must be an object, not {_kind(content)}")
    kind = content.get("type")
    if not isinstance(kind, str) or kind not in messages:
        shown = kind[:40] if isinstance(kind, str) else _kind(kind)
        raise Refused(f"unknown message type {shown!r}")
    out: dict[str, Any] = {"type": kind}
    for name, check in messages[kind].items():
        value = content.pop(name, None) if name == "value" else content.get(name)
        if name not in content and name != "value" and name in _OPTIONAL:
            out[name] = check(name, None) if name == "images" else None
            continue
        out[name] = check(name, value)
    return out


# --- answers
# --------------------------------------------------------------------------------------------------


def find_interaction(
    message: Mapping[str, Any] | None, part_id: str, request_id: str
) -> Mapping[str, Any] | None:
    """The interaction ``request_id`` on tool part ``part_id`` of ``message`` (or on any part if no part
    id)."""
    if not isinstance(message, Mapping):
        return None
    for part in message.get("parts") or ():
        if not isinstance(part, Mapping) or (part_id and part.get("id") != part_id):
            continue
        interaction = part.get("interaction")
        if isinstance(interaction, Mapping) and interaction.get("request_id") == request_id:
            return interaction
    return None


def check_open_turn(message: Mapping[str, Any] | None, open_ids: Collection[str]) -> None:
    """Refuse an answer unless its message is one of the turn running now (``open_ids``) and still streaming.

    Request ids repeat across turns (0.19.0 numbers approvals approval-1, approval-2, ... in every turn), and
    the server answers by id or oldest-first, not by turn: a card of a turn that ended (an error, a stop, a
    dropped connection) must never answer the next turn's request that happens to carry the same id.
    """
    if not isinstance(message, Mapping) or message.get("status") != "streaming":
        raise Refused("that request's turn has ended; it is no longer waiting for an answer")
    if message.get("id") not in open_ids:
        raise Refused("that request belongs to an earlier turn; it is no longer waiting for an answer")


def check_answer(
    interaction: Mapping[str, Any] | None, kinds: Sequence[str], response: str | None = None
) -> None:
    """Refuse an answer for an interaction that is not pending, of another kind, or outside its choices."""
    if interaction is None:
        raise Refused("that request is not one this chat is waiting on")
    kind = interaction.get("kind")
    if kind not in kinds:
        raise Refused(f"that request asks for {kind or 'something else'}, not {' or '.join(kinds)}")
    if interaction.get("status") != "pending":
        raise Refused("that request is no longer waiting for an answer")
    if (
        kind in ("code", "run")
        and response is not None
        and response not in (interaction.get("choices") or ())
    ):
        raise Refused(f"{response[:40]!r} is not one of the offered choices")
    if (
        kind == "approval"
        and response is not None
        and interaction.get("masked")
        and response not in MASKED_APPROVAL_CHOICES
    ):  # what runs is not fully shown: never a lasting grant
        raise Refused("Hermes hid part of that command: it can only be allowed once or denied")
    if kind == "approval" and response is not None:
        choices = tuple(interaction.get("choices") or ()) or DEFAULT_APPROVAL_CHOICES
        if response not in choices:
            raise Refused(f"{response[:40]!r} is not one of the offered choices ({', '.join(choices)})")


def decode_images(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, bytes]]:
    """``(mime, bytes)`` for attachments :func:`validate` let through; the bytes must match the declared
    type."""
    out = []
    for item in items:
        mime, data = str(item["mime"]), str(item["data"])
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise Refused("that image is not valid base64") from None
        if not raw:
            raise Refused("that image is empty")
        if len(raw) > MAX_IMAGE_BYTES:
            raise Refused(
                f"that image is too large ({len(raw) // 1024} KB; at most {MAX_IMAGE_BYTES // 1024} KB)"
            )
        if not raw.startswith(IMAGE_TYPES[mime]) or (mime == "image/webp" and raw[8:12] != b"WEBP"):
            raise Refused(f"that file is not a {mime.split('/')[1].upper()} image")
        out.append((mime, raw))
    return out


def decode_files(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` for files :func:`validate` let through (what they hold is checked by
    ``prepare_files``)."""
    out = []
    for item in items:
        try:
            raw = base64.b64decode(str(item["data"]), validate=True)
        except (binascii.Error, ValueError):
            raise Refused("that file is not valid base64") from None
        if len(raw) > MAX_VIEW_FILE_BYTES:
            raise Refused(f"that file is too large (at most {MAX_VIEW_FILE_BYTES // (1024 * 1024)} MB)")
        out.append((str(item["name"]), raw))
    return out


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__
