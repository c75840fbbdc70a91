"""The one place spacetp reads pcap files: every transport conversation of a capture, packet by
packet, for the time-sequence, throughput and RTT graphs (spacetp.tsg).

The file formats are read by Scapy (`scapy.utils.RawPcapReader`): classic pcap in either
byte order and timestamp resolution, and pcapng with per-interface link types and
resolutions. Scapy is the most actively maintained pcap library on PyPI and reads what
Wireshark, tcpdump, dumpcap and the kernel's captures write; only its file reader is used,
for speed (a few microseconds a packet). The headers are decoded here with `struct`, because
the transports spacetp cares about are beyond any dissector's reach:

- link layers: raw IPv4 (101, 228: the simulator's and `spacetp emulate`'s captures),
  Ethernet with 802.1Q tags (1), Linux cooked SLL (113, `tcpdump -i any`) and SLL2 (276),
  BSD loopback (0);
- TCP (IP protocol 6) with every option spacetp-wire knows: MSS, window scale, SACK,
  timestamps, and SCPS-TP's capabilities (20) and SNACK (21);
- SCPS-TP as the Reference Implementation sends it stand-alone (IP protocol 106), inside
  its UDP encapsulation (UDP 7168 carrying a whole IPv4 packet) and with compressed headers
  (IP protocol 105, spacetp.scps_compressed; no dissector of Wireshark reads those);
- not QUIC: its packets are encrypted, and decrypting them (tshark does, with the run's key
  log) is the easy half: its ACKs name packet numbers, which would have to be mapped back to
  the stream bytes each packet carried; that is not written (QUIC_NOT_READ says what to use
  instead).

`read(path)` returns the conversations in order of first appearance, each with its packets as
plain dicts (see `Conversation`).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field
from pathlib import Path

from spacetp.errors import UserError
from spacetp.scps_compressed import Contexts

PROTO_TCP, PROTO_UDP, PROTO_SCPS_COMPRESSED, PROTO_SCPS = 6, 17, 105, 106
SCPS_UDP_PORT = 7168
QUIC_NOT_READ = (
    "QUIC: spacetp's graphs read TCP and SCPS-TP headers; QUIC's are encrypted and its ACKs "
    "name packet numbers, which spacetp does not map to stream offsets; write the run's qlog "
    "(spacetp run SCENARIO "
    "--qlog DIR) and open it in qvis, or decrypt the capture with tshark -o "
    "tls.keylog_file:KEYS (spacetp run SCENARIO --pcap 0=q.pcap --keylog KEYS writes both)"
)
ETH_IPV4, ETH_VLAN = 0x0800, (0x8100, 0x88A8)


@dataclass
class Conversation:
    """The packets between two endpoints, in capture order. `a` is the endpoint that sent
    the first packet seen (the SYN's sender when the handshake was captured), `b` the other;
    `transport` is "tcp", "scps-tp" (SCPS options in a SYN, or IP protocol 106/105) or
    "quic". Each packet is a dict: `frame` (1-based in the file), `t` (s from the first
    packet of the file), `dir` (0: a -> b, 1: b -> a), and for TCP and SCPS-TP `seq`,
    `ack`, `win` (as sent, unscaled), `flags`, `len` (payload bytes), `sack` [(left,
    right)], `snack` [(offset, size, bit vector bytes)], `ws` (window scale of a SYN),
    `mss`, `scps` (capabilities of a SYN), `compressed`."""

    a: tuple[str, int]
    b: tuple[str, int]
    transport: str
    packets: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.a[0]}:{self.a[1]} <-> {self.b[0]}:{self.b[1]} ({self.transport})"

    def payload_bytes(self, direction: int) -> int:
        return sum(p.get("len", 0) for p in self.packets if p["dir"] == direction)


def _ip_payload(linktype: int, data: bytes) -> bytes | None:
    """The IPv4 packet in a frame, or None (ARP, IPv6, other link types)."""
    if linktype in (101, 228, 12, 14):
        return data
    if linktype == 1:
        off, etype = 14, int.from_bytes(data[12:14], "big") if len(data) >= 14 else 0
        while etype in ETH_VLAN and len(data) >= off + 4:
            etype = int.from_bytes(data[off + 2 : off + 4], "big")
            off += 4
        return data[off:] if etype == ETH_IPV4 else None
    if linktype == 113:
        return data[16:] if data[14:16] == b"\x08\x00" else None
    if linktype == 276:
        return data[20:] if data[0:2] == b"\x08\x00" else None
    if linktype == 0:
        family = int.from_bytes(data[0:4], "little") if len(data) >= 4 else 0
        return data[4:] if family == 2 else None
    return None


def _options(raw: bytes) -> dict:
    out: dict = {"sack": [], "snack": []}
    i = 0
    while i < len(raw):
        kind = raw[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(raw):
            break
        n = raw[i + 1]
        if n < 2 or i + n > len(raw):
            break
        body = raw[i + 2 : i + n]
        if kind == 2 and n == 4:
            out["mss"] = int.from_bytes(body, "big")
        elif kind == 3 and n == 3:
            out["ws"] = body[0]
        elif kind == 5 and (n - 2) % 8 == 0:
            out["sack"] += list(struct.iter_unpack("!II", body))
        elif kind == 8 and n == 10:
            out["ts"] = struct.unpack("!II", body)
        elif kind == 20 and n == 4:
            out["scps"] = (body[0], body[1])
        elif kind == 21 and n >= 6:
            off, size = struct.unpack_from("!HH", body)
            out["snack"].append((off, size, bytes(body[4:])))
        i += n
    return out


def _tcp(seg: bytes) -> dict | None:
    if len(seg) < 20:
        return None
    sport, dport, seq, ack, off_flags, win = struct.unpack_from("!HHIIHH", seg)
    doff = (off_flags >> 12) * 4
    if doff < 20 or doff > len(seg):
        return None
    d = {"sport": sport, "dport": dport, "seq": seq, "ack": ack, "win": win}
    d["flags"] = off_flags & 0x1FF
    d.update(_options(seg[20:doff]))
    d["header_len"] = doff
    return d


class _Reader:
    def __init__(self):
        self.convs: dict[tuple, Conversation] = {}
        self.order: list[Conversation] = []
        self.contexts = Contexts()
        self.udp = 0  # UDP datagrams that carry no SCPS-TP: QUIC, say

    def conversation(self, src, sport, dst, dport, transport) -> tuple[Conversation, int]:
        fwd, rev = (src, sport, dst, dport), (dst, dport, src, sport)
        if fwd in self.convs:
            return self.convs[fwd], 0
        if rev in self.convs:
            return self.convs[rev], 1
        c = Conversation((src, sport), (dst, dport), transport)
        self.convs[fwd] = c
        self.order.append(c)
        return c, 0

    def ip(self, frame: int, t: float, pkt: bytes, outer: bool = True) -> None:
        if len(pkt) < 20 or pkt[0] >> 4 != 4:
            return
        ihl = (pkt[0] & 0x0F) * 4
        total = int.from_bytes(pkt[2:4], "big")
        if (int.from_bytes(pkt[6:8], "big") & 0x1FFF) != 0:
            return  # a later fragment
        proto, src, dst = pkt[9], pkt[12:16], pkt[16:20]
        # snaplen-cut captures keep the true lengths in the IP header: trust them
        body = pkt[ihl:]
        body_len = max(total - ihl, 0)
        if proto in (PROTO_TCP, PROTO_SCPS):
            tcp = _tcp(body)
            if tcp is None:
                return
            tcp["len"] = max(body_len - tcp["header_len"], 0)
            tcp["compressed"] = False
            self.tcp(frame, t, src, dst, tcp, scps=proto == PROTO_SCPS)
        elif proto == PROTO_SCPS_COMPRESSED:
            tcp = self.contexts.decode(src, dst, bytes(body[:body_len]))
            if tcp is None:
                return
            tcp["len"] = max(body_len - tcp["header_len"], 0)
            tcp.update(_options(tcp.pop("options")), compressed=True)
            self.tcp(frame, t, src, dst, tcp, scps=True)
        elif proto == PROTO_UDP and len(body) >= 8:
            sport, dport = struct.unpack_from("!HH", body)
            if outer and sport == SCPS_UDP_PORT and dport == SCPS_UDP_PORT:
                self.ip(frame, t, body[8:], outer=False)
            else:
                self.udp += 1

    def tcp(self, frame, t, src, dst, tcp: dict, scps: bool) -> None:
        if tcp["flags"] & 0x02 and "scps" in tcp:  # a SYN with SCPS capabilities
            self.contexts.syn(src, dst, tcp["scps"][1], tcp)
        transport = "scps-tp" if scps or "scps" in tcp else "tcp"
        c, d = self.conversation(_addr(src), tcp["sport"], _addr(dst), tcp["dport"], transport)
        if transport == "scps-tp":
            c.transport = "scps-tp"
        for k in ("sport", "dport", "header_len"):
            tcp.pop(k, None)
        c.packets.append({"frame": frame, "t": t, "dir": d, **tcp})


def _addr(raw: bytes) -> str:
    return str(ipaddress.IPv4Address(raw))


def _time(meta, nano: bool) -> float:
    if hasattr(meta, "tshigh"):
        return ((meta.tshigh << 32) | meta.tslow) / meta.tsresol
    return meta.sec + meta.usec / (1e9 if nano else 1e6)


def _ipv4_from(path: str | Path, src: str):
    """(capture time in s, IPv4 packet) of every IPv4 packet from address `src`, in capture
    order."""
    from scapy.utils import RawPcapReader

    r = RawPcapReader(str(path))
    nano = bool(getattr(r, "nano", False))
    linktype = getattr(r, "linktype", None)
    want = ipaddress.IPv4Address(src).packed
    try:
        for data, meta in r:
            pkt = _ip_payload(getattr(meta, "linktype", None) or linktype, data)
            if pkt is not None and len(pkt) >= 20 and pkt[0] >> 4 == 4 and pkt[12:16] == want:
                yield _time(meta, nano), pkt
    except EOFError:
        pass
    finally:
        r.close()


def packets_from(path: str | Path, src: str) -> list[tuple[float, int]]:
    """(capture time in s, IPv4 total length) of every IPv4 packet from address `src`, in
    capture order, whatever it carries (LTP and bundles too): what a sender put on a link."""
    return [(t, int.from_bytes(pkt[2:4], "big")) for t, pkt in _ipv4_from(path, src)]


def tcp_data_from(path: str | Path, src: str) -> list[tuple[float, int, int]]:
    """(capture time in s, sequence number, payload bytes) of every TCP segment carrying
    data from address `src`, in capture order: the ranges a sender put on a link."""
    return [(t, *seg) for t, pkt in _ipv4_from(path, src) if (seg := tcp_data(pkt))]


def tcp_data(pkt: bytes) -> tuple[int, int] | None:
    """(sequence number, payload bytes) of an IPv4 packet that is a TCP segment carrying
    data (its total length less its headers); None for anything else."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 6:  # not IPv4 TCP
        return None
    ihl = (pkt[0] & 15) * 4
    if len(pkt) < ihl + 20:  # cut short
        return None
    payload = int.from_bytes(pkt[2:4], "big") - ihl - (pkt[ihl + 12] >> 4) * 4
    if payload <= 0:
        return None
    return int.from_bytes(pkt[ihl + 4 : ihl + 8], "big"), payload


def read(path: str | Path) -> list[Conversation]:
    """Every TCP and SCPS-TP conversation of a pcap or pcapng file. A file with none but
    with other UDP datagrams (QUIC, say) is refused with QUIC_NOT_READ."""
    from scapy.error import Scapy_Exception
    from scapy.utils import RawPcapReader

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    reader = _Reader()
    try:
        r = RawPcapReader(str(path))
    except (Scapy_Exception, OSError, EOFError, struct.error) as e:
        raise UserError(f"{path}: not a pcap or pcapng file ({e})") from None
    t0 = None
    nano = bool(getattr(r, "nano", False))
    linktype = getattr(r, "linktype", None)
    try:
        for frame, (data, meta) in enumerate(r, 1):
            t = _time(meta, nano)
            t0 = t if t0 is None else t0
            lt = getattr(meta, "linktype", None) or linktype
            pkt = _ip_payload(lt, data)
            if pkt is not None:
                reader.ip(frame, t - t0, pkt)
    except (Scapy_Exception, EOFError, struct.error):
        pass  # a truncated last block: keep what came before, as tshark does
    finally:
        r.close()
    if not reader.order and reader.udp:
        raise UserError(f"{path}: no TCP or SCPS-TP conversation, {reader.udp} UDP datagrams. "
                        f"If they are {QUIC_NOT_READ}")  # fmt: skip
    return reader.order
