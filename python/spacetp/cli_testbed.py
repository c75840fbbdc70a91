"""The `spacetp testbed` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def _json(flag: str, text: str | None) -> dict | None:
    from spacetp.errors import UserError

    if text is None:
        return None
    try:
        v = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{flag}: not valid JSON ({e})") from None
    if not isinstance(v, dict):
        raise UserError(f'{flag}: give a JSON object, e.g. \'{{"scps": {{"rate": "10 Mb/s"}}}}\'')
    return v


def register(app: typer.Typer) -> None:
    @app.command("testbed")
    def testbed(
        scenario: Annotated[
            Path,
            typer.Argument(
                metavar="SCENARIO.toml", help="A scenario (or one \\[\\[links]] entry)."
            ),
        ],
        link: Annotated[
            str | None,
            typer.Option(help="Which link of a scenario with several: index from 0, or A-B."),
        ] = None,
        gateway: Annotated[
            str | None,
            typer.Option(
                help="What the link's two ends run: an SCPS-TP or TCP profile (a `spacetp "
                "gateway` pair carrying it), quic, quic-cubic, quic-bbr, quic-newreno (a QUIC "
                "gateway pair), or none (routers: kernel TCP end to end). Default: the "
                "scenario's first flow's protocol if it is SCPS-TP or QUIC, else scps-tp."
            ),
        ] = None,
        cc: Annotated[
            str, typer.Option(help="The kernel congestion control of the client's socket.")
        ] = "cubic",
        bytes_: Annotated[
            int | None,
            typer.Option(
                "--bytes", help="Bytes per transfer (default: the first flow's, else 1 MB)."
            ),
        ] = None,
        transfers: Annotated[int, typer.Option(help="Transfers, one after the other.")] = 3,
        cap: Annotated[
            float | None,
            typer.Option(help="Seconds a transfer may take (default: from the prediction)."),
        ] = None,
        tcp: Annotated[
            str | None, typer.Option(help="Overrides of the gateways' profile as JSON.")
        ] = None,
        quic: Annotated[
            str | None, typer.Option(help="A QUIC pair's settings as JSON, as \\[flows.quic].")
        ] = None,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Write every figure as JSON here.")
        ] = None,
    ) -> None:
        """Client, gateway pair (or routers), emulated link and server on this machine from one
        scenario: transfers checked by SHA-256, beside the simulator's prediction."""
        from rich.table import Table

        from spacetp.console import out
        from spacetp.errors import UserError
        from spacetp.live.testbed import run_testbed, table

        res = run_testbed(
            scenario, link, gateway, cc, bytes_, transfers, cap,
            _json("--tcp", tcp), _json("--quic", quic),
            say=lambda s: out.print(s, highlight=False, soft_wrap=True),
        )  # fmt: skip
        t = Table(show_header=False, box=None)
        t.add_column(style="bold")
        t.add_column()
        for what, value in table(res):
            t.add_row(what, value)
        out.print(t)
        if json_out is not None:
            json_out.write_text(json.dumps(res, indent=2) + "\n")
            out.print(f"written to {json_out}", highlight=False)
        if not res["all_equal"]:
            raise UserError("a transfer did not arrive exactly (SHA-256 differs or bytes short)")
