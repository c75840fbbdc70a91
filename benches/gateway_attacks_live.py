"""Replay each class of forged segment against a running pair of real `spacetp gateway`
processes (the routed testbed: four namespaces, kernel TCP at both ends, the emulated space
link), one transfer per class, and print a table: class, packets sent, gateway reaction,
transfer affected (SHA-256 at both ends).

The forgeries are made by `spacetp.live.inject` inside a gateway's namespace from the real
segments it sees on the link, and cross the emulated link like any packet (so the link's
loss applies to them too). Needs root, nftables and TUN. Run it against any installed
spacetp (the one on PYTHONPATH) to compare versions:

    sudo .venv/bin/python benches/gateway_attacks_live.py [--bytes 4000000] [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBE = str(HERE.parent / "tests" / "gateway_probe.py")
LINK = """
[[links]]
between = ["a", "b"]
rate = "10 Mb/s"
delay = "50 ms"
errors = { per = 0.02 }
"""
# (class, side whose namespace injects, kinds, which segments to copy)
CLASSES = [
    ("SYN, mid-stream seq, to gateway B", "gwa", "syn", "data"),
    ("SYN-ACK, mid-stream seq, to gateway B", "gwa", "synack", "data"),
    ("RST 5 MB beyond the window, to gateway B", "gwa", "rst_far", "data"),
    ("RST inside the window, to gateway B", "gwa", "rst_in", "data"),
    ("data acknowledging 10 MB never sent, to gateway B", "gwa", "ack_unsent", "data"),
    ("data 50 MB beyond the window, to gateway B", "gwa", "data_far", "data"),
    ("SYN, mid-stream seq, to gateway A", "gwb", "syn", "any"),
    ("RST 5 MB beyond the window, to gateway A", "gwb", "rst_far", "any"),
    ("RST inside the window, to gateway A", "gwb", "rst_in", "any"),
]
COUNTERS = ("syn_rejected", "rst_rejected", "ack_rejected", "out_of_window", "challenge_acks",
            "reset")  # fmt: skip


def one(cls, nbytes: int, rounds: int, work: Path) -> dict:
    from spacetp.live.gateway_testbed import CLI_ADDR, SRV_ADDR, Testbed

    name, side, kinds, which = cls
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "10 Mb/s"}}}
    target = SRV_ADDR if side == "gwa" else CLI_ADDR
    with Testbed(LINK, gateway=proto, tag=f"{os.getpid()}", workdir=work, transparent=True) as tb:
        sink = tb.exec("srv", [sys.executable, PROBE, "sink", SRV_ADDR, "5000", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        json.loads(sink.stdout.readline())
        host, port = tb.target
        pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        send_cmd = [sys.executable, PROBE, "send", host, str(port), str(nbytes), "1", "1"]
        send = tb.exec("cli", send_cmd, **pipes)
        inj_cmd = [sys.executable, "-m", "spacetp.live.inject", "space0", target, str(rounds)]
        inj = tb.exec(side, [*inj_cmd, kinds, which], stdout=subprocess.PIPE, text=True)
        try:
            out, err = send.communicate(timeout=150)
            got, serr = sink.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out, err, got, serr = "{}", "timeout", "{}", "timeout"
        injected = json.loads(inj.communicate(timeout=70)[0] or "{}").get("sent", {})
        reps = tb.reports(settle=2.0)
    sent = json.loads(out or "{}").get("flows", [])
    recv = json.loads(got or "{}").get("flows", [])
    if sent and recv and recv[0]["sha256"] == sent[0]["sha256"]:
        outcome = "exact (SHA-256 equal)"
    elif recv:
        outcome = f"CORRUPT: server got {recv[0]['bytes']:,} of {nbytes:,} bytes, hash differs"
    else:
        ends = [w for w, e in (("client", err), ("server", serr)) if "Reset" in e or "Pipe" in e]
        outcome = "reset (" + ", ".join(ends or ["hung"]) + ")"
        if "timeout" in err:
            outcome = "hung (no end within 150 s)"
    reaction = []
    for gw in ("gateway_a", "gateway_b"):
        r = reps.get(gw, {})
        for k in COUNTERS:
            if r.get(k):
                reaction.append(f"{gw[-1].upper()}: {k} {r[k]}")
    return {"class": name, "sent": sum(injected.values()), "transfer": outcome,
            "reaction": ", ".join(reaction)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", type=int, default=4_000_000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--json", help="also write the rows as JSON here")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("error: needs root (network namespaces, TUN, nftables)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for cls in CLASSES:
            rows.append(one(cls, a.bytes, a.rounds, Path(d)))
            r = rows[-1]
            print(f"| {r['class']} | {r['sent']} | {r['transfer']} | {r['reaction']} |",
                  flush=True)  # fmt: skip
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if all(r["transfer"].startswith("exact") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
