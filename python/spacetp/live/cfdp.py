"""`spacetp cfdp`: a live CFDP entity, the simulator's `protocol = "cfdp"` entities (cfdp-rs,
crate `spacetp-cfdp`) on a real UDP socket and real files (crate `spacetp-live`, module
`cfdp`; `spacetp._core.cfdp_entity`).

An entity listens on one UDP port (4556 by convention, as cfdp-py's and ION's UDP examples),
sends files one Put request after another, and receives any number of transactions into a
directory: each file is written as NAME.part and renamed NAME only once its transaction
completed with the checksum verified. The report carries each transaction's end (CFDP's
condition code, delivery, file status), PDUs, timer expiries and the SHA-256 of the file.

    settings = {"entity": 2, "bind": "10.77.0.2:4556", "peers": [[1, "10.77.0.1:4556"]],
                "out_dir": "in", "until_received": 1, "settings": {"class": 2}}
    report = run_entity(settings)

Over the Bundle Protocol (`"settings": {"carrier": "bp"}`, as ION's bputa: each PDU one
bundle from ipn:N.64 to ipn:PEER.65), the entity runs on a DTN node whose settings are
`spacetp dtn`'s, under `bp` (`bp_node` makes them): its number is the entity ID, its LTP
peers and contact plan are the node's; the report carries the node's under `bp`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from spacetp import _core
from spacetp.live.flags import key_values
from spacetp.live.signals import interrupt_on_signals

DEFAULT_PORT = 4556
# Where a node's LTP listens by convention (ION's udplsi), over BP.
LTP_PORT = 1113


def check(settings: dict[str, Any]) -> None:
    """Raise FieldError (a ValueError) naming the bad setting (`cfdp.peers[0]`,
    `cfdp.settings.nak_timer`, ...)."""
    _core.cfdp_check(json.dumps(settings))


def run_entity(
    settings: dict[str, Any], on_ready: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run an entity until its stop condition (duration, until_received, until_sent) or
    SIGINT/SIGTERM/SIGHUP; returns the report. `on_ready` gets the bound address once the
    socket is bound."""

    with interrupt_on_signals():
        return json.loads(_core.cfdp_entity(json.dumps(settings), on_ready))


def parse_peer(text: str, port: int = DEFAULT_PORT) -> list:
    """`ENTITY=ADDRESS[:PORT]` -> [entity, "address:port"] (`port` when none is given)."""
    entity, sep, addr = text.partition("=")
    if not sep or not entity.strip().isdigit() or not addr:
        raise ValueError(f"--peer {text}: want ENTITY=ADDRESS[:PORT], e.g. 2=10.77.0.2:{port}")
    if addr.count(":") == 0 or (addr.startswith("[") and addr.endswith("]")):
        addr = f"{addr}:{port}"
    return [int(entity), addr]


def bp_node(
    entity: int,
    bind: str,
    peers: list,
    contact_plan: str,
    ltp: dict[str, Any] | None = None,
    lifetime_s: float | None = None,
) -> dict[str, Any]:
    """The DTN node an entity over BP runs on (`bp`): node `entity`, its LTP at `bind`,
    its LTP `peers` ([engine, "address:port"]), the plan's text (ION's `a contact` and
    `a range` lines), `[flows.ltp]` settings, the bundles' lifetime."""
    node: dict[str, Any] = {
        "node": entity,
        "bind": bind,
        "peers": peers,
        "contact_plan": contact_plan,
    }
    if ltp:
        node["ltp"] = ltp
    if lifetime_s is not None:
        node["lifetime_s"] = lifetime_s
    return node


def parse_send(text: str) -> list:
    """`FILE=ENTITY[:NAME]` -> [file, entity, name] (an empty name: the file's own)."""
    path, sep, dest = text.rpartition("=")
    entity, _, name = dest.partition(":")
    if not sep or not path or not entity.strip().isdigit():
        raise ValueError(f"--send {text}: want FILE=ENTITY[:NAME], e.g. image.raw=2:img.raw")
    return [path, int(entity), name]


def parse_settings(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs of [flows.cfdp] (`--set`)."""
    return key_values(items, "--set", "nak_timer=2s")
