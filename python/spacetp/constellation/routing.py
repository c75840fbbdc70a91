"""Shortest paths on propagation delay at every routing step, as Hypatia's satgenpy routes
(`algorithm_free_one_only_over_isls`): a ground station reaches any satellite it may use,
satellites relay over their ISLs, and no ground station relays. One Dijkstra search per
destination station and step (scipy) gives every node's next hop toward it: the tree of
shortest paths to the destination, which is also each pair's path."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from spacetp.constellation.geometry import Geometry

C_KM_S = 299_792.458
NONE = -1


@dataclass
class Step:
    """The routing state of one step toward each destination station."""

    k: int
    dist_km: np.ndarray  # (destinations, nodes): path length from each node to it
    next_hop: np.ndarray  # (destinations, nodes): next node toward it, NONE if none
    usable: np.ndarray  # station * satellites + satellite of every GSL usable now


def _graph(geo: Geometry, k: int, rng: np.ndarray, ok: np.ndarray) -> csr_matrix:
    """Satellites 0..S-1, stations S..S+G-1; ISLs both ways, and each station's usable
    GSLs from the satellite to the station only, so that a search from a station (over
    the reversed edges) never passes through another station."""
    s, g = len(geo.sat_names), len(geo.gs_names)
    d = geo.isl_km(k)
    a, b = geo.isls[:, 0], geo.isls[:, 1]
    gi, si = np.nonzero(ok)
    rows = np.concatenate([a, b, si])
    cols = np.concatenate([b, a, s + gi])
    w = np.concatenate([d, d, rng[gi, si]])
    return csr_matrix((w, (rows, cols)), shape=(s + g, s + g))


def steps(geo: Geometry, destinations: list[int]) -> Iterator[Step]:
    """The state toward each destination (a station index) at every step."""
    s = len(geo.sat_names)
    targets = np.array([s + d for d in destinations], dtype=np.int64)
    for k in range(len(geo.t)):
        rng, ok = geo.gsl(k)
        graph = _graph(geo, k, rng, ok)
        # Distances *to* each destination: a search from it over the reversed edges.
        dist, pred = dijkstra(
            graph.T.tocsr(), directed=True, indices=targets, return_predecessors=True
        )
        # A station's own hop: its usable satellite nearest the destination (the search
        # reaches no station but the one it starts from).
        best, best_km = _station_hops(rng, ok, dist[:, :s])
        dist[:, s:] = best_km
        nxt = np.where(pred < 0, NONE, pred)
        nxt[:, s:] = best
        for i, d in enumerate(targets):
            nxt[i, d] = NONE
            dist[i, d] = 0.0
        yield Step(k, dist, nxt, np.flatnonzero(ok))


def _station_hops(
    rng: np.ndarray, ok: np.ndarray, sat_dist: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each destination (rows of `sat_dist`) and station (rows of the GSL ranges
    `rng` and usability `ok`): the usable satellite with the shortest way on (NONE if
    none) and that way's length (inf if none)."""
    d, g = sat_dist.shape[0], rng.shape[0]
    best = np.full((d, g), NONE, dtype=np.int64)
    best_km = np.full((d, g), np.inf)
    gi, si = np.nonzero(ok)  # grouped by station
    if len(gi) == 0:
        return best, best_km
    vals = rng[gi, si][None, :] + sat_dist[:, si]  # (D, pairs)
    starts = np.flatnonzero(np.r_[True, gi[1:] != gi[:-1]])
    stations = gi[starts]
    mins = np.minimum.reduceat(vals, starts, axis=1)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(gi)]))
    first = np.where(vals == mins[:, group], np.arange(len(gi))[None, :], len(gi))
    pick = np.minimum.reduceat(first, starts, axis=1)
    reach = np.isfinite(mins)
    best[:, stations] = np.where(reach, si[np.minimum(pick, len(gi) - 1)], NONE)
    best_km[:, stations] = mins
    return best, best_km


def path(step: Step, di: int, src: int, dst: int) -> list[int]:
    """The nodes from `src` to `dst` (node ids) by the step's next hops; [] when none."""
    out, n = [src], src
    while n != dst:
        n = int(step.next_hop[di, n])
        if n == NONE or len(out) > step.next_hop.shape[1]:
            return []
        out.append(n)
    return out
