"""The `spacetp compare` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from spacetp import human
from spacetp.cli_sweep import ExecutorOption, WorkersOption, err, out
from spacetp.scenario import ScenarioError, apply_set, load


def print_ranking(c) -> None:
    role = "completion" if c.rank_by == "completion" else "goodput"
    t = Table(title=f"{c.name}: ranked by {'completion time' if role == 'completion' else role}")
    t.title_justify = "left"
    cols = ["#", "protocol", "time (95% CI)" if role == "completion" else "goodput (95% CI)"]
    cols += ["goodput"] * (role == "completion") + ["model", "retx", "timeouts", "what limited it"]
    for col in cols:
        left = col in ("protocol", "what limited it", "model")
        t.add_column(col, justify="left" if left else "right", overflow="fold")
    metric = "completion_s" if role == "completion" else "goodput_bps"
    for _, r in c.table.iterrows():
        model = "-" if r["model_bps"] != r["model_bps"] else human.rate(r["model_bps"])
        if r["model"]:
            model += f" ({r['model']})"
        cells = [str(r["rank"]), r["protocol"], human.with_ci(metric, r[role], r[f"{role}_ci"])]
        if role == "completion":
            cells.append(human.rate(r["goodput"]))
        cells += [model, human.number(r["retx"]), human.number(r["timeouts"]), r["notes"]]
        t.add_row(*cells)
    out.print(t)
    for _, r in c.failed.iterrows():
        err.print(
            f"[yellow]{escape(r['protocol'])} did not run:[/yellow] {escape(r['error'])}",
            highlight=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_cmd(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file: your link.")],
        protocols: Annotated[
            str,
            typer.Option(
                help="'all' (every profile of `spacetp protocols`, and ltp) or a comma list: "
                "newreno,linux-cubic,scps-tp,quic,ltp."
            ),
        ] = "all",
        reps: Annotated[int, typer.Option(help="Replicates (seeds) per profile.")] = 10,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help='Change the scenario: --set links\\[1].delay="300 ms".'),
        ] = None,
        out_dir: Annotated[
            Path | None,
            typer.Option(
                "--out", help="Output directory (default results/compare-SCENARIO); re-runs resume."
            ),
        ] = None,
        executor: ExecutorOption = "local",
        workers: WorkersOption = None,
        seed: Annotated[
            int | None, typer.Option(help="Base seed (default: the scenario's seed).")
        ] = None,
        progress: Annotated[bool, typer.Option(help="Show a progress bar on stderr.")] = True,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing.")] = False,
    ) -> None:
        """Run every protocol profile on your scenario and rank them: one HTML page
        (report.html, zoomable plots) with PNG/SVG figures and CSV tables."""
        from spacetp.compare import compare

        sc = load(scenario)
        for s in set_ or []:
            apply_set(sc, s)
        target = out_dir or Path("results") / f"compare-{scenario.stem}"
        command = "spacetp " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        try:
            c = compare(
                sc,
                protocols=protocols,
                reps=reps,
                out=target,
                executor=executor,
                workers=workers,
                base_seed=seed,
                source=str(scenario),
                command=command,
                console=err if progress and not quiet else None,
            )
        except KeyboardInterrupt:
            raise ScenarioError(
                f"interrupted; the runs finished so far are in {target / 'store'}: run the same "
                "command again to resume"
            ) from None
        if quiet:
            return
        print_ranking(c)
        out.print(f"page: {c.page}  (figures and CSV beside it)", highlight=False)
