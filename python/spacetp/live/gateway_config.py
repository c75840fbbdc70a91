"""`spacetp gateway --config gw.toml`: the gateway's settings in one TOML file.

The keys are the command's long options with `_` for `-` (`keepalive_interval` for
`--keepalive-interval`), so the file and the flags are one vocabulary and every flag overrides
the file. `tcp` and `quic` are tables (the flags take the same as JSON text). Unknown keys and
values of the wrong kind are refused with the file, the key and what is allowed; the relay's
own settings are then checked by the core, as for the flags (`spacetp._core.gateway_check`).
Process-level options (`--link-fd`, `--link-state-fd`, `--make-cert`, `--cleanup`,
`--check`) are flags only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from spacetp.live.gateway_log import check_mode, event_line, message_line

# Port of the transparent socket that intercepted connections are handed to (the default
# of `intercept_port`; here, not in gateway_net, so that reading settings loads no network
# code).
INTERCEPT_PORT = 5999


class Setting(NamedTuple):
    """One gateway setting: a key of the file and a flag of the command (`--keepalive-interval`
    for `keepalive_interval`; `spacetp gateway`'s options are made from these)."""

    # str, int, number, bool, list (of strings; a repeatable flag), table (JSON text as a flag)
    kind: str
    # What it is when neither the file nor a flag gives it.
    default: Any
    # What it does: the flag's help and the docs' table.
    help: str


KEYS: dict[str, Setting] = {
    "protocol": Setting(
        "str",
        "scps-tp",
        "What crosses the link: an SCPS-TP or TCP profile, as in the simulator, or quic, "
        "quic-cubic, quic-bbr, quic-newreno (every connection a stream of one QUIC connection "
        "between the gateways).",
    ),
    "local": Setting(
        "str",
        None,
        "This gateway's address on the space link, IPv4 or IPv6 as the peer's (explicit "
        "rules; QUIC: the IPv4 address its tunnel's UDP socket is bound to).",
    ),
    "peer": Setting("str", None, "The peer gateway's address on the space link (explicit rules)."),
    "listen": Setting(
        "list",
        [],
        "ADDRESS:PORT=SCPS_PORT: accept kernel TCP there and carry each connection to the "
        "peer's SCPS_PORT (repeatable).",
    ),
    "forward": Setting(
        "list",
        [],
        "SCPS_PORT=ADDRESS:PORT: relay SCPS-TP connections to SCPS_PORT to this kernel-TCP "
        "destination (repeatable).",
    ),
    "forward_original": Setting(
        "bool",
        False,
        "Relay SCPS-TP connections addressed to other hosts to that host and port.",
    ),
    "intercept": Setting(
        "list",
        [],
        "LAN interface: intercept TCP arriving on it to any other host (nftables tproxy) and "
        "carry it with its own addresses (repeatable; needs tun).",
    ),
    "intercept_port": Setting(
        "int", INTERCEPT_PORT, "Port of the transparent socket that intercept uses."
    ),
    "tcp": Setting(
        "table",
        None,
        "Overrides of the profile, as [flows.tcp] in scenarios (a flag takes JSON, e.g. "
        '\'{"scps": {"rate": "10 Mb/s"}}\').',
    ),
    "quic": Setting(
        "table",
        None,
        "QUIC: overrides of the profile, as [flows.quic] in scenarios (a flag takes JSON, "
        'e.g. \'{"initial_rtt": "600 ms", "stream_receive_window": "8 MB"}\').',
    ),
    "quic_port": Setting(
        "int", None, "QUIC: UDP port of the tunnel on both gateways (default 4433)."
    ),
    "tls_cert": Setting(
        "str", None, "QUIC: the PEM certificate both gateways share (--make-cert)."
    ),
    "tls_key": Setting("str", None, "QUIC: the private key of tls_cert (PEM)."),
    "mtu": Setting("int", 1500, "Largest IP packet on the space link."),
    "tun": Setting(
        "str",
        None,
        "Create this TUN device as the space link: SCPS-TP as IPv4 protocol 6, routed by the "
        "kernel.",
    ),
    "space_if": Setting(
        "list",
        [],
        "Interface the space link arrives on: its TCP is routed into the TUN (repeatable; "
        "with tun).",
    ),
    "udp": Setting(
        "str",
        None,
        "LOCAL_ADDR:PORT,PEER_ADDR:PORT: carry the IPv4 packets in UDP datagrams.",
    ),
    "link_state_udp": Setting(
        "str",
        None,
        "ADDRESS:PORT: take link-state notices as UDP datagrams 'link down' / 'link up' "
        "(persist mode during outages).",
    ),
    "duration": Setting(
        "number",
        None,
        "Stop after this many seconds (default: at a signal), as a signal stops it: "
        "connections still open are reset on both sides, or drained first with drain.",
    ),
    "drain": Setting(
        "number",
        None,
        "On SIGTERM/SIGINT, stop accepting and let open transfers finish for up to this many "
        "seconds, then reset the rest (default: reset every relayed connection on both sides "
        "at once; a second signal always does).",
    ),
    "keepalive": Setting(
        "number",
        None,
        "Seconds without a segment from the peer gateway before a connection sends keepalive "
        "probes (default 120).",
    ),
    "keepalive_interval": Setting("number", None, "Seconds between keepalive probes (default 30)."),
    "keepalive_probes": Setting(
        "int", None, "Unanswered probes after which both ends are reset (default 4)."
    ),
    "idle_timeout": Setting(
        "number",
        None,
        "Reset both ends of a relayed connection that moved no data either way for this many "
        "seconds (default: never).",
    ),
    "max_half_open": Setting(
        "int",
        None,
        "SYNs from the space link beyond this many half-open connections are dropped, so a "
        "SYN flood holds a bounded share (default 1024).",
    ),
    "log": Setting(
        "str",
        "summary",
        "summary (reloads, warnings, the final report), text (also a line per connection "
        "opened and ended, with its id) or json (all as JSON lines).",
    ),
    "after_crash": Setting(
        "str",
        "open",
        "What a crashed gateway's leftover interception rules do until the next start or "
        "--cleanup: open (traffic passes, unaccelerated) or closed (TCP that would pass the "
        "gateway is reset).",
    ),
    "stats": Setting("str", None, "Write the counters as JSON here at the stop."),
    "metrics": Setting(
        "str",
        None,
        "ADDRESS:PORT: serve the counters at /metrics (Prometheus text format) and /status "
        "(JSON), updated every second.",
    ),
}

_KINDS = {
    "str": ((str,), "a string"),
    "int": ((int,), "a whole number"),
    "number": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "list": ((list,), "a list of strings"),
    "table": ((dict,), "a table"),
}


def load(path: Path) -> dict[str, Any]:
    """The file's settings, checked for unknown keys and kinds; ValueError names the file and
    the key."""
    import tomllib  # here: every `spacetp` start reads this module, few read a file

    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    for key, value in data.items():
        if key not in KEYS:
            raise ValueError(f"{path}: unknown key `{key}`; the keys are: {', '.join(KEYS)}")
        kind = KEYS[key][0]
        types, want = _KINDS[kind]
        ok = isinstance(value, types) and not (kind != "bool" and isinstance(value, bool))
        if ok and kind == "list":
            ok = all(isinstance(x, str) for x in value)
        if not ok:
            raise ValueError(f"{path}: {key}: {value!r} is not {want}")
    return data


def resolve(file: dict[str, Any], flags: dict[str, Any]) -> dict[str, Any]:
    """Every setting: the flag where one was given (not None; a list flag replaces the file's
    list), else the file's value, else the default."""
    out = {}
    for key, (_, default, _) in KEYS.items():
        flag = flags.get(key)
        out[key] = flag if flag is not None else file.get(key, default)
    return out


def reference() -> str:
    """The keys as a Markdown table (docs/live.md's)."""
    rows = ["| key | kind | default | meaning |", "|---|---|---|---|"]
    for key, (kind, default, what) in KEYS.items():
        d = "none" if default in (None, []) else f"`{default}`".lower()
        what = what.replace("|", "\\|")
        rows.append(f"| `{key}` | {kind} | {d} | {what} |")
    return "\n".join(rows)


def _rule(text: str, what: str) -> list:
    """`ADDRESS:PORT=SCPS_PORT` (listen) or `SCPS_PORT=ADDRESS:PORT` (forward)."""
    left, sep, right = text.partition("=")
    if not sep:
        raise ValueError(f"--{what} {text}: want " + (
            "ADDRESS:PORT=SCPS_PORT" if what == "listen" else "SCPS_PORT=ADDRESS:PORT"
        ))  # fmt: skip
    try:
        return [left, int(right)] if what == "listen" else [int(left), right]
    except ValueError:
        raise ValueError(f"--{what} {text}: the SCPS-TP port must be a number") from None


def relay_config(o: dict[str, Any]) -> dict[str, Any]:
    """The relay's settings (the JSON `spacetp._core.gateway` takes) from resolved settings;
    ValueError for a malformed rule."""
    cfg: dict[str, Any] = {
        "protocol": o["protocol"],
        "mtu": o["mtu"],
        "listen": [_rule(r, "listen") for r in o["listen"] or []],
        "forward": [_rule(r, "forward") for r in o["forward"] or []],
        "forward_original": o["forward_original"],
    }
    if o["intercept"]:
        cfg["intercept"] = f"0.0.0.0:{o['intercept_port']}"
    same = ("local", "peer", "tcp", "quic", "quic_port", "tls_cert", "tls_key")
    renamed = {"duration": "duration_s", "drain": "drain_s", "keepalive": "keepalive_s",
               "keepalive_interval": "keepalive_interval_s",
               "keepalive_probes": "keepalive_probes",
               "idle_timeout": "idle_timeout_s", "max_half_open": "max_half_open"}  # fmt: skip
    if check_mode(o["log"]) != "summary":
        cfg["log_connections"] = True
    for key in same:
        if o[key]:
            cfg[key] = o[key]
    for key, to in renamed.items():
        if o[key] is not None:
            cfg[to] = o[key]  # checked by the core, errors name the key
    return cfg


class Ticker:
    """What the gateway's update of every second drives (`tick` is its `on_tick`): the
    metrics endpoint; SIGHUP reloads (the file read again with the same flags on top, the
    running gateway taking what it can, the core saying what needs a restart); and a warning
    when the gateway runs out of file descriptors; and the connections' log lines
    (`spacetp.live.gateway_log`)."""

    def __init__(
        self, path: Path | None, flags: dict, quic: bool, say, metrics=None, log="summary"
    ):
        self.path, self.flags, self.quic, self.metrics = path, flags, quic, metrics
        self.log = check_mode(log)
        self.say = lambda text: say(message_line(text, self.log))
        self.write = say
        self.requested = False
        self.seen = 0
        self.fd_waits = 0

    def request(self, signum=None, frame=None) -> None:
        self.requested = True

    def tick(self, report_json: str) -> str | None:
        if self.metrics is not None:
            self.metrics.update(report_json)
        try:
            rep = json.loads(report_json)
        except ValueError:
            rep = {}
        self.log_events(rep.get("events", []))
        if rep.get("reloads", 0) > self.seen:
            self.seen = rep["reloads"]
            self.say(f"SIGHUP: {rep.get('last_reload', '')}")
        if rep.get("accept_fd_limit", 0) > self.fd_waits:
            if self.fd_waits == 0:
                self.say(f"out of file descriptors (limit {rep.get('fd_limit')}): new "
                         "connections wait in the listen backlog; raise the hard limit "
                         "(ulimit -Hn, or LimitNOFILE= in a systemd unit)")  # fmt: skip
            self.fd_waits = rep["accept_fd_limit"]
        return self._next_config()

    def log_events(self, events: list[dict]) -> None:
        for ev in events:
            line = event_line(ev, self.log)
            if line is not None:
                self.write(line)

    def _next_config(self) -> str | None:
        if not self.requested:
            return None
        self.requested = False
        if self.path is None:
            self.say("SIGHUP: no --config file to read again; running as before")
            return None
        if self.quic:
            self.say("SIGHUP: a QUIC gateway takes no new settings while running; restart it")
            return None
        from spacetp.live.gateway import check_config

        try:
            cfg = relay_config(resolve(load(self.path), self.flags))
            check_config(cfg)
        except ValueError as e:
            self.say(f"SIGHUP: {e}; kept the running settings")
            return None
        return json.dumps(cfg)
