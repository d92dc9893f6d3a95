"""Hermes works in your kernel: a tool server the agent calls, with the user in control.

``share`` (policy, routing a call to the turn that made it, the Run/Deny card, cleanup) -> ``server`` (MCP
over streamable HTTP on 127.0.0.1 behind a bearer token; the optional ``mcp`` SDK) and ``registration`` (the
Dashboard's ``mcp.servers.*``, or a config snippet); ``reading`` (the read tools' bounded summaries) and
``execute`` (approved code on the kernel's main thread). ``Hermes.share_kernel()`` is the way in.
"""

from __future__ import annotations

__all__: list[str] = []
