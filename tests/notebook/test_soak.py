"""A notebook that asks hundreds of times in one REAL kernel (nbclient + ipykernel) against the real Hermes: a
finished turn holds nothing.

One notebook, as a script-like notebook uses the package: ``hermes.ask(...)`` in loops (a new session every
100 asks; a few awaited with ``ask_async`` and started with ``start``, whose views settle the same way), the
kernel probed between the loops through the standard means (the kernel's comm manager, ``Widget.widgets``,
``gc``, the process's RSS). After the first 100 turns nothing grows per finished turn: no open comm, no
widget, no widget class, no view, handle or store, and RSS by at most 4 KB a turn. Asks with ``show=False``,
and one from a thread, construct no widget. The 200-ask loop cell, saved as JupyterLab saves it, stays under 1
MB and nbconvert shows each of its turns as a static transcript (no widget view left in it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from hermes_notebook._demo.local_hermes import LocalHermes

pytestmark = pytest.mark.both_servers

#: Asks per cell, per server: 100 warm-up turns, the 200-ask loop cell (whose saved notebook is checked),
#: more shown asks, shown asks awaited and started, and asks with show=False (no view). The newer Hermes (the
#: demo's default) takes the whole soak of 500; 0.19.0 a leaner one (the kernel side is the same code, and CI
#: time is precious).
LOOPS = {"newer": (100, 200, 150, 10, 50), "0.19.0": (100, 50, 0, 10, 25)}
#: The loop (by its place in LOOPS) that asks through the other two faces: ``ask_async`` and ``start``.
FACES = 3
#: What a finished turn may leave: RSS per turn (KB) and gc-tracked objects per turn (the facade keeps its
#: newest 100 replies for export(): full by the end of the warm-up).
MAX_RSS_KB_PER_TURN = 4.0
MAX_OBJECTS_PER_TURN = 10.0
#: The kinds every finished turn used to leave behind: only the last turn's may still be alive.
PER_TURN_KINDS = ("TurnView", "Layout", "TurnHandle", "MessageStore", "StreamScrubber", "_Coalescer")
#: What the last turn may still hold at a probe (``hermes.last_turn``; a closed view until its last flush
#: ends): one of each, and the view's store beside the handle's.
LAST_TURN = {kind: 2 if kind == "MessageStore" else 1 for kind in PER_TURN_KINDS}
#: Kinds a finished turn used once too (its queue, asyncio task and concurrent future), which the package's
#: loop and the kernel also use for themselves: their count may not grow with the turns.
SHARED_KINDS = ("Queue", "Task", "Future")

SETUP = """
import collections, gc, json, warnings
import ipywidgets
import hermes_notebook as hn

hermes = hn.connect()
made = collections.Counter()
ipywidgets.Widget.on_widget_constructed(lambda widget: made.update([type(widget).__name__]))

def probe(turns):
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Widget.widgets is deprecated in ipywidgets 8, still the registry
        widgets = dict(ipywidgets.Widget.widgets)
    objects = gc.get_objects()
    kinds = collections.Counter(type(o).__name__ for o in objects)
    rss = int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1])
    print("PROBE " + json.dumps({
        "turns": turns, "comms": len(get_ipython().kernel.comm_manager.comms), "widgets": len(widgets),
        "live": list(widgets),
        "objects": len(objects), "rss_kb": rss, "made": dict(made),
        "kinds": {k: kinds[k] for k in (*PER_TURN_KINDS, *SHARED_KINDS, "MetaHasTraits")},
    }))
"""

LOOP = """
for i in range({start}, {stop}):
    reply = hermes.ask(f"soak {{i}}", new=i % 100 == 0{quiet})
    assert reply.ok, reply
probe({stop})
"""

AWAITED = """
import time
for i in range({start}, {stop}, 2):
    reply = await hermes.ask_async(f"soak {{i}}")
    hermes.start(f"soak {{i + 1}}").wait()
for _ in range(200):  # the started turn's view settles from its done callback, on the package's loop
    if not get_ipython().kernel.comm_manager.comms:
        break
    time.sleep(0.05)
probe({stop})
"""

THREAD = """
import threading
asked = threading.Thread(target=lambda: hermes.ask("soak from a thread", new=True))
asked.start()
asked.join()
"""


def _cells(loops: tuple[int, ...]) -> list[str]:
    """Setup, then one cell per loop (the last one quiet), each ending with a probe."""
    bounds = [sum(loops[:i]) for i in range(len(loops) + 1)]
    quiet = ', show=False, approve="deny", clarify="A"'
    cells = [
        (AWAITED if i == FACES else LOOP).format(start=a, stop=b, quiet=quiet if i == len(loops) - 1 else "")
        for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False))
    ]
    # The quiet cell also asks from a thread, with the default show=True: a view there could not be shown.
    cells[-1] = THREAD + cells[-1]
    setup = SETUP.replace("PER_TURN_KINDS", repr(PER_TURN_KINDS)).replace("SHARED_KINDS", repr(SHARED_KINDS))
    return [setup + "probe(0)", *cells]


def _probe(cell: Any) -> dict[str, Any]:
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    line = next(line for line in text.splitlines() if line.startswith("PROBE "))
    return json.loads(line.removeprefix("PROBE "))


def test_hundreds_of_asks_leave_nothing_per_turn(
    kernel_env: None, hermes: LocalHermes, hermes_server: str, tmp_path: Path
) -> None:
    """After 100 warm-up turns, each further finished turn leaves no open comm, registered widget, widget
    class, view, handle or store in the kernel, RSS grows <= 4 KB a turn, show=False asks construct no widget,
    and the 200-ask loop cell saves under 1 MB, every turn a static transcript in nbconvert's HTML."""
    loops = LOOPS[hermes_server]
    asks, quiet = sum(loops), loops[-1]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in _cells(loops)])
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    probes = [_probe(c) for c in nb.cells]
    print(
        "PROBES",
        json.dumps(
            [{k: p[k] for k in ("turns", "comms", "widgets", "objects", "rss_kb", "kinds")} for p in probes]
        ),
    )
    start, warm, shown, done = probes[0], probes[1], probes[-2], probes[-1]
    # Every ask completed (the loop asserts each reply): none was taken as busy by a Hermes still finishing
    # the turn before it, which 0.19.0 then interrupted itself (client/dashboard/settling.py;
    # tests/client/dashboard/test_settling_hermes.py widens that window).
    assert warm["turns"] == loops[0] and done["turns"] == asks
    turns = asks - warm["turns"]

    # Nothing per finished turn stays registered or open (the issue measured one comm and one widget each).
    for later in probes[2:]:
        assert later["comms"] <= warm["comms"] and later["widgets"] <= warm["widgets"], later
        assert later["kinds"]["MetaHasTraits"] == warm["kinds"]["MetaHasTraits"]  # no class per widget
        assert all(later["kinds"][k] <= LAST_TURN[k] for k in PER_TURN_KINDS), later["kinds"]
        assert all(later["kinds"][k] <= warm["kinds"][k] + 2 for k in SHARED_KINDS), (warm, later)
    assert warm["comms"] - start["comms"] <= 1 and warm["widgets"] - start["widgets"] <= 1, (start, warm)
    grown = {
        "rss_kb": (done["rss_kb"] - warm["rss_kb"]) / turns,
        "objects": (done["objects"] - warm["objects"]) / turns,
    }
    assert grown["rss_kb"] <= MAX_RSS_KB_PER_TURN, grown
    assert grown["objects"] <= MAX_OBJECTS_PER_TURN, grown
    # Every shown ask made its view (and its layout), and the quiet ones and the thread's none.
    assert shown["made"].get("TurnView") == asks - quiet and done["made"] == shown["made"], done["made"]

    # nbclient keeps the state of every widget a run ever opened (it ignores comm_close): the quiet asks added
    # none. JupyterLab saves only live widgets' state: none of the turns' views once they ended.
    states = (
        nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    )
    turn_views = [s for s in states.values() if s.get("state", {}).get("mode") == "turn"]
    assert len(turn_views) == asks - quiet
    # Each view's state is a small loader (the chat view's 250 KB code comes once per page): a headless run
    # that saves them all stays small.
    assert max(len(json.dumps(v)) for v in turn_views) < 4000
    if loops[1] < 200:
        return
    # The 200-ask loop cell, saved as JupyterLab saves it: under 1 MB, each turn static (what nbconvert,
    # GitHub and nbviewer show).
    loop = nb.cells[2]
    live = {k: v for k, v in states.items() if k in done["live"]}
    widgets = {
        "application/vnd.jupyter.widget-state+json": {"state": live, "version_major": 2, "version_minor": 0}
    }
    saved = nbformat.v4.new_notebook(cells=[nb.cells[0], loop], metadata={**nb.metadata, "widgets": widgets})
    size = len(nbformat.writes(saved).encode())
    assert size < 1_000_000, size
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in loop.outputs)
    html, _ = HTMLExporter().from_notebook_node(saved)
    first = loops[0]
    missing = [i for i in range(first, first + 200) if f"You said: soak {i}<" not in html]
    assert missing == [], f"{len(missing)} turns are not in the static HTML, e.g. {missing[:3]}"
