"""How the harness starts Debian's Chromium headless: the browser tests, the browser benchmark and
``scripts/screenshots`` (``/work/shared/browser-testing.md`` has why each flag is there)."""

from __future__ import annotations

import os

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]

#: The browser (Debian's ``chromium`` package; Playwright's own download does not work offline).
CHROMIUM = os.environ.get("BROWSER_TEST_CHROMIUM", "/usr/bin/chromium")
# Without the networking flags Chromium's background connections get refused in bulk here.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
