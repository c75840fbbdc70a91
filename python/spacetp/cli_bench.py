"""`spacetp bench --vs-ns3`: the side-by-side speed comparison of benches/vs_ns3.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import typer

from spacetp.scenario import ScenarioError


def register(app: typer.Typer) -> None:
    @app.command(
        "bench",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def bench(
        ctx: typer.Context,
        vs_ns3: bool = typer.Option(False, "--vs-ns3", help="Run spacetp and ns-3 on A-D."),
    ) -> None:
        """Benchmarks against ns-3 (a source checkout): spacetp bench --vs-ns3 [--reps 3]
        [--ns3-reps 1] [--quick] [--no-ns3] [--out BENCHMARKS.md]."""
        script = Path(__file__).resolve().parents[2] / "benches" / "vs_ns3.py"
        if not vs_ns3:
            raise ScenarioError("choose a benchmark: spacetp bench --vs-ns3")
        if not script.exists():
            raise ScenarioError(f"{script} not found: run from a source checkout of spacetp")
        spec = importlib.util.spec_from_file_location("spacetp_vs_ns3", script)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.main(list(ctx.args))
