"""IPv6 end to end through `spacetp gateway` (issue #21, item 2), no root: a gateway pair on
loopback whose space link carries IPv6 SCPS-TP packets (link addresses fd00::1 and fd00::2,
the packets in UDP datagrams), kernel TCP on [::1] at both ends. 500 kB arrive exactly, each
gateway counts its one peer by its IPv6 address, nothing is undecodable. The packet layout is
checked against Scapy in spacetp-wire (`ipv6.rs`); the core's test repeats this under loss."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import threading

from conftest import free_ports, spacetp_cli
from test_emulate import _exe


def test_ipv6_clients_and_an_ipv6_link_relay_exactly():
    p = free_ports(3)
    srv = socket.create_server(("::1", 0), family=socket.AF_INET6)
    got: list = []

    def serve():
        c, _ = srv.accept()
        h, n = hashlib.sha256(), 0
        while b := c.recv(65536):
            h.update(b)
            n += len(b)
        got.append((n, h.hexdigest()))
        c.close()

    threading.Thread(target=serve, daemon=True).start()
    a = ["--local", "fd00::1", "--peer", "fd00::2", "--listen", f"[::1]:{p[0]}=5000",
         "--udp", f"127.0.0.1:{p[1]},127.0.0.1:{p[2]}"]  # fmt: skip
    b = ["--local", "fd00::2", "--peer", "fd00::1",
         "--forward", f"5000=[::1]:{srv.getsockname()[1]}",
         "--udp", f"127.0.0.1:{p[2]},127.0.0.1:{p[1]}"]  # fmt: skip
    gws = [subprocess.Popen([*_exe(), "gateway", *args, "--duration", "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for args in (a, b)]  # fmt: skip
    try:
        data = os.urandom(500_000)
        for _ in range(100):
            try:
                c = socket.create_connection(("::1", p[0]))
                break
            except OSError:
                threading.Event().wait(0.1)
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        c.settimeout(10)
        assert c.recv(1) == b""
        outs = [g.communicate(timeout=20) for g in gws]
    finally:
        for g in gws:
            g.kill()
        srv.close()
    assert got == [(len(data), hashlib.sha256(data).hexdigest())], got
    for (out, err), peer in zip(outs, ("fd00::2", "fd00::1"), strict=True):
        r = json.loads(out)
        assert r["undecodable"] == 0 and r["bad_checksum"] == 0, err
        assert [x["peer"] for x in r["peers"]] == [peer], r["peers"]


def test_the_link_addresses_must_be_one_family():
    r = spacetp_cli("gateway", "--local", "10.0.0.1", "--peer", "fd00::2",
                    "--listen", "127.0.0.1:5000=5000",
                    "--udp", "127.0.0.1:1,127.0.0.1:2", "--check")  # fmt: skip
    assert r.returncode == 2, r.stdout
    assert "gateway.peer" in r.stderr and "both IPv4 or both IPv6" in r.stderr, r.stderr
