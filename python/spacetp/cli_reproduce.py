"""The `spacetp reproduce` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from spacetp import console
from spacetp.cli_sweep import ExecutorOption, WorkersOption
from spacetp.scenario import ScenarioError

VERDICT_STYLE = {"PASS": "green", "FAIL": "red", "NOT COMPARABLE": "yellow"}


def print_verdicts(run) -> None:
    """One row per target: figure, target id, ours, target, verdict."""
    from rich.table import Table

    from spacetp.experiments.framework import format_value, tolerance_text

    t = Table(title=f"{run.name}: {run.meta['title']}", title_justify="left")
    for col in ("figure", "target", "ours", "target value", "verdict"):
        t.add_column(col, justify="right" if col == "ours" else "left")
    for v in run.verdicts:
        tg = v.target
        label = next(f["label"] for f in run.figures if f["id"] == tg["figure"])
        style = VERDICT_STYLE[v.verdict]
        t.add_row(
            label,
            tg["id"],
            format_value(v.value, tg.get("unit", "")),
            tolerance_text(tg),
            f"[{style}]{v.verdict}[/{style}]",
        )
    console.table_out.print(t)


def register(app: typer.Typer) -> None:
    @app.command("reproduce")
    def reproduce(
        paper: Annotated[
            str,
            typer.Argument(help="Paper to reproduce: akan, altman, edwards, liu, nguyen, or all."),
        ],
        quick: Annotated[
            bool, typer.Option(help="Fewer points and seeds: a check in minutes, not the figures.")
        ] = False,
        reps: Annotated[
            int | None,
            typer.Option(
                help="Seeds per simulated point (default: 2 with --quick, else the paper's)."
            ),
        ] = None,
        out_dir: Annotated[
            Path | None,
            typer.Option(
                "--out",
                help="Output directory (default results/PAPER; with 'all', one subdirectory "
                "per paper in it, default results).",
            ),
        ] = None,
        executor: ExecutorOption = "local",
        workers: WorkersOption = None,
        fresh: Annotated[
            bool,
            typer.Option(
                help="Forget the runs kept in the output directory's store "
                "(after the simulator changed).",
            ),
        ] = False,
        progress: Annotated[bool, typer.Option(help="Show progress on stderr.")] = True,
    ) -> None:
        """Reproduce a paper's figures and check its claims: PNG, SVG and CSV per figure,
        report.md and report.html with a PASS / FAIL / NOT COMPARABLE verdict per target."""
        from spacetp import experiments
        from spacetp.executors import check
        from spacetp.experiments.framework import Context, fresh_store
        from spacetp.experiments.runner import run_paper

        names = experiments.resolve(paper)
        check(executor)
        if reps is not None and reps < 1:
            raise ScenarioError(f"--reps {reps}: must be a whole number >= 1")
        command = "spacetp " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        for name in names:
            if out_dir is None:
                target = Path("results") / name
            else:
                target = out_dir / name if paper == "all" else out_dir
            if fresh:
                fresh_store(target)
            ctx = Context(
                paper=name,
                out=target,
                quick=quick,
                reps=reps,
                executor=executor,
                workers=workers,
                console=console.table_err if progress else None,
            )
            run = run_paper(experiments.get(name), ctx, command)
            print_verdicts(run)
            console.table_out.print(
                f"{name}: report in {target / 'report.html'} and {target / 'report.md'}"
            )
