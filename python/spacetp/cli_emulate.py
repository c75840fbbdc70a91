"""The `spacetp emulate` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def print_report(out, rep: dict) -> None:
    from rich.table import Table

    t = Table(
        title=f"emulated {rep['elapsed_s']:.3g} s (stopped by {rep['stopped']})",
        title_justify="left",
    )
    for col in (
        "direction",
        "in",
        "forwarded",
        "queue drops",
        "error drops",
        "corrupted",
        "outage drops",
        "Mb/s out",
        "late p50",
        "late p99",
        "late max",
    ):
        t.add_column(col, justify="left" if col == "direction" else "right")
    el = max(rep["elapsed_s"], 1e-9)
    for d in rep["directions"]:
        late = d["lateness"]
        t.add_row(
            d["name"],
            f"{d['rx_packets']:,}",
            f"{d['written_packets']:,}",
            f"{d['queue_drops']:,}",
            f"{d['error_drops']:,}",
            f"{d['corrupted']:,}",
            f"{d['outage_drops']:,}",
            f"{d['written_bytes'] * 8 / el / 1e6:.4g}",
            f"{late['p50_us']:.0f} us",
            f"{late['p99_us']:.0f} us",
            f"{late['max_us']:.0f} us",
        )
    out.print(t)


def _queue(d: dict) -> str:
    """A direction's queue and the key that set it: `queue` is the forward queue only, the
    back direction keeps the default unless `queue_back` is given."""
    if d.get("queue_set_by", "default") != "default":
        return f"{d['queue']} ({d['queue_set_by']})"
    if d.get("queue_key") == "queue_back":
        return f"{d['queue']} (default: `queue` sets the forward queue only; set queue_back)"
    return f"{d['queue']} (default)"


def describe_direction(d: dict) -> str:
    """One direction of the link in words and units: `a->b: 2 Mb/s, 270 ms, queue 90
    packets (queue), mtu 1500, errors: BER 1e-7`."""
    from spacetp import human

    rate = d.get("rate") or human.rate(d["rate_bps"])
    text = (
        f"{d['name']}: {rate}, {human.duration(d['delay_s'])}, queue {_queue(d)}, "
        f"mtu {d['mtu']}, errors: {d.get('errors', 'none')}"
    )
    if d.get("errors", "none") != "none" and d.get("corrupted") == "deliver":
        text += " (hit packets delivered marked corrupted)"
    if d.get("outages"):
        spans = ", ".join(
            f"{human.duration(a)} to {human.duration(b)}" for a, b in d["outages"][:3]
        )
        more = f" and {len(d['outages']) - 3} more" if len(d["outages"]) > 3 else ""
        text += f", down {spans}{more}"
    return text


def register(app: typer.Typer) -> None:
    @app.command("emulate")
    def emulate(
        link_file: Annotated[
            Path, typer.Argument(metavar="LINK.toml", help="A \\[\\[links]] entry (or a scenario).")
        ],
        netns: Annotated[
            bool,
            typer.Option(
                "--netns", help="Create two network namespaces joined through the emulated link."
            ),
        ] = False,
        link: Annotated[
            str | None,
            typer.Option(help="Which link of a scenario with several: index from 0, or A-B."),
        ] = None,
        duration: Annotated[
            float | None, typer.Option(help="Stop after this many seconds (default: Ctrl-C).")
        ] = None,
        stats: Annotated[
            Path | None, typer.Option(help="Write the per-direction counters as JSON here.")
        ] = None,
        realtime: Annotated[
            bool,
            typer.Option(
                "--realtime/--no-realtime",
                help="Run the packet loop under SCHED_FIFO (default; needed for sub-ms timing "
                "on a busy machine).",
            ),
        ] = True,
        link_state_port: Annotated[
            int | None,
            typer.Option(
                help="Announce each outage start and end as a UDP datagram ('link down' / "
                "'link up') to this port of both namespaces' addresses.",
                min=1,
                max=65535,
            ),
        ] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Only validate the link and describe it.")
        ] = False,
    ) -> None:
        """Emulate a space link with real packets: spacetp emulate LINK.toml --netns."""
        from spacetp.console import out
        from spacetp.errors import UserError
        from spacetp.live.emulate import EmulateError, emulate_netns, load_link

        scenario_json, _, desc = load_link(link_file, link)
        for d in desc["directions"]:
            sched = [
                f"{n} {what} points"
                for what, n in (
                    ("rate", d.get("rate_points", 1)),
                    ("delay", d.get("delay_points", 1)),
                )
                if n > 1
            ]
            out.print(
                describe_direction(d) + (f" (at time 0; schedules of {', '.join(sched)})"
                                         if sched else ""),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )  # fmt: skip
        if check:
            return
        if duration is not None and not duration > 0:
            raise UserError(f"--duration {duration}: must be > 0 seconds")
        if not netns:
            raise UserError("spacetp emulate needs --netns (the only mode so far)")
        try:
            rep = emulate_netns(
                scenario_json,
                desc,
                duration=duration,
                realtime=realtime,
                say=lambda s: out.print(s, highlight=False, soft_wrap=True),
                link_state_port=link_state_port,
            )
        except EmulateError as e:
            raise UserError(str(e)) from None
        if realtime and not rep["realtime"]:
            out.print("note: SCHED_FIFO was refused; timing is best effort", highlight=False)
        print_report(out, rep)
        if stats is not None:
            stats.write_text(json.dumps(rep, indent=2) + "\n")
            out.print(f"counters written to {stats}")
        if rep["stopped"].startswith("error"):
            raise UserError(rep["stopped"])
