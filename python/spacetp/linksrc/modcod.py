"""Adaptive coding and modulation: elevation -> Es/N0 -> the best MODCOD -> rate and packet
error rate.

The default table is DVB-S2's (ETSI EN 302 307-1 V1.4.1, Table 13: spectral efficiency and
ideal Es/N0 for quasi-error-free operation, PER 1e-7, normal 64800-bit frames, no pilots,
AWGN). Of its 28 MODCODs, 8 need more Es/N0 than another of higher efficiency (QPSK 8/9,
8PSK 5/6, 8/9 and 9/10, 16APSK 8/9 and 9/10; e.g. QPSK 8/9 needs 6.20 dB for 1.77 b/sym
where 8PSK 3/5 gives 1.78 at 5.50): an ACM controller never picks them, and the table keeps
the other 20, so that thresholds and efficiencies both rise as a user's table must."""

from __future__ import annotations

import math

import numpy as np

from spacetp.linksrc.common import fail, number, table

# (name, ideal Es/N0 dB, bits per symbol), EN 302 307-1 Table 13
DVB_S2 = [
    ("QPSK 1/4", -2.35, 0.490243),
    ("QPSK 1/3", -1.24, 0.656448),
    ("QPSK 2/5", -0.30, 0.789412),
    ("QPSK 1/2", 1.00, 0.988858),
    ("QPSK 3/5", 2.23, 1.188304),
    ("QPSK 2/3", 3.10, 1.322253),
    ("QPSK 3/4", 4.03, 1.487473),
    ("QPSK 4/5", 4.68, 1.587196),
    ("QPSK 5/6", 5.18, 1.654663),
    ("QPSK 8/9", 6.20, 1.766451),
    ("QPSK 9/10", 6.42, 1.788612),
    ("8PSK 3/5", 5.50, 1.779991),
    ("8PSK 2/3", 6.62, 1.980636),
    ("8PSK 3/4", 7.91, 2.228124),
    ("8PSK 5/6", 9.35, 2.478562),
    ("8PSK 8/9", 10.69, 2.646012),
    ("8PSK 9/10", 10.98, 2.679207),
    ("16APSK 2/3", 8.97, 2.637201),
    ("16APSK 3/4", 10.21, 2.966728),
    ("16APSK 4/5", 11.03, 3.165623),
    ("16APSK 5/6", 11.61, 3.300184),
    ("16APSK 8/9", 12.89, 3.523143),
    ("16APSK 9/10", 13.13, 3.567342),
    ("32APSK 3/4", 12.73, 3.703295),
    ("32APSK 4/5", 13.64, 3.951571),
    ("32APSK 5/6", 14.28, 4.119540),
    ("32APSK 8/9", 15.69, 4.397854),
    ("32APSK 9/10", 16.05, 4.453027),
]
QEF_PER = 1e-7
DEFAULT_ESN0_ZENITH_DB = 12.0
FIELDS = {"symbol_rate", "esn0", "esn0_zenith", "table", "margin", "directions"}


def dvb_s2_envelope() -> list[tuple[str, float, float, float]]:
    """The MODCODs an ACM controller can pick: (name, threshold dB, bits/symbol, PER)."""
    out, best = [], -math.inf
    for name, esn0, eff in sorted(DVB_S2, key=lambda r: r[1]):
        if eff > best:
            out.append((name, esn0, eff, QEF_PER))
            best = eff
    return out


class Modcod:
    """A checked MODCOD configuration."""

    def __init__(self, cfg: object, path: str):
        table(cfg, path, FIELDS, {"symbol_rate"})
        self.symbol_rate = number(
            cfg,
            "symbol_rate",
            path,
            0,
            1e12,
            lo_open=True,
            what="a symbol rate (symbols per second)",
        )
        self.margin = number(cfg, "margin", path, -50, 50, 0.0, what="a margin in dB")
        self.directions = cfg.get("directions", "both")
        if self.directions not in ("both", "forward", "back"):
            raise fail(f"{path}.directions", f"{self.directions!r}: use both, forward or back")
        self.esn0_table = None
        if cfg.get("esn0") is not None:
            if cfg.get("esn0_zenith") is not None:
                raise fail(path, "give `esn0` (a table) or `esn0_zenith`, not both")
            self.esn0_table = self._esn0(cfg["esn0"], f"{path}.esn0")
        self.zenith = number(
            cfg, "esn0_zenith", path, -50, 100, DEFAULT_ESN0_ZENITH_DB, what="an Es/N0 in dB"
        )
        if cfg.get("table") is None:
            self.rows = dvb_s2_envelope()
        else:
            self.rows = self._rows(cfg["table"], f"{path}.table")

    @staticmethod
    def _esn0(rows: object, path: str) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(rows, list) or not rows:
            raise fail(path, "must be a list of [elevation_deg, esn0_db] pairs")
        el, db = [], []
        for i, r in enumerate(rows):
            p = f"{path}[{i}]"
            if not (
                isinstance(r, list)
                and len(r) == 2
                and all(isinstance(x, int | float) and not isinstance(x, bool) for x in r)
            ):
                raise fail(p, "must be [elevation_deg, esn0_db]")
            if not -90 <= r[0] <= 90:
                raise fail(p, f"elevation {r[0]} is outside [-90, 90] degrees")
            if el and r[0] <= el[-1]:
                raise fail(
                    p,
                    f"elevation {r[0]} is not above the previous row's {el[-1]}; "
                    "elevations must be strictly increasing",
                )
            el.append(float(r[0]))
            db.append(float(r[1]))
        return np.array(el), np.array(db)

    @staticmethod
    def _rows(rows: object, path: str) -> list[tuple[str, float, float, float]]:
        if not isinstance(rows, list) or not rows:
            raise fail(path, "must be a list of [threshold_esn0_db, bits_per_symbol, per] rows")
        out: list[tuple[str, float, float, float]] = []
        for i, r in enumerate(rows):
            p = f"{path}[{i}]"
            if not (
                isinstance(r, list)
                and len(r) == 3
                and all(isinstance(x, int | float) and not isinstance(x, bool) for x in r)
            ):
                raise fail(p, "must be [threshold_esn0_db, bits_per_symbol, per]")
            th, eff, per = map(float, r)
            if eff <= 0:
                raise fail(p, f"{eff} bits per symbol must be above 0")
            if not 0 <= per <= 1:
                raise fail(p, f"PER {per} is not a probability; must be in [0, 1]")
            if out and th <= out[-1][1]:
                raise fail(
                    p,
                    f"threshold {th} dB is not above the previous row's "
                    f"{out[-1][1]} dB; the table must be monotonic (thresholds "
                    "strictly increasing)",
                )
            if out and eff <= out[-1][2]:
                raise fail(
                    p,
                    f"{eff} bits/symbol is not above the previous row's "
                    f"{out[-1][2]}; the table must be monotonic (a MODCOD needing more "
                    "Es/N0 for no more bits is never chosen)",
                )
            out.append((f"row {i}", th, eff, per))
        return out

    def esn0_hop(self, el: np.ndarray, rng_km: np.ndarray, zenith_km: np.ndarray) -> np.ndarray:
        """Es/N0 (dB) of one hop at elevation `el` and slant range `rng_km`."""
        if self.esn0_table is not None:
            return np.interp(el, *self.esn0_table)
        return self.zenith - 20 * np.log10(rng_km / zenith_km)

    def choose(self, esn0_db: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per sample: rate (b/s), PER and MODCOD index (-1: none works, the link is down)."""
        th = np.array([r[1] for r in self.rows])
        k = np.searchsorted(th, esn0_db - self.margin, side="right") - 1
        eff = np.array([r[2] for r in self.rows])
        per = np.array([r[3] for r in self.rows])
        ok = k >= 0
        kk = np.where(ok, k, 0)
        return np.where(ok, self.symbol_rate * eff[kk], 0.0), np.where(ok, per[kk], 1.0), k

    def name(self, k: int) -> str:
        return self.rows[k][0] if k >= 0 else "none"


def combine_hops(a_db: np.ndarray, b_db: np.ndarray) -> np.ndarray:
    """End-to-end Es/N0 of a transparent bent pipe: 1/snr = 1/snr_up + 1/snr_down."""
    return -10 * np.log10(10 ** (-a_db / 10) + 10 ** (-b_db / 10))
