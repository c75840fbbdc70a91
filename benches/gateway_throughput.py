"""Aggregate throughput through a `spacetp gateway` pair across an emulated fast link (issue
#21: at least 155 Mb/s through a 500 Mb/s link with 20 ms one way, 400 Mb/s the stretch), and
the CPU it costs: every process of the testbed (the emulator, both gateways, the kernel-TCP
sender and receiver) sampled from /proc before and after, and the whole machine's busy time,
as CPU-seconds per Gb delivered.

The routed testbed (four namespaces, kernel TCP at both ends, the gateways intercepting with
nftables and carrying SCPS-TP over their TUN devices, `spacetp emulate` between the TUNs), so
everything runs on this machine at once. `--perf PROCESS` records a profile of one process
(`perf record -g`) and prints its top symbols. Needs root, nftables and TUN:

    sudo .venv/bin/python benches/gateway_throughput.py [--bytes 300000000] [--streams 1] [--perf]

Prints one JSON object; the figures of the last runs are in benches/gateway_throughput.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINK = """
[[links]]
between = ["ground", "craft"]
rate = "{rate}"
delay = "{delay}"
queue = {{ bdp = 1.0 }}
"""
TICK = os.sysconf("SC_CLK_TCK")
# A gateway on a dedicated link, as commercial SCPS-TP gateways are set up: rate control at
# the link's rate (no congestion control) with a 1 ms bucket (64 kB: the default 3 kB refills
# every 50 us at this rate, and a loop woken late loses tokens), an ACK every 10 ms, buffers
# above the 2.5 MB BDP.
RATE_BASED = {
    "congestion_control": "none",
    "scps": {"rate": "480 Mb/s", "ack_period": "10 ms", "bucket": "64 kB"},
    "send_buffer": "8 MB",
    "receive_buffer": "8 MB",
}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` and its waited-for children."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f[11:15]) / TICK


def _tree_cpu_s(pid: int) -> float:
    """CPU of `pid` and its live descendants (`ip netns exec` execs, so mostly one)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += _cpu_s(p)
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        todo += [int(k) for k in kids]
    return total


def _machine_busy_s() -> float:
    """Busy CPU-seconds of the whole machine (all cores; idle and iowait excluded)."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(f) - f[3] - f[4]) / TICK


def run(nbytes: int, streams: int, rate: str, delay: str, tcp: dict, perf: str | None) -> dict:
    from spacetp.live.gateway_testbed import SRV_ADDR, Testbed
    from spacetp.live.kernel_tcp import __file__ as ktcp

    gw = {"protocol": "scps-tp", "tcp": tcp}
    per = nbytes // streams
    with (
        tempfile.TemporaryDirectory() as d,
        Testbed(
            LINK.format(rate=rate, delay=delay), gateway=gw, transparent=True, workdir=Path(d)
        ) as tb,
    ):
        names = ("emulator", "gateway_a", "gateway_b")
        procs = dict(zip(names, tb.procs[:3], strict=True))
        rx = [
            tb.exec("srv", [sys.executable, ktcp, "recv", SRV_ADDR, str(5000 + i), "600"],
                    stdout=subprocess.PIPE, text=True)
            for i in range(streams)
        ]  # fmt: skip
        for r in rx:
            r.stdout.readline()
        prof = None
        if perf:
            prof = subprocess.Popen(
                ["perf", "record", "-g", "-o", f"{d}/perf.data", "-p", str(procs[perf].pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        before = {k: _tree_cpu_s(p.pid) for k, p in procs.items()}
        busy0, t0 = _machine_busy_s(), time.monotonic()
        tx = [
            tb.exec("cli", [sys.executable, ktcp, "send", SRV_ADDR, str(5000 + i), str(per), "-",
                            "1"], stdout=subprocess.DEVNULL)
            for i in range(streams)
        ]  # fmt: skip
        ends = [json.loads(r.communicate(timeout=660)[0]) for r in rx]
        wall, busy = time.monotonic() - t0, _machine_busy_s() - busy0
        cpu = {k: round(_tree_cpu_s(p.pid) - before[k], 2) for k, p in procs.items()}
        for t in tx:
            t.wait(timeout=30)
        if prof is not None:
            prof.send_signal(2)
            prof.wait()
        got = sum(e["bytes"] for e in ends)
        # From the first accept to the last byte anywhere.
        start = min(e["accept_wall"] for e in ends)
        stop = max(e["accept_wall"] + e["seconds"] for e in ends)
        reps = tb.reports()
        top = _perf_top(f"{d}/perf.data") if perf else None
    gbits = got * 8 / 1e9
    a = reps.get("gateway_a", {})
    return {
        "link": f"{rate}, {delay} one way",
        "streams": streams,
        "bytes": got,
        "exact_count": got == per * streams,
        "seconds": round(stop - start, 3),
        "goodput_mbps": round(got * 8 / (stop - start) / 1e6, 1),
        "cpu_s": cpu,
        "machine_busy_s": round(busy, 2),
        "wall_s": round(wall, 2),
        "machine_cpu_s_per_gbit": round(busy / gbits, 2),
        "gateways_cpu_s_per_gbit": round((cpu["gateway_a"] + cpu["gateway_b"]) / gbits, 2),
        "gateway_a_packets_out": a.get("packets_out"),
        "gateway_a_link_write_errors": a.get("link_write_errors"),
        "retransmitted_segments": a.get("retransmitted_segments"),
        # What the emulated link did with gateway A's packets (queue drops, write errors).
        "link_forward": {
            k: v
            for k, v in (reps.get("emulator", {}).get("directions") or [{}])[0].items()
            if k in ("rx_packets", "written_packets", "write_errors", "oversize_drops", "link")
        },
        "perf_top": top,
    }


def _perf_top(data: str, n: int = 25) -> list[str]:
    r = subprocess.run(
        ["perf", "report", "-i", data, "--no-children", "--sort", "dso,symbol", "--stdio",
         "-g", "none", "--percent-limit", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    rows = [x.strip() for x in r.stdout.splitlines() if x.strip() and not x.startswith("#")]
    return rows[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=300_000_000)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--rate", default="500 Mb/s")
    ap.add_argument("--delay", default="20 ms")
    ap.add_argument(
        "--tcp",
        default=json.dumps(RATE_BASED),
        help="the gateways' SCPS-TP settings (JSON, as `spacetp gateway --tcp`)",
    )
    ap.add_argument("--perf", choices=("emulator", "gateway_a", "gateway_b"),
                    help="profile this process with perf")  # fmt: skip
    a = ap.parse_args()
    out = run(a.bytes, a.streams, a.rate, a.delay, json.loads(a.tcp), a.perf)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
