"""`spacetp bench --quic`: what decides a space link today, side by side. For each case, the
time from the client's first packet to the server's last byte of a file, for QUIC (quinn's
NewReno, CUBIC and BBR), TCP as Linux runs it (reno, cubic, bbr), and SCPS-TP end to end
(rate-based at the link's rate, as operators run it on a dedicated link), in the
simulator; with `live` (root), the kernel's TCP and TCP through the `spacetp gateway` pair
(SCPS-TP across the emulated link) as well.

The cases are the QUIC interop runner's satellite ones (SAT: 10 MB, 600 ms RTT, 20 Mb/s
forward, 2 Mb/s return; SATLOSS: the same with 1% loss both ways), a LEO-like link and a
GEO link whose return is ACK-starved. Writes DIR/quic_comparison.csv, .md and one figure
per case (cwnd over time of QUIC's and TCP's CUBIC and BBR).
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

# The cases are vs_linux's: the same link tables, and SCPS-TP set up for them the same way.
from spacetp.live.vs_linux import Case, _link, _mean_sd

QUIC = ("quic-newreno", "quic-cubic", "quic-bbr")
TCP = ("linux-reno", "linux-cubic", "linux-bbr")
SCPS = "scps-tp end to end"
PLOTTED = ("quic-cubic", "quic-bbr", "linux-cubic", "linux-bbr")
# The QUIC gateway pairs of the live rows.
GATEWAY_QUIC = ("quic-cubic", "quic-bbr")


def _case(name: str, what: str, rate: str, back: str, delay: str, errors: str) -> Case:
    """A case of 10 MB (3 MB with --quick) on one link between "a" and "b"."""
    extra = f"errors = {{ {errors} }}\n" if errors else ""
    one_way = float(delay.split()[0]) / 1000
    return Case(name, what, _link(rate, back, delay, extra), 10_000_000, 3_000_000, 600, one_way)


CASES = (
    _case("sat", "interop runner SAT: 20 Mb/s / 2 Mb/s, 600 ms RTT, no loss",
          "20 Mb/s", "2 Mb/s", "300 ms", ""),
    _case("satloss", "interop runner SATLOSS: the same with 1% loss both ways",
          "20 Mb/s", "2 Mb/s", "300 ms", "per = 0.01"),
    _case("leo", "LEO-like: 50 Mb/s both ways, 40 ms RTT, PER 1e-3",
          "50 Mb/s", "50 Mb/s", "20 ms", "per = 1e-3"),
    _case("geo-ack-starved", "GEO, 10 Mb/s forward, 64 kb/s return, 600 ms RTT",
          "10 Mb/s", "64 kb/s", "300 ms", ""),
)  # fmt: skip


def sim_run(case: Case, protocol: str, seed: int, nbytes: int) -> dict:
    """One simulated transfer: completion (first packet to last byte) and cwnd samples."""
    import tomllib

    import spacetp

    sc = tomllib.loads(
        f'seed = {seed}\n[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n{case.link}'
        f'[[flows]]\nfrom = "a"\nto = "b"\nbytes = {nbytes}\n'
    )
    f0 = sc["flows"][0]
    if protocol == SCPS:
        f0["protocol"], f0["tcp"] = "scps-tp", case.scps_settings()
    else:
        f0["protocol"] = protocol
    r = spacetp.run(sc, trace_interval="100 ms")
    f = r.flows[0]
    s = r.samples_frame()
    return {
        "complete": f["complete"],
        "seconds": f["completion_s"] if f["complete"] else float("nan"),
        "lost": (f.get("quic") or {}).get("packets_lost", f["retransmitted_segments"]),
        "samples": [] if s is None else list(zip(s["time_s"], s["cwnd"], strict=True)),
    }


def _row(
    case: Case, protocol: str, where: str, reps: int, nbytes: int, secs: list[float], lost: float
) -> dict:
    """One line of the table: completion times of the runs that completed, mean (sd)."""
    mean, sd = _mean_sd(secs)
    return {"case": case.name, "protocol": protocol, "where": where, "reps": reps,
            "bytes": nbytes, "completed": len(secs), "mean_s": mean,
            "sd_s": sd if len(secs) > 1 else 0.0, "lost_packets": lost}  # fmt: skip


def run_comparison(
    out: Path, reps: int = 3, quick: bool = False, live: bool = False, say=print
) -> list[dict]:
    """Every case and protocol, `reps` seeds each; writes the outputs; returns the rows."""
    rows, traces = [], {}
    for case in CASES:
        nbytes = case.quick_bytes if quick else case.nbytes
        for proto in (*QUIC, *TCP, SCPS):
            runs = [sim_run(case, proto, seed, nbytes) for seed in range(1, reps + 1)]
            secs = [r["seconds"] for r in runs if r["seconds"] == r["seconds"]]
            lost = statistics.fmean(r["lost"] for r in runs)
            rows.append(_row(case, proto, "simulated", reps, nbytes, secs, lost))
            traces[(case.name, proto)] = runs[0]["samples"]
            say(f"{case.name:16} {proto:20} {rows[-1]['mean_s']:7.2f} s")
        if live:
            rows += _live_rows(case, nbytes, reps, say)
    _write(out, rows, traces)
    return rows


def _live_rows(case: Case, nbytes: int, reps: int, say) -> list[dict]:
    """Kernel TCP end to end and through the gateway pair, over `spacetp emulate`."""
    import tempfile

    from spacetp.live import vs_linux

    rows = []
    with tempfile.TemporaryDirectory(prefix="spacetp-quic-cmp-") as tmp:
        jobs = [(f"kernel {cc}", lambda s, cc=cc: vs_linux.kernel_run(case, cc, s, nbytes,
                 Path(tmp))) for cc in ("reno", "cubic", "bbr")]  # fmt: skip
        jobs.append(("gateway scps-tp",
                     lambda s: vs_linux.gateway_run(case, s, nbytes, Path(tmp))))  # fmt: skip
        # The QUIC pair with quinn's defaults, as the simulated QUIC rows: what QUIC
        # across the link with kernel TCP at both ends gives.
        for proto in GATEWAY_QUIC:
            jobs.append((f"gateway {proto}",
                         lambda s, p=proto: vs_linux.gateway_run(case, s, nbytes, Path(tmp),
                                                                 {"protocol": p})))  # fmt: skip
        for name, job in jobs:
            runs = [job(s) for s in range(1, reps + 1)]
            secs = [r["total_s"] for r in runs if r["complete"]]
            rows.append(_row(case, name, "live", reps, nbytes, secs, float("nan")))
            # The emulator's timing in these runs (a late emulator measured the machine).
            rows[-1].update(vs_linux.lateness_of(runs))
            say(f"{case.name:16} {name:20} {rows[-1]['mean_s']:7.2f} s (live, emulator p99 "
                f"{rows[-1]['emulator_p99_us'] / 1e3:.2f} ms)")  # fmt: skip
    return rows


def _write(out: Path, rows: list[dict], traces: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "quic_comparison.csv", "w", newline="") as f:
        # Live rows carry the emulator's timing too.
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        w.writeheader()
        w.writerows(rows)
    protos = list(dict.fromkeys(r["protocol"] for r in rows))
    cases = [c.name for c in CASES if any(r["case"] == c.name for r in rows)]
    lines = [
        "# QUIC, TCP and SCPS-TP on space links",
        "",
        "Mean time from the client's first packet to the server's last byte, seconds (sd); "
        "the fastest of each case in bold.",
        "",
        "| protocol | " + " | ".join(cases) + " |",
    ]
    lines.append("|---" * (len(cases) + 1) + "|")
    best = {c: min((r["mean_s"] for r in rows if r["case"] == c and r["mean_s"] == r["mean_s"]),
                   default=None) for c in cases}  # fmt: skip
    for p in protos:
        cells = []
        for c in cases:
            r = next((r for r in rows if r["case"] == c and r["protocol"] == p), None)
            if r is None or r["mean_s"] != r["mean_s"]:
                cells.append("-")
                continue
            t = f"{r['mean_s']:.1f} ({r['sd_s']:.1f})"
            cells.append(f"**{t}**" if r["mean_s"] == best[c] else t)
        where = next(r["where"] for r in rows if r["protocol"] == p)
        lines.append(f"| {p}{' (live)' if where == 'live' else ''} | " + " | ".join(cells) + " |")
    lines += ["", "Cases:", ""] + [f"- `{c.name}`: {c.what}" for c in CASES if c.name in cases]
    (out / "quic_comparison.md").write_text("\n".join(lines) + "\n")
    _figures(out, traces, cases)


def _figures(out: Path, traces: dict, cases: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for c in cases:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        for p in PLOTTED:
            s = traces.get((c, p)) or []
            if s:
                ax.plot([t for t, _ in s], [w / 1e3 for _, w in s], label=p, lw=1.2,
                        ls="-" if p.startswith("quic") else "--")  # fmt: skip
        ax.set_title(f"{c}: congestion window")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (kB)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"cwnd-{c}.png", dpi=110)
        plt.close(fig)
