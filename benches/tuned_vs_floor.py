"""Tuned BBR against the physical floor, on links nobody here chose (issue #31, item 4).

    .venv/bin/python benches/tuned_vs_floor.py [--trials 30] [--reps 2] [--out results/floor]

The QUIC interop runner's satellite measurements (quic-interop-runner, testcases.py:
MeasurementSatellite "sat": 10 MiB, 600 ms RTT, 20 Mb/s forward, 2 Mb/s return, queues of
25 packets; MeasurementSatelliteLoss "satloss": the same with 1% loss both ways) and a
high-rate GEO with an 80:1 return link (80 Mb/s / 1 Mb/s, 600 ms RTT, 100 MB, a queue of one
BDP). For quic-bbr and linux-bbr: `spacetp tune` (its study in OUT/CASE-PROTOCOL), and the
floor, the transfer at the bottleneck rate (less the loss) plus the handshake's round trip
and one round trip for the last bytes. Writes OUT/tuned_vs_floor.md: as configured, fitted
and tuned completion times with their intervals, the ratio tuned / floor and the best
settings. The target: within 15% of the floor.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spacetp.scenario import loads
from spacetp.tune import tune

MIB = 1 << 20


def case(rate: float, back: float, rtt_s: float, nbytes: int, queue: str, loss: float) -> str:
    errors = f"errors = {{ per = {loss} }}\n" if loss else ""
    return f"""
seed = 1
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "{rate / 1e6:g} Mb/s"
rate_back = "{back / 1e6:g} Mb/s"
delay = "{rtt_s * 500:g} ms"
queue = {queue}
{errors}
[[flows]]
from = "a"
to = "b"
protocol = "quic-bbr"
bytes = {nbytes}
"""


# name: (rate, return rate, RTT, bytes, queue, loss per packet each way)
CASES = {
    "sat": (20e6, 2e6, 0.6, 10 * MIB, "{ packets = 25 }", 0.0),
    "satloss": (20e6, 2e6, 0.6, 10 * MIB, "{ packets = 25 }", 0.01),
    "geo-80to1": (80e6, 1e6, 0.6, 100_000_000, "{ bdp = 1.0 }", 0.0),
}
PROTOCOLS = ("quic-bbr", "linux-bbr")
TARGET = 1.15


def floor_s(rate: float, rtt: float, nbytes: int, loss: float) -> float:
    """The bytes at the bottleneck rate less the loss, a round trip of handshake and one for
    the last bytes to arrive and be acknowledged."""
    return nbytes * 8 / (rate * (1 - loss)) + 2 * rtt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("results/floor"))
    args = ap.parse_args()
    rows = []
    for name, (rate, back, rtt, nbytes, queue, loss) in CASES.items():
        fl = floor_s(rate, rtt, nbytes, loss)
        sc = loads(case(rate, back, rtt, nbytes, queue, loss))
        for p in PROTOCOLS:
            t = tune(sc, p, trials=args.trials, reps=args.reps, out=args.out / f"{name}-{p}")
            r = t.results
            tuned = r["tuned"]["mean_s"]
            rows.append((name, p, fl, r["as configured"], r["fitted"], r["tuned"], tuned / fl,
                         t.best))  # fmt: skip
            print(f"{name:10} {p:10} floor {fl:6.2f} s  tuned {tuned:6.2f} s  "
                  f"x{tuned / fl:.2f}", flush=True)  # fmt: skip

    def cell(s: dict) -> str:
        return f"{s['mean_s']:.2f} s ({s['ci95_low_s']:.2f}–{s['ci95_high_s']:.2f})"

    lines = [
        "# Tuned BBR against the physical floor",
        "",
        f"`.venv/bin/python benches/tuned_vs_floor.py --trials {args.trials} --reps "
        f"{args.reps}`: `spacetp tune` of each protocol, {args.reps} seeds per trial; the "
        "floor is the transfer at the bottleneck rate (less the loss) plus two round trips "
        f"(handshake, last bytes). Target: tuned within {TARGET - 1:.0%} of the floor.",
        "",
        "| case | protocol | floor | as configured | fitted | tuned | tuned / floor | "
        "best settings |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, p, fl, a, f, t, ratio, best in rows:
        ok = "" if ratio <= TARGET else " (over)"
        settings = ", ".join(f"{k} = {v}" for k, v in best.items()) or "the fitted ones"
        lines.append(f"| {name} | {p} | {fl:.2f} s | {cell(a)} | {cell(f)} | {cell(t)} | "
                     f"{ratio:.2f}{ok} | {settings} |")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tuned_vs_floor.md").write_text("\n".join(lines) + "\n")
    print(f"report: {args.out / 'tuned_vs_floor.md'}")


if __name__ == "__main__":
    main()
