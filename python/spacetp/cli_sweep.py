"""The `spacetp sweep`, `results` and `plot` commands (registered on the app of spacetp.cli,
which imports this module at its end: `register(app)`)."""

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from spacetp import console, human, limits
from spacetp.scenario import ScenarioError, apply_set, load

SHOWN_METRICS = 4
SHOWN_RUNS = 200

# --executor and --workers, as `spacetp sweep` and `spacetp reproduce` take them
ExecutorOption = Annotated[
    str, typer.Option(help="local (process pool), dask (local cluster), dask://HOST:PORT.")
]
WorkersOption = Annotated[int | None, typer.Option(help="Worker processes (default: all cores).")]


def _num(v: float, metric: str = "") -> str:
    return human.metric(metric, v)


def _shown(res, chosen: list[str] | None) -> list[str]:
    return list(chosen) if chosen else res.metrics[:SHOWN_METRICS]


def print_summary(res, chosen: list[str] | None = None) -> None:
    """One row per grid point: parameters, successful/planned runs, mean ± 95% CI."""
    from rich.table import Table

    from spacetp.stats import column  # numpy: only when a sweep is shown

    metrics = _shown(res, chosen)
    name = res.plan.base.get("name") or res.plan.source or "sweep"
    title = f"{name}: mean ± 95% CI of {res.plan.reps} reps per point"
    t = Table(title=title, title_justify="left")
    for p in res.params:
        t.add_column(p, no_wrap=True)
    t.add_column("ok/runs", justify="right", no_wrap=True)
    for m in metrics:
        t.add_column(m, justify="right")
    lim = _limited_by(res.summary)
    if lim:
        t.add_column(lim)
    for row in res.summary.to_dict("records"):
        cells = [str(row[p]) for p in res.params]
        cells.append(f"{row['ok']}/{row['runs']}")
        for m in metrics:
            cells.append(human.with_ci(m, row[column(m, "mean")], row[column(m, "ci95")]))
        if lim:
            cells.append(limits.point_label(row))
        t.add_row(*cells)
    hidden = len(res.metrics) - len(metrics)
    if hidden > 0 and not chosen:
        t.caption = f"{hidden} more metrics: --metric NAME, or --csv FILE for all"
    console.table_out.print(t)


def _limited_by(frame) -> str:
    """The header of the column saying what limited flows[0] (spacetp.limits), or "" when
    the frame has no such column (a scenario without [[flows]])."""
    return "flows[0] limited by" if "flows[0].limit" in frame.columns else ""


def print_runs(res, chosen: list[str] | None = None) -> None:
    """Every run (the first SHOWN_RUNS): parameters, rep, seed, status, metrics, error."""
    from rich.table import Table

    metrics = _shown(res, chosen)
    t = Table(title=f"{len(res.runs)} runs", title_justify="left")
    lim = _limited_by(res.runs)
    for c in [*res.params, "rep", "seed", "status", *metrics, *[lim] * bool(lim), "error"]:
        left = c in (*res.params, "status", "error", lim)
        t.add_column(
            c,
            justify="left" if left else "right",
            no_wrap=c not in ("error", lim),
            min_width=24 if c == lim else None,
        )
    for row in res.runs.head(SHOWN_RUNS).to_dict("records"):
        error = row["error"] if isinstance(row["error"], str) else ""
        t.add_row(
            *[str(row[p]) for p in res.params],
            str(row["rep"]),
            str(row["seed"]),
            row["status"],
            *[_num(row[m], m) for m in metrics],
            *[limits.run_label(row)] * bool(lim),
            error if len(error) <= 60 else error[:57] + "...",
        )
    if len(res.runs) > SHOWN_RUNS:
        t.caption = f"... and {len(res.runs) - SHOWN_RUNS} more runs (--csv FILE for all)"
    console.table_out.print(t)


def print_failures(res) -> None:
    from rich.markup import escape

    errors = Counter(e for e in res.runs["error"] if isinstance(e, str))
    for msg, n in errors.most_common(3):
        # Escaped: a message quoting `links[abc]` would lose it as a style tag.
        msg = escape(msg)
        console.table_err.print(
            f"[yellow]{n} run(s) failed:[/yellow] {msg}", highlight=False, soft_wrap=True
        )
    if len(errors) > 3:
        console.table_err.print(
            f"... and {len(errors) - 3} other errors (spacetp results DIR --runs)"
        )


def _grid(specs: list[str]) -> dict[str, list]:
    from spacetp.grid import parse_spec

    grid: dict[str, list] = {}
    for s in specs:
        path, values = parse_spec(s)
        if path in grid:
            raise ScenarioError(f"--grid {path}: this path is given twice")
        grid[path] = values
    return grid


def sweep_cmd(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
    store: Annotated[
        Path | None, typer.Option(help="Results directory (required; re-runs resume).")
    ] = None,
    grid: Annotated[
        list[str] | None,
        typer.Option(
            "--grid",
            help="PATH=VALUES: 'links\\[1].delay=50 ms,100 ms', 'links\\[1].errors.per="
            "log:1e-5:1e-2:4', 'links\\[1].delay=lin:50 ms:300 ms:6'. Several: all combinations.",
        ),
    ] = None,
    zip_: Annotated[
        list[str] | None,
        typer.Option("--zip", help="PATH=VALUES varying together (same number of values)."),
    ] = None,
    reps: Annotated[int, typer.Option(help="Replicates per grid point.")] = 10,
    executor: ExecutorOption = "local",
    workers: WorkersOption = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(help="Metric to keep: flows\\[0].goodput_bps, total_goodput_bps, ..."),
    ] = None,
    fail_fast: Annotated[bool, typer.Option(help="Stop at the first failed run.")] = False,
    retry_failed: Annotated[
        bool, typer.Option(help="Run again the runs the store records as failed.")
    ] = False,
    seed: Annotated[
        int | None, typer.Option(help="Base seed (default: the scenario's seed).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Change the base scenario: --set links\\[0].rate=2e6."),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on stderr.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing.")] = False,
) -> None:
    """Run a scenario over a grid of values times replicates; keep every run in --store."""
    from spacetp.sweep import run_sweep

    if store is None:
        raise ScenarioError("--store DIR is required: the directory that keeps every run")
    sc = load(scenario)
    for s in set_ or []:
        apply_set(sc, s)
    try:
        res = run_sweep(
            sc,
            _grid(grid or []),
            reps=reps,
            executor=executor,
            workers=workers,
            store=store,
            metrics=metric,
            fail_fast=fail_fast,
            base_seed=seed,
            retry_failed=retry_failed,
            zipped=zip_,
            source=str(scenario),
            console=console.table_err if progress and not quiet else None,
        )
    except KeyboardInterrupt:  # a one-line message rather than a silent exit
        raise ScenarioError(
            f"interrupted; the runs finished so far are in {store}: run the same command again "
            "to resume"
        ) from None
    from spacetp.sweep_report import write as write_report

    page = write_report(res, store)
    if quiet:
        return
    print_summary(res, metric)
    s = res.stats
    console.table_out.print(
        f"{s['planned']} runs: {s['computed']} computed, {s['cached']} from the store, "
        f"{s['failed']} failed; {human.duration(s['elapsed_s'])} on {s['workers']} worker(s) "
        f"({s['executor']}); store {store}; page {page}",
        highlight=False,
    )
    print_failures(res)


def results_cmd(
    store: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
    runs: Annotated[bool, typer.Option("--runs", help="Every run instead of the summary.")] = False,
    csv: Annotated[
        Path | None, typer.Option(help="Write the table (all columns) to this CSV file.")
    ] = None,
    metric: Annotated[
        list[str] | None, typer.Option(help="Metrics to compute (default: the sweep's).")
    ] = None,
    html: Annotated[
        Path | None, typer.Option(help="Write the page (table, zoomable plots) to this file.")
    ] = None,
) -> None:
    """Print the summary of the last sweep in a store (or all its runs), or export CSV."""
    from spacetp.sweep import load_sweep

    res = load_sweep(store, metric)
    if html is not None:
        from spacetp.sweep_report import write as write_report

        console.table_out.print(f"page written to {write_report(res, html)}", highlight=False)
    if csv is not None:
        (res.runs if runs else res.summary).to_csv(csv, index=False)
        console.table_out.print(f"{len(res.runs if runs else res.summary)} rows written to {csv}")
        return
    print_runs(res, metric) if runs else print_summary(res, metric)
    s = res.stats
    if s["missing"] or s["failed"]:
        console.table_out.print(
            f"{s['missing']} runs missing (run the sweep again), {s['failed']} failed"
        )


def plot_cmd(
    store: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
    x: Annotated[str | None, typer.Option(help="Parameter on the x axis (a --grid path).")] = None,
    y: Annotated[str | None, typer.Option(help="Metric on the y axis.")] = None,
    out_: Annotated[
        Path | None, typer.Option("--out", help="Figure file (.png, .pdf, .svg).")
    ] = None,
    hue: Annotated[str | None, typer.Option(help="Parameter drawn as one line per value.")] = None,
    where: Annotated[
        list[str] | None, typer.Option(help="Fix another parameter: PATH=VALUE.")
    ] = None,
    logx: Annotated[bool, typer.Option(help="Log-scale x axis.")] = False,
    logy: Annotated[bool, typer.Option(help="Log-scale y axis.")] = False,
    err_: Annotated[
        str, typer.Option("--err", help="Error bars: ci (95% confidence interval) or std.")
    ] = "ci",
    model: Annotated[
        str | None, typer.Option(help="Analytic model to overlay (spacetp.models).")
    ] = None,
    model_param: Annotated[
        list[str] | None,
        typer.Option(help="Model parameter K=V; V a number, 600 ms, or an expression of x."),
    ] = None,
    model_scale: Annotated[
        str, typer.Option(help="Multiply the model's output (e.g. 472*8: packets/s to b/s).")
    ] = "1",
    title: Annotated[str | None, typer.Option(help="Figure title.")] = None,
) -> None:
    """Draw a metric against a parameter with error bars, optionally with a model."""
    from spacetp.plot import plot_sweep
    from spacetp.sweep import load_sweep

    for value, option in ((x, "--x PARAM"), (y, "--y METRIC"), (out_, "--out FILE")):
        if value is None:  # checked here: typer's own message would not be one line
            raise ScenarioError(f"plot needs {option}")
    res = load_sweep(store)
    if y not in res.metrics:  # any metric can be computed from the stored summaries
        from spacetp.metrics import check

        try:
            check(y)
        except ScenarioError as e:
            raise ScenarioError(str(e).replace("--metric", "--y", 1)) from None
        res = load_sweep(store, [*res.metrics, y])
    if model_param and model is None:
        raise ScenarioError("--model-param: give the model with --model NAME")
    written = plot_sweep(
        res,
        x,
        y,
        out_,
        hue=hue,
        where=_pairs(where or [], "--where"),
        logx=logx,
        logy=logy,
        err=err_,
        model=model,
        model_params=_pairs(model_param or [], "--model-param"),
        model_scale=model_scale,
        title=title,
    )
    console.table_out.print(f"figure written to {written}")


def _pairs(items: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for s in items:
        k, sep, v = s.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise ScenarioError(f"{option} {s}: use NAME=VALUE")
        pairs[k.strip()] = v.strip()
    return pairs


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)
    app.command("results")(results_cmd)  # `plot`: spacetp.cli_plot
