"""Hermes works in your kernel: a tool server the agent calls, with the user in control.

The kernel's own floor, between the conversation (``session/``) and the faces: it imports neither the faces
nor the Dashboard client. ``tools`` (the tool table: one row per tool, its gate, hints, description and
handler) -> ``server`` (MCP over streamable HTTP on 127.0.0.1 behind a bearer token; the optional ``mcp`` SDK)
-> ``dispatch`` (a call bound to the turn that made it by ``binding``, gated and answered by its row) and the
handlers (``read_tools``, ``code_tool``, ``cells``, ``proposals``, ``cell_runs``); ``share`` (``KERNEL``: the
shares, kept under their conversation, and ``registration`` through the conversation's MCP servers).
``Hermes.share_kernel()`` is the way in.
"""

from __future__ import annotations

__all__: list[str] = []
