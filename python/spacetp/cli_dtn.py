"""The `spacetp dtn` command (registered on the app of spacetp.cli)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def _latency(d: dict) -> str:
    from spacetp.human import duration

    if d.get("since_creation_s") is None:
        return ""
    return f" ({duration(d['since_creation_s'])} after it was created)"


def _summary(rep: dict) -> list[str]:
    from spacetp.human import duration as fmt_duration
    from spacetp.human import size as fmt_bytes

    lines = [f"node ipn:{rep['node']} ran {fmt_duration(rep['elapsed_s'])}, stopped: "
             f"{rep['stopped']}"]  # fmt: skip
    for s in rep["sent"]:
        lines.append(f"sent {s['file']} ({fmt_bytes(s['bytes'])}) to {s['destination']}  "
                     f"sha256 {s['sha256']}")  # fmt: skip
    for d in rep["delivered"]:
        where = f" -> {d['file']}" if d["file"] else ""
        lines.append(
            f"delivered {fmt_bytes(d['bytes'])} from {d['source']} at "
            f"{fmt_duration(d['at_s'])}{_latency(d)}{where}  "
            f"sha256 {d['sha256']}"
        )
    for d in rep["dropped"]:
        lines.append(
            f"dropped a bundle to {d['destination']} ({fmt_bytes(d['bytes'])}): {d['why']}"
        )
    if rep.get("udp"):
        u = rep["udp"]
        lines.append(f"UDP convergence layer: {u['bundles_out']} datagrams out "
                     f"({u['fragmented']} bundles fragmented), {u['bundles_in']} in")  # fmt: skip
    for sp in rep["spans"]:
        lines.append(
            f"span to {sp['peer']}: export sessions {sp['export_sessions_completed']}/"
            f"{sp['export_sessions_started']} done ({sp['export_sessions_canceled']} canceled), "
            f"segments sent {sp['data_segments_sent']} "
            f"(resent {sp['data_segments_retransmitted']}), reports received "
            f"{sp['reports_received']}, import sessions {sp['import_sessions_completed']} "
            f"({sp['import_sessions_canceled']} canceled), reports sent {sp['reports_sent']}"
        )
    if rep["stored_at_stop"]:
        lines.append(f"{rep['stored_at_stop']} bundles left in the store")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("dtn")
    def dtn(
        node: Annotated[int, typer.Option(help="This node's ipn number (its LTP engine ID).")],
        contact_plan: Annotated[
            Path,
            typer.Option(
                help="ION contact plan (`a contact +t0 +t1 A B rate`, `a range ... owlt`); "
                "+t counts from this node's start."
            ),
        ],
        bind: Annotated[
            str, typer.Option(help="ADDRESS:PORT where this node's LTP listens (udplsi).")
        ] = "0.0.0.0:1113",
        peer: Annotated[
            list[str] | None,
            typer.Option(help="ENGINE=ADDRESS[:PORT] of a neighbor's LTP (udplso; repeatable)."),
        ] = None,
        udp_peer: Annotated[
            list[str] | None,
            typer.Option(
                help="NODE=ADDRESS[:PORT] of a neighbor reached by the UDP convergence layer "
                "(udpclo: a bundle per datagram, port 4556 by default; repeatable)."
            ),
        ] = None,
        udp_bind: Annotated[
            str | None,
            typer.Option(help="ADDRESS:PORT of this node's UDP convergence layer (udpcli)."),
        ] = None,
        send: Annotated[
            list[str] | None,
            typer.Option(help="FILE=ipn:NODE.SERVICE: send FILE as one bundle (repeatable)."),
        ] = None,
        out_dir: Annotated[
            Path | None, typer.Option("--out", help="Write delivered data units here.")
        ] = None,
        store: Annotated[
            Path | None,
            typer.Option(help="Keep undelivered bundles here at a stop; take them back at start."),
        ] = None,
        service: Annotated[
            int | None, typer.Option(help="Service number of this node's sending endpoint.")
        ] = None,
        lifetime: Annotated[
            float | None, typer.Option(help="Bundle lifetime, seconds (default 86400).")
        ] = None,
        ltp: Annotated[
            list[str] | None,
            typer.Option(help="KEY=VALUE: an LTP span setting, as \\[flows.ltp] (repeatable)."),
        ] = None,
        until_delivered: Annotated[
            int | None,
            typer.Option(
                help="Stop once this many data units were delivered here (with --until-sent: "
                "and everything sent has left)."
            ),
        ] = None,
        until_sent: Annotated[
            bool,
            typer.Option(
                "--until-sent", help="Stop once everything sent from here was acknowledged."
            ),
        ] = False,
        linger: Annotated[
            float | None,
            typer.Option(help="Seconds to keep answering the peer after an --until-* stop."),
        ] = None,
        duration: Annotated[
            float | None, typer.Option(help="Stop after this many seconds.")
        ] = None,
        max_session_cancels: Annotated[
            int | None,
            typer.Option(
                help="Give a bundle up (and exit 1) once the LTP blocks that carried it were "
                "canceled this many times (default 10; 0: never, resend until its lifetime "
                "ends, as ION does)."
            ),
        ] = None,
        report: Annotated[Path | None, typer.Option(help="Write the report (JSON) here.")] = None,
        check: Annotated[
            bool, typer.Option("--check", help="Check the settings and exit.")
        ] = False,
    ) -> None:
        """Run a live DTN node: the Bundle Protocol over LTP on a UDP socket, forwarding by the
        contact plan (CGR), storing what waits for a contact; interoperates with ION's
        ltpcli/ltpclo over udplsi/udplso."""
        from spacetp.console import err, out
        from spacetp.errors import UserError
        from spacetp.live import dtn as live

        try:
            plan_text = live.read_contact_plan(contact_plan)
            settings: dict = {
                "node": node,
                "bind": bind,
                "peers": [live.parse_peer(p) for p in peer or []],
                "udp_peers": [
                    live.parse_peer(p, "--udp-peer", live.UDP_CL_PORT) for p in udp_peer or []
                ],
                "contact_plan": plan_text,
                "send": [live.parse_send(s) for s in send or []],
                "until_sent": until_sent,
            }
            if ltp:
                settings["ltp"] = live.parse_ltp(ltp)
            for key, v in (
                ("udp_bind", udp_bind),
                ("out_dir", out_dir),
                ("store_dir", store),
                ("service", service),
                ("lifetime_s", lifetime),
                ("until_delivered", until_delivered),
                ("linger_s", linger),
                ("duration_s", duration),
                ("max_session_cancels", max_session_cancels),
            ):
                if v is not None:
                    settings[key] = str(v) if isinstance(v, Path) else v
            if until_delivered is None and not until_sent and duration is None and not check:
                raise ValueError("give a stop: --until-delivered N, --until-sent or --duration S")
            live.check(settings)
        except ValueError as e:
            raise UserError(str(e)) from None
        if check:
            out.print("configuration ok", highlight=False)
            return
        for d in (out_dir, store):
            if d is not None:
                d.mkdir(parents=True, exist_ok=True)

        def notice(line: str) -> None:
            # As it happens: canceled LTP sessions with their cause, bundles given up.
            out.print(line, highlight=False, markup=False, soft_wrap=True)

        try:
            rep = live.run_node(settings, on_notice=notice)
        except (ValueError, OSError) as e:
            raise UserError(str(e)) from None
        for line in _summary(rep):
            out.print(line, highlight=False, markup=False, soft_wrap=True)
        if report is not None:
            report.write_text(json.dumps(rep, indent=2) + "\n")
        if rep.get("given_up"):
            n = rep["given_up"]
            err.print(
                f"spacetp dtn: gave up {n} bundle{'s' if n > 1 else ''} after "
                f"{settings.get('max_session_cancels', 10)} canceled LTP sessions each "
                "(--max-session-cancels); see the lines above",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            raise typer.Exit(1)
