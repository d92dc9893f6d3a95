"""Refresh the README's screenshots by walking the demo as a person would (``scripts/screenshots``).

It starts ``./demo --no-browser`` (the newer Hermes, the scripted model, JupyterLab on fresh copies of the
notebooks), drives Debian's Chromium with Playwright at 1400x900 in the light theme, and writes:

* ``docs/screenshots/cell-edit.png``: working_with_data.ipynb run cell by cell (the Run card answered Run, the
  proposed new cell kept) up to Hermes' proposed edit of the ``sales.describe()`` cell, waiting for Keep or
  Discard;
* ``docs/screenshots/chat.png``: the quickstart's chat after two prompts typed in it: a chart Hermes made, and
  a command waiting on its Allow once / Deny card.

Both views, and the rest of working_with_data.ipynb (its plan, the file's diff, the undo, the export), are
also written whole-page at 1400 and 700 px, light and dark, to ``test-artifacts/screenshots/`` (ignored by
git: for a person to look at before a release, not for the README). Then it presses Ctrl+C for
the demo, as a person would, and waits until it has stopped.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Locator, Page, sync_playwright

from hermes_notebook._demo.chromium import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
VIEWS = ROOT / "test-artifacts" / "screenshots"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
TURN_MS = 120_000
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
IDLE = (
    "(s) => ![...document.querySelectorAll(s + ' .jp-InputArea-prompt')]"
    ".some(e => e.textContent.includes('*'))"
)


def say(message: str) -> None:
    print(f"[screenshots] {message}", flush=True)


def start_demo() -> tuple[subprocess.Popen[str], str, str]:
    """``./demo --no-browser`` until it is ready: the process, Lab's base URL and its token."""
    demo = subprocess.Popen(
        [str(ROOT / "demo"), "--no-browser", "--scripted"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert demo.stdout is not None
    seen = []
    deadline = time.monotonic() + 600
    for line in demo.stdout:
        seen.append(line)
        print(line, end="", flush=True)
        if "ready. Press Ctrl+C" in line or time.monotonic() > deadline:
            break
    lab = re.search(r"(http://127\.0\.0\.1:\d+)/lab/tree/\S+\?token=([\w-]+)", "".join(seen))
    if lab is None:
        demo.kill()
        raise SystemExit("[screenshots] the demo did not start:\n" + "".join(seen))
    return demo, lab.group(1), lab.group(2)


def stop_demo(demo: subprocess.Popen[str]) -> None:
    """Ctrl+C, and wait until everything the demo started is gone."""
    demo.send_signal(signal.SIGINT)
    rest, _ = demo.communicate(timeout=120)
    print(rest, end="", flush=True)


def open_notebook(page: Page, base: str, token: str, name: str) -> None:
    page.goto(f"{base}/lab/tree/{name}?reset&token={token}")  # reset: only this notebook open
    page.wait_for_selector(f"{CURRENT} .jp-Cell", timeout=60_000)
    page.wait_for_function(
        "() => document.querySelector('.jp-Notebook-ExecutionIndicator[data-status=\"idle\"]') !== null",
        timeout=60_000,
    )
    page.wait_for_timeout(500)
    cell(page, 0).click(position={"x": 4, "y": 4})
    page.keyboard.press("Escape")


def cell(page: Page, index: int) -> Locator:
    return page.locator(f"{CURRENT} .jp-Cell").nth(index)


def run_active(page: Page, wait: bool = True) -> None:
    """Shift+Enter on the active cell (as a person runs a notebook), then wait until the kernel is idle."""
    page.keyboard.press("Shift+Enter")
    page.wait_for_timeout(400)
    if wait:
        page.wait_for_function(IDLE, arg=CURRENT, timeout=TURN_MS)


def index_of(page: Page, source: str) -> int:
    """The index of the first cell whose source starts with ``source`` (Lab creates a cell's editor when it
    first comes near the screen, so this scrolls down through the notebook from the top until it is found)."""
    for attempt in range(60):
        if attempt == 1:  # not in view: look from the top down
            page.evaluate(
                "(s) => document.querySelector(s + ' .jp-WindowedPanel-outer').scrollTo(0, 0)", CURRENT
            )
            page.wait_for_timeout(250)
        found = int(
            page.evaluate(
                "([s, src]) => [...document.querySelectorAll(s + ' .jp-Cell')]"
                ".findIndex(c => (c.querySelector('.cm-content')?.innerText ?? '').trim().startsWith(src))",
                [CURRENT, source],
            )
        )
        if found >= 0:
            return found
        scroll = "(s) => document.querySelector(s + ' .jp-WindowedPanel-outer').scrollBy(0, 400)"
        page.evaluate(scroll, CURRENT)
        page.wait_for_timeout(250)
    raise SystemExit(f"[screenshots] no cell starts with {source!r}")


def select(page: Page, index: int) -> None:
    """Make cell ``index`` the active one, in command mode (a click on its prompt, then Esc)."""
    target = cell(page, index)
    target.scroll_into_view_if_needed()
    target.click(position={"x": 20, "y": 8})
    page.keyboard.press("Escape")


def run_until(page: Page, source: str, start: int) -> int:
    """Run the cells from ``start`` up to (not including) the one whose source starts with ``source``, which
    is then active: its index."""
    stop = index_of(page, source)
    select(page, start)
    for _ in range(start, stop):
        run_active(page)
    return stop


def shoot(target: Locator | Page, name: str, **options: Any) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    target.screenshot(path=str(path), **options)
    say(f"wrote {path.relative_to(ROOT)}")


def set_theme(page: Page, theme: str) -> None:
    """Settings > Theme > ``theme``, as a person picks it (at 1400 px: a narrow Lab folds its menu bar), then
    wait until Lab has applied it."""
    page.set_viewport_size({"width": 1400, "height": 900})
    page.locator(".lm-MenuBar-itemLabel", has_text="Settings").click()
    page.locator(".lm-Menu-item", has_text="Theme").first.hover()
    page.locator(".lm-Menu-item", has_text=THEMES[theme]).first.click()
    light = "true" if theme == "light" else "false"
    page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached", timeout=30_000)
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=30_000)


def shoot_views(page: Page, target: Locator, name: str) -> None:
    """The page around ``target`` at 1400 and 700 px wide, light and dark (``VIEWS``/name-width-theme.png);
    back to 1400 px light after."""
    VIEWS.mkdir(parents=True, exist_ok=True)
    try:
        for theme in THEMES:
            if theme != "light":
                set_theme(page, theme)
            for width in (1400, 700):
                page.set_viewport_size({"width": width, "height": 900})
                page.wait_for_timeout(500)
                target.scroll_into_view_if_needed()
                page.screenshot(path=str(VIEWS / f"{name}-{width}-{theme}.png"))
    finally:
        page.set_viewport_size({"width": 1400, "height": 900})
        set_theme(page, "light")
    say(f"wrote {VIEWS.relative_to(ROOT)}/{name}-{{1400,700}}-{{light,dark}}.png")


def cell_edit(page: Page, base: str, token: str) -> None:
    """working_with_data.ipynb up to Hermes' proposed edit of the describe cell."""
    open_notebook(page, base, token, "working_with_data.ipynb")
    at = run_until(page, "priced = hermes.ask", 0)
    run_active(page, wait=False)
    card = page.locator(f"{CURRENT} .hn-interaction[data-kind='code'][data-status='pending']")
    card.get_by_role("button", name="Run", exact=True).click(timeout=TURN_MS)
    page.wait_for_function(IDLE, arg=CURRENT, timeout=TURN_MS)
    at = run_until(page, "added = hermes.ask", at + 1)
    run_active(page)
    insert = page.locator(f"{CURRENT} .hn-pending[data-kind='insert']")
    insert.wait_for(timeout=TURN_MS)
    insert.get_by_role("button", name="Keep", exact=True).click()
    page.wait_for_timeout(500)
    at = run_until(page, "edited = hermes.ask", at + 1)
    run_active(page)
    edit = page.locator(f"{CURRENT} .hn-pending[data-kind='edit']")
    edit.wait_for(timeout=TURN_MS)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+b")  # the file browser closed: the notebook has the width
    page.wait_for_timeout(600)
    edit.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    box = edit.bounding_box()
    table = cell(page, index_of(page, "sales = pd.DataFrame")).bounding_box()
    assert box is not None and table is not None
    # from the table cell above it, so the picture says what is being edited, to the cell it would change
    top = max(0.0, table["y"] - 4)
    left = table["x"]
    right = box["x"] + box["width"] + 8
    clip = {"x": left, "y": top, "width": right - left, "height": box["y"] + box["height"] - top + 60}
    shoot(page, "cell-edit.png", clip=clip)
    shoot_views(page, edit, "cell-edit")
    edit.get_by_role("button", name="Discard", exact=True).click()
    page.keyboard.press("Control+b")
    rest_of_the_analysis(page, at + 1)


def rest_of_the_analysis(page: Page, start: int) -> None:
    """The rest of working_with_data.ipynb, run cell by cell from ``start``: the plan, the file's diff, the
    undo and the export; then every step of the story, each looked at in both widths and themes."""
    run_until(page, "path = hermes.export", start)
    run_active(page)
    for source, name in (
        ("hermes.ask(hn.fill", "question-preview"),
        ("asked = %hermes", "question"),
        ("described = hermes.ask", "kernel-read"),
        ("priced = hermes.ask", "run-card"),
        ("added = hermes.ask", "cell-insert"),
        ("planned = hermes.ask", "plan"),
        ('hermes.ask("RUN printf', "file-diff"),
        ("hermes.undo()", "undo"),
        ("path = hermes.export", "export"),
    ):
        shoot_views(page, cell(page, index_of(page, source)), name)


def chat(page: Page, base: str, token: str) -> None:
    """The quickstart's chat with a chart and a pending approval."""
    open_notebook(page, base, token, "quickstart.ipynb")
    select(page, index_of(page, "import hermes_notebook as hn"))
    run_active(page)
    select(page, index_of(page, "hermes.chat()"))
    index = index_of(page, "hermes.chat()")
    run_active(page)
    view = cell(page, index).locator(".hn-chat")
    view.wait_for(timeout=TURN_MS)
    box = view.get_by_role("textbox", name="Message to Hermes")
    for prompt, wait_for in (
        ("IMAGE revenue", ".hn-image[data-state='shown']"),
        ("DANGER quickstart-scratch", ".hn-interaction[data-kind='approval'][data-status='pending']"),
    ):
        box.fill(prompt)
        view.get_by_role("button", name="Send", exact=True).click()
        view.locator(wait_for).last.wait_for(timeout=TURN_MS)
    page.set_viewport_size({"width": 1400, "height": 1600})  # the whole chat, header to composer, in view
    page.wait_for_timeout(800)
    view.scroll_into_view_if_needed()
    shoot(view, "chat.png")
    page.set_viewport_size({"width": 1400, "height": 900})
    shoot_views(page, view.locator(".hn-interaction[data-kind='approval']").last, "chat")
    view.get_by_role("button", name="Deny", exact=True).click()


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/screenshots", description=__doc__.split("\n")[0])
    parser.parse_args()
    demo, base, token = start_demo()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)
            cell_edit(page, base, token)
            chat(page, base, token)
            browser.close()
    finally:
        stop_demo(demo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
