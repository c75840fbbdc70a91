"""The `spacetp tune` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

from pathlib import Path
from typing import Annotated

import typer

from spacetp import console
from spacetp.cli_sweep import ExecutorOption, WorkersOption


def register(app: typer.Typer) -> None:
    @app.command("tune")
    def tune_cmd(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        protocol: Annotated[str, typer.Option(help="The profile whose settings to search.")],
        trials: Annotated[int, typer.Option(help="Settings tried (Optuna's TPE).")] = 30,
        reps: Annotated[int, typer.Option(help="Seeds each trial runs (the same for all).")] = 3,
        param: Annotated[
            list[str] | None,
            typer.Option(
                help="Narrow or widen a setting's range: SETTING=LOW:HIGH, e.g. "
                "receive_buffer=1 MB:64 MB (repeatable; the settings are the family's, "
                "docs/fit.md)."
            ),
        ] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help='Change the scenario: --set links\\[1].delay="300 ms".'),
        ] = None,
        out_dir: Annotated[
            Path | None,
            typer.Option(
                "--out",
                help="Where the study, runs and results go "
                "(default results/tune-PROTOCOL; a second run resumes it).",
            ),
        ] = None,  # fmt: skip
        executor: ExecutorOption = "local",
        workers: WorkersOption = None,
        seed: Annotated[int, typer.Option(help="The sampler's seed.")] = 0,
        quiet: Annotated[
            bool, typer.Option("--quiet", "-q", help="Print only the result.")
        ] = False,
    ) -> None:
        """Search one protocol's settings on your link (Optuna), from the settings fitted to
        it: the best with its 95% interval, the gain over fitted and as configured, each
        setting's sensitivity, and a scenario file with the best settings."""
        from spacetp.scenario import apply_set, load
        from spacetp.tune import lines, tune

        sc = load(scenario)
        for s in set_ or []:
            apply_set(sc, s)
        res = tune(
            sc, protocol, trials=trials, reps=reps, out=out_dir, executor=executor,
            workers=workers, params=param, seed=seed, console=None if quiet else console.table_err,
        )  # fmt: skip
        for line in lines(res):
            console.table_out.print(line, highlight=False, markup=False, soft_wrap=True)
        for what, f in res.files.items():
            console.table_out.print(f"{what}: {f}", highlight=False, markup=False, soft_wrap=True)
