"""Constellation routing against Hypatia's satgenpy (its own output, run by hand from its
source outside the repository: tests/data/satgenpy/README.md). Four city pairs per shell,
200 s at 100 ms, +Grid ISLs, `algorithm_free_one_only_over_isls`.

Positions differ in one respect that matters here: PyEphem turns the Earth by UTC (UT1 =
UTC), where the IERS tables say UT1 - UTC = +0.355 s on 2000-01-01 (skyfield's, ours): its
satellites sit about 180 m west of ours, the rest within 55 m. A satellite that grazes a
station's 1260 km GSL limit crosses it at times this shifts by several steps. Two
comparisons, then:

- on satgenpy's Earth rotation (our satellites turned back by 0.355 s of rotation): every
  step's RTT within 1 ms and every path change within one routing step, #34's criterion;
- on ours, as users run it: the same path at 99% of the steps, those steps' RTTs within
  1 ms, every path change within three steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spacetp.constellation import config, geometry
from spacetp.constellation.series import series

DATA = Path(__file__).resolve().parent / "data" / "satgenpy"
CITIES = [
    ("rio_de_janeiro", "Rio de Janeiro"),
    ("saint_petersburg", "Saint Petersburg"),
    ("manila", "Manila"),
    ("dalian", "Dalian"),
    ("istanbul", "Istanbul"),
    ("nairobi", "Nairobi"),
    ("paris", "Paris"),
    ("moscow", "Moscow"),
]
PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7)]
# satgenpy's paper/satellite_networks_state/main_{kuiper_630,starlink_550}.py
SHELLS = {
    "kuiper_630": {"name": "K1", "mean_motion": 14.80, "inclination": 51.9, "planes": 34,
                   "per_plane": 34, "max_gsl_km": 1260.0},
    "starlink_550": {"name": "S1", "mean_motion": 15.19, "inclination": 53.0, "planes": 72,
                     "per_plane": 22, "max_gsl_km": 1089.6864181956202},  # its 940.7 km cone
}  # fmt: skip
SHELLS = {k: v for k, v in SHELLS.items() if list(DATA.glob(f"{k}_*.csv.gz"))}


def scenario(shell: str) -> dict:
    p = SHELLS[shell]
    walker = {
        "epoch": "2000-01-01T00:00:00Z",  # satgenpy's TLE epoch 00001.00000000
        "odd_plane_offset": True,  # its phase_diff
        **{k: p[k] for k in ("mean_motion", "inclination", "planes", "per_plane")},
    }
    return {
        "stop": "200 s",
        "constellation": {
            "cities": [c for _, c in CITIES],
            "gsl": {"max_length_km": p["max_gsl_km"]},
            "shells": [{"name": p["name"], "walker": walker}],
        },
    }


def satgenpy_geometry(geo: geometry.Geometry) -> geometry.Geometry:
    """The satellites as satgenpy sees them: PyEphem turns the Earth by UTC, taking UT1 =
    UTC, where the IERS tables (skyfield's) have UT1 - UTC = +0.355 s on 2000-01-01; so its
    Earth lags ours by that much rotation (180 m at the satellites)."""
    from spacetp.linksrc.satellites import timescale

    dut1 = float(timescale().utc(2000, 1, 1).dut1)
    w = -7.292115146706979e-5 * dut1  # rad: the Earth's rotation in -dut1 seconds
    c, s = np.cos(w), np.sin(w)
    turn = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    return geometry.Geometry(**{**geo.__dict__, "sat_pos": geo.sat_pos @ turn.T})


def satgenpy_ids(path: str, geo: geometry.Geometry, names: dict[str, int]) -> str:
    """Our path (names) in satgenpy's node ids: satellites plane by plane, then stations."""
    if not isinstance(path, str) or not path:
        return ""
    out, toks = [], path.split("-")
    i = 0
    while i < len(toks):
        if toks[i] in names:
            out.append(str(len(geo.sat_names) + names[toks[i]]))
            i += 1
        else:  # SHELL-PLANE-SLOT
            per = SHELLS_PER_PLANE[toks[i]]
            out.append(str(int(toks[i + 1]) * per + int(toks[i + 2])))
            i += 3
    return "-".join(out)


SHELLS_PER_PLANE = {v["name"]: v["per_plane"] for v in SHELLS.values()}


def compare(shell: str, geo: geometry.Geometry) -> list[dict]:
    """Per pair: RTT differences, path agreement and change instants against satgenpy."""
    ours = series(geo, [(CITIES[a][1], CITIES[b][1]) for a, b in PAIRS])
    station = {c: i for i, (_, c) in enumerate(CITIES)}
    out = []
    for a, b in PAIRS:
        ref = pd.read_csv(DATA / f"{shell}_{CITIES[a][0]}_{CITIES[b][0]}.csv.gz")
        me = ours[(ours["from"] == CITIES[a][1]) & (ours["to"] == CITIES[b][1])]
        me = me.iloc[: len(ref)].reset_index(drop=True)  # satgenpy: 0 .. 199.9 s
        assert (me["t_s"] * 1e9).round().astype(np.int64).equals(ref["t_ns"])
        mine = me["path"].map(lambda p: satgenpy_ids(p, geo, station))
        theirs = ref["path"].fillna("")
        same = (mine == theirs).to_numpy()
        both = (me["rtt_s"].notna() & ref["rtt_ns"].notna()).to_numpy()
        diff_ms = np.abs(me["rtt_s"] * 1e3 - ref["rtt_ns"] / 1e6).to_numpy()
        ref_changes = ref["t_ns"][theirs != theirs.shift(1)].iloc[1:] / 1e9
        all_mine = ours[(ours["from"] == CITIES[a][1]) & (ours["to"] == CITIES[b][1])]
        my_changes = all_mine["t_s"][all_mine["changed"]]  # with one at 200 s
        # The steps next to a change of either: where instants one step apart differ.
        t = me["t_s"].to_numpy()
        near = np.zeros(len(t), dtype=bool)
        for c in list(ref_changes) + list(my_changes):
            near |= (t >= c - 0.1 - 1e-9) & (t <= c + 1e-9)
        # a change at the last step may fall just past the other's last
        end = float(me["t_s"].iloc[-1]) - 0.1 - 1e-9
        ref_changes, my_changes = ref_changes[ref_changes < end], my_changes[my_changes < end]
        step = 0.1 + 1e-9
        reach = (me["rtt_s"].notna() == ref["rtt_ns"].notna()).to_numpy()
        out.append(
            {
                "pair": f"{CITIES[a][1]} - {CITIES[b][1]}",
                "reachable_agrees": bool(reach.all()),
                "reachable_agrees_off_changes": bool(reach[~near].all()),
                "max_diff_off_changes_ms": float(diff_ms[both & ~near].max()),
                "same_path": float(same.mean()),
                "max_diff_ms": float(diff_ms[both].max()),
                "max_diff_same_path_ms": float(diff_ms[both & same].max()),
                "mean_diff_ms": float(diff_ms[both].mean()),
                "changes": (len(ref_changes), len(my_changes)),
                "change_offsets": [
                    min(abs(t - u) for u in my_changes) if len(my_changes) else np.inf
                    for t in ref_changes
                ]
                + [
                    min(abs(t - u) for u in ref_changes) if len(ref_changes) else np.inf
                    for t in my_changes
                ],
                "step": step,
            }
        )
    return out


@pytest.fixture(scope="module", params=sorted(SHELLS))
def geometries(request):
    shell = request.param
    geo = geometry.build(config.read(scenario(shell)))
    return shell, geo


def test_on_satgenpys_earth_rotation_rtts_within_1_ms_and_changes_within_a_step(geometries):
    # #34: "max difference <= 1 ms and the same path-change instants within one routing
    # step". Where an instant differs by one step, the RTT of that step differs by the
    # change's jump: the 1 ms holds at every other step.
    shell, geo = geometries
    for r in compare(shell, satgenpy_geometry(geo)):
        print(shell, r)
        assert r["changes"][0] == r["changes"][1], r
        assert max(r["change_offsets"], default=0) <= r["step"], r
        assert r["reachable_agrees_off_changes"], r
        assert r["max_diff_off_changes_ms"] <= 1.0, r
        assert r["same_path"] >= 0.99, r


def test_on_our_earth_rotation_the_same_paths_and_rtts_and_changes_within_a_few_steps(
    geometries,
):
    shell, geo = geometries
    for r in compare(shell, geo):
        print(shell, r)
        assert r["same_path"] >= 0.99, r
        assert r["max_diff_same_path_ms"] <= 1.0 and r["mean_diff_ms"] <= 0.1, r
        assert max(r["change_offsets"], default=0) <= 0.3 + 1e-9, r
