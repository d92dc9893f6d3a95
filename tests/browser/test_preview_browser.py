"""The Preview button on a proposed code cell's diff, in real JupyterLab: the click runs the proposal in a
copy of the kernel, and the diff shows what it did (the printed value, the figure as an image, ``df`` changed
in place in the variables table, the time and the card's sentence) while the kernel's own ``df`` is untouched.
(The proposal is made through the kernel's document link directly: no Hermes turn is needed to show a
diff.)"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from hermes_notebook.kernel.preview.report import CARD_SENTENCE

pytestmark = [pytest.mark.usefixtures("hermes")]

SETUP = (
    "import threading\n"
    "import pandas as pd\n"
    "import matplotlib\n"
    "matplotlib.use('agg')\n"
    "import matplotlib.pyplot as plt\n"
    "import hermes_notebook.kernel.tools\n"
    "from hermes_notebook import runtime\n"
    "from hermes_notebook.kernel.document import DOCUMENT\n"
    "from hermes_notebook.kernel.execute import JOBS\n"
    "JOBS.attach_loop()\n"
    "DOCUMENT.open()\n"
    "df = pd.DataFrame({'x': [1, 2, 3]})"
)
SOURCE = "df['z'] = df.x * 2\nprint(df.z.sum())\nplt.plot([1, 2, 3])"
PROPOSE = (
    "threading.Thread(target=lambda: runtime.run_sync(DOCUMENT.request('propose', change={'id': 'c1-pv', "
    f"'kind': 'insert', 'index': 1, 'source': {SOURCE!r}, 'cell_type': 'code'}}))).start()"
)


def test_preview_on_a_diff_shows_what_the_code_did_in_a_copy(open_notebook: Any) -> None:
    """Click Preview: the diff shows "Preview finished", the sentence word for word, ``12``, one figure, and
    ``df`` as changed in place; the kernel's ``df`` has no ``z``, and Keep and Discard are still there."""
    nb = open_notebook([SETUP, "x = 1"])
    nb.run_cell(0)
    nb.wait_kernel("DOCUMENT.attached")
    nb.kernel_exec(PROPOSE)
    region = nb.page.locator(".hn-pending[data-change-id='c1-pv']")
    button = region.get_by_role("button", name="Preview")
    expect(button).to_be_visible()
    nb.page.wait_for_timeout(1100)  # the click guard: a click in the diff's first second is ignored
    button.click()
    panel = region.locator(".hn-preview[data-status='finished']")
    expect(panel).to_be_visible(timeout=30_000)
    expect(panel.locator(".hn-preview-headline")).to_contain_text("Preview finished in")
    expect(panel.locator(".hn-preview-sentence")).to_have_text(CARD_SENTENCE)
    expect(panel.locator(".hn-preview-text").first).to_have_text("12")
    expect(panel.locator("img.hn-preview-image")).to_have_count(1)
    expect(panel.locator("tbody tr")).to_have_text(["dfchanged in placeDataFrame3x2"])
    assert nb.kernel_eval("list(df.columns)") == ["x"]
    expect(region.get_by_role("button", name="Keep")).to_be_visible()
    shots = nb.screenshot("preview-diff").parent
    region.screenshot(path=str(shots / "preview-diff-region.png"))
    # at 700 px in the dark theme the panel still fits its cell (nothing runs off to the side)
    nb.page.set_viewport_size({"width": 700, "height": 900})
    nb.set_theme("JupyterLab Dark")
    fits = panel.evaluate("el => el.scrollWidth <= el.clientWidth + 1")
    region.screenshot(path=str(shots / "preview-diff-region-dark-700.png"))
    assert fits
    assert nb.page_errors == []
