"""Preview: a proposed cell run in a copy of the kernel (``os.fork``), so the user sees what it would do
before keeping it, while the kernel's own variables stay untouched.

The pieces, by shape: :mod:`.limits` (the settings and the one-line refusals, checked before anything forks),
:mod:`.variables` (what the copy's run changed, name by name), :mod:`.copy` (what runs in the copy, which
ends with ``os._exit``), :mod:`.fork` (the kernel's side: fork on the main thread, wait, kill, reap),
:mod:`.interrupts` (the kernel's Interrupt ends every live copy, whichever thread it lands on),
:mod:`.report` (what a preview shows and tells the agent), :mod:`.service` (one preview from a request:
refuse, queue the fork on the main thread like Run, wait off it).
"""

__all__: list[str] = []
