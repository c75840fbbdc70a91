"""Forged segments on a real space link, for the gateway's integrity tests and
benches/gateway_attacks_live.py. Runs inside a testbed namespace (`ip netns exec NS python -m
spacetp.live.inject ...`) and prints one JSON line. Needs CAP_NET_RAW.

    python -m spacetp.live.inject IFACE DST ROUNDS KIND[,KIND...] [data|any]

Watches IFACE (the namespace's TUN `space0`, an IPv4 device without a link header) for TCP
segments going to DST (data segments only, or `any`: pure ACKs too, to attack a sender),
and for each of ROUNDS rounds (150 ms apart) forges, from the
newest one, a packet of every KIND and sends it into the link with a raw socket (routed out
of IFACE, so it crosses the emulated link to the gateway on the other side):

    syn      SYN, sequence number 200 kB ahead
    synack   SYN-ACK, sequence number 200 kB ahead
    rst_far  RST 5 MB beyond the window
    rst_in   RST inside the window, not at the next expected number
    ack_unsent  1000 bytes of 0xEE acknowledging 10 MB never sent
    data_far 1000 bytes of 0xEE 50 MB beyond the window

-> {"seen": N, "sent": {"syn": n, ...}}"""

import json
import socket
import struct
import sys
import time

SYN, RST, ACK = 0x02, 0x04, 0x10


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def forge(src, dst, sport, dport, seq, ack, flags, payload=b""):
    """An IPv4 packet with a 20-byte TCP header (no options) and a valid checksum."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      5 << 4, flags, 65535, 0, 0) + payload  # fmt: skip
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    c = checksum(pseudo + tcp)
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 7, 0, 64, 6, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))  # fmt: skip
    return ip + tcp


def main(iface, dst, rounds, kinds, which="data"):
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))
    sniff.bind((iface, 0))
    sniff.settimeout(0.01)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    newest, seen = None, 0
    sent = {k: 0 for k in kinds}
    deadline = time.monotonic() + 60
    done = 0
    next_round = 0.0
    while done < rounds and time.monotonic() < deadline:
        try:
            pkt = sniff.recv(65536)
        except TimeoutError:
            pkt = b""
        if len(pkt) >= 40 and pkt[0] >> 4 == 4 and pkt[9] == 6:
            ihl = (pkt[0] & 15) * 4
            if socket.inet_ntoa(pkt[16:20]) == dst:
                doff = (pkt[ihl + 12] >> 4) * 4
                plen = struct.unpack("!H", pkt[2:4])[0] - ihl - doff
                if plen > 0 or which == "any":
                    seen += 1
                    sport, dport, seq, ack = struct.unpack("!HHII", pkt[ihl : ihl + 12])
                    newest = (socket.inet_ntoa(pkt[12:16]), dst, sport, dport, seq, ack, plen)
        if newest is None or time.monotonic() < next_round:
            continue
        src, d, sp, dp, seq, ack, plen = newest
        nxt = seq + plen
        forged = {
            "syn": forge(src, d, sp, dp, seq + 200_000, 0, SYN),
            "synack": forge(src, d, sp, dp, seq + 200_000, ack, SYN | ACK),
            "rst_far": forge(src, d, sp, dp, seq + 5_000_000, 0, RST),
            "rst_in": forge(src, d, sp, dp, nxt + 1000 + done, ack, RST | ACK),
            "ack_unsent": forge(src, d, sp, dp, nxt, ack + 10_000_000, ACK, b"\xee" * 1000),
            "data_far": forge(src, d, sp, dp, seq + 50_000_000, ack, ACK, b"\xee" * 1000),
        }
        for k in kinds:
            raw.sendto(forged[k], (d, 0))
            sent[k] += 1
        done += 1
        next_round = time.monotonic() + 0.15
    print(json.dumps({"seen": seen, "sent": sent}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(","), *sys.argv[5:6])
