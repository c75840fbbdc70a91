"""Paced departures: how many segments the kernel's bbr sends at one instant, against the
simulator's linux-bbr on the same link.

Linux paces by departures, not by segments: each departure is one TSO/GSO packet of
`tcp_tso_segs` segments (about 1 ms of data at the pacing rate, at least 2 above 1.2 Mb/s),
and the next waits until it has left at the pacing rate. The simulator's `linux-bbr` does the
same (`Bbr::tso_segs`, `connection/pacing.rs`). This bench looks at both:

- Kernel: bbr between two namespaces across `spacetp emulate` (the case's link from
  `spacetp bench --vs-linux`), every data packet's departure read on the sender's TUN device
  (an AF_PACKET socket, kernel timestamps).
- Simulator: linux-bbr on the same link, seed 1, behind a 10 Gb/s zero-delay first hop whose
  pcap shows the departures before the bottleneck queue (1.2 us of serialization a packet).

On both sides, data packets less than 50 us apart are one departure. The table gives the
share of departures of each size, the mean segments per departure and the median time from
one departure to the next. Needs root, /dev/net/tun and the kernel's tcp_bbr.

    sudo .venv/bin/python benches/kernel_bursts.py [--case leo --case geo]
        [--out benches/kernel_bursts.md]
"""

from __future__ import annotations

import argparse
import collections
import json
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

GROUP_S = 50e-6  # packets closer than this left in one departure
DATA_BYTES = 500  # an IP packet longer than this carries data
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4


def sniff(device: str, seconds: float, out: str) -> None:
    """Write [time, IP length] of every packet the host sends on `device`, for `seconds` or
    until SIGTERM."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
    s.bind((device, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.2)
    print("ready", flush=True)
    rec = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop:
        try:
            data, anc, _flags, addr = s.recvmsg(64, 64)
        except TimeoutError:
            continue
        if addr[2] != PACKET_OUTGOING:
            continue
        stamp = next((struct.unpack("qq", d[:16]) for _l, t, d in anc if t == SO_TIMESTAMPNS), None)
        if stamp is not None and len(data) >= 4:
            rec.append((stamp[0] + stamp[1] * 1e-9, struct.unpack("!H", data[2:4])[0]))
    Path(out).write_text(json.dumps(rec))


def kernel_departures(case, tmp: Path) -> list[tuple[float, int]]:
    """(time, IP length) of the kernel's packets in one bbr transfer across the case's link."""
    from spacetp.live.emulate import ADDR_B, DEVICE, Netns, load_link
    from spacetp.live.gateway_testbed import emulator_child

    f = tmp / f"{case.name}.toml"
    f.write_text(f"seed = 1\n{case.link}")
    link_json = tmp / f"{case.name}.json"
    link_json.write_text(load_link(f)[0])
    rec = tmp / f"{case.name}-kernel.json"
    me = [sys.executable, "-m", "spacetp.live.kernel_tcp"]
    with Netns(tag="kbursts") as n, emulator_child(link_json, n.fd_a, n.fd_b, tmp / "emu.json"):
        sn = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_a, sys.executable, __file__, "--sniff", DEVICE,
             str(case.cap_s), str(rec)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        sn.stdout.readline()
        rx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_b, *me, "recv", ADDR_B, "5001", str(case.cap_s)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        rx.stdout.readline()
        tx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_a, *me, "send", ADDR_B, "5001",
             str(case.quick_bytes), "bbr", "0.1"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        got = json.loads(rx.communicate(timeout=case.cap_s + 30)[0])
        tx.communicate(timeout=30)
        sn.terminate()
        sn.wait(timeout=10)
    if got["bytes"] != case.quick_bytes:
        raise SystemExit(f"{case.name}: the kernel's transfer did not complete ({got})")
    return [tuple(r) for r in json.loads(rec.read_text())]


def sim_departures(case, tmp: Path) -> list[tuple[float, int]]:
    """(time, IP length) of linux-bbr's packets on a 10 Gb/s first hop before the case's link."""
    import spacetp

    link = case.link.replace('between = ["a", "b"]', 'between = ["r", "b"]')
    sc = tomllib.loads(
        'name = "departures"\nseed = 1\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "r"\n'
        '[[nodes]]\nname = "b"\n[[links]]\nbetween = ["a", "r"]\nrate = "10 Gb/s"\n'
        f'delay = "0 ms"\n{link}\n[[flows]]\nfrom = "a"\nto = "b"\nprotocol = "linux-bbr"\n'
        f"bytes = {case.quick_bytes}\n"
    )
    pcap = tmp / f"{case.name}-sim.pcap"
    r = spacetp.run(sc, pcap={"0": str(pcap)})
    if not r.flows[0]["complete"]:
        raise SystemExit(f"{case.name}: the simulated transfer did not complete")
    return read_pcap(pcap.read_bytes())


def read_pcap(b: bytes) -> list[tuple[float, int]]:
    """(time, original length) of every record of a little-endian pcap, micro or nano."""
    scale = 1e-9 if struct.unpack("<I", b[:4])[0] == 0xA1B23C4D else 1e-6
    out, off = [], 24
    while off + 16 <= len(b):
        sec, frac, incl, orig = struct.unpack("<IIII", b[off : off + 16])
        out.append((sec + frac * scale, orig))
        off += 16 + incl
    return out


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


def table(rows: list[tuple[str, str, dict]]) -> list[str]:
    sizes = " | ".join(["1", "2", "3", "4", "5", "6+"])
    head = f"| case | side | departures | {sizes} | segments per departure | median gap |"
    lines = [head, "|" + "---|" * 11]
    for case, side, s in rows:
        shares = " | ".join(f"{100 * s['share'][k]:.0f}%" for k in range(1, 7))
        lines.append(
            f"| {case} | {side} | {s['departures']} | {shares} | {s['mean']:.2f} "
            f"| {s['median_gap_ms']:.3f} ms |"
        )
    return lines


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--sniff":
        sniff(sys.argv[2], float(sys.argv[3]), sys.argv[4])
        return
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
            rows.append((name, "kernel bbr", summary(departures(kernel_departures(case, Path(d))))))
            rows.append(
                (name, "simulator linux-bbr", summary(departures(sim_departures(case, Path(d)))))
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
            "departures by segments carried; a departure is data packets less than 50 us apart.\n\n"
            + "\n".join(lines)
            + "\n"
        )


if __name__ == "__main__":
    main()
