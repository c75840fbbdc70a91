"""Satellites for SGP4 (the `sgp4` package, Vallado's code): from TLE text (checksums
checked), from mean orbital elements, or from a Walker-delta shell; and their positions in
the ITRS over a time grid, with skyfield's TEME -> ITRS rotation (IAU 1982 GMST, as
SGP4's TEME needs; skyfield's bundled Earth orientation, no download)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from spacetp.linksrc.common import fail, number, table, utc

WGS72_RADIUS_KM = 6378.135
WGS72_MU_KM3_S2 = 398600.8
ELEMENT_FIELDS = {
    "name",
    "epoch",
    "mean_motion",
    "altitude_km",
    "eccentricity",
    "inclination",
    "raan",
    "arg_perigee",
    "mean_anomaly",
    "bstar",
}
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


@dataclass
class Satellite:
    name: str
    satrec: object  # sgp4.api.Satrec


def tle_checksum(line: str) -> int:
    """The TLE checksum: the digits of the first 68 columns plus 1 per minus sign, mod 10."""
    return sum(int(c) if c.isdigit() else (1 if c == "-" else 0) for c in line[:68]) % 10


def parse_tle(text: object, path: str) -> list[tuple[str, str, str]]:
    """(name, line 1, line 2) of each set in `text`; each line's checksum and the set's
    catalogue numbers are checked, and an error names the line and the rule."""
    if not isinstance(text, str):
        raise fail(path, "must be the TLE text (a multi-line string)")
    lines = [(i + 1, ln.rstrip()) for i, ln in enumerate(text.splitlines()) if ln.strip()]
    out, name, k = [], "", 0
    while k < len(lines):
        no, ln = lines[k]
        if not ln.startswith("1 "):
            name = ln.strip().removeprefix("0 ").strip()
            k += 1
            continue
        if k + 1 >= len(lines) or not lines[k + 1][1].startswith("2 "):
            raise fail(path, f"line {no}: a TLE line 1 must be followed by its line 2")
        for n, t in (lines[k], lines[k + 1]):
            if len(t) != 69:
                raise fail(path, f"line {n}: a TLE line has 69 characters, this one {len(t)}")
            if not t[68].isdigit() or int(t[68]) != tle_checksum(t):
                raise fail(
                    path,
                    f"line {n}: checksum {t[68]} does not match the line, whose digits plus one "
                    f"per minus sign sum to {tle_checksum(t)} mod 10 (a corrupt or edited line)",
                )
        l1, l2 = lines[k][1], lines[k + 1][1]
        if l1[2:7] != l2[2:7]:
            raise fail(
                path,
                f"line {lines[k + 1][0]}: catalogue number {l2[2:7].strip()} differs from line "
                f"1's {l1[2:7].strip()}",
            )
        out.append((name or f"catalog {l1[2:7].strip()}", l1, l2))
        name, k = "", k + 2
    if not out:
        raise fail(path, "no two-line element set in the text")
    return out


def _epoch_days(t: datetime) -> float:
    """Days since 1949-12-31 00:00 UTC, SGP4's epoch."""
    return (t - datetime(1949, 12, 31, tzinfo=UTC)).total_seconds() / 86400.0


def _mean_motion_rad_min(altitude_km: float) -> float:
    a = WGS72_RADIUS_KM + altitude_km
    return math.sqrt(WGS72_MU_KM3_S2 / a**3) * 60.0


def _from_elements(e: dict, i: int, path: str) -> Satellite:
    from sgp4.api import WGS72, Satrec

    table(e, path, ELEMENT_FIELDS, {"epoch", "inclination"})
    epoch = utc(e["epoch"], f"{path}.epoch")
    if ("mean_motion" in e) == ("altitude_km" in e):
        raise fail(path, "give `mean_motion` (revolutions per day) or `altitude_km`, one of them")
    if "mean_motion" in e:
        n = number(e, "mean_motion", path, 0, 20, lo_open=True, what="a mean motion (rev/day)")
        no = n * 2 * math.pi / 1440.0
    else:
        no = _mean_motion_rad_min(
            number(e, "altitude_km", path, 100, 100_000, what="an altitude in km")
        )
    deg = math.radians
    sat = Satrec()
    sat.sgp4init(
        WGS72,
        "i",
        90000 + i,
        _epoch_days(epoch),
        number(e, "bstar", path, -1, 1, 0.0, what="a B* term"),
        0.0,
        0.0,
        number(e, "eccentricity", path, 0, 1, 0.0, hi_open=True, what="an eccentricity"),
        deg(number(e, "arg_perigee", path, -360, 360, 0.0, what="an angle in degrees")),
        deg(number(e, "inclination", path, 0, 180, what="an inclination")),
        deg(number(e, "mean_anomaly", path, -360, 360, 0.0, what="an angle in degrees")),
        no,
        deg(number(e, "raan", path, -360, 360, 0.0, what="an angle in degrees")),
    )
    return Satellite(str(e.get("name", f"sat{i}")), sat)


def _walker(w: dict, path: str) -> list[Satellite]:
    from sgp4.api import WGS72, Satrec

    table(w, path, WALKER_FIELDS, {"epoch", "inclination", "planes", "per_plane"})
    epoch = _epoch_days(utc(w["epoch"], f"{path}.epoch"))
    if ("mean_motion" in w) == ("altitude_km" in w):
        raise fail(path, "give `altitude_km` or `mean_motion` (revolutions per day), one of them")
    p = int(number(w, "planes", path, 1, 1000, what="a number of planes"))
    s = int(number(w, "per_plane", path, 1, 1000, what="a number of satellites per plane"))
    f = int(number(w, "phasing", path, 0, max(p - 1, 0), 0, what="a phasing factor"))
    inc = math.radians(number(w, "inclination", path, 0, 180, what="an inclination"))
    if "mean_motion" in w:
        rev = number(w, "mean_motion", path, 0, 20, lo_open=True, what="a mean motion (rev/day)")
        no = rev * 2 * math.pi / 1440.0
    else:
        no = _mean_motion_rad_min(number(w, "altitude_km", path, 100, 100_000, what="an altitude"))
    raan0 = number(w, "raan", path, -360, 360, 0.0, what="an angle in degrees")
    # Hypatia's satgenpy shells (phase_diff): odd planes half a slot ahead, not Walker's F.
    half = w.get("odd_plane_offset", False)
    if not isinstance(half, bool):
        raise fail(f"{path}.odd_plane_offset", f"{half!r} must be true or false")
    if half and f:
        raise fail(f"{path}.odd_plane_offset", "give it or `phasing`, not both")
    sats = []
    for j in range(p):
        for k in range(s):
            m = 360.0 * (k / s + f * j / (p * s) + (0.5 / s if half and j % 2 else 0.0))
            sat = Satrec()
            sat.sgp4init(
                WGS72,
                "i",
                1 + j * s + k,
                epoch,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                inc,
                math.radians(m % 360.0),
                no,
                math.radians((raan0 + 360.0 * j / p) % 360.0),
            )
            sats.append(Satellite(f"P{j}-S{k}", sat))
    return sats


def satellites(orbit: dict, path: str) -> list[Satellite]:
    """Every satellite the orbit names, by `tle`, `elements` and `walker`."""
    from sgp4.api import WGS72, Satrec

    sats: list[Satellite] = []
    if orbit.get("tle") is not None:
        for name, l1, l2 in parse_tle(orbit["tle"], f"{path}.tle"):
            sats.append(Satellite(name, Satrec.twoline2rv(l1, l2, WGS72)))
    if orbit.get("elements") is not None:
        els = orbit["elements"]
        if not isinstance(els, list) or not els:
            raise fail(f"{path}.elements", "must be a list of element tables")
        sats += [_from_elements(e, i, f"{path}.elements[{i}]") for i, e in enumerate(els)]
    if orbit.get("walker") is not None:
        sats += _walker(orbit["walker"], f"{path}.walker")
    if not sats:
        raise fail(path, "give the satellites: `tle`, `elements` or `walker`")
    return sats


def itrs_positions(sats: list[Satellite], start: datetime, t: np.ndarray, path: str):
    """ITRS positions (km), shape (satellites, times, 3), at `start` + `t` seconds (UTC; a
    leap second inside the run is not counted)."""
    from sgp4.api import SGP4_ERRORS, SatrecArray, jday
    from skyfield.framelib import itrs
    from skyfield.functions import T, mxm
    from skyfield.sgp4lib import TEME

    sec = start.second + start.microsecond * 1e-6
    jd, fr = jday(start.year, start.month, start.day, start.hour, start.minute, sec)
    jd_arr = np.full(t.shape, jd)
    fr_arr = fr + t / 86400.0
    err, r, _ = SatrecArray([s.satrec for s in sats]).sgp4(jd_arr, fr_arr)
    bad = np.argwhere(err != 0)
    if len(bad):
        si, ti = bad[0]
        raise fail(
            path,
            f"SGP4 cannot propagate {sats[si].name} at {t[ti]:g} s: "
            f"{SGP4_ERRORS.get(int(err[si, ti]), 'error')} (elements too old or decayed?)",
        )
    ts = timescale()
    sk = ts.utc(start.year, start.month, start.day, start.hour, start.minute, sec + t)
    rot = mxm(itrs.rotation_at(sk), T(TEME.rotation_at(sk)))  # (3, 3, n)
    return np.einsum("ijn,snj->sni", rot, r)


_TS = None


def timescale():
    """Skyfield's timescale from its bundled files (no download)."""
    global _TS
    if _TS is None:
        from skyfield.api import load

        _TS = load.timescale(builtin=True)
    return _TS


def station_itrs(st: dict) -> tuple[np.ndarray, np.ndarray]:
    """A station's ITRS position (km) and its local vertical (WGS84 ellipsoid normal)."""
    from skyfield.api import wgs84

    pos = wgs84.latlon(st["lat"], st["lon"], elevation_m=st["alt_m"]).itrs_xyz.km
    la, lo = math.radians(st["lat"]), math.radians(st["lon"])
    up = np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])
    return np.asarray(pos), up


def look(r_itrs: np.ndarray, st: dict) -> tuple[np.ndarray, np.ndarray]:
    """Elevation (degrees) and slant range (km) from a station, over the last axis of
    `r_itrs` (..., 3)."""
    pos, up = station_itrs(st)
    rho = r_itrs - pos
    rng = np.linalg.norm(rho, axis=-1)
    el = np.degrees(np.arcsin(np.clip((rho @ up) / rng, -1.0, 1.0)))
    return el, rng
