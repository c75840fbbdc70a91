"""`spacetp gateway`: an SCPS-TP performance-enhancing proxy (TCP splitting).

The relay is Rust (`spacetp._core.gateway`, crate `spacetp-live`, module `gateway`): kernel-TCP
connections accepted on a local port are each carried across the space link as an SCPS-TP
connection of `spacetp-proto`, and the peer gateway opens a kernel-TCP connection to the
destination configured for that port. The space link is a packet fd: an inherited fd (a
datagram socket joined to the emulator, as in the testbed below) or a UDP socket
(encapsulation: one IPv4 packet per datagram).

The test bed of the gateway's tests and benchmarks is `spacetp.live.gateway_testbed`.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path


def check_config(cfg: dict) -> None:
    """Raise ValueError naming a bad setting."""
    from spacetp import _core

    _core.gateway_check(json.dumps(cfg))


def run(
    cfg: dict,
    link_fd: int | None,
    link_state_fd: int | None = None,
    on_tick=None,
    stop_requested=None,
) -> dict:
    """Run a gateway on packet fd `link_fd` (a QUIC gateway: on a UDP socket at its tunnel
    address when None) until cfg["duration_s"] or a signal; the report. Link-state notices
    (b"link down", b"link up") arrive as datagrams on `link_state_fd`; `on_tick(report_json)`
    is called about once a second; `stop_requested()`, if given, is asked every 100 ms
    whether to begin the orderly stop (a signal handler that records rather than raises)."""
    from spacetp import _core

    text = _core.gateway(json.dumps(cfg), link_fd, link_state_fd, on_tick, stop_requested)
    return json.loads(text)


def is_quic(gateway: dict) -> bool:
    """Whether a gateway configuration carries its connections in QUIC."""
    return str(gateway.get("protocol", "scps-tp")).startswith("quic")


def make_cert(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for a QUIC gateway pair, written into `directory` (the key
    readable by its owner only): (certificate file, key file)."""
    from spacetp import _core

    directory.mkdir(parents=True, exist_ok=True)
    cert, key = _core.gateway_make_cert()
    c, k = directory / "gateway-cert.pem", directory / "gateway-key.pem"
    c.write_text(cert)
    fd = os.open(k, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key)
    return c, k


def host_port(s: str) -> tuple[str, int]:
    """`ADDRESS:PORT` as (address, port); ValueError if the port is not a number."""
    host, _, port = s.rpartition(":")
    return host, int(port)


def udp_link(local: str, peer: str) -> int:
    """A UDP socket bound to `local` and connected to `peer` (both ADDRESS:PORT): the link fd
    of UDP encapsulation. The caller owns the returned fd."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # Room for a burst (thousands of SYNs when many clients connect at once): the kernel's
    # default buffer holds a few hundred packets. As root the sysctl cap does not apply.
    for opt, force in ((socket.SO_RCVBUF, 33), (socket.SO_SNDBUF, 32)):  # SO_*BUFFORCE
        try:
            s.setsockopt(socket.SOL_SOCKET, force, 8 << 20)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, opt, 8 << 20)
    s.bind(host_port(local))
    s.connect(host_port(peer))
    return s.detach()


def predict(link_toml: str, gateway: dict, nbytes: int, seed: int = 7) -> dict:
    """What the simulator predicts for one transfer of `nbytes` with the gateways' protocol
    over the same link: the flow's result (`goodput_bps`, `completion_s`, ...)."""
    import tomllib

    import spacetp

    sc = tomllib.loads(link_toml)
    a, b = sc["links"][0]["between"]
    sc["seed"] = seed
    sc["nodes"] = [{"name": a}, {"name": b}]
    flow = {"from": a, "to": b, "bytes": nbytes, "protocol": gateway.get("protocol", "scps-tp")}
    for key in ("tcp", "quic"):
        if key in gateway:
            flow[key] = gateway[key]
    sc["flows"] = [flow]
    return spacetp.run(sc).flows[0]


def _one_way_s(link_toml: str) -> float:
    """The longest one-way delay of the testbed's link (its schedule's largest), seconds."""
    import tomllib

    from spacetp.units import to_si

    def seconds(v: object) -> float:
        q = to_si(v)
        return q[0] if q is not None else 0.0

    link = tomllib.loads(link_toml)["links"][0]
    d = link.get("delay", "0 s")
    if isinstance(d, dict):
        return max(seconds(v) for _, v in d.get("schedule", [["0 s", "0 s"]]))
    return seconds(d)
