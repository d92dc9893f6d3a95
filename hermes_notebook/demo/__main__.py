"""``python -m hermes_notebook.demo``: see :mod:`hermes_notebook.demo`."""

from __future__ import annotations

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
