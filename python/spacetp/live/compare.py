"""Goodput over one emulated link: kernel TCP end to end (a congestion control of Linux)
against the `spacetp gateway` pair, and what the simulator predicts for the gateways'
protocol. Used by `benches/gateway_geo.py` and `tests/test_gateway.py`.

Each case runs in namespaces of its own with its own emulator, so the cases can run at once.
A transfer that has not finished by `cap` seconds is cut there; its goodput is what arrived.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from spacetp.live.emulate import lateness

GEO = """
[[links]]
between = ["ground", "craft"]
rate = "1.5 Mb/s"
rate_back = "15 kb/s"
delay = "275 ms"
errors = { ber = 1e-5 }
"""

# Kernel TCP's two ends (spacetp.live.kernel_tcp), each run inside a namespace.
KERNEL_TCP = [sys.executable, "-m", "spacetp.live.kernel_tcp"]


def _recv(host: str, port: str, cap: float) -> list[str]:
    return [*KERNEL_TCP, "recv", host, port, str(cap)]


def _send(host: str, port: str, nbytes: int, cc: str) -> list[str]:
    """`cc` "-": the kernel's default congestion control."""
    return [*KERNEL_TCP, "send", host, port, str(nbytes), cc, "1"]


def _received(r: dict, nbytes: int) -> dict:
    """What the receiver saw (`bytes`, `seconds` from accept to the last byte) as the
    result of a case."""
    el = r["seconds"]
    return {
        "bytes": r["bytes"],
        "seconds": el,
        "goodput_bps": r["bytes"] * 8 / el,
        "finished": r["bytes"] == nbytes,
    }


def kernel_case(link: str, cc: str, nbytes: int, cap: float, tmp: Path, out: dict) -> None:
    """Kernel TCP end to end over the emulated link (spacetp emulate's two namespaces)."""
    from spacetp.live.emulate import ADDR_B, Netns, load_link
    from spacetp.live.gateway_testbed import emulator_child

    f = tmp / f"link-{cc}.toml"
    f.write_text(link)
    link_json = tmp / f"link-{cc}.json"
    link_json.write_text(load_link(f)[0])
    emu_report = tmp / f"emu-{cc}.json"
    with (
        Netns(tag=f"{os.getpid()}{cc[0]}") as n,
        emulator_child(link_json, n.fd_a, n.fd_b, emu_report),
    ):
        rx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_b, *_recv(ADDR_B, "5001", cap)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        rx.stdout.readline()
        tx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_a, *_send(ADDR_B, "5001", nbytes, cc)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        r = json.loads(rx.communicate(timeout=cap + 30)[0])
        tx.kill()
        tx.wait()
    emu_stats = json.loads(emu_report.read_text()) if emu_report.exists() else {}
    out[f"kernel {cc}"] = {**_received(r, nbytes), "emulator": lateness(emu_stats)}


def gateway_case(
    link: str, gw: dict, nbytes: int, cap: float, tmp: Path, out: dict, tag: str = "g"
) -> None:
    from spacetp.live.gateway import predict
    from spacetp.live.gateway_testbed import GWA_ADDR, SRV_ADDR, Testbed

    name = f"gateway {gw['protocol']}"
    with Testbed(link, gateway=gw, tag=f"{os.getpid()}{tag}", workdir=tmp) as tb:
        rx = tb.exec(
            "srv", _recv(SRV_ADDR, "5000", cap),
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        rx.stdout.readline()
        tx = tb.exec("cli", _send(GWA_ADDR, "5000", nbytes, "-"), stdout=subprocess.DEVNULL)
        r = json.loads(rx.communicate(timeout=cap + 30)[0])
        tx.wait(timeout=30)
        reps = tb.reports()
    sim = predict(link, gw, nbytes)
    a = reps.get("gateway_a", {})
    out[name] = {
        **_received(r, nbytes),
        "simulator_goodput_bps": sim["goodput_bps"],
        "simulator_seconds": sim["completion_s"],
        # SCPS-TP's retransmitted segments, or the packets QUIC declared lost.
        "retransmitted_segments": a.get("retransmitted_segments",
                                        a.get("quic", {}).get("packets_lost")),
        "emulator": lateness(reps.get("emulator", {})),
    }  # fmt: skip


def compare(
    link: str,
    nbytes: int,
    cap: float,
    tmp: Path,
    gateway: dict | list[dict] | None = None,
    kernel: tuple[str, ...] = ("reno", "cubic"),
) -> dict:
    """Run every case at once (one thread each, started a second apart); results by name
    (`kernel reno`, `kernel cubic`, `gateway scps-tp`, `gateway quic-bbr`, ...). `gateway`:
    one gateway configuration or several (default SCPS-TP)."""
    gws = gateway if isinstance(gateway, list) else [gateway or {"protocol": "scps-tp"}]
    out: dict = {}
    jobs = [
        threading.Thread(target=kernel_case, args=(link, cc, nbytes, cap, tmp, out))
        for cc in kernel
    ]
    jobs += [
        threading.Thread(target=gateway_case, args=(link, gw, nbytes, cap, tmp, out, f"g{i}"))
        for i, gw in enumerate(gws)
    ]
    for j in jobs:
        j.start()
        time.sleep(1)
    for j in jobs:
        j.join()
    return out
