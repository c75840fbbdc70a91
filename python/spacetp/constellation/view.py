"""`spacetp schedule` of a constellation: each pair's round trip, hop count and path changes
over time, as a table, a CSV and a figure (Hypatia's RTT-and-path plots)."""

from __future__ import annotations

import math

import pandas as pd


def default_pairs(sc: dict) -> list[tuple[str, str]]:
    """Every flow's and traffic source's (from, to) and every workload's (server, client),
    once each."""
    out: list[tuple[str, str]] = []
    for part in ("flows", "traffic"):
        for f in sc.get(part) or []:
            if isinstance(f, dict) and isinstance(f.get("from"), str):
                out.append((f["from"], f["to"]))
    for w in sc.get("workloads") or []:
        if isinstance(w, dict) and isinstance(w.get("server"), str):
            out += [(w["server"], c) for c in w.get("clients") or [] if isinstance(c, str)]
    return list(dict.fromkeys(out))


def summary_rows(df: pd.DataFrame) -> list[dict]:
    """Per pair: RTT range, hop range, path changes, time without a path."""
    rows = []
    times = df["t_s"].drop_duplicates()
    step = float(times.diff().dropna().min()) if len(times) > 1 else math.nan
    for (a, b), g in df.groupby(["from", "to"], sort=False):
        rtt = g["rtt_s"].dropna() * 1e3
        reach = g[g["hops"] > 0]["hops"]
        rows.append(
            {
                "pair": f"{a} -> {b}",
                "rtt_ms": f"{rtt.min():.2f}-{rtt.max():.2f}" if len(rtt) else "no path",
                "hops": f"{reach.min()}-{reach.max()}" if len(reach) else "-",
                "path changes": int(g["changed"].sum()),
                "no path": f"{g['rtt_s'].isna().sum() * step:.1f} s",
            }
        )
    return rows


def plot(df: pd.DataFrame, path: str, title: str) -> None:
    """RTT and hop count of each pair over time, path changes marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = list(df.groupby(["from", "to"], sort=False))
    fig, axes = plt.subplots(len(pairs), 1, figsize=(9, 3.2 * len(pairs)), squeeze=False)
    for ax, ((a, b), g) in zip(axes[:, 0], pairs, strict=True):
        ax.plot(g["t_s"], g["rtt_s"] * 1e3, color="C0", lw=1.2, label="RTT")
        ax.set_ylabel("RTT (ms)", color="C0")
        for t in g[g["changed"]]["t_s"]:
            ax.axvline(t, color="0.8", lw=0.6, zorder=0)
        hops = ax.twinx()
        hops.step(g["t_s"], g["hops"], where="post", color="C1", lw=0.9, label="hops")
        hops.set_ylabel("hops", color="C1")
        ax.set_title(f"{a} -> {b}: {int(g['changed'].sum())} path changes (grey)", fontsize=10)
        ax.set_xlabel("time (s)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
