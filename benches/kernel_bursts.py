"""Paced departures: how many segments the kernel's bbr sends at one instant, against the
simulator's linux-bbr on the same link.

Linux paces by departures, not by segments: each departure is one TSO/GSO packet of
`tcp_tso_segs` segments (about 1 ms of data at the pacing rate, at least 2 above 1.2 Mb/s),
and the next waits until it has left at the pacing rate. The simulator's `linux-bbr` does the
same (`Bbr::tso_segs`, `connection/pacing.rs`). This bench looks at both:

- Kernel: bbr between two namespaces across `spacetp emulate` (`spacetp bench
  --vs-linux`'s run of the case), every data packet's departure read on the sender's TUN
  device (an AF_PACKET socket, kernel timestamps: `kernel_tcp departures`).
- Simulator: linux-bbr on the same link, seed 1, behind a 10 Gb/s zero-delay first hop whose
  pcap shows the departures before the bottleneck queue (1.2 us of serialization a packet).

On both sides, data packets less than 50 us apart are one departure. The table gives the
share of departures of each size, the mean segments per departure and the median time from
one departure to the next, over the whole transfer and over its second half in time (past
Startup, in ProbeBW), also without the two round trips after each loss's first resend; and
how many departures carry resent data, and how many of those mix
it with new data or carry ranges that do not follow one another (an skb is one range of one
kind). Needs root, /dev/net/tun and the kernel's tcp_bbr.

    sudo .venv/bin/python benches/kernel_bursts.py [--case leo --case geo]
        [--out benches/kernel_bursts.md]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

GROUP_S = 50e-6  # packets closer than this left in one departure
SEQ_SPACE = 1 << 32


@dataclasses.dataclass
class Departure:
    t: float
    segments: int
    resent: bool  # it carries data sent before
    mixed: bool  # resent and new data, or ranges that do not follow one another


def kernel_departures(case, tmp: Path) -> list[tuple[float, int, int]]:
    """(time, sequence number, payload bytes) of the kernel's data segments in one bbr
    transfer across the case's link."""
    from spacetp.live import vs_linux

    rec = tmp / f"{case.name}-kernel.json"
    got = vs_linux.kernel_run(case, "bbr", 1, case.quick_bytes, tmp, departures=rec)
    if not got["complete"]:
        raise SystemExit(f"{case.name}: the kernel's transfer did not complete ({got['bytes']} B)")
    return [tuple(r) for r in json.loads(rec.read_text())]


def sim_departures(case, tmp: Path) -> list[tuple[float, int, int]]:
    """(time, sequence number, payload bytes) of linux-bbr's data segments on a 10 Gb/s first
    hop before the case's link.
    The case's link is listed first: a link's losses are drawn from a stream of its index, so
    it meets the losses the emulator drew for the kernel's run with the same seed."""
    import spacetp
    from spacetp.pcapflows import tcp_data_from

    link = case.link.replace('between = ["a", "b"]', 'between = ["r", "b"]')
    sc = tomllib.loads(
        'name = "departures"\nseed = 1\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "r"\n'
        f'[[nodes]]\nname = "b"\n{link}\n[[links]]\nbetween = ["a", "r"]\nrate = "10 Gb/s"\n'
        'delay = "0 ms"\n[[flows]]\nfrom = "a"\nto = "b"\nprotocol = "linux-bbr"\n'
        f"bytes = {case.quick_bytes}\n"
    )
    pcap = tmp / f"{case.name}-sim.pcap"
    r = spacetp.run(sc, pcap={"1": str(pcap)})
    if not r.flows[0]["complete"]:
        raise SystemExit(f"{case.name}: the simulated transfer did not complete")
    return tcp_data_from(pcap, "10.0.0.1")  # node a, the first


def departures(segments: list[tuple[float, int, int]]) -> list[Departure]:
    """The departures of a sender's data segments (time, sequence number, payload): those
    less than GROUP_S apart leave together. A segment is resent when it starts below the
    highest sequence number sent before it (modulo 2^32)."""
    out: list[Departure] = []
    last_t = None
    high = None  # end of the highest data sent so far
    prev_end = None  # end of the previous segment
    prev_resent = False
    for t, seq, length in segments:
        resent = high is not None and 0 < (high - seq) % SEQ_SPACE <= SEQ_SPACE // 2
        if out and t - last_t < GROUP_S:
            d = out[-1]
            d.segments += 1
            d.resent |= resent
            d.mixed |= resent != prev_resent or seq != prev_end
        else:
            out.append(Departure(t, 1, resent, False))
        end = (seq + length) % SEQ_SPACE
        if high is None or (end - high) % SEQ_SPACE < SEQ_SPACE // 2:
            high = end
        last_t, prev_end, prev_resent = t, end, resent
    return out


def summary(deps: list[Departure]) -> dict:
    sizes = collections.Counter(min(d.segments, 6) for d in deps)
    gaps = [b.t - a.t for a, b in zip(deps, deps[1:], strict=False)]
    segments = sum(d.segments for d in deps)
    return {
        "departures": len(deps),
        "segments": segments,
        "share": {k: sizes[k] / len(deps) for k in range(1, 7)},
        "mean": segments / len(deps),
        "median_gap_ms": statistics.median(gaps) * 1e3 if gaps else float("nan"),
        "resent": sum(d.resent for d in deps),
        "mixed": sum(d.mixed for d in deps),
    }


def second_half(deps: list[Departure]) -> list[Departure]:
    """The departures of the transfer's second half in time (past Startup: ProbeBW)."""
    middle = (deps[0].t + deps[-1].t) / 2
    return [d for d in deps if d.t >= middle]


def outside_recovery(deps: list[Departure], rtt_s: float) -> list[Departure]:
    """The departures not within two round trips after one with resent data: a loss's
    recovery round (packet conservation holds the window to what is in flight) and the
    round after, which depend on where the link's losses fell, not on pacing."""
    out, until = [], float("-inf")
    for d in deps:
        if d.resent:
            until = d.t + 2 * rtt_s
        elif d.t > until:
            out.append(d)
    return out


def table(rows: list[tuple[str, str, float, list[Departure]]]) -> list[str]:
    sizes = " | ".join(["1", "2", "3", "4", "5", "6+"])
    head = (
        f"| case | side | part | departures | {sizes} | segments per departure | median gap "
        "| with resent data | of them mixed |"
    )
    lines = [head, "|" + "---|" * 14]
    for case, side, rtt_s, deps in rows:
        parts = (
            ("all", summary(deps)),
            ("second half", summary(second_half(deps))),
            ("second half, outside recovery", summary(outside_recovery(second_half(deps), rtt_s))),
        )
        for part, s in parts:
            shares = " | ".join(f"{100 * s['share'][k]:.0f}%" for k in range(1, 7))
            lines.append(
                f"| {case} | {side} | {part} | {s['departures']} | {shares} | {s['mean']:.2f} "
                f"| {s['median_gap_ms']:.3f} ms | {s['resent']} | {s['mixed']} |"
            )
    return lines


def main() -> None:
    from spacetp.live import vs_linux

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--case", action="append", help="a case of the --vs-linux grid (default: leo, geo)"
    )
    ap.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = ap.parse_args()
    names = args.case or ["leo", "geo"]
    cases = {c.name: c for c in vs_linux.GRID}
    unknown = [n for n in names if n not in cases]
    if unknown:
        raise SystemExit(f"--case {unknown[0]}: not a case of the grid ({', '.join(cases)})")
    usable, skipped = vs_linux.check_machine(("bbr",))
    if not usable:
        raise SystemExit("; ".join(skipped))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            case = cases[name]
            rtt = 2 * case.one_way_s
            kernel = departures(kernel_departures(case, Path(d)))
            rows.append((name, "kernel bbr", rtt, kernel))
            rows.append(
                (name, "simulator linux-bbr", rtt, departures(sim_departures(case, Path(d))))
            )
    lines = table(rows)
    print("\n".join(lines))
    if args.out:
        kernel_release = Path("/proc/sys/kernel/osrelease").read_text().strip()
        args.out.write_text(
            "# Paced departures, kernel bbr against linux-bbr\n\n"
            f"`sudo .venv/bin/python benches/kernel_bursts.py --out {args.out}` on "
            f"{time.strftime('%Y-%m-%d')}, kernel {kernel_release}, "
            "each case's transfer of `spacetp bench --vs-linux --quick`, seed 1. Shares of "
            "departures by segments carried; a departure is data packets less than 50 us apart; "
            "the second half is in time, from the midpoint of the first and last departures; "
            "outside recovery leaves out the two round trips after each departure with resent "
            "data. "
            "Departures with resent data: those carrying a segment that starts below the highest "
            "sequence number sent before it; mixed: with new data too, or with ranges that do "
            "not follow one another.\n\n" + "\n".join(lines) + "\n"
        )


if __name__ == "__main__":
    main()
