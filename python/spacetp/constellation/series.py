"""Each ground-station pair's round trip, hop count and path at every routing step, as
Hypatia's figures draw them (and satgenpy's `print_routes_and_rtt` writes them)."""

from __future__ import annotations

import pandas as pd

from spacetp.constellation import geometry, routing
from spacetp.constellation.config import read
from spacetp.linksrc.common import fail


def station_index(geo: geometry.Geometry, name: str, path: str) -> int:
    try:
        return geo.gs_names.index(name)
    except ValueError:
        raise fail(
            path, f"{name!r} is no ground station; stations: {', '.join(geo.gs_names)}"
        ) from None


def pair_series(sc: dict, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """One row per pair and step: `from`, `to`, `t_s`, `rtt_s` (the path there and back
    over c at that instant; NaN without a path), `hops` (links on the path), `path` (its
    nodes, '-'-joined) and `changed` (the path differs from the step before)."""
    return series(geometry.build(read(sc)), pairs)


def series(geo: geometry.Geometry, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """`pair_series` over a built geometry."""
    idx = [
        (station_index(geo, a, f"pairs[{i}][0]"), station_index(geo, b, f"pairs[{i}][1]"))
        for i, (a, b) in enumerate(pairs)
    ]
    dests = sorted({x for ab in idx for x in ab})
    row_of = {d: i for i, d in enumerate(dests)}
    s = len(geo.sat_names)
    names = geo.sat_names + geo.gs_names
    rows = []
    last: dict[int, str] = {}
    for step in routing.steps(geo, dests):
        t = float(geo.t[step.k])
        for j, (a, b) in enumerate(idx):
            there = step.dist_km[row_of[b], s + a]
            back = step.dist_km[row_of[a], s + b]
            nodes = routing.path(step, row_of[b], s + a, s + b)
            text = "-".join(names[n] for n in nodes)
            rows.append(
                {
                    "from": geo.gs_names[a],
                    "to": geo.gs_names[b],
                    "t_s": t,
                    "rtt_s": (there + back) / routing.C_KM_S if nodes else float("nan"),
                    "hops": len(nodes) - 1 if nodes else 0,
                    "path": text,
                    "changed": step.k > 0 and text != last.get(j),
                }
            )
            last[j] = text
    return pd.DataFrame(rows)
