"""Secrets out of a widget's stream: change records are scrubbed before the kernel-side store keeps them, so
the views' custom messages, their snapshots and the static twin (what a saved notebook keeps) never hold a
secret.

Except what the user is asked to approve: an approval's or a Run card's interaction passes through verbatim
(what the card shows is exactly what runs; a scrubbed ``token=********`` would hide what a click runs). The
live views only show it (custom messages are never saved); the static transcript a saved notebook keeps is
built through :func:`hermes_notebook.render.transcript_bundle`, which scrubs the card like everything else.

Why text is held back: a reply streams in small appends, and a key can arrive split across two of them
(``sk-ab`` then ``cdef...``); scrubbing each append alone would let both halves through. So an append's text
is released only up to its last whitespace, and never ending on a lead-in that a secret may follow (``API_KEY
= ``, ``Bearer ``, ``password:``): the rest waits for the next append, or for any other record of the message
(a tool starting, the end of the turn), which releases it first. Keys, tokens and ``NAME_KEY=value``
assignments hold no whitespace, so each released chunk scrubs alone exactly as it would inside the whole text.
A private key block (``-----BEGIN ... PRIVATE KEY-----``) does hold whitespace: from its first line on, text
waits for its last (at most ``PEM_HOLD`` characters). The cost: the word being typed shows one append later.

Limits: a run of more than ``HOLD_LIMIT`` characters without whitespace is released up to a character no key
contains, keeping its last ``KEY_TAIL`` characters back (a longer key straddling that cut keeps only the half
that still has a key's shape); a secret value holding whitespace is removed only when it arrives in one
release.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any

from ..scrub import scrub, scrub_value

__all__ = ["HOLD_LIMIT", "KEY_TAIL", "PEM_HOLD", "VERBATIM_KINDS", "StreamScrubber"]

#: A run without whitespace longer than this is released in part (see the module docstring).
HOLD_LIMIT = 2048
#: ... keeping at least this many of its last characters back.
KEY_TAIL = 256
#: How far back a lead-in is looked for (its name's end is what matters).
LEAD_IN_CHARS = 80
#: Characters of an unfinished private key block held back, at most (a 4096-bit RSA key is about 3,300).
PEM_HOLD = 16_384

# Text a secret may follow after whitespace: a key-ish name with its separator, or a bearer scheme.
_LEAD_IN = re.compile(
    r"(?i)[\w.-]*(?:key|token|secret|password|passwd|passphrase|credentials?|auth|bearer)[\"']?\s*(?:[=:]\s*[\"']?)?\Z"
)
_PEM_OPEN = "-----BEGIN"
_PEM_END = re.compile(r"-----END[A-Z ]*PRIVATE KEY-----")
_KEY_RUN = re.compile(r"[^A-Za-z0-9_-][A-Za-z0-9_-]*\Z")
_WHITESPACE = (" ", "\n", "\t", "\r")
_IDS = ("id", "message_id", "part_id", "request_id")
#: Interactions shown for approval: never altered (module docstring).
VERBATIM_KINDS = ("approval", "code", "run")


def _ready(text: str) -> int:
    """How much of ``text`` (a part's unreleased tail) can be released: up to where no secret can straddle."""
    cut = max(text.rfind(c) for c in _WHITESPACE) + 1
    while cut > 0:
        lead = _LEAD_IN.search(text, max(0, cut - LEAD_IN_CHARS), cut)
        if lead is None:
            break
        cut = max(text.rfind(c, 0, lead.start()) for c in _WHITESPACE) + 1
    if len(text) - cut > HOLD_LIMIT:  # one long run: release most of it at a character no key contains
        end = len(text) - KEY_TAIL
        run = _KEY_RUN.search(text, cut, end)
        cut = run.start() + 1 if run is not None and run.start() >= cut else end
    pem = text.rfind(_PEM_OPEN, 0, cut)
    if (
        pem >= 0
        and "PRIVATE KEY" in text[pem : pem + 60]
        and _PEM_END.search(text, pem) is None
        and len(text) - pem <= PEM_HOLD
    ):
        cut = pem  # an unfinished private key: nothing of it goes out until its END line
    return cut


class StreamScrubber:
    """Scrubs change records for one widget, holding back the unfinished tail of each streaming part."""

    def __init__(self, secrets: Sequence[object] = ()) -> None:
        #: The connection's own key and token (removed wherever they appear), besides the key shapes.
        self.secrets = tuple(s for s in secrets if s is not None)
        #: message id -> part id -> appended text not released yet
        self._held: dict[str, dict[str, str]] = {}

    def message(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """A whole message dict without secrets (ids kept as they are: the views address parts by them)."""
        return self._clean(message)

    def records(
        self, changes: Sequence[Mapping[str, Any]], known: Callable[[str, str], bool]
    ) -> list[dict[str, Any]]:
        """``changes`` scrubbed, appends released as far as is safe. An append to a part that is not
        ``known(message id, part id)`` (nor added earlier in ``changes``) passes at once, so applying it fails
        as it would have."""
        out: list[dict[str, Any]] = []
        added: set[tuple[str, str]] = set()
        for change in changes:
            op = change.get("op")
            if op == "append":
                mid, pid = str(change.get("message_id")), str(change.get("part_id"))
                if pid not in self._held.get(mid, {}) and (mid, pid) not in added and not known(mid, pid):
                    out.append(self._clean(change))
                    continue
                held = self._held.setdefault(mid, {})
                text = held.pop(pid, "") + str(change.get("text") or "")
                cut = _ready(text)
                held[pid] = text[cut:]  # kept even when empty: the part is known from now on
                if cut:
                    out.append({**change, "text": scrub(text[:cut], self.secrets)})
                continue
            if op == "message":
                mid = str(change["message"]["id"])
                self._held.pop(mid, None)  # replaced whole
                added.update((mid, str(p.get("id"))) for p in change["message"].get("parts") or ())
            else:
                mid = str(change.get("message_id"))
                fields = change.get("fields")
                part = change.get("part") if op == "part" else None
                if (
                    isinstance(part, Mapping)
                    and part.get("kind") in ("text", "reasoning")
                    and isinstance(part.get("text"), str)
                ):
                    # A new streaming part's first text is an append like any other: its tail may be half a
                    # key.
                    out.extend(self.release(mid))
                    pid, text = str(part.get("id")), part["text"]
                    cut = _ready(text)
                    self._held.setdefault(mid, {})[pid] = text[cut:]
                    added.add((mid, pid))
                    out.append(self._clean({**change, "part": {**part, "text": text[:cut]}}))
                    continue
                if op == "part":
                    added.add((mid, str(change["part"].get("id"))))
                if op == "part" or (op == "patch" and isinstance(fields, Mapping) and "text" in fields):
                    self._held.get(mid, {}).pop(str(change.get("part_id")), None)  # its whole text is set
                out.extend(self.release(mid))
            out.append(self._clean(change))
        return out

    def release(self, message_id: str) -> list[dict[str, Any]]:
        """Appends of the text held back for a message (scrubbed), before another record of it applies."""
        held = self._held.pop(message_id, {})
        return [
            {"op": "append", "message_id": message_id, "part_id": pid, "text": scrub(text, self.secrets)}
            for pid, text in held.items()
            if text
        ]

    def forget(self, keep: Container[str]) -> None:
        """Drop what is held for messages a reset removed."""
        for mid in [m for m in self._held if m not in keep]:
            del self._held[mid]

    def _clean(self, value: Mapping[str, Any]) -> dict[str, Any]:
        clean: dict[str, Any] = {}
        for key, item in value.items():
            if key in _IDS:
                clean[key] = item
            elif key == "interaction" and isinstance(item, Mapping) and item.get("kind") in VERBATIM_KINDS:
                clean[key] = dict(item)  # what the user approves is shown as it runs (module docstring)
            elif isinstance(item, Mapping):
                clean[key] = self._clean(item)
            elif key == "parts" and isinstance(item, list):
                clean[key] = [self._clean(p) if isinstance(p, Mapping) else p for p in item]
            else:
                clean[key] = scrub_value(item, self.secrets)
        return clean
