"""The page of `spacetp compare` (DIR/report.html) and the files beside it: ranking.png/.svg
(the bar chart), window.png/.svg (window and bytes in flight of the best and the worst over
time), ranking.csv (the table), runs.csv (every run), window.csv (the two traces) and
plotly.min.js (the zoomable plots, offline). Every number is written in its unit
(spacetp.human)."""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path

from spacetp import human, interactive

FAMILY_COLORS = {
    "textbook": "#4C72B0", "linux": "#DD8452", "draft": "#C44E52", "scps": "#55A868",
    "scps-ri": "#2E8B57", "windows": "#8172B3", "quic": "#937860", "ltp": "#DA8BC3",
}  # fmt: skip
OTHER_COLOR = "#8C8C8C"

CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1300px; padding: 0 1em;
       color: #222; line-height: 1.4; }
h1 { font-size: 1.45em; margin-bottom: 0.2em; } h2 { margin-top: 1.6em; font-size: 1.15em;
     border-bottom: 1px solid #ddd; }
.answer { font-size: 1.12em; background: #f3f7fb; border-left: 4px solid #4C72B0;
          padding: 0.6em 0.9em; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.5em; vertical-align: top; text-align: left; }
th { background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; }
tr.best td { background: #eaf6ea; } .muted { color: #666; font-size: 0.88em; }
.files a { margin-right: 0.8em; }
"""


def _e(text) -> str:
    return html.escape(str(text))


def _color(family: str) -> str:
    return FAMILY_COLORS.get(family, OTHER_COLOR)


def _value_role(c) -> str:
    return "completion" if c.rank_by == "completion" else "goodput"


def _metric_name(role: str) -> str:
    return {"completion": "completion_s", "goodput": "goodput_bps"}[role]


def _cell(c, row, role: str) -> str:
    return human.with_ci(_metric_name(role), row[role], row[f"{role}_ci"])


# ---------------------------------------------------------------------------- figures


def ranking_figure_mpl(c):
    from matplotlib.figure import Figure

    t = c.table
    role = _value_role(c)
    n = max(len(t), 1)
    fig = Figure(figsize=(7.5, 0.32 * n + 1.4), layout="constrained")
    ax = fig.add_subplot()
    y = list(range(len(t)))[::-1]
    ax.barh(
        y,
        t[role],
        xerr=t[f"{role}_ci"].fillna(0),
        color=[_color(f) for f in t["family"]],
        capsize=2,
    )
    if role == "goodput" and t["model_bps"].notna().any():
        ax.plot(t["model_bps"], y, "kD", markersize=4, label="analytic model")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(y, [f"{r}. {p}" for r, p in zip(t["rank"], t["protocol"], strict=True)])
    ax.tick_params(axis="y", labelsize=8)
    if role == "completion":
        ax.set_xlabel("completion time (s), mean and 95% CI")
    else:
        ax.set_xlabel("goodput (b/s), mean and 95% CI")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(c.name, fontsize=9)
    return fig


def ranking_figure(c):
    import plotly.graph_objects as go

    t = c.table
    role = _value_role(c)
    labels = [f"{r}. {p}" for r, p in zip(t["rank"], t["protocol"], strict=True)]
    hover = [
        f"{p}<br>{_cell(c, row, role)}<br>{_e(row['notes'])}"
        for p, (_, row) in zip(t["protocol"], t.iterrows(), strict=True)
    ]
    fig = go.Figure(
        go.Bar(
            x=t[role],
            y=labels,
            orientation="h",
            error_x={"type": "data", "array": t[f"{role}_ci"].fillna(0).tolist()},
            marker={"color": [_color(f) for f in t["family"]]},
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
    fig.update_layout(
        template="plotly_white",
        height=int(28 * len(t) + 130),
        margin={"l": 150, "r": 20, "t": 30, "b": 50},
        xaxis={"title": {"text": f"{unit}, mean and 95% CI"}},
        yaxis={"autorange": "reversed"},
        showlegend=role == "goodput",
    )
    return fig


def window_figure_mpl(c):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.4), layout="constrained")
    axes = fig.subplots(1, max(len(c.traces), 1), sharey=True, squeeze=False)[0]
    for ax, (proto, tr) in zip(axes, c.traces.items(), strict=False):
        if (tr["cwnd"] > 0).any():
            ax.plot(tr["time_s"], tr["cwnd"] / 1e3, label="cwnd")
        ax.plot(tr["time_s"], tr["in_flight"] / 1e3, label="bytes in flight")
        if c.facts is not None:
            ax.axhline(c.facts.bdp_bytes / 1e3, color="gray", ls="--", lw=1, label="BDP")
        ax.set_title(f"{'best' if proto == c.best else 'worst'}: {proto}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("kB")
    return fig


def window_figure(c):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = max(len(c.traces), 1)
    titles = [f"{'best' if p == c.best else 'worst'}: {p}" for p in c.traces]
    fig = make_subplots(rows=1, cols=n, shared_yaxes=True, subplot_titles=titles or [""])
    for i, (proto, tr) in enumerate(c.traces.items(), 1):
        if (tr["cwnd"] > 0).any():
            fig.add_trace(
                go.Scatter(x=tr["time_s"], y=tr["cwnd"] / 1e3, name=f"{proto}: cwnd",
                           mode="lines"), row=1, col=i,
            )  # fmt: skip
        fig.add_trace(
            go.Scatter(x=tr["time_s"], y=tr["in_flight"] / 1e3, name=f"{proto}: in flight",
                       mode="lines"), row=1, col=i,
        )  # fmt: skip
        if c.facts is not None:
            fig.add_hline(y=c.facts.bdp_bytes / 1e3, line_dash="dash", line_color="gray",
                          row=1, col=i)  # fmt: skip
        fig.update_xaxes(title_text="time (s)", row=1, col=i)
    fig.update_yaxes(title_text="kB", row=1, col=1)
    fig.update_layout(template="plotly_white", height=380, margin={"t": 40, "b": 50})
    return fig


# ------------------------------------------------------------------------------- text


def path_text(c) -> str:
    f = c.facts
    if f is None:
        return "The path runs through [topology] templates: its facts and the models are not read."
    parts = [
        f"{human.rate(f.rate_bps)} forward, {human.rate(f.ack_rate_bps)} return",
        f"round trip {human.duration(f.rtt_s)} (propagation)",
        f"bandwidth-delay product {human.size(f.bdp_bytes)}",
    ]
    if f.loss:
        parts.append(f"{f.loss_text}: {human.percent(f.loss)} of {f.mtu}-byte packets lost")
    if f.bytes is not None:
        parts.append(f"a {human.size(f.bytes)} transfer")
    if f.varying:
        parts.append("; ".join(f.varying))
    return "; ".join(parts) + "."


def answer(c) -> str:
    t = c.table
    if t.empty:
        return "No profile could run on this scenario (see the list below)."
    role = _value_role(c)
    best, worst = t.iloc[0], t.iloc[-1]
    verb = "moves the data in" if role == "completion" else "reaches"
    text = (
        f"On this link <b>{_e(best['protocol'])}</b> {verb} {_e(_cell(c, best, role))}"
        f" ({_e(human.rate(best['goodput']))})"
    )
    if len(t) > 1:
        second = t.iloc[1]
        lo1, hi1 = best[role] - best[f"{role}_ci"], best[role] + best[f"{role}_ci"]
        lo2, hi2 = second[role] - second[f"{role}_ci"], second[role] + second[f"{role}_ci"]
        if hi1 >= lo2 and hi2 >= lo1:
            text += (
                f"; <b>{_e(second['protocol'])}</b> is within its 95% confidence interval "
                f"({_e(_cell(c, second, role))}), a tie at {c.reps} replicates"
            )
        text += (
            f"; the last, <b>{_e(worst['protocol'])}</b>, "
            f"{'needs' if role == 'completion' else 'gets'} {_e(_cell(c, worst, role))}"
        )
    own = c.scenario.get("flows", [{}])[0].get("protocol", "newreno")
    mine = t[t["protocol"] == own]
    if len(mine) and own not in (best["protocol"], worst["protocol"]):
        r = mine.iloc[0]
        text += (
            f". The scenario's own <b>{_e(own)}</b> ranks {int(r['rank'])} of {len(t)} "
            f"({_e(_cell(c, r, role))})"
        )
    return text + "."


def _table_html(c) -> str:
    t = c.table
    role = _value_role(c)
    first = "completion time" if role == "completion" else "goodput"
    head = (
        f"<tr><th>#</th><th>protocol</th><th>{first} (95% CI)</th>"
        + ("<th>goodput (95% CI)</th>" if role == "completion" else "")
        + "<th>analytic model</th><th>retransmissions per run</th><th>timeouts per run</th>"
        "<th>what limited it</th></tr>"
    )
    rows = [head]
    for i, (_, r) in enumerate(t.iterrows()):
        model = "-"
        if r["model_bps"] == r["model_bps"] and r["model_bps"] is not None:
            ratio = r["goodput"] / r["model_bps"] if r["model_bps"] else float("nan")
            model = (
                f"{_e(human.rate(r['model_bps']))} <span class='muted'>({_e(r['model'])}; "
                f"measured/model {human.number(ratio, 2)})</span>"
            )
        else:
            model = f"<span class='muted' title='{_e(r['model_why'])}'>none</span>"
        cells = [
            f"<td class='num'>{int(r['rank'])}</td>",
            f"<td title='{_e(r['description'])}'><b>{_e(r['protocol'])}</b> "
            f"<span class='muted'>{_e(r['family'])}</span></td>",
            f"<td class='num'>{_e(_cell(c, r, role))}</td>",
        ]
        if role == "completion":
            cells.append(f"<td class='num'>{_e(_cell(c, r, 'goodput'))}</td>")
        cells += [
            f"<td>{model}</td>",
            f"<td class='num'>{_e(human.number(r['retx']))}</td>",
            f"<td class='num'>{_e(human.number(r['timeouts']))}</td>",
            f"<td>{_e(r['notes'])}</td>",
        ]
        rows.append(f"<tr class='{'best' if i == 0 else ''}'>{''.join(cells)}</tr>")
    return "<table>" + "\n".join(rows) + "</table>"


def _legend(c) -> str:
    fams = list(dict.fromkeys(c.table["family"])) if not c.table.empty else []
    items = "".join(
        f"<span style='display:inline-block;width:0.9em;height:0.9em;background:{_color(f)};"
        f"margin:0 0.3em 0 1em;vertical-align:middle'></span>{_e(f)}"
        for f in fams
    )
    return f"<p class='muted'>Colour: the profile's family {items}</p>"


def html_page(c, script: str) -> str:
    from spacetp.sweep import _version

    st = c.sweep.stats
    runs = len(c.sweep.runs)
    facts = [
        f"{len(c.protocols)} profiles x {c.reps} replicates = {runs} runs "
        f"({st.get('computed', 0)} computed, {st.get('cached', 0)} from the store); "
        f"{human.duration(c.elapsed_s)} of wall time",
        f"spacetp {_version(fallback='unknown')}, {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}",
    ]
    if c.command:
        facts.insert(0, f"Command: {c.command}")
    if c.aliases:
        facts.append(
            "Same settings, run once: " + ", ".join(f"{a} = {b}" for a, b in c.aliases.items())
        )
    if len(c.scenario.get("flows") or []) + len(c.scenario.get("workloads") or []) > 1:
        facts.append("Every flow and workload of the scenario runs the profile of its row.")
    failed = ""
    if len(c.failed):
        items = "".join(
            f"<li><b>{_e(r['protocol'])}</b>: {_e(r['error'])}</li>" for _, r in c.failed.iterrows()
        )
        failed = f"<h2>Not run on this scenario</h2><ul>{items}</ul>"
    what = "completion time" if c.rank_by == "completion" else "goodput"
    window = ""
    if c.traces:
        window = (
            "<h2>Window and bytes in flight: the best and the worst</h2>"
            + interactive.div(window_figure(c), "window")
            + "<p class='files muted'>Static: <a href='window.png'>PNG</a>"
            "<a href='window.svg'>SVG</a><a href='window.csv'>data (CSV)</a>. Bytes in "
            "flight: sent and not yet acknowledged (snd_max - snd_una); the dashed line is "
            "the path's bandwidth-delay product.</p>"
        )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>Which protocol: {_e(c.name)}</title>",
            f"<style>{CSS}</style>{script}</head><body>",
            f"<h1>Which protocol on this link? {_e(c.name)}</h1>",
            f"<p class='muted'>{_e(c.source or '')} &middot; {_e(path_text(c))}</p>",
            f"<p class='answer'>{answer(c)}</p>",
            f"<h2>Ranking by {what}</h2>",
            interactive.div(ranking_figure(c), "ranking"),
            _legend(c),
            "<p class='files muted'>Static: <a href='ranking.png'>PNG</a>"
            "<a href='ranking.svg'>SVG</a><a href='ranking.csv'>table (CSV)</a>"
            "<a href='runs.csv'>every run (CSV)</a></p>",
            _table_html(c),
            "<p class='muted'>Mean over the replicates, with the half-width of the 95% "
            "confidence interval of the mean (Student's t). The analytic model's goodput is "
            "beside each profile whose mechanisms it describes (hover over 'none' for why "
            "there is none); hover over a name for the profile.</p>",
            window,
            failed,
            "<h2>How this was run</h2><ul class='muted'>",
            *[f"<li>{_e(x)}</li>" for x in facts],
            "</ul></body></html>",
        ]
    )


# ------------------------------------------------------------------------------ files


def ranking_csv(c):
    t = c.table.copy()
    keep = ["rank", "protocol", "family", "completion", "completion_ci", "goodput", "goodput_ci"]
    keep += ["complete", "retx", "timeouts", "rtt", "model", "model_bps", "notes"]
    t = t[[k for k in keep if k in t.columns]]
    return t.rename(
        columns={
            "completion": "completion_s", "completion_ci": "completion_s_ci95",
            "goodput": "goodput_bps", "goodput_ci": "goodput_bps_ci95",
            "retx": "retransmitted_segments", "rtt": "mean_rtt_s",
            "model_bps": "model_goodput_bps",
        }
    )  # fmt: skip


def write(c, out: Path) -> Path:
    """Write the page and its files into `out`; sets c.page and c.files."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    files = {}
    if not c.table.empty:
        for name, make in (("ranking", ranking_figure_mpl), ("window", window_figure_mpl)):
            if name == "window" and not c.traces:
                continue
            fig = make(c)
            for ext in ("png", "svg"):
                fig.savefig(out / f"{name}.{ext}", dpi=130)
                files[f"{name}.{ext}"] = str(out / f"{name}.{ext}")
        ranking_csv(c).to_csv(out / "ranking.csv", index=False)
        files["ranking.csv"] = str(out / "ranking.csv")
    c.sweep.runs.to_csv(out / "runs.csv", index=False)
    files["runs.csv"] = str(out / "runs.csv")
    if c.traces:
        pd.concat(list(c.traces.values())).to_csv(out / "window.csv", index=False)
        files["window.csv"] = str(out / "window.csv")
    page = out / "report.html"
    page.write_text(html_page(c, interactive.script_tag(out)), encoding="utf-8")
    c.page, c.files = page, files
    return page
