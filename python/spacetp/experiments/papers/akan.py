"""Akan, Fang & Akyildiz, "Performance of TCP Protocols in Deep Space Communication Networks"
(seed 003): Figs. 1-6, and Fig. S1 of ours for the settings the paper does not state.

Setup (section III): one 1 Mb/s link with per-packet loss P_Loss (1e-3 unless varied), 1 KB
segments, ssthresh 20, eight TCP variants. What the paper leaves out, and our choice:

- 1 KB = 1000 payload bytes (mtu 1040): Fig. 1's 308 b/s needs 1000, not 1024 (docs/models.md).
- ns-2's defaults where the paper's numbers need them: one ACK per segment (ns-2's TCPSink;
  Fig. 2's window doubles per RTT) and an initial window of 1 segment; initial ssthresh 20
  segments for every figure (stated for Fig. 2, "same topology" after).
- Receiver window 64 segments: the paper's Peach+ numbers (52 B/s at 20 min, 20 B/s at
  40 min) are what Jump Start gives with a 64-segment window over 20 000 s. Fig. S1 varies it.
- Duration 20 000 s of data transfer (Fig. 2's connection duration) at every point; spacetp
  opens the connection with a handshake ns-2 does not have, so each run lasts one RTT longer
  and throughput = bytes delivered / 20 000 s. Fig. S1 varies the duration.
- Loss on the data direction only; ACKs are not lost.
- Retransmission timer for RTTs up to 40 min: initial RTO = max(1 s, 3 RTT), min RTO =
  max(1 s, 1.25 RTT), max RTO = max(60 s, 8 RTT) (below).
- Bottleneck queue 100 packets with the priority discipline TCP-Peach+ assumes (its NIL
  segments wait in a low-priority FIFO); for the other protocols it is a plain FIFO.

Figures with several runs use one spacetp sweep (cases x protocols x seeds). Fig. 2 needs
window traces, which sweeps do not keep: its runs are single `spacetp.run` calls (each a few
milliseconds). The settings, grids and scenario are in `_akan_setup`.
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
from spacetp.experiments.papers import _akan_beyond as beyond
from spacetp.experiments.papers._akan_setup import (
    DURATION,
    FIG2_SEEDS,
    HIGH,
    LABELS,
    LOSSES,
    LOW,
    METRICS,
    OTHERS,
    P_LOSS,
    PROTOCOLS,
    RTT_DEEP,
    RWND,
    S1_DURATION,
    S1_RWND,
    SEEDS,
    SEGMENT,
    SSTHRESH,
    VERY_HIGH,
    case,
    scenario,
)
from spacetp.experiments.plotting import (
    errorbar_series,
    legend_outside,
    log_log,
    new_figure,
    plain_ticks,
    style,
)
from spacetp.experiments.tables import lookup, stat_columns
from spacetp.models import pftk, slowstart

ASSUMPTIONS = [
    "Link 1 Mb/s, one-way delay RTT/2 both ways, per-packet loss P_Loss on the data direction "
    "only (ACKs are not lost).",
    "'1 KB' segments = 1000 payload bytes (mtu 1040): eq. (1) gives the paper's 308 b/s with "
    "1000-byte segments only (docs/models.md).",
    "One ACK per segment (ack_every = 1, ns-2's TCPSink) and initial window 1 segment (ns-2's "
    "windowInit_): Fig. 2's window doubles every RTT only without delayed ACKs.",
    "Initial ssthresh 20 segments in every figure (the paper states it for Fig. 2 and uses "
    "'the same topology' afterwards).",
    "Receiver and send windows 64 segments (64 000 B): not stated; the paper's Peach+ numbers "
    "(52 B/s at 20 min, 20 B/s at 40 min) are what Jump Start gives with 64 segments over "
    "20 000 s. Fig. S1 shows the effect of 20 .. 256 segments.",
    "Duration 20 000 s of data transfer at every point (Fig. 2's connection duration; the "
    "paper gives none for Figs. 3-6). spacetp opens connections with a handshake that ns-2 "
    "does not have, so each run lasts RTT + 20 000 s and throughput = bytes delivered in order "
    "/ 20 000 s. Fig. S1 shows the effect of 5 000 .. 80 000 s.",
    "Retransmission timer: initial RTO = max(1 s, 3 RTT) (above the RTT, or the SYN is resent "
    "before its answer can arrive; 3 RTT is the first RTO after one sample, the T0 of Fig. 1), "
    "min RTO = max(1 s, 1.25 RTT) (on a constant-delay path RFC 6298's RTTVAR decays and the "
    "RTO would sit a millisecond above the RTT; examples/mars.toml uses the same margin), max "
    "RTO = max(60 s, 8 RTT); max_retries and syn_retries as in the profiles (no run aborted).",
    "Bottleneck queue 100 packets, priority discipline (TCP-Peach+'s NIL segments are low "
    "priority); other protocols send no low-priority packets, so for them it is a FIFO.",
    "Protocols are spacetp's profiles unchanged (`spacetp protocols`): Westwood is Westwood+; "
    "Vegas uses alpha/beta 2/4 (ns-3, Linux; ns-2 used 1/3).",
]


# ------------------------------------------------------------------------------- Fig. 1


def fig1() -> tuple[FigureOut, dict]:
    """PFTK eq. (1) against RTT at p = 1e-3: T0 = 3 RTT (ours), and ns-2's fixed 3 s."""
    rtt = np.logspace(-3, 3, 121)
    p = 1e-3
    curves = {
        "eq. (1), T0 = 3 RTT": pftk.approx_throughput(rtt, p, 3.0 * rtt),
        "eq. (1), T0 = 3 s": pftk.approx_throughput(rtt, p, 3.0),
    }
    fig, (ax,) = new_figure()
    rows = []
    for i, (label, pkts) in enumerate(curves.items()):
        bps = pftk.to_bits_per_second(pkts, SEGMENT)
        ax.plot(rtt, bps, label=label, color=style(i)["color"], linestyle=["-", "--"][i])
        rows += [
            {"series": label, "rtt_s": r, "throughput_bps": b}
            for r, b in zip(rtt, bps, strict=True)
        ]
    at1000 = float(pftk.to_bits_per_second(pftk.approx_throughput(1000.0, p, 3000.0), SEGMENT))
    ax.plot([1000.0], [at1000], "o", color="black", zorder=5)
    ax.annotate(
        f"RTT 1000 s: {at1000:.1f} b/s\n(paper: 308 b/s)",
        (1000.0, at1000),
        xytext=(0.05, 1e3),
        arrowprops={"arrowstyle": "->", "color": "#444"},
        fontsize=9,
    )
    log_log(
        ax,
        "x",
        xlabel="RTT (s)",
        ylabel="throughput (b/s)",
        title="PFTK eq. (1), p = 1e-3, 1000-byte segments",
    )
    ax.legend(fontsize=9)
    ns2_t0 = float(pftk.to_bits_per_second(pftk.approx_throughput(1000.0, p, 3.0), SEGMENT))
    slope = float(
        np.polyfit(np.log10(rtt), np.log10(pftk.approx_throughput(rtt, p, 3 * rtt)), 1)[0]
    )
    measures = {
        "fig1_rtt1000_bps": Measure(
            at1000,
            f"T0 = 3 RTT; with T0 = 3 s (ns-2's initial RTO) {ns2_t0:.1f} b/s",
        ),
        "fig1_loglog_slope": Measure(slope, "with T0 = 3 RTT both terms of eq. (1) scale with RTT"),
    }
    return FigureOut("fig1", fig, pd.DataFrame(rows)), measures


# ------------------------------------------------------------------------------- Fig. 2


def reno_trace(seed: int, horizon: float):
    """Reno at RTT 20 min as in Fig. 2: (t since the first data segment, cwnd, ssthresh) in
    segments, sampled every 5 s up to `horizon` seconds of data transfer."""
    sc = scenario(RTT_DEEP, P_LOSS, "reno")
    sc["stop"] = RTT_DEEP + horizon
    res = spacetp.run(sc, seed=seed, trace_interval=5.0)
    s = res.samples
    keep = s["flow"] == 0
    t = s["time_s"][keep] - RTT_DEEP  # the SYN-ACK arrives after one RTT: data starts then
    return t, s["cwnd"][keep] / SEGMENT, s["ssthresh"][keep] / SEGMENT


def first_reduction(t, ss) -> int | None:
    """Index of the first sample after a drop of ssthresh (a window reduction), or None."""
    drops = np.flatnonzero(np.diff(ss) < 0)
    return int(drops[0]) + 1 if len(drops) else None


def recovery_rtts(t, cw, ss) -> tuple[float | None, str]:
    """RTTs from the first window reduction until cwnd is back at its value before it.

    Fast recovery inflates cwnd for about one RTT, so the search for the regained window
    starts once cwnd has fallen below its old value. A second reduction before that point
    makes the episode unusable (None)."""
    i = first_reduction(t, ss)
    if i is None or t[i] > DURATION:
        return None, "no reduction in the 20 000 s"
    before = cw[i - 1]
    below = np.flatnonzero(cw[i:] < before)
    if not len(below):
        return None, "window never fell below its old value"
    j = i + int(below[0])
    back = np.flatnonzero(cw[j:] >= before)
    if not len(back):
        return None, "window not regained before the end of the run"
    k = j + int(back[0])
    if np.any(np.diff(ss[i : k + 1]) != 0):
        return None, "a second reduction before the window was regained"
    return (t[k] - t[i]) / RTT_DEEP, ""


def ca_start(t, cw) -> float | None:
    """Time at which cwnd first reaches ssthresh = 20 segments."""
    at = np.flatnonzero(cw >= SSTHRESH - 1e-9)
    return float(t[at[0]]) if len(at) else None


def fig2(ctx: Context) -> tuple[FigureOut, dict]:
    n = ctx.choose(*FIG2_SEEDS)  # traces, not points: --reps does not apply
    horizon = DURATION + 40 * RTT_DEEP  # room to watch a recovery that starts near 20 000 s
    ctx.say(f"Fig. 2: {n} Reno traces at RTT 20 min")
    shown = None
    recoveries, skipped, starts = [], {}, []
    for seed in range(1, n + 1):
        t, cw, ss = reno_trace(seed, horizon)
        i = first_reduction(t, ss)
        start = ca_start(t, cw)
        if start is not None and (i is None or t[i] > start):
            starts.append(start)  # no loss before slow start ended
        r, why = recovery_rtts(t, cw, ss)
        if r is None:
            skipped[why] = skipped.get(why, 0) + 1
        else:
            recoveries.append(r)
        if shown is None and i is not None and t[i] <= DURATION:
            shown = (seed, t, cw, ss)  # the first seed with a loss in the window, as the paper's
    if shown is None:
        shown = (1, *reno_trace(1, horizon))

    seed, t, cw, ss = shown
    keep = t <= DURATION
    fig, (ax,) = new_figure()
    ax.plot(t[keep], cw[keep], color=style(1)["color"], label=f"Reno, simulated (seed {seed})")
    ax.plot(t[keep], ss[keep], color="#777", linestyle=":", label="ssthresh, simulated")
    tm, wm = slowstart.cwnd_curve(RTT_DEEP, SSTHRESH, DURATION)
    ax.step(
        tm,
        wm,
        where="post",
        color=style(0)["color"],
        linestyle="--",
        label="rounds of eq. (2), no loss",
    )
    tss = float(slowstart.duration(RTT_DEEP, SSTHRESH))
    ax.axvline(tss, color=style(0)["color"], linewidth=0.8, alpha=0.6)
    box = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1}
    ax.text(tss, 35, " eq. (2): t_SS = 7200 s", fontsize=8, color=style(0)["color"], bbox=box)
    sim_start = ca_start(t, cw)
    if sim_start is not None:
        ax.axvline(sim_start, color=style(1)["color"], linewidth=0.8, alpha=0.6)
        ax.text(
            sim_start,
            32,
            f"cwnd reaches ssthresh: {sim_start:.0f} s ",
            fontsize=8,
            ha="right",
            color=style(1)["color"],
            bbox=box,
        )
    ax.set(
        xlabel="time since the first data segment (s)",
        ylabel="congestion window (segments)",
        title="Reno, RTT 20 min, P_Loss 1e-3, ssthresh 20",
        xlim=(0, DURATION),
        ylim=(0, None),
    )
    ax.legend(fontsize=9, loc="upper left")
    rows = [
        {"series": f"simulated cwnd (seed {seed})", "time_s": a, "segments": b}
        for a, b in zip(t[keep], cw[keep], strict=True)
    ]
    rows += [
        {"series": f"simulated ssthresh (seed {seed})", "time_s": a, "segments": b}
        for a, b in zip(t[keep], ss[keep], strict=True)
    ]
    rows += [
        {"series": "eq. (2) rounds", "time_s": a, "segments": b}
        for a, b in zip(tm, wm, strict=True)
    ]

    rec = float(np.mean(recoveries)) if recoveries else None
    skip_text = "; ".join(f"{v} {k}" for k, v in skipped.items())
    note = (
        f"Shown: seed {seed}, the first seed whose run has a window reduction within the 20 000 s "
        f"(the paper's trace has one at 9500 s). Recovery statistics: {len(recoveries)} of {n} "
        f"seeds (the others: {skip_text})."
    )
    measures = {
        "fig2_model_tss_s": Measure(tss),
        "fig2_model_tss_40min_h": Measure(float(slowstart.duration(2 * RTT_DEEP, SSTHRESH)) / 3600),
        "fig2_sim_ca_start_s": Measure(
            float(np.median(starts)) if starts else None,
            f"{len(starts)} seeds without a loss in slow start; from the SYN add 1 RTT (1200 s)"
            if starts
            else "every seed lost a segment during slow start",
        ),
        "fig2_sim_recovery_rtt": Measure(
            rec,
            f"{len(recoveries)} seeds, range {min(recoveries):.0f} .. {max(recoveries):.0f} RTT"
            if recoveries
            else "no seed had a usable recovery",
        ),
    }
    return FigureOut("fig2", fig, pd.DataFrame(rows), note), measures


# ---------------------------------------------------------------------------- Figs. 3-6, S1


def sweep_all(ctx: Context):
    """Every simulated point of Figs. 3-6 and S1 as one sweep; returns (summary, cases) where
    summary has one row per (case, protocol) with throughput statistics in B/s."""
    cases, meta = {}, {}

    def add(rtt, p=P_LOSS, rwnd=RWND, duration=DURATION):
        name, values = case(rtt, p, rwnd, duration)
        cases[name] = values
        meta[name] = {"rtt_s": rtt, "p_loss": p, "rwnd": rwnd, "duration_s": duration}

    for rtt in ctx.choose(*LOW) + ctx.choose(*HIGH) + ctx.choose(*VERY_HIGH):
        add(rtt)
    for p in ctx.choose(*LOSSES):
        add(RTT_DEEP, p)
    for w in ctx.choose(*S1_RWND):
        add(RTT_DEEP, rwnd=w)
    for d in ctx.choose(*S1_DURATION):
        add(RTT_DEEP, duration=d)

    runs = ctx.sweep_cases(
        "Figs. 3-6 and S1", scenario(), cases, ctx.seeds(*SEEDS), METRICS, PROTOCOLS
    )
    runs["duration_s"] = runs["case"].map(lambda c: meta[c]["duration_s"])
    runs["throughput_Bps"] = runs["flows[0].bytes_delivered"] / runs["duration_s"]
    s = summarize(runs, ["case", "protocol"], "throughput_Bps")
    timeouts = (
        runs.groupby(["case", "protocol"])["flows[0].timeouts"].mean().rename("timeouts_mean")
    )
    s = s.join(timeouts, on=["case", "protocol"])
    for k in ("rtt_s", "p_loss", "rwnd", "duration_s"):
        s[k] = s["case"].map(lambda c, k=k: meta[c][k])
    return s


def curve_figure(
    s,
    x: str,
    xs: list[float],
    fixed: dict,
    scale: float,
    unit: str,
    title: str,
    xlabel: str,
    logy: bool,
):
    """Throughput of the eight protocols against `x`, one point per grid value."""
    fig, (ax,) = new_figure()
    rows = []
    # The paper's eight, then LTP and BP where they ran (dashed: not in the paper).
    extra = [p for p in beyond.BEYOND if (s["protocol"] == p).any()]
    for i, proto in enumerate([*PROTOCOLS, *extra]):
        d = select(s, protocol=proto, **fixed)
        d = d[d[x].isin(xs)].sort_values(x)
        if d.empty:
            continue
        errorbar_series(
            ax,
            d[x],
            d["mean"] / scale,
            d["std"] / scale,
            LABELS.get(proto) or beyond.LABELS[proto],
            i,
            linewidth=2.2 if proto in ("peach+", *extra) else 1.3,
            **({"linestyle": "--"} if proto in extra else {}),
        )
        rows.append(d.assign(protocol=proto))
    ax.set(xscale="log", xlabel=xlabel, ylabel=f"throughput ({unit})", title=title)
    if logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, None)
    plain_ticks(ax)
    legend_outside(fig, ax)
    data = pd.concat(rows)[
        [
            "protocol",
            x,
            "mean",
            "std",
            "ci95",
            "n",
            "timeouts_mean",
            "rtt_s",
            "p_loss",
            "rwnd",
            "duration_s",
        ]
    ]
    data = stat_columns(data, "throughput_Bps")
    return fig, data


at = lookup("protocol")  # at(s, "reno", rtt_s=1.0, ...): the mean of one point


def figs3to6(ctx: Context, s) -> tuple[list[FigureOut], dict]:
    n = ctx.seeds(*SEEDS)
    bars = (
        f"Error bars: ±1 standard deviation over {n} seeds. "
        "Throughput = bytes delivered in order / 20 000 s. Dashed, not in the paper: LTP and "
        "the Bundle Protocol over LTP on the same link (1 MB blocks, export sessions for the "
        "bandwidth-delay product; spacetp.experiments.papers._akan_beyond), "
        f"{ctx.seeds(1, 3)} seed(s) per point."
    )
    base = {"p_loss": P_LOSS, "rwnd": RWND, "duration_s": DURATION}
    low, high, vhigh, losses = (ctx.choose(*g) for g in (LOW, HIGH, VERY_HIGH, LOSSES))
    figs, measures = [], {}

    f, d = curve_figure(
        s, "rtt_s", low, base, 1000, "KB/s", "Low RTT range, P_Loss = 1e-3", "RTT (s)", False
    )
    figs.append(FigureOut("fig3", f, d, bars))
    at_1ms = {p: at(s, p, rtt_s=low[0], **base) / 1000 for p in PROTOCOLS}
    far = max(PROTOCOLS, key=lambda p: abs(at_1ms[p] - 120))
    measures["fig3_farthest_from_120_KBps"] = Measure(
        at_1ms[far],
        f"{LABELS[far]}; range {min(at_1ms.values()):.1f} .. {max(at_1ms.values()):.1f} KB/s",
    )
    ratios = {p: at(s, p, rtt_s=low[0], **base) / at(s, p, rtt_s=1.0, **base) for p in PROTOCOLS}
    least = min(PROTOCOLS, key=ratios.get)
    measures["fig3_min_drop_ratio"] = Measure(
        ratios[least],
        "smallest: "
        + LABELS[least]
        + "; "
        + ", ".join(f"{LABELS[p]} {ratios[p]:.2f}" for p in PROTOCOLS),
    )
    below = [r for r in low if r < 0.3]
    gm = {p: geomean([at(s, p, rtt_s=r, **base) for r in below]) for p in PROTOCOLS}
    best = max(PROTOCOLS, key=gm.get)
    spread = (max(gm.values()) / min(gm.values()) - 1) * 100
    measures["fig3_best_below_300ms"] = Measure(
        best,
        f"over RTT {', '.join(f'{r * 1000:g}' for r in below)} ms: {LABELS[best]} first, "
        f"Westwood+ {(gm['westwood'] / gm[best] - 1) * 100:+.1f}%; all eight within {spread:.1f}%",
    )
    band = [r for r in low if 0.3 <= r <= 1.0]
    best_at = {r: max(PROTOCOLS, key=lambda p, r=r: at(s, p, rtt_s=r, **base)) for r in band}
    measures["fig3_peach_best_300ms_1s"] = Measure(
        all(b == "peach+" for b in best_at.values()),
        "best: " + ", ".join(f"{r:g} s {LABELS[b]}" for r, b in best_at.items()),
    )
    gains = [
        at(s, "peach+", rtt_s=r, **base) / np.mean([at(s, p, rtt_s=r, **base) for p in OTHERS])
        for r in band
    ]
    measures["fig3_peach_gain_pct"] = Measure(
        (geomean(gains) - 1) * 100,
        "per RTT: "
        + ", ".join(f"{r:g} s {(g - 1) * 100:+.0f}%" for r, g in zip(band, gains, strict=True)),
    )

    f, d = curve_figure(
        s, "rtt_s", high, base, 1000, "KB/s", "High RTT range, P_Loss = 1e-3", "RTT (s)", True
    )
    figs.append(FigureOut("fig4", f, d, bars))
    at5 = [at(s, p, rtt_s=5.0, **base) / 1000 for p in PROTOCOLS]
    measures["fig4_median_at_5s_KBps"] = Measure(
        float(np.median(at5)),
        f"range {min(at5):.2f} .. {max(at5):.2f} KB/s; PFTK eq. (1) at 5 s: "
        f"{float(pftk.approx_throughput(5.0, P_LOSS, 15.0)) * SEGMENT / 1000:.2f} KB/s",
    )
    g_high = [
        at(s, "peach+", rtt_s=r, **base) / max(at(s, p, rtt_s=r, **base) for p in OTHERS)
        for r in high
    ]
    measures["fig4_peach_gain_over_best_pct"] = Measure(
        (geomean(g_high) - 1) * 100,
        "per RTT: "
        + ", ".join(f"{r:g} s {(g - 1) * 100:+.0f}%" for r, g in zip(high, g_high, strict=True)),
    )

    f, d = curve_figure(
        s, "rtt_s", vhigh, base, 1, "B/s", "Very high RTT range, P_Loss = 1e-3", "RTT (s)", True
    )
    figs.append(FigureOut("fig5", f, d, bars))
    mars = [r for r in vhigh if 540 <= r <= 2400]
    others = [at(s, p, rtt_s=r, **base) for p in OTHERS for r in mars]
    measures["fig5_others_geomean_Bps"] = Measure(
        geomean(others),
        "per RTT (mean of the seven): "
        + ", ".join(
            f"{r / 60:g} min {np.mean([at(s, p, rtt_s=r, **base) for p in OTHERS]):.1f}"
            for r in mars
        ),
    )
    best_v = {r: max(PROTOCOLS, key=lambda p, r=r: at(s, p, rtt_s=r, **base)) for r in vhigh}
    measures["fig5_peach_best"] = Measure(
        all(b == "peach+" for b in best_v.values()),
        "best: " + ", ".join(f"{r:g} s {LABELS[b]}" for r, b in best_v.items()),
    )
    measures["fig5_peach_40min_Bps"] = Measure(at(s, "peach+", rtt_s=2400.0, **base))

    deep = {"rtt_s": RTT_DEEP, "rwnd": RWND, "duration_s": DURATION}
    f, d = curve_figure(
        s, "p_loss", losses, deep, 1, "B/s", "RTT = 20 min", "P_Loss (per packet)", False
    )
    figs.append(FigureOut("fig6", f, d, bars))
    dec = {
        p: at(s, p, p_loss=losses[-1], **deep) < at(s, p, p_loss=losses[0], **deep)
        for p in PROTOCOLS
    }
    measures["fig6_all_decrease"] = Measure(
        all(dec.values()),
        "not decreasing: " + (", ".join(LABELS[p] for p, v in dec.items() if not v) or "none"),
    )
    peach = at(s, "peach+", p_loss=1e-6, **deep)
    rest = float(np.mean([at(s, p, p_loss=1e-6, **deep) for p in OTHERS]))
    measures["fig6_peach_Bps"] = Measure(peach)
    measures["fig6_others_Bps"] = Measure(
        rest, ", ".join(f"{LABELS[p]} {at(s, p, p_loss=1e-6, **deep):.1f}" for p in OTHERS)
    )
    measures["fig6_peach_gain_pct"] = Measure((peach / rest - 1) * 100)
    return figs, measures


def fig_s1(ctx: Context, s) -> FigureOut:
    """Sensitivity to the receiver window and to the duration at RTT 20 min, P_Loss 1e-3."""
    fig, axes = new_figure(width=10.5, height=4.4, ncols=2)
    rows = []
    panels = [
        ("rwnd", ctx.choose(*S1_RWND), {"duration_s": DURATION}, "receiver window (segments)"),
        ("duration_s", ctx.choose(*S1_DURATION), {"rwnd": RWND}, "duration of data transfer (s)"),
    ]
    for ax, (x, xs, fixed, xlabel) in zip(axes, panels, strict=True):
        for i, proto in enumerate(PROTOCOLS):
            d = select(s, protocol=proto, rtt_s=RTT_DEEP, p_loss=P_LOSS, **fixed)
            d = d[d[x].isin(xs)].sort_values(x)
            errorbar_series(
                ax,
                d[x],
                d["mean"],
                d["std"],
                LABELS[proto],
                i,
                linewidth=2.2 if proto == "peach+" else 1.3,
            )
            rows.append(d.assign(protocol=proto, varied=x))
        log_log(ax, xlabel=xlabel, ylabel="throughput (B/s)")
        ax.axvline(RWND if x == "rwnd" else DURATION, color="#999", linestyle=":", linewidth=1)
    axes[0].set_title("window varied (20 000 s)")
    axes[1].set_title("duration varied (64 segments)")
    legend_outside(fig, axes[1])
    data = pd.concat(rows)[
        ["varied", "protocol", "rwnd", "duration_s", "mean", "std", "ci95", "n", "timeouts_mean"]
    ]
    data = stat_columns(data, "throughput_Bps")
    where = {"rtt_s": RTT_DEEP, "p_loss": P_LOSS}
    peach = {w: at(s, "peach+", rwnd=w, duration_s=DURATION, **where) for w in ctx.choose(*S1_RWND)}
    others = {
        w: np.mean([at(s, p, rwnd=w, duration_s=DURATION, **where) for p in OTHERS])
        for w in ctx.choose(*S1_RWND)
    }
    reno = {d: at(s, "reno", rwnd=RWND, duration_s=d, **where) for d in ctx.choose(*S1_DURATION)}
    note = (
        "Dotted lines: our choice. Peach+'s Jump Start opens the window to what the receiver "
        "advertised in its SYN-ACK, which is never scaled (RFC 7323): at most 65 535 B, 65 "
        "segments, so windows above 64 segments add only congestion-avoidance growth: "
        + ", ".join(f"{w} segments {v:.1f} B/s" for w, v in peach.items())
        + ". The other seven (mean) grow from 1 segment and reach only about 30 segments "
        "in 20 000 s, so a window above that changes little: "
        + ", ".join(f"{w} segments {v:.1f} B/s" for w, v in others.items())
        + ". A longer run spends a smaller share of its time in slow start: Reno "
        + ", ".join(f"{d:g} s {v:.1f} B/s" for d, v in reno.items())
        + f". Error bars: ±1 standard deviation over {ctx.seeds(*SEEDS)} seeds."
    )
    return FigureOut("figS1", fig, data, note)


def run(ctx: Context) -> Outcome:
    f1, m1 = fig1()
    f2, m2 = fig2(ctx)
    s = sweep_all(ctx)
    rtts = LOW[1] + HIGH[1] + VERY_HIGH[1]
    full = sorted({(r, P_LOSS) for r in rtts} | {(RTT_DEEP, p) for p in LOSSES[1]})
    # Not in the paper, so a quick run (CI) draws them at four RTTs only.
    quick = [(r, P_LOSS) for r in (0.001, 1.0, 100.0, 2400.0)]
    points = ctx.choose(quick, full)
    extra = beyond.sweep(ctx, {"ltp": points, "bp": points})
    s_all = s if extra is None else pd.concat([s, extra])
    figs, m3 = figs3to6(ctx, s_all)
    return Outcome([f1, f2, *figs, fig_s1(ctx, s)], {**m1, **m2, **m3}, ASSUMPTIONS)
