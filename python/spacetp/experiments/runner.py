"""Running one paper reproduction (`spacetp reproduce`): the paper module run, its figures
saved, its targets judged, its report written. Kept out of `framework` so that imports go one
way: this module -> `spacetp.report` -> `framework` (whose records the report reads)."""

from __future__ import annotations

import time

from spacetp import interactive, report
from spacetp.experiments.framework import (
    Context,
    PaperRun,
    judge_all,
    paper_entries,
)


def run_paper(module, ctx: Context, command: str | None = None) -> PaperRun:
    """Run one paper module, save its figures (PNG, SVG, CSV), judge its targets and write
    report.md and report.html into ctx.out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, fig_entries, targets = paper_entries(ctx.paper)
    ctx.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    outcome = module.run(ctx)
    elapsed = time.perf_counter() - t0

    made = {f.id: f for f in outcome.figures}
    wanted = [f["id"] for f in fig_entries]
    if sorted(made) != sorted(wanted):
        raise ValueError(
            f"{ctx.paper}: module made figures {sorted(made)}, targets.toml lists {wanted}"
        )
    figures = []
    for entry in fig_entries:
        f = made[entry["id"]]
        stem = f"{ctx.paper}_{f.id}"
        files = {"png": f"{stem}.png", "svg": f"{stem}.svg", "csv": f"{stem}.csv"}
        f.figure.savefig(ctx.out / files["png"], dpi=130)
        f.figure.savefig(ctx.out / files["svg"])
        zoomable = interactive.div(interactive.from_matplotlib(f.figure), f"plot-{f.id}")
        plt.close(f.figure)
        f.data.to_csv(ctx.out / files["csv"], index=False)
        figures.append({**entry, "files": files, "note": f.note, "interactive": zoomable})

    verdicts = judge_all(targets, outcome.measures)
    info = {
        "mode": "quick" if ctx.quick else "full",
        "reps": ", ".join(str(n) for n in sorted(ctx.seeds_used)) or "-",
        "executor": str(ctx.executor),
        "elapsed_s": elapsed,
        "log": list(ctx.log),
    }
    if command:
        info["command"] = command
    run = PaperRun(ctx.paper, meta, figures, verdicts, outcome.assumptions, info)
    report.write(run, ctx.out)
    return run
