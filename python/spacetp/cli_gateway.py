"""The `spacetp gateway` command (registered on the app of spacetp.cli)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
from pathlib import Path
from typing import Annotated

import typer

from spacetp.live.gateway_net import AFTER_CRASH, INTERCEPT_PORT


def _say(line: str) -> None:
    from spacetp.console import err

    err.print(line, highlight=False, markup=False, soft_wrap=True)


class _StopSignal:
    """SIGTERM and SIGINT stop the gateway: the handler raises KeyboardInterrupt, which the
    core turns into an orderly stop. One that arrives during a tick waits for the tick's end:
    the tick writes the log events the core handed it, and an exception in the middle would
    lose them (a connection's open and close missing from the log)."""

    def __init__(self):
        self.in_tick = False
        self.pending = False

    def __call__(self, signum, frame):
        if self.in_tick:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def tick(self):
        self.in_tick = True
        try:
            yield
        finally:
            self.in_tick = False
        if self.pending:
            self.pending = False
            raise KeyboardInterrupt


def _listening(report_json: str) -> str:
    """ "; listening on ADDRESS, ..." for the readiness line: where the listeners are bound,
    a rule's port 0 as the kernel chose it (a script that cannot know a free port in advance
    asks for 0 and reads it here)."""
    bound = json.loads(report_json).get("listening") or []
    return f"; listening on {', '.join(bound)}" if bound else ""


def _ready_then(ticker, stop: _StopSignal):
    """The gateway's tick: first one readiness line on stderr (in the log's format), once the
    core runs: its sockets listen, and SIGHUP reloads and SIGTERM stops it from here on (a
    SIGHUP before this line may find the default action, which ends the process). Scripts
    and tests wait for it before they signal or connect."""
    first = [True]

    def tick(report_json: str):
        with stop.tick():
            if first[0]:
                first[0] = False
                ticker.say(
                    f"ready: pid {os.getpid()}{_listening(report_json)}; "
                    "SIGHUP reloads, SIGTERM stops"
                )
            return ticker.tick(report_json)

    return tick


def _print_status(where: str) -> None:
    """`--status ADDRESS:PORT`: a running gateway's state, from its metrics endpoint."""
    import urllib.request

    from spacetp.console import out
    from spacetp.errors import UserError
    from spacetp.live.gateway_metrics import status_rows

    try:
        with urllib.request.urlopen(f"http://{where}/status", timeout=5) as r:
            report = json.loads(r.read())
    except (OSError, ValueError) as e:
        raise UserError(f"--status {where}: no gateway metrics there ({e})") from None
    from rich.table import Table

    t = Table(title=f"gateway at {where}")
    t.add_column("")
    t.add_column("", justify="right")
    for k, v in status_rows(report):
        t.add_row(k, v)
    out.print(t)


def register(app: typer.Typer) -> None:
    @app.command("gateway")
    def gateway(
        local: Annotated[
            str | None,
            typer.Option(
                help="This gateway's address on the space link, IPv4 or IPv6 as the peer's "
                "(explicit rules; QUIC: the IPv4 address its tunnel's UDP socket is bound to)."
            ),
        ] = None,
        peer: Annotated[
            str | None,
            typer.Option(help="The peer gateway's address on the space link (explicit rules)."),
        ] = None,
        listen: Annotated[
            list[str] | None,
            typer.Option(
                help="ADDRESS:PORT=SCPS_PORT: accept kernel TCP there and carry each connection "
                "to the peer's SCPS_PORT (repeatable)."
            ),
        ] = None,
        forward: Annotated[
            list[str] | None,
            typer.Option(
                help="SCPS_PORT=ADDRESS:PORT: relay SCPS-TP connections to SCPS_PORT to this "
                "kernel-TCP destination (repeatable)."
            ),
        ] = None,
        intercept: Annotated[
            list[str] | None,
            typer.Option(
                help="LAN interface: intercept TCP arriving on it to any other host (nftables "
                "tproxy) and carry it with its own addresses (repeatable; needs --tun)."
            ),
        ] = None,
        intercept_port: Annotated[
            int | None,
            typer.Option(
                help=f"Port of the transparent socket that --intercept uses (default "
                f"{INTERCEPT_PORT})."
            ),
        ] = None,
        forward_original: Annotated[
            bool | None,
            typer.Option(
                "--forward-original/--no-forward-original",
                help="Relay SCPS-TP connections addressed to other hosts to that host and port.",
                show_default=False,
            ),
        ] = None,
        protocol: Annotated[
            str | None,
            typer.Option(
                help="What crosses the link: an SCPS-TP or TCP profile, as in the simulator, or "
                "quic, quic-cubic, quic-bbr, quic-newreno (every connection a stream of one "
                "QUIC connection between the gateways)."
            ),
        ] = None,
        tcp: Annotated[
            str | None,
            typer.Option(
                help='Overrides of the profile as JSON, e.g. \'{"scps": {"rate": "10 Mb/s"}}\'.'
            ),
        ] = None,
        quic: Annotated[
            str | None,
            typer.Option(
                help="QUIC: overrides of the profile as JSON, as \\[flows.quic] in scenarios, "
                'e.g. \'{"initial_rtt": "600 ms", "stream_receive_window": "8 MB"}\'.'
            ),
        ] = None,
        quic_port: Annotated[
            int | None,
            typer.Option(help="QUIC: UDP port of the tunnel on both gateways (default 4433)."),
        ] = None,
        tls_cert: Annotated[
            Path | None,
            typer.Option(help="QUIC: the PEM certificate both gateways share (--make-cert)."),
        ] = None,
        tls_key: Annotated[
            Path | None, typer.Option(help="QUIC: the private key of --tls-cert (PEM).")
        ] = None,
        make_cert: Annotated[
            Path | None,
            typer.Option(
                help="Write a new certificate and key for a QUIC gateway pair into this folder "
                "(gateway-cert.pem, gateway-key.pem; copy both to both gateways), then exit."
            ),
        ] = None,
        mtu: Annotated[
            int | None, typer.Option(help="Largest IP packet on the space link (default 1500).")
        ] = None,
        tun: Annotated[
            str | None,
            typer.Option(
                help="Create this TUN device as the space link: SCPS-TP as IPv4 protocol 6, "
                "routed by the kernel."
            ),
        ] = None,
        space_if: Annotated[
            list[str] | None,
            typer.Option(
                help="Interface the space link arrives on: its TCP is routed into the TUN "
                "(repeatable; with --tun)."
            ),
        ] = None,
        link_fd: Annotated[
            int | None,
            typer.Option(help="Inherited packet fd of the space link (one IPv4 packet per read)."),
        ] = None,
        udp: Annotated[
            str | None,
            typer.Option(
                help="LOCAL_ADDR:PORT,PEER_ADDR:PORT: carry the IPv4 packets in UDP datagrams."
            ),
        ] = None,
        link_state_fd: Annotated[
            int | None,
            typer.Option(
                help="Inherited datagram fd of link-state notices (b'link down', b'link up')."
            ),
        ] = None,
        link_state_udp: Annotated[
            str | None,
            typer.Option(
                help="ADDRESS:PORT: take link-state notices as UDP datagrams 'link down' / "
                "'link up' (persist mode during outages)."
            ),
        ] = None,
        duration: Annotated[
            float | None,
            typer.Option(
                help="Stop after this many seconds (default: Ctrl-C), as a signal stops it: "
                "connections still open are reset on both sides, or drained first with --drain."
            ),
        ] = None,
        drain: Annotated[
            float | None,
            typer.Option(
                help="On SIGTERM/SIGINT, stop accepting and let open transfers finish for up to "
                "this many seconds, then reset the rest (default: reset every relayed "
                "connection on both sides at once; a second signal always does)."
            ),
        ] = None,
        keepalive: Annotated[
            float | None,
            typer.Option(
                help="Seconds without a segment from the peer gateway before a connection "
                "sends keepalive probes (default 120)."
            ),
        ] = None,
        keepalive_interval: Annotated[
            float | None, typer.Option(help="Seconds between keepalive probes (default 30).")
        ] = None,
        keepalive_probes: Annotated[
            int | None,
            typer.Option(help="Unanswered probes after which both ends are reset (default 4)."),
        ] = None,
        idle_timeout: Annotated[
            float | None,
            typer.Option(
                help="Reset both ends of a relayed connection that moved no data either way "
                "for this many seconds (default: never)."
            ),
        ] = None,
        max_half_open: Annotated[
            int | None,
            typer.Option(
                help="SYNs from the space link beyond this many half-open connections are "
                "dropped, so a SYN flood holds a bounded share (default 1024)."
            ),
        ] = None,
        log: Annotated[
            str | None,
            typer.Option(
                help="summary (default: reloads, warnings, the final report), text (also a "
                "line per connection opened and ended, with its id) or json (all as JSON lines)."
            ),
        ] = None,
        after_crash: Annotated[
            str | None,
            typer.Option(
                help="What a crashed gateway's leftover interception rules do until the next "
                "start or --cleanup: open (traffic passes, unaccelerated) or closed (TCP that "
                "would pass the gateway is reset)."
            ),
        ] = None,
        cleanup: Annotated[
            bool,
            typer.Option(
                "--cleanup",
                help="Remove what a gateway with this --tun left behind after a crash (rules, "
                "routes, nft table, sysctls), then exit.",
            ),
        ] = False,
        stats: Annotated[Path | None, typer.Option(help="Write the counters as JSON here.")] = None,
        check: Annotated[
            bool,
            typer.Option(
                "--check", help="Only validate the configuration, and print it as resolved."
            ),
        ] = False,
        metrics: Annotated[
            str | None,
            typer.Option(
                help="ADDRESS:PORT: serve the counters at /metrics (Prometheus text format) "
                "and /status (JSON), updated every second."
            ),
        ] = None,
        status: Annotated[
            str | None,
            typer.Option(
                help="ADDRESS:PORT of a running gateway's --metrics: print its state as a "
                "table, then exit."
            ),
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                help="A TOML file of these settings (keys: the long options with _ for -); "
                "every flag given overrides it."
            ),
        ] = None,
    ) -> None:
        """Performance-enhancing proxy: splits kernel-TCP connections, carries each across the
        space link as SCPS-TP (spacetp-proto) or as a stream of one QUIC connection between
        the gateways (--protocol quic...), and the peer gateway opens the kernel-TCP
        connection to the destination."""
        from spacetp.console import out
        from spacetp.errors import UserError
        from spacetp.live.emulate import EmulateError
        from spacetp.live.gateway import check_config, host_port, is_quic, run, udp_link
        from spacetp.live.gateway_config import Ticker, load, relay_config, resolve

        if status is not None:
            _print_status(status)
            return

        try:
            flags = {
                "protocol": protocol, "local": local, "peer": peer, "listen": listen,
                "forward": forward, "forward_original": forward_original,
                "intercept": intercept, "intercept_port": intercept_port,
                "tcp": json.loads(tcp) if tcp else None,
                "quic": json.loads(quic) if quic else None, "quic_port": quic_port,
                "tls_cert": tls_cert and str(tls_cert), "tls_key": tls_key and str(tls_key),
                "mtu": mtu, "tun": tun, "space_if": space_if, "udp": udp,
                "link_state_udp": link_state_udp, "duration": duration, "drain": drain,
                "keepalive": keepalive, "keepalive_interval": keepalive_interval,
                "keepalive_probes": keepalive_probes, "after_crash": after_crash,
                "idle_timeout": idle_timeout, "log": log, "max_half_open": max_half_open,
                "stats": stats and str(stats), "metrics": metrics,
            }  # fmt: skip
            o = resolve(load(config) if config is not None else {}, flags)
        except json.JSONDecodeError as e:
            raise UserError(f"--tcp/--quic: not valid JSON: {e}") from None
        except ValueError as e:
            raise UserError(str(e)) from None
        protocol, local, peer = o["protocol"], o["local"], o["peer"]
        listen, forward, forward_original = o["listen"], o["forward"], o["forward_original"]
        intercept, intercept_port = o["intercept"], o["intercept_port"]
        quic_port, tls_cert, tls_key = o["quic_port"], o["tls_cert"], o["tls_key"]
        mtu, tun, space_if, udp = o["mtu"], o["tun"], o["space_if"], o["udp"]
        link_state_udp, duration, drain = o["link_state_udp"], o["duration"], o["drain"]
        keepalive, keepalive_interval = o["keepalive"], o["keepalive_interval"]
        keepalive_probes, after_crash = o["keepalive_probes"], o["after_crash"]
        stats = Path(o["stats"]) if o["stats"] else None
        metrics = o["metrics"]

        if make_cert is not None:
            from spacetp.live.gateway import make_cert as make

            c, k = make(make_cert)
            out.print(f"wrote {c} and {k}: give both to both gateways (--tls-cert, --tls-key)",
                      highlight=False, markup=False, soft_wrap=True)  # fmt: skip
            return
        quic_carrier = is_quic({"protocol": protocol})
        if cleanup:
            from spacetp.live.gateway_net import cleanup as clean
            from spacetp.live.gateway_net import quic_state_name

            if tun is None and not quic_carrier:
                raise UserError("--cleanup needs --tun NAME (the TUN of the gateway to clean up)")
            name = tun or quic_state_name(intercept_port)
            try:
                done = clean(name)
            except EmulateError as e:
                raise UserError(str(e)) from None
            # One line, never wrapped: scripts grep it.
            what = f"--tun {tun}" if tun else f"a QUIC gateway, --intercept-port {intercept_port}"
            line = done or f"nothing to clean for {what} in this network namespace"
            out.print(line, highlight=False, markup=False, soft_wrap=True)
            return
        if after_crash not in AFTER_CRASH:
            raise UserError(f"--after-crash {after_crash}: use one of {', '.join(AFTER_CRASH)}")
        if drain is not None and not drain >= 0:
            raise UserError(f"--drain {drain:g}: must be a number of seconds >= 0")
        try:
            cfg = relay_config(o)
            check_config(cfg)
        except ValueError as e:
            raise UserError(str(e)) from None
        if check:
            out.print("configuration ok", highlight=False)
            shown = {k: v for k, v in o.items() if v not in (None, [])}
            out.print(json.dumps(shown, indent=2), highlight=False, markup=False)
            return
        if quic_carrier:
            if udp is not None or tun is not None or space_if:
                raise UserError(
                    "a QUIC gateway's link is a UDP socket at --local:--quic-port (or --link-fd): "
                    "--tun, --space-if and --udp are for SCPS-TP"
                )
        elif sum(x is not None for x in (link_fd, udp, tun)) != 1:
            raise UserError("give the space link as exactly one of --tun, --udp and --link-fd")
        if link_state_fd is not None and link_state_udp is not None:
            raise UserError(
                "give link-state notices as at most one of --link-state-fd and --link-state-udp"
            )
        if (space_if or intercept) and tun is None and not quic_carrier:
            raise UserError("--space-if and --intercept need --tun")

        stop = _StopSignal()

        from spacetp.live.gateway_net import GatewayNet

        fd, ls = link_fd, link_state_fd
        # Everything opened here is closed (and the plumbing undone) on the way out.
        with contextlib.ExitStack() as undo:
            # SIGINT too: a job started in the background by a shell has SIGINT ignored, and
            # Python then installs no handler of its own.
            sigs = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)  # SIGHUP: a reload, below
            old = {s: signal.signal(s, stop) for s in sigs}
            undo.callback(lambda: [signal.signal(s, h) for s, h in old.items()])
            try:
                if udp is not None:
                    here, _, there = udp.partition(",")
                    try:
                        fd = udp_link(here, there)
                    except (OSError, ValueError) as e:
                        raise UserError(f"--udp {udp}: {e}") from None
                    undo.callback(os.close, fd)
                if tun is not None or (quic_carrier and intercept):
                    net = GatewayNet(
                        tun, mtu, space_if or [], intercept or [], intercept_port, after_crash
                    )
                    net_fd = undo.enter_context(net).fd
                    fd = net_fd if tun is not None else fd
                    if net.cleaned is not None:
                        out.print(net.cleaned, highlight=False, markup=False, soft_wrap=True)
                if link_state_udp is not None:
                    sock = undo.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
                    try:
                        sock.bind(host_port(link_state_udp))
                    except (OSError, ValueError) as e:
                        raise UserError(f"--link-state-udp {link_state_udp}: {e}") from None
                    ls = sock.fileno()
                server = None
                if metrics is not None:
                    from spacetp.live.gateway_metrics import MetricsServer

                    try:
                        server = MetricsServer(*host_port(metrics))
                    except (OSError, ValueError) as e:
                        raise UserError(f"--metrics {metrics}: {e}") from None
                    undo.callback(server.close)
                ticker = Ticker(config, flags, quic_carrier, _say, server, log=o["log"])
                signal.signal(signal.SIGHUP, ticker.request)
                rep = run(cfg, fd, ls, _ready_then(ticker, stop))
                ticker.log_events(rep.pop("events", []))
            except (EmulateError, ValueError, OSError) as e:
                raise UserError(str(e)) from None
        # JSON lines: the report is one line too.
        out.print(json.dumps(rep, indent=None if o["log"] == "json" else 2), highlight=False,
                  markup=False, soft_wrap=True)  # fmt: skip
        if stats is not None:
            stats.write_text(json.dumps(rep, indent=2) + "\n")
        if rep.get("reset_on_stop"):
            how = "" if drain else " (--drain SECONDS lets open transfers finish first)"
            _say(f"spacetp gateway: stopped by {rep['stopped']}: {rep['reset_on_stop']} open "
                 f"connections reset on both sides{how}")  # fmt: skip
        if rep["stopped"].startswith("error"):
            raise UserError(rep["stopped"])
