"""A gateway at its file-descriptor limit (no root: a gateway pair on loopback with UDP
encapsulation, started with a hard limit of 64 open files): it does not spin on a listener
it cannot accept from; the connections wait in the kernel's backlog and are relayed exactly
once descriptors are free; the report and a one-line warning say what to raise. The
10 000-connection measurement is benches/gateway_scale.py."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
import threading

from conftest import Output, free_ports, listening_ports
from test_emulate import _exe

N = 150


def _limit_files():
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


def test_out_of_descriptors_the_gateway_waits_then_relays_every_connection(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(512)
    p_a, p_b = free_ports(2)
    p_srv = srv.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=c: (c.sendall(str(len(_all(c))).encode()),
                                                 c.close()), daemon=True).start()  # fmt: skip

    def _all(c):
        got = b""
        while b := c.recv(65536):
            got += b
        return got

    threading.Thread(target=serve, daemon=True).start()
    # CPU of the children this test starts (the two gateways), not of every earlier test's.
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    a = [
        "--local",
        "10.77.0.1",
        "--peer",
        "10.77.0.2",
        "--listen",
        "127.0.0.1:0=5000",
        "--udp",
        f"127.0.0.1:{p_a},127.0.0.1:{p_b}",
        "--stats",
        str(tmp_path / "a"),
    ]
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p_srv}",
         "--udp", f"127.0.0.1:{p_b},127.0.0.1:{p_a}"]  # fmt: skip
    gw_a = subprocess.Popen([*_exe(), "gateway", *a, "--duration", "10"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_limit_files)  # fmt: skip
    gw_b = subprocess.Popen([*_exe(), "gateway", *b, "--duration", "10"], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    ios = [Output(gw_a), Output(gw_b)]
    try:
        ready = [io.wait_for("ready: pid") for io in ios]
        p_listen = listening_ports(ready[0])[0]
        clients = [socket.create_connection(("127.0.0.1", p_listen)) for _ in range(N)]
        results = [None] * N

        def transfer(i, c):
            c.sendall(bytes([i % 256]) * 1000)
            c.shutdown(socket.SHUT_WR)
            c.settimeout(20)
            results[i] = c.recv(100)
            c.close()

        ts = [threading.Thread(target=transfer, args=(i, c)) for i, c in enumerate(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        assert results == [b"1000"] * N
        out, err = ios[0].finish(timeout=60)
        ios[1].finish(timeout=60)
    finally:
        for g in (gw_a, gw_b):
            if g.poll() is None:
                g.kill()
        srv.close()
    rep = json.loads((tmp_path / "a").read_text())
    assert rep["fd_limit"] == 64 and rep["accept_fd_limit"] > 0, rep
    assert rep["accepted"] == N and rep["bytes_up"] == N * 1000
    assert "out of file descriptors (limit 64)" in err and "LimitNOFILE" in err
    # Waiting did not spin: far less CPU than the run's 10 s.
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    assert used < 8, f"the two gateways used {used:.1f} s of CPU in 10 s"
