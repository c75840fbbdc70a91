"""Numbers as people read them: `620 kb/s`, `1.95 Mb/s`, `64.4 s`, `4.5 min`, `5 MB`, never
`1.947e+05`. Every table and page spacetp prints (run, sweep, results, compare, the reports)
formats its numbers here.

A metric's unit follows from its name (spacetp.metrics): `..._bps` is a rate, `..._s` a
duration, `...bytes...` a size, `complete` a fraction shown in percent, the counters
(`retransmitted_segments`, `timeouts`, ...) plain numbers. `with_ci` writes a mean and the
half-width of its confidence interval in the same unit: `620 kb/s ± 12 kb/s`; `interval` a
mean and the bounds of an interval that need not be symmetric: `5.35 s (5.21–5.52)`.
"""

from __future__ import annotations

import math

SIG = 3  # significant digits shown

RATE_UNITS = (("b/s", 1.0), ("kb/s", 1e3), ("Mb/s", 1e6), ("Gb/s", 1e9), ("Tb/s", 1e12))
SIZE_UNITS = (("B", 1.0), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12))


def missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def number(x: float, sig: int = SIG) -> str:
    """`x` with `sig` significant digits and no exponent (12 345 678 stays whole); values
    below 0.001 keep a short exponent (`1e-5`: bit error rates read that way)."""
    if missing(x):
        return "-"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if abs(x) < 1e-3:
        mantissa, exp = f"{x:.{sig - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exp)}"
    decimals = max(0, sig - 1 - math.floor(math.log10(abs(x))))
    text = f"{round(x, decimals):,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _scaled(x: float, units: tuple[tuple[str, float], ...], sig: int) -> tuple[str, str, float]:
    """(number text, unit, scale) with the unit that puts |x| in [1, 1000)."""
    unit, scale = units[0]
    for u, s in units:
        if abs(x) >= s:
            unit, scale = u, s
    text = number(x / scale, sig)
    # rounding may reach 1000 (999.96 kb/s): say 1 Mb/s instead
    if abs(float(text.replace(",", ""))) >= 1000 and unit != units[-1][0]:
        i = [u for u, _ in units].index(unit)
        unit, scale = units[i + 1]
        text = number(x / scale, sig)
    return text, unit, scale


def rate(bps: float, sig: int = SIG) -> str:
    """`620 kb/s`, `1.95 Mb/s` (decimal prefixes, bits)."""
    if missing(bps):
        return "-"
    text, unit, _ = _scaled(float(bps), RATE_UNITS, sig)
    return f"{text} {unit}"


def size(nbytes: float, sig: int = SIG) -> str:
    """`5 MB`, `137 kB`, `40 B` (decimal prefixes, bytes)."""
    if missing(nbytes):
        return "-"
    text, unit, _ = _scaled(float(nbytes), SIZE_UNITS, sig)
    return f"{text} {unit}"


def _duration_unit(s: float) -> tuple[str, float]:
    a = abs(s)
    if a == 0 or a >= 172800:
        return ("h", 3600.0) if a else ("s", 1.0)
    if a >= 7200:
        return "h", 3600.0
    if a >= 120:
        return "min", 60.0
    if a >= 1:
        return "s", 1.0
    if a >= 1e-3:
        return "ms", 1e-3
    return "µs", 1e-6


def duration(s: float, sig: int = SIG) -> str:
    """`540 ms`, `64.4 s`, `4.5 min`, `2.1 h`."""
    if missing(s):
        return "-"
    s = float(s)
    if math.isinf(s):
        return "never"
    unit, scale = _duration_unit(s)
    return f"{number(s / scale, sig)} {unit}"


def percent(fraction: float) -> str:
    if missing(fraction):
        return "-"
    return f"{number(100.0 * float(fraction), 3)}%"


def kind_of_metric(name: str) -> str:
    """ "rate", "duration", "size", "fraction" or "count" for a metric or summary field name."""
    field = name.rsplit(".", 1)[-1].split(":")[0]
    if field.endswith("_bps"):
        return "rate"
    if field.endswith("_s"):
        return "duration"
    if "bytes" in field or field.endswith("_bytes"):
        return "size"
    if field in ("complete", "all_complete"):
        return "fraction"
    return "count"


def metric(name: str, value: float) -> str:
    """A metric's value in its unit (see kind_of_metric)."""
    kind = kind_of_metric(name)
    if kind == "rate":
        return rate(value)
    if kind == "duration":
        return duration(value)
    if kind == "size":
        return size(value)
    if kind == "fraction":
        return percent(value)
    return number(value)


def with_ci(name: str, mean: float, ci: float) -> str:
    """`620 kb/s ± 12 kb/s`: a mean and its 95% CI half-width in the mean's unit; the mean
    alone when the interval is unknown (one replicate)."""
    if missing(mean):
        return "-"
    text = metric(name, mean)
    if missing(ci):
        return text
    kind = kind_of_metric(name)
    if kind == "fraction":
        return f"{text} ± {number(100.0 * ci, 2)}%"
    if kind in ("rate", "size", "duration"):
        if kind == "duration":
            unit, scale = _duration_unit(float(mean))
        else:
            table = RATE_UNITS if kind == "rate" else SIZE_UNITS
            _, unit, scale = _scaled(float(mean), table, SIG)
        return f"{text} ± {_half_width(ci / scale, mean / scale)} {unit}"
    return f"{text} ± {_half_width(ci, mean)}"


def interval(name: str, mean: float, lo: float, hi: float) -> str:
    """`5.35 s (5.21–5.52)`: a mean and its confidence interval's bounds in the mean's unit
    (an interval that need not be symmetric: spacetp.stats.bootstrap_ci); the mean alone
    when the interval is unknown (one replicate)."""
    if missing(mean):
        return "-"
    text = metric(name, mean)
    if missing(lo) or missing(hi):
        return text
    kind = kind_of_metric(name)
    scale = 1.0
    if kind == "duration":
        scale = _duration_unit(float(mean))[1]
    elif kind in ("rate", "size"):
        scale = _scaled(float(mean), RATE_UNITS if kind == "rate" else SIZE_UNITS, SIG)[2]
    elif kind == "fraction":
        scale = 0.01

    def bound(v: float) -> str:
        return number(v / scale).replace(",", "")

    return f"{text} ({bound(lo)}–{bound(hi)})"


def _half_width(ci: float, mean: float) -> str:
    """A CI half-width to 2 digits, or `<0.01` (the mean's last digit) when it is smaller
    than what the mean shows: no exponent beside a plain mean."""
    if ci == 0:
        return "0"
    if mean != 0 and math.isfinite(mean):
        last = 10.0 ** (math.floor(math.log10(abs(mean))) - SIG + 1)
        if abs(ci) < last / 2:
            return f"<{number(last)}"
    return number(ci, 2)


def axis_label(name: str) -> str:
    """The unit to put on an axis for a metric: `b/s`, `s`, `B`, `%` or nothing."""
    return {"rate": "b/s", "duration": "s", "size": "B", "fraction": "", "count": ""}[
        kind_of_metric(name)
    ]
