"""`links[i].orbit`: a ground station and satellites -> the link's up/down, delay and (with
`modcod`) rate and packet error rate over the run, sampled once before it.

Geometry: SGP4 positions (`sgp4`, Vallado's code) rotated to the ITRS by skyfield, the
station on the WGS84 ellipsoid by skyfield; elevation and slant range from the two vectors
(`satellites.look`; the tests check them against skyfield's own `altaz` and the pass times
against its `find_events`). Each sample picks the serving satellite (the only one, or the
handover policy's choice at the last reconfiguration instant); visibility changes are placed
between samples where the elevation margin crosses 0 (linear interpolation)."""

from __future__ import annotations

import math

import numpy as np

from spacetp.linksrc.common import (
    C_KM_S,
    Fields,
    fail,
    grid,
    horizon,
    linear,
    seconds,
    station,
    steps,
    table,
    utc,
)
from spacetp.linksrc.modcod import Modcod, combine_hops
from spacetp.linksrc.satellites import itrs_positions, look, satellites

ORBIT_FIELDS = {
    "start",
    "duration",
    "resolution",
    "tle",
    "elements",
    "walker",
    "station",
    "gateway",
    "handover",
    "modcod",
}
HANDOVER_FIELDS = {"policy", "every", "offset", "interruption"}
PREFILTER_STEP_S = 20.0
PREFILTER_MARGIN_DEG = 20.0  # a LEO satellite moves < 10 degrees of elevation in 10 s


def _handover(cfg: object, path: str) -> dict:
    cfg = {} if cfg is None else cfg
    table(cfg, path, HANDOVER_FIELDS)
    policy = cfg.get("policy", "highest_elevation")
    if policy not in ("highest_elevation", "sticky"):
        raise fail(f"{path}.policy", f"{policy!r}: use highest_elevation or sticky")
    every = seconds(cfg.get("every", 15.0), f"{path}.every", positive=True)
    offset = seconds(cfg.get("offset", 0.0), f"{path}.offset")
    if offset >= every:
        raise fail(f"{path}.offset", f"{offset:g} s must be below `every` ({every:g} s)")
    return {
        "policy": policy,
        "every": every,
        "offset": offset,
        "interruption": seconds(cfg.get("interruption", 0.0), f"{path}.interruption"),
    }


def _instants(start_posix: float, dur: float, every: float, offset: float) -> np.ndarray:
    """Reconfiguration instants in [0, dur]: UTC times at `offset` past a multiple of
    `every`."""
    k0 = math.ceil((start_posix - offset) / every - 1e-9)
    first = k0 * every + offset - start_posix
    return np.arange(first, dur + 1e-9, every)


def _down_from_margin(t: np.ndarray, m: np.ndarray) -> list[tuple[float, float]]:
    """Intervals where the sampled margin is below 0, ends interpolated between samples."""
    out, start = [], None
    if m[0] < 0:
        start = float(t[0])
    for k in range(len(t) - 1):
        a, b = float(m[k]), float(m[k + 1])
        if (a < 0) == (b < 0):
            continue
        tc = float(t[k] + (a / (a - b)) * (t[k + 1] - t[k]))
        if b < 0:
            start = tc
        else:
            out.append((start, tc))
            start = None
    if start is not None:
        out.append((start, math.inf))
    return out


def _merge(iv: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(a, b) for a, b in out]


def up_schedule(down: list[tuple[float, float]]) -> list[list]:
    """`[[time, up], ...]` from down intervals (an open end is math.inf)."""
    pts: list[list] = [[0.0, True]]
    for s, e in _merge(down):
        if s <= 0:
            pts[0][1] = False
        else:
            pts.append([s, False])
        if math.isfinite(e):
            pts.append([e, True])
    return pts


def _serving(el, margin, t, decisions, policy) -> np.ndarray:
    """The serving satellite's index at each sample."""
    n = len(t)
    serving = np.zeros(n, dtype=int)
    if el.shape[0] == 1:
        return serving
    cur = int(np.argmax(el[:, 0]))
    di = np.searchsorted(t, decisions)
    marks = set(di.tolist()) | {0}
    for k in range(n):
        if k in marks:
            vis = margin[:, k] >= 0
            keep = policy == "sticky" and vis[cur]
            if vis.any() and not keep:
                cur = int(np.argmax(np.where(vis, el[:, k], -np.inf)))
        serving[k] = cur
    return serving


def resolve(link: dict, path: str, stop, fields: Fields):
    """Set the link's fields from its orbit; returns a maker of the sampled table (pandas:
    built only when `spacetp schedule` shows it)."""
    o = table(link["orbit"], path, ORBIT_FIELDS, {"start", "station"})
    start = utc(o["start"], f"{path}.start")
    dur = horizon(o, "duration", path, stop)
    res = seconds(o.get("resolution", 1.0), f"{path}.resolution", positive=True)
    st = station(o["station"], f"{path}.station")
    gw = station(o["gateway"], f"{path}.gateway") if o.get("gateway") is not None else None
    mc = Modcod(o["modcod"], f"{path}.modcod") if o.get("modcod") is not None else None
    sats = satellites(o, path)
    ho = _handover(o.get("handover"), f"{path}.handover")
    s0 = start.timestamp()
    instants = _instants(s0, dur, ho["every"], ho["offset"]) if len(sats) > 1 else np.array([])

    if len(sats) > 8:  # keep the satellites that come near the station's sky during the run
        tc = grid(dur, min(PREFILTER_STEP_S, dur))
        elc, _ = look(itrs_positions(sats, start, tc, path), st)
        best = elc.max(axis=1)
        keep = best > st["mask"] - PREFILTER_MARGIN_DEG
        if not keep.any():
            keep = best == best.max()
        sats = [s for s, k in zip(sats, keep, strict=True) if k]

    t = grid(dur, res, instants)
    r = itrs_positions(sats, start, t, path)
    el, rng = look(r, st)
    margin = el - st["mask"]
    if gw is not None:
        el_g, rng_g = look(r, gw)
        margin = np.minimum(margin, el_g - gw["mask"])
    serving = _serving(el, margin, t, instants, ho["policy"])
    idx = np.arange(len(t))
    el_s, rng_s = el[serving, idx], rng[serving, idx]
    total = rng_s + (rng_g[serving, idx] if gw is not None else 0.0)
    delay = total / C_KM_S

    # Delay: linear through the samples, a step at each change of satellite.
    switches = np.flatnonzero(serving[1:] != serving[:-1]) + 1
    d_t, d_v = t.copy(), delay.copy()
    if len(switches):
        old = serving[switches - 1]
        before = (rng[old, switches] + (rng_g[old, switches] if gw is not None else 0)) / C_KM_S
        d_t = np.insert(d_t, switches, t[switches] - 1e-9)
        d_v = np.insert(d_v, switches, before)

    # Down: the serving satellite below a mask, no MODCOD, an interruption at a switch.
    down: list[tuple[float, float]] = []
    bounds = [0, *switches.tolist(), len(t)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        sat = serving[a]
        hi = b + 1 if b < len(t) else b  # the next sample too, to place a crossing before it
        seg_end = float(t[b]) if b < len(t) else math.inf
        for s, e in _down_from_margin(t[a:hi], margin[sat, a:hi]):
            down.append((s, min(e, seg_end)))
    for k in switches:
        if ho["interruption"] > 0:
            down.append((float(t[k]), float(t[k]) + ho["interruption"]))
    cols = {}
    if mc is not None:
        zen = np.linalg.norm(r[serving, idx], axis=-1) - np.linalg.norm(look_station_pos(st))
        esn0 = mc.esn0_hop(el_s, rng_s, zen)
        if gw is not None:
            zen_g = np.linalg.norm(r[serving, idx], axis=-1) - np.linalg.norm(look_station_pos(gw))
            esn0 = combine_hops(esn0, mc.esn0_hop(el_g[serving, idx], rng_g[serving, idx], zen_g))
        rate, per, k = mc.choose(esn0)
        for i in np.flatnonzero(k < 0):
            down.append((float(t[i]), float(t[i + 1]) if i + 1 < len(t) else math.inf))
        ok = k >= 0
        if ok.any():  # hold the last working rate where none works (the link is down)
            fill = np.maximum.accumulate(np.where(ok, idx, -1))
            fill = np.where(fill < 0, np.flatnonzero(ok)[0], fill)
            rate, per = rate[fill], per[fill]
        else:
            rate, per = np.full(len(t), mc.symbol_rate * mc.rows[0][2]), np.full(len(t), 1.0)
        rate_s, per_s = {"schedule": steps(t, rate)}, {"per": {"schedule": steps(t, per)}}
        fwd = mc.directions in ("both", "forward")
        back = mc.directions in ("both", "back")
        if fwd:
            fields.put("rate", rate_s, "orbit.modcod")
            fields.put("errors", per_s, "orbit.modcod")
        if back:
            fields.put("rate_back", rate_s, "orbit.modcod")
            fields.put("errors_back", per_s, "orbit.modcod")
        if not back and link.get("rate_back") is None:
            raise fail(
                f"{path}.modcod.directions",
                '"forward": give the back direction\'s `rate_back` (else it copies '
                "the forward schedule)",
            )
        if not back and link.get("errors_back") is None:
            fields.put("errors_back", {}, "orbit.modcod")
        if not fwd and link.get("rate") is None:
            raise fail(f"{path}.modcod.directions", '"back": give the forward `rate`')
        cols = {
            "esn0_db": esn0,
            "modcod": [mc.name(int(x)) for x in k],
            "rate_bps": rate,
            "per": per,
        }
    delay_s = {"schedule": linear(d_t, d_v)}
    fields.put("delay", delay_s, "orbit")
    fields.put("delay_back", delay_s, "orbit")
    up = up_schedule(down)
    fields.put("up", {"schedule": up}, "orbit")
    fields.put("up_back", {"schedule": up}, "orbit")

    # The table's columns now (the schedules above may be changed by the caller later);
    # the frame, and pandas, only when asked.
    columns = {
        "time_s": t,
        "satellite": [sats[i].name for i in serving],
        "elevation_deg": el_s,
        "range_km": total,
        "delay_s": delay,
        "up": np.array([_up_at(up, x) for x in t.tolist()]),
        **({"gateway_elevation_deg": el_g[serving, idx]} if gw is not None else {}),
        **cols,
    }

    def sampled():
        import pandas as pd

        df = pd.DataFrame(columns)
        df.attrs["start_utc"] = start.isoformat()
        return df

    return sampled


def look_station_pos(st: dict) -> np.ndarray:
    from spacetp.linksrc.satellites import station_itrs

    return station_itrs(st)[0]


def _up_at(points: list[list], x: float) -> bool:
    v = points[0][1]
    for tp, u in points:
        if tp <= x:
            v = u
        else:
            break
    return bool(v)
