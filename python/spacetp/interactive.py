"""Zoomable plots in spacetp's HTML pages (the reports of `reproduce`, `compare` and `sweep`,
`spacetp plot ... --out X.html`), drawn with Plotly.

Plotly was chosen over Bokeh because its pip package carries its whole JavaScript library
(`plotly.offline.get_plotlyjs()`, no CDN, no network at any time) and depends only on
`narwhals` and `packaging`; Bokeh's offline mode needs its own resources set up and pulls in
Tornado, Jinja2, Pillow and PyYAML. A report directory gets one copy of the library,
`plotly.min.js`, beside its page (`script_tag`); a single-file page inlines it
(`inline_script`). The static PNG/SVG figures stay, made by matplotlib, for papers.

`from_matplotlib` turns a matplotlib figure into a Plotly one (lines, markers, error bars,
filled bands, bars, reference lines, log axes, subplots and twin axes, labels and limits), so
that every figure a paper reproduction draws gets its zoomable twin without being drawn twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

JS_NAME = "plotly.min.js"
CONFIG = {"displaylogo": False, "responsive": True, "toImageButtonOptions": {"scale": 2}}


def script_tag(out_dir: str | Path) -> str:
    """Write plotly.min.js into `out_dir` (once) and return the tag that loads it."""
    from plotly.offline import get_plotlyjs

    target = Path(out_dir) / JS_NAME
    js = get_plotlyjs()
    if not target.exists() or target.stat().st_size != len(js.encode("utf-8")):
        target.write_text(js, encoding="utf-8")
    return f'<script src="{JS_NAME}" charset="utf-8"></script>'


def inline_script() -> str:
    """The whole Plotly library in a script tag, for a page that must stand alone."""
    from plotly.offline import get_plotlyjs

    return f'<script type="text/javascript">{get_plotlyjs()}</script>'


def div(fig, div_id: str) -> str:
    """A figure as a <div> (the library loaded once by the page, not here)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG)


def standalone(fig, title: str) -> str:
    """A complete page holding one figure, the library inlined: works opened from anywhere."""
    from spacetp.html_page import END, head

    return f"{head(title, script=inline_script())}{div(fig, 'plot')}{END}\n"


# ------------------------------------------------------------------- matplotlib to plotly

_DASH = {"-": "solid", "--": "dash", ":": "dot", "-.": "dashdot", "solid": "solid"}
_DASH |= {"dashed": "dash", "dotted": "dot", "dashdot": "dashdot"}
_MARKER = {"o": "circle", "s": "square", "^": "triangle-up", "v": "triangle-down", "D": "diamond"}
_MARKER |= {"d": "diamond", "x": "x", "+": "cross", "*": "star", "<": "triangle-left"}
_MARKER |= {">": "triangle-right", "p": "pentagon", "h": "hexagon", ".": "circle"}


def _hex(color) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color, keep_alpha=False)


def _rgba(color, alpha: float | None = None) -> str:
    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(color)
    a = a if alpha is None else alpha
    return f"rgba({int(r * 255)},{int(g * 255)},{int(b * 255)},{a:.3g})"


def _label(artist) -> str | None:
    label = artist.get_label()
    return None if not label or label.startswith("_") else str(label)


def _floats(values) -> list:
    import numpy as np

    a = np.ma.filled(np.ma.asarray(values, dtype=float), np.nan)
    return [None if not np.isfinite(v) else float(v) for v in a]


def _line_trace(ax, line) -> dict | None:
    """A Line2D as a scatter trace; lines drawn in axes coordinates across the plot (axhline,
    axvline) are spread over the axis limits."""
    import numpy as np

    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    tr = line.get_transform()
    if tr == ax.get_yaxis_transform():  # axhline: x in axes fraction
        lo, hi = ax.get_xlim()
        x = lo + x * (hi - lo)
    elif tr == ax.get_xaxis_transform():  # axvline: y in axes fraction
        lo, hi = ax.get_ylim()
        y = lo + y * (hi - lo)
    elif tr != ax.transData:
        return None
    ls, marker = line.get_linestyle(), line.get_marker()
    has_line = ls not in ("None", "", " ", "none")
    has_marker = marker not in (None, "None", "", " ", "none") and marker in _MARKER
    if not has_line and not has_marker:
        return None
    mode = "+".join(m for m, on in (("lines", has_line), ("markers", has_marker)) if on)
    color = _hex(line.get_color())
    trace = {"type": "scatter", "x": _floats(x), "y": _floats(y), "mode": mode, "name": ""}
    if has_line:
        trace["line"] = {
            "color": color,
            "width": max(float(line.get_linewidth()) * 1.3, 1.0),
            "dash": _DASH.get(ls if isinstance(ls, str) else "-", "solid"),
        }
    if has_marker:
        face = line.get_markerfacecolor()
        trace["marker"] = {
            "color": color if face in ("none", "None") else _hex(face),
            "symbol": _MARKER[marker] + ("-open" if face in ("none", "None") else ""),
            "size": max(float(line.get_markersize()) * 1.2, 4.0),
        }
    return trace


def _collection_traces(ax, coll) -> list[dict]:
    """Scatter points, segments (error bars, vlines) and filled polygons (fill_between)."""
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection

    out: list[dict] = []
    if isinstance(coll, LineCollection):
        if coll.get_transform() != ax.transData:
            return out
        xs, ys = [], []
        for seg in coll.get_segments():
            seg = np.asarray(seg, dtype=float)
            if seg.ndim != 2 or len(seg) == 0:
                continue  # an error bar of no length (one replicate: no spread)
            xs += [*seg[:, 0].tolist(), None]
            ys += [*seg[:, 1].tolist(), None]
        colors = coll.get_colors()
        color = _hex(colors[0]) if len(colors) else "#444444"
        out.append(
            {"type": "scatter", "x": xs, "y": ys, "mode": "lines", "name": "",
             "line": {"color": color, "width": 1.2}}
        )  # fmt: skip
    elif isinstance(coll, PathCollection):
        if coll.get_offset_transform() != ax.transData:
            return out
        pts = np.asarray(coll.get_offsets(), dtype=float)
        if pts.size == 0:
            return out
        faces = coll.get_facecolors()
        color = _hex(faces[0]) if len(faces) else "#1f77b4"
        sizes = coll.get_sizes()
        size = float(np.sqrt(sizes[0])) * 1.2 if len(sizes) else 6.0
        out.append(
            {"type": "scatter", "x": _floats(pts[:, 0]), "y": _floats(pts[:, 1]),
             "mode": "markers", "name": "", "marker": {"color": color, "size": max(size, 4.0)}}
        )  # fmt: skip
    elif isinstance(coll, PolyCollection):
        if coll.get_transform() != ax.transData:
            return out
        faces = coll.get_facecolors()
        fill = _rgba(faces[0]) if len(faces) else "rgba(31,119,180,0.2)"
        for path in coll.get_paths():
            v = np.asarray(path.vertices, dtype=float)
            out.append(
                {"type": "scatter", "x": _floats(v[:, 0]), "y": _floats(v[:, 1]),
                 "mode": "lines", "fill": "toself", "fillcolor": fill, "name": "",
                 "line": {"width": 0}, "hoverinfo": "skip"}
            )  # fmt: skip
    return out


def _bar_traces(ax) -> list[dict]:
    from matplotlib.container import BarContainer

    out = []
    for cont in ax.containers:
        if not isinstance(cont, BarContainer) or not cont.patches:
            continue
        horizontal = getattr(cont, "orientation", "vertical") == "horizontal"
        rects = cont.patches
        color = _hex(rects[0].get_facecolor())
        if horizontal:
            pos = [r.get_y() + r.get_height() / 2 for r in rects]
            val = [r.get_width() for r in rects]
            trace = {"type": "bar", "orientation": "h", "y": pos, "x": val, "base": None}
            trace["width"] = [r.get_height() for r in rects]
            trace["base"] = [r.get_x() for r in rects]
        else:
            pos = [r.get_x() + r.get_width() / 2 for r in rects]
            val = [r.get_height() for r in rects]
            trace = {"type": "bar", "x": pos, "y": val, "width": [r.get_width() for r in rects]}
            trace["base"] = [r.get_y() for r in rects]
        trace |= {"marker": {"color": color}, "name": _label(cont) or ""}
        trace["showlegend"] = bool(_label(cont))
        out.append(trace)
    return out


def _container_labels(ax) -> dict[int, str]:
    """{id(data line): label} of error-bar containers: errorbar() labels the container."""
    from matplotlib.container import ErrorbarContainer

    out = {}
    for cont in ax.containers:
        if isinstance(cont, ErrorbarContainer) and cont[0] is not None and _label(cont):
            out[id(cont[0])] = _label(cont)
    return out


def _axis(ax, which: str) -> dict:
    scale = ax.get_xscale() if which == "x" else ax.get_yscale()
    label = ax.get_xlabel() if which == "x" else ax.get_ylabel()
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    d: dict[str, Any] = {"title": {"text": label}, "showgrid": True, "zeroline": False}
    if scale == "log" and lo > 0 and hi > 0:
        import math

        d |= {"type": "log", "range": [math.log10(lo), math.log10(hi)], "exponentformat": "power"}
    else:
        d["range"] = [lo, hi]
    return d


def from_matplotlib(fig) -> Any:
    """A Plotly figure with the content of a matplotlib figure (see the module docstring)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    main, twins = [], {}
    for ax in fig.axes:
        spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
        if spec is None:
            continue
        key = (spec.rowspan.start, spec.colspan.start)
        if key in twins:
            twins[key].append(ax)
        else:
            twins[key] = [ax]
            main.append((ax, spec))
    if not main:
        return go.Figure()
    gs = main[0][1].get_gridspec()
    rows, cols = gs.nrows, gs.ncols
    specs = [[None] * cols for _ in range(rows)]
    for _ax, spec in main:
        r, c = spec.rowspan.start, spec.colspan.start
        specs[r][c] = {
            "secondary_y": len(twins[(r, c)]) > 1,
            "rowspan": len(spec.rowspan),
            "colspan": len(spec.colspan),
        }
    titles = []
    for r in range(rows):
        for c in range(cols):
            if specs[r][c] is not None:
                ax = twins[(r, c)][0]
                titles.append(ax.get_title() or "")
    out = make_subplots(rows=rows, cols=cols, specs=specs, subplot_titles=titles)
    for _ax, spec in main:
        r, c = spec.rowspan.start + 1, spec.colspan.start + 1
        for k, a in enumerate(twins[(r - 1, c - 1)][:2]):
            secondary = k == 1
            named = _container_labels(a)
            traces = [t for t in (_line_trace(a, ln) for ln in a.get_lines()) if t]
            labelled = [
                named.get(id(ln)) or _label(ln) for ln in a.get_lines() if _line_trace(a, ln)
            ]
            for t, lab in zip(traces, labelled, strict=True):
                t["name"], t["showlegend"] = lab or "", bool(lab)
            for coll in a.collections:
                for t in _collection_traces(a, coll):
                    lab = _label(coll)
                    t["name"], t["showlegend"] = lab or "", bool(lab)
                    traces.append(t)
            traces += _bar_traces(a)
            for t in traces:
                kind = t.pop("type")
                trace = go.Bar(**t) if kind == "bar" else go.Scatter(**t)
                if specs[r - 1][c - 1]["secondary_y"]:
                    out.add_trace(trace, row=r, col=c, secondary_y=secondary)
                else:
                    out.add_trace(trace, row=r, col=c)
            xa, ya = _axis(a, "x"), _axis(a, "y")
            out.update_xaxes(**xa, row=r, col=c)
            if specs[r - 1][c - 1]["secondary_y"]:
                out.update_yaxes(**ya, row=r, col=c, secondary_y=secondary)
            else:
                out.update_yaxes(**ya, row=r, col=c)
    w, h = fig.get_size_inches()
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else None
    out.update_layout(
        template="plotly_white",
        height=int(max(h * 95, 380)),
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"font": {"size": 11}},
        title={"text": title} if title else None,
        barmode="overlay",
    )
    return out
