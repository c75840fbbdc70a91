"""Where the CLI writes: `out` for results, `err` for errors (the commands share them)."""

from __future__ import annotations

from rich.console import Console

# emoji=False: rich would turn `:b:` in `a:b:linN` (or any user text) into an emoji.
out = Console(emoji=False)
if not out.is_terminal:
    # Pipes and CI logs: do not squeeze the tables to 80 columns.
    out = Console(width=140, emoji=False)
err = Console(stderr=True, emoji=False)
