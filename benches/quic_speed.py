"""Simulated QUIC's speed: packets (both directions) per second of wall time on a 100 MB GEO
transfer (benches/scenarios/quic-geo-100MB.toml), crypto included, and where the time goes
(perf's samples by symbol: ring's AES-GCM and header protection, quinn-proto, the
simulator, the C library's copies and allocations), with the same transfer over TCP
(linux-cubic) beside it as the simulator's own cost per packet.

    python benches/quic_speed.py [--reps 5] [--out benches/quic_speed.md]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "benches/scenarios/quic-geo-100MB.toml"
BIN = ROOT / "target/release/spacetp-sim"


def run_once(scenario: Path) -> tuple[float, int]:
    """(wall seconds, packets sent on all links)."""
    r = subprocess.run([str(BIN), str(scenario)], capture_output=True, text=True, check=True)
    wall = float(re.search(r"wall ([\d.]+) s", r.stderr).group(1))
    d = json.loads(r.stdout)
    assert d["flows"][0]["complete"], d["flows"][0]["state"]
    return wall, sum(link["tx_packets"] for link in d["links"])


def rate(scenario: Path, reps: int) -> tuple[float, int, list[float]]:
    walls, pkts = [], 0
    for _ in range(reps):
        w, pkts = run_once(scenario)
        walls.append(w)
    return pkts / statistics.median(walls), pkts, walls


def shares(scenario: Path) -> dict[str, float] | None:
    """Share of perf samples by component, or None without perf."""
    if shutil.which("perf") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-o", str(data), str(BIN), str(scenario)],
                       capture_output=True, check=True)  # fmt: skip
        rep = subprocess.run(
            ["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,symbol",
             "--stdio", "-q"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    groups = dict.fromkeys(
        ["crypto (ring)", "quinn-proto", "simulator", "libc (copies, malloc)", "other"], 0.0
    )
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[\.\]\s+(.*)", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
        if "ring" in sym or "aes" in sym or "gcm" in sym or "rustls" in sym:
            groups["crypto (ring)"] += pct
        elif "quinn_proto" in sym:
            groups["quinn-proto"] += pct
        elif "spacetp" in sym:
            groups["simulator"] += pct
        elif dso.startswith("libc"):
            groups["libc (copies, malloc)"] += pct
        else:
            groups["other"] += pct
    return groups


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benches/quic_speed.md")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "spacetp-sim"], cwd=ROOT,
                   check=True)  # fmt: skip
    q_rate, q_pkts, q_walls = rate(SCENARIO, a.reps)
    with tempfile.TemporaryDirectory() as tmp:
        tcp = Path(tmp) / "tcp.toml"
        tcp.write_text(
            SCENARIO.read_text().replace('protocol = "quic"', 'protocol = "linux-cubic"')
        )
        t_rate, t_pkts, t_walls = rate(tcp, a.reps)
    sh = shares(SCENARIO)
    lines = [
        "# Simulated QUIC's speed",
        "",
        f"`python benches/quic_speed.py --reps {a.reps}`: 100 MB over GEO "
        "(benches/scenarios/quic-geo-100MB.toml), median of the reps, this machine.",
        "",
        "| transport | packets | wall (median) | packets per second |",
        "|---|---|---|---|",
        f"| QUIC (quinn-proto, TLS 1.3, AES-128-GCM) | {q_pkts} | "
        f"{statistics.median(q_walls):.3f} s | {q_rate / 1e6:.2f} M |",
        f"| TCP linux-cubic (no payload bytes, no crypto) | {t_pkts} | "
        f"{statistics.median(t_walls):.3f} s | {t_rate / 1e6:.2f} M |",
    ]
    if sh:
        lines += ["", "Where QUIC's time goes (perf samples):", ""]
        lines += [f"- {k}: {v:.0f}%" for k, v in sh.items()]
    lines += ["", "Target: 1 M packets per second with crypto."]
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
