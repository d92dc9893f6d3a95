"""The IPython shell we run in, read safely: below both the kernel's tools and the notebook's faces.

``host`` (where we run: a Jupyter kernel, terminal IPython or plain Python, and its shell), ``values`` (how a
value reads: bounded, typed summaries; ``safe=True`` runs no user code), ``placeholders`` (a ``{placeholder}``
read by an AST walk, never ``eval``), ``last_error`` (the exception the notebook last showed) and
``subshells`` (a comm's messages follow the front end's kernel subshell). The prompt context
(``notebook/context.py``) and the kernel's read tools (``kernel/reading.py``) both read the user's namespace
through these, so neither imports the other.
"""

from __future__ import annotations

__all__: list[str] = []
