"""Where everything is at each routing step: every satellite of every shell (SGP4, ITRS,
vectorised over satellites and steps: `linksrc.satellites`), the ground stations, the
inter-satellite links of each shell's pattern and which satellites each station may use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spacetp.constellation.config import Constellation
from spacetp.linksrc.satellites import itrs_positions, station_itrs


@dataclass
class Geometry:
    t: np.ndarray  # step instants, s from the start
    sat_names: list[str]
    sat_pos: np.ndarray  # (satellites, steps, 3) km, ITRS
    gs_names: list[str]
    gs_pos: np.ndarray  # (stations, 3) km, ITRS
    gs_up: np.ndarray  # (stations, 3) local vertical
    isls: np.ndarray  # (links, 2) satellite indices
    gsl_max_km: float | None  # a GSL is usable up to this slant range,
    gsl_mask_deg: float | None  # or above this elevation,
    gs_mask_deg: np.ndarray  # (stations,) and above each station's own mask

    def gsl(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Slant ranges (stations, satellites) at step k and which of them are usable."""
        rho = self.sat_pos[None, :, k, :] - self.gs_pos[:, None, :]
        rng = np.linalg.norm(rho, axis=-1)
        sin_el = np.einsum("gsi,gi->gs", rho, self.gs_up) / rng
        ok = sin_el >= np.sin(np.radians(self.gs_mask_deg))[:, None]
        if self.gsl_mask_deg is not None:
            ok &= sin_el >= np.sin(np.radians(self.gsl_mask_deg))
        else:
            ok &= rng <= self.gsl_max_km
        return rng, ok

    def isl_km(self, k: int) -> np.ndarray:
        a, b = self.isls[:, 0], self.isls[:, 1]
        return np.linalg.norm(self.sat_pos[a, k] - self.sat_pos[b, k], axis=-1)


def plus_grid(first: int, planes: int, per_plane: int) -> list[tuple[int, int]]:
    """+Grid (satgenpy's isls_plus_grid): each satellite to the next in its plane and to the
    one of the same index in the next plane; satellites numbered plane by plane."""
    out = []
    for p in range(planes):
        for s in range(per_plane):
            me = first + p * per_plane + s
            out.append((me, first + p * per_plane + (s + 1) % per_plane))
            out.append((me, first + ((p + 1) % planes) * per_plane + s))
    # A plane of 2 or a shell of 2 planes lists each link twice: keep one.
    return sorted({(min(a, b), max(a, b)) for a, b in out if a != b})


def build(con: Constellation) -> Geometry:
    """Positions at every step of `con` and the links between them."""
    n = int(np.floor(con.duration / con.step + 1e-9))
    t = np.round(np.arange(n + 1) * con.step, 9)  # whole nanoseconds, as the core counts
    names, sats, isls = [], [], []
    for sh in con.shells:
        first = len(sats)
        sats += sh.sats
        names += [f"{sh.name}-{k // sh.per_plane}-{k % sh.per_plane}" for k in range(len(sh.sats))]
        if sh.isls == "+grid":
            isls += plus_grid(first, sh.planes, sh.per_plane)
    pos = itrs_positions(sats, con.start, t, "constellation")
    gs = [station_itrs(st) for st in con.stations]
    return Geometry(
        t=t,
        sat_names=names,
        sat_pos=pos,
        gs_names=[st["name"] for st in con.stations],
        gs_pos=np.array([g[0] for g in gs]),
        gs_up=np.array([g[1] for g in gs]),
        isls=np.array(isls, dtype=np.int64).reshape(-1, 2),
        gsl_max_km=con.gsl_max_km,
        gsl_mask_deg=con.gsl_mask_deg,
        gs_mask_deg=np.array([st["mask"] for st in con.stations], dtype=float),
    )
