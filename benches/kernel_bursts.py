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
Startup, in ProbeBW). Needs root, /dev/net/tun and the kernel's tcp_bbr.

    sudo .venv/bin/python benches/kernel_bursts.py [--case leo --case geo]
        [--out benches/kernel_bursts.md]
"""

from __future__ import annotations

import argparse
import collections
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
DATA_BYTES = 500  # an IP packet longer than this carries data


def kernel_departures(case, tmp: Path) -> list[tuple[float, int]]:
    """(time, IP length) of the kernel's packets in one bbr transfer across the case's link."""
    from spacetp.live import vs_linux

    rec = tmp / f"{case.name}-kernel.json"
    got = vs_linux.kernel_run(case, "bbr", 1, case.quick_bytes, tmp, departures=rec)
    if not got["complete"]:
        raise SystemExit(f"{case.name}: the kernel's transfer did not complete ({got['bytes']} B)")
    return [tuple(r) for r in json.loads(rec.read_text())]


def sim_departures(case, tmp: Path) -> list[tuple[float, int]]:
    """(time, IP length) of linux-bbr's packets on a 10 Gb/s first hop before the case's link.
    The case's link is listed first: a link's losses are drawn from a stream of its index, so
    it meets the losses the emulator drew for the kernel's run with the same seed."""
    import spacetp
    from spacetp.pcapflows import packets_from

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
    return packets_from(pcap, "10.0.0.1")  # node a, the first


def departures(packets: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """(start, segments) of each departure: data packets less than GROUP_S apart."""
    out: list[list] = []
    last = None
    for t, length in packets:
        if length <= DATA_BYTES:
            continue
        if out and t - last < GROUP_S:
            out[-1][1] += 1
        else:
            out.append([t, 1])
        last = t
    return [(t, n) for t, n in out]


def summary(deps: list[tuple[float, int]]) -> dict:
    sizes = collections.Counter(min(n, 6) for _t, n in deps)
    gaps = [b[0] - a[0] for a, b in zip(deps, deps[1:], strict=False)]
    return {
        "departures": len(deps),
        "segments": sum(n for _t, n in deps),
        "share": {k: sizes[k] / len(deps) for k in range(1, 7)},
        "mean": sum(n for _t, n in deps) / len(deps),
        "median_gap_ms": statistics.median(gaps) * 1e3 if gaps else float("nan"),
    }


def second_half(deps: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """The departures of the transfer's second half in time (past Startup: ProbeBW)."""
    middle = (deps[0][0] + deps[-1][0]) / 2
    return [d for d in deps if d[0] >= middle]


def table(rows: list[tuple[str, str, list[tuple[float, int]]]]) -> list[str]:
    sizes = " | ".join(["1", "2", "3", "4", "5", "6+"])
    head = f"| case | side | part | departures | {sizes} | segments per departure | median gap |"
    lines = [head, "|" + "---|" * 12]
    for case, side, deps in rows:
        for part, s in (("all", summary(deps)), ("second half", summary(second_half(deps)))):
            shares = " | ".join(f"{100 * s['share'][k]:.0f}%" for k in range(1, 7))
            lines.append(
                f"| {case} | {side} | {part} | {s['departures']} | {shares} | {s['mean']:.2f} "
                f"| {s['median_gap_ms']:.3f} ms |"
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
            rows.append((name, "kernel bbr", departures(kernel_departures(case, Path(d)))))
            rows.append((name, "simulator linux-bbr", departures(sim_departures(case, Path(d)))))
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
            "the second half is in time, from the midpoint of the first and last departures.\n\n"
            + "\n".join(lines)
            + "\n"
        )


if __name__ == "__main__":
    main()
