"""Faults a gateway pair must survive with nothing lost or duplicated (no root: the pair on
loopback, SCPS-TP in UDP datagrams). Gateway A is killed (SIGKILL) in the middle of
transfers and started again: its clients' connections end with a reset, not a hang; the
peer's half of each ends at once too (the restarted gateway answers segments for connections
it does not know with a reset: the peer's keepalive probes find out), so the server sees
them end; the peer gateway rides out the time its UDP link answers with ICMP errors; and a
new connection through the restarted gateway is relayed exactly at once."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import threading
import time

from conftest import free_ports
from test_emulate import _exe

FLOWS = 8


def test_a_gateway_killed_mid_transfer_and_restarted(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    p_listen, p_a, p_b = free_ports(3)
    ended: list[tuple[int, str]] = []  # (bytes the server got, how it ended)
    digests: list[str] = []

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
         "--udp", f"127.0.0.1:{p_a},127.0.0.1:{p_b}", "--duration", "40"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p_srv}",
         "--udp", f"127.0.0.1:{p_b},127.0.0.1:{p_a}", "--duration", "40",
         # Its halves of the old connections hear nothing once A is gone; a short keepalive
         # probes them, and the restarted A answers the probes with resets.
         "--keepalive", "2", "--keepalive-interval", "1"]  # fmt: skip

    def start(args):
        return subprocess.Popen([*_exe(), "gateway", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

    gw_b, gw_a = start(b), start(a)
    procs = [gw_b, gw_a]
    try:
        time.sleep(2)
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
        time.sleep(2)
        gw_a.send_signal(signal.SIGKILL)
        gw_a.wait()
        gw_a = start(a)
        procs.append(gw_a)
        for t in ts:
            t.join(30)
        assert outcome == ["reset"] * FLOWS, outcome
        # A new connection through the restarted gateway, exactly and at once.
        time.sleep(1.5)
        data = os.urandom(500_000)
        t0 = time.monotonic()
        c = socket.create_connection(("127.0.0.1", p_listen))
        c.sendall(data)
        c.close()
        deadline = time.monotonic() + 15
        want = hashlib.sha256(data).hexdigest()
        while want not in digests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert want in digests, "the new connection did not arrive exactly"
        assert time.monotonic() - t0 < 10
        # Every old connection ended at the server (reset: its data was cut), none is left
        # open.
        deadline = time.monotonic() + 15
        while len(ended) < FLOWS + 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(ended) == FLOWS + 1, ended
        assert sorted(how for _, how in ended) == ["eof"] + ["reset"] * FLOWS, ended
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        srv.close()
