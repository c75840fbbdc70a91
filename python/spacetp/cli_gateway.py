"""The `spacetp gateway` command (registered on the app of spacetp.cli)."""

import contextlib
import inspect
import json
import os
import re
import signal
import socket
from pathlib import Path
from typing import Optional

import typer


def _say(line: str) -> None:
    from spacetp.console import err

    err.print(line, highlight=False, markup=False, soft_wrap=True)


class _StopSignal:
    """SIGTERM and SIGINT stop the gateway in order. The handler only records the signal;
    the core asks `requested()` between its steps and begins the stop itself. A handler that
    raised (KeyboardInterrupt) could cut the tick short anywhere, even before it began, and
    lose the log events the core had just handed it: a connection's open and close missing
    from the log."""

    def __init__(self):
        self.pending = 0

    def __call__(self, signum, frame):
        self.pending += 1

    def requested(self) -> bool:
        """Whether a stop signal came that the core has not been told of: one per call, so
        that a second signal (while draining: reset at once) is not merged into the first."""
        if self.pending == 0:
            return False
        self.pending -= 1
        return True


def _listening(report_json: str) -> str:
    """ "; listening on ADDRESS, ..." for the readiness line: where the listeners are bound,
    a rule's port 0 as the kernel chose it (a script that cannot know a free port in advance
    asks for 0 and reads it here)."""
    bound = json.loads(report_json).get("listening") or []
    return f"; listening on {', '.join(bound)}" if bound else ""


def _ready_then(ticker):
    """The gateway's tick: first one readiness line on stderr (in the log's format), once the
    core runs: its sockets listen, and SIGHUP reloads and SIGTERM stops it from here on (a
    SIGHUP before this line stops it, or at the very start meets the default action, which
    ends the process). Scripts and tests wait for it before they signal or connect."""
    first = [True]

    def tick(report_json: str):
        if first[0]:
            first[0] = False
            ticker.say(
                f"ready: pid {os.getpid()}{_listening(report_json)}; SIGHUP reloads, SIGTERM stops"
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


# What rich takes for a style tag in help text (rich.markup.escape's pattern): `[a...]`.
_MARKUP_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def escape_markup(text: str) -> str:
    """`rich.markup.escape(text)`, without importing rich at every start (18 ms): the
    settings' help is made on every `spacetp` command, and shown only by --help."""
    text = _MARKUP_TAG.sub(lambda m: f"{m[1]}{m[1]}\\{m[2]}", text)
    return text + "\\" if text.endswith("\\") and not text.endswith("\\\\") else text


def _setting_option(key: str, setting) -> inspect.Parameter:
    """The flag of one gateway setting (gateway_config.KEYS): its kind, its help, its default
    said; None when not given, so that the file's value or the default applies."""
    flag = "--" + key.replace("_", "-")
    kinds = {"str": str, "int": int, "number": float, "bool": bool, "list": list[str],
             "table": str}  # fmt: skip
    help = escape_markup(setting.help)
    if setting.default not in (None, [], False):
        help += f" (default {setting.default})"
    decls = [f"{flag}/--no-{flag[2:]}"] if setting.kind == "bool" else [flag]
    option = typer.Option(None, *decls, help=help, show_default=False)
    return inspect.Parameter(
        key, inspect.Parameter.KEYWORD_ONLY, default=option,
        annotation=Optional[kinds[setting.kind]],  # noqa: UP045 (typer reads typing's form)
    )  # fmt: skip


# The options that are the process's, not settings of the gateway (flags only).
_PROCESS_OPTIONS = {
    "link_fd": (int | None, typer.Option(
        None, help="Inherited packet fd of the space link (one IPv4 packet per read).")),
    "link_state_fd": (int | None, typer.Option(
        None, help="Inherited datagram fd of link-state notices (b'link down', b'link up').")),
    "make_cert": (Path | None, typer.Option(
        None, help="Write a new certificate and key for a QUIC gateway pair into this folder "
        "(gateway-cert.pem, gateway-key.pem; copy both to both gateways), then exit.")),
    "cleanup": (bool, typer.Option(
        False, "--cleanup", help="Remove what a gateway with this --tun left behind after a "
        "crash (rules, routes, nft table, sysctls), then exit.")),
    "check": (bool, typer.Option(
        False, "--check", help="Only validate the configuration, and print it as resolved.")),
    "status": (str | None, typer.Option(
        None, help="ADDRESS:PORT of a running gateway's --metrics: print its state as a table, "
        "then exit.")),
    "config": (Path | None, typer.Option(
        None, help="A TOML file of these settings (keys: the long options with _ for -); "
        "every flag given overrides it.")),
}  # fmt: skip


def _options() -> inspect.Signature:
    """`spacetp gateway`'s options: one per gateway setting (made from gateway_config.KEYS,
    the file's keys), then the process's own."""
    from spacetp.live.gateway_config import KEYS

    params = [_setting_option(k, s) for k, s in KEYS.items()]
    for name, (kind, option) in _PROCESS_OPTIONS.items():
        params.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
        )
    return inspect.Signature(params)


def _settings(given: dict) -> tuple[dict, dict]:
    """Every gateway setting resolved (the flags over the --config file over the defaults),
    and the flags given."""
    from spacetp.errors import UserError
    from spacetp.live.gateway_config import KEYS, load, resolve

    flags = {k: given[k] for k in KEYS}
    for k in ("tcp", "quic"):
        try:
            flags[k] = json.loads(flags[k]) if flags[k] else None
        except json.JSONDecodeError as e:
            raise UserError(f"--{k}: not valid JSON: {e}") from None
    config = given["config"]
    try:
        return resolve(load(config) if config is not None else {}, flags), flags
    except ValueError as e:
        raise UserError(str(e)) from None


def _print(line: str) -> None:
    """One line on stdout, never wrapped (scripts grep them)."""
    from spacetp.console import out

    out.print(line, highlight=False, markup=False, soft_wrap=True)


def _cleanup(o: dict, quic_carrier: bool) -> None:
    """--cleanup: remove what a crashed gateway left behind in this namespace."""
    from spacetp.errors import UserError
    from spacetp.live.emulate import EmulateError
    from spacetp.live.gateway_net import cleanup as clean
    from spacetp.live.gateway_net import quic_state_name

    tun, intercept_port = o["tun"], o["intercept_port"]
    if tun is None and not quic_carrier:
        raise UserError("--cleanup needs --tun NAME (the TUN of the gateway to clean up)")
    name = tun or quic_state_name(intercept_port)
    try:
        done = clean(name)
    except EmulateError as e:
        raise UserError(str(e)) from None
    what = f"--tun {tun}" if tun else f"a QUIC gateway, --intercept-port {intercept_port}"
    _print(done or f"nothing to clean for {what} in this network namespace")


def _check_link(o: dict, given: dict, quic_carrier: bool) -> None:
    """The space link and its notices given once each, as the carrier takes them."""
    from spacetp.errors import UserError

    tun, udp, space_if = o["tun"], o["udp"], o["space_if"]
    if quic_carrier:
        if udp is not None or tun is not None or space_if:
            raise UserError(
                "a QUIC gateway's link is a UDP socket at --local:--quic-port (or --link-fd): "
                "--tun, --space-if and --udp are for SCPS-TP"
            )
    elif sum(x is not None for x in (given["link_fd"], udp, tun)) != 1:
        raise UserError("give the space link as exactly one of --tun, --udp and --link-fd")
    if given["link_state_fd"] is not None and o["link_state_udp"] is not None:
        raise UserError(
            "give link-state notices as at most one of --link-state-fd and --link-state-udp"
        )
    if (space_if or o["intercept"]) and tun is None and not quic_carrier:
        raise UserError("--space-if and --intercept need --tun")


def _run(o: dict, given: dict, flags: dict, cfg: dict, quic_carrier: bool) -> dict:
    """Open the link, its notices and the metrics endpoint, run the gateway until it stops,
    and undo all of it; the final report."""
    from spacetp.errors import UserError
    from spacetp.live.emulate import EmulateError
    from spacetp.live.gateway import host_port, run, udp_link
    from spacetp.live.gateway_config import Ticker
    from spacetp.live.gateway_net import GatewayNet

    stop = _StopSignal()
    tun, udp, metrics = o["tun"], o["udp"], o["metrics"]
    fd, ls = given["link_fd"], given["link_state_fd"]
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
            if tun is not None or (quic_carrier and o["intercept"]):
                net = GatewayNet(tun, o["mtu"], o["space_if"] or [], o["intercept"] or [],
                                 o["intercept_port"], o["after_crash"])  # fmt: skip
                net_fd = undo.enter_context(net).fd
                fd = net_fd if tun is not None else fd
                if net.cleaned is not None:
                    _print(net.cleaned)
            if o["link_state_udp"] is not None:
                sock = undo.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
                try:
                    sock.bind(host_port(o["link_state_udp"]))
                except (OSError, ValueError) as e:
                    raise UserError(f"--link-state-udp {o['link_state_udp']}: {e}") from None
                ls = sock.fileno()
            server = None
            if metrics is not None:
                from spacetp.live.gateway_metrics import MetricsServer

                try:
                    server = MetricsServer(*host_port(metrics))
                except (OSError, ValueError) as e:
                    raise UserError(f"--metrics {metrics}: {e}") from None
                undo.callback(server.close)
            ticker = Ticker(given["config"], flags, quic_carrier, _say, server, log=o["log"])
            signal.signal(signal.SIGHUP, ticker.request)
            rep = run(cfg, fd, ls, _ready_then(ticker), stop.requested)
            ticker.log_events(rep.pop("events", []))
        except (EmulateError, ValueError, OSError) as e:
            raise UserError(str(e)) from None
    return rep


def register(app: typer.Typer) -> None:
    def gateway(**given) -> None:
        """Performance-enhancing proxy: splits kernel-TCP connections, carries each across the
        space link as SCPS-TP (spacetp-proto) or as a stream of one QUIC connection between
        the gateways (--protocol quic...), and the peer gateway opens the kernel-TCP
        connection to the destination."""
        from spacetp.errors import UserError
        from spacetp.live.gateway import check_config, is_quic
        from spacetp.live.gateway_config import relay_config

        if given["status"] is not None:
            _print_status(given["status"])
            return
        o, flags = _settings(given)
        if given["make_cert"] is not None:
            from spacetp.live.gateway import make_cert

            c, k = make_cert(given["make_cert"])
            _print(f"wrote {c} and {k}: give both to both gateways (--tls-cert, --tls-key)")
            return
        quic_carrier = is_quic({"protocol": o["protocol"]})
        if given["cleanup"]:
            _cleanup(o, quic_carrier)
            return
        from spacetp.live.gateway_net import AFTER_CRASH  # (the network side loads on use)

        if o["after_crash"] not in AFTER_CRASH:
            raise UserError(
                f"--after-crash {o['after_crash']}: use one of {', '.join(AFTER_CRASH)}"
            )
        drain = o["drain"]
        if drain is not None and not drain >= 0:
            raise UserError(f"--drain {drain:g}: must be a number of seconds >= 0")
        try:
            cfg = relay_config(o)
            check_config(cfg)
        except ValueError as e:
            raise UserError(str(e)) from None
        if given["check"]:
            from spacetp.console import out

            out.print("configuration ok", highlight=False)
            shown = {k: v for k, v in o.items() if v not in (None, [])}
            out.print(json.dumps(shown, indent=2), highlight=False, markup=False)
            return
        _check_link(o, given, quic_carrier)
        rep = _run(o, given, flags, cfg, quic_carrier)
        # JSON lines: the report is one line too.
        _print(json.dumps(rep, indent=None if o["log"] == "json" else 2))
        if o["stats"]:
            Path(o["stats"]).write_text(json.dumps(rep, indent=2) + "\n")
        if rep.get("reset_on_stop"):
            how = "" if drain else " (--drain SECONDS lets open transfers finish first)"
            # In the log's format: with --log json, every line on stderr is JSON.
            from spacetp.live.gateway_log import message_line

            text = (f"spacetp gateway: stopped by {rep['stopped']}: {rep['reset_on_stop']} "
                    f"open connections reset on both sides{how}")  # fmt: skip
            _say(message_line(text, o["log"]))
        if rep["stopped"].startswith("error"):
            raise UserError(rep["stopped"])

    gateway.__signature__ = _options()
    app.command("gateway")(gateway)
