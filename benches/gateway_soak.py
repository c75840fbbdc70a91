"""A soak of a gateway pair (issue #21, item 9): MINUTES of mixed traffic through the pair
across an emulated link with loss and outages (many short connections, a few long ones),
with each gateway's resident memory and open descriptors sampled every minute. Flat means
within 5% after the warm-up (the first fifth). Every transfer is checked at the server (the
byte count it echoes must be what was sent).

The testbed of the gateway tests (four namespaces, kernel TCP at both ends, explicit rules:
clients connect to gateway A's port, gateway B connects to the server). Needs root:

    sudo .venv/bin/python benches/gateway_soak.py [--minutes 30] [--json soak.json]

The figures of the last run are in benches/gateway_soak.md.
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

# 20 Mb/s, 50 ms one way, 0.5% of packets lost, a 20 s outage every 5 minutes.
LINK = """
[[links]]
between = ["a", "b"]
rate = "20 Mb/s"
delay = "50 ms"
errors = {{ per = 0.005 }}
queue = {{ bdp = 1.0 }}
outages = [{outages}]
"""
GATEWAY = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "16 Mb/s"}}}
# Reads each connection to EOF and answers with the byte count.
SERVER = """
import socket, threading
srv = socket.create_server(("{host}", 5000), backlog=1024)
print("ready", flush=True)
def one(c):
    n = 0
    try:
        while b := c.recv(65536):
            n += len(b)
        c.sendall(b"%d\\n" % n)
    except OSError:
        pass
    c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=one, args=(c,), daemon=True).start()
"""
# SHORT connections a second of 20 kB each, LONG connections of 5 MB back to back; counts
# of exact, wrong and failed transfers at the end (one JSON line).
CLIENT = """
import json, os, socket, sys, threading, time
host, secs, short_rate, n_long = "{host}", {seconds}, {short_rate}, {n_long}
out = {{"short_ok": 0, "long_ok": 0, "wrong": 0, "failed": 0, "errors": {{}}}}
lock = threading.Lock()
def xfer(size, kind):
    try:
        c = socket.create_connection((host, 5000), timeout=300)
        c.settimeout(300)
        c.sendall(os.urandom(size))
        c.shutdown(socket.SHUT_WR)
        back = c.recv(64)
        c.close()
        key = kind + "_ok" if back == b"%d\\n" % size else "wrong"
    except OSError as e:
        key = "failed"
        with lock:
            out["errors"][type(e).__name__] = out["errors"].get(type(e).__name__, 0) + 1
    with lock:
        out[key] += 1
def longs():
    while time.monotonic() < end:
        xfer(5_000_000, "long")
end = time.monotonic() + secs
ts = [threading.Thread(target=longs) for _ in range(n_long)]
for t in ts:
    t.start()
while time.monotonic() < end:
    threading.Thread(target=xfer, args=(20_000, "short"), daemon=True).start()
    time.sleep(1 / short_rate)
for t in ts:
    t.join()
time.sleep(30)
print(json.dumps(out), flush=True)
"""


def _sample(pid: int) -> dict:
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return {"rss_kb": rss, "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def _not_closed(tb, started: float) -> list[dict]:
    """Every connection a gateway's log ends otherwise than closed: when (seconds into the
    run), how, why, and how far it got."""
    out = []
    for role in ("gwa", "gwb"):
        log = tb.log_path(role)
        for line in log.read_text().splitlines() if log.exists() else []:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("event") == "close" and ev.get("how") != "closed":
                out.append({"gateway": role, "at_s": round(ev["time"] - started, 1)} | ev)
    return out


def flatness(samples: list[dict], key: str) -> float:
    """Largest over smallest of `key` after the warm-up (the first fifth)."""
    after = [s[key] for s in samples[len(samples) // 5 :]] or [1]
    return round(max(after) / max(min(after), 1), 3)


def run(minutes: float, short_rate: float, n_long: int, workdir: Path) -> dict:
    from spacetp.live.gateway_testbed import GWA_ADDR, SRV_ADDR, Testbed

    secs = minutes * 60
    outages = ", ".join(f'["{t} s", "{t + 20} s"]' for t in range(240, int(secs), 300))
    started = time.time()
    tb = Testbed(LINK.format(outages=outages), gateway=GATEWAY, workdir=workdir, log=True)
    with tb:
        srv = tb.exec("srv", [sys.executable, "-c", SERVER.format(host=SRV_ADDR)],
                      stdout=subprocess.PIPE, text=True)  # fmt: skip
        srv.stdout.readline()
        code = CLIENT.format(host=GWA_ADDR, seconds=secs, short_rate=short_rate, n_long=n_long)
        cli = tb.exec("cli", [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        pids = {"gateway_a": tb.procs[1].pid, "gateway_b": tb.procs[2].pid}
        t0 = time.monotonic()
        samples = []
        while cli.poll() is None:
            row = {"minute": round((time.monotonic() - t0) / 60, 1)}
            for name, pid in pids.items():
                s = _sample(pid)
                row |= {f"{name}_rss_kb": s["rss_kb"], f"{name}_fds": s["fds"]}
            samples.append(row)
            print(json.dumps(row), flush=True)
            for _ in range(60):
                if cli.poll() is not None:
                    break
                time.sleep(1)
        client = json.loads(cli.communicate()[0] or "{}")
        reps = tb.reports(settle=1.0)
    keys = ("accepted", "closed", "reset", "reaped", "retransmitted_segments", "timeouts",
            "integrity_resets", "max_flows", "link_down_notices", "rst_replies", "foreign",
            "reset_on_stop", "wakeups", "elapsed_s")  # fmt: skip
    return {
        "minutes": minutes,
        "client": client,
        "gateways": {g: {k: reps.get(g, {}).get(k) for k in keys} for g in pids},
        "not_closed": _not_closed(tb, started),
        "samples": samples,
        "flat": {k: flatness(samples, k) for k in samples[0] if k != "minute"} if samples else {},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--short-rate", type=float, default=5, help="short connections a second")
    ap.add_argument("--long", type=int, default=3, help="long connections at any time")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="keep the gateways' logs and reports here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        where = a.keep or Path(d)
        where.mkdir(parents=True, exist_ok=True)
        out = run(a.minutes, a.short_rate, a.long, where)
    print(json.dumps({k: v for k, v in out.items() if k != "samples"}, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
