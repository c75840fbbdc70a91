"""Reports of paper reproductions: `report.md` and `report.html` in a paper's output directory.

Both show the verdict counts, the table of targets (the claim quoted from the paper, how our
number is computed, our number, the tolerance, the verdict and its reason), every figure beside
its caption quoted from the paper (with our note, the SVG and the CSV behind it), the
assumptions made where the paper is silent, and how the run was made. Images are referenced by
relative path: the directory is the report.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from spacetp import interactive
from spacetp.experiments.framework import (
    FAIL,
    NOT_COMPARABLE,
    PASS,
    PaperRun,
    format_value,
    tolerance_text,
    verdict_counts,
)
from spacetp.html_page import END, e, head
from spacetp.sweep import _version


def citation(meta: dict, title=lambda t: t) -> str:
    """The paper's bibliographic reference: authors, title (set by `title`), venue and year
    (where the paper states it)."""
    year = f", {meta['year']}" if meta.get("year") else ""
    return f"{meta['authors']}. {title(meta['title'])}. {meta['venue']}{year}."


def _header_facts(run: PaperRun) -> list[str]:
    info = run.info
    return [
        f"Command: `{info.get('command', 'spacetp reproduce ' + run.name)}`",
        f"Mode: {info['mode']}; seeds per simulated point: {info['reps']}; executor: "
        f"{info['executor']}",
        f"spacetp {_version(fallback='unknown')}, "
        f"{_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}; {info['elapsed_s']:.0f} s of wall time",
    ]


def _counts_text(run: PaperRun) -> str:
    c = verdict_counts(run.verdicts)
    return f"{c[PASS]} PASS, {c[FAIL]} FAIL, {c[NOT_COMPARABLE]} NOT COMPARABLE"


def _label(run: PaperRun, figure_id: str) -> str:
    return next(f["label"] for f in run.figures if f["id"] == figure_id)


# ------------------------------------------------------------------------------- markdown


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(run: PaperRun) -> str:
    m = run.meta
    lines = [
        f"# Reproduction: {m['title']}",
        "",
        citation(m, lambda t: f"*{t}*"),
        "",
        *[f"- {fact}" for fact in _header_facts(run)],
        "",
        f"**Targets: {_counts_text(run)}.**",
        "",
        "## Targets",
        "",
        "| # | figure | claim (quoted from the paper) | how our number is computed | ours | target "
        "| verdict | reason / note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, v in enumerate(run.verdicts, 1):
        t = v.target
        lines.append(
            "| "
            + " | ".join(
                _md_cell(x)
                for x in (
                    i,
                    _label(run, t["figure"]),
                    f'"{t["claim"]}" ({t.get("where", "")})',
                    t["how"],
                    format_value(v.value, t.get("unit", "")),
                    tolerance_text(t),
                    f"**{v.verdict}**",
                    v.reason,
                )
            )
            + " |"
        )
    lines += ["", "## Figures", "", "| figure | caption and notes |", "|---|---|"]
    for f in run.figures:
        files = f["files"]
        source = (
            "our figure, not in the paper" if f.get("ours") else "caption quoted from the paper"
        )
        text = f'**{f["label"]}.** "{f["caption"]}" ({source})'
        if f.get("note"):
            text += f"<br><br>{f['note']}"
        text += f"<br><br>[SVG]({files['svg']}) · [data (CSV)]({files['csv']})"
        lines.append(f"| ![{f['label']}]({files['png']}) | {_md_cell(text)} |")
    lines += ["", "## Assumptions where the paper is silent", ""]
    lines += [f"- {a}" for a in run.assumptions]
    lines += ["", "## Run log", ""]
    lines += [f"- {entry}" for entry in run.info["log"]]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------- html

# The page's own classes, over the shared style sheet (html_page.STYLE).
CSS = """
body { margin: 2em auto; max-width: 1400px; } h1 { font-size: 1.5em; } h2 { margin-top: 2em; }
th, td { padding: 0.35em 0.5em; }
.PASS { background: #d9f2d9; font-weight: bold; }
.FAIL { background: #f8d7d7; font-weight: bold; }
.NC { background: #eee; font-weight: bold; }
.claim { font-style: italic; }
.fig { display: flex; gap: 1.5em; align-items: flex-start; margin: 1.5em 0;
       border-bottom: 1px solid #eee; padding-bottom: 1.5em; }
.fig img { max-width: 62%; height: auto; border: 1px solid #eee; }
.fig .plot { width: 62%; flex: none; } .fig .plot img { max-width: 100%; }
.fig .cap { flex: 1; font-size: 0.95em; }
"""


def _verdict_class(verdict: str) -> str:
    return {PASS: "PASS", FAIL: "FAIL"}.get(verdict, "NC")


def html_page(run: PaperRun, script: str = "") -> str:
    """The page; `script` loads the plotting library when figures carry zoomable plots."""
    m = run.meta
    out = [
        head(f"Reproduction: {m['title']}", CSS, script),
        f"<h1>Reproduction: {e(m['title'])}</h1>",
        f"<p>{citation({k: e(v) for k, v in m.items()}, lambda t: f'<i>{t}</i>')}</p>",
        "<ul class='muted'>",
        *[f"<li>{e(fact).replace('`', '')}</li>" for fact in _header_facts(run)],
        "</ul>",
        f"<p><b>Targets: {e(_counts_text(run))}.</b></p>",
        "<h2>Targets</h2>",
        "<table><tr><th>#</th><th>figure</th><th>claim (quoted from the paper)</th>"
        "<th>how our number is computed</th><th>ours</th><th>target</th><th>verdict</th>"
        "<th>reason / note</th></tr>",
    ]
    for i, v in enumerate(run.verdicts, 1):
        t = v.target
        out.append(
            f"<tr><td>{i}</td><td>{e(_label(run, t['figure']))}</td>"
            f"<td class='claim'>&ldquo;{e(t['claim'])}&rdquo; <span class='muted'>"
            f"({e(t.get('where', ''))})</span></td><td>{e(t['how'])}</td>"
            f"<td>{e(format_value(v.value, t.get('unit', '')))}</td>"
            f"<td>{e(tolerance_text(t))}</td>"
            f"<td class='{_verdict_class(v.verdict)}'>{e(v.verdict)}</td>"
            f"<td>{e(v.reason)}</td></tr>"
        )
    out += ["</table>", "<h2>Figures</h2>"]
    for f in run.figures:
        files = f["files"]
        source = (
            "our figure, not in the paper" if f.get("ours") else "caption quoted from the paper"
        )
        note = f"<p>{e(f['note'])}</p>" if f.get("note") else ""
        img = f"<img src='{e(files['png'])}' alt='{e(f['label'])}'>"
        if f.get("interactive"):  # the zoomable plot first, the static figure one click away
            img = (
                f"<div class='plot'>{f['interactive']}<details><summary class='muted'>static "
                f"figure (PNG, for papers)</summary>{img}</details></div>"
            )
        out.append(
            f"<div class='fig' id='{e(f['id'])}'>{img}"
            f"<div class='cap'><p><b>{e(f['label'])}.</b> &ldquo;{e(f['caption'])}&rdquo; "
            f"<span class='muted'>({source})</span></p>{note}"
            f"<p class='muted'><a href='{e(files['png'])}'>PNG</a> · "
            f"<a href='{e(files['svg'])}'>SVG</a> · "
            f"<a href='{e(files['csv'])}'>data (CSV)</a></p></div></div>"
        )
    out += ["<h2>Assumptions where the paper is silent</h2>", "<ul>"]
    out += [f"<li>{e(a)}</li>" for a in run.assumptions]
    out += ["</ul>", "<h2>Run log</h2>", "<ul class='muted'>"]
    out += [f"<li>{e(entry)}</li>" for entry in run.info["log"]]
    out += ["</ul>", END]
    return "\n".join(out) + "\n"


def write(run: PaperRun, out: Path) -> None:
    """Write report.md and report.html into `out`."""
    (out / "report.md").write_text(markdown(run), encoding="utf-8")
    zoomable = any(f.get("interactive") for f in run.figures)
    script = interactive.script_tag(out) if zoomable else ""
    (out / "report.html").write_text(html_page(run, script), encoding="utf-8")
