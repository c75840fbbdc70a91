"""Traffic for the `spacetp emulate` tests, run inside the namespaces (`ip netns exec NS python
emulate_probe.py MODE ...`); prints one JSON object. Times are CLOCK_REALTIME nanoseconds
(both namespaces share the machine's clock); receive times are the kernel's (SO_TIMESTAMPNS),
so they do not include this script's own scheduling delay.

    udp-recv HOST PORT COUNT IDLE_S        -> {"rx": [[seq, sent_ns, recv_ns, size], ...]}
    udp-send HOST PORT COUNT SIZE GAP_S    -> {"sent": COUNT, "t0": ns, "t1": ns}
    tcp-recv HOST PORT                     -> {"bytes": n, "sha256": hex}
    tcp-send HOST PORT BYTES SEED          -> {"bytes": n, "sha256": hex}
"""

import hashlib
import json
import random
import socket
import struct
import sys
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; Python 3.11 lacks the name
HDR = struct.Struct("!QQ")  # sequence number, send time


def udp_recv(host, port, count, idle):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((host, int(port)))
    print(json.dumps({"ready": True}), flush=True)
    s.settimeout(float(idle))
    rx = []
    while len(rx) < int(count):
        try:
            data, anc, _, _ = s.recvmsg(65536, 64)
        except TimeoutError:
            break
        t = time.time_ns()
        for level, kind, val in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                t = sec * 1_000_000_000 + nsec
        seq, sent = HDR.unpack_from(data)
        rx.append([seq, sent, t, len(data)])
    print(json.dumps({"rx": rx}), flush=True)


def udp_send(host, port, count, size, gap):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    pad = b"\0" * max(0, int(size) - HDR.size)
    gap_ns = int(float(gap) * 1e9)
    t0 = time.time_ns()
    for i in range(int(count)):
        due = t0 + i * gap_ns
        while True:
            now = time.time_ns()
            if now >= due:
                break
            if due - now > 2_000_000:
                time.sleep((due - now - 1_000_000) / 1e9)
        s.sendto(HDR.pack(i, time.time_ns()) + pad, (host, int(port)))
    print(json.dumps({"sent": int(count), "t0": t0, "t1": time.time_ns()}), flush=True)


def tcp_recv(host, port):
    srv = socket.create_server((host, int(port)))
    print(json.dumps({"ready": True}), flush=True)
    c, _ = srv.accept()
    h, n = hashlib.sha256(), 0
    while chunk := c.recv(1 << 16):
        h.update(chunk)
        n += len(chunk)
    print(json.dumps({"bytes": n, "sha256": h.hexdigest()}), flush=True)


def tcp_send(host, port, nbytes, seed):
    data = random.Random(int(seed)).randbytes(int(nbytes))
    c = socket.create_connection((host, int(port)), timeout=30)
    c.sendall(data)
    c.shutdown(socket.SHUT_WR)
    c.recv(1)
    print(json.dumps({"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}))


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    {"udp-recv": udp_recv, "udp-send": udp_send, "tcp-recv": tcp_recv, "tcp-send": tcp_send}[mode](
        *args
    )
