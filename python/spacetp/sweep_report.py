"""The page of a sweep: STORE/report.html, written by `spacetp sweep` after every run and by
`spacetp results STORE --html FILE`. It shows the summary table (mean ± 95% CI per grid
point, in units) and, for each numeric parameter, one zoomable plot per metric with its
95% confidence intervals (one line per value of a second parameter when there are two); the
static figures come from `spacetp plot`, as before."""

from __future__ import annotations

from pathlib import Path

from spacetp import human, interactive
from spacetp.html_page import END, e, head
from spacetp.limits import LIFT_SHARE
from spacetp.stats import column

MAX_PLOTS = 8


def _numeric_params(res) -> list[tuple[str, object]]:
    """(parameter, its values in SI units) for every parameter whose values are numbers."""
    from spacetp.plot import numeric
    from spacetp.scenario import ScenarioError

    out = []
    for p in res.params:
        try:
            xs, kind = numeric(list(res.summary[p]), p)
        except ScenarioError:
            continue
        out.append((p, xs, kind))
    return out


def figures(res) -> list[tuple[str, object]]:
    """[(title, plotly figure)]: each metric against each numeric parameter (the other
    parameter, if there is exactly one more, as one line per value)."""
    import numpy as np
    import plotly.graph_objects as go

    from spacetp import units

    figs = []
    nums = _numeric_params(res)
    if len(res.params) > 2:
        return figs
    for p, xs, kind in nums:
        others = [q for q in res.params if q != p]
        hue = others[0] if others else None
        groups = [(None, np.ones(len(xs), dtype=bool))]
        if hue is not None:
            groups = [
                (h, (res.summary[hue] == h).to_numpy()) for h in dict.fromkeys(res.summary[hue])
            ]
        for m in res.metrics:
            if len(figs) >= MAX_PLOTS:
                return figs
            fig = go.Figure()
            for h, mask in groups:
                order = np.argsort(xs[mask], kind="stable")
                mean = res.summary[column(m, "mean")].to_numpy(dtype=float)[mask][order]
                ci = res.summary[column(m, "ci95")].to_numpy(dtype=float)[mask][order]
                x = xs[mask][order]
                text = [human.with_ci(m, a, b) for a, b in zip(mean, ci, strict=True)]
                fig.add_trace(
                    go.Scatter(
                        x=x, y=mean, mode="lines+markers",
                        error_y={"type": "data", "array": np.nan_to_num(ci).tolist()},
                        name=f"{hue} = {h}" if hue else m, hovertext=text,
                    )
                )  # fmt: skip
            unit = units.si_unit(kind)
            y_unit = human.axis_label(m)
            fig.update_layout(
                template="plotly_white", height=400, margin={"t": 40, "b": 50},
                title={"text": f"{m} against {p}"},
                xaxis={"title": {"text": f"{p} ({unit})" if unit else p}},
                yaxis={"title": {"text": f"{m} ({y_unit})" if y_unit else m}},
                showlegend=hue is not None,
            )  # fmt: skip
            figs.append((f"{m} against {p}", fig))
    return figs


def _table(res) -> str:
    head = "".join(f"<th>{e(p)}</th>" for p in res.params) + "<th>ok/runs</th>"
    head += "".join(f"<th>{e(m)}</th>" for m in res.metrics)
    lim = "flows[0].limit" in res.summary.columns
    if lim:
        head += "<th>flows[0]: what limited it (mean share over the runs)</th>"
    rows = [f"<tr>{head}</tr>"]
    for row in res.summary.to_dict("records"):
        cells = [f"<td>{e(row[p])}</td>" for p in res.params]
        cells.append(f"<td class='num'>{row['ok']}/{row['runs']}</td>")
        for m in res.metrics:
            v = human.with_ci(m, row[column(m, "mean")], row[column(m, "ci95")])
            cells.append(f"<td class='num'>{e(v)}</td>")
        if lim:
            cells.append(f"<td>{e(_limit_words(row))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return "<table>" + "\n".join(rows) + "</table>"


def _limit_words(row: dict) -> str:
    """flows[0]'s failed runs with their reason, and the sentence of its state with the
    largest mean share (then the largest liftable one, when the link leads)."""
    words = []
    if row.get("flows[0].failed_runs"):
        words.append(
            f"did not finish in {int(row['flows[0].failed_runs'])} of {row['ok']} runs: "
            f"{row['flows[0].failure']}"
        )
    if isinstance(row.get("flows[0].limit_text"), str):
        words.append(row["flows[0].limit_text"])
        lift = row.get("flows[0].liftable_share")
        if row["flows[0].limit"] == "link" and lift == lift and (lift or 0) >= LIFT_SHARE:
            words.append("then " + row["flows[0].liftable_text"])
    return "; ".join(words) or "-"


# The page's own classes, over the shared style sheet (html_page.STYLE).
CSS = """
table { width: auto; font-size: 0.88em; } th, td { vertical-align: middle; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 1em; }
"""


def write(res, out: str | Path) -> Path:
    """Write the page of a SweepResult to `out` (a directory: OUT/report.html, or a file)."""
    out = Path(out)
    page = out / "report.html" if out.is_dir() or not out.suffix else out
    page.parent.mkdir(parents=True, exist_ok=True)
    figs = figures(res)
    name = res.plan.base.get("name") or res.plan.source or "sweep"
    s = res.stats
    plots = "".join(interactive.div(f, f"plot{i}") for i, (_, f) in enumerate(figs))
    if not figs:
        plots = (
            "<p class='muted'>No plot: no parameter with numeric values, or more than two "
            "parameters (draw one with spacetp plot STORE --x ... --where ...).</p>"
        )
    body = [
        head(f"Sweep: {name}", CSS, interactive.script_tag(page.parent) if figs else ""),
        f"<h1>Sweep: {e(name)}</h1>",
        f"<p class='muted'>{e(res.plan.source or '')} &middot; {res.plan.reps} replicates per "
        f"point; {s.get('ok', 0)} runs ok, {s.get('failed', 0)} failed, "
        f"{s.get('missing', 0)} missing; store {e(res.store)}</p>",
        "<h2>Mean and 95% confidence interval per point</h2>",
        _table(res),
        "<h2>Plots (zoom: drag; reset: double-click)</h2>",
        f"<div class='grid'>{plots}</div>",
        "<p class='muted'>Static figures for papers: spacetp plot STORE --x PARAM --y METRIC "
        "--out FIGURE.png (or .svg, .pdf). Every run: spacetp results STORE --runs --csv "
        "FILE.</p>",
        END,
    ]
    page.write_text("\n".join(body) + "\n", encoding="utf-8")
    return page
