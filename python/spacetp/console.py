"""Where the CLI writes: `out` for results, `err` for errors (the commands share them).

The commands of wide tables (sweep, results, plot, compare, tune, reproduce) write to
`table_out` and `table_err` (160 columns when piped).

All are rich Consoles made on first use (`console.out`, or `from spacetp.console import out`
inside a function): importing rich costs about 18 ms, which a `spacetp run -q` (or any
command that prints nothing) need not pay. Modules that print read them as `console.out`,
not bound at their own import.
"""

from __future__ import annotations

from typing import Any


def stdout_console(piped_width: int, **options: Any):
    """A rich Console on stdout, `piped_width` columns wide when stdout is not a terminal
    (pipes and CI logs: do not squeeze the tables to 80 columns)."""
    from rich.console import Console

    console = Console(**options)
    return console if console.is_terminal else Console(width=piped_width, **options)


def stderr_console(**options: Any):
    from rich.console import Console

    return Console(stderr=True, **options)


def __getattr__(name: str) -> Any:
    # emoji=False: rich would turn `:b:` in `a:b:linN` (or any user text) into an emoji.
    if name == "out":
        made = stdout_console(140, emoji=False)
    elif name == "err":
        made = stderr_console(emoji=False)
    elif name == "table_out":
        made = stdout_console(160)
    elif name == "table_err":
        made = stderr_console()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = made  # made once: the next reads find it without this function
    return made
