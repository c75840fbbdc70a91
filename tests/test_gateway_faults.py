"""Faults a gateway pair must survive with nothing lost or duplicated (no root: the pair on
loopback, SCPS-TP in UDP datagrams). Gateway A is killed (SIGKILL) in the middle of
transfers and started again: its clients' connections end with a reset, not a hang; the
peer's half of each ends at once too (the restarted gateway answers segments for connections
it does not know with a reset: the peer's keepalive probes find out), so the server sees
them end; the peer gateway rides out the time its UDP link answers with ICMP errors; and a
new connection through the restarted gateway is relayed exactly at once."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

from conftest import Output, free_ports, listening_ports, start_gateway, until_reset
from test_emulate import _exe

FLOWS = 8


def _until(cond, within: float, what: str) -> None:
    """Wait until `cond()` holds, for at most `within` seconds."""
    deadline = time.monotonic() + within
    while not cond():
        assert time.monotonic() < deadline, f"waited {within:g} s for {what}"
        time.sleep(0.05)


def test_a_gateway_killed_mid_transfer_and_restarted(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    p_listen, p_a, p_b = free_ports(3)
    ended: list[tuple[int, str]] = []  # (bytes the server got, how it ended)
    digests: list[str] = []
    receiving: list[int] = []  # a 1 per server connection once data arrived on it

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return

            def one(c=c):
                h, n, how = hashlib.sha256(), 0, "eof"
                try:
                    while b := c.recv(65536):
                        if not n:
                            receiving.append(1)
                        h.update(b)
                        n += len(b)
                except ConnectionResetError:
                    how = "reset"
                ended.append((n, how))
                digests.append(h.hexdigest())
                c.close()

            threading.Thread(target=one, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    p_srv = srv.getsockname()[1]
    a = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", f"127.0.0.1:{p_listen}=5000",
         "--udp", f"127.0.0.1:{p_a},127.0.0.1:{p_b}", "--duration", "300"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p_srv}",
         "--udp", f"127.0.0.1:{p_b},127.0.0.1:{p_a}", "--duration", "300",
         # Its halves of the old connections hear nothing once A is gone; a short keepalive
         # probes them, and the restarted A answers the probes with resets.
         "--keepalive", "2", "--keepalive-interval", "1"]  # fmt: skip

    procs = []

    def start(args):  # returns once the gateway is ready
        procs.append(start_gateway(*args)[0])
        return procs[-1]

    try:
        start(b)
        gw_a = start(a)
        outcome: list[str] = []

        def client():
            c = socket.create_connection(("127.0.0.1", p_listen))
            c.settimeout(15)
            try:
                while True:  # until the gateway goes away
                    c.sendall(os.urandom(16384))
                    time.sleep(0.005)
            except (ConnectionResetError, BrokenPipeError):
                outcome.append("reset")
            except TimeoutError:
                outcome.append("hang")
            finally:
                c.close()

        ts = [threading.Thread(target=client) for _ in range(FLOWS)]
        for t in ts:
            t.start()
        # Mid-transfer: every connection has reached the server.
        _until(lambda: len(receiving) == FLOWS, 60, "data on every connection")
        gw_a.send_signal(signal.SIGKILL)
        gw_a.wait()
        gw_a = start(a)
        for t in ts:
            t.join(60)
        assert outcome == ["reset"] * FLOWS, outcome
        # A new connection through the restarted gateway (ready: it listens), exactly.
        data = os.urandom(500_000)
        c = socket.create_connection(("127.0.0.1", p_listen))
        c.sendall(data)
        c.close()
        want = hashlib.sha256(data).hexdigest()
        _until(lambda: want in digests, 30, "the new connection, exact")
        # Every old connection ended at the server (reset: its data was cut), none is left
        # open.
        _until(lambda: len(ended) >= FLOWS + 1, 30, "every connection's end at the server")
        assert len(ended) == FLOWS + 1, ended
        assert sorted(how for _, how in ended) == ["eof"] + ["reset"] * FLOWS, ended
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        srv.close()


def _pair_args(p_listen: int, p_a: int, p_b: int, p_srv: int) -> tuple[list[str], list[str]]:
    a = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", f"127.0.0.1:{p_listen}=5000",
         "--udp", f"127.0.0.1:{p_a},127.0.0.1:{p_b}"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p_srv}",
         "--udp", f"127.0.0.1:{p_b},127.0.0.1:{p_a}"]  # fmt: skip
    return a, b


def _gateway(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([*_exe(), "gateway", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _sink(srv: socket.socket, got: list, delay: float = 0.0) -> None:
    """Accept one connection; after `delay` s without reading, hash it to EOF."""
    c, _ = srv.accept()
    time.sleep(delay)
    h, n = hashlib.sha256(), 0
    try:
        while b := c.recv(65536):
            h.update(b)
            n += len(b)
        got.append((n, h.hexdigest()))
    except OSError as e:
        got.append((n, repr(e)))


def test_the_far_gateway_unreachable_at_start_then_up_or_never():
    # Gateway A starts alone: its UDP link draws ICMP port-unreachable errors (counted, the
    # gateway goes on). A client connects and sends; gateway B comes up once A has counted
    # such an error for the SYN, and the SCPS-TP SYN's retransmission finds it: every byte
    # arrives. A client of a gateway whose peer never comes gets a reset once the SYN
    # retries are spent, not a hang (the gateway runs on: only its SYN retries can end it).
    srv = socket.create_server(("127.0.0.1", 0))
    p_a, p_b, p_a2, p_b2, p_status = free_ports(5)
    a, b = _pair_args(0, p_a, p_b, srv.getsockname()[1])
    got: list = []
    threading.Thread(target=_sink, args=(srv, got), daemon=True).start()
    lonely, _ = _pair_args(0, p_a2, p_b2, 9)
    procs = []
    try:
        gw_a, io_a = start_gateway(*a, "--duration", "300", "--metrics", f"127.0.0.1:{p_status}")
        procs.append(gw_a)
        gw_lonely, io_lonely = start_gateway(*lonely, "--duration", "300",
                                             "--tcp", '{"syn_retries": 2}')  # fmt: skip
        procs.append(gw_lonely)
        p_listen = listening_ports(io_a.wait_for("ready: pid"))[0]
        p_listen2 = listening_ports(io_lonely.wait_for("ready: pid"))[0]
        data = os.urandom(300_000)
        c = socket.create_connection(("127.0.0.1", p_listen))
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)

        def unreachable() -> bool:
            url = f"http://127.0.0.1:{p_status}/status"
            return json.loads(urllib.request.urlopen(url, timeout=5).read())["link_unreachable"]

        _until(unreachable, 60, "gateway A to count its link unreachable")
        procs.append(start_gateway(*b, "--duration", "300")[0])
        c.settimeout(60)
        assert c.recv(1) == b""  # the server's close, relayed back
        _until(lambda: got, 30, "the server to read to the end")
        assert got == [(len(data), hashlib.sha256(data).hexdigest())], got
        # The gateway whose peer never comes: the client is reset (after the SYN retries,
        # 1 + 2 + 4 s and the last wait), not left hanging.
        c2 = socket.create_connection(("127.0.0.1", p_listen2))
        c2.sendall(b"hello")
        c2.settimeout(120)
        end, _ = until_reset(c2)
        assert end == "reset", end
        for g in (gw_a, gw_lonely):
            g.send_signal(signal.SIGTERM)
        rep_a = json.loads(io_a.finish(timeout=60)[0])
        rep_lonely = json.loads(io_lonely.finish(timeout=60)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        srv.close()
    assert rep_a["link_unreachable"] >= 1 and rep_a["integrity_resets"] == 0, rep_a
    assert rep_lonely["reset"] == 1 and rep_lonely["link_unreachable"] >= 1, rep_lonely


def test_a_slow_reader_holding_its_window_at_zero_loses_nothing():
    # The server reads nothing for STALL s while the client has 6 MB to send: the kernel
    # buffers fill, gateway B cannot write, its SCPS-TP window closes, gateway A stops
    # reading the client, the client blocks. Keepalives far shorter than the stall (2 s
    # idle, two probes 1 s apart) must not take the window probes' silence for a dead peer.
    # Then the reader reads everything, exactly. benches: SPACETP_STALL_S=180 for minutes.
    stall = float(os.environ.get("SPACETP_STALL_S", "15"))
    srv = socket.create_server(("127.0.0.1", 0))
    p_a, p_b = free_ports(2)
    a, b = _pair_args(0, p_a, p_b, srv.getsockname()[1])
    got: list = []
    threading.Thread(target=_sink, args=(srv, got, stall), daemon=True).start()
    ka = ["--keepalive", "2", "--keepalive-interval", "1", "--keepalive-probes", "2",
          "--duration", str(stall + 300)]  # fmt: skip
    procs = [_gateway([*b, *ka]), _gateway([*a, *ka])]
    ios = [Output(p) for p in procs]
    try:
        data = os.urandom(6_000_000)
        ready = ios[1].wait_for("ready: pid", within=60)
        c = socket.create_connection(("127.0.0.1", listening_ports(ready)[0]))
        c.settimeout(stall + 120)
        t0 = time.monotonic()
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        assert c.recv(1) == b""
        waited = time.monotonic() - t0
        _until(lambda: got, 30, "the reader to read to the end")
        # Then stop them (the connection is done: a stop has nothing to reset).
        for p in procs:
            p.send_signal(signal.SIGTERM)
        reps = [json.loads(io.finish(timeout=60)[0]) for io in ios]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        srv.close()
    assert got == [(len(data), hashlib.sha256(data).hexdigest())], got
    assert waited >= stall, f"the client was never held back ({waited:.1f} s)"
    for r in reps:
        assert (r["reset"], r["reaped"], r["integrity_resets"]) == (0, 0, 0), r
        assert r["closed"] == 1, r
