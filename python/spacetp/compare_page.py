"""The page of `spacetp compare` (DIR/report.html) and the files beside it: ranking.png/.svg
(the bar chart: mean and bootstrap 95% CI, a log axis beyond a 10x span), window.png/.svg
(window and bytes in flight of the best and the worst over time; bytes sent and delivered
for a transport without a window), ranking.csv (the table), runs.csv (every run),
window.csv (the two traces) and plotly.min.js (the zoomable plots, offline). Every number is
written in its unit (spacetp.human)."""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path

from spacetp import human, interactive
from spacetp.html_page import END, e, head

FAMILY_COLORS = {
    "textbook": "#4C72B0", "linux": "#DD8452", "draft": "#C44E52", "scps": "#55A868",
    "scps-ri": "#2E8B57", "windows": "#8172B3", "quic": "#937860", "ltp": "#DA8BC3",
    "dtn": "#17BECF", "cfdp": "#BCBD22",
}  # fmt: skip
OTHER_COLOR = "#8C8C8C"

# The page's own classes, over the shared style sheet (html_page.STYLE).
CSS = """
.answer { font-size: 1.12em; background: #f3f7fb; border-left: 4px solid #4C72B0;
          padding: 0.6em 0.9em; }
tr.best td { background: #eaf6ea; } .muted { font-size: 0.88em; }
.files a { margin-right: 0.8em; }
"""


def _color(family: str) -> str:
    return FAMILY_COLORS.get(family, OTHER_COLOR)


def _value_role(c) -> str:
    return "completion" if c.rank_by == "completion" else "goodput"


def _metric_name(role: str) -> str:
    return {"completion": "completion_s", "goodput": "goodput_bps"}[role]


def _cell(c, row, role: str) -> str:
    return human.interval(_metric_name(role), row[role], row[f"{role}_lo"], row[f"{role}_hi"])


def log_axis(c) -> bool:
    """Whether the ranking's axis is logarithmic: its values (means and interval bounds)
    span more than LOG_SPAN times."""
    role = _value_role(c)
    t = c.table
    vals = [v for col in (role, f"{role}_lo", f"{role}_hi") for v in t[col].tolist()]
    vals = [float(v) for v in vals if v == v and v is not None and float(v) > 0]
    return bool(vals) and max(vals) > LOG_SPAN * min(vals)


LOG_SPAN = 10.0


def log_ticks(c) -> tuple[list[float], list[str]]:
    """Tick values of a log axis (1, 2, 3, 5 x 10^k inside the values' range) and their
    labels in units (`20 s`, `1 min`, `500 kb/s`)."""
    role = _value_role(c)
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
    name = _metric_name(role)
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
    role = _value_role(c)
    n = max(len(t), 1)
    fig = Figure(figsize=(7.5, 0.32 * n + 1.4), layout="constrained")
    ax = fig.add_subplot()
    y = list(range(len(t)))[::-1]
    below, above = _errors(t, role)
    ax.barh(
        y,
        t[role].fillna(0),
        xerr=[below, above],
        color=[_color(f) for f in t["family"]],
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
    role = _value_role(c)
    labels = [f"{r}. {p}" for r, p in zip(t["rank"], t["protocol"], strict=True)]
    hover = [
        f"{p}<br>{_cell(c, row, role)}<br>{e(_limit_words(row))}"
        for p, (_, row) in zip(t["protocol"], t.iterrows(), strict=True)
    ]
    below, above = _errors(t, role)
    fig = go.Figure(
        go.Bar(
            x=t[role],
            y=labels,
            orientation="h",
            error_x={"type": "data", "symmetric": False, "array": above, "arrayminus": below},
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


def _overlap(a, b, role: str) -> bool:
    """Whether two rows' intervals overlap (a tie at this number of replicates)."""
    lo1, hi1 = a[f"{role}_lo"], a[f"{role}_hi"]
    lo2, hi2 = b[f"{role}_lo"], b[f"{role}_hi"]
    if any(v != v for v in (lo1, hi1, lo2, hi2)):
        return False
    return hi1 >= lo2 and hi2 >= lo1


def answer(c) -> str:
    t = c.table
    if t.empty:
        return "No profile could run on this scenario (see the list below)."
    role = _value_role(c)
    best, worst = t.iloc[0], t.iloc[-1]
    verb = "moves the data in" if role == "completion" else "reaches"
    text = (
        f"On this link <b>{e(best['protocol'])}</b> {verb} {e(_cell(c, best, role))}"
        f" ({e(human.rate(best['goodput']))})"
    )
    if len(t) > 1:
        second = t.iloc[1]
        if _overlap(best, second, role):
            text += (
                f"; <b>{e(second['protocol'])}</b> is within its 95% confidence interval "
                f"({e(_cell(c, second, role))}), a tie at {c.reps} replicates"
            )
        text += (
            f"; the last, <b>{e(worst['protocol'])}</b>, "
            f"{'needs' if role == 'completion' else 'gets'} {e(_cell(c, worst, role))}"
        )
        if worst["unfinished"]:
            text += f" ({e(worst['unfinished'])})"
    own = c.scenario.get("flows", [{}])[0].get("protocol", "newreno")
    mine = t[t["protocol"] == own]
    if len(mine) and own not in (best["protocol"], worst["protocol"]):
        r = mine.iloc[0]
        text += (
            f". The scenario's own <b>{e(own)}</b> ranks {int(r['rank'])} of {len(t)} "
            f"({e(_cell(c, r, role))})"
        )
    return text + "."


def _limit_words(r) -> str:
    """The row's "what limited it": failed and unfinished runs first, then the engine's
    analysis over the runs."""
    words = [r["unfinished"]] if r["unfinished"] else []
    return "; ".join([*words, r["limited_by"]])


def warnings(c) -> list[str]:
    """What the reader must know before trusting the ranking."""
    from spacetp.pathfacts import short_transfer

    out = []
    start = short_transfer(c.facts)
    if start:
        out.append(start)
    if not c.table.empty and (c.table["failed_runs"] > 0).any():
        bad = c.table[c.table["failed_runs"] > 0]
        out.append(
            f"{len(bad)} profile(s) failed in some runs ("
            + ", ".join(f"{p}: {n} of {k}" for p, n, k in zip(
                bad["protocol"], bad["failed_runs"], bad["ok"], strict=True))
            + "): a failed run is counted and named, never averaged in as a slow one."
        )  # fmt: skip
    return out


def _table_html(c) -> str:
    t = c.table
    role = _value_role(c)
    first = "completion time" if role == "completion" else "goodput"
    tuned = c.mode == "tuned"
    if tuned:
        first = f"tuned: {first}"
    head = (
        f"<tr><th>#</th><th>protocol</th><th>{first} (95% CI)</th>"
        + ("<th>fitted (95% CI)</th><th>as configured (95% CI)</th>" if tuned else "")
        + ("<th>goodput (95% CI)</th>" if role == "completion" else "")
        + "<th>analytic model</th><th>retransmissions per run</th><th>timeouts per run</th>"
        "<th>link error drops per run</th><th>what limited it (mean share of the time over "
        "the runs)</th><th>settings fitted to this link</th>"
        + ("<th>tuned settings (spacetp tune)</th>" if tuned else "")
        + "</tr>"
    )
    rows = [head]
    for i, (_, r) in enumerate(t.iterrows()):
        model = "-"
        if r["model_bps"] == r["model_bps"] and r["model_bps"] is not None:
            ratio = r["goodput"] / r["model_bps"] if r["model_bps"] else float("nan")
            model = (
                f"{e(human.rate(r['model_bps']))} <span class='muted'>({e(r['model'])}; "
                f"measured/model {human.number(ratio, 2)})</span>"
            )
        else:
            model = f"<span class='muted' title='{e(r['model_why'])}'>none</span>"
        cells = [
            f"<td class='num'>{int(r['rank'])}</td>",
            f"<td title='{e(r['description'])}'><b>{e(r['protocol'])}</b> "
            f"<span class='muted'>{e(r['family'])}</span></td>",
            f"<td class='num'>{e(_cell(c, r, role))}</td>",
        ]
        if tuned:
            for k in (f"{role}_fitted", f"{role}_as_configured"):
                v = human.interval(_metric_name(role), r[k], r[f"{k}_lo"], r[f"{k}_hi"])
                why = r.get(f"{k}_why") if r[k] != r[k] else ""
                if why:  # no mean: its runs did not finish, and the title says why
                    v = "did not finish"
                cells.append(f"<td class='num' title='{e(why or '')}'>{e(v)}</td>")
        if role == "completion":
            cells.append(f"<td class='num'>{e(_cell(c, r, 'goodput'))}</td>")
        unfinished = f"<b class='failed'>{e(r['unfinished'])}</b><br>" if r["unfinished"] else ""
        cells += [
            f"<td>{model}</td>",
            f"<td class='num'>{e(human.number(r['retx']))}</td>",
            f"<td class='num'>{e(human.number(r['timeouts']))}</td>",
            f"<td class='num'>{e(human.number(r['drops']))}</td>",
            f"<td>{unfinished}{e(r['limited_by'])}</td>",
            f"<td class='small'>{e(r.get('fitted', ''))}</td>",
        ]
        if tuned:
            cells.append(f"<td class='small'>{e(r.get('tuned', ''))}</td>")
        rows.append(f"<tr class='{'best' if i == 0 else ''}'>{''.join(cells)}</tr>")
    return "<table>" + "\n".join(rows) + "</table>"


def _legend(c) -> str:
    fams = list(dict.fromkeys(c.table["family"])) if not c.table.empty else []
    items = "".join(
        f"<span style='display:inline-block;width:0.9em;height:0.9em;background:{_color(f)};"
        f"margin:0 0.3em 0 1em;vertical-align:middle'></span>{e(f)}"
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
            f"<li><b>{e(r['protocol'])}</b>: {e(r['error'])}</li>" for _, r in c.failed.iterrows()
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
            "the path's bandwidth-delay product. A transport without a window or sender "
            "samples (bp) shows the bytes its sender put on the flow's first link and the "
            "bytes delivered, cumulative.</p>"
        )
    warn = "".join(f"<p class='warning'>{e(w)}</p>" for w in warnings(c))
    return "\n".join(
        [
            head(f"Which protocol: {c.name}", CSS, script),
            f"<h1>Which protocol on this link? {e(c.name)}</h1>",
            f"<p class='muted'>{e(c.source or '')} &middot; {e(path_text(c))}</p>",
            f"<p class='answer'>{answer(c)}</p>",
            warn,
            f"<h2>Ranking by {what}</h2>",
            interactive.div(ranking_figure(c), "ranking"),
            _legend(c),
            "<p class='files muted'>Static: <a href='ranking.png'>PNG</a>"
            "<a href='ranking.svg'>SVG</a><a href='ranking.csv'>table (CSV)</a>"
            "<a href='runs.csv'>every run (CSV)</a></p>",
            _table_html(c),
            "<p class='muted'>Mean over the replicates that did not fail, with the 95% "
            "confidence interval of the mean in brackets: a percentile bootstrap (10 000 "
            "resamples of the runs), which stays within the runs' range, so it never goes "
            "below zero and widens on the side of a slow outlier. A run whose flow failed "
            "(aborted, reset, refused by its transport) is counted and named with its "
            "reason, never averaged in. What limited it: the engine's account of the first "
            "flow's time, from its start to its last byte, in named states (the link, a "
            "window, rate control, LTP sessions, the return path, recovery, ...), the state "
            "with the largest share of the time on average over the runs, with the setting "
            "that lifts it; when the link leads (the good case), the largest state a "
            "setting lifts after it. Retransmissions count every transport's segments sent "
            "again (LTP's data segments and checkpoints; bp's over its LTP hops). The "
            "analytic model's goodput is beside each profile whose mechanisms it describes, "
            "with the scenario's own settings (hover over 'none' for why there is none); "
            "hover over a name for the profile. Settings fitted to this link: "
            + (
                "each profile's per-link settings that the scenario leaves unset, fitted to "
                "the path by the rules of docs/fit.md (fit = true; spacetp fit prints them "
                "with their sources); the deployed stacks that size themselves (Linux, "
                "Windows) as deployed. --as-configured ranks the profiles as written."
                if c.mode in ("fitted", "tuned")
                else "none: the profiles ran exactly as written (--as-configured)."
            )
            + (
                " Tuned (--tune): each profile's settings searched by spacetp tune from the "
                "fitted ones (its study, trials and sensitivity figure in tune/PROFILE/), "
                "then run on the same seeds as the fitted and as-configured columns; "
                "'the fitted ones' when no trial beat them."
                if c.mode == "tuned"
                else ""
            )
            + "</p>",
            window,
            failed,
            "<h2>How this was run</h2><ul class='muted'>",
            *[f"<li>{e(x)}</li>" for x in facts],
            "</ul>",
            END,
        ]
    )


# ------------------------------------------------------------------------------ files


CSV_COLUMNS = {
    "rank": "rank", "protocol": "protocol", "family": "family",
    "completion": "completion_s", "completion_lo": "completion_s_ci95_low",
    "completion_hi": "completion_s_ci95_high", "goodput": "goodput_bps",
    "goodput_lo": "goodput_bps_ci95_low", "goodput_hi": "goodput_bps_ci95_high",
    "complete": "complete", "ok": "runs", "failed_runs": "failed_runs",
    "unfinished": "did_not_finish", "retx": "retransmissions", "timeouts": "timeouts",
    "drops": "link_error_drops", "rtt": "mean_rtt_s", "model": "model",
    "model_bps": "model_goodput_bps", "limit": "limit", "limit_share": "limit_share",
    "liftable": "liftable", "liftable_share": "liftable_share", "limited_by": "limited_by",
    "fitted": "settings_fitted", "tuned": "settings_tuned",
    # compare --tune: the same profile fitted and as configured, e.g. completion_s_fitted
    **{f"{role}_{mode}{end}": f"{unit}_{mode}{csv_end}"
       for role, unit in (("completion", "completion_s"), ("goodput", "goodput_bps"))
       for mode in ("fitted", "as_configured")
       for end, csv_end in (("", ""), ("_lo", "_ci95_low"), ("_hi", "_ci95_high"))},
}  # fmt: skip


def ranking_csv(c):
    """One row per profile (CSV_COLUMNS: the table's names -> the file's)."""
    t = c.table.copy()
    t = t[[k for k in CSV_COLUMNS if k in t.columns]]
    return t.rename(columns=CSV_COLUMNS)


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
