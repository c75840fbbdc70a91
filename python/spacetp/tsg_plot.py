"""Drawing a FlowView (spacetp.tsg): the time-sequence graph in the tcptrace / Wireshark
style, throughput over time and RTT over time; static (matplotlib: PNG, SVG, PDF) or
zoomable (Plotly: a standalone HTML page).

Time-sequence graph: each data segment is a vertical bar from its first to its last byte at
the time the capture saw it (blue; retransmissions red), the cumulative ACK a green step
line, the receive window's right edge an olive step line, SACK blocks purple bars, SNACK
holes orange bars, bytes never seen before a later segment magenta bars (lost upstream of
the capture) and transmissions presumed lost a black cross at their first byte.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from spacetp import human
from spacetp.errors import UserError
from spacetp.limit_bands import shade_mpl, shade_plotly

COLORS = {
    "data": "#1f4e99", "retx": "#d62728", "ack": "#2ca02c", "window": "#9a9a00",
    "SACK": "#9467bd", "SNACK": "#ff7f0e", "gap": "#e377c2", "lost": "#000000",
}  # fmt: skip
KINDS = ("tsg", "throughput", "rtt")


def _scale(view) -> tuple[float, str]:
    top = float(view.data["end"].max()) if len(view.data) else 1.0
    for unit, s in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if top >= 2 * s:
            return s, unit
    return 1.0, "B"


def _segments(t, lo, hi):
    """x and y lists of vertical bars separated by None (one trace, any number of bars)."""
    n = len(t)
    x = np.empty(3 * n, dtype=object)
    y = np.empty(3 * n, dtype=object)
    x[0::3], x[1::3], x[2::3] = t, t, None
    y[0::3], y[1::3], y[2::3] = lo, hi, None
    return x.tolist(), y.tolist()


def _window(view, tmin, tmax):
    def cut(f, col="t"):
        if not len(f):
            return f
        keep = np.ones(len(f), dtype=bool)
        if tmin is not None:
            keep &= f[col].to_numpy() >= tmin
        if tmax is not None:
            keep &= f[col].to_numpy() <= tmax
        return f[keep]

    return {k: cut(getattr(view, k)) for k in ("data", "acks", "blocks", "gaps", "lost", "rtt")}


def _subtitle(view) -> str:
    c = view.counts()
    parts = [f"{c['segments']} segments", f"{c['retransmissions']} retransmitted"]
    if c["gaps"]:
        parts.append(f"{c['gaps']} gaps")
    if c["presumed_lost"]:
        parts.append(f"{c['presumed_lost']} presumed lost")
    if c["sack_blocks"]:
        parts.append(f"{c['sack_blocks']} SACK blocks")
    if c["snack_holes"]:
        parts.append(f"{c['snack_holes']} SNACK holes")
    return ", ".join(parts)


# ------------------------------------------------------------------------------- static


def tsg_mpl(view, tmin=None, tmax=None):
    from matplotlib.figure import Figure

    w = _window(view, tmin, tmax)
    s, unit = _scale(view)
    fig = Figure(figsize=(10, 6), layout="constrained")
    ax = fig.add_subplot()
    shade_mpl(ax, view.limits, tmin, tmax)
    d = w["data"]
    for retx, name in ((False, "data"), (True, "retx")):
        part = d[d["retx"] == retx]
        if len(part):
            label = "retransmission" if retx else "data segment"
            ax.vlines(part["t"], part["start"] / s, part["end"] / s, color=COLORS[name],
                      lw=1.2, label=label)  # fmt: skip
    a = w["acks"]
    if len(a):
        ax.step(a["t"], a["ack"] / s, where="post", color=COLORS["ack"], lw=1, label="ACK")
        if a["edge"].notna().any():
            ax.step(a["t"], a["edge"] / s, where="post", color=COLORS["window"], lw=1,
                    label="receive window")  # fmt: skip
    b = w["blocks"]
    for kind in ("SACK", "SNACK"):
        part = b[b["kind"] == kind] if len(b) else b
        if len(part):
            label = "SACK block" if kind == "SACK" else "SNACK hole"
            ax.vlines(part["t"], part["left"] / s, part["right"] / s, color=COLORS[kind],
                      lw=2.5, label=label)  # fmt: skip
    if len(w["gaps"]):
        g = w["gaps"]
        ax.vlines(g["t"], g["start"] / s, g["end"] / s, color=COLORS["gap"], lw=2.5,
                  label="not captured (lost before the capture)")  # fmt: skip
    if len(w["lost"]):
        lo = w["lost"]
        ax.plot(lo["t"], lo["start"] / s, "x", color=COLORS["lost"], ms=6,
                label="presumed lost (sent again before any ACK)")  # fmt: skip
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"stream offset ({unit})")
    ax.set_title(f"{view.title}\n{view.source}: {_subtitle(view)}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def throughput_mpl(view, bin_s=None, tmin=None, tmax=None):
    from matplotlib.figure import Figure

    from spacetp.tsg import throughput

    th = throughput(view, bin_s)
    if tmin is not None or tmax is not None:
        th = th[(th["t"] >= (tmin or 0)) & (th["t"] <= (tmax if tmax is not None else np.inf))]
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    shade_mpl(ax, view.limits, tmin, tmax)
    ax.step(th["t"], th["sending_bps"] / 1e3, where="mid", label="sending rate", color="#1f4e99")
    ax.step(th["t"], th["goodput_bps"] / 1e3, where="mid", label="goodput (ACKed)",
            color=COLORS["ack"])  # fmt: skip
    if th["retransmitted_bps"].any():
        ax.step(th["t"], th["retransmitted_bps"] / 1e3, where="mid", label="retransmitted",
                color=COLORS["retx"])  # fmt: skip
    ax.set_xlabel("time (s)")
    ax.set_ylabel("kb/s")
    mean = 8 * view.data["len"].sum() / max(float(view.data["t"].max()), 1e-9)
    ax.set_title(f"{view.title}: throughput (mean sending rate {human.rate(mean)})", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def rtt_mpl(view, tmin=None, tmax=None):
    from matplotlib.figure import Figure

    r = _window(view, tmin, tmax)["rtt"]
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(r["t"], r["rtt_s"] * 1e3, ".", ms=3, color="#1f4e99", label="RTT sample (Karn)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RTT (ms)")
    med = float(np.median(r["rtt_s"])) if len(r) else float("nan")
    ax.set_title(f"{view.title}: RTT (median {human.duration(med)})", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# -------------------------------------------------------------------------- interactive


def _add(fig, x, y, name: str, color: str, width: float = 2, **kw) -> None:
    import plotly.graph_objects as go

    line = {"color": color, "width": width, **kw.pop("line", {})}
    fig.add_trace(go.Scattergl(x=x, y=y, mode=kw.pop("mode", "lines"), name=name, line=line, **kw))


def tsg_plotly(view, tmin=None, tmax=None):
    import plotly.graph_objects as go

    w = _window(view, tmin, tmax)
    s, unit = _scale(view)
    fig = go.Figure()
    shade_plotly(fig, view.limits, tmin, tmax)
    d = w["data"]
    for retx, name in ((False, "data"), (True, "retx")):
        part = d[d["retx"] == retx]
        if len(part):
            x, y = _segments(part["t"].to_numpy(), part["start"] / s, part["end"] / s)
            _add(fig, x, y, "retransmission" if retx else "data segment", COLORS[name])
    a = w["acks"]
    if len(a):
        _add(fig, a["t"], a["ack"] / s, "ACK", COLORS["ack"], 1.5, line={"shape": "hv"})
        if a["edge"].notna().any():
            edge = a["edge"] / s
            _add(fig, a["t"], edge, "receive window", COLORS["window"], 1.5, line={"shape": "hv"})
    b = w["blocks"]
    for kind in ("SACK", "SNACK"):
        part = b[b["kind"] == kind] if len(b) else b
        if len(part):
            x, y = _segments(part["t"].to_numpy(), part["left"] / s, part["right"] / s)
            _add(fig, x, y, f"{kind} {'block' if kind == 'SACK' else 'hole'}", COLORS[kind], 4)
    if len(w["gaps"]):
        g = w["gaps"]
        x, y = _segments(g["t"].to_numpy(), g["start"] / s, g["end"] / s)
        _add(fig, x, y, "not captured", COLORS["gap"], 4)
    if len(w["lost"]):
        lo = w["lost"]
        marker = {"symbol": "x", "color": "black", "size": 8}
        fig.add_trace(
            go.Scattergl(
                x=lo["t"], y=lo["start"] / s, mode="markers", name="presumed lost", marker=marker
            )
        )
    fig.update_layout(
        template="plotly_white",
        height=600,
        title={"text": f"{view.title}<br><sub>{view.source}: {_subtitle(view)}</sub>"},
        xaxis={"title": {"text": "time (s)"}},
        yaxis={"title": {"text": f"stream offset ({unit})"}},
    )
    return fig


def mpl_figure(kind: str, view, bin_s=None, tmin=None, tmax=None):
    if kind == "tsg":
        return tsg_mpl(view, tmin, tmax)
    if kind == "throughput":
        return throughput_mpl(view, bin_s, tmin, tmax)
    return rtt_mpl(view, tmin, tmax)


def save(kind: str, view, out: str | Path, bin_s=None, tmin=None, tmax=None) -> Path:
    """Draw `kind` ("tsg", "throughput", "rtt") of `view` into `out`: .html gives a
    standalone zoomable page, .png/.svg/.pdf a static figure."""
    from spacetp import interactive

    out = Path(out)
    if kind not in KINDS:
        raise UserError(f"plot {kind}: use one of {', '.join(KINDS)}")
    if out.suffix == ".html":
        fig = mpl_figure(kind, view, bin_s, tmin, tmax)
        pfig = tsg_plotly(view, tmin, tmax) if kind == "tsg" else interactive.from_matplotlib(fig)
        out.write_text(interactive.standalone(pfig, view.title), encoding="utf-8")
        return out
    fig = mpl_figure(kind, view, bin_s, tmin, tmax)
    try:
        fig.savefig(out, dpi=130)
    except ValueError as e:
        raise UserError(f"--out {out}: {e}") from None
    except OSError as e:
        raise UserError(f"--out {out}: cannot write it ({e.strerror})") from None
    return out
