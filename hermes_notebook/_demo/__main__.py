"""``python -m hermes_notebook._demo``: what ``./demo`` runs after setting up the environments."""

from __future__ import annotations

import sys

from .launcher import main

if __name__ == "__main__":
    sys.exit(main())
