"""Numbers with units as scenarios write them (`"50 ms"`, `"1.5 Mb/s"`, `"5 MB"`), turned into
SI base units (seconds, bytes, bits per second) on the Python side: sweep ranges need to
check a unit, and figures need numbers on their axes. The simulator core parses scenario
values itself; the unit table here is the one of docs/scenario.md."""

from __future__ import annotations

import re

DURATION = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0}
DURATION |= {"min": 60.0, "h": 3600.0}
SIZE = {"B": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
SIZE |= {"KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}
RATE = {u: 1.0 for u in ("b/s", "bit/s", "bps")}
RATE |= {u: 1e3 for u in ("kb/s", "kbit/s", "kbps")}
RATE |= {u: 1e6 for u in ("Mb/s", "Mbit/s", "Mbps")}
RATE |= {u: 1e9 for u in ("Gb/s", "Gbit/s", "Gbps")}
RATE |= {"B/s": 8.0, "kB/s": 8e3, "MB/s": 8e6, "GB/s": 8e9}

# kind -> (units, SI unit shown on axes)
KINDS = {"duration": (DURATION, "s"), "size": (SIZE, "B"), "rate": (RATE, "b/s")}

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d.+-][^\s]*)?\s*$")


def split(text: str) -> tuple[float, str | None] | None:
    """`"50 ms"` -> (50.0, "ms"); `"1e-5"` -> (1e-05, None); not a quantity -> None."""
    m = _QUANTITY.match(text)
    if m is None:
        return None
    return float(m.group(1)), m.group(2)


def kind_of(unit: str) -> str | None:
    """ "duration", "size" or "rate" for a known unit, else None."""
    for kind, (table, _) in KINDS.items():
        if unit in table:
            return kind
    return None


def to_si(value: object) -> tuple[float, str | None] | None:
    """A scenario value as (number in SI base units, kind), kind None for a bare number.
    None when the value is not a number or a quantity with a known unit."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value), None
    if not isinstance(value, str):
        return None
    q = split(value)
    if q is None:
        return None
    number, unit = q
    if unit is None:
        return number, None
    kind = kind_of(unit)
    if kind is None:
        return None
    return number * KINDS[kind][0][unit], kind


def si_unit(kind: str | None) -> str:
    return "" if kind is None else KINDS[kind][1]
