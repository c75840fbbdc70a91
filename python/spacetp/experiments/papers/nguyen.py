"""Nguyen & Sterbenz, "An Implementation and Analysis of SCPS-TP in ns-3" (seed 001):
Figures 3-9.

Setup (section 4.1, Tables 1-2; `examples/asymmetry.toml`): client - 1.5 Mb/s, 0.01 ms -
router - space link - server; the space link carries 1.5 Mb/s forward, a reverse rate of
1.5 Mb/s .. 1.5 kb/s, 50 ms one way unless varied, a drop-tail queue of one BDP; MTU 512; each
run is a 5 MB bulk transfer and its throughput is bytes x 8 / time of the last byte
(`goodput_bps`). SCPS-TP is the `scps-tp` profile (Table 1: Vegas, SNACK without bit vector,
an ACK every 0.1 s, rate control 1.5 Mb/s, 300 kB buffers, window scaling, no timestamps) and,
for the corruption test, `scps-nucc` (Table 2: congestion control off, rate control
1.425 Mb/s, an ACK every 69 ms). NewReno, Vegas, Westwood+, HighSpeed and Hybla are spacetp's
profiles; "SCPS-TP with X" is `scps-tp` with `congestion_control = X`.

- Figures 3, 5, 6, 7: no randomness in these runs (no bit errors; drops are queue drops), so
  one run per point: every seed gives the same numbers.
- Figure 4 and Figures 8-9: transmitted sequence numbers against time, single runs with a
  segment trace (seed 1, as the paper shows one run); the corruption targets use the mean over
  several seeds of a sweep, drawn in the inset panel with ±1 standard deviation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import spacetp
from spacetp.experiments.framework import (
    Context,
    FigureOut,
    Measure,
    Outcome,
    geomean,
    select,
    summarize,
)
from spacetp.experiments.papers._nguyen_setup import (
    ASSUMPTIONS,
    BER,
    CORRUPTION_SEEDS,
    DELAYS,
    LABELS,
    METRICS,
    MTUS,
    OUTAGE,
    QUICK_REVERSE,
    REVERSE,
    VARIANTS,
    base,
    run_case,
    scenario_of,
)
from spacetp.experiments.plotting import (
    legend_outside,
    log_log,
    new_figure,
    plain_ticks,
    style,
)
from spacetp.experiments.tables import value_at

# ------------------------------------------------------------------------------ sweeps


def deterministic_sweep(ctx: Context):
    """Figures 3, 5, 6, 7 (no randomness: one run per point)."""
    cases, meta = {}, {}

    def add(protocol, rev="5 kb/s", delay=50, mtu=512, fig=""):
        name = f"{protocol} rev={rev} d={delay} mtu={mtu}"
        if name not in cases:
            cases[name] = run_case(protocol, rev, delay, mtu)
            meta[name] = {"protocol": protocol, "rev": rev, "delay_ms": delay, "mtu": mtu}

    revs = ctx.choose(QUICK_REVERSE, list(REVERSE))
    for rev in revs:
        for p in ["newreno", "vegas", "scps-tp", *VARIANTS, *[f"scps-tp+{v}" for v in VARIANTS]]:
            add(p, rev)
    for d in ctx.choose(*DELAYS):
        for rev in ("1.5 Mb/s", "3 kb/s"):
            for p in ("newreno", "scps-tp"):
                add(p, rev, d)
    for m in ctx.choose(*MTUS):
        for p in ("newreno", "scps-tp"):
            add(p, "3 kb/s", 50, m)
    runs = ctx.sweep_cases("Figures 3, 5, 6, 7", base(), cases, 1, METRICS)
    return _tidy(runs, meta)


def corruption_sweep(ctx: Context):
    cases, meta = {}, {}
    for d in (50, 100):
        for p in ("newreno", "scps-nucc", "scps-nucc-nosnack"):
            name = f"{p} d={d}"
            cases[name] = run_case(p, "1.5 Mb/s", d, 512, BER)
            meta[name] = {"protocol": p, "rev": "1.5 Mb/s", "delay_ms": d, "mtu": 512}
    n = ctx.seeds(*CORRUPTION_SEEDS)
    runs = ctx.sweep_cases("Figures 8-9 (corruption)", base(), cases, n, METRICS)
    return _tidy(runs, meta)


def _tidy(runs, meta):
    runs["kbps"] = runs["flows[0].goodput_bps"] / 1e3
    s = summarize(runs, ["case"], "kbps")
    g = runs.groupby("case")
    for m in ("flows[0].acks_sent", "flows[0].data_segments_sent", "flows[0].timeouts"):
        s = s.join(g[m].mean().rename(m.split(".")[-1]), on="case")
    s = s.join(g["flows[0].complete"].all().rename("complete"), on="case")
    for k in ("protocol", "rev", "delay_ms", "mtu"):
        s[k] = s["case"].map(lambda c, k=k: meta[c][k])
    s["rev_bps"] = s["rev"].map(REVERSE)
    return s


def data_cols(d: pd.DataFrame, *extra) -> pd.DataFrame:
    cols = ["protocol", *extra, "mean", "std", "ci95", "n", "timeouts", "acks_sent", "complete"]
    return d[cols].rename(
        columns={"mean": "throughput_kbps", "std": "throughput_std", "ci95": "throughput_ci95"}
    )


def rev_axis(ax):
    ax.set_xscale("log")
    ax.invert_xaxis()
    plain_ticks(ax, "x")
    ax.set_xlabel("reverse (ACK channel) rate (kb/s); forward 1.5 Mb/s")


# ---------------------------------------------------------------------------- figures


def fig3(ctx: Context, s) -> tuple[FigureOut, dict]:
    protos = ["newreno", "vegas", "scps-tp"]
    fig, (ax,) = new_figure()
    rows = []
    for i, p in enumerate(protos):
        d = select(s, protocol=p, delay_ms=50, mtu=512).sort_values("rev_bps", ascending=False)
        ax.plot(d["rev_bps"] / 1e3, d["mean"], label=LABELS[p], **style(i))
        rows.append(data_cols(d, "rev", "rev_bps"))
    rev_axis(ax)
    ax.set(
        yscale="log",
        ylabel="throughput (kb/s)",
        title="Asymmetric channel, 50 ms, MTU 512, 5 MB",
    )
    plain_ticks(ax, "y")
    ax.legend(fontsize=9)
    at5 = {p: value_at(s, protocol=p, rev="5 kb/s", delay_ms=50, mtu=512) for p in protos}
    revs = list(select(s, protocol="scps-tp", delay_ms=50, mtu=512).sort_values("rev_bps")["rev"])

    def series(p):
        d = select(s, protocol=p, delay_ms=50, mtu=512).sort_values("rev_bps", ascending=False)
        return d["mean"].to_numpy()

    dec = {p: bool(np.all(np.diff(series(p)) <= 0.01 * series(p)[:-1])) for p in protos}
    drop = {p: series(p)[0] / series(p)[-1] for p in protos}
    measures = {
        "fig3_scps_at_5k_kbps": Measure(
            at5["scps-tp"], f"NewReno {at5['newreno']:.0f}, Vegas {at5['vegas']:.0f} kb/s"
        ),
        "fig3_scps_over_newreno_at_5k": Measure(at5["scps-tp"] / at5["newreno"]),
        "fig3_scps_over_vegas_at_5k": Measure(at5["scps-tp"] / at5["vegas"]),
        "fig3_all_decrease": Measure(
            all(dec.values()),
            "not decreasing: " + (", ".join(LABELS[p] for p in protos if not dec[p]) or "none"),
        ),
        "fig3_scps_drop_over_tcp_drop": Measure(
            drop["scps-tp"] / min(drop["newreno"], drop["vegas"]),
            f"throughput at {revs[-1]} / at {revs[0]}: "
            + ", ".join(f"{LABELS[p]} {drop[p]:.1f}x" for p in protos),
        ),
    }
    note = "One run per point (no randomness in this set-up: every seed gives the same number)."
    return FigureOut("fig3", fig, pd.concat(rows), note), measures


def seq_trace(values: dict, seed: int = 1):
    res = spacetp.run(scenario_of(values), seed=seed, trace_segments=True)
    seg = res.segments
    keep = seg["flow"] == 0
    return res, seg["time_s"][keep], seg["offset"][keep], seg["retransmission"][keep]


def seq_figure(fig_id: str, title: str, runs: dict, extra=None):
    """Transmitted sequence number (MB) against time, one curve per protocol."""
    fig, (ax,) = new_figure()
    rows = []
    for i, (p, (res, t, off, rtx)) in enumerate(runs.items()):
        s = style(i)
        dashed = p.endswith("nosnack")
        ax.plot(
            t,
            off / 1e6,
            color=s["color"],
            linestyle="--" if dashed else "-",
            linewidth=1.2,
            label=f"{LABELS[p]} ({res.flows[0]['goodput_bps'] / 1e3:.0f} kb/s)",
        )
        r = np.asarray(rtx, dtype=bool)
        if r.any():
            ax.plot(t[r], off[r] / 1e6, ".", color=s["color"], markersize=2.5)
        step = max(1, len(t) // 4000)
        rows.append(
            pd.DataFrame(
                {
                    "protocol": p,
                    "time_s": t[::step],
                    "sequence_bytes": off[::step],
                    "retransmission": r[::step],
                }
            )
        )
    ax.set(
        xlabel="time (s)",
        ylabel="transmitted sequence number (MB)",
        title=title,
        xlim=(0, None),
        ylim=(0, 5.2),
    )
    legend_outside(fig, ax)
    if extra:
        extra(fig, ax)
    return fig, pd.concat(rows)


def fig4(ctx: Context) -> tuple[FigureOut, dict]:
    ctx.say("Figure 4: three sequence traces at 5 kb/s")
    runs = {p: seq_trace(run_case(p, "5 kb/s")) for p in ("newreno", "vegas", "scps-tp")}
    fig, data = seq_figure("fig4", "Reverse 5 kb/s (300:1), 50 ms: 5 MB transfer", runs)
    per = {
        p: r[0].flows[0]["acks_sent"] / r[0].flows[0]["data_segments_sent"] for p, r in runs.items()
    }
    note = (
        "Single runs (no randomness), dots: retransmissions. ACKs per data segment: "
        + ", ".join(f"{LABELS[p]} {v:.3f}" for p, v in per.items())
        + "."
    )
    measures = {
        "fig4_scps_acks_over_newreno_acks": Measure(
            per["scps-tp"] / per["newreno"],
            f"SCPS-TP {per['scps-tp']:.3f}, NewReno {per['newreno']:.3f} ACKs per data segment",
        )
    }
    return FigureOut("fig4", fig, data, note), measures


def fig5(ctx: Context, s) -> tuple[FigureOut, dict]:
    fig, (ax,) = new_figure()
    rows, measures = [], {}
    for i, v in enumerate(VARIANTS):
        for scps, ls in ((False, "--"), (True, "-")):
            p = f"scps-tp+{v}" if scps else v
            d = select(s, protocol=p, delay_ms=50, mtu=512).sort_values("rev_bps", ascending=False)
            st = style(i)
            ax.plot(
                d["rev_bps"] / 1e3,
                d["mean"],
                color=st["color"],
                marker=st["marker"],
                linestyle=ls,
                markerfacecolor=st["color"] if scps else "white",
                label=f"SCPS-TP with {LABELS[v]}" if scps else LABELS[v],
            )
            rows.append(data_cols(d, "rev", "rev_bps"))
        asym = [r for r in select(s, protocol=v, delay_ms=50, mtu=512)["rev"] if r != "1.5 Mb/s"]
        gains = [
            value_at(s, protocol=f"scps-tp+{v}", rev=r, delay_ms=50, mtu=512)
            / value_at(s, protocol=v, rev=r, delay_ms=50, mtu=512)
            for r in asym
        ]
        gm = geomean(gains)
        measures[f"fig5_{v}_improved"] = Measure(
            bool(gm > 1),
            f"SCPS-TP with {LABELS[v]} / {LABELS[v]}: geometric mean {gm:.2f}; "
            + ", ".join(f"{r} {g:.2f}" for r, g in zip(asym, gains, strict=True)),
        )
    rev_axis(ax)
    ax.set(
        yscale="log", ylabel="throughput (kb/s)", title="Fixed ACK frequency with other controllers"
    )
    plain_ticks(ax, "y")
    legend_outside(fig, ax)
    note = (
        "Dashed, open markers: the TCP variant; solid: SCPS-TP (Table 1) with that controller. "
        "No packet is lost at the higher reverse rates, so Westwood+ and HighSpeed (Reno below "
        "38 segments) grow as NewReno does and their curves lie on top of each other; with "
        "SCPS-TP's stretched ACKs Vegas too falls back on Reno growth (fewer than 3 RTT samples "
        "per round), so SCPS-TP with either equals SCPS-TP. One run per point."
    )
    return FigureOut("fig5", fig, pd.concat(rows), note), measures


def fig6(ctx: Context, s) -> tuple[FigureOut, dict]:
    fig, (ax,) = new_figure()
    rows = []
    i = 0
    delays = ctx.choose(*DELAYS)
    for rev, ratio in (("1.5 Mb/s", "1:1"), ("3 kb/s", "500:1")):
        for p in ("newreno", "scps-tp"):
            d = select(s, protocol=p, rev=rev, mtu=512)
            d = d[d["delay_ms"].isin(delays)].sort_values("delay_ms")
            ax.plot(d["delay_ms"], d["mean"], label=f"{LABELS[p]}, {ratio}", **style(i))
            rows.append(data_cols(d, "rev", "delay_ms"))
            i += 1
    ax.set(
        yscale="log",
        xlabel="space-link one-way propagation delay (ms)",
        ylabel="throughput (kb/s)",
        title="Impact of delay (forward 1.5 Mb/s; 1:1 and 500:1)",
    )
    plain_ticks(ax, "y")
    legend_outside(fig, ax)

    def v(p, rev, d):
        return value_at(s, protocol=p, rev=rev, delay_ms=d, mtu=512)

    dec = {
        (p, r): v(p, r, delays[-1]) < v(p, r, delays[0])
        for p in ("newreno", "scps-tp")
        for r in ("1.5 Mb/s", "3 kb/s")
    }
    nr11 = [v("newreno", "1.5 Mb/s", d) > v("scps-tp", "1.5 Mb/s", d) for d in delays]
    sc500 = [v("scps-tp", "3 kb/s", d) > v("newreno", "3 kb/s", d) for d in delays]
    measures = {
        "fig6_all_decrease": Measure(
            all(dec.values()),
            "not decreasing: "
            + (", ".join(f"{LABELS[p]} at {r}" for (p, r), ok in dec.items() if not ok) or "none"),
        ),
        "fig6_newreno_1to1_100ms_kbps": Measure(v("newreno", "1.5 Mb/s", 100)),
        "fig6_newreno_over_scps_1to1_100ms": Measure(
            v("newreno", "1.5 Mb/s", 100) / v("scps-tp", "1.5 Mb/s", 100),
            f"SCPS-TP {v('scps-tp', '1.5 Mb/s', 100):.0f} kb/s",
        ),
        "fig6_newreno_better_1to1": Measure(
            all(nr11),
            "per delay (NewReno / SCPS-TP): "
            + ", ".join(
                f"{d} ms {v('newreno', '1.5 Mb/s', d) / v('scps-tp', '1.5 Mb/s', d):.2f}"
                for d in delays
            ),
        ),
        "fig6_scps_500to1_100ms_kbps": Measure(v("scps-tp", "3 kb/s", 100)),
        "fig6_newreno_500to1_100ms_kbps": Measure(v("newreno", "3 kb/s", 100)),
        "fig6_scps_better_500to1": Measure(all(sc500)),
    }
    return FigureOut("fig6", fig, pd.concat(rows), "One run per point (no randomness)."), measures


def fig7(ctx: Context, s) -> tuple[FigureOut, dict]:
    fig, (ax,) = new_figure()
    rows = []
    mtus = ctx.choose(*MTUS)
    for i, p in enumerate(("newreno", "scps-tp")):
        d = select(s, protocol=p, rev="3 kb/s", delay_ms=50)
        d = d[d["mtu"].isin(mtus)].sort_values("mtu")
        ax.plot(d["mtu"], d["mean"], label=LABELS[p], **style(i))
        rows.append(data_cols(d, "mtu"))
    log_log(
        ax,
        xlabel="MTU (bytes)",
        ylabel="throughput (kb/s)",
        title="Impact of segment size, reverse 3 kb/s (500:1), 50 ms",
    )
    ax.legend(fontsize=9)

    def v(p, m):
        return value_at(s, protocol=p, rev="3 kb/s", delay_ms=50, mtu=m)

    gain = {p: v(p, mtus[-1]) / v(p, mtus[0]) for p in ("newreno", "scps-tp")}
    better = [v("scps-tp", m) > v("newreno", m) for m in mtus]
    measures = {
        "fig7_min_mtu_gain": Measure(
            min(gain.values()),
            ", ".join(f"{LABELS[p]} {g:.1f}x" for p, g in gain.items())
            + f" from MTU {mtus[0]} to {mtus[-1]}",
        ),
        "fig7_scps_better": Measure(
            all(better),
            "SCPS-TP / NewReno: "
            + ", ".join(f"{m} B {v('scps-tp', m) / v('newreno', m):.1f}" for m in mtus),
        ),
    }
    return FigureOut("fig7", fig, pd.concat(rows), "One run per point (no randomness)."), measures


def corruption_figs(ctx: Context, c) -> tuple[list[FigureOut], dict]:
    figs, measures = [], {}
    protos = ("newreno", "scps-nucc", "scps-nucc-nosnack")
    n = int(c["n"].max())
    for fig_id, d in (("fig8", 50), ("fig9", 100)):
        ctx.say(f"Figure {fig_id[-1]}: sequence traces at {d} ms (seed 1)")
        runs = {p: seq_trace(run_case(p, "1.5 Mb/s", d, 512, BER)) for p in protos}

        def inset(fig, ax, d=d):
            box = ax.inset_axes([0.60, 0.08, 0.36, 0.36])
            for i, p in enumerate(protos):
                row = select(c, protocol=p, delay_ms=d)
                box.bar(i, row["mean"], yerr=row["std"], color=style(i)["color"], capsize=3)
            box.set_xticks(range(len(protos)), ["NewReno", "SCPS", "no SNACK"], fontsize=7)
            box.set_ylabel("kb/s", fontsize=7)
            box.tick_params(labelsize=7)
            box.set_title(f"mean ± sd, {n} seeds", fontsize=7)

        fig, data = seq_figure(
            fig_id, f"Corruption, BER 1e-5, 1.5 Mb/s both ways, {d} ms", runs, inset
        )
        summary = data_cols(select(c, delay_ms=d), "delay_ms").assign(series="mean over seeds")
        data = pd.concat([data.assign(series="trace, seed 1"), summary])
        note = (
            f"Curves: seed 1 (the legend gives that run's throughput); dots: retransmissions. "
            f"Inset: mean ± 1 standard deviation over {n} seeds, the numbers the targets use. "
            "Dashed: SCPS-TP (Table 2) with SNACK off (ours)."
        )
        figs.append(FigureOut(fig_id, fig, data, note))
        nr = value_at(c, protocol="newreno", delay_ms=d)
        sc = value_at(c, protocol="scps-nucc", delay_ms=d)
        ns = value_at(c, protocol="scps-nucc-nosnack", delay_ms=d)
        measures[f"{fig_id}_newreno_kbps"] = Measure(nr)
        measures[f"{fig_id}_scps_kbps"] = Measure(
            sc, f"with SNACK off {ns:.0f} kb/s; NewReno {nr:.0f} kb/s"
        )
    sc50 = value_at(c, protocol="scps-nucc", delay_ms=50)
    sc100 = value_at(c, protocol="scps-nucc", delay_ms=100)
    measures["fig9_scps_100_over_50"] = Measure(sc100 / sc50, f"{sc50:.0f} -> {sc100:.0f} kb/s")
    measures["fig9_scps_better"] = Measure(
        all(
            value_at(c, protocol="scps-nucc", delay_ms=d)
            > value_at(c, protocol="newreno", delay_ms=d)
            for d in (50, 100)
        )
    )
    return figs, measures


def outage_fig(ctx: Context) -> tuple[FigureOut, dict]:
    """Fig. S1 (ours): SCPS-TP's persist mode across a 60 s outage, against NewReno."""
    ctx.say("Fig. S1: a 60 s link outage")
    runs, resume, timeouts = {}, {}, {}
    for p in ("newreno", "scps-tp"):
        values = {
            **run_case(p, "1.5 Mb/s"),
            "links[1].outages": [[f"{OUTAGE[0]} s", f"{OUTAGE[1]} s"]],
        }
        runs[p] = seq_trace(values)
        t = np.asarray(runs[p][1])
        resume[p] = float(t[t >= OUTAGE[1]].min()) - OUTAGE[1]
        timeouts[p] = runs[p][0].flows[0]["timeouts"]

    def shade(fig, ax):
        ax.axvspan(*OUTAGE, color="0.85", zorder=0, label="link down")

    fig, data = seq_figure("figS1", "Link outage 10-70 s, 1.5 Mb/s both ways, 50 ms", runs, shade)
    note = (
        "Single runs (no randomness); grey: the space link is down. First data after the link "
        "returns: "
        + ", ".join(f"{LABELS[p]} +{resume[p]:.3f} s ({timeouts[p]} timeouts)" for p in runs)
        + ". SCPS-TP hears of the outage and of the return from the ground station "
        "(a link notice, `links[i].outages`), suspends its timer, probes, and resumes at its "
        "old window."
    )
    measures = {
        "figS1_scps_resume_s": Measure(
            resume["scps-tp"], f"{timeouts['scps-tp']} retransmission timeouts"
        ),
        "figS1_newreno_resume_s": Measure(
            resume["newreno"], f"{timeouts['newreno']} retransmission timeouts"
        ),
    }
    return FigureOut("figS1", fig, data, note), measures


def run(ctx: Context) -> Outcome:
    s = deterministic_sweep(ctx)
    c = corruption_sweep(ctx)
    f3, m3 = fig3(ctx, s)
    f4, m4 = fig4(ctx)
    f5, m5 = fig5(ctx, s)
    f6, m6 = fig6(ctx, s)
    f7, m7 = fig7(ctx, s)
    f89, m89 = corruption_figs(ctx, c)
    fs1, ms1 = outage_fig(ctx)
    measures = {**m3, **m4, **m5, **m6, **m7, **m89, **ms1}
    return Outcome([f3, f4, f5, f6, f7, *f89, fs1], measures, ASSUMPTIONS)
