"""`[constellation]` read and checked: shells (a Walker shell or TLEs), their ISL pattern,
the ground stations (listed, or by city from the shipped table), the ground-satellite link
rule, the routing step. Every error names the field path and the rule (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spacetp.linksrc.common import fail, number, seconds, station, table, utc
from spacetp.linksrc.satellites import satellites

TOP_FIELDS = {"start", "step", "duration", "shells", "ground_stations", "cities", "gsl", "isl"}
SHELL_FIELDS = {"name", "walker", "tle", "planes", "per_plane", "isls"}
GSL_FIELDS = {"elevation_mask", "max_length_km", "rate", "queue", "errors", "device"}
GSL_DEVICES = ("per_link", "per_node")
ISL_FIELDS = {"rate", "queue", "errors"}
ISL_PATTERNS = ("+grid", "none")


@dataclass
class Shell:
    name: str
    planes: int
    per_plane: int
    isls: str
    sats: list  # linksrc.satellites.Satellite, plane by plane
    epoch: str | None = None  # a Walker shell's


@dataclass
class Constellation:
    start: Any  # datetime: the instant of t = 0
    step: float  # routing step, s
    duration: float  # s
    shells: list[Shell]
    stations: list[dict]
    gsl_mask_deg: float | None
    gsl_max_km: float | None


def _shell(cfg: Any, path: str, i: int) -> Shell:
    table(cfg, path, SHELL_FIELDS)
    name = str(cfg.get("name", f"shell{i}"))
    if ("walker" in cfg) == ("tle" in cfg):
        raise fail(path, "give the satellites: `walker` or `tle`, one of them")
    isls = cfg.get("isls", "+grid")
    if isls not in ISL_PATTERNS:
        raise fail(f"{path}.isls", f"{isls!r}: must be one of {', '.join(ISL_PATTERNS)}")
    if "walker" in cfg:
        for k in ("planes", "per_plane"):
            if k in cfg:
                raise fail(f"{path}.{k}", "the walker shell sets it; remove it here")
        sats = satellites({"walker": cfg["walker"]}, path)  # checks it: path.walker.FIELD
        w = cfg["walker"]
        return Shell(name, int(w["planes"]), int(w["per_plane"]), isls, sats, w["epoch"])
    planes = int(number(cfg, "planes", path, 1, 1000, what="a number of planes"))
    per = int(number(cfg, "per_plane", path, 1, 1000, what="a number of satellites per plane"))
    sats = satellites({"tle": cfg["tle"]}, path)
    if len(sats) != planes * per:
        raise fail(
            f"{path}.tle",
            f"{len(sats)} satellites, but planes x per_plane = {planes} x {per} = "
            f"{planes * per} (TLEs listed plane by plane)",
        )
    return Shell(name, planes, per, isls, sats)


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
            raise fail(path, f"ground station {st['name']!r} is given twice (cities or stations)")
        seen.add(st["name"])
    return out


LINK_SETTINGS = ("rate", "queue", "errors")


def link_settings(sc: dict) -> dict[str, dict]:
    """The GSLs' and ISLs' rate, queue and errors ({"gsl": ..., "isl": ...}), checked."""
    cfg = table(sc["constellation"], "constellation", TOP_FIELDS, {"shells"})
    return {
        "gsl": _link_fields(cfg.get("gsl", {}), "constellation.gsl", GSL_FIELDS),
        "isl": _link_fields(cfg.get("isl", {}), "constellation.isl", ISL_FIELDS),
    }


def gsl_device(sc: dict) -> str:
    """`constellation.gsl.device`, checked: "per_link" (default: each station-satellite
    pair a link of its own, a beam each) or "per_node" (Hypatia's one GSL device per
    satellite and per station, its queue and rate shared by all the node's GSLs)."""
    gsl = sc["constellation"].get("gsl") or {}
    device = gsl.get("device", "per_link") if isinstance(gsl, dict) else "per_link"
    if device not in GSL_DEVICES:
        allowed = ", ".join(GSL_DEVICES)
        raise fail("constellation.gsl.device", f"{device!r}: must be one of {allowed}")
    queue = gsl.get("queue") if isinstance(gsl, dict) else None
    if device == "per_node" and isinstance(queue, dict) and "bdp" in queue:
        raise fail(
            "constellation.gsl.queue.bdp",
            'with device = "per_node" a node\'s GSLs of different delays share one queue, '
            "which no one BDP sizes: give packets or bytes",
        )
    return device


def _link_fields(cfg: Any, path: str, allowed: set[str]) -> dict:
    """A GSL's or ISL's rate, queue and errors, checked by the core as a link's would be,
    errors named under `path`."""
    import json

    from spacetp import _core

    table(cfg, path, allowed)
    fields = {k: cfg[k] for k in LINK_SETTINGS if k in cfg}
    probe = {
        "stop": "1 s",
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "delay": "1 ms", "rate": "1 Mb/s"} | fields],
    }
    try:
        _core.validate_json(json.dumps(probe))
    except ValueError as e:
        where, _, rule = str(e).partition(": ")
        field = where.removeprefix("links[0]").lstrip(".")
        raise fail(f"{path}.{field}" if field else path, rule) from None
    return fields


def read(sc: dict) -> Constellation:
    """The scenario's `[constellation]`, checked."""
    path = "constellation"
    cfg = table(sc[path], path, TOP_FIELDS, {"shells"})
    shells = cfg["shells"]
    if not isinstance(shells, list) or not shells:
        raise fail(f"{path}.shells", "must be a list of at least one shell")
    parsed = [_shell(s, f"{path}.shells[{i}]", i) for i, s in enumerate(shells)]
    names = [sh.name for sh in parsed]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise fail(f"{path}.shells[{i}].name", f"{n!r} names an earlier shell too")
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
        else utc(first.epoch, f"{path}.start")
        if first.epoch
        else None
    )
    if start is None:
        raise fail(f"{path}.start", "required with TLE shells: the UTC instant of t = 0")
    gsl = cfg.get("gsl", {})
    table(gsl, f"{path}.gsl", GSL_FIELDS)  # its link settings: link_settings
    mask = max_km = None
    if "max_length_km" in gsl:
        max_km = number(gsl, "max_length_km", f"{path}.gsl", 0, 1e6, lo_open=True, what="a length")
        if "elevation_mask" in gsl:
            raise fail(f"{path}.gsl.max_length_km", "give it or `elevation_mask`, not both")
    else:
        mask = number(gsl, "elevation_mask", f"{path}.gsl", 0, 90, 25.0, hi_open=True,
                      what="an elevation mask in degrees")  # fmt: skip

    return Constellation(
        start=start,
        step=step,
        duration=duration,
        shells=parsed,
        stations=_stations(cfg, path),
        gsl_mask_deg=mask,
        gsl_max_km=max_km,
    )
