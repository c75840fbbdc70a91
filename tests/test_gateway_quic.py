"""`spacetp gateway --protocol quic...`: kernel TCP from a client namespace, through gateway A,
across the emulated space link as streams of one QUIC connection between the gateways
(quinn-proto, TLS 1.3 with the pair's shared certificate), through gateway B to a server
namespace, with hash checks (the testbed and transfer of tests/test_gateway.py). Needs root
for the testbed; the CLI checks do not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_gateway import FAST, _why_not, transfer

root = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
LOSSY = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')


@root
def test_four_transfers_cross_one_quic_connection_exactly_under_per(tmp_path):
    elapsed, reps = transfer(LOSSY, {"protocol": "quic-cubic"}, 2_000_000, 4, tmp_path)
    a, b = reps["gateway_a"], reps["gateway_b"]
    assert a["carrier"] == b["carrier"] == "quic"
    assert a["accepted"] == b["admitted"] == 4
    assert a["closed"] == b["closed"] == 4 and a["reset"] == b["reset"] == 0, (a, b)
    assert a["bytes_up"] == b["bytes_down"] == 8_000_000
    # One tunnel connection, dialed once; PER 1% cost packets that QUIC repaired.
    assert a["handshakes"] == b["handshakes"] == 1 and a["dials"] == 1
    assert a["quic"]["packets_lost"] > 0
    assert reps["emulator"]["directions"][0]["error_drops"] > 0
    print(f"4 x 2 MB through the QUIC pair, PER 1%: {elapsed:.2f} s")


@root
@pytest.mark.skipif(__import__("shutil").which("nft") is None, reason="needs nft (nftables)")
@pytest.mark.skipif(__import__("shutil").which("tshark") is None, reason="needs tshark")
def test_transparent_interception_carries_everything_inside_quic(tmp_path):
    """The routed testbed: the client connects to the server's own address, gateway A
    intercepts it (nftables tproxy), and on the space link (space0 of gwa) there is nothing
    but the tunnel's UDP: tshark finds QUIC packets and not one TCP segment."""
    pcap = tmp_path / "space.pcap"
    elapsed, reps = transfer(
        LOSSY, {"protocol": "quic-bbr"}, 1_000_000, 2, tmp_path, transparent=True, capture=pcap
    )
    assert reps["gateway_a"]["closed"] == 2 and reps["gateway_b"]["closed"] == 2

    def count(filt: str) -> int:
        r = subprocess.run(
            ["tshark", "-r", str(pcap), "-d", "udp.port==4433,quic", "-Y", filt],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return len(r.stdout.splitlines())

    assert count("quic") > 500
    assert count("tcp") == 0
    print(f"transparent QUIC pair, 2 x 1 MB, PER 1%: {elapsed:.2f} s")


@root
def test_a_10s_outage_is_crossed_by_the_tunnel(tmp_path):
    """The tunnel's keep-alive and 5-minute idle timeout keep it across an outage; QUIC's
    probe timeouts resume the transfer once the link is back, and nothing is reset."""
    link = FAST + 'outages = [["2 s", "12 s"]]\n'
    elapsed, reps = transfer(link, {"protocol": "quic-cubic"}, 20_000_000, 1, tmp_path)
    assert reps["emulator"]["directions"][0]["outage_drops"] > 0
    assert elapsed > 10
    for g in ("gateway_a", "gateway_b"):
        assert reps[g]["closed"] == 1 and reps[g]["reset"] == 0
        assert reps[g]["handshakes"] == 1
    print(f"20 MB across a 10 s outage through the QUIC pair: {elapsed:.2f} s")


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spacetp.cli", "gateway", *args],
                          capture_output=True, text=True, **kw)  # fmt: skip


def test_make_cert_writes_a_pair_the_check_accepts_and_errors_name_the_setting(tmp_path):
    r = _cli("--make-cert", str(tmp_path / "tls"))
    assert r.returncode == 0, r.stderr
    cert, key = tmp_path / "tls" / "gateway-cert.pem", tmp_path / "tls" / "gateway-key.pem"
    assert cert.read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    tls = ["--tls-cert", str(cert), "--tls-key", str(key)]
    rule = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", "127.0.0.1:5000=7000"]
    ok = _cli("--protocol", "quic-bbr", *rule, *tls, "--check")
    assert ok.returncode == 0 and "configuration ok" in ok.stdout, ok.stderr
    cases = [
        (["--protocol", "quic", *rule], "gateway.tls_cert"),
        (["--protocol", "quic", *rule, *tls, "--quic", '{"initial_rtt": "0 s"}'],
         "gateway.quic.initial_rtt"),
        (["--protocol", "quic", *rule, *tls, "--tcp", '{"sack": true}'], "gateway.tcp"),
        (["--protocol", "scps-tp", *rule, "--quic-port", "4433"], "gateway.quic_port"),
        (["--protocol", "quic", *rule, "--tls-cert", str(key), "--tls-key", str(key)],
         "not a PEM certificate"),
    ]  # fmt: skip
    for args, want in cases:
        r = _cli(*args, "--check")
        assert r.returncode == 2 and want in r.stderr, (args, r.stderr)
    # SCPS-TP link options are refused for a QUIC gateway, with the reason.
    r = _cli("--protocol", "quic", *rule, *tls, "--tun", "scps0")
    assert r.returncode == 2 and "UDP socket" in r.stderr, r.stderr


@root
def test_the_cli_pair_relays_over_its_own_udp_sockets(tmp_path):
    """Two `spacetp gateway --protocol quic` processes in one namespace on loopback, each
    with its tunnel on a kernel UDP socket: 1 MB relayed exactly, then SIGTERM stops both
    with exit 0 and reports."""
    from spacetp.live.emulate import _ip, delete_namespace
    from spacetp.live.gateway import make_cert

    ns = f"stq-{os.getpid()}-udp"
    cert, key = make_cert(tmp_path / "tls")
    tls = ["--tls-cert", str(cert), "--tls-key", str(key)]
    exe = ["ip", "netns", "exec", ns, sys.executable, "-m", "spacetp.cli", "gateway"]
    _ip("netns", "add", ns)
    procs = []
    try:
        _ip("-n", ns, "link", "set", "dev", "lo", "up")
        code = (
            "import socket,hashlib,sys\n"
            "l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "l.bind(('127.0.0.1', 6001)); l.listen(1); print('ready', flush=True)\n"
            "c, _ = l.accept(); h = hashlib.sha256(); n = 0\n"
            "while (b := c.recv(65536)):\n    h.update(b); n += len(b)\n"
            "print(n, h.hexdigest(), flush=True)\n"
        )
        srv = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
        procs.append(srv)
        assert srv.stdout.readline().strip() == "ready"
        stats = [tmp_path / "a.json", tmp_path / "b.json"]
        b = subprocess.Popen([*exe, "--protocol", "quic-cubic", "--local", "127.0.0.2",
                              "--forward", "7000=127.0.0.1:6001", *tls, "--drain", "5",
                              "--stats", str(stats[1])], stdout=subprocess.DEVNULL)  # fmt: skip
        procs.append(b)
        a = subprocess.Popen([*exe, "--protocol", "quic-cubic", "--local", "127.0.0.3",
                              "--peer", "127.0.0.2", "--listen", "127.0.0.1:6000=7000", *tls,
                              "--drain", "5", "--stats", str(stats[0])],
                             stdout=subprocess.DEVNULL)  # fmt: skip
        procs.append(a)
        data = os.urandom(1_000_000)
        send = (
            "import socket,sys,time\n"
            "for _ in range(100):\n"
            "    try:\n        c = socket.create_connection(('127.0.0.1', 6000)); break\n"
            "    except OSError:\n        time.sleep(0.1)\n"
            "c.sendall(sys.stdin.buffer.read()); c.shutdown(socket.SHUT_WR); c.recv(1)\n"
        )
        subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", send], input=data,
                       timeout=60, check=True)  # fmt: skip
        n, digest = srv.stdout.readline().split()
        import hashlib

        assert int(n) == len(data) and digest == hashlib.sha256(data).hexdigest()
        for p in (a, b):
            p.send_signal(signal.SIGTERM)
        assert a.wait(timeout=20) == 0 and b.wait(timeout=20) == 0
        ra, rb = (json.loads(Path(f).read_text()) for f in stats)
        assert ra["closed"] == 1 and rb["closed"] == 1 and ra["handshakes"] == 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        delete_namespace(ns)
