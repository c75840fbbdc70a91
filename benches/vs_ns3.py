"""Side-by-side speed of spacetp and ns-3.44 on the anchor scenarios A-D, plus the other
performance targets of issue #7; writes BENCHMARKS.md at the repository root.

    .venv/bin/python benches/vs_ns3.py [--reps 3] [--quick] [--out BENCHMARKS.md]
    .venv/bin/spacetp bench --vs-ns3 [same options]

ns-3 is built here from the PyPI wheel `ns3==3.44.post0` with benches/ns3/build.sh
(venv .venv-ns3, binary target/ns3/anchor) and run with the exact arguments of
benches/ns3/commands.txt, alternating with spacetp case by case so that both see the
same machine load. If the wheel cannot be installed, the stored results*.csv wall times are used
instead and the report says so. Every figure is the median of --reps runs; spacetp's wall time is
the core's own (`Result.wall_s`: building the world and simulating), as ns-3's is the time
around Simulator::Run().
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import spacetp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))
import ns3_compare as nc  # noqa: E402  (the matched scenarios and settings)

ANCHORS = ROOT / "benches" / "ns3"  # the ns-3 harness and its stored results
NS3_VENV = ROOT / ".venv-ns3"
NS3_BIN = ROOT / "target" / "ns3" / "anchor"
SIM_BIN = ROOT / "target" / "release" / "spacetp-sim"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- ns-3


def build_ns3() -> Path | None:
    """The anchor binary, built from the pip wheel if needed; None if that is impossible."""
    if NS3_BIN.exists():
        return NS3_BIN
    try:
        if not (NS3_VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(NS3_VENV)], check=True)
        subprocess.run(
            [str(NS3_VENV / "bin" / "pip"), "install", "--quiet", "ns3==3.44.post0"], check=True
        )
        NS3_BIN.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [str(ANCHORS / "build.sh"), str(NS3_VENV), str(NS3_BIN)], check=True, cwd=ANCHORS
        )
    except (subprocess.CalledProcessError, OSError) as e:
        log(f"ns-3 could not be built ({e}); using the stored results*.csv")
        return None
    return NS3_BIN


def ns3_commands() -> dict[tuple[str, str, str, str], list[str]]:
    """(scenario, variant, param, value) -> the anchor's arguments, from commands.txt."""
    out = {}
    for line in (ANCHORS / "commands.txt").read_text().splitlines():
        argv = shlex.split(line)[1:]
        kv = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
        args = [a for a in argv if not a.startswith(("--csv=", "--detailCsv="))]
        out[(kv["scenario"], kv["tcp"], kv["param"], kv["value"])] = args
    return out


def run_ns3(binary: Path, args: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(
            [str(binary), *args, f"--csv={d}/r.csv", f"--detailCsv={d}/rd.csv"],
            capture_output=True,
            text=True,
            check=True,
        )
    line = next(x for x in p.stdout.splitlines() if x.startswith("RESULT"))
    return {k: float(v) for k, v in re.findall(r"(\w+)=([-0-9.e+]+)(?:\s|$)", line)}


# ----------------------------------------------------------------------------- spacetp


def run_ours(sc: dict) -> dict[str, float]:
    res = spacetp.run(sc, seed=1)
    hops = sum(link["delivered_packets"] for link in res.links)
    return {
        "wall_s": res.wall_s,
        "goodput_bps": res.flows[0]["goodput_bps"],
        "events": res.summary["run"]["events"],
        "hops": hops,
    }


def median_of(fn, reps: int) -> tuple[float, dict]:
    runs = [fn() for _ in range(reps)]
    return statistics.median(r["wall_s"] for r in runs), runs[0]


def sim_binary() -> Path:
    if not SIM_BIN.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "spacetp-sim"], check=True, cwd=ROOT)
    return SIM_BIN


def rss_and_wall(toml_text: str) -> tuple[float, float]:
    """Peak RSS (MB, the process's own VmHWM) and wall (s) of spacetp-sim on a scenario."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(toml_text)
    try:
        p = subprocess.run([str(sim_binary()), f.name], capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    wall = float(re.search(r"wall ([0-9.]+) s", p.stderr).group(1))
    rss = float(re.search(r"peak RSS ([0-9]+) kB", p.stderr).group(1)) / 1024
    return rss, wall


# ----------------------------------------------------------------------------- report


def fmt_w(s: float) -> str:
    return f"{s:.4f}" if s < 10 else f"{s:.2f}"


def comparison(
    reps: int, ns3_reps: int, quick: bool, ns3_bin: Path | None, lines: list[str]
) -> dict:
    stored = nc.ns3_rows()
    cmds = ns3_commands()
    wanted = {"A", "B", "C", "D", "D-sack"}
    rows, totals = [], {}
    for scen, variant, param, value, label, build, _seeds, sack in nc.cases([1]):
        if scen not in wanted:
            continue
        if quick and scen in ("A", "B") and value not in ("1500000", "50", "3000"):
            continue
        sc = nc.protocol(build(), variant, sack)
        ours_w, ours = median_of(lambda sc=sc: run_ours(sc), reps)
        key = (scen, variant, param, value)
        if ns3_bin is not None:
            args = cmds[key]
            theirs_w, theirs = median_of(lambda args=args: run_ns3(ns3_bin, args), ns3_reps)
            t_gp, t_ev = theirs["goodput_bps"], theirs["events"]
            t_hops = theirs["hop_deliveries"]
        else:
            r = stored[key]
            theirs_w, t_gp, t_ev, t_hops = (
                float(r["wall_seconds"]),
                float(r["goodput_bps"]),
                float(r["events"]),
                float("nan"),
            )
        diff = (ours["goodput_bps"] - t_gp) / t_gp
        row = dict(
            scen=scen,
            variant=variant,
            label=label,
            ns3_w=theirs_w,
            our_w=ours_w,
            ns3_gp=t_gp,
            our_gp=ours["goodput_bps"],
            diff=diff,
            ns3_ev=t_ev,
            our_ev=ours["events"],
            ns3_hops=t_hops,
            our_hops=ours["hops"],
        )
        rows.append(row)
        group = "A-C" if scen in ("A", "B", "C") else scen
        agg = totals.setdefault(group, {"ns3": 0.0, "ours": 0.0, "ns3_ok": 0.0, "ours_ok": 0.0})
        agg["ns3"] += theirs_w
        agg["ours"] += ours_w
        if abs(diff) <= 0.25:
            agg["ns3_ok"] += theirs_w
            agg["ours_ok"] += ours_w
        log(
            f"{scen:6} {variant:11} {label:28} ns-3 {theirs_w:8.4f} s  spacetp {ours_w:.4f} s "
            f"({theirs_w / ours_w:,.0f}x)  goodput {t_gp / 1e3:,.0f} / "
            f"{ours['goodput_bps'] / 1e3:,.0f} kb/s"
        )
    lines += [
        "| scenario | variant | case | ns-3 wall (s) | spacetp wall (s) | ratio | "
        "ns-3 events/s | spacetp events/s | spacetp link traversals/s | ns-3 goodput (kb/s) | "
        "spacetp goodput (kb/s) | goodput diff |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scen']} | {r['variant']} | {r['label']} | {fmt_w(r['ns3_w'])} | "
            f"{r['our_w']:.4f} | {r['ns3_w'] / r['our_w']:,.0f}x | "
            f"{r['ns3_ev'] / r['ns3_w'] / 1e6:.2f} M | {r['our_ev'] / r['our_w'] / 1e6:.2f} M | "
            f"{r['our_hops'] / r['our_w'] / 1e6:.2f} M | {r['ns3_gp'] / 1e3:,.1f} | "
            f"{r['our_gp'] / 1e3:,.1f} | {r['diff']:+.0%} |"
        )
    lines += ["", "Totals (sum of the median wall times):", ""]
    lines += ["| group | ns-3 (s) | spacetp (s) | ratio | rows with goodput within 25%: ratio |"]
    lines += ["|---|---|---|---|---|"]
    for g, a in totals.items():
        ok = f"{a['ns3_ok'] / a['ours_ok']:,.0f}x" if a["ours_ok"] > 0 else "-"
        lines.append(
            f"| {g} | {fmt_w(a['ns3'])} | {a['ours']:.4f} | {a['ns3'] / a['ours']:,.0f}x | {ok} |"
        )
    return {"rows": rows, "totals": totals}


def d_toml(stop_s: float, protocol: str = "newreno") -> str:
    text = (ROOT / "benches" / "scenarios" / "D.toml").read_text()
    text = text.replace('stop = "100 s"', f'stop = "{stop_s:g} s"')
    return text.replace('protocol = "newreno"', f'protocol = "{protocol}"')


def memory(lines: list[str]) -> None:
    lines += [
        "| run | simulated | peak RSS (MB) | wall (s) |",
        "|---|---|---|---|",
    ]
    for proto in ("newreno", "scalable"):
        for stop in (100, 1000):
            rss, wall = rss_and_wall(d_toml(stop, proto))
            lines.append(f"| D, {proto}, unlimited transfer | {stop} s | {rss:.1f} | {wall:.2f} |")
            log(lines[-1])


def very_high_rtt(reps: int, lines: list[str]) -> None:
    from spacetp.experiments.papers import akan

    lines += ["| protocol | spacetp wall (ms) | events | goodput (B/s) |", "|---|---|---|---|"]
    for proto in akan.PROTOCOLS:
        sc = akan.scenario(2400.0, protocol=proto)
        runs = [spacetp.run(sc, seed=1) for _ in range(reps)]
        w = statistics.median(r.wall_s for r in runs)
        r = runs[0]
        lines.append(
            f"| {proto} | {w * 1e3:.2f} | {r.summary['run']['events']:,} | "
            f"{r.flows[0]['goodput_bps'] / 8:,.1f} |"
        )
        log(lines[-1])


def python_overhead(lines: list[str], n: int = 1000) -> None:
    sc = {
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "10 Mb/s", "delay": "10 ms"}],
        "flows": [{"from": "a", "to": "b", "bytes": "10 kB"}],
    }
    spacetp.run(sc)  # warm up (imports, first call)
    core = 0.0
    t0 = time.perf_counter()
    for _ in range(n):
        core += spacetp.run(sc).wall_s
    total = time.perf_counter() - t0
    per = (total - core) / n
    lines += [
        f"{n} calls of `spacetp.run` on a 10 kB transfer over one link: {total / n * 1e3:.3f} ms "
        f"per call, of which the core's own time {core / n * 1e3:.3f} ms: **Python overhead "
        f"{per * 1e3:.3f} ms per call** (target < 2 ms)."
    ]
    log(lines[-1])


def scaling(reps: int, lines: list[str]) -> None:
    """Wall time against link rate and simulated time (Scalable TCP fills the pipe)."""

    def one(rate_mbps: float, stop: float) -> tuple[float, dict]:
        sc = spacetp.load(ROOT / "benches" / "scenarios" / "D.toml")
        bdp_pkts = int(rate_mbps * 1e6 * 0.12 / 8 / 1040) + 1
        spacetp.set_value(sc, "stop", f"{stop:g} s")
        spacetp.set_value(sc, "links[0].rate", f"{rate_mbps:g} Mb/s")
        spacetp.set_value(sc, "links[0].queue", {"packets": bdp_pkts})
        spacetp.set_value(sc, "flows[0].receive_buffer", f"{2 * bdp_pkts * 1000} B")
        spacetp.set_value(sc, "flows[0].send_buffer", f"{4 * bdp_pkts * 1000} B")
        sc = nc.protocol(sc, "TcpScalable", True)
        return median_of(lambda: run_ours(sc), reps)

    lines += [
        "| link rate | simulated | spacetp wall (s) | link traversals | ns per traversal | "
        "goodput (Mb/s) |",
        "|---|---|---|---|---|---|",
    ]
    for rate, stop in [
        (15, 100),
        (50, 100),
        (150, 100),
        (500, 100),
        (150, 25),
        (150, 50),
        (150, 200),
    ]:
        w, r = one(rate, stop)
        lines.append(
            f"| {rate} Mb/s | {stop} s | {w:.3f} | {r['hops']:,} | {w / r['hops'] * 1e9:.0f} | "
            f"{r['goodput_bps'] / 1e6:.1f} |"
        )
        log(lines[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="spacetp runs per case (median shown)")
    ap.add_argument("--ns3-reps", type=int, default=1, help="ns-3 runs per case (median shown)")
    ap.add_argument("--quick", action="store_true", help="fewer A/B cases (for a smoke test)")
    ap.add_argument("--no-ns3", action="store_true", help="use the stored ns-3 results")
    ap.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = ap.parse_args(argv)
    ns3_bin = None if args.no_ns3 else build_ns3()
    where = (
        f"ns-3 measured live in the same run (`{NS3_BIN.relative_to(ROOT)}`, built from the "
        "PyPI wheel ns3==3.44.post0 with benches/ns3/build.sh)"
        if ns3_bin
        else "ns-3 wall times from the stored benches/ns3/results*.csv (the wheel "
        "could not be installed here)"
    )
    head = [
        "## Side by side with ns-3 (scenarios A-D, matched settings)",
        "",
        f"{where}. Each case runs in spacetp ({args.reps} times) then in ns-3 "
        f"({args.ns3_reps} times, as one ns-3 run takes 0.3 to 200 s); medians are shown. "
        "Seed 1 on both sides. spacetp's wall is the core's own time "
        "(`Result.wall_s`), ns-3's the time around `Simulator::Run()`. Settings as in "
        "`benches/ns3_compare.py` (see `benches/ns3_comparison.md` for goodput over 10 seeds "
        "and the reasons of the differences). An event is not the same unit in the two "
        "simulators (ns-3 schedules about 7 events per packet hop, spacetp 2), so link "
        "traversals per second is the fair measure of throughput.",
        "",
    ]
    body: list[str] = []
    comparison(args.reps, args.ns3_reps, args.quick, ns3_bin, body)
    body += ["", "## Memory (scenario D, traces off, `target/release/spacetp-sim`)", ""]
    memory(body)
    body += ["", "## Very high RTT (RTT 2400 s, 1 Mb/s, P_Loss 1e-3, 20 000 s simulated)", ""]
    very_high_rtt(args.reps, body)
    body += ["", "## Python overhead", ""]
    python_overhead(body)
    body += [
        "",
        "## Scaling: wall time against link rate and simulated time",
        "",
        "Scenario D with Scalable TCP (SACK, PER 1e-5) and the queue and buffers scaled to the "
        "bandwidth-delay product, so the pipe stays full: the cost of a run is proportional to "
        "the packets it moves (link traversals), about the same number of nanoseconds each.",
        "",
    ]
    scaling(args.reps, body)
    text = "\n".join(head + body) + "\n"
    out = args.out
    if out.exists() and "<!-- measured -->" in out.read_text():
        # Keep the hand-written part (profile, targets, how to re-run) above the marker.
        keep = out.read_text().split("<!-- measured -->")[0]
        text = keep + "<!-- measured -->\n\n" + text
    out.write_text(text)
    log(f"written {out}")


if __name__ == "__main__":
    main()
