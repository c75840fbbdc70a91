"""Flag parsers the live commands share (`spacetp dtn`, `spacetp cfdp`)."""

from __future__ import annotations

import json
from typing import Any


def key_values(items: list[str], flag: str, example: str) -> dict[str, Any]:
    """`KEY=VALUE` pairs of a settings table; numbers stay numbers, the rest (sizes,
    durations, rates, modes) text. A pair without `=` is refused naming `flag`."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} {item}: want KEY=VALUE, e.g. {example}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out
