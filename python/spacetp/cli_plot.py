"""The `spacetp plot` commands (registered on the app of spacetp.cli, which imports this module
at its end: `register(app)`):

    spacetp plot STORE --x PARAM --y METRIC --out F     a sweep's metric (`plot sweep`)
    spacetp plot tsg SOURCE [--flow N] --out F          time-sequence graph
    spacetp plot throughput SOURCE [--flow N] --out F   throughput over time
    spacetp plot rtt SOURCE [--flow N] --out F          RTT over time

SOURCE is a capture (.pcap, .pcapng, .cap: any TCP or SCPS-TP flow) or a scenario (.toml:
it is simulated with a pcap tap on the flow's first link). `--out` ending in .html gives a
zoomable page, .png/.svg/.pdf a static figure. QUIC is not drawn, so there is no --keylog:
decrypting is not enough, its ACKs name packet numbers that would have to be mapped back to
stream offsets (spacetp.pcapflows.QUIC_NOT_READ says what to use instead).
"""

from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from spacetp import console
from spacetp.cli_sweep import plot_cmd
from spacetp.errors import UserError
from spacetp.scenario import apply_set, load

CAPTURES = (".pcap", ".pcapng", ".cap", ".dmp")


class _PlotGroup(TyperGroup):
    """`spacetp plot STORE ...` (no subcommand) keeps meaning `spacetp plot sweep STORE ...`."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["sweep", *args]
        return super().parse_args(ctx, args)


def _view(source: Path, flow: int | None, set_, seed, link):
    from spacetp import tsg

    if source.suffix == ".toml":
        sc = load(source)
        for s in set_ or []:
            apply_set(sc, s)
        return tsg.from_simulation(sc, flow or 0, seed=seed, link=link)
    if source.suffix.lower() not in CAPTURES:
        raise UserError(f"{source}: give a capture ({', '.join(CAPTURES)}) or a scenario .toml")
    if set_ or seed is not None or link is not None:
        raise UserError("--set, --seed and --link apply to a scenario, not to a capture")
    return tsg.from_pcap(source, flow)


def _range(text: str | None) -> tuple[float | None, float | None]:
    from spacetp import units

    if not text:
        return None, None
    lo, sep, hi = text.partition(":")
    if not sep:
        raise UserError(f"--time {text}: use FROM:TO, e.g. 10:20 or '10 s:2 min' (either empty)")

    def v(x):
        if not x.strip():
            return None
        q = units.to_si(x.strip() if any(c.isalpha() for c in x) else f"{x.strip()} s")
        if q is None or q[1] not in (None, "duration"):
            raise UserError(f"--time {text}: {x.strip()!r} is not a time")
        return q[0]

    return v(lo), v(hi)


def _graph(kind: str):
    def command(
        source: Annotated[Path, typer.Argument(help="A capture (.pcap, .pcapng) or a scenario.")],
        out_: Annotated[
            Path, typer.Option("--out", help="Figure: .html (zoomable), .png, .svg or .pdf.")
        ],
        flow: Annotated[
            int | None,
            typer.Option(
                help="Flow: capture conversation index (default: the biggest) or "
                "the scenario's flows\\[N] (default 0)."
            ),  # fmt: skip
        ] = None,
        time: Annotated[
            str | None, typer.Option("--time", help="Only FROM:TO seconds, e.g. 10:20.")
        ] = None,
        bin_: Annotated[
            str | None, typer.Option("--bin", help="Throughput bin (default 1/100 of the run).")
        ] = None,
        set_: Annotated[
            list[str] | None, typer.Option("--set", help="Change the scenario (scenarios only).")
        ] = None,
        seed: Annotated[int | None, typer.Option(help="Seed (scenarios only).")] = None,
        link: Annotated[
            str | None,
            typer.Option(help="Link to record (scenarios only; default the flow's first)."),
        ] = None,
    ) -> None:
        from spacetp import units
        from spacetp.tsg_plot import save

        tmin, tmax = _range(time)
        bin_s = None
        if bin_:
            q = units.to_si(bin_)
            if q is None or q[1] != "duration" or q[0] <= 0:
                raise UserError(f"--bin {bin_}: a positive duration, e.g. 500 ms")
            bin_s = q[0]
        view = _view(source, flow, set_, seed, link)
        written = save(kind, view, out_, bin_s, tmin, tmax)
        c = view.counts()
        console.table_out.print(
            f"{view.title} ({view.source}): {c['segments']} segments, "
            f"{c['retransmissions']} retransmissions, {c['gaps']} gaps, "
            f"{c['presumed_lost']} presumed lost, {c['sack_blocks']} SACK blocks, "
            f"{c['snack_holes']} SNACK holes",
            highlight=False,
        )
        for n in view.notes:
            console.table_out.print(f"  note: {n}", highlight=False)
        console.table_out.print(f"figure written to {written}", highlight=False)

    command.__doc__ = {
        "tsg": "Time-sequence graph (tcptrace style): data, retransmissions, ACK, receive "
        "window, SACK blocks and SNACK holes, gaps and presumed losses over time.",
        "throughput": "Throughput over time: sending rate, goodput and retransmitted rate.",
        "rtt": "RTT over time: one sample per segment never retransmitted (Karn).",
    }[kind]
    return command


def register(app: typer.Typer) -> None:
    plot = typer.Typer(
        cls=_PlotGroup,
        help="Figures: a sweep's metric (spacetp plot STORE ...), or the time-sequence, "
        "throughput and RTT graphs of a capture or a simulated flow (spacetp plot tsg ...).",
        no_args_is_help=True,
    )
    plot.command("sweep")(plot_cmd)
    for kind in ("tsg", "throughput", "rtt"):
        plot.command(kind)(_graph(kind))
    app.add_typer(plot, name="plot")
