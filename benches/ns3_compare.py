"""Run spacetp on the ns-3 anchor scenarios A-D with ns-3's settings matched and write a
side-by-side table (goodput and wall time) to benches/ns3_comparison.md.

    .venv/bin/python benches/ns3_compare.py [--seeds 10] [--out benches/ns3_comparison.md]

ns-3 numbers come from benches/ns3/results*.csv (ns-3.44, one seed each; provenance in
benches/ns3/README.md). Lossy cases
(C, D) are run with several seeds here: mean and standard deviation are shown.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

import spacetp

ROOT = Path(__file__).resolve().parent.parent
NS3 = ROOT / "benches" / "ns3" / "results.csv"


def ns3_rows() -> dict[tuple[str, str, str, str], dict]:
    rows = {}
    for name in ("results.csv", "results_sensitivity.csv"):
        with (NS3.parent / name).open() as f:
            for r in csv.DictReader(f):
                rows[(r["scenario"], r["variant"], r["param"], r["value"])] = r
    return rows


# ns-3 variant -> our profile and the overrides that match ns-3's settings (its README and
# ns3_defaults.txt): Vegas grows every RTT in slow start with ns-3's loss response; Scalable
# adds one segment per min(cwnd, 50) ACKs (alpha 1.02 above a 50-segment window), MD 0.125.
PROFILES = {
    "TcpNewReno": ("newreno", {}),
    "TcpVegas": ("vegas", {"vegas": {"slow_start_every_other_rtt": False, "loss_response": "ns3"}}),
    "TcpScalable": ("scalable", {"scalable": {"alpha": 1.02, "beta": 0.875, "low_window": 50}}),
}


def protocol(sc: dict, variant: str, sack: bool) -> dict:
    name, tcp = PROFILES[variant]
    tcp = {k: dict(v) for k, v in tcp.items()}
    tcp["prr"] = True  # ns-3's RecoveryType is TcpPrrRecovery (RFC 6937), SACK on or off
    if sack:
        tcp.update({"sack": True, "recovery": "sack"})
    spacetp.set_value(sc, "flows[0].protocol", name)
    if tcp:
        merged = {**spacetp.protocols()[name]["settings"], **tcp}
        for k in tcp:
            if isinstance(tcp[k], dict):
                merged[k] = {**spacetp.protocols()[name]["settings"][k], **tcp[k]}
        spacetp.set_value(sc, "flows[0].tcp", {k: merged[k] for k in tcp})
    return sc


def scenario_abc(rev_bps: float, delay_ms: float, ber: float | None) -> dict:
    """The client - router - server topology of A-C (the asymmetry example) as ns-3 built it."""
    sc = spacetp.load(ROOT / "examples" / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].rate_back", f"{rev_bps} b/s")
    spacetp.set_value(sc, "links[1].delay", f"{delay_ms} ms")
    for i in (0, 1):
        spacetp.set_value(sc, f"links[{i}].framing", "2 B")  # PPP header
    if ber is not None:
        spacetp.set_value(sc, "links[1].errors", {"ber": ber})  # server's receiving device only
        spacetp.set_value(sc, "links[1].errors_back", {})
    return sc


def scenario_d(per: float) -> dict:
    sc = spacetp.load(ROOT / "benches" / "scenarios" / "D.toml")
    spacetp.set_value(sc, "links[0].errors", {"per": per})
    return sc


def measure(sc: dict, seeds: list[int]) -> tuple[list[float], float]:
    goodputs, wall = [], 0.0
    for s in seeds:
        t0 = time.perf_counter()
        res = spacetp.run(sc, seed=s)
        wall += time.perf_counter() - t0
        goodputs.append(res.flows[0]["goodput_bps"])
    return goodputs, wall / len(seeds)


def fmt(g: list[float]) -> str:
    m = statistics.fmean(g)
    if len(g) == 1:
        return f"{m / 1e3:,.1f}"
    return f"{m / 1e3:,.1f} ± {statistics.stdev(g) / 1e3:,.1f}"


def cases(seeds: list[int]):
    """(ns-3 scenario, variant, param, value, label, scenario builder, seeds)."""
    revs = ("1500000", "15000", "5000", "3000", "2000", "1500")
    for scen, sack in (("A", False), ("A-sack", True)):
        for variant in ("TcpNewReno", "TcpVegas"):
            for rev in revs:
                yield (
                    scen,
                    variant,
                    "rev_rate_bps",
                    rev,
                    f"rev {int(rev) / 1e3:g} kb/s",
                    lambda rev=rev: scenario_abc(float(rev), 50, None),
                    [1],
                    sack,
                )
    for scen, sack in (("B", False), ("B-sack", True)):
        for rev in ("1500000", "3000"):
            for d in ("50", "100", "150", "200", "250", "300"):
                yield (
                    scen,
                    "TcpNewReno",
                    f"delay_ms@rev_bps={rev}",
                    d,
                    f"rev {int(rev) / 1e3:g} kb/s, {d} ms",
                    lambda rev=rev, d=d: scenario_abc(float(rev), float(d), None),
                    [1],
                    sack,
                )
    for scen, sack in (("C", False), ("C-sack", True)):
        for d in ("50", "100"):
            yield (
                scen,
                "TcpNewReno",
                "delay_ms@ber=1e-5",
                d,
                f"BER 1e-5, {d} ms",
                lambda d=d: scenario_abc(1.5e6, float(d), 1e-5),
                seeds,
                sack,
            )
    for scen, sack in (("D", False), ("D-sack", True)):
        for variant in ("TcpNewReno", "TcpScalable"):
            for per in ("1e-5", "1e-4", "1e-3"):
                yield (
                    scen,
                    variant,
                    "pkt_err_rate",
                    per,
                    f"PER {per}",
                    lambda per=per: scenario_d(float(per)),
                    seeds,
                    sack,
                )


NOTES = """## Differences beyond 25%, and their mechanisms

- **ns-3 recovery with SACK off.** ns-3's B runs at 150 ms (516 kb/s) and 300 ms (23 kb/s,
  1706 s for 5 MB) and its Scalable runs at PER 1e-4 (9.3 Mb/s) and 1e-3 collapse, while the same
  ns-3 runs with SACK on give 1301 kb/s, 1194 kb/s and 99.4 Mb/s, which spacetp matches within
  10% (B-sack to the retransmission). spacetp's SACK-off runs stay close to ns-3's SACK-on ones.
- **Vegas on the symmetric link (A, 1.5 Mb/s reverse).** Both leave slow start at about 22
  segments (diff > gamma with the SYN's 100.5 ms base RTT against ~105.7 ms data RTTs). ns-3
  then holds cwnd at 22 segments (its max_cwnd), spacetp keeps adding a segment per RTT while
  diff < alpha = 2 (Brakmo's rule) and settles at 41 segments, the window where diff reaches
  alpha: 1317 kb/s against 640 kb/s.
- **Vegas at 1.5 kb/s reverse (+25%)**: 2365 s in ns-3 against 1897 s here, at the edge of the
  tolerance; both are ACK-channel limited.
- **Scenario D NewReno (-23% / +7% / -27%)**: 3 to 22 loss events in 100 s make single runs
  vary widely (spacetp's standard deviation over 10 seeds is 19% at PER 1e-5); ns-3's figure
  is one run.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "ns3_comparison.md")
    args = ap.parse_args()
    ns3 = ns3_rows()
    seeds = list(range(1, args.seeds + 1))
    lines = [
        "# spacetp vs ns-3.44 on the anchor scenarios",
        "",
        "Generated by `.venv/bin/python benches/ns3_compare.py`. ns-3 numbers: "
        "`benches/ns3/results*.csv` (ns-3.44, one run each). Settings matched as "
        "that README lists them (initial window 10, delayed ACK 2 / 200 ms, min RTO 1 s, "
        "300 kB buffers or D's 2 MB / 4 MB, 2-byte PPP framing, ns-3's queues); all ns-3 "
        "runs use PRR recovery (RFC 6937) and so do ours here (`prr = true`), over RFC 6582 "
        "(SACK off) or RFC 6675 (SACK on). "
        "Goodput in kb/s: spacetp mean ± sd over the seeds shown. Wall time per run in seconds "
        "on this kind of machine (2 cores).",
        "",
        "| scenario | variant | case | ns-3 goodput | spacetp goodput | diff | seeds | ns-3 wall | "
        "spacetp wall | speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scen, variant, param, value, label, build, sd, sack in cases(seeds):
        row = ns3[(scen, variant, param, value)]
        sc = protocol(build(), variant, sack)
        g, wall = measure(sc, sd)
        theirs = float(row["goodput_bps"])
        diff = (statistics.fmean(g) - theirs) / theirs
        w3 = float(row["wall_seconds"])
        lines.append(
            f"| {scen} | {variant} | {label} | {theirs / 1e3:,.1f} | {fmt(g)} | {diff:+.0%} | "
            f"{len(sd)} | {w3:.3f} | {wall:.4f} | {w3 / wall:,.0f}x |"
        )
        print(lines[-1], flush=True)
    lines += ["", NOTES]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
