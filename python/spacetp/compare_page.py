"""The page of `spacetp compare` (DIR/report.html) and the files beside it: ranking.png/.svg
(the bar chart: mean and bootstrap 95% CI, a log axis beyond a 10x span), window.png/.svg
(window and bytes in flight of the best and the worst over time; bytes sent and delivered
for a transport without a window), ranking.csv (the table), runs.csv (every run),
window.csv (the two traces) and plotly.min.js (the zoomable plots, offline). Every number is
written in its unit (spacetp.human)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from spacetp import human, interactive
from spacetp.compare_figures import (
    cell_text,
    family_color,
    metric_name,
    ranking_figure,
    ranking_figure_mpl,
    value_role,
    window_figure,
    window_figure_mpl,
)
from spacetp.html_page import END, e, head

# The page's own classes, over the shared style sheet (html_page.STYLE).
CSS = """
.answer { font-size: 1.12em; background: #f3f7fb; border-left: 4px solid #4C72B0;
          padding: 0.6em 0.9em; }
tr.best td { background: #eaf6ea; } .muted { font-size: 0.88em; }
.files a { margin-right: 0.8em; }
"""


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
    role = value_role(c)
    best, worst = t.iloc[0], t.iloc[-1]
    verb = "moves the data in" if role == "completion" else "reaches"
    text = (
        f"On this link <b>{e(best['protocol'])}</b> {verb} {e(cell_text(c, best, role))}"
        f" ({e(human.rate(best['goodput']))})"
    )
    if len(t) > 1:
        second = t.iloc[1]
        if _overlap(best, second, role):
            text += (
                f"; <b>{e(second['protocol'])}</b> is within its 95% confidence interval "
                f"({e(cell_text(c, second, role))}), a tie at {c.reps} replicates"
            )
        text += (
            f"; the last, <b>{e(worst['protocol'])}</b>, "
            f"{'needs' if role == 'completion' else 'gets'} {e(cell_text(c, worst, role))}"
        )
        if worst["unfinished"]:
            text += f" ({e(worst['unfinished'])})"
    own = c.scenario.get("flows", [{}])[0].get("protocol", "newreno")
    mine = t[t["protocol"] == own]
    if len(mine) and own not in (best["protocol"], worst["protocol"]):
        r = mine.iloc[0]
        text += (
            f". The scenario's own <b>{e(own)}</b> ranks {int(r['rank'])} of {len(t)} "
            f"({e(cell_text(c, r, role))})"
        )
    return text + "."


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
    role = value_role(c)
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
            f"<td class='num'>{e(cell_text(c, r, role))}</td>",
        ]
        if tuned:
            for k in (f"{role}_fitted", f"{role}_as_configured"):
                v = human.interval(metric_name(role), r[k], r[f"{k}_lo"], r[f"{k}_hi"])
                why = r.get(f"{k}_why") if r[k] != r[k] else ""
                if why:  # no mean: its runs did not finish, and the title says why
                    v = "did not finish"
                cells.append(f"<td class='num' title='{e(why or '')}'>{e(v)}</td>")
        if role == "completion":
            cells.append(f"<td class='num'>{e(cell_text(c, r, 'goodput'))}</td>")
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
        f"<span style='display:inline-block;width:0.9em;height:0.9em;background:{family_color(f)};"
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
