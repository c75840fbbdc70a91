"""SCPS-TP compressed headers (IP protocol 105) read back into TCP header fields, for the pcap
reader (spacetp.pcapflows). The layout is the SCPS Reference Implementation's
(`new_compress.c`), as docs/wire.md describes it and `crates/spacetp-wire/src/compressed/`
implements it in Rust: a connection id, one or two control octets saying which fields
follow, the fields that changed, the checksum, the data.

Omitted fields keep their last value in the direction's context, which the sender's SYN
(and SYN-ACK) set up: `Contexts.syn` records it, `Contexts.decode` rebuilds a header.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

MORE, TS1, TS2, RB = 0x8000, 0x4000, 0x2000, 0x1000
PUSH, S, A, OPTS, PAD, URG, ACKR, RST, FIN = (
    0x0400, 0x0200, 0x0100, 0x0080, 0x0040, 0x0020, 0x0010, 0x0004, 0x0001,
)  # fmt: skip
# TCP flag bits as in the TCP header
F_FIN, F_SYN, F_RST, F_PSH, F_ACK, F_URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


@dataclass
class Context:
    """One direction of a connection: its ports and the last seq, ACK and window."""

    sport: int
    dport: int
    seq: int
    ack: int
    win: int


@dataclass
class Contexts:
    """Every direction seen, by (source address, destination address, connection id)."""

    by_id: dict[tuple[bytes, bytes, int], Context] = field(default_factory=dict)

    def syn(self, src: bytes, dst: bytes, conn_id: int, tcp: dict) -> None:
        self.by_id[(src, dst, conn_id)] = Context(
            tcp["sport"], tcp["dport"], tcp["seq"], tcp["ack"], tcp["win"]
        )

    def decode(self, src: bytes, dst: bytes, body: bytes) -> dict | None:
        """The TCP fields of a compressed header (and its payload length), or None when no
        SYN of this connection was seen or the header is cut short."""
        if len(body) < 4:
            return None
        ctx = self.by_id.get((src, dst, body[0]))
        if ctx is None:
            return None
        ctrl, i = body[1] << 8, 2
        if ctrl & MORE:
            ctrl |= body[2]
            i = 3
        try:
            if ctrl & URG:
                i += 2
            if ctrl & A:
                ctx.win, ctx.ack = struct.unpack_from("!HI", body, i)
                i += 6
            if ctrl & S:
                (ctx.seq,) = struct.unpack_from("!I", body, i)
                i += 4
            i += 4 * bool(ctrl & TS1) + 4 * bool(ctrl & TS2)
            options = b""
            if ctrl & OPTS:
                n = body[i]
                options = body[i + 1 : i + 1 + n]
                i += 1 + n
            if ctrl & PAD:
                i += 1
            i += 2  # checksum
        except (IndexError, struct.error):
            return None
        if i > len(body):
            return None
        flags = (0 if ctrl & ACKR else F_ACK) | (F_FIN if ctrl & FIN else 0)
        flags |= (F_RST if ctrl & RST else 0) | (F_PSH if ctrl & PUSH else 0)
        flags |= F_URG if ctrl & URG else 0
        return {
            "sport": ctx.sport,
            "dport": ctx.dport,
            "seq": ctx.seq,
            "ack": ctx.ack,
            "win": ctx.win,
            "flags": flags,
            "options": options,
            "header_len": i,
            "payload": len(body) - i,
        }
