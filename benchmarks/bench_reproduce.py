"""What the reproducibility check costs over running the same notebook with plain nbclient (target <= 1.2x).

Run: ``.venv/bin/python benchmarks/bench_reproduce.py [--cells 40] [--rounds 5] [--json]``

The notebook: ``--cells`` code cells, each doing ~30 ms of pure-Python work and printing 200 lines, with an
object repr (a memory address) and a ``%time`` line among them, so the masks have work to do; its saved
outputs come from a first nbclient run. Baseline: ``NotebookClient(nb).execute()`` on a copy (kernel start,
every cell, kernel stop), as ``jupyter nbconvert --execute`` would run it. Ours: ``reproduce(path)``: reading
the file, the same fresh kernel run cell by cell (stopping at an error), and masking and comparing every cell.
Rounds alternate the two; the ratio is given best against best and median against median. The comparison
alone is timed too: judging every cell (``check_cells``) and masking every output (``cell_lines``).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbformat.v4 import new_code_cell, new_notebook  # noqa: E402

from hermes_notebook.reproducibility import reproduce  # noqa: E402
from hermes_notebook.reproducibility.compare import check_cells  # noqa: E402
from hermes_notebook.reproducibility.masking import cell_lines  # noqa: E402

CELL = """\
total = 0
for i in range(300_000):
    total += i % 7
for row in range(200):
    print(f"row {{row}}: {{total + row + {n}}}")
"""


def notebook(cells: int, folder: Path) -> Path:
    """A notebook of ``cells`` working cells (and two volatile ones), saved with its outputs."""
    body = [new_code_cell(CELL.format(n=n)) for n in range(cells)]
    body[1:1] = [new_code_cell("class Box:\n    pass\n\nBox()"), new_code_cell("%time sum(range(10_000))")]
    nb = new_notebook(cells=body, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(folder)}}).execute()
    path = folder / "bench.ipynb"
    nbformat.write(nb, path)
    return path


def plain_run(path: Path) -> float:
    """Seconds for nbclient alone on a copy of the notebook."""
    start = time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - start


def checked_run(path: Path) -> float:
    """Seconds for the whole reproducibility check."""
    start = time.perf_counter()
    report = reproduce(path, timeout=600)
    elapsed = time.perf_counter() - start
    assert report.reproduces, str(report)  # a benchmark of a failing check would measure something else
    return elapsed


def compare_only(path: Path, repeats: int = 10) -> tuple[float, float]:
    """Seconds to judge every cell once (the saved notebook against a copy of itself: equal outputs need no
    mask), and to mask every cell's outputs once (what a notebook whose every output moved would cost)."""
    saved = nbformat.read(path, as_version=4)
    ran = {index: cell for index, cell in enumerate(copy.deepcopy(saved).cells)}
    start = time.perf_counter()
    for _ in range(repeats):
        check_cells(saved.cells, ran)
    judged = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for _ in range(repeats):
        for cell in saved.cells:
            cell_lines(cell.get("outputs") or [])
    return judged, (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = notebook(args.cells, Path(folder))
        plain, checked = [], []
        for _ in range(args.rounds):
            plain.append(plain_run(path))
            checked.append(checked_run(path))
        judged, masked = compare_only(path)
    result = {
        "cells": args.cells + 2,
        "rounds": args.rounds,
        "plain_best_s": round(min(plain), 3),
        "plain_median_s": round(statistics.median(plain), 3),
        "check_best_s": round(min(checked), 3),
        "check_median_s": round(statistics.median(checked), 3),
        "ratio_best": round(min(checked) / min(plain), 3),
        "ratio_median": round(statistics.median(checked) / statistics.median(plain), 3),
        "judge_ms": round(judged * 1e3, 2),
        "mask_every_output_ms": round(masked * 1e3, 2),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['cells']} cells, {args.rounds} rounds: nbclient {result['plain_best_s']} s best, "
        f"{result['plain_median_s']} s median; reproduce {result['check_best_s']} s best, "
        f"{result['check_median_s']} s median"
    )
    print(
        f"overhead: {result['ratio_best']}x best/best, {result['ratio_median']}x median (target <= 1.2x); "
        f"judging every cell: {result['judge_ms']} ms; "
        f"masking every output: {result['mask_every_output_ms']} ms"
    )


if __name__ == "__main__":
    main()
