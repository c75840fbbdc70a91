"""The gateway's log (`spacetp gateway --log`): `summary` (only what needs an operator's
eye: reloads, file-descriptor exhaustion, the final report), `text` (also one line per
relayed connection opened and ended, with its id) or `json` (all of it as JSON lines, each
with a `time` in seconds since the epoch, for a log shipper).

The core keeps the connections' events (`open`: id, side, addresses; `close`: id, closed or
reset, why, bytes each way, seconds, retransmitted segments) and hands them over with each
update of the report (about once a second, under `events`)."""

from __future__ import annotations

import json
import time

from spacetp.human import size

MODES = ("summary", "text", "json")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"log: {mode!r} is not one of {', '.join(MODES)}")
    return mode


def event_line(ev: dict, mode: str) -> str | None:
    """One connection event as a log line (None in summary mode)."""
    if mode == "json":
        return json.dumps({"time": round(time.time(), 3), **ev})
    if mode != "text":
        return None
    if ev.get("event") == "open":
        return f"conn {ev['conn']} {ev['side']}: {ev['remote']} <-> {ev['local']}"
    if ev.get("event") == "close":
        why = f" ({ev['cause']})" if ev.get("cause") else ""
        return (
            f"conn {ev['conn']} {ev['how']}{why} after {ev['seconds']:.1f} s: "
            f"{size(ev['bytes_up'])} up, {size(ev['bytes_down'])} down, "
            f"{ev['retransmitted']} retransmitted"
        )
    return json.dumps(ev)


def message_line(text: str, mode: str) -> str:
    """An operator message (reload, warning) in the log's format."""
    if mode == "json":
        return json.dumps({"time": round(time.time(), 3), "event": "message", "text": text})
    return text
