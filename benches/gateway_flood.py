"""Hostile input at rate against a running gateway pair (issue #21, item 8): while real
transfers run, `spacetp.live.flood` sends malformed and forged packets of every class from
gateway A's namespace across the emulated link to gateway B at PPS packets a second for
SECONDS. Prints, per class, the packets sent and gateway B's counters; whether every
transfer arrived exactly (SHA-256 at both ends) and how long it took against the same
transfers without the flood; and gateway B's resident memory and open descriptors each
second (flat: within 5% after the first fifth of the flood).

The routed testbed (four namespaces, kernel TCP at both ends, the gateways intercepting
transparently): the client's ports are pinned (40000-40003) so the SNACK class can aim at the
real connections. The SYN flood goes to port 5001, where a server accepts and closes at once:
each forged SYN that gateway B admits is a half-open flow until its SYN-ACKs give up.

    sudo .venv/bin/python benches/gateway_flood.py [--pps 10000] [--seconds 60] [--json out.json]
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

HERE = Path(__file__).resolve().parent
PROBE = str(HERE.parent / "tests" / "gateway_probe.py")
LINK = """
[[links]]
between = ["a", "b"]
rate = "20 Mb/s"
delay = "20 ms"
queue = { bdp = 2.0 }
"""
GATEWAY = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "8 Mb/s"}}}
FLOWS = 4
# Gateway B's counters that name what it did with hostile input.
COUNTERS = ("undecodable", "bad_checksum", "compressed_bad", "foreign", "rst_replies",
            "rst_replies_suppressed", "out_of_window", "ack_rejected", "challenge_acks",
            "syn_rejected", "rst_rejected", "admitted", "refused", "half_open_dropped", "reset",
            "max_flows", "integrity_resets", "integrity_detail", "timeouts", "reaped")  # fmt: skip
# Accept and close at once: the SYN flood's destination.
CLOSER = ("import socket\ns = socket.create_server(('{host}', 5001), backlog=4096)\n"
          "print('ready', flush=True)\nwhile True:\n    s.accept()[0].close()\n")  # fmt: skip


def _proc_sample(pid: int) -> tuple[int, int]:
    """Resident memory (kB) and open descriptors of `pid`."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def _until_receiving(ns: str, flows: int, within: float = 60.0) -> None:
    """Wait until the server in namespace `ns` has received data on `flows` connections
    (its kernel's count, `ss -i`)."""
    deadline = time.monotonic() + within
    ss = ["ss", "-Htni", "state", "established", "sport = :5000"]
    while True:
        r = subprocess.run(["ip", "netns", "exec", ns, *ss], capture_output=True, text=True)
        got = [int(w.split(":")[1]) for w in r.stdout.split() if w.startswith("bytes_received:")]
        if sum(n > 0 for n in got) >= flows:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the transfers did not start: {r.stdout}")
        time.sleep(0.05)


def run(pps: float, seconds: float, nbytes: int, workdir: Path, classes: list[str] | None = None,
        flood: bool = True) -> dict:  # fmt: skip
    from spacetp.live.flood import CLASSES
    from spacetp.live.gateway_testbed import CLI_ADDR, SRV_ADDR, Testbed, ns_sysctl

    classes = classes or list(CLASSES)
    with Testbed(LINK, gateway=GATEWAY, transparent=True, workdir=workdir) as tb:
        ns_sysctl(tb.ns("cli"), "net.ipv4.ip_local_port_range=40000 40003")
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        sink = tb.exec("srv", [sys.executable, PROBE, "sink", SRV_ADDR, "5000", str(FLOWS)],
                       **pipes)  # fmt: skip
        closer = tb.exec("srv", [sys.executable, "-c", CLOSER.format(host=SRV_ADDR)], **pipes)
        sink.stdout.readline()
        closer.stdout.readline()
        gw_b = tb.procs[2].pid
        t0 = time.monotonic()
        send = tb.exec("cli", [sys.executable, PROBE, "send", SRV_ADDR, "5000", str(nbytes), "1",
                               str(FLOWS)], **pipes)  # fmt: skip
        _until_receiving(tb.ns("srv"), FLOWS)  # the transfers are under way
        fl = None
        if flood:
            fl = tb.exec("gwa", [sys.executable, "-m", "spacetp.live.flood", CLI_ADDR, SRV_ADDR,
                                 "5001", str(pps), str(seconds), ",".join(classes), "40000:5000"],
                         **pipes)  # fmt: skip
        samples = []
        while (fl is not None and fl.poll() is None) or (fl is None and send.poll() is None):
            rss, fds = _proc_sample(gw_b)
            samples.append({"t": round(time.monotonic() - t0, 1), "rss_kb": rss, "fds": fds})
            time.sleep(1.0)
        flood_out = json.loads(fl.communicate()[0] or "{}") if fl is not None else {}
        sent, _ = send.communicate(timeout=300)
        got, _ = sink.communicate(timeout=60)
        reps = tb.reports(settle=1.0)
    sent_f = sorted(json.loads(sent or "{}").get("flows", []), key=lambda f: f["sha256"])
    got_f = sorted(json.loads(got or "{}").get("flows", []), key=lambda f: f["sha256"])
    exact = len(sent_f) == FLOWS and [f["sha256"] for f in sent_f] == [f["sha256"] for f in got_f]
    b = reps.get("gateway_b", {})
    return {
        "pps": pps if flood else 0,
        "flood": flood_out,
        "transfers_exact": exact,
        "transfers": {
            "sent_bytes": [f["bytes"] for f in sent_f],
            "received_bytes": sorted(f["bytes"] for f in got_f),
            "client_errors": (json.loads(sent or "{}").get("errors") or []),
        },  # fmt: skip
        "transfer_s": round(
            max((f["t1"] for f in got_f), default=0) - min((f["t0"] for f in got_f), default=0), 2
        ),  # fmt: skip
        "gateway_b": {k: b.get(k, 0) for k in COUNTERS},
        "gateway_a": {
            k: v for k, v in reps.get("gateway_a", {}).items() if k in COUNTERS and v
        },  # fmt: skip
        "samples": samples,
        "flat": _flat(samples),
    }


def _flat(samples: list[dict]) -> dict:
    """Resident memory and descriptors after the first fifth: largest over smallest."""
    after = samples[len(samples) // 5 :] or samples
    if not after:
        return {}
    rss = [s["rss_kb"] for s in after]
    fds = [s["fds"] for s in after]
    return {"rss_max_over_min": round(max(rss) / min(rss), 3), "rss_kb": [min(rss), max(rss)],
            "fds": [min(fds), max(fds)]}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pps", type=float, default=10_000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--bytes", type=int, default=None,
                    help="per transfer (default: enough to outlast the flood)")  # fmt: skip
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    # 4 transfers sharing 8 Mb/s: keep them going for the whole flood.
    nbytes = a.bytes or int(8e6 / 8 * (a.seconds + 5) / FLOWS)
    with tempfile.TemporaryDirectory() as d:
        base = run(a.pps, a.seconds, nbytes, Path(d), flood=False)
        out = run(a.pps, a.seconds, nbytes, Path(d))
    out["transfer_s_without_flood"] = base["transfer_s"]
    out["transfers_exact_without_flood"] = base["transfers_exact"]
    print(json.dumps({k: v for k, v in out.items() if k != "samples"}, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
