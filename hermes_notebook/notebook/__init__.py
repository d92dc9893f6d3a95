"""The notebook surface: the facade (``connect`` -> ``Hermes``), replies, the live turn view presenters, the
comm pump that keeps buttons working while a cell blocks, and the ``%hermes`` magics: faces over one
:class:`~hermes_notebook.session.Conversation`.

``facade`` (Hermes, connect; options checked by ``asking``) -> ``handle`` (TurnHandle, the facade's sink for
the conversation's one turn runner) -> ``results`` and ``session_results`` (Reply and the listing types);
``interactions`` (policies and text prompts), ``presenters`` (how a turn shows in a cell), ``wait`` (the
blocking wait and its comm pump, which also runs the kernel's approved code).
"""

from __future__ import annotations

from .connecting import connect
from .context import fill, raw
from .facade import Hermes, Reply, TurnHandle, resume

__all__ = ["Hermes", "Reply", "TurnHandle", "connect", "fill", "raw", "resume"]
