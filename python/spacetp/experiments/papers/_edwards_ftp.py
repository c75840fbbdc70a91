"""Edwards et al., Figure 9 (OPNET "complex network") and our Fig. S2: the FTP network of
`spacetp.experiments.papers.edwards` (that module's docstring and ASSUMPTIONS describe it).

35 workstations behind one ground terminal download files from a server behind another over
a 680 kb/s, 1.4 s RTT satellite link; each asks for an exponentially distributed file of mean
400 kB after exponential gaps of mean 3 minutes. Stacks `winnt`, `win2000` and SCPS
(`scps-1c`: short SNACK, HC, RFC 1323 window scaling). Figures 9 and S2 are one spacetp
sweep.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from spacetp.experiments.framework import Context, FigureOut, Measure, geomean, select, summarize
from spacetp.experiments.plotting import dodge, errorbar_series, legend_outside, new_figure, style
from spacetp.experiments.tables import stat_columns

STACKS = {
    "winnt": "Windows NT",
    "win2000": "Windows 2000",
    "scps-1c": "SCPS (SNACK + HC + RFC 1323)",
}
WORKSTATIONS = 35
SPACE_RATE = "680 kb/s"
SPACE_DELAY = "699 ms"  # + 2 x 0.5 ms of LAN each way: 1.4 s round trip
REQUESTS = (30.0, 60.0)  # min during which the workstations request files (quick, full)
BERS9 = ([1e-9, 1e-7, 1e-5], [1e-9, 1e-8, 1e-7, 1e-6, 1e-5])
S2_BER = 1e-6
SEEDS9 = (3, 10)
CLAIMED = {"2000/NT": 30.0, "SCPS/NT": 60.0, "SCPS/2000": 40.0}
METRICS9 = ["mean_completion_s", "all_complete", "flow_count", "total_timeouts"]


# ---------------------------------------------------------------------------- scenario


def ftp_scenario(protocol: str = "win2000", ber: float = 1e-7, minutes: float = 60.0) -> dict:
    """Figure 9's network: 35 workstations, 680 kb/s, 1.4 s RTT, exponential FTP requests."""
    return {
        "name": "edwards: 35 workstations, FTP over 680 kb/s, 1.4 s RTT",
        "topology": {
            "kind": "ground_stations",
            "hosts": WORKSTATIONS,
            "core": {
                "rate": SPACE_RATE,
                "delay": SPACE_DELAY,
                "queue": {"bdp": 1.0},
                "queue_back": {"bdp": 1.0},
                "errors": {"ber": ber},
            },
            "access": {"rate": "10 Mb/s", "delay": "0.5 ms"},
        },
        "workloads": [
            {
                "kind": "file_requests",
                "clients": [f"h{i}" for i in range(WORKSTATIONS)],
                "server": "srv0",
                "direction": "get",
                "size": {"exponential": "400 kB"},
                "interval": {"exponential": "3 min"},
                "stop": f"{minutes:g} min",
                "protocol": protocol,
            }
        ],
    }


def ftp_case(
    stack: str,
    ber: float,
    minutes: float,
    queue: dict | None = None,
    interval: str = "3 min",
    tcp: dict | None = None,
) -> dict[str, object]:
    q = queue or {"bdp": 1.0}
    return {
        "workloads[0].tcp": tcp or {},
        "workloads[0].protocol": stack,
        "topology.core.errors": {"ber": ber},
        "topology.core.queue": q,
        "topology.core.queue_back": q,
        "workloads[0].stop": f"{minutes:g} min",
        "workloads[0].interval": {"exponential": interval},
    }


# ------------------------------------------------------------------------------ the sweep


def sweep_ftp(ctx: Context, router: str):
    """Figures 9 and S2 as one sweep: per-(variant, stack, BER) statistics of the mean
    download time of a run. `router`: the buffers of Fig. S2's "25 kB buffers" variant (the
    routers of Figures 3-8)."""
    minutes = ctx.choose(*REQUESTS)
    cases, meta = {}, {}

    def add(variant, stack, ber, **kw):
        name = f"{variant} {stack} ber={ber:g}"
        kw.setdefault("minutes", minutes)
        cases[name] = ftp_case(stack, ber, **kw)
        meta[name] = {"variant": variant, "stack": stack, "ber": ber}

    for ber in ctx.choose(*BERS9):
        for st in STACKS:
            add("ours", st, ber)
    for st in STACKS:
        if S2_BER not in ctx.choose(*BERS9):
            add("ours", st, S2_BER)
        add("25 kB buffers", st, S2_BER, queue={"bytes": router})
        add(f"requests for {2 * minutes:g} min", st, S2_BER, minutes=2 * minutes)
        add("half the load", st, S2_BER, interval="6 min")
    # the other two stacks of this variant are those of "ours"
    add(
        "SCPS window 64 kB",
        "scps-1c",
        S2_BER,
        tcp={"receive_buffer": "64 kB", "send_buffer": "64 kB"},
    )
    runs = ctx.sweep_cases(
        "Figures 9 and S2", ftp_scenario(minutes=minutes), cases, ctx.seeds(*SEEDS9), METRICS9
    )
    for k in ("variant", "stack", "ber"):
        runs[k] = runs["case"].map(lambda c, k=k: meta[c][k])
    s = summarize(runs, ["variant", "stack", "ber"], "mean_completion_s")
    g = runs.groupby(["variant", "stack", "ber"], sort=False)
    for col, name in (
        ("all_complete", "all_complete_share"),
        ("flow_count", "files_mean"),
        ("total_timeouts", "timeouts_mean"),
    ):
        s = s.join(g[col].mean().rename(name), on=["variant", "stack", "ber"])
    return s


# ----------------------------------------------------------------------------- figures


def short(stack: str) -> str:
    return STACKS[stack].split(" (")[0]


def t9(s9, variant: str, stack: str, ber: float) -> float:
    """Mean download time of one point of Figure 9's sweep (a variant that leaves a stack as
    it is shares the runs of "ours")."""
    d = select(s9, variant=variant, stack=stack, ber=ber)
    if not len(d):
        d = select(s9, variant="ours", stack=stack, ber=ber)
    return float(d["mean"].iloc[0])


def improvements(s9, variant: str, bers) -> dict[str, float]:
    def t(stack, b):
        return t9(s9, variant, stack, b)

    def red(a, b):
        return (1.0 - geomean([t(a, x) / t(b, x) for x in bers])) * 100.0

    return {
        "2000/NT": red("win2000", "winnt"),
        "SCPS/NT": red("scps-1c", "winnt"),
        "SCPS/2000": red("scps-1c", "win2000"),
    }


def fig9(ctx: Context, s9) -> tuple[FigureOut, dict]:
    bers = ctx.choose(*BERS9)
    fig, (ax,) = new_figure()
    rows = []
    for i, st in enumerate(STACKS):
        d = select(s9, variant="ours", stack=st)
        d = d[d["ber"].isin(bers)].sort_values("ber")
        errorbar_series(ax, dodge(d["ber"], i, len(STACKS)), d["mean"], d["std"], STACKS[st], i)
        rows.append(d)
    ax.set(
        xscale="log",
        xlabel="information bit error rate",
        ylabel="mean FTP download time (s)",
        title="35 workstations, 680 kb/s, 1.4 s RTT",
        ylim=(0, None),
    )
    legend_outside(fig, ax)
    imp = improvements(s9, "ours", bers)
    per_ber = {b: improvements(s9, "ours", [b]) for b in bers}
    times = "; ".join(
        f"{b:g}: " + ", ".join(f"{short(st)} {t9(s9, 'ours', st, b):.0f} s" for st in STACKS)
        for b in bers
    )
    data = stat_columns(pd.concat(rows), "download_s")
    n = ctx.seeds(*SEEDS9)
    note = (
        f"Each point: the mean download time of the files requested in {ctx.choose(*REQUESTS):g} "
        f"minutes (about {data['files_mean'].mean():.0f} files per run), averaged over {n} seeds; "
        f"error bars ±1 standard deviation over the seeds. Mean download times: {times}."
    )

    def per(key):
        return ", ".join(f"{b:g} {per_ber[b][key]:+.0f}%" for b in bers)

    ranking = all(per_ber[b]["SCPS/2000"] > 0 and per_ber[b]["2000/NT"] > 0 for b in bers)
    m = {
        "fig9_ranking": Measure(
            ranking,
            f"SCPS against Windows 2000 per BER: {per('SCPS/2000')}; Windows 2000 against NT: "
            f"{per('2000/NT')}",
        ),
        "fig9_2000_over_nt_pct": Measure(imp["2000/NT"], f"per BER: {per('2000/NT')}"),
        "fig9_scps_over_nt_pct": Measure(imp["SCPS/NT"], f"per BER: {per('SCPS/NT')}"),
        "fig9_scps_over_2000_pct": Measure(imp["SCPS/2000"], f"per BER: {per('SCPS/2000')}"),
    }
    return FigureOut("fig9", fig, data, note), m


def fig_s2(ctx: Context, s9) -> FigureOut:
    variants = list(dict.fromkeys(select(s9, ber=S2_BER)["variant"]))
    fig, (ax,) = new_figure(width=8.6, height=4.6)
    keys = list(CLAIMED)
    width = 0.8 / len(keys)
    rows = []
    imp = {v: improvements(s9, v, [S2_BER]) for v in variants}
    for j, k in enumerate(keys):
        vals = [imp[v][k] for v in variants]
        x = np.arange(len(variants)) + (j - (len(keys) - 1) / 2) * width
        ax.bar(x, vals, width, color=style(j)["color"], label=f"{k} (paper: {CLAIMED[k]:g}%)")
        ax.scatter(x, [CLAIMED[k]] * len(x), marker="_", s=220, color="black", zorder=3)
        rows += [
            {"variant": v, "comparison": k, "reduction_pct": val}
            for v, val in zip(variants, vals, strict=True)
        ]
    ax.axhline(0, color="#444", linewidth=0.8)
    ax.set_xticks(np.arange(len(variants)), variants, fontsize=9)
    ax.set(
        ylabel="reduction of mean download time (%)",
        title=f"Figure 9 at BER {S2_BER:g}: ours and one setting changed at a time",
    )
    ax.scatter([], [], marker="_", s=220, color="black", label="the paper's figure")
    legend_outside(fig, ax)
    t = select(s9, ber=S2_BER)
    times = "; ".join(
        f"{v}: " + ", ".join(f"{short(st)} {t9(t, v, st, S2_BER):.0f} s" for st in STACKS)
        for v in variants
    )
    note = (
        f"Bars: 1 - T_a / T_b of the mean download times at BER {S2_BER:g} ({ctx.seeds(*SEEDS9)} "
        f"seeds); black marks: the paper's 30%, 60% and 40%. Mean download times: {times}."
    )
    return FigureOut("figS2", fig, pd.DataFrame(rows), note)
