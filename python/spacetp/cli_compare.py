"""The `spacetp compare` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from spacetp import console, human
from spacetp.cli_sweep import ExecutorOption, WorkersOption
from spacetp.scenario import ScenarioError, apply_set, load


def print_ranking(c) -> None:
    """The ranking as a table that fits the terminal (80 columns and up: no cell is cut
    inside a word; the model and the timeouts from WIDE columns on), the warnings, and
    the sentence of what limited the best and every profile whose runs did not all finish
    (the page has every profile's)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from spacetp.pathfacts import short_transfer

    role = "completion" if c.rank_by == "completion" else "goodput"
    wide = console.table_out.width >= WIDE
    t = Table(
        title=f"{c.name}: ranked by {'completion time' if role == 'completion' else role}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    what = "time (95% CI)" if role == "completion" else "goodput (95% CI)"
    tuned = c.mode == "tuned"  # then: tuned, fitted and as configured side by side
    if tuned:
        what = "tuned (95% CI)"
    cols = ["#", "protocol", what] + ["goodput"] * (role == "completion" and not tuned)
    cols += ["fitted", "as configured"] * tuned
    cols += ["model"] * wide + ["retx"] + ["timeouts"] * wide + ["limited by"]
    for col in cols:
        t.add_column(
            col,
            justify="left" if col in ("protocol", "model", "limited by") else "right",
            no_wrap=col != "limited by" and col != "model",
            min_width=17 if col == "limited by" else None,  # "congestion window"
            overflow="fold",
        )
    metric = "completion_s" if role == "completion" else "goodput_bps"
    for _, r in c.table.iterrows():
        cells = [str(r["rank"]), r["protocol"]]
        cells.append(human.interval(metric, r[role], r[f"{role}_lo"], r[f"{role}_hi"]))
        if role == "completion" and not tuned:
            cells.append(human.rate(r["goodput"]))
        if tuned:
            cells += [_other(metric, r, f"{role}_{k}") for k in ("fitted", "as_configured")]
        if wide:
            model = "-" if r["model_bps"] != r["model_bps"] else human.rate(r["model_bps"])
            cells.append(model + (f" ({r['model']})" if r["model"] else ""))
        cells.append(human.number(r["retx"]))
        if wide:
            cells.append(human.number(r["timeouts"]))
        limit = r["limit_label"] or "-"
        if r["failed_runs"]:
            limit = f"FAILED {r['failed_runs']} of {r['ok']}; {limit}"
        elif r["unfinished"]:
            limit = f"unfinished {len_unfinished(r)} of {r['ok']}; {limit}"
        cells.append(escape(limit))
        t.add_row(*cells)
    console.table_out.print(t)
    say = [w for w in (short_transfer(c.facts),) if w]
    if not c.table.empty:
        best = c.table.iloc[0]
        say.append(f"{best['protocol']} (best): {best['limited_by']}")
        for _, r in c.table.iterrows():
            if r["unfinished"]:
                say.append(f"{r['protocol']}: {r['unfinished']}")
    if tuned and not c.table.empty:
        for _, r in c.table.head(3).iterrows():
            say.append(f"{r['protocol']} tuned: {r['tuned']}")
        if len(c.table) > 3:
            say.append("every profile's tuned settings: on the page and in ranking.csv")
    for line in say:
        console.table_out.print(escape(line), highlight=False)
    for _, r in c.failed.iterrows():
        console.table_err.print(
            f"[yellow]{escape(r['protocol'])} did not run:[/yellow] {escape(r['error'])}",
            highlight=False,
            soft_wrap=True,
        )


WIDE = 130  # columns from which the model and the timeouts are shown too


def _other(metric: str, r, key: str) -> str:
    """A fitted or as-configured mean beside the tuned one, or why there is none."""
    v = r[key]
    if v != v and r.get(f"{key}_why"):
        return "did not finish"
    return human.metric(metric, v)


def len_unfinished(r) -> int:
    """How many runs of a row did not finish (failed or still sending at the stop)."""
    return int(round((1.0 - r["complete"]) * r["ok"])) if r["complete"] == r["complete"] else 0


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
        as_configured: Annotated[
            bool,
            typer.Option(
                "--as-configured",
                help="Run the profiles exactly as written (default: each profile's per-link "
                "settings fitted to the path, as `spacetp fit` prints them).",
            ),
        ] = False,
        tune_trials: Annotated[
            int,
            typer.Option(
                "--tune",
                help="Tune every profile first (spacetp tune, this many trials of up to 3 "
                "seeds each) and rank the tuned profiles beside their fitted and "
                "as-configured times (0: off).",
            ),
        ] = 0,
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
                console=console.table_err if progress and not quiet else None,
                as_configured=as_configured,
                tune_trials=tune_trials,
            )
        except KeyboardInterrupt:
            raise ScenarioError(
                f"interrupted; the runs finished so far are in {target / 'store'}: run the same "
                "command again to resume"
            ) from None
        if quiet:
            return
        print_ranking(c)
        console.table_out.print(f"page: {c.page}  (figures and CSV beside it)", highlight=False)
