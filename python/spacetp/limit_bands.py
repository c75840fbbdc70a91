"""The limit analysis drawn behind a flow's graphs: its limit states over time (the engine's
timeline, `Result.limit_intervals`) as shaded bands, one colour per state.

A long flow changes state thousands of times (the link and its window take turns within a
round trip), more than a figure can show: the bands are the dominant state of each of
`BINS` equal slices of the time shown, runs of the same state joined.
"""

from __future__ import annotations

import numpy as np

# One colour per state, light enough under the data (alpha below).
COLORS = {
    "link": "#2ca02c", "handshake": "#7f7f7f", "congestion_window": "#1f77b4",
    "receive_window": "#ff7f0e", "slow_reader": "#bcbd22", "send_buffer": "#8c564b",
    "rate_control": "#9467bd", "pacing": "#e377c2", "ltp_sessions": "#17becf",
    "bundle_storage": "#aec7e8", "return_path": "#d62728", "recovery": "#000000",
    "application": "#c7c7c7", "link_down": "#393b79", "propagation": "#dbdb8d",
}  # fmt: skip
ALPHA = 0.14
BINS = 400


def bands(intervals, tmin: float | None = None, tmax: float | None = None, bins: int = BINS):
    """(start, end, state) of the dominant state in each slice of [tmin, tmax], runs joined;
    empty without intervals."""
    if intervals is None or not len(intervals):
        return []
    s = intervals["start_s"].to_numpy(dtype=float)
    e = intervals["end_s"].to_numpy(dtype=float)
    states = intervals["state"].to_numpy()
    lo = float(s.min()) if tmin is None else tmin
    hi = float(e.max()) if tmax is None else tmax
    if not hi > lo:
        return []
    edges = np.linspace(lo, hi, bins + 1)
    names = sorted(set(states))
    # Time of each state in each slice: overlap of every interval with every slice.
    share = np.zeros((len(names), bins))
    idx = {n: i for i, n in enumerate(names)}
    first = np.searchsorted(edges, s, side="right") - 1
    last = np.searchsorted(edges, e, side="left") - 1
    for k in range(len(s)):
        for b in range(max(first[k], 0), min(last[k], bins - 1) + 1):
            share[idx[states[k]], b] += max(0.0, min(e[k], edges[b + 1]) - max(s[k], edges[b]))
    out: list[tuple[float, float, str]] = []
    for b in range(bins):
        if share[:, b].max() <= 0:
            continue
        name = names[int(share[:, b].argmax())]
        if out and out[-1][2] == name and out[-1][1] == edges[b]:
            out[-1] = (out[-1][0], edges[b + 1], name)
        else:
            out.append((edges[b], edges[b + 1], name))
    return out


def shade_mpl(ax, intervals, tmin=None, tmax=None) -> None:
    """Shade matplotlib axes `ax` with the bands, each state once in the legend."""
    seen = set()
    for a, b, name in bands(intervals, tmin, tmax):
        label = None if name in seen else f"limited by: {name.replace('_', ' ')}"
        seen.add(name)
        ax.axvspan(a, b, color=COLORS.get(name, "#cccccc"), alpha=ALPHA, lw=0, label=label)


def shade_plotly(fig, intervals, tmin=None, tmax=None) -> None:
    """Shade a Plotly figure with the bands, each state once in the legend."""
    import plotly.graph_objects as go

    seen = set()
    for a, b, name in bands(intervals, tmin, tmax):
        color = COLORS.get(name, "#cccccc")
        fig.add_vrect(x0=a, x1=b, fillcolor=color, opacity=ALPHA, layer="below", line_width=0)
        if name not in seen:
            seen.add(name)
            label = f"limited by: {name.replace('_', ' ')}"
            marker = {"color": color, "symbol": "square", "size": 12, "opacity": 0.5}
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label, marker=marker))
