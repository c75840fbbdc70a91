"""The `spacetp cfdp` command (registered on the app of spacetp.cli)."""

from __future__ import annotations

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
        entity: Annotated[int, typer.Option(help="This entity's CFDP entity ID (0-65535).")],
        bind: Annotated[
            str, typer.Option(help="ADDRESS:PORT where this entity listens (UDP).")
        ] = "0.0.0.0:4556",
        peer: Annotated[
            list[str] | None,
            typer.Option(
                help="ENTITY=ADDRESS[:PORT] of a peer entity (port 4556 by default; repeatable)."
            ),  # fmt: skip
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
        """Run a live CFDP entity (CCSDS 727.0-B-5, class 1 or 2) on a UDP socket: send files,
        receive them into a directory, each checked by its checksum; interoperates with other
        CFDP implementations over UDP (cfdp-py, ION's UDP examples). Exits 1 if a transaction
        ended without its file."""
        from spacetp.console import err, out
        from spacetp.errors import UserError
        from spacetp.live import cfdp as live

        try:
            settings: dict = {
                "entity": entity,
                "bind": bind,
                "peers": [live.parse_peer(p) for p in peer or []],
                "send": [live.parse_send(s) for s in send or []],
                "until_sent": until_sent,
                "settings": live.parse_settings(setting or []),
            }
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
            out.print(f"ready: cfdp entity {entity} listening on {at}", highlight=False)

        try:
            rep = live.run_entity(settings, on_ready=ready)
        except (ValueError, OSError) as e:
            raise UserError(str(e)) from None
        for kind in ("sent", "received"):
            for t in rep[kind]:
                out.print(_line(kind, t), highlight=False, markup=False, soft_wrap=True)
        out.print(
            f"entity {rep['entity']} ran {rep['elapsed_s']:.1f} s, stopped: {rep['stopped']}; "
            f"datagrams out {rep['datagrams_out']}, in {rep['datagrams_in']} "
            f"({rep['datagrams_ignored']} ignored)",
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
