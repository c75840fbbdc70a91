"""Time-sequence, throughput and RTT series of one transfer, in the tcptrace / Wireshark
"TCP Stream Graphs" sense, from a pcap (spacetp.pcapflows) or a simulated flow.

A `FlowView` holds, on one axis of stream offsets (byte 0 is the first data byte):

- `data`: every data segment at the capture point (t, start, end, retx): a retransmission
  sends bytes the capture saw before (tshark's tcp.analysis.retransmission, fast and
  spurious ones and its out-of-order segments included, as tcptrace marks them);
- `acks`: every acknowledgment (t, ack, edge): the cumulative ACK and the right edge of the
  receive window (ACK + window x 2^scale; unknown scale when the SYNs were not captured);
- `blocks`: SACK blocks (what the receiver holds above the ACK) and SCPS-TP SNACK holes
  (what it asks for again: offset and size in MSS units from the ACK, plus the bit vector);
- `gaps`: bytes never seen before a later segment (tshark's "previous segment not
  captured"): lost upstream of the capture point, exact for a receiver-side capture;
- `lost`: transmissions presumed lost, for a sender-side capture: sent, then sent again
  before any cumulative ACK or SACK block covered them (each later transmission of the
  same bytes points at the one before it);
- `rtt`: RTT samples (Karn: segments never retransmitted), the time from a segment to the
  first ACK covering it; meaningful at the sender's side of the path.

`from_pcap` and `from_simulation` make one; `throughput` and `rtt_series` give the series
the other two graphs draw (spacetp.tsg_plot draws all three).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spacetp.errors import UserError

WRAP = 1 << 32
SYN, FIN, RST, ACK = 0x02, 0x01, 0x04, 0x10


@dataclass
class FlowView:
    title: str
    source: str
    data: object  # pandas frames, columns as in the module docstring
    acks: object
    blocks: object
    gaps: object
    lost: object
    rtt: object
    transport: str = "tcp"
    mss: int | None = None
    notes: list[str] = field(default_factory=list)
    # A simulated flow's limit states over time (`Result.limit_intervals`): the graphs shade
    # them. None for a capture.
    limits: object = None

    def counts(self) -> dict[str, int]:
        return {
            "segments": len(self.data),
            "retransmissions": int(self.data["retx"].sum()) if len(self.data) else 0,
            "gaps": len(self.gaps),
            "presumed_lost": len(self.lost),
            "sack_blocks": int((self.blocks["kind"] == "SACK").sum()),
            "snack_holes": int((self.blocks["kind"] == "SNACK").sum()),
        }


def _frame(rows: list[dict], cols: list[str]):
    import pandas as pd

    return pd.DataFrame(rows, columns=cols)


class _Unwrap:
    """32-bit sequence numbers to 64-bit positions relative to a base (nearest to the last)."""

    def __init__(self, base: int):
        self.base = base
        self.last = 0

    def __call__(self, seq: int) -> int:
        rel = (seq - self.base) % WRAP
        cand = rel + (self.last // WRAP) * WRAP
        best = min((cand - WRAP, cand, cand + WRAP), key=lambda c: abs(c - self.last))
        self.last = best
        return best


def from_conversation(conv, source: str, direction: int | None = None) -> FlowView:
    """A TCP or SCPS-TP conversation (spacetp.pcapflows) as a FlowView of its data direction
    (the one carrying more payload unless `direction` says)."""
    d = direction
    if d is None:
        d = 0 if conv.payload_bytes(0) >= conv.payload_bytes(1) else 1
    pk = conv.packets
    syn_d = next((p for p in pk if p["dir"] == d and p["flags"] & SYN), None)
    syn_r = next((p for p in pk if p["dir"] != d and p["flags"] & SYN), None)
    notes = []
    first_data = next((p for p in pk if p["dir"] == d and p["len"] > 0), None)
    if syn_d is not None:
        base = syn_d["seq"] + 1
    elif first_data is not None:
        base = first_data["seq"]
        notes.append("the handshake was not captured: offsets count from the first data seen")
    else:
        raise UserError(f"{conv.label}: no data in the direction drawn")
    ws = 0
    if syn_d is not None and syn_r is not None and "ws" in syn_d and "ws" in syn_r:
        ws = syn_r["ws"]
    elif syn_r is None:
        notes.append("no SYN-ACK captured: the receive window is drawn unscaled")
    mss = (syn_d or {}).get("mss")
    ts = syn_d is not None and "ts" in syn_d and syn_r is not None and "ts" in syn_r
    unit = (mss - 12 if ts else mss) if mss else 1460
    useq, uack = _Unwrap(base), _Unwrap(base)
    data, acks, blocks, gaps = [], [], [], []
    high = None
    for p in pk:
        if p["dir"] == d:
            if p["flags"] & (SYN | RST):
                continue
            # as tshark: a FIN takes a sequence number; any segment may reveal a gap
            s = useq(p["seq"])
            seqlen = p["len"] + (1 if p["flags"] & FIN else 0)
            if high is not None and s > high:
                gaps.append({"t": p["t"], "start": high, "end": s, "frame": p["frame"]})
            if seqlen <= 0:
                continue
            retx = high is not None and s < high
            high = s + seqlen if high is None else max(high, s + seqlen)
            data.append(
                {"t": p["t"], "start": s, "end": s + seqlen, "len": p["len"], "retx": retx,
                 "frame": p["frame"], "fin": bool(p["flags"] & FIN)}
            )  # fmt: skip
        elif p["flags"] & ACK and not p["flags"] & RST:
            a = uack(p["ack"])
            edge = a + (p["win"] << ws) if not p["flags"] & SYN else np.nan
            acks.append({"t": p["t"], "ack": a, "edge": edge, "frame": p["frame"]})
            for left, right in p.get("sack", []):
                lo = a + ((left - p["ack"]) % WRAP)
                hi = lo + ((right - left) % WRAP)
                blocks.append({"t": p["t"], "left": lo, "right": hi, "kind": "SACK"})
            for off, size, vec in p.get("snack", []):
                lo = a + off * unit
                hi = lo + max(size, 1) * unit
                blocks.append({"t": p["t"], "left": lo, "right": hi, "kind": "SNACK"})
                for i in range(8 * len(vec)):
                    if vec[i // 8] & (0x80 >> (i % 8)):
                        x = hi + i * unit
                        blocks.append({"t": p["t"], "left": x, "right": x + unit, "kind": "SNACK"})
    data_f = _frame(data, ["t", "start", "end", "len", "retx", "frame", "fin"])
    acks_f = _frame(acks, ["t", "ack", "edge", "frame"])
    blocks_f = _frame(blocks, ["t", "left", "right", "kind"])
    kind = "SCPS-TP" if conv.transport == "scps-tp" else "TCP"
    if any(p.get("compressed") for p in pk):
        kind += " (compressed headers)"
    a, b = (conv.a, conv.b) if d == 0 else (conv.b, conv.a)
    title = f"{kind} {a[0]}:{a[1]} -> {b[0]}:{b[1]}"
    return FlowView(
        title=title,
        source=source,
        data=data_f,
        acks=acks_f,
        blocks=blocks_f,
        gaps=_frame(gaps, ["t", "start", "end", "frame"]),
        lost=presumed_lost(data_f, acks_f, blocks_f),
        rtt=rtt_samples(data_f, acks_f),
        transport=conv.transport,
        mss=mss,
        notes=notes,
    )


def presumed_lost(data, acks, blocks):
    """The transmissions sent again before any ACK or SACK block covered their bytes."""
    ack_t = acks["t"].to_numpy(dtype=float)
    ack_max = np.maximum.accumulate(acks["ack"].to_numpy(dtype=float)) if len(acks) else ack_t
    sack = blocks[blocks["kind"] == "SACK"] if len(blocks) else blocks
    last: dict[int, int] = {}  # start offset -> index of its latest transmission
    rows = []
    starts, ends, ts = (data[c].to_numpy() for c in ("start", "end", "t"))
    for i, retx in enumerate(data["retx"].to_numpy()):
        s = int(starts[i])
        j = last.get(s)
        last[s] = i
        if not retx or j is None:
            continue
        k = np.searchsorted(ack_t, ts[i], side="right") - 1
        if k >= 0 and ack_max[k] >= ends[j]:
            continue  # acknowledged before it was sent again: spurious
        if len(sack):
            w = sack[(sack["t"] > ts[j]) & (sack["t"] <= ts[i])]
            if ((w["left"] <= starts[j]) & (w["right"] >= ends[j])).any():
                continue
        rows.append({"t": ts[j], "start": starts[j], "end": ends[j], "resent_at": ts[i]})
    return _frame(rows, ["t", "start", "end", "resent_at"])


def rtt_samples(data, acks):
    """(t, rtt_s) for every segment never retransmitted, to the first ACK covering it."""
    if not len(data) or not len(acks):
        return _frame([], ["t", "rtt_s"])
    resent = set(data.loc[data["retx"], "start"].tolist())
    ok = data[~data["retx"] & ~data["start"].isin(resent)]
    ack_t = acks["t"].to_numpy(dtype=float)
    ack_max = np.maximum.accumulate(acks["ack"].to_numpy(dtype=float))
    i0 = np.searchsorted(ack_max, ok["end"].to_numpy(dtype=float), side="left")
    i1 = np.searchsorted(ack_t, ok["t"].to_numpy(dtype=float), side="left")
    i = np.maximum(i0, i1)
    valid = i < len(ack_t)
    t = ok["t"].to_numpy(dtype=float)[valid]
    rtt = ack_t[i[valid]] - t
    return _frame([], ["t", "rtt_s"]) if not len(t) else _df({"t": t, "rtt_s": rtt})


def _df(cols: dict):
    import pandas as pd

    return pd.DataFrame(cols)


# ------------------------------------------------------------------------------ sources


def pick(conversations, flow: int | None, source: str):
    """The conversation to draw: index `flow`, else the one carrying the most payload."""
    if not conversations:
        raise UserError(f"{source}: no TCP or SCPS-TP conversation in it")
    if flow is None:
        return max(conversations, key=lambda c: max(c.payload_bytes(0), c.payload_bytes(1)))
    if not 0 <= flow < len(conversations):
        listed = "; ".join(f"{i}: {c.label}" for i, c in enumerate(conversations))
        raise UserError(f"--flow {flow}: the capture has {len(conversations)} ({listed})")
    return conversations[flow]


def from_pcap(path: str | Path, flow: int | None = None) -> FlowView:
    from spacetp.pcapflows import read

    convs = read(path)
    conv = pick(convs, flow, str(path))
    return from_conversation(conv, f"capture {Path(path).name}")


def from_simulation(
    scenario: dict, flow: int = 0, seed: int | None = None, link: str | None = None, tmp=None
) -> FlowView:
    """Simulate `scenario` with a pcap tap on `link` (default: the first link of the flow's
    path, the sender's side) and the flow's segment trace, and view `flows[flow]`."""
    import tempfile

    from spacetp.pathfacts import _route
    from spacetp.simulate import run

    flows = scenario.get("flows") or []
    if not 0 <= flow < len(flows):
        raise UserError(f"--flow {flow}: the scenario has {len(flows)} [[flows]] entries")
    f = flows[flow]
    if link is None:
        hops = None if scenario.get("topology") else _route(scenario["links"], f["from"], f["to"])
        if not hops:
            raise UserError("--link: give the link to record (its path is not found by name)")
        link = str(hops[0][0])
    if f.get("protocol", "newreno").startswith("quic"):
        from spacetp.pcapflows import QUIC_NOT_READ

        raise UserError(f"flows[{flow}] is {QUIC_NOT_READ}")
    with tempfile.TemporaryDirectory(dir=tmp) as td:
        pcap = Path(td) / "flow.pcap"
        res = run(scenario, seed=seed, pcap={link: str(pcap)}, trace_segments=True)
        if f.get("protocol") == "ltp":
            view = _from_trace(res, flow, scenario)
        else:
            from spacetp.pcapflows import read

            names = _node_names(scenario)
            src, dst = _addr(names, f["from"]), _addr(names, f["to"])
            convs = [c for c in read(pcap) if {c.a[0], c.b[0]} == {src, dst} and c.packets]
            mine = [c for c in convs if c.a[0] == src]
            pair = (f["from"], f["to"])
            same = [i for i, g in enumerate(flows) if (g["from"], g["to"]) == pair]
            if len(mine) == len(same):
                conv = mine[same.index(flow)]
            else:
                conv = pick(convs, None, str(pcap))
            view = from_conversation(conv, "")
    r = res.flows[flow]
    view.source = f"simulation of flow {flow} ({r['name']}, {r['protocol']}), tap on link {link}"
    view.limits = res.limit_intervals(flow)
    if r.get("limits"):
        view.notes.append(r["limits"][0]["text"])
    seg = res.segments_frame()
    if seg is not None and view.transport != "ltp":
        n = int(seg[seg["flow"] == flow]["retransmission"].sum())
        view.notes.append(f"the sender's trace counts {n} retransmissions")
    return view


def _node_names(scenario: dict) -> list[str]:
    return [n["name"] for n in scenario.get("nodes") or []]


def _addr(names: list[str], node: str) -> str:
    return f"10.0.0.{names.index(node) + 1}"


def _from_trace(res, flow: int, scenario: dict) -> FlowView:
    """A transfer without TCP ACKs on the wire (LTP): the data segments of the sender's
    trace and its acknowledged offset (snd_una) sampled over time."""
    seg = res.segments_frame()
    seg = seg[seg["flow"] == flow]
    data = _df(
        {
            "t": seg["time_s"].to_numpy(),
            "start": seg["offset"].to_numpy(),
            "end": (seg["offset"] + seg["len"]).to_numpy(),
            "len": seg["len"].to_numpy(),
            "retx": seg["retransmission"].to_numpy() > 0,
            "frame": np.arange(1, len(seg) + 1),
            "fin": False,
        }
    )
    s = res.samples_frame()
    acks = _frame([], ["t", "ack", "edge", "frame"])
    if s is not None:
        s = s[s["flow"] == flow]
        acks = _df({"t": s["time_s"], "ack": s["snd_una"], "edge": np.nan, "frame": 0})
    empty = _frame([], ["t", "left", "right", "kind"])
    return FlowView(
        title=f"{res.flows[flow]['protocol']} {res.flows[flow]['name']}",
        source="",
        data=data,
        acks=acks,
        blocks=empty,
        gaps=_frame([], ["t", "start", "end", "frame"]),
        lost=presumed_lost(data, acks, empty),
        rtt=_frame([], ["t", "rtt_s"]),
        transport="ltp",
        notes=["LTP: the ACK line is the acknowledged offset the sender's trace samples"],
    )


# ------------------------------------------------------------------------------ series


def throughput(view: FlowView, bin_s: float | None = None):
    """Per time bin: goodput (bytes newly acknowledged), sending rate (all data bytes) and
    retransmitted rate, in bits/s. Default bin: 1/100 of the transfer, at least 10 ms."""
    d, a = view.data, view.acks
    end = max(float(d["t"].max()) if len(d) else 0.0, float(a["t"].max()) if len(a) else 0.0)
    if bin_s is None:
        bin_s = max(end / 100.0, 0.01)
    edges = np.arange(0.0, end + bin_s, bin_s)
    if len(edges) < 2:
        edges = np.array([0.0, bin_s])
    lens = d["len"].to_numpy(dtype=float)
    sent, _ = np.histogram(d["t"], bins=edges, weights=lens)
    retx, _ = np.histogram(d["t"][d["retx"]], bins=edges, weights=lens[d["retx"].to_numpy()])
    if len(a):
        ack_t = a["t"].to_numpy(dtype=float)
        ack_max = np.maximum.accumulate(a["ack"].to_numpy(dtype=float))
        idx = np.searchsorted(ack_t, edges, side="right") - 1
        at = np.where(idx >= 0, ack_max[np.clip(idx, 0, None)], 0.0)
        good = np.diff(np.maximum(at, 0.0))
    else:
        good = np.zeros(len(edges) - 1)
    return _df(
        {
            "t": (edges[:-1] + edges[1:]) / 2,
            "goodput_bps": 8 * good / bin_s,
            "sending_bps": 8 * sent / bin_s,
            "retransmitted_bps": 8 * retx / bin_s,
        }
    )


def rtt_series(view: FlowView):
    return view.rtt
