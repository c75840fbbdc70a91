"""Where the CLI writes: `out` for results, `err` for errors (the commands share them)."""

from __future__ import annotations

from rich.console import Console

out = Console()
if not out.is_terminal:
    out = Console(width=140)  # pipes and CI logs: do not squeeze the tables to 80 columns
err = Console(stderr=True)
