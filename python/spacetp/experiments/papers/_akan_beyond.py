"""Akan, Fang & Akyildiz's Figs. 3-6 beyond the paper: the answer missions adopted since for the
deep-space links where the paper shows TCP failing. LTP (RFC 5326, NASA ION's choices; one
engine at each end of the same 1 Mb/s link) and the Bundle Protocol over LTP (RFC 9171; an
agent at each end, the contact plan derived from the link) run on the paper's link, with the
paper's segment size, loss and duration, and are drawn beside the TCP family, labelled as not
in the paper.

LTP has no congestion control and no slow start: it sends at the link's rate, one export
session per block, and what it needs is sessions for the bandwidth-delay product. Each session
lasts its block's time on the link, one round trip, and the timers' margins (ION's default
queuing latencies, 1 s at each end); a block that lost a segment keeps its session another
round trip. So `sessions(rtt)` = 2 x rate x (RTT + 2 s + block time) / block + 2, with blocks
of 1 MB (8 s on the link). Throughput is counted as the paper's: bytes delivered / 20 000 s.
"""

from __future__ import annotations

import math

from spacetp.experiments.framework import Context, summarize
from spacetp.experiments.papers._akan_setup import DURATION, METRICS, MTU, scenario

BEYOND = ("ltp", "bp")
LABELS = {"ltp": "LTP (not in the paper)", "bp": "BP over LTP (not in the paper)"}
BLOCK = 1_000_000
RATE_BYTES = 1e6 / 8


def sessions(rtt: float) -> int:
    """LTP export sessions for the bandwidth-delay product at `rtt` (see the module doc)."""
    busy = rtt + 2.0 + BLOCK / RATE_BYTES
    return math.ceil(2 * RATE_BYTES * busy / BLOCK) + 2


def base(protocol: str) -> dict:
    """The paper's link with one LTP (or BP) flow instead of TCP."""
    sc = scenario()
    ltp = {"block_size": f"{BLOCK} B", "aggregation_size_limit": f"{BLOCK} B"}
    flow = {"from": "source", "to": "destination", "protocol": protocol, "mtu": MTU}
    if protocol == "ltp":
        flow["ltp"] = {**ltp, "max_export_sessions": 10}
    else:
        # A file larger than the link can carry in the run, in bundles of one block; the
        # agents make bundles as they leave.
        flow["bytes"] = 10**12
        flow["bp"] = {"bundle_size": f"{BLOCK} B", "lifetime": "200000 s"}
        sc["dtn"] = {"ltp": {"aggregation_size_limit": f"{BLOCK} B", "max_export_sessions": 10}}
    sc["flows"] = [flow]
    sc["name"] = f"akan beyond the paper: {protocol}"
    return sc


def case(rtt: float, p_loss: float, protocol: str) -> tuple[str, dict]:
    sessions_path = "flows[0].ltp" if protocol == "ltp" else "dtn.ltp"
    return f"rtt={rtt:g} p={p_loss:g}", {
        "links[0].delay": rtt / 2,
        "links[0].errors.per": p_loss,
        "stop": rtt + DURATION,
        f"{sessions_path}.max_export_sessions": sessions(rtt),
    }


def sweep(ctx: Context, points: dict[str, list[tuple[float, float]]]):
    """(rtt, p_loss) points per protocol, as rows like the TCP sweep's summary (throughput
    in B/s, with the case's RTT and loss, the paper's window and duration)."""
    import pandas as pd

    frames = []
    for proto in BEYOND:
        cases, meta = {}, {}
        for rtt, p in points.get(proto, []):
            name, values = case(rtt, p, proto)
            cases[name] = values
            meta[name] = (rtt, p)
        if not cases:
            continue
        runs = ctx.sweep_cases(
            f"Figs. 3-6 beyond the paper: {proto}", base(proto), cases, ctx.seeds(1, 3), METRICS,
            [proto],
        )  # fmt: skip
        runs["throughput_Bps"] = runs["flows[0].bytes_delivered"] / DURATION
        s = summarize(runs, ["case", "protocol"], "throughput_Bps")
        s["timeouts_mean"] = float("nan")  # LTP has no retransmission timeout of TCP's kind
        s["rtt_s"] = s["case"].map({c: m[0] for c, m in meta.items()})
        s["p_loss"] = s["case"].map({c: m[1] for c, m in meta.items()})
        s["rwnd"] = 64
        s["duration_s"] = DURATION
        frames.append(s)
    return pd.concat(frames) if frames else None
