"""Sweep grids: which scenario fields vary and over which values.

A grid is a list of axes; the points are their cartesian product. An axis is one path with
its values, or several paths zipped together (they change in step). Value specs:

    50 ms,100 ms,200 ms      a list; each item is parsed as a TOML value when it is one
                             (`4`, `1e-5`, `true`, `"5 MB"`, `{ per = 0.01 }`), else kept as
                             bare text (`50 ms`), exactly as `--set` does
    lin:A:B:N                N evenly spaced values from A to B, ends included
    log:A:B:N                N values evenly spaced in log scale (A, B > 0)

Range ends may carry a unit, the same one at both ends: `lin:50 ms:300 ms:6` gives the
strings "50 ms", "100 ms", ..., "300 ms". Without unit the values are numbers; they are
integers when both ends are written as integers and every value is whole
(`lin:2:10:5` -> 2, 4, 6, 8, 10; `log:1:1000:4` -> 1, 10, 100, 1000), as integer fields such
as `flows[0].tcp.initial_window` require. Values are rounded to 12 significant digits so
that `lin:0:1:11` gives 0.3 and not 0.30000000000000004.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import dataclass
from typing import Any

from spacetp import units
from spacetp.scenario import ScenarioError, _parse_value, copy_of, set_value


@dataclass(frozen=True)
class Axis:
    """Paths that vary together, and their values: one tuple per step, one item per path."""

    paths: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]

    def to_json(self) -> dict:
        return {"paths": list(self.paths), "values": [list(v) for v in self.values]}

    @classmethod
    def from_json(cls, d: dict) -> Axis:
        return cls(tuple(d["paths"]), tuple(tuple(v) for v in d["values"]))


def split_items(text: str) -> list[str]:
    """Split on commas that are not inside quotes, brackets or braces (TOML tables and
    arrays keep their commas)."""
    items, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    items.append("".join(cur))
    return items


def _round(x: float) -> float:
    return float(f"{x:.12g}")


def _range(kind: str, body: str, shown: str) -> list[Any]:
    usage = f"use {kind}:A:B:N, e.g. {kind}:1e-9:1e-5:9 or {kind}:50 ms:300 ms:6"
    parts = body.split(":")
    if len(parts) != 3:
        raise ScenarioError(f"--grid {shown}: a range has three fields after `{kind}:`; {usage}")
    ends = []
    for p in parts[:2]:
        q = units.split(p)
        if q is None:
            raise ScenarioError(f"--grid {shown}: {p.strip()!r} is not a number; {usage}")
        ends.append(q)
    (a, unit_a), (b, unit_b) = ends
    if unit_a != unit_b:
        raise ScenarioError(
            f"--grid {shown}: both ends need the same unit (got {unit_a or 'none'} and "
            f"{unit_b or 'none'})"
        )
    if unit_a is not None and units.kind_of(unit_a) is None:
        raise ScenarioError(
            f"--grid {shown}: unknown unit {unit_a!r}; use a duration (ms, s...), a size "
            "(B, kB, MB...) or a rate (kb/s, Mb/s...)"
        )
    try:
        n = int(parts[2])
    except ValueError:
        raise ScenarioError(
            f"--grid {shown}: the number of points {parts[2].strip()!r} is not a whole number"
        ) from None
    if n < 2:
        raise ScenarioError(f"--grid {shown}: a range needs at least 2 points, got {n}")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ScenarioError(f"--grid {shown}: range ends must be finite")
    import numpy as np  # here: `import spacetp` stays without numpy

    if kind == "log":
        if a <= 0 or b <= 0:
            raise ScenarioError(f"--grid {shown}: log spacing needs ends above 0")
        xs = np.geomspace(a, b, n)
    else:
        xs = np.linspace(a, b, n)
    values = [_round(float(x)) for x in xs]
    values[0], values[-1] = a, b  # exactly as written
    if unit_a is not None:
        return [f"{x:.12g} {unit_a}" for x in values]
    written_int = all(not any(c in p for c in ".eE") for p in parts[:2])
    if written_int and all(x == int(x) for x in values):
        return [int(x) for x in values]
    return values


def parse_values(spec: str, shown: str | None = None) -> list[Any]:
    """The values of one spec (list, lin:... or log:...)."""
    shown = shown or spec
    text = spec.strip()
    if not text:
        raise ScenarioError(f"--grid {shown}: no values; use PATH=V1,V2,... or PATH=log:A:B:N")
    for kind in ("lin", "log"):
        if text.startswith(kind + ":"):
            return _range(kind, text[len(kind) + 1 :], shown)
    items = split_items(text)
    if any(not s.strip() for s in items):
        raise ScenarioError(f"--grid {shown}: empty item in the list of values")
    return [_parse_value(s) for s in items]


def parse_spec(text: str) -> tuple[str, list[Any]]:
    """`PATH=SPEC` -> (path, values)."""
    path, sep, spec = text.partition("=")
    if not sep or not path.strip():
        raise ScenarioError(
            f"--grid {text}: use PATH=VALUES, e.g. 'links[1].delay=50 ms,100 ms' or "
            "'links[1].errors.per=log:1e-5:1e-2:4'"
        )
    return path.strip(), parse_values(spec, text)


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as plain Python values (JSON and hashing need them)."""
    np = sys.modules.get("numpy")  # none without numpy imported
    if np is not None and isinstance(value, np.generic):
        return value.item()
    if np is not None and isinstance(value, np.ndarray):
        return value.tolist()
    return value


def make_axes(grid: dict | None, zipped: list[str] | None = None) -> list[Axis]:
    """Axes from the Python form `{path: values}`: values a spec string or a list;
    `{(path_a, path_b): [(a1, b1), (a2, b2)]}` zips paths. `zipped` is the CLI's `--zip`
    specs, all varying together as one axis."""
    axes = []
    for key, vals in (grid or {}).items():
        if isinstance(key, tuple):
            paths = tuple(p.strip() for p in key)
            if isinstance(vals, str) or not all(
                isinstance(v, tuple | list) and len(v) == len(paths) for v in vals
            ):
                raise ScenarioError(
                    f"grid {key}: zipped paths take a list of tuples of {len(paths)} values"
                )
            steps = tuple(tuple(_plain(x) for x in v) for v in vals)
        else:
            paths = (key.strip(),)
            values = parse_values(vals, f"{key}={vals}") if isinstance(vals, str) else vals
            steps = tuple((_plain(v),) for v in values)
        axes.append(Axis(paths, steps))
    if zipped:
        specs = [parse_spec(z) for z in zipped]
        lengths = {len(v) for _, v in specs}
        if len(lengths) != 1:
            shown = ", ".join(f"{p} ({len(v)})" for p, v in specs)
            raise ScenarioError(f"--zip: every zipped path needs as many values: {shown}")
        paths = tuple(p for p, _ in specs)
        axes.append(Axis(paths, tuple(zip(*(v for _, v in specs), strict=True))))
    return axes


def check_axes(axes: list[Axis], base: dict) -> None:
    """Reject what would make a meaningless sweep before anything runs: unknown paths (checked
    against the schema by set_value), a path on two axes, seeds on an axis, repeated values."""
    seen: set[str] = set()
    for ax in axes:
        if not ax.values:
            raise ScenarioError(f"--grid {', '.join(ax.paths)}: no values")
        for i, path in enumerate(ax.paths):
            if path == "seed":
                raise ScenarioError(
                    "--grid seed: seeds are derived per run; use reps (--reps) and the base "
                    "seed (--seed) instead"
                )
            if path in seen:
                raise ScenarioError(f"--grid {path}: this path is varied twice")
            seen.add(path)
            try:
                set_value(copy_of(base), path, ax.values[0][i])
            except ScenarioError as e:
                raise ScenarioError(str(e).replace("--set ", "--grid ", 1)) from None
        canon = [canonical(v) for v in ax.values]
        for v, c in zip(ax.values, canon, strict=True):
            if canon.count(c) > 1:
                raise ScenarioError(
                    f"--grid {', '.join(ax.paths)}: value {_show(v)} is listed twice"
                )
        for v in ax.values:
            for x in v:
                if isinstance(x, float) and not math.isfinite(x):
                    raise ScenarioError(f"--grid {', '.join(ax.paths)}: {x} is not finite")


def _show(v: tuple) -> str:
    return ", ".join(json.dumps(x) for x in v) if len(v) > 1 else json.dumps(v[0])


def canonical(value: Any) -> str:
    """Stable text of a value for hashing (dict keys sorted, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def points(axes: list[Axis]) -> list[dict[str, Any]]:
    """Every grid point as {path: value}, in axis order (the last axis varies fastest)."""
    out = []
    for combo in itertools.product(*(ax.values for ax in axes)):
        point = {}
        for ax, step in zip(axes, combo, strict=True):
            point.update(zip(ax.paths, step, strict=True))
        out.append(point)
    return out
