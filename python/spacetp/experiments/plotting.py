"""Figure helpers shared by the paper modules: one look for every reproduction (matplotlib,
Agg backend; the caller saves PNG and SVG)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

# Series styles: distinct colour and marker, so curves stay apart in grey print too.
COLORS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#111111",
    "#17becf",
    "#bcbd22",
]
MARKERS = ["o", "s", "^", "v", "D", "<", ">", "*", "P", "X"]


def new_figure(width: float = 7.6, height: float = 4.6, ncols: int = 1):
    """A figure with `ncols` axes side by side and a constrained layout (room for legends)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), layout="constrained", squeeze=False)
    for ax in axes[0]:
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
    return fig, list(axes[0])


def style(i: int) -> dict:
    return {"color": COLORS[i % len(COLORS)], "marker": MARKERS[i % len(MARKERS)]}


def errorbar_series(ax, x, mean, err, label: str, i: int, **kw):
    """Means with error bars (the caller says in the axis note what the bars are)."""
    s = style(i)
    ax.errorbar(
        x,
        mean,
        yerr=err,
        label=label,
        color=s["color"],
        marker=s["marker"],
        markersize=kw.pop("markersize", 5),
        linewidth=kw.pop("linewidth", 1.3),
        capsize=3,
        elinewidth=0.9,
        **kw,
    )


def legend_outside(fig, ax, ncol: int = 1, title: str | None = None):
    """Legend to the right of the axes, outside the plot area."""
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        ncol=ncol,
        fontsize=9,
        title=title,
        frameon=False,
    )


def _plain(v, _pos=None) -> str:
    return f"{v:g}"


def _plain_minor(v, _pos=None) -> str:
    """Minor log ticks labelled only at 2 and 5 x 10^n: enough for an axis under 2 decades."""
    mantissa = round(v / 10 ** np.floor(np.log10(v)), 6) if v > 0 else 0
    return f"{v:g}" if mantissa in (2.0, 5.0) else ""


def plain_ticks(ax, which: str = "both") -> None:
    """Log-axis tick labels as plain numbers (0.001, 20, 5000) instead of 10^n and 2x10^1;
    an axis spanning less than two decades also gets labels at 2 and 5 x 10^n."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for name in ("x", "y") if which == "both" else (which,):
        axis = ax.xaxis if name == "x" else ax.yaxis
        if axis.get_scale() != "log":
            continue
        axis.set_major_formatter(FuncFormatter(_plain))
        lo, hi = sorted(ax.get_xlim() if name == "x" else ax.get_ylim())
        short = lo > 0 and hi / lo < 100
        axis.set_minor_formatter(FuncFormatter(_plain_minor) if short else NullFormatter())


def log_log(ax, ticks: str = "both", **labels) -> None:
    """Both axes logarithmic, the `labels` (xlabel, ylabel, title) set, and the tick labels of
    the `ticks` axes ("x", "y" or "both") plain numbers (`plain_ticks`)."""
    ax.set(xscale="log", yscale="log", **labels)
    plain_ticks(ax, ticks)


def dodge(x, i: int, n: int, width: float = 0.05):
    """Spread the series of a log-x plot a little so their error bars do not overlap: series
    `i` of `n`, shifted by a factor 10^(width x (i - (n - 1) / 2))."""
    return np.asarray(x, dtype=float) * 10 ** (width * (i - (n - 1) / 2))
