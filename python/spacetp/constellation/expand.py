"""A constellation turned into what the core runs: nodes, links with delays that follow the
satellites, and the forwarding state of every routing step as `[[forwarding]]` entries.

Only what packets can reach is written: toward each destination, the nodes on the path
from every other flow end, and, step by step, the path on from every node that held such a
packet before (packets in flight follow the new state from their next node on). A node
enters at the step it becomes reachable; its entries start there. The rest of the shell
carries nothing and is left out, so a run costs what its paths cost, not the shell."""

from __future__ import annotations

import copy
import json

import numpy as np

from spacetp.constellation import contacts, devices, geometry, routing
from spacetp.constellation.config import LINK_SETTINGS, gsl_device, link_settings, read
from spacetp.constellation.series import station_index
from spacetp.linksrc.common import seconds

DELAY_SAMPLE_S = 1.0  # link delays: linear between samples this far apart (at most)


def _ends(sc: dict) -> list[tuple[str, str]]:
    """(name, path) of every flow, traffic and workload end (a workload's server and
    clients)."""
    out = []
    for part in ("flows", "traffic"):
        for i, f in enumerate(sc.get(part) or []):
            for end in ("from", "to"):
                if isinstance(f, dict) and isinstance(f.get(end), str):
                    out.append((f[end], f"{part}[{i}].{end}"))
    for i, w in enumerate(sc.get("workloads") or []):
        if not isinstance(w, dict):
            continue
        if isinstance(w.get("server"), str):
            out.append((w["server"], f"workloads[{i}].server"))
        for j, c in enumerate(w.get("clients") or []):
            if isinstance(c, str):
                out.append((c, f"workloads[{i}].clients[{j}]"))
    return out


_CACHE: dict[str, dict] = {}


def expand(sc: dict) -> dict:
    """`sc` with its `[constellation]` replaced by nodes, links and forwarding (the same
    dict when it has none). The part computed from the constellation is cached by what it
    depends on (the constellation, the flows' ends, the stop), so sweeps route once."""
    if not isinstance(sc, dict) or sc.get("constellation") is None:
        return sc
    # The routing depends on neither links' rate, queue, errors nor GSL devices: a sweep
    # over them routes once; they are laid on the cached links below.
    settings, device = link_settings(sc), gsl_device(sc)
    routed = copy.deepcopy(sc["constellation"])
    for table in ("gsl", "isl"):
        if isinstance(routed.get(table), dict):
            kept = {k: v for k, v in routed[table].items() if k not in (*LINK_SETTINGS, "device")}
            routed[table] = kept
    key = json.dumps([routed, _ends(sc), sc.get("stop")], sort_keys=True, default=str)
    if key not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = _expanded(sc)
    part = copy.deepcopy(_CACHE[key])
    for link in part["links"]:
        kind = settings[link["origin"].removeprefix("constellation.")]
        link["rate"] = kind.get("rate", "10 Mb/s")
        link["queue"] = link["queue_back"] = kind.get("queue", {"packets": 100})
        if "errors" in kind:
            link["errors"] = kind["errors"]
    if device == "per_node":
        part = devices.per_node(part, part["end"])
    out = {k: v for k, v in sc.items() if k != "constellation"}
    for k in ("nodes", "links", "forwarding"):
        out[k] = list(sc.get(k) or []) + part[k]
    contacts.add_plan(out, part["end"])
    return out


def _expanded(sc: dict) -> dict:
    """The nodes, links and forwarding entries of the constellation's reachable part."""
    con = read(sc)
    geo = geometry.build(con)
    s = len(geo.sat_names)
    names = geo.sat_names + geo.gs_names
    ends = sorted({station_index(geo, n, p) for n, p in _ends(sc)})
    targets = np.array([s + d for d in ends], dtype=np.int64)
    rows = np.arange(len(ends))
    # reach[i, n]: a packet for destination i can be at node n (the other ends from the
    # start; then whatever their next hops lead to, step by step).
    reach = np.zeros((len(ends), len(names)), dtype=bool)
    reach[:, targets] = True
    reach[rows, targets] = False
    last = np.full(reach.shape, -2, dtype=np.int64)  # the hop last written; -2: none yet
    changes = []  # (step, destination row, node, next hop) arrays, one set per step
    # The flow ends' GSLs (the only ones packets can use: stations never relay) becoming
    # usable (+1) or not (-1): when bundles may use them (contacts.py).
    usable, was = [], np.zeros(0, dtype=np.int64)
    for step in routing.steps(geo, ends):
        now = step.usable[np.isin(step.usable // s, ends)]
        for flips, sign in ((np.setdiff1d(now, was), 1), (np.setdiff1d(was, now), -1)):
            usable.append(np.stack([flips, np.full(len(flips), step.k), np.full(len(flips), sign)]))
        was = now
        nxt = step.next_hop
        frontier = reach
        while True:
            di, ni = np.nonzero(frontier)
            h = nxt[di, ni]
            ok = h >= 0
            di, h = di[ok], h[ok]
            new = ~reach[di, h]
            if not new.any():
                break
            frontier = np.zeros_like(reach)
            frontier[di[new], h[new]] = True
            reach = reach | frontier
        changed = reach & (nxt != last)
        changed[rows, targets] = False
        di, ni = np.nonzero(changed)
        changes.append((np.full(len(di), step.k), di, ni, nxt[di, ni]))
        last[di, ni] = nxt[di, ni]
    k, di, ni, h = (np.concatenate(x) for x in zip(*changes, strict=True))
    hops: dict[tuple[int, int], list[list]] = {}
    for kk, d, n, hh in zip(k.tolist(), di.tolist(), ni.tolist(), h.tolist(), strict=True):
        hops.setdefault((n, int(targets[d])), []).append(
            [float(geo.t[kk]), names[hh] if hh != routing.NONE else ""]
        )
    on = h >= 0
    used = {(min(a, b), max(a, b)) for a, b in zip(ni[on].tolist(), h[on].tolist(), strict=True)}
    nodes = sorted({x for ab in used for x in ab} | {s + e for e in ends})
    links = [_link(geo, con, a, b, names) for a, b in sorted(used)]
    # Contacts reach the run's end: past the routing's, packets keep its last state.
    end = max(con.duration, seconds(sc["stop"], "stop")) if sc.get("stop") else con.duration
    flips = np.concatenate(usable, axis=1)
    flips = flips[:, np.lexsort((flips[1], flips[0]))]  # by GSL, then step
    for link, (a, b) in zip(links, sorted(used), strict=True):
        f = (b - s) * s + a
        lo, hi = np.searchsorted(flips[0], [f, f + 1])
        link["usable"] = _windows(geo, flips[1:, lo:hi], end) if b >= s else [[0.0, end]]
    return {
        "end": end,
        "nodes": [{"name": names[n]} for n in nodes],
        "links": links,
        "forwarding": [
            {"node": names[n], "to": names[d], "schedule": pts}
            for (n, d), pts in sorted(hops.items())
        ],
    }


def _windows(geo: geometry.Geometry, flips: np.ndarray, end: float) -> list[list[float]]:
    """The [start, end) intervals a GSL is usable, from its flips (rows: step, +1 usable
    from then / -1 not, alternating, in order): the last one open until `end`; empty ones
    (usable only at the run's last instant) left out."""
    out = []
    for k, sign in zip(flips[0].tolist(), flips[1].tolist(), strict=True):
        if sign > 0:
            out.append([float(geo.t[k]), end])
        else:
            out[-1][1] = float(geo.t[k])
    return [w for w in out if w[1] > w[0]]


def _link(geo: geometry.Geometry, con, a: int, b: int, names: list[str]) -> dict:
    """The link between nodes a < b: an ISL (both satellites) or a GSL, with its delay
    sampled along the run (linear between samples); `expand` adds its settings."""
    s = len(geo.sat_names)
    every = max(1, int(round(DELAY_SAMPLE_S / con.step)))
    ks = np.unique(np.r_[np.arange(0, len(geo.t), every), len(geo.t) - 1])
    pa = geo.sat_pos[a, ks] if a < s else geo.gs_pos[a - s][None, :]
    pb = geo.sat_pos[b, ks] if b < s else geo.gs_pos[b - s][None, :]
    delay = np.linalg.norm(pa - pb, axis=-1) / routing.C_KM_S
    origin = "isl" if b < s else "gsl"
    return {
        "between": [names[a], names[b]],
        "origin": f"constellation.{origin}",
        "delay": {
            "schedule": [[float(geo.t[k]), float(x)] for k, x in zip(ks, delay, strict=True)]
        },
    }
