"""Simulated QUIC's speed: packets (both directions) per second of wall time on a 100 MB GEO
transfer (benches/scenarios/quic-geo-100MB.toml) as users call it (`spacetp.run`, the
Python call's wall) and as the `spacetp-sim` binary runs it, with real packet protection
(`quic.crypto = "real"`: AES-128-GCM) and with sizes only (`"sizes"`, the default without
a pcap or key log: the same packets, nothing encrypted), the modes alternated rep by rep;
where the time goes in each (perf's samples by symbol: ring's AES-GCM and header
protection, quinn-proto, the simulator, the C library's copies and allocations); and the
same transfer over TCP (linux-cubic) as the simulator's own cost per packet.

    python benches/quic_speed.py [--reps 5] [--out benches/quic_speed.md]

Build the Python module in release first (`make build PROFILE=release`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from run_walls import best_walls

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "benches/scenarios/quic-geo-100MB.toml"
BIN = ROOT / "target/release/spacetp-sim"


def with_crypto(tmp: Path, mode: str) -> Path:
    p = tmp / f"quic-{mode}.toml"
    p.write_text(
        SCENARIO.read_text().replace(
            'protocol = "quic"', f'protocol = "quic"\nquic = {{ crypto = "{mode}" }}'
        )
    )
    return p


def python_walls(scenarios: dict[str, Path], reps: int) -> dict[str, tuple[float, int]]:
    """(best wall of `spacetp.run`, packets) per scenario, alternated rep by rep."""
    import spacetp

    walls = best_walls({k: spacetp.load(p) for k, p in scenarios.items()}, reps)
    for k, (_, _, flows) in walls.items():
        assert all(f["complete"] for f in flows), k
    return {k: (w, n) for k, (w, n, _) in walls.items()}


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
    return pkts / min(walls), pkts, walls


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
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        tcp = t / "tcp.toml"
        tcp.write_text(
            SCENARIO.read_text().replace('protocol = "quic"', 'protocol = "linux-cubic"')
        )
        cases = {"real": with_crypto(t, "real"), "sizes": with_crypto(t, "sizes"), "tcp": tcp}
        py = python_walls(cases, a.reps)
        binary = {k: rate(p, a.reps) for k, p in cases.items()}
        profiles = {k: shares(cases[k]) for k in ("real", "sizes")}
    title = {
        "real": 'QUIC, `crypto = "real"` (TLS 1.3, AES-128-GCM)',
        "sizes": 'QUIC, `crypto = "sizes"` (the default: same packets, nothing encrypted)',
        "tcp": "TCP linux-cubic (no payload bytes, no crypto)",
    }
    lines = [
        "# Simulated QUIC's speed",
        "",
        f"`python benches/quic_speed.py --reps {a.reps}`: 100 MB over GEO "
        "(benches/scenarios/quic-geo-100MB.toml), this machine, the cases alternated. "
        "`spacetp.run`: best wall of the Python call (loading excluded, the summary "
        "included); binary: best wall the `spacetp-sim` binary reports.",
        "",
        "| transport | packets | `spacetp.run` wall | packets/s | binary wall | packets/s |",
        "|---|---|---|---|---|---|",
    ]
    for k in cases:
        w, n = py[k]
        br, bn, bw = binary[k]
        lines.append(
            f"| {title[k]} | {n} | {w:.3f} s | {n / w / 1e6:.2f} M | "
            f"{min(bw):.3f} s | {br / 1e6:.2f} M |"
        )
    lines += ["", f"real / sizes, `spacetp.run`: {py['real'][0] / py['sizes'][0]:.2f}x.", ""]
    for k, sh in profiles.items():
        if sh:
            lines += [f"Where QUIC's time goes, `{k}` (perf samples):", ""]
            lines += [f"- {g}: {v:.0f}%" for g, v in sh.items()]
            lines.append("")
    lines.append("Target: 1 M packets per second through `spacetp.run`.")
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
