"""`spacetp bench --vs-ns3` (the side-by-side speed comparison of benches/vs_ns3.py),
`spacetp bench --vs-linux` (the kernel's reno, cubic and bbr over `spacetp emulate` against
the simulator's linux-* profiles, spacetp.live.vs_linux) and `spacetp bench --quic` (QUIC,
TCP and SCPS-TP side by side on space links, spacetp.quic_compare)."""

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from spacetp.errors import UserError


def _vs_ns3(args: list[str]) -> None:
    script = Path(__file__).resolve().parents[2] / "benches" / "vs_ns3.py"
    if not script.exists():
        raise UserError(f"{script} not found: run from a source checkout of spacetp")
    spec = importlib.util.spec_from_file_location("spacetp_vs_ns3", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(args)


def register(app: typer.Typer) -> None:
    @app.command(
        "bench",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def bench(
        ctx: typer.Context,
        vs_ns3: Annotated[
            bool, typer.Option("--vs-ns3", help="Run spacetp and ns-3 on A-D.")
        ] = False,
        vs_linux: Annotated[
            bool,
            typer.Option("--vs-linux", help="Run kernel reno/cubic/bbr against linux-* profiles."),
        ] = False,
        quic: Annotated[
            bool,
            typer.Option("--quic", help="QUIC, TCP and SCPS-TP side by side on space links."),
        ] = False,
        live: Annotated[
            bool,
            typer.Option("--live", help="--quic: kernel TCP and the gateway pair too (root)."),
        ] = False,
        quick: Annotated[
            bool, typer.Option("--quick", help="Fewer cases or smaller transfers.")
        ] = False,
        reps: Annotated[
            int, typer.Option("--reps", help="Runs per case (0: the benchmark's own).")
        ] = 0,
        out: Annotated[
            Path | None, typer.Option("--out", help="Where to write the results.")
        ] = None,
        case: Annotated[
            list[str] | None, typer.Option("--case", help="--vs-linux: only these cases.")
        ] = None,
    ) -> None:
        """Benchmarks against other implementations.

        --vs-ns3: spacetp against ns-3 (a source checkout) on scenarios A-D [--reps 3]
        [--ns3-reps 1] [--quick] [--no-ns3] [--out BENCHMARKS.md].

        --vs-linux: the kernel's reno, cubic and bbr between two network namespaces across
        `spacetp emulate`, against the simulator's linux-reno, linux-cubic and linux-bbr on
        the same links (cases geo, geo-per, leo, geo-bursty, cislunar, outage, ack-starved)
        [--quick] [--reps 5] [--case NAME]... [--out DIR]; needs root. Writes
        DIR/linux_comparison.csv and .md and a cwnd figure per case.

        --quic: QUIC (quinn's newreno, cubic, bbr), TCP (linux-reno, -cubic, -bbr) and
        SCPS-TP end to end on the interop runner's SAT and SATLOSS cases, a LEO-like link and
        an ACK-starved GEO link, in the simulator [--reps 3] [--quick] [--out DIR]; --live
        adds the kernel's TCP and TCP through the gateway pair (needs root). Writes
        DIR/quic_comparison.csv and .md and a cwnd figure per case.
        """
        if vs_ns3 + vs_linux + quic != 1:
            raise UserError("choose one benchmark: spacetp bench --vs-ns3, --vs-linux or --quic")
        if quic:
            from spacetp.console import out as console
            from spacetp.quic_compare import run_comparison

            if live:
                from spacetp.live.vs_linux import check_machine

                check_machine(("reno",))
            dest = out or Path("results/quic")
            run_comparison(dest, reps=reps or 3, quick=quick, live=live, say=console.print)
            console.print(f"wrote {dest / 'quic_comparison.md'}")
            return
        if vs_ns3:
            args = list(ctx.args)
            args += ["--quick"] if quick else []
            args += ["--reps", str(reps)] if reps else []
            args += ["--out", str(out)] if out else []
            _vs_ns3(args)
            return
        if ctx.args:
            raise UserError(f"--vs-linux does not take {' '.join(ctx.args)}")
        from spacetp.console import out as console
        from spacetp.live.vs_linux import run_grid

        dest = out or Path("results/vs-linux")
        run_grid(dest, quick=quick, reps=reps or None, cases=case or None, say=console.print)
        console.print(f"wrote {dest / 'linux_comparison.md'}")
