"""Running a saved notebook again in a fresh kernel, top to bottom, to the first error (nbclient).

The notebook file is read, never written: the run happens on a copy, in a new kernel of the notebook's own
kernelspec (or ``kernel_name``), with the notebook's folder as its working directory, so relative data
paths resolve as they did. Each code cell runs in order; the first cell whose outputs hold an error (or
that times out, or whose kernel dies) ends the run. :mod:`.compare` then judges every cell.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import runtime
from ..errors import HermesUsageError
from .compare import check_cells
from .masking import Mask
from .report import ReproReport

__all__ = ["reproduce", "reproduce_async"]


def _nbclient() -> Any:
    try:
        import nbclient
        import nbformat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise HermesUsageError(
            "hermes.reproduce needs nbclient (pip install 'hermes-notebook[reproduce]')"
        ) from exc
    return nbclient, nbformat


def _read(path: Path) -> Any:
    _, nbformat = _nbclient()
    if not path.is_file():
        raise HermesUsageError(f"reproduce: no notebook at {path}")
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises JSON, validation and version errors alike
        raise HermesUsageError(f"reproduce: {path} is not a notebook ({type(exc).__name__}: {exc})") from None


def _failure(cell: Any, ename: str, evalue: str) -> None:
    """A run that ended without an error output of the kernel's (a timeout, a dead kernel) gets one."""
    if not any(out.get("output_type") == "error" for out in cell.get("outputs") or []):
        cell.setdefault("outputs", []).append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}
        )


async def _run(client: Any, cells: Sequence[Any]) -> dict[int, Mapping[str, Any]]:
    """Run the code cells in order; the cells reached, by index, the erring one last."""
    nbclient, _ = _nbclient()
    reached: dict[int, Mapping[str, Any]] = {}
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        reached[index] = cell
        try:
            await client.async_execute_cell(cell, index)
        except nbclient.exceptions.CellExecutionError:
            return reached  # the error output is in the cell
        except nbclient.exceptions.CellTimeoutError as exc:
            _failure(cell, "CellTimeoutError", str(exc).splitlines()[0] if str(exc) else "timed out")
            return reached
        except nbclient.exceptions.DeadKernelError as exc:
            _failure(cell, "DeadKernelError", str(exc) or "the kernel died")
            return reached
        if any(out.get("output_type") == "error" for out in cell.outputs):
            return reached  # an error the cell was tagged to raise still ends the run
    return reached


@runtime.on_loop
async def reproduce_async(
    path: str | Path,
    *,
    kernel_name: str | None = None,
    timeout: float | None = None,
    masks: Sequence[Mask] = (),
) -> ReproReport:
    """Does the saved notebook at ``path`` still give its outputs? Runs it top to bottom on a copy in a fresh
    kernel, stops at the first error, and reports each code cell as same, changed (with a diff), error or not
    reached: a :class:`~.report.ReproReport` (shown as a table; ``to_markdown()``, ``to_dict()``).

    ``timeout``: seconds one cell may run (None: no limit); ``masks``: more ``(pattern, token)``
    pairs of volatile text of your own (a run's date, a temporary path)."""
    nbclient, _ = _nbclient()
    notebook_path = Path(path).expanduser().resolve()
    saved = _read(notebook_path)
    copy_ = copy.deepcopy(saved)
    client = nbclient.NotebookClient(
        copy_,
        timeout=timeout,
        kernel_name=kernel_name or "",
        allow_errors=False,
        resources={"metadata": {"path": str(notebook_path.parent)}},
    )
    started = time.perf_counter()
    async with client.async_setup_kernel():
        reached = await _run(client, copy_.cells)
        kernel = str(getattr(client.km, "kernel_name", "") or client.kernel_name)
    return ReproReport(
        path=str(notebook_path),
        kernel=kernel,
        seconds=time.perf_counter() - started,
        cells=tuple(check_cells(saved.cells, reached, masks)),
    )


#: The blocking twin, for a notebook cell or a script: ``hermes.reproduce(path)``.
reproduce = runtime.blocking(reproduce_async)
