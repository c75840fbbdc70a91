"""Goodput over a GEO-like link: the `spacetp gateway` pair against kernel TCP end to end
(reno and cubic), and what the simulator predicts for the gateways' protocol (docs/live.md).

The link: 1.5 Mb/s forward, 15 kb/s return, 275 ms one way, BER 1e-5 both ways. Each case
runs in its own namespaces with its own emulator, all at once (the link is slow, the machine
is not the limit). A transfer that has not finished by --cap seconds is cut there and its
goodput is what arrived by then. Run as root from the repository:

    sudo .venv/bin/python benches/gateway_geo.py [--bytes 1000000] [--cap 150]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LINK = """
[[links]]
between = ["ground", "craft"]
rate = "1.5 Mb/s"
rate_back = "15 kb/s"
delay = "275 ms"
errors = { ber = 1e-5 }
"""

RECV = r"""
import json, socket, sys, time
host, port, cap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
srv = socket.create_server((host, port))
print(json.dumps({"ready": True}), flush=True)
c, _ = srv.accept()
t0 = time.time(); n = 0
c.settimeout(0.5)
while time.time() - t0 < cap:
    try:
        b = c.recv(1 << 16)
    except TimeoutError:
        continue
    if not b:
        break
    n += len(b)
print(json.dumps({"bytes": n, "t0": t0, "t1": time.time()}), flush=True)
"""

SEND = r"""
import os, socket, sys
host, port, nbytes, cc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = socket.socket()
if cc != "-":
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
c.connect((host, port))
c.sendall(os.urandom(nbytes))
c.shutdown(socket.SHUT_WR)
c.recv(1)
"""


def kernel_case(cc: str, nbytes: int, cap: float, tmp: Path, out: dict) -> None:
    """Kernel TCP end to end over the emulated link (spacetp emulate's two namespaces)."""
    from spacetp.live.emulate import ADDR_B, Netns, load_link

    f = tmp / f"link-{cc}.toml"
    f.write_text(LINK)
    sc_json = load_link(f)[0]
    with Netns(tag=f"{os.getpid()}{cc[0]}") as n:
        (tmp / f"link-{cc}.json").write_text(sc_json)
        code = "import sys; from spacetp.live.gateway import _main; _main(sys.argv[1:])"
        emu = subprocess.Popen(
            [sys.executable, "-c", code, "--emulate", str(tmp / f"link-{cc}.json"),
             str(n.fd_a), str(n.fd_b), str(tmp / f"emu-{cc}.json")],
            pass_fds=(n.fd_a, n.fd_b),
        )  # fmt: skip
        try:
            rx = subprocess.Popen(
                ["ip", "netns", "exec", n.ns_b, sys.executable, "-c", RECV, ADDR_B, "5001",
                 str(cap)], stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            rx.stdout.readline()
            tx = subprocess.Popen(
                ["ip", "netns", "exec", n.ns_a, sys.executable, "-c", SEND, ADDR_B, "5001",
                 str(nbytes), cc]
            )  # fmt: skip
            r = json.loads(rx.communicate(timeout=cap + 30)[0])
            tx.kill()
            tx.wait()
        finally:
            emu.send_signal(signal.SIGTERM)
            emu.wait(timeout=10)
    el = r["t1"] - r["t0"]
    out[f"kernel {cc}"] = {
        "bytes": r["bytes"],
        "seconds": el,
        "goodput_bps": r["bytes"] * 8 / el,
        "finished": r["bytes"] == nbytes,
    }


def gateway_case(gw: dict, nbytes: int, cap: float, tmp: Path, out: dict) -> None:
    from spacetp.live.gateway import GWA_ADDR, SRV_ADDR, Testbed, predict

    name = f"gateway {gw['protocol']}"
    with Testbed(LINK, gateway=gw, tag=f"{os.getpid()}g", workdir=tmp) as tb:
        rx = tb.exec(
            "srv", [sys.executable, "-c", RECV, SRV_ADDR, "5000", str(cap)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        rx.stdout.readline()
        tx = tb.exec("cli", [sys.executable, "-c", SEND, GWA_ADDR, "5000", str(nbytes), "-"])
        r = json.loads(rx.communicate(timeout=cap + 30)[0])
        tx.wait(timeout=30)
        reps = tb.reports()
    el = r["t1"] - r["t0"]
    sim = predict(LINK, gw, nbytes)
    out[name] = {
        "bytes": r["bytes"],
        "seconds": el,
        "goodput_bps": r["bytes"] * 8 / el,
        "finished": r["bytes"] == nbytes,
        "simulator_goodput_bps": sim["goodput_bps"],
        "simulator_seconds": sim["completion_s"],
        "retransmitted_segments": reps.get("gateway_a", {}).get("retransmitted_segments"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=1_000_000)
    ap.add_argument("--cap", type=float, default=150.0)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    out: dict = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        jobs = [
            threading.Thread(target=kernel_case, args=(cc, a.bytes, a.cap, tmp, out))
            for cc in ("reno", "cubic")
        ]
        jobs.append(
            threading.Thread(
                target=gateway_case, args=({"protocol": "scps-tp"}, a.bytes, a.cap, tmp, out)
            )
        )
        for j in jobs:
            j.start()
            time.sleep(1)
        for j in jobs:
            j.join()
    for k, v in out.items():
        line = f"{k:18s} {v['goodput_bps'] / 1e3:8.1f} kb/s  {v['seconds']:7.1f} s"
        line += "" if v["finished"] else f"  (cut: {v['bytes']} B arrived)"
        if "simulator_goodput_bps" in v:
            line += f"  simulator {v['simulator_goodput_bps'] / 1e3:.1f} kb/s"
        print(line)
    if a.json:
        a.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
