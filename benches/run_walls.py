"""The wall of `spacetp.run` as users call it, shared by the benchmarks that report it."""

from __future__ import annotations

import time


def best_walls(scenarios: dict, reps: int) -> dict[str, tuple[float, int, list]]:
    """For each loaded scenario: the best wall of `spacetp.run` over `reps` (the scenarios
    alternated rep by rep, so that the machine's load falls on all alike), the packets
    the links carried (tx_packets, both directions) and the flows' summaries."""
    import spacetp

    best = dict.fromkeys(scenarios, float("inf"))
    last = {}
    for _ in range(reps):
        for k, sc in scenarios.items():
            t0 = time.perf_counter()
            r = spacetp.run(sc)
            best[k] = min(best[k], time.perf_counter() - t0)
            last[k] = r
    return {
        k: (best[k], sum(link["tx_packets"] for link in last[k].links), last[k].flows)
        for k in scenarios
    }
