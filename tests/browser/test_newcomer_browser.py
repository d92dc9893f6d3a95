"""What a newcomer reads in the chat, in real JupyterLab and headless Chromium against the newer Hermes
(whose tool previews are message keys and whose kernel tools wrap their results): plain tool labels and
results, a tiny image in a box one can see, a header that holds from 700 px up in both themes, buttons named
by their labels, and a chat that grows in the notebook instead of scrolling inside it.

One notebook and four turns serve every check (the turns are what costs). Named screenshots of the header at
each width and theme go to ``test-artifacts/newcomer-*.png``.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, open_chat, send

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

CELLS = [
    "import pandas as pd\nimport hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel(read=True)\n"
    "sales = pd.DataFrame({'city': ['Oslo', 'Lima'], 'revenue': [3.5, 19.0]})",
    "chat = h.chat()\nchat",
]

#: Every header element a reader sees, leaf by leaf (their boxes must not overlap).
HEADER_LEAVES = (
    ".hn-title, .hn-model, .hn-session-usage, .hn-kernel-modes-text, .hn-kernel-revoke, .hn-profile-picker,"
    " .hn-session-picker, .hn-new-session, .hn-refresh, .hn-export-format, .hn-export"
)

# Boxes of the visible header leaves, the header's own box, and every word of theirs that the browser broke
# over two lines (a Range over one word has one client rect per line it occupies).
HEADER_LAYOUT = """([root, leaves]) => {
  const header = document.querySelector(root + ' .hn-header');
  const shown = [...header.querySelectorAll(leaves)].filter(e => e.getClientRects().length > 0);
  const box = e => { const r = e.getBoundingClientRect();
    return {name: e.className, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const broken = [];
  const walker = document.createTreeWalker(header, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent.closest('select, [hidden]') || !parent.getClientRects().length) continue;
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
  const labels = [...header.querySelectorAll('button')].filter(b => b.getClientRects().length)
    .filter(b => b.getBoundingClientRect().height > 40).map(b => b.textContent);
  const gauge = getComputedStyle(header.querySelector('.hn-session-gauge'));
  return {header: box(header), leaves: shown.map(box), broken, tall: labels,
          gauge: [gauge.appearance, gauge.backgroundColor]};
}"""


def _turn(nb: Any, text: str) -> Any:
    """Send a prompt; the finished reply's element (pinned by position: later replies do not move it)."""
    done = ".hn-message[data-role='assistant'][data-status='complete']"
    before = nb.page.locator(done).count()
    send(nb, text)
    nb.page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length > n", arg=[done, before], timeout=TURN_TIMEOUT_MS
    )
    return nb.page.locator(done).nth(before)


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
    )


def _check_header(nb: Any, width: int, theme: str) -> None:
    nb.page.set_viewport_size({"width": width, "height": 900})
    nb.page.wait_for_timeout(150)  # one layout after the resize
    layout = nb.page.evaluate(HEADER_LAYOUT, [".hn-chat", HEADER_LEAVES])
    where = f"{width} px, {theme}"
    leaves, header = layout["leaves"], layout["header"]
    assert len(leaves) >= 7, (where, leaves)
    clashes = [
        (a["name"], b["name"]) for i, a in enumerate(leaves) for b in leaves[i + 1 :] if _overlaps(a, b)
    ]
    assert clashes == [], (where, clashes)
    outside = [
        e["name"] for e in leaves if e["right"] > header["right"] + 0.5 or e["left"] < header["left"] - 0.5
    ]
    assert outside == [], (where, outside)
    assert layout["broken"] == [], (where, layout["broken"])  # no word wraps in two
    assert layout["tall"] == [], (where, layout["tall"])  # no button label on two lines
    # The context gauge's track is the theme's, not Chromium's light bar (which read as full in dark).
    appearance, track = layout["gauge"]
    rgb = [int(c) for c in re.findall(r"\d+", track)[:3]]
    assert appearance == "none" and len(rgb) == 3, (where, layout["gauge"])
    assert (sum(rgb) < 3 * 128) == (theme == "dark"), (where, track)
    nb.page.locator(".hn-chat .hn-header").scroll_into_view_if_needed()
    nb.screenshot(f"newcomer-header-{width}-{theme}")


# A visible button's accessible name (the browser's own accessibility tree) and its visible label.
BUTTON_NAMES = """(root) => [...document.querySelectorAll(root + ' button')]
  .filter(b => b.getClientRects().length > 0)
  .map(b => ({label: b.innerText.trim(), cls: b.className}))"""


def _check_button_names(nb: Any) -> None:
    """WCAG 2.5.3: every visible button's accessible name contains its visible label (an icon-only button
    such as "×" has no label to contain)."""
    buttons = nb.page.locator(".hn-chat button:visible")
    checked = 0
    for index in range(buttons.count()):
        button = buttons.nth(index)
        label = button.inner_text().strip()
        if not re.search(r"\w", label):
            continue
        snapshot = button.aria_snapshot()  # '- button "Name"' from the browser's accessibility tree
        match = re.search(r'button "((?:[^"\\]|\\.)*)"', snapshot)
        name = match.group(1) if match else snapshot
        assert label.lower() in name.lower(), (label, snapshot)
        checked += 1
    assert checked >= 8, checked
    last = nb.page.locator(".hn-message[data-role='assistant']").last
    assert last.get_by_role("button", name="Undo", exact=True).count() == 1
    assert last.get_by_role("button", name="Regenerate", exact=True).count() == 1


def test_a_newcomers_chat_reads_plainly_and_holds_its_layout(open_notebook: Any) -> None:
    """Labels without message keys (a command's label names the file it writes; a kernel tool reads
    "notebook: describe"), a kernel result as its text with a small untrusted note and no wrapper; a 1x1 image
    in a box at least 24 px wide with no MEDIA: text; the header holds at 700/1000/1400 px in light and dark;
    buttons are named by their labels; the chat grows in the notebook instead of scrolling inside it."""
    nb = open_chat(open_notebook, cells=CELLS)
    report = f"report-{uuid.uuid4().hex[:6]}.md"
    dot = f"hn-dot-{uuid.uuid4().hex[:6]}"
    described = _turn(nb, "KERNEL describe sales")
    ran = _turn(nb, f"RUN printf 'cities: 2\\n' > {report}")
    _turn(nb, "PLAN")
    pictured = _turn(nb, f"IMAGE {dot} dot")

    parts = nb.page.locator(".hn-chat .hn-part").all_inner_texts()
    assert not [p for p in parts if "display.preview" in p or "<untrusted_tool_result" in p], parts
    tool = described.locator(".hn-tool")
    assert tool.locator(".hn-tool-name").inner_text() == "notebook: describe"
    assert tool.locator(".hn-tool-preview").inner_text() == "sales"
    assert "revenue: float64" in tool.locator(".hn-tool-result-body").text_content()
    assert '{"result"' not in tool.locator(".hn-tool-result-body").text_content()
    assert "Marked untrusted for the model" in tool.locator(".hn-risk").inner_text()
    assert f"> {report}" in ran.locator(".hn-tool-preview").inner_text()
    figure = pictured.locator(".hn-image[data-state='shown']")
    figure.wait_for(timeout=TURN_TIMEOUT_MS)
    image = figure.locator("img")
    image.wait_for()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 1
    box = image.bounding_box()
    assert box is not None and box["width"] >= 24 and box["height"] >= 24, box
    assert "MEDIA:" not in pictured.locator(".hn-part-text").inner_text()

    _check_button_names(nb)

    # The chat has no scroll area of its own: its transcript is as tall as its content.
    grown = nb.page.evaluate(
        "() => { const l = document.querySelector('.hn-chat .hn-messages'); const s = getComputedStyle(l);"
        " return [l.scrollHeight - l.clientHeight, s.overflowY]; }"
    )
    assert grown[0] <= 1 and grown[1] == "visible", grown

    try:
        for theme, name in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
            if name == "dark":
                nb.set_theme(theme)
            for width in (1400, 1000, 700):
                _check_header(nb, width, name)
    finally:
        nb.set_theme("JupyterLab Light")  # the theme is a user setting: later tests must not inherit dark
        nb.page.set_viewport_size({"width": 1280, "height": 900})
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
