"""What the link sources share: reading their fields with errors that name the field path
and the rule, UTC instants, the time grid, stations, and writing schedules in the form the
core reads (`{ schedule = [[time, value], ...] }`)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from spacetp.errors import ScenarioError
from spacetp.units import to_si

if TYPE_CHECKING:  # numpy is imported where a link source samples (not for every load)
    import numpy as np

C_KM_S = 299_792.458  # speed of light, km/s (exact, SI)


def fail(path: str, rule: str) -> ScenarioError:
    return ScenarioError(f"{path}: {rule}", path)


def table(cfg: Any, path: str, allowed: set[str], required: set[str] = frozenset()) -> dict:
    """A TOML table with only `allowed` keys and every `required` one."""
    if not isinstance(cfg, dict):
        raise fail(path, "must be a table, e.g. { lat = 48.0, lon = 2.0 }")
    for k in cfg:
        if k not in allowed:
            raise fail(f"{path}.{k}", f"unknown field; fields here: {', '.join(sorted(allowed))}")
    for k in sorted(required):
        if k not in cfg:
            raise fail(f"{path}.{k}", "required")
    return cfg


def number(
    cfg: dict,
    key: str,
    path: str,
    lo: float,
    hi: float,
    default: float | None = None,
    *,
    hi_open: bool = False,
    lo_open: bool = False,
    what: str = "",
) -> float:
    """A number in [lo, hi] (or half-open), default when absent (None: required)."""
    v = cfg.get(key, default)
    p = f"{path}.{key}"
    if v is None:
        raise fail(p, "required")
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise fail(p, f"{v!r} is not a number")
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    if v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        raise fail(p, f"{v} is not {what or 'allowed'}; must be in {left}{lo:g}, {hi:g}{right}")
    return float(v)


def seconds(value: Any, path: str, *, positive: bool = False) -> float:
    """A duration as the scenario writes it ("15 s", "20 min", or a number of seconds)."""
    si = to_si(value)
    if si is None or si[1] not in (None, "duration") or si[0] < 0:
        raise fail(path, f'{value!r} is not a duration; use e.g. "15 s" or "20 min"')
    if positive and si[0] <= 0:
        raise fail(path, f"{value!r} must be above 0")
    return si[0]


def utc(value: Any, path: str) -> datetime:
    """An ISO 8601 UTC instant ("2019-12-09T17:00:00Z")."""
    if not isinstance(value, str):
        raise fail(path, f'{value!r} is not a UTC instant; use e.g. "2019-12-09T17:00:00Z"')
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise fail(
            path, f'{value!r} is not a UTC instant; use ISO 8601, e.g. "2019-12-09T17:00:00Z"'
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    if t.utcoffset() != UTC.utcoffset(None):
        raise fail(path, f"{value!r}: give the instant in UTC (ending in Z)")
    return t.astimezone(UTC)


def horizon(cfg: dict, key: str, path: str, stop: Any) -> float:
    """How far a source's schedules reach: its own `duration`, else the scenario's stop."""
    if cfg.get(key) is not None:
        return seconds(cfg[key], f"{path}.{key}", positive=True)
    if stop is None:
        raise fail(f"{path}.{key}", "required when the scenario has no `stop`")
    return seconds(stop, "stop", positive=True)


def grid(duration: float, resolution: float, extra: np.ndarray | None = None) -> np.ndarray:
    """Sample times 0, res, 2 res, ... up to and including `duration`, with `extra` ones."""
    import numpy as np

    n = int(math.floor(duration / resolution + 1e-9))
    t = np.arange(n + 1) * resolution
    if t[-1] < duration:
        t = np.append(t, duration)
    if extra is not None and len(extra):
        t = np.union1d(t, extra[(extra >= 0) & (extra <= duration)])
    return t


STATION_FIELDS = {"name", "lat", "lon", "alt_m", "elevation_mask"}


def station(cfg: Any, path: str) -> dict:
    """A station's fields, checked: latitude, longitude, height, elevation mask."""
    table(cfg, path, STATION_FIELDS, {"lat", "lon"})
    return {
        "name": str(cfg.get("name", "")),
        "lat": number(cfg, "lat", path, -90, 90, what="a latitude"),
        "lon": number(cfg, "lon", path, -180, 180, what="a longitude"),
        "alt_m": number(cfg, "alt_m", path, -500, 100_000, 0.0, what="a height in metres"),
        "mask": number(
            cfg, "elevation_mask", path, 0, 90, 0.0, hi_open=True, what="an elevation mask"
        ),
    }


def steps(t: np.ndarray, v: np.ndarray, as_bool: bool = False) -> list[list]:
    """A step schedule from samples: a point where the value changes (and the first)."""
    out: list[list] = []
    last = None
    for ti, vi in zip(t.tolist(), v.tolist(), strict=True):
        x = bool(vi) if as_bool else float(vi)
        if last is None or x != last:
            out.append([ti, x])
            last = x
    return out


def linear(t: np.ndarray, v: np.ndarray) -> list[list]:
    return [[a, b] for a, b in zip(t.tolist(), v.tolist(), strict=True)]


def up_points(t: np.ndarray, margin: np.ndarray) -> list[list]:
    """An up/down step schedule from a margin sampled at `t` (up where margin >= 0), each
    change placed where the margin crosses 0 by linear interpolation between samples."""
    import numpy as np

    up = margin >= 0
    out: list[list] = [[0.0, bool(up[0])]]
    for k in np.flatnonzero(up[1:] != up[:-1]):
        m0, m1 = float(margin[k]), float(margin[k + 1])
        f = m0 / (m0 - m1) if m0 != m1 else 1.0
        tc = float(t[k] + f * (t[k + 1] - t[k]))
        if tc <= out[-1][0]:
            tc = out[-1][0] + 1e-9
        out.append([tc, bool(up[k + 1])])
    return out


class Fields:
    """The link fields a source sets, each checked against what the user wrote (never
    silently overridden) and against the other sources of the same link."""

    def __init__(self, link: dict, path: str):
        self.link, self.path = link, path
        self.set: dict[str, tuple[Any, str]] = {}

    def put(self, field: str, value: Any, by: str) -> None:
        if field in self.link and self.link[field] is not None:
            raise fail(
                f"{self.path}.{field}",
                f"`{by}` sets it; remove one of the two",
            )
        if field in self.set:
            raise fail(
                f"{self.path}.{field}",
                f"both `{self.set[field][1]}` and `{by}` set it; keep one",
            )
        self.set[field] = (value, by)

    def apply(self) -> dict:
        out = dict(self.link)
        for k, (v, _) in self.set.items():
            out[k] = v
        return out
