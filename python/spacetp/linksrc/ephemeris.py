"""`links[i].ephemeris`: the one-way light time between two bodies of the solar system over
the run, from JPL's DE421 (the `de421.bsp` kernel the `skyfield-data` package ships, read by
skyfield: nothing is downloaded). DE421 covers 1899-07-29 to 2053-10-09; its planetary
positions are good to well under a kilometre over that span (Folkner et al., IPN Progress
Report 42-178, 2009), far below 0.1% of any light time here.

Each direction's delay is for a signal that leaves its sender at the schedule's time: from
A at t, the light time L solves |B(t + L) - A(t)| = c L (solved by iteration, barycentric
positions). Shapiro delay (at most ~0.25 ms near solar conjunction) and the troposphere are
not counted."""

from __future__ import annotations

import os

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
    table,
    utc,
)
from spacetp.linksrc.satellites import timescale

FIELDS = {"from", "to", "start", "duration", "resolution", "station"}
BODIES = {
    "earth": "earth",
    "moon": "moon",
    "sun": "sun",
    "mercury": "mercury",
    "venus": "venus",
    "mars": "mars",
    "jupiter": "jupiter barycenter",
    "saturn": "saturn barycenter",
}
DE421_FIRST, DE421_LAST = "1899-07-29", "2053-10-09"
_EPH = None


def ephemeris():
    """DE421 from the skyfield-data package (no download). Its folder is found beside the
    package rather than by `get_skyfield_data_path`, which warns about the Earth
    orientation file it also ships (unused here: skyfield's own builtin tables serve)."""
    global _EPH
    if _EPH is None:
        import skyfield_data
        from skyfield.api import load_file

        data = os.path.join(os.path.dirname(skyfield_data.__file__), "data")
        _EPH = load_file(os.path.join(data, "de421.bsp"))
    return _EPH


def _times(start, t):
    ts = timescale()
    sec = start.second + start.microsecond * 1e-6
    return ts.utc(start.year, start.month, start.day, start.hour, start.minute, sec + t)


def light_times(a, b, times, iterations: int = 4) -> np.ndarray:
    """Seconds for a signal leaving `a` at `times` to reach `b` (skyfield vector functions)."""
    ts = timescale()
    pa = a.at(times).position.km
    lt = np.linalg.norm(b.at(times).position.km - pa, axis=0) / C_KM_S
    for _ in range(iterations):
        pb = b.at(ts.tt_jd(times.tt + lt / 86400.0)).position.km
        lt = np.linalg.norm(pb - pa, axis=0) / C_KM_S
    return lt


def resolve(link: dict, path: str, stop, fields: Fields):
    """Set the link's delays (and up/down, with a station) from the ephemeris; returns a
    maker of the sampled table (pandas: built only when `spacetp schedule` shows it)."""
    from skyfield.api import wgs84

    from spacetp.linksrc.orbit import _down_from_margin, up_schedule

    e = table(link["ephemeris"], path, FIELDS, {"from", "to", "start"})
    for k in ("from", "to"):
        if e[k] not in BODIES:
            raise fail(f"{path}.{k}", f"{e[k]!r}: one of {', '.join(BODIES)}")
    if e["from"] == e["to"]:
        raise fail(f"{path}.to", f"the same body as `from` ({e['to']})")
    start = utc(e["start"], f"{path}.start")
    dur = horizon(e, "duration", path, stop)
    res = seconds(e.get("resolution", 1.0), f"{path}.resolution", positive=True)
    first = utc(DE421_FIRST + "T00:00:00Z", "")
    last = utc(DE421_LAST + "T00:00:00Z", "")
    if start < first or start.timestamp() + dur > last.timestamp():
        raise fail(
            f"{path}.start", f"the run must lie within DE421's {DE421_FIRST} to {DE421_LAST}"
        )
    eph = ephemeris()
    body = {k: eph[BODIES[e[k]]] for k in ("from", "to")}
    st = None
    if e.get("station") is not None:
        st = station(e["station"], f"{path}.station")
        ends = [k for k in ("from", "to") if e[k] == "earth"]
        if not ends:
            raise fail(f"{path}.station", 'a station needs `from` or `to` = "earth"')
        body[ends[0]] = eph["earth"] + wgs84.latlon(st["lat"], st["lon"], elevation_m=st["alt_m"])
    t = grid(dur, res)
    times = _times(start, t)
    fwd = light_times(body["from"], body["to"], times)
    back = light_times(body["to"], body["from"], times)
    fields.put("delay", {"schedule": linear(t, fwd)}, "ephemeris")
    fields.put("delay_back", {"schedule": linear(t, back)}, "ephemeris")
    cols = {}
    if st is not None:
        here = "from" if e["from"] == "earth" else "to"
        other = eph[BODIES[e["to" if here == "from" else "from"]]]
        alt = body[here].at(times).observe(other).apparent().altaz()[0].degrees
        up = up_schedule(_down_from_margin(t, alt - st["mask"]))
        fields.put("up", {"schedule": up}, "ephemeris.station")
        fields.put("up_back", {"schedule": up}, "ephemeris.station")
        cols = {"elevation_deg": alt, "up": alt >= st["mask"]}
    dist = np.linalg.norm(
        body["to"].at(times).position.km - body["from"].at(times).position.km, axis=0
    )

    def sampled():
        import pandas as pd

        df = pd.DataFrame(
            {"time_s": t, "distance_km": dist, "delay_s": fwd, "delay_back_s": back, **cols}
        )
        df.attrs["start_utc"] = start.isoformat()
        return df

    return sampled
