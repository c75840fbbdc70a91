"""The `spacetp cfdp` command (registered on the app of spacetp.cli)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def _line(kind: str, t: dict) -> str:
    from spacetp.human import duration
    from spacetp.human import size as fmt_bytes

    way = "to" if kind == "sent" else "from"
    end = t["condition"] or "not ended"
    if t["condition"] and not t["complete"]:
        end += " (incomplete)"
    took = ""
    if t["ended_s"] is not None:
        took = f" in {duration(t['ended_s'] - t['began_s'])}"
    pdus = t["pdus"]
    line = (
        f"{kind} {t['name'] or '?'} ({fmt_bytes(t['bytes'])}) {way} entity {t['peer']}, "
        f"transaction {t['seq']}: {end}{took}; file data PDUs {pdus['file_data']}, "
        f"NAKs {pdus['nak']}"
    )
    if t["faults"]:
        line += ", faults " + ", ".join(f"{k} x{v}" for k, v in t["faults"].items())
    if t["sha256"]:
        line += f"  sha256 {t['sha256']}"
    if kind == "received" and t["file"]:
        line += f"  -> {t['file']}"
    return line


def register(app: typer.Typer) -> None:
    @app.command("cfdp")
    def cfdp(
        entity: Annotated[
            int,
            typer.Option(
                help="This entity's CFDP entity ID (0-65535; over BP, its node's ipn number)."
            ),
        ],
        bind: Annotated[
            str | None,
            typer.Option(
                help="ADDRESS:PORT where this entity listens: UDP (default 0.0.0.0:4556), or "
                "over BP its node's LTP (default 0.0.0.0:1113)."
            ),
        ] = None,
        peer: Annotated[
            list[str] | None,
            typer.Option(
                help="ENTITY=ADDRESS[:PORT] of a peer entity (port 4556 by default); over BP, "
                "NODE=ADDRESS[:PORT] of a neighbor's LTP (port 1113); repeatable."
            ),
        ] = None,
        contact_plan: Annotated[
            Path | None,
            typer.Option(
                help="Over BP (--set carrier=bp): ION's `a contact` / `a range` lines for the "
                "node the entity runs on (as spacetp dtn)."
            ),
        ] = None,
        ltp: Annotated[
            list[str] | None,
            typer.Option(
                help="Over BP: KEY=VALUE, an LTP span setting as \\[flows.ltp] "
                "(max_ber=1e-5...; repeatable)."
            ),
        ] = None,
        lifetime: Annotated[
            float | None,
            typer.Option(help="Over BP: the bundles' lifetime, seconds (default 86400)."),
        ] = None,
        send: Annotated[
            list[str] | None,
            typer.Option(
                help="FILE=ENTITY[:NAME]: send FILE to ENTITY, named NAME there (default: its "
                "own name); repeatable, sent one after another."
            ),
        ] = None,
        out_dir: Annotated[
            Path | None,
            typer.Option("--out", help="Write files received here (NAME.part until verified)."),
        ] = None,
        setting: Annotated[
            list[str] | None,
            typer.Option(
                "--set",
                help="KEY=VALUE: a transaction setting, as \\[flows.cfdp] (class=1, "
                "nak_timer=2s, rate=2Mb/s, checksum=crc32...; repeatable).",
            ),
        ] = None,
        until_received: Annotated[
            int | None,
            typer.Option(help="Stop once this many transactions were received (complete or not)."),
        ] = None,
        until_sent: Annotated[
            bool,
            typer.Option("--until-sent", help="Stop once every file sent ended its transaction."),
        ] = False,
        linger: Annotated[
            float | None,
            typer.Option(help="Seconds to keep answering peers after an --until-* stop (2)."),
        ] = None,
        duration: Annotated[
            float | None, typer.Option(help="Stop after this many seconds.")
        ] = None,
        report: Annotated[Path | None, typer.Option(help="Write the report (JSON) here.")] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Check the settings and exit.")
        ] = False,
    ) -> None:
        """Run a live CFDP entity (CCSDS 727.0-B-5, class 1 or 2) on a UDP socket, or over the
        Bundle Protocol on a DTN node (--set carrier=bp, as ION's bputa): send files, receive
        them into a directory, each checked by its checksum; interoperates with other CFDP
        implementations (cfdp-py over UDP, ION over BP). Exits 1 if a transaction ended
        without its file."""
        from spacetp.console import err, out
        from spacetp.errors import UserError
        from spacetp.live import cfdp as live

        try:
            transaction = live.parse_settings(setting or [])
            over_bp = transaction.get("carrier") == "bp"
            port = live.LTP_PORT if over_bp else live.DEFAULT_PORT
            bind = bind or f"0.0.0.0:{port}"
            peers = [live.parse_peer(p, port) for p in peer or []]
            settings: dict = {
                "entity": entity,
                "send": [live.parse_send(s) for s in send or []],
                "until_sent": until_sent,
                "settings": transaction,
            }
            if over_bp:
                if contact_plan is None:
                    raise ValueError("--set carrier=bp: give the node's --contact-plan FILE")
                from spacetp.live import dtn

                plan = dtn.read_contact_plan(contact_plan)
                ltp_settings = dtn.parse_ltp(ltp) if ltp else None
                settings["bp"] = live.bp_node(entity, bind, peers, plan, ltp_settings, lifetime)
            elif contact_plan is not None or ltp or lifetime is not None:
                raise ValueError(
                    "--contact-plan, --ltp and --lifetime are for CFDP over BP (--set carrier=bp)"
                )
            else:
                settings["bind"], settings["peers"] = bind, peers
            for key, v in (
                ("out_dir", out_dir),
                ("until_received", until_received),
                ("linger_s", linger),
                ("duration_s", duration),
            ):
                if v is not None:
                    settings[key] = str(v) if isinstance(v, Path) else v
            if out_dir is not None:
                out_dir.mkdir(parents=True, exist_ok=True)
            if until_received is None and not until_sent and duration is None and not check:
                raise ValueError("give a stop: --until-received N, --until-sent or --duration S")
            live.check(settings)
        except ValueError as e:
            raise UserError(str(e)) from None
        if check:
            out.print("configuration ok", highlight=False)
            return

        def ready(at: str) -> None:
            where = (
                f"on DTN node {entity}, LTP on {at}" if "bp" in settings else f"listening on {at}"
            )
            out.print(f"ready: cfdp entity {entity} {where}", highlight=False)

        try:
            rep = live.run_entity(settings, on_ready=ready)
        except (ValueError, OSError) as e:
            raise UserError(str(e)) from None
        for kind in ("sent", "received"):
            for t in rep[kind]:
                out.print(_line(kind, t), highlight=False, markup=False, soft_wrap=True)
        units = "bundles" if "bp" in rep else "datagrams"
        out.print(
            f"entity {rep['entity']} ran {rep['elapsed_s']:.1f} s, stopped: {rep['stopped']}; "
            f"{units} out {rep['datagrams_out']}, in {rep['datagrams_in']} "
            f"({rep['datagrams_ignored']} ignored)",
            highlight=False,
        )
        if "bp" in rep:
            for s in rep["bp"]["spans"]:
                out.print(
                    f"LTP span to {s['peer']}: {s['data_segments_sent']} data segments sent "
                    f"({s['data_segments_retransmitted']} resent), "
                    f"{s['red_segments_received']} received, sessions canceled "
                    f"{s['export_sessions_canceled'] + s['import_sessions_canceled']}",
                    highlight=False,
                )
        if report is not None:
            report.write_text(json.dumps(rep, indent=2) + "\n")
        failed = [t for k in ("sent", "received") for t in rep[k]
                  if not (t["complete"] and t["condition"] == "NoError")]  # fmt: skip
        if failed:
            err.print(
                f"spacetp cfdp: {len(failed)} transaction{'s' if len(failed) > 1 else ''} "
                "ended without the file; see the lines above",
                highlight=False,
            )
            raise typer.Exit(1)
