"""`spacetp dtn`: a live DTN node, the simulator's LTP engine and bundle agent on a real UDP
socket (crate `spacetp-live`, module `dtn`; `spacetp._core.dtn_node`).

A node listens for LTP on one UDP port (1113 by convention, ION's `udplsi`), sends to each
peer's (ION's `udplso`), forwards bundles by Contact Graph Routing over an ION contact plan,
keeps what it cannot forward yet in memory and, at a stop, in a store directory it takes back
at the next start. Files are sent as one bundle each (as ION's `bpsendfile`); delivered data
units are written to an output directory, and the report carries the SHA-256 of both.

    settings = {"node": 2, "bind": "10.77.0.2:1113", "peers": [[1, "10.77.0.1:1113"]],
                "contact_plan": open("plan.txt").read(), "out_dir": "in",
                "until_delivered": 1}
    report = run_node(settings)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spacetp import _core
from spacetp.live.flags import key_values
from spacetp.live.signals import interrupt_on_signals

# The ports the CLI's --peer and --udp-peer take by default: LTP's (ION's udplsi) and the
# bundle protocol's (ION's udpcli).
DEFAULT_PORT = 1113
UDP_CL_PORT = 4556


def check(settings: dict[str, Any]) -> None:
    """Raise ValueError naming the bad setting (`dtn.peers[0]`, `dtn.contact_plan`, ...)."""
    _core.dtn_check(json.dumps(settings))


def run_node(
    settings: dict[str, Any], on_notice: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run a node until its stop condition (duration, until_delivered, until_sent) or
    SIGINT/SIGTERM/SIGHUP, which stop it with every bundle still held kept in its store;
    returns the report. `on_notice` gets each line the node says while it runs, as it
    happens: canceled LTP sessions with their cause (at most 5 lines each 10 s, then a line
    counting the rest) and bundles given up after `max_session_cancels` canceled sessions
    (also the report's `notices`)."""

    with interrupt_on_signals():
        return json.loads(_core.dtn_node(json.dumps(settings), on_notice))


def parse_peer(text: str, flag: str = "--peer", port: int = DEFAULT_PORT) -> list:
    """`ENGINE=ADDRESS[:PORT]` -> [engine, "address:port"]."""
    engine, sep, addr = text.partition("=")
    if not sep or not engine.strip().isdigit():
        raise ValueError(f"{flag} {text}: want NODE=ADDRESS[:PORT], e.g. 2=10.77.0.2:{port}")
    if addr.count(":") == 0 or (addr.startswith("[") and addr.endswith("]")):
        addr = f"{addr}:{port}"
    return [int(engine), addr]


def parse_send(text: str) -> list:
    """`FILE=ipn:NODE[.SERVICE]` (or `FILE=NODE[.SERVICE]`) -> [file, node, service]."""
    path, sep, eid = text.rpartition("=")
    want = f"--send {text}: want FILE=ipn:NODE.SERVICE, e.g. image.raw=ipn:2.1"
    if not sep or not path:
        raise ValueError(want)
    node, _, service = eid.removeprefix("ipn:").partition(".")
    if not node.isdigit() or not (service.isdigit() or service == ""):
        raise ValueError(want)
    return [path, int(node), int(service or 1)]


def read_contact_plan(path) -> str:
    """The text of `--contact-plan FILE`; ValueError names the flag and the file."""
    try:
        return Path(path).read_text()
    except OSError as e:
        raise ValueError(f"--contact-plan {path}: {e.strerror}") from None


def parse_ltp(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs of [flows.ltp] (`--ltp`)."""
    return key_values(items, "--ltp", "max_export_sessions=100")
