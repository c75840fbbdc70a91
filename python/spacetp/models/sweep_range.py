"""Sweep ranges as the CLI writes them: ``"p=1e-4:1e-1:log20"`` -> ``("p", array)``."""

from __future__ import annotations

import math
import re

import numpy as np

_RANGE = re.compile(r"^(log|lin)(\d+)$")


def parse_sweep(text: str) -> tuple[str, np.ndarray]:
    """Parse ``NAME=a:b:logN``, ``NAME=a:b:linN`` (N >= 2 points, ends included) or
    ``NAME=v1,v2,...`` into ``(NAME, values)``. Raises ValueError with the reason."""
    usage = "expected NAME=a:b:logN, NAME=a:b:linN or NAME=v1,v2,..."
    name, sep, rhs = text.partition("=")
    name, rhs = name.strip(), rhs.strip()
    if not sep or not name.isidentifier():
        raise ValueError(f"bad sweep {text!r}: {usage}")
    if not rhs:
        raise ValueError(f"bad sweep {text!r}: no values after '='; {usage}")

    def number(s):
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"bad sweep {text!r}: {s.strip()!r} is not a number") from None

    if ":" in rhs:
        parts = rhs.split(":")
        if len(parts) != 3:
            raise ValueError(f"bad sweep {text!r}: a range has three fields a:b:logN; {usage}")
        a, b = number(parts[0]), number(parts[1])
        m = _RANGE.match(parts[2].strip())
        if m is None:
            raise ValueError(
                f"bad sweep {text!r}: spacing {parts[2].strip()!r} must be logN or linN"
            )
        kind, n = m.group(1), int(m.group(2))
        if n < 2:
            raise ValueError(f"bad sweep {text!r}: a range needs at least 2 points, got {n}")
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"bad sweep {text!r}: range ends must be finite")
        if kind == "log":
            if a <= 0 or b <= 0:
                raise ValueError(f"bad sweep {text!r}: log spacing needs positive ends")
            return name, np.geomspace(a, b, n)
        return name, np.linspace(a, b, n)
    items = [s for s in rhs.split(",")]
    if any(not s.strip() for s in items):
        raise ValueError(f"bad sweep {text!r}: empty item in the list; {usage}")
    return name, np.array([number(s) for s in items])
