"""Goodput over a GEO-like link: the `spacetp gateway` pairs (SCPS-TP, and QUIC with quinn's
CUBIC and BBR) against kernel TCP end to end (reno and cubic), and what the simulator
predicts for the gateways' protocol (docs/live.md).

The link: 1.5 Mb/s forward, 15 kb/s return, 275 ms one way, BER 1e-5 both ways. Each case
runs in its own namespaces with its own emulator, all at once (the link is slow, the machine
is not the limit; `spacetp.live.compare`). A transfer that has not finished by --cap seconds
is cut there and its goodput is what arrived by then. The gateways' goodput against the
simulator's prediction (budget: within 20%) is a figure of this benchmark, not an assertion of
tests/test_gateway.py: wall-clock goodput moves with the machine's load. Run as root from the
repository:

    sudo .venv/bin/python benches/gateway_geo.py [--bytes 1000000] [--cap 150]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from spacetp.live.compare import GEO, compare


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=1_000_000)
    ap.add_argument("--cap", type=float, default=150.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--link", type=Path, help="another link table (TOML) instead of GEO")
    ap.add_argument(
        "--gateways",
        default="scps-tp,quic-cubic,quic-bbr",
        help="the gateway pairs' protocols, comma-separated",
    )
    a = ap.parse_args()
    link = a.link.read_text() if a.link else GEO
    gws = [{"protocol": p} for p in a.gateways.split(",") if p]
    with tempfile.TemporaryDirectory() as d:
        out = compare(link, a.bytes, a.cap, Path(d), gateway=gws)
    for k, v in out.items():
        line = f"{k:18s} {v['goodput_bps'] / 1e3:8.1f} kb/s  {v['seconds']:7.1f} s"
        line += "" if v["finished"] else f"  (cut: {v['bytes']} B arrived)"
        if "simulator_goodput_bps" in v:
            line += f"  simulator {v['simulator_goodput_bps'] / 1e3:.1f} kb/s"
        e = v["emulator"]
        line += f"  emulator p99 {e['p99_us'] / 1e3:.2f} ms{' RT' if e['realtime'] else ''}"
        line += "" if e["within_bound"] else " (late: the machine, not the protocol)"
        print(line)
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
