"""Hostile input at rate on a space link (issue #21, item 8): malformed and forged SCPS-TP,
compressed-header and TCP packets sent with a raw socket from inside a testbed namespace, so
they cross the emulated link to the gateway on the other side like any packet. Used by
`benches/gateway_flood.py` and `tests/test_gateway_flood.py`. Needs CAP_NET_RAW.

    python -m spacetp.live.flood SRC DST DPORT PPS SECONDS CLASS[,CLASS...] [FLOW]

Sends PPS packets a second for SECONDS, the classes in turn, and prints one JSON line with
the packets sent per class. SRC/DST are the addresses the packets claim (the client's and the
server's in a transparent testbed); FLOW, `SPORT:DPORT` of a real connection, aims the SNACK
class at it. The classes and what the receiving gateway must do with each:

    random        IPv4 + random bytes as TCP          undecodable, or a bad checksum
    trunc_opts    TCP header whose options run past it  undecodable
    bad_checksum  a well-formed segment, checksum wrong   bad_checksum
    compressed    IP protocol 105, random compressed header (bogus connection id)  compressed_bad
    foreign       a valid ACK segment for no connection   foreign (and rate-limited resets)
    snack_outside a SNACK (option 21) to a real connection, far outside its window
    syn_flood     SYNs from random ports to DPORT         half-open flows, capped (max_half_open)
"""

from __future__ import annotations

import json
import os
import random
import socket
import struct
import sys
import time

from spacetp.live.inject import ACK, SYN, checksum

CLASSES = ("random", "trunc_opts", "bad_checksum", "compressed", "foreign", "snack_outside",
           "syn_flood")  # fmt: skip
PROTO_COMPRESSED = 105


def _ip(src: str, dst: str, proto: int, body: bytes, ident: int) -> bytes:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ident & 0xFFFF, 0, 64, proto,
                      0, socket.inet_aton(src), socket.inet_aton(dst))  # fmt: skip
    return hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:] + body


def _tcp(src, dst, sport, dport, seq, ack, flags, options=b"", payload=b"", good=True) -> bytes:
    """A TCP header (+ options padded to 4 bytes) and payload, checksummed (or not)."""
    options += b"\x01" * (-len(options) % 4)
    off = (20 + len(options)) // 4
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      off << 4, flags, 65535, 0, 0) + options + payload  # fmt: skip
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    c = checksum(pseudo + tcp) ^ (0 if good else 0x5A5A)
    return tcp[:16] + struct.pack("!H", c) + tcp[18:]


def packet(cls: str, src: str, dst: str, dport: int, flow: tuple[int, int] | None,
           rng: random.Random, n: int) -> bytes:  # fmt: skip
    """Packet number `n` of class `cls`."""
    sport = rng.randrange(1024, 65536)
    seq, ack = rng.getrandbits(32), rng.getrandbits(32)
    if cls == "random":
        return _ip(src, dst, 6, rng.randbytes(rng.randrange(1, 200)), n)
    if cls == "trunc_opts":
        # Data offset says 60 bytes; an option's length runs past the header (a SACK of 34).
        tcp = bytearray(_tcp(src, dst, sport, dport, seq, ack, ACK, b"\x05\x22" + bytes(6)))
        tcp[12] = 15 << 4
        return _ip(src, dst, 6, bytes(tcp[:28]), n)
    if cls == "bad_checksum":
        return _ip(src, dst, 6, _tcp(src, dst, sport, dport, seq, ack, ACK,
                                     payload=rng.randbytes(100), good=False), n)  # fmt: skip
    if cls == "compressed":
        return _ip(src, dst, PROTO_COMPRESSED, rng.randbytes(rng.randrange(2, 60)), n)
    if cls == "foreign":
        return _ip(src, dst, 6, _tcp(src, dst, sport, dport, seq, ack, ACK), n)
    if cls == "snack_outside":
        sp, dp = flow or (sport, dport)
        # SNACK (RFC 1106 / SCPS-TP option 21): a hole 10 MB past the acknowledgment.
        snack = struct.pack("!BBHH", 21, 6, 10_000_000 // 1400 & 0xFFFF, 40)
        return _ip(src, dst, 6, _tcp(src, dst, sp, dp, seq, ack, ACK, snack), n)
    if cls == "syn_flood":
        return _ip(src, dst, 6, _tcp(src, dst, sport, dport, seq, 0, SYN, b"\x02\x04\x05\x78"), n)
    raise ValueError(f"class {cls!r}: use one of {', '.join(CLASSES)}")


def flood(src: str, dst: str, dport: int, pps: float, seconds: float, classes: list[str],
          flow: tuple[int, int] | None = None, seed: int | None = None) -> dict:  # fmt: skip
    """Send for `seconds` at `pps`, the classes in turn; packets sent per class."""
    for c in classes:
        if c not in CLASSES:
            raise ValueError(f"class {c!r}: use one of {', '.join(CLASSES)}")
    seed = seed if seed is not None else int.from_bytes(os.urandom(4))
    rng = random.Random(seed)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sent = dict.fromkeys(classes, 0)
    errors = 0
    t0 = time.monotonic()
    n = 0
    while (now := time.monotonic() - t0) < seconds:
        # Catch up to the rate in bursts of at most 1 ms worth, then sleep.
        due = min(int(now * pps), n + max(1, int(pps / 1000)))
        while n < due:
            cls = classes[n % len(classes)]
            try:
                raw.sendto(packet(cls, src, dst, dport, flow, rng, n), (dst, 0))
                sent[cls] += 1
            except OSError:
                errors += 1  # the namespace's queue was full: counted, not sent
            n += 1
        time.sleep(0.0005)
    return {"seed": seed, "seconds": round(time.monotonic() - t0, 3), "sent": sent,
            "send_errors": errors}  # fmt: skip


if __name__ == "__main__":
    a = sys.argv[1:]
    fl = tuple(int(x) for x in a[6].split(":")) if len(a) > 6 else None
    out = flood(a[0], a[1], int(a[2]), float(a[3]), float(a[4]), a[5].split(","), fl)
    print(json.dumps(out), flush=True)
