"""`spacetp model`: evaluate an analytic model at a point or along a sweep."""

from pathlib import Path
from typing import Annotated

import typer

from spacetp.scenario import ScenarioError


def _params(args: list[str]) -> dict[str, float]:
    """`--rtt 0.1 --p 1e-3` (or `--rtt=0.1`) into {"rtt": 0.1, "p": 0.001}."""
    out: dict[str, float] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            raise ScenarioError(f"model parameters are written --NAME VALUE; got {a!r}")
        name, eq, value = a[2:].partition("=")
        if not eq:
            if i + 1 >= len(args):
                raise ScenarioError(f"--{name}: needs a value")
            value = args[i + 1]
            i += 1
        try:
            out[name.replace("-", "_")] = float(value)
        except ValueError:
            raise ScenarioError(f"--{name}: {value!r} is not a number (SI units)") from None
        i += 1
    return out


def _list_models(console) -> None:
    from rich.markup import escape

    from spacetp.models import MODELS

    for name, spec in MODELS.items():
        console.print(f"[bold]{name}[/bold] -> {spec.returns}: {spec.description}")
        for p, prm in spec.params.items():
            need = "required" if prm.required else f"default {prm.default}"
            # Escaped: rich would take `[s]` for a style tag and print nothing.
            line = escape(f"    --{p} [{prm.unit}] {prm.description} ({need})")
            console.print(line, highlight=False)


def register(app: typer.Typer) -> None:
    @app.command(
        "model",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def model(
        ctx: typer.Context,
        name: Annotated[
            str | None,
            typer.Argument(
                help="Model name: pftk, mathis, scalable, scps-liu, ltp, cfdp... (omit to "
                "list every model with its parameters)."
            ),
        ] = None,
        sweep: Annotated[
            str | None,
            typer.Option(help="Vary one parameter: p=1e-4:1e-1:log20, START:STOP:linN or a,b,c."),
        ] = None,
        plot: Annotated[Path | None, typer.Option(help="With --sweep: write a PNG figure.")] = None,
    ) -> None:
        """Evaluate an analytic throughput model: spacetp model pftk --rtt 0.1 --p 1e-3."""
        import numpy as np  # here: every other command starts without numpy
        from rich.table import Table

        from spacetp.console import out
        from spacetp.models import MODELS, evaluate, parse_sweep

        if name is None:
            _list_models(out)
            return
        params = _params(list(ctx.args))
        try:
            if sweep is None:
                value = np.asarray(evaluate(name, **params), dtype=float)
                shown = ", ".join(f"{k}={v:g}" for k, v in params.items())
                out.print(f"{name}({shown}) = {float(value):.6g} {MODELS[name].returns}")
                return
            var, xs = parse_sweep(sweep)
            ys = np.asarray(evaluate(name, **{**params, var: xs}), dtype=float)
        except ValueError as e:
            raise ScenarioError(str(e)) from None
        t = Table(title=f"{name} vs {var}", title_justify="left")
        t.add_column(var, justify="right")
        t.add_column(MODELS[name].returns, justify="right")
        for x, y in zip(xs, np.broadcast_to(ys, xs.shape), strict=True):
            t.add_row(f"{x:.6g}", f"{y:.6g}")
        out.print(t)
        if plot is not None:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(6, 4))
            ax.plot(xs, np.broadcast_to(ys, xs.shape), marker="o", ms=3)
            if "log" in sweep:
                ax.set_xscale("log")
                ax.set_yscale("log")
            unit = MODELS[name].params[var].unit if var in MODELS[name].params else ""
            ax.set_xlabel(f"{var} [{unit}]" if unit not in ("", "1") else var)
            ax.set_ylabel(MODELS[name].returns)
            ax.set_title(f"{name}: {MODELS[name].description}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            fig.tight_layout()
            fig.savefig(plot, dpi=120)
            out.print(f"figure written to {plot}")
