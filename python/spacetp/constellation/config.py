"""`[constellation]` read and checked: shells (a Walker shell or TLEs), their ISL pattern,
the ground stations (listed, or by city from the shipped table), the ground-satellite link
rule, the routing step. Every error names the field path and the rule (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spacetp.linksrc.common import fail, number, seconds, station, table, utc

TOP_FIELDS = {"start", "step", "duration", "shells", "ground_stations", "cities", "gsl", "isl"}
SHELL_FIELDS = {"name", "walker", "tle", "planes", "per_plane", "isls"}
WALKER_FIELDS = {
    "epoch",
    "altitude_km",
    "mean_motion",
    "inclination",
    "planes",
    "per_plane",
    "phasing",
    "raan",
    "odd_plane_offset",
}
GSL_FIELDS = {"elevation_mask", "max_length_km", "rate", "queue", "errors"}
ISL_FIELDS = {"rate", "queue", "errors"}
ISL_PATTERNS = ("+grid", "none")


@dataclass
class Shell:
    name: str
    planes: int
    per_plane: int
    isls: str
    walker: dict | None = None
    tle: str | None = None


@dataclass
class Constellation:
    start: Any  # datetime: the instant of t = 0
    step: float  # routing step, s
    duration: float  # s
    shells: list[Shell]
    stations: list[dict]
    gsl_mask_deg: float | None
    gsl_max_km: float | None
    gsl_link: dict = field(default_factory=dict)
    isl_link: dict = field(default_factory=dict)


def _shell(cfg: Any, path: str, i: int) -> Shell:
    table(cfg, path, SHELL_FIELDS)
    name = str(cfg.get("name", f"shell{i}"))
    if ("walker" in cfg) == ("tle" in cfg):
        raise fail(path, "give the satellites: `walker` or `tle`, one of them")
    isls = cfg.get("isls", "+grid")
    if isls not in ISL_PATTERNS:
        raise fail(f"{path}.isls", f"{isls!r}: must be one of {', '.join(ISL_PATTERNS)}")
    if "walker" in cfg:
        w = table(
            cfg["walker"],
            f"{path}.walker",
            WALKER_FIELDS,
            {"epoch", "inclination", "planes", "per_plane"},
        )
        wp = f"{path}.walker"
        utc(w["epoch"], f"{wp}.epoch")
        if ("mean_motion" in w) == ("altitude_km" in w):
            raise fail(wp, "give `altitude_km` or `mean_motion` (revolutions per day), one of them")
        if "altitude_km" in w:
            number(w, "altitude_km", wp, 100, 100_000, what="an altitude in km")
        else:
            number(w, "mean_motion", wp, 0, 20, lo_open=True, what="a mean motion (rev/day)")
        number(w, "inclination", wp, 0, 180, what="an inclination in degrees")
        planes = int(number(w, "planes", wp, 1, 1000, what="a number of planes"))
        per = int(number(w, "per_plane", wp, 1, 1000, what="a number of satellites per plane"))
        number(w, "phasing", wp, 0, max(planes - 1, 0), 0, what="a phasing factor")
        offset = w.get("odd_plane_offset", False)
        if not isinstance(offset, bool):
            raise fail(f"{wp}.odd_plane_offset", f"{offset!r} must be true or false")
        if offset and w.get("phasing", 0):
            raise fail(f"{wp}.odd_plane_offset", "give it or `phasing`, not both")
        for k in ("planes", "per_plane"):
            if k in cfg:
                raise fail(f"{path}.{k}", "the walker shell sets it; remove it here")
        return Shell(name, planes, per, isls, walker=w)
    if not isinstance(cfg["tle"], str):
        raise fail(f"{path}.tle", "must be the TLE text (a multi-line string)")
    planes = int(number(cfg, "planes", path, 1, 1000, what="a number of planes"))
    per = int(number(cfg, "per_plane", path, 1, 1000, what="a number of satellites per plane"))
    return Shell(name, planes, per, isls, tle=cfg["tle"])


def _stations(cfg: dict, path: str) -> list[dict]:
    from spacetp.constellation.cities import city

    out = []
    given = cfg.get("ground_stations")
    if given is not None:
        if not isinstance(given, list):
            raise fail(f"{path}.ground_stations", "must be a list of {name, lat, lon} tables")
        for i, g in enumerate(given):
            p = f"{path}.ground_stations[{i}]"
            st = station(g, p)
            if not st["name"]:
                raise fail(f"{p}.name", "required: flows name their ends by it")
            out.append(st)
    cities = cfg.get("cities")
    if cities is not None:
        if not isinstance(cities, list) or not all(isinstance(c, str) for c in cities):
            raise fail(f"{path}.cities", 'must be a list of city names, e.g. ["Paris", "Moscow"]')
        for i, c in enumerate(cities):
            out.append(city(c, f"{path}.cities[{i}]"))
    if not out:
        raise fail(path, "give ground stations: `ground_stations` or `cities`")
    seen: set[str] = set()
    for st in out:
        if st["name"] in seen:
            raise fail(f"{path}.ground_stations", f"{st['name']!r} is named twice")
        seen.add(st["name"])
    return out


def _link_fields(cfg: Any, path: str, allowed: set[str]) -> dict:
    table(cfg, path, allowed)
    return {k: cfg[k] for k in ("rate", "queue", "errors") if k in cfg}


def read(sc: dict) -> Constellation:
    """The scenario's `[constellation]`, checked."""
    path = "constellation"
    cfg = table(sc[path], path, TOP_FIELDS, {"shells"})
    shells = cfg["shells"]
    if not isinstance(shells, list) or not shells:
        raise fail(f"{path}.shells", "must be a list of at least one shell")
    parsed = [_shell(s, f"{path}.shells[{i}]", i) for i, s in enumerate(shells)]
    step = seconds(cfg.get("step", "100 ms"), f"{path}.step", positive=True)
    if cfg.get("duration") is not None:
        duration = seconds(cfg["duration"], f"{path}.duration", positive=True)
    elif sc.get("stop") is not None:
        duration = seconds(sc["stop"], "stop", positive=True)
    else:
        raise fail(f"{path}.duration", "required when the scenario has no `stop`")
    if duration / step > 1_000_000:
        raise fail(f"{path}.step", f"{duration / step:.0f} routing steps: at most 1 000 000")
    first = parsed[0]
    start = (
        utc(cfg["start"], f"{path}.start")
        if "start" in cfg
        else utc(first.walker["epoch"], f"{path}.start")
        if first.walker
        else None
    )
    if start is None:
        raise fail(f"{path}.start", "required with TLE shells: the UTC instant of t = 0")
    gsl = cfg.get("gsl", {})
    gsl_link = _link_fields(gsl, f"{path}.gsl", GSL_FIELDS)
    mask = max_km = None
    if "max_length_km" in gsl:
        max_km = number(gsl, "max_length_km", f"{path}.gsl", 0, 1e6, lo_open=True, what="a length")
        if "elevation_mask" in gsl:
            raise fail(f"{path}.gsl.max_length_km", "give it or `elevation_mask`, not both")
    else:
        mask = number(gsl, "elevation_mask", f"{path}.gsl", 0, 90, 25.0, hi_open=True,
                      what="an elevation mask in degrees")  # fmt: skip
    isl_link = _link_fields(cfg.get("isl", {}), f"{path}.isl", ISL_FIELDS)
    return Constellation(
        start=start,
        step=step,
        duration=duration,
        shells=parsed,
        stations=_stations(cfg, path),
        gsl_mask_deg=mask,
        gsl_max_km=max_km,
        gsl_link=gsl_link,
        isl_link=isl_link,
    )
