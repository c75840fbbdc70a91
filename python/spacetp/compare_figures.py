"""The figures of `spacetp compare`'s page: the ranking (mean and bootstrap 95% CI per
profile, a log axis beyond a 10x span) and the window over time of the best and the worst,
each as a zoomable Plotly figure and a matplotlib one for the PNG and SVG files."""

from __future__ import annotations

import math

from spacetp import human
from spacetp.html_page import e

FAMILY_COLORS = {
    "textbook": "#4C72B0", "linux": "#DD8452", "draft": "#C44E52", "scps": "#55A868",
    "scps-ri": "#2E8B57", "windows": "#8172B3", "quic": "#937860", "ltp": "#DA8BC3",
    "dtn": "#17BECF", "cfdp": "#BCBD22",
}  # fmt: skip
OTHER_COLOR = "#8C8C8C"


def family_color(family: str) -> str:
    return FAMILY_COLORS.get(family, OTHER_COLOR)


def value_role(c) -> str:
    return "completion" if c.rank_by == "completion" else "goodput"


def metric_name(role: str) -> str:
    return {"completion": "completion_s", "goodput": "goodput_bps"}[role]


def cell_text(c, row, role: str) -> str:
    return human.interval(metric_name(role), row[role], row[f"{role}_lo"], row[f"{role}_hi"])


def log_axis(c) -> bool:
    """Whether the ranking's axis is logarithmic: its values (means and interval bounds)
    span more than LOG_SPAN times."""
    role = value_role(c)
    t = c.table
    vals = [v for col in (role, f"{role}_lo", f"{role}_hi") for v in t[col].tolist()]
    vals = [float(v) for v in vals if v == v and v is not None and float(v) > 0]
    return bool(vals) and max(vals) > LOG_SPAN * min(vals)


LOG_SPAN = 10.0


def log_ticks(c) -> tuple[list[float], list[str]]:
    """Tick values of a log axis (1, 2, 3, 5 x 10^k inside the values' range) and their
    labels in units (`20 s`, `1 min`, `500 kb/s`)."""
    role = value_role(c)
    t = c.table
    vals = [float(v) for col in (role, f"{role}_lo", f"{role}_hi") for v in t[col].tolist()]
    vals = [v for v in vals if v == v and v > 0]
    if not vals:
        return [], []
    lo, hi = min(vals), max(vals)
    decades = range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
    nice = [m * 10.0**k for k in decades for m in (1, 2, 3, 5)]
    if role == "completion":  # whole minutes and hours read better than 3.33 min
        nice = [v for v in nice if v <= 100] + [60.0 * m for m in (3, 5, 10, 20, 30)]
        nice += [3600.0 * m for m in (1, 2, 5, 10, 20, 50, 100)]
    ticks = sorted(v for v in nice if lo / 1.2 <= v <= hi * 1.2)
    name = metric_name(role)
    return ticks, [human.metric(name, v) for v in ticks]


def _errors(t, role: str) -> tuple[list[float], list[float]]:
    """(below, above) the mean: the interval's arms (0 without an interval)."""
    lo = (t[role] - t[f"{role}_lo"]).fillna(0.0).clip(lower=0.0)
    hi = (t[f"{role}_hi"] - t[role]).fillna(0.0).clip(lower=0.0)
    return lo.tolist(), hi.tolist()


# ---------------------------------------------------------------------------- figures


def ranking_figure_mpl(c):
    from matplotlib.figure import Figure

    t = c.table
    role = value_role(c)
    n = max(len(t), 1)
    fig = Figure(figsize=(7.5, 0.32 * n + 1.4), layout="constrained")
    ax = fig.add_subplot()
    y = list(range(len(t)))[::-1]
    below, above = _errors(t, role)
    ax.barh(
        y,
        t[role].fillna(0),
        xerr=[below, above],
        color=[family_color(f) for f in t["family"]],
        capsize=2,
    )
    if log_axis(c):
        from matplotlib.ticker import NullFormatter

        ax.set_xscale("log")
        ticks, labels = log_ticks(c)
        ax.set_xticks(ticks, labels, fontsize=8)
        ax.xaxis.set_minor_formatter(NullFormatter())
    if role == "goodput" and t["model_bps"].notna().any():
        ax.plot(t["model_bps"], y, "kD", markersize=4, label="analytic model")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(y, [f"{r}. {p}" for r, p in zip(t["rank"], t["protocol"], strict=True)])
    ax.tick_params(axis="y", labelsize=8)
    scale = ", log scale" if log_axis(c) else ""
    if role == "completion":
        ax.set_xlabel(f"completion time (s), mean and 95% CI (bootstrap){scale}")
    else:
        ax.set_xlabel(f"goodput (b/s), mean and 95% CI (bootstrap){scale}")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(c.name, fontsize=9)
    return fig


def ranking_figure(c):
    import plotly.graph_objects as go

    t = c.table
    role = value_role(c)
    labels = [f"{r}. {p}" for r, p in zip(t["rank"], t["protocol"], strict=True)]
    hover = [
        f"{p}<br>{cell_text(c, row, role)}<br>{e(_limit_words(row))}"
        for p, (_, row) in zip(t["protocol"], t.iterrows(), strict=True)
    ]
    below, above = _errors(t, role)
    fig = go.Figure(
        go.Bar(
            x=t[role],
            y=labels,
            orientation="h",
            error_x={"type": "data", "symmetric": False, "array": above, "arrayminus": below},
            marker={"color": [family_color(f) for f in t["family"]]},
            hovertext=hover,
            hoverinfo="text",
            name="measured",
        )
    )
    if role == "goodput" and t["model_bps"].notna().any():
        fig.add_trace(
            go.Scatter(
                x=t["model_bps"], y=labels, mode="markers", name="analytic model",
                marker={"symbol": "diamond", "color": "black", "size": 8},
                hovertext=[f"{m}: {human.rate(v)}" for m, v in zip(
                    t["model"], t["model_bps"], strict=True)], hoverinfo="text",
            )
        )  # fmt: skip
    unit = "completion time (s)" if role == "completion" else "goodput (b/s)"
    log = log_axis(c)
    fig.update_layout(
        template="plotly_white",
        height=int(28 * len(t) + 130),
        margin={"l": 150, "r": 20, "t": 30, "b": 50},
        xaxis={
            "title": {"text": f"{unit}, mean and 95% CI (bootstrap){', log scale' if log else ''}"},
            "type": "log" if log else "linear",
            **(dict(zip(("tickvals", "ticktext"), log_ticks(c), strict=True)) if log else {}),
        },
        yaxis={"autorange": "reversed"},
        showlegend=role == "goodput",
    )
    return fig


def panel_title(c, proto: str, tr) -> str:
    which = "best" if proto == c.best else "worst"
    if _delivery(tr):
        return f"{which}: {proto} (no window: bytes sent and delivered)"
    return f"{which}: {proto}"


def _delivery(tr) -> bool:
    return bool(len(tr)) and tr["kind"].iloc[0] == "delivery"


def _window_series(c, tr) -> list[tuple[str, object, object]]:
    """(name, x, y in kB) of a panel: cwnd (when the transport has one) and bytes in flight;
    for a transport without a window, bytes sent on the first link and bytes delivered."""
    if _delivery(tr):
        out = []
        if tr["sent"].notna().any():
            out.append(("sent on the first link", tr["time_s"], tr["sent"] / 1e3))
        out.append(("delivered", tr["time_s"], tr["delivered"] / 1e3))
        return out
    out = []
    if (tr["cwnd"] > 0).any():
        out.append(("cwnd", tr["time_s"], tr["cwnd"] / 1e3))
    out.append(("bytes in flight", tr["time_s"], tr["in_flight"] / 1e3))
    return out


def window_figure_mpl(c):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.4), layout="constrained")
    mixed = any(_delivery(tr) for tr in c.traces.values())
    axes = fig.subplots(1, max(len(c.traces), 1), sharey=not mixed, squeeze=False)[0]
    for ax, (proto, tr) in zip(axes, c.traces.items(), strict=False):
        for name, x, y in _window_series(c, tr):
            ax.plot(x, y, label=name)
        if c.facts is not None and not _delivery(tr):
            ax.axhline(c.facts.bdp_bytes / 1e3, color="gray", ls="--", lw=1, label="BDP")
        ax.set_title(panel_title(c, proto, tr), fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("kB")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def window_figure(c):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = max(len(c.traces), 1)
    titles = [panel_title(c, p, tr) for p, tr in c.traces.items()]
    mixed = any(_delivery(tr) for tr in c.traces.values())
    fig = make_subplots(rows=1, cols=n, shared_yaxes=not mixed, subplot_titles=titles or [""])
    for i, (proto, tr) in enumerate(c.traces.items(), 1):
        for name, x, y in _window_series(c, tr):
            fig.add_trace(go.Scatter(x=x, y=y, name=f"{proto}: {name}", mode="lines"), row=1, col=i)
        if c.facts is not None and not _delivery(tr):
            fig.add_hline(y=c.facts.bdp_bytes / 1e3, line_dash="dash", line_color="gray",
                          row=1, col=i)  # fmt: skip
        fig.update_xaxes(title_text="time (s)", row=1, col=i)
        fig.update_yaxes(title_text="kB", row=1, col=i)
    fig.update_layout(template="plotly_white", height=380, margin={"t": 40, "b": 50})
    return fig


# ------------------------------------------------------------------------------- text


def _limit_words(r) -> str:
    """The row's "what limited it": failed and unfinished runs first, then the engine's
    analysis over the runs."""
    words = [r["unfinished"]] if r["unfinished"] else []
    return "; ".join([*words, r["limited_by"]])
