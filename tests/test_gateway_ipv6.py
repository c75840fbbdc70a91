"""IPv6 end to end through `spacetp gateway` (issue #21, item 2), no root: a gateway pair on
loopback whose space link carries IPv6 SCPS-TP packets (link addresses fd00::1 and fd00::2,
the packets in UDP datagrams), kernel TCP on [::1] at both ends. 500 kB arrive exactly, each
gateway counts its one peer by its IPv6 address, nothing is undecodable. The packet layout is
checked against Scapy in spacetp-wire (`ipv6.rs`); the core's test repeats this under loss.

Transparent interception of IPv6 (root: namespaces, TUN devices, nftables): the routed
testbed with IPv6 (`Testbed(transparent=True, ipv6=True)`), a client that knows nothing of
the gateways connecting to the server's IPv6 address and, on the same gateways, to its IPv4
one; and what a gateway adds to an IPv6 host (ip6 table, `ip -6` rules, IPv6 forwarding),
undone by `--cleanup` after SIGKILL."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

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


def _why_not_root() -> str | None:
    if os.geteuid() != 0:
        return "interception needs root (network namespaces, TUN devices, nftables)"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    missing = [c for c in ("ip", "ss", "nft") if shutil.which(c) is None]
    if missing:
        return f"needs the {', '.join(missing)} command(s) (iproute2, nftables)"
    if not Path("/proc/sys/net/ipv6").is_dir():
        return "the kernel has no IPv6"
    return None


needs_root = pytest.mark.skipif(_why_not_root() is not None, reason=str(_why_not_root()))

# A dual-stack server ([::]:PORT, IPv4 clients as ::ffff:a.b.c.d): for each of COUNT
# connections, who connected, how many bytes came and their SHA-256.
SINK = """
import hashlib, json, socket, sys, threading
srv = socket.create_server(("::", int(sys.argv[1])), family=socket.AF_INET6,
                           dualstack_ipv6=True)
print(json.dumps({"ready": True}), flush=True)
out, threads = [], []
def one(c, peer):
    h, n = hashlib.sha256(), 0
    while b := c.recv(1 << 16):
        h.update(b)
        n += len(b)
    out.append({"peer": peer[0], "bytes": n, "sha256": h.hexdigest()})
    c.close()
for _ in range(int(sys.argv[2])):
    c, peer = srv.accept()
    threads.append(threading.Thread(target=one, args=(c, peer)))
    threads[-1].start()
for t in threads:
    t.join()
print(json.dumps(out), flush=True)
"""
# A client that knows only the server's address: NBYTES random bytes (SEED), then FIN and
# the server's close; their SHA-256.
SEND = """
import hashlib, json, random, socket, sys
host, port, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
data = random.Random(seed).randbytes(n)
c = socket.create_connection((host, port), timeout=30)
c.sendall(data)
c.shutdown(socket.SHUT_WR)
c.settimeout(30)
c.recv(1)
print(json.dumps({"bytes": n, "sha256": hashlib.sha256(data).hexdigest()}), flush=True)
"""
LINK = """
[[links]]
between = ["a", "b"]
rate = "50 Mb/s"
delay = "10 ms"
"""


def _in(ns: str, *cmd: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True,
                          text=True).stdout  # fmt: skip


@needs_root
def test_ipv6_tcp_is_intercepted_and_crosses_the_space_link_as_ipv6_scps_tp(tmp_path):
    """The client connects to the server's IPv6 address; gateway A intercepts it (ip6
    tproxy), carries it as IPv6 SCPS-TP packets between the client's and the server's
    addresses through the kernels and the emulated link, gateway B takes it from its TUN
    (`ip -6 rule iif space0 ipproto tcp`) and connects to the server over IPv6. 1 MB
    arrives exactly, from gateway B's address; an IPv4 connection crosses the same gateways
    alongside; a clean stop takes the IPv6 plumbing down again."""
    from spacetp.live.gateway_testbed import CLI6, GWB6, GWB_ADDR, SRV6, SRV_ADDR, Testbed

    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    sizes = {SRV6: 1_000_000, SRV_ADDR: 200_000}
    tag = f"{os.getpid()}6"
    with Testbed(LINK, gateway=proto, tag=tag, workdir=tmp_path, transparent=True,
                 ipv6=True) as tb:  # fmt: skip
        sink = tb.exec("srv", [sys.executable, "-c", SINK, "5000", "2"],
                       stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert json.loads(sink.stdout.readline())["ready"]
        sent = {}
        for i, (host, n) in enumerate(sizes.items()):
            c = tb.exec("cli", [sys.executable, "-c", SEND, host, "5000", str(n), str(i)],
                        stdout=subprocess.PIPE, text=True)  # fmt: skip
            try:
                sent[host] = json.loads(c.communicate(timeout=30)[0])
            except (subprocess.TimeoutExpired, ValueError) as e:
                raise AssertionError(f"{host}: {e}; reports: {tb.reports()}") from None
        got = {g["peer"]: g for g in json.loads(sink.communicate(timeout=30)[0])}
        reps = tb.reports(settle=2.5)
        gwa, gwb = tb.ns("gwa"), tb.ns("gwb")
        left = {ns: (_in(ns, "ip", "-6", "rule"), _in(ns, "nft", "list", "tables"),
                     _in(ns, "sysctl", "-n", "net.ipv6.conf.all.forwarding").strip())
                for ns in (gwa, gwb)}  # fmt: skip
    # Exact bytes, each seen by the server as coming from gateway B (its IPv6 and IPv4
    # addresses: kernel TCP from the gateway host, as in the IPv4 design).
    v6, v4 = got[GWB6], got[f"::ffff:{GWB_ADDR}"]
    assert (v6["bytes"], v6["sha256"]) == (sizes[SRV6], sent[SRV6]["sha256"]), v6
    assert (v4["bytes"], v4["sha256"]) == (sizes[SRV_ADDR], sent[SRV_ADDR]["sha256"]), v4
    a, b, emu = reps["gateway_a"], reps["gateway_b"], reps["emulator"]
    # Gateway A intercepted both; its flows' far ends are the original destinations, so
    # the IPv6 one crossed as an IPv6 flow from the client's address to the server's.
    assert (a["accepted"], a["intercepted"], b["admitted"]) == (2, 2, 2), (a, b)
    a_peers = {p["peer"]: p["bytes_up"] for p in a["peers"]}
    b_peers = {p["peer"]: p["bytes_down"] for p in b["peers"]}
    assert a_peers == {SRV6: sizes[SRV6], SRV_ADDR: sizes[SRV_ADDR]}, a["peers"]
    assert b_peers[CLI6] == sizes[SRV6], b["peers"]
    for r in (a, b):
        assert r["closed"] == 2 and r["reset"] == 0 and r["bad_checksum"] == 0, r
        # The TUN devices are silent for IPv6 (no DAD, no MLD): only SCPS-TP came in.
        assert r["undecodable"] == 0 and r["foreign"] == 0, r
    # The bytes crossed the emulated link as SCPS-TP packets (a full segment each).
    fwd = emu["directions"][0]
    total = sum(sizes.values())
    assert fwd["written_bytes"] > total and fwd["written_packets"] > total // 1500, fwd
    assert b["packets_in"] > total // 1500 and a["segments_sent"] > total // 1500, (a, b)
    print(f"IPv6 1 MB + IPv4 200 kB intercepted: {fwd['written_packets']} packets, "
          f"{fwd['written_bytes']} bytes across the link")  # fmt: skip
    for ns, (rules, tables, forwarding) in left.items():
        assert "lookup 578" not in rules and "spacetp_" not in tables, (ns, rules, tables)
        assert forwarding == "1", ns  # the testbed's own setting, restored


@needs_root
def test_ipv6_plumbing_is_recorded_and_cleaned_up_after_sigkill():
    """A gateway in an IPv6 namespace listens on 0.0.0.0:5999 and [::]:5999 and adds an ip6
    table, `ip -6` divert, local-route and fwmark rules and IPv6 forwarding, each in its
    state file; after SIGKILL the ip6 table fails closed, and `--cleanup` undoes all of it."""
    ns = f"stg6-{os.getpid()}"
    gw = [sys.executable, "-m", "spacetp.cli", "gateway", "--tun", "scps7"]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    p = None
    try:
        for dev in ("lan0", "space0"):
            subprocess.run(["ip", "-n", ns, "link", "add", dev, "type", "veth", "peer", "name",
                            f"{dev}p"], check=True)  # fmt: skip
            subprocess.run(["ip", "-n", ns, "link", "set", dev, "up"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        _in(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
        _in(ns, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=0")
        p = subprocess.Popen(["ip", "netns", "exec", ns, *gw, "--intercept", "lan0",
                              "--space-if", "space0", "--forward-original",
                              "--after-crash", "closed"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 20
        while len(_in(ns, "ss", "-Hltn", "sport = :5999").splitlines()) < 2:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, _in(ns, "ss", "-Hltn")
            time.sleep(0.05)
        listening = _in(ns, "ss", "-Hltn", "sport = :5999")
        assert "0.0.0.0:5999" in listening and "[::]:5999" in listening, listening
        running = (_in(ns, "ip", "-6", "rule"), _in(ns, "ip", "-6", "route", "show", "table",
                   "5789"), _in(ns, "nft", "list", "table", "ip6", "spacetp_scps7"))  # fmt: skip
        assert "iif space0 ipproto tcp lookup 5788" in running[0], running[0]
        assert "fwmark 0x5c7 lookup 5789" in running[0], running[0]
        assert running[1].startswith("local default dev lo"), running[1]
        assert "tproxy to :5999" in running[2], running[2]
        assert _in(ns, "sysctl", "-n", "net.ipv6.conf.all.forwarding").strip() == "1"
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        # Left behind, failing closed for IPv6 as for IPv4.
        left = _in(ns, "nft", "list", "table", "ip6", "spacetp_scps7")
        assert "fail_closed" in left and "reject with tcp reset" in left, left
        r = subprocess.run(["ip", "netns", "exec", ns, *gw, "--cleanup"], capture_output=True,
                           text=True)  # fmt: skip
        assert r.returncode == 0, r.stderr
        for undone in ("nft delete table ip6 spacetp_scps7",
                       "ip -6 rule del iif space0 ipproto tcp lookup 5788",
                       "ip -6 rule del fwmark 0x5c7 lookup 5789",
                       "ip -6 route del local ::/0 dev lo table 5789",
                       "sysctl net.ipv6.conf.all.forwarding=0"):  # fmt: skip
            assert undone in r.stdout, (undone, r.stdout)
        assert "lookup 578" not in _in(ns, "ip", "-6", "rule")
        assert "spacetp_" not in _in(ns, "nft", "list", "tables")
        assert _in(ns, "sysctl", "-n", "net.ipv6.conf.all.forwarding").strip() == "0"
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "exec", ns, *gw, "--cleanup"], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
