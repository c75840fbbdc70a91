"""A traffic matrix over a constellation, as #34 asks: 100 city pairs over Starlink S1 (72 x
22, Hypatia's 15.19 rev/day, 53 degrees, +Grid ISLs, GSLs up to 1301.4 km (550 km / sin 25
degrees; satgenpy's own figure is 1089.7 km), 10 Mb/s links
with 100-packet queues) for 200 simulated seconds, routed every 100 ms, one unlimited
NewReno flow per pair (Hypatia's TCP experiments: NewReno over 10 Mb/s links).

The 100 pairs: each of Hypatia's 100 cities sends to the city a seeded permutation gives it
(never itself). Measured, in one process:

- routing and expansion: `spacetp.constellation.expand` (SGP4 for every satellite at every
  step, a Dijkstra search per destination and step, the reachable part, link delays, the
  forwarding state), first call (later calls of the same scenario hit its cache);
- the run: `spacetp.run` on the expanded scenario (the core, its setup and summary);
- the whole `spacetp.run` of the constellation scenario as a user calls it;
- peak RSS of the process.

    python benches/constellation.py [--stop "200 s"] [--pairs 100] [--out benches/constellation.md]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
from pathlib import Path

import spacetp
from spacetp.constellation import expand

ROOT = Path(__file__).resolve().parent.parent


def cities() -> list[str]:
    lines = (ROOT / "python/spacetp/constellation/cities.txt").read_text(encoding="utf-8")
    return [ln.split(",")[1] for ln in lines.splitlines() if ln.strip() and ln[0] != "#"]


def scenario(stop: str, pairs: int) -> dict:
    names = cities()
    rng = random.Random(34)
    perm = list(range(len(names)))
    while True:
        rng.shuffle(perm)
        if all(perm[i] != i for i in range(len(names))):
            break
    flows = [{"from": names[i], "to": names[perm[i]], "protocol": "newreno"} for i in range(pairs)]
    return {
        "name": f"Starlink S1, {pairs} city pairs",
        "seed": 1,
        "stop": stop,
        "constellation": {
            "cities": names,
            "gsl": {"max_length_km": 1301.4},
            "shells": [
                {
                    "name": "S1",
                    "walker": {
                        "epoch": "2000-01-01T00:00:00Z",
                        "mean_motion": 15.19,
                        "inclination": 53,
                        "planes": 72,
                        "per_plane": 22,
                        "odd_plane_offset": True,
                    },
                }
            ],
        },
        "flows": flows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stop", default="200 s")
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    sc = scenario(a.stop, a.pairs)
    t0 = time.perf_counter()
    ex = expand(sc)
    t_expand = time.perf_counter() - t0
    text = json.dumps(ex)
    t0 = time.perf_counter()
    res = spacetp.run(ex)
    t_run = time.perf_counter() - t0
    t0 = time.perf_counter()
    spacetp.run(sc)  # as a user calls it: the routing now comes from the cache
    t_cached = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tx = sum(lk["tx_packets"] for lk in res.links)
    delivered = sum(f["bytes_delivered"] for f in res.flows)
    rows = [
        ("pairs, simulated time", f"{a.pairs}, {a.stop}"),
        ("nodes, link directions, forwarding entries",
         f"{len(ex['nodes'])}, {2 * len(ex['links'])}, {len(ex['forwarding'])}"),
        ("expanded scenario (JSON)", f"{len(text) / 1e6:.1f} MB"),
        ("routing and expansion (first call)", f"{t_expand:.1f} s"),
        ("the run (core, setup, summary)", f"{t_run:.1f} s"),
        ("link traversals, per second of run", f"{tx:,}, {tx / t_run / 1e6:.2f} M/s"),
        ("delivered", f"{delivered / 1e9:.2f} GB"),
        ("spacetp.run again (routing cached)", f"{t_cached:.1f} s"),
        ("total, first call", f"{t_expand + t_run:.1f} s"),
        ("peak RSS", f"{rss:.0f} MB"),
    ]  # fmt: skip
    width = max(len(r[0]) for r in rows)
    report = "\n".join(f"| {k:<{width}} | {v} |" for k, v in rows)
    print(report)
    if a.out:
        a.out.write_text(
            "# Constellation traffic matrix\n\n"
            f'`python benches/constellation.py --stop "{a.stop}" --pairs {a.pairs}`\n\n'
            f"| {'measure':<{width}} | value |\n|{'-' * (width + 2)}|-------|\n{report}\n"
        )


if __name__ == "__main__":
    main()
