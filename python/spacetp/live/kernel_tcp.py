"""Kernel TCP as a reference: a sender that picks its congestion control (TCP_CONGESTION)
and samples the kernel's own state (TCP_INFO) while it sends, and a receiver that times
what arrives. Each runs as its own process inside a namespace:

    python -m spacetp.live.kernel_tcp send HOST PORT BYTES CC INTERVAL_S
    python -m spacetp.live.kernel_tcp recv HOST PORT CAP_S

and prints one JSON object on stdout when done. A third records when the host's packets
leave a device (kernel timestamps), for pacing's departures:

    python -m spacetp.live.kernel_tcp departures DEVICE CAP_S OUT.json
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

# struct tcp_info (include/uapi/linux/tcp.h) up to tcpi_snd_wnd: 8 u8 fields, 24 u32, then
# u64 pacing/max pacing/bytes acked/bytes received, 6 u32 (segs out/in, notsent, min_rtt,
# data segs in/out), u64 delivery rate, busy, rwnd limited, sndbuf limited, 2 u32 (delivered,
# delivered_ce), u64 bytes sent, bytes retrans, 4 u32 (dsack dups, reord seen, rcv ooo
# packets, snd_wnd): 232 bytes, every field at its natural alignment.
_LAYOUT = "<8B24I4Q6I4Q2I2Q4I"
_NAMES = (
    "state ca_state retransmits probes backoff options wscale flags "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets "
    "last_data_sent last_ack_sent last_data_recv last_ack_recv "
    "pmtu rcv_ssthresh rtt rttvar snd_ssthresh snd_cwnd advmss reordering rcv_rtt rcv_space "
    "total_retrans pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
    "delivery_rate busy_time rwnd_limited sndbuf_limited delivered delivered_ce "
    "bytes_sent bytes_retrans dsack_dups reord_seen rcv_ooopack snd_wnd"
).split()
SIZE = struct.calcsize(_LAYOUT)


def tcp_info(sock: socket.socket) -> dict:
    """The kernel's TCP_INFO of a connected socket, by field name (times in microseconds,
    rates in bytes per second, windows in segments as the kernel keeps them). Fields a
    kernel older than 5.4 does not fill read as 0."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, SIZE)
    raw = raw + bytes(SIZE - len(raw))
    return dict(zip(_NAMES, struct.unpack(_LAYOUT, raw), strict=True))


def available_congestion_controls() -> list[str]:
    """What this kernel offers (`tcp_available_congestion_control`)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []


def _sample(sock: socket.socket, t0: float) -> dict:
    i = tcp_info(sock)
    return {
        "t": time.monotonic() - t0,
        "cwnd_bytes": i["snd_cwnd"] * i["snd_mss"],
        "ssthresh_bytes": min(i["snd_ssthresh"], 1 << 30) * i["snd_mss"],
        "srtt_s": i["rtt"] / 1e6,
        "pacing_rate_bps": i["pacing_rate"] * 8,
        "delivery_rate_bps": i["delivery_rate"] * 8,
        "total_retrans": i["total_retrans"],
        "ca_state": i["ca_state"],
        "rto_s": i["rto"] / 1e6,
        "backoff": i["backoff"],
        "bytes_sent": i["bytes_sent"],
        "bytes_acked": i["bytes_acked"],
        "lost_segments": i["lost"],
        "sacked_segments": i["sacked"],
    }


def send(host: str, port: int, nbytes: int, cc: str, interval: float) -> dict:
    """Connect with congestion control `cc` ("-": the kernel's default), send `nbytes`,
    sample TCP_INFO every `interval` seconds from the connection's start until the peer has
    everything."""
    c = socket.socket()
    if cc != "-":
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    t0 = time.monotonic()
    wall0 = time.time()
    c.connect((host, port))
    t_connected = time.monotonic() - t0
    samples: list[dict] = []
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            samples.append(_sample(c, t0))
            done.wait(interval)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    data = os.urandom(nbytes)
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    c.recv(1)  # the receiver closes once it has everything
    done.set()
    th.join()
    last = tcp_info(c)
    return {
        "start_wall": wall0,
        "connected_s": t_connected,
        "total_retrans": last["total_retrans"],
        "bytes_retrans": last["bytes_retrans"],
        "mss": last["snd_mss"],
        "samples": samples,
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def recv(host: str, port: int, cap: float) -> dict:
    """Accept one connection and time it from accept to its last byte (at most `cap` s)."""
    srv = socket.create_server((host, port))
    print(json.dumps({"ready": True}), flush=True)
    c, _ = srv.accept()
    t0 = time.time()
    t1 = t0
    n = 0
    h = hashlib.sha256()
    c.settimeout(0.5)
    while time.time() - t0 < cap:
        try:
            b = c.recv(1 << 16)
        except TimeoutError:
            continue
        if not b:
            break
        n += len(b)
        h.update(b)
        t1 = time.time()
    c.close()
    return {"bytes": n, "seconds": t1 - t0, "accept_wall": t0, "sha256": h.hexdigest()}


SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4


def departures(device: str, cap: float, out: str) -> dict:
    """Write [kernel time (s), sequence number, payload bytes] of every TCP segment carrying
    data that the host sends on `device` to `out`, for `cap` seconds or until SIGTERM; print
    "ready" once listening."""
    from spacetp.pcapflows import tcp_data

    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0003))  # ETH_P_ALL
    s.bind((device, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.settimeout(0.2)
    print(json.dumps({"ready": True}), flush=True)
    rec = []
    end = time.monotonic() + cap
    while time.monotonic() < end and not stop:
        try:
            data, anc, _flags, addr = s.recvmsg(64, 64)
        except TimeoutError:
            continue
        seg = tcp_data(data) if addr[2] == PACKET_OUTGOING else None
        if seg is None:
            continue  # incoming, or not a TCP segment carrying data
        seq, payload = seg
        for _level, kind, d in anc:
            if kind == SO_TIMESTAMPNS:
                sec, ns = struct.unpack("qq", d[:16])
                rec.append((sec + ns * 1e-9, seq, payload))
    with open(out, "w") as f:
        json.dump(rec, f)
    return {"packets": len(rec)}


if __name__ == "__main__":
    a = sys.argv[1:]
    try:
        if a and a[0] == "send":
            out = send(a[1], int(a[2]), int(a[3]), a[4], float(a[5]))
        elif a and a[0] == "recv":
            out = recv(a[1], int(a[2]), float(a[3]))
        elif a and a[0] == "departures":
            out = departures(a[1], float(a[2]), a[3])
        else:
            sys.exit(
                "usage: kernel_tcp send HOST PORT BYTES CC INTERVAL | recv HOST PORT CAP"
                " | departures DEVICE CAP OUT"
            )
    except OSError as e:
        # One line, not a traceback: e.g. a run interrupted (Ctrl-C) while this end started,
        # its namespace's address already gone (the caller reports the failed rep).
        sys.exit(f"kernel_tcp {a[0]}: {e}")
    print(json.dumps(out), flush=True)
