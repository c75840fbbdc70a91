"""What `spacetp gateway --tun` does to the host, and that every way of stopping it leaves the
host as it was: a clean stop restores it; after SIGKILL the next start (or `--cleanup`) finds
the state file, undoes what it records (sysctls back to the values from before the first
gateway) and starts; meanwhile `--after-crash open` lets TCP past the dead gateway and
`closed` resets it; a gateway that runs is named by its PID; a routing table used by another
program is not blamed on a gateway; a state file of a deleted namespace whose inode a new one
got is not undone there; a background job of a shell script (SIGINT ignored) still stops on
SIGINT; and the testbed's gateway hosts stay routers after their gateways stop.

Each test builds three network namespaces `stgh-<pid>-<n>-{cli,gw,srv}`: the gateway host
`gw` with `lan0` (10.9.1.1, to `cli` 10.9.1.2) and `space0` (10.9.2.1, to `srv` 10.9.2.2),
both veth, and deletes them. Needs root, TUN and nftables; skipped otherwise."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import ROOT, bash_ignores_sigint_in_background, shell_background


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "changes a network namespace's routing, nftables and sysctls: needs root"
    if not os.path.exists("/dev/net/tun"):
        return "needs /dev/net/tun"
    if shutil.which("nft") is None or shutil.which("ip") is None:
        return "needs nft (nftables) and ip (iproute2)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
_n = itertools.count()
GATEWAY = [sys.executable, "-m", "spacetp.cli", "gateway"]
CLI_ADDR, SRV_ADDR = "10.9.1.2", "10.9.2.2"
# A connection attempt from the client namespace: connected, refused (an RST), or the error.
CONNECT = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
    print("connected")
except ConnectionRefusedError:
    print("refused")
except OSError as e:
    print(type(e).__name__)
"""


class Net(NamedTuple):
    gw: str
    cli: str
    srv: str


def sh(ns: str, *cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)


def sysctl(ns: str, key: str) -> str:
    return sh(ns, "sysctl", "-n", key).stdout.strip()


def _kill_inside(ns: str) -> None:
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    for pid in pids.split():
        subprocess.run(["kill", "-KILL", pid], capture_output=True)


@pytest.fixture
def net():
    base = f"stgh-{os.getpid()}-{next(_n)}"
    n = Net(f"{base}-gw", f"{base}-cli", f"{base}-srv")
    try:
        for ns in n:
            subprocess.run(["ip", "netns", "add", ns], check=True)
            sh(ns, "ip", "link", "set", "lo", "up")
        # The LAN and the space link of the gateway host, each a veth pair to an end host.
        for dev, far, here, there in (
            ("lan0", n.cli, "10.9.1.1", CLI_ADDR),
            ("space0", n.srv, "10.9.2.1", SRV_ADDR),
        ):
            subprocess.run(["ip", "-n", n.gw, "link", "add", dev, "type", "veth", "peer",
                            "name", "eth0", "netns", far], check=True)  # fmt: skip
            sh(n.gw, "ip", "addr", "add", f"{here}/24", "dev", dev)
            sh(n.gw, "ip", "link", "set", dev, "up")
            sh(far, "ip", "addr", "add", f"{there}/24", "dev", "eth0")
            sh(far, "ip", "link", "set", "eth0", "up")
            sh(far, "ip", "route", "add", "default", "via", here)
        # Not a router by itself: what a gateway turns on must be turned off again.
        sh(n.gw, "sysctl", "-qw", "net.ipv4.ip_forward=0")
        sh(n.gw, "sysctl", "-qw", "net.ipv4.tcp_early_demux=1")
        yield n
    finally:
        for ns in n:
            _kill_inside(ns)
        sh(n.gw, *GATEWAY, "--cleanup", "--tun", "scps9")
        for ns in n:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def gateway(ns: str, *extra: str, tun: str = "scps9") -> subprocess.Popen:
    cmd = [*GATEWAY, "--tun", tun, "--intercept", "lan0", "--space-if", "space0",
           "--forward-original", *extra]  # fmt: skip
    return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip


def wait_running(ns: str, p: subprocess.Popen | None = None, log: Path | None = None) -> None:
    """Until gateway `p` (or the one writing to `log`) says it is ready: its interception,
    its state file and its signal handlers are all in place by then."""
    if p is not None:
        for line in p.stderr:
            if "ready: pid" in line:
                break
        else:
            raise AssertionError(f"the gateway exited: {p.communicate()}")
    else:
        deadline = time.monotonic() + 60
        while "ready: pid" not in log.read_text():
            assert time.monotonic() < deadline, f"the gateway never got ready: {log.read_text()}"
            time.sleep(0.05)
    assert "spacetp_scps9" in sh(ns, "nft", "list", "tables").stdout


def kill9(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)


def leftovers(ns: str) -> dict:
    return {
        "nft": "spacetp_scps9" in sh(ns, "nft", "list", "tables").stdout,
        "rules": sh(ns, "ip", "rule").stdout.count("lookup 578"),
        "table_5789": bool(sh(ns, "ip", "route", "show", "table", "5789").stdout.strip()),
        "ip_forward": sysctl(ns, "net.ipv4.ip_forward"),
        "early_demux": sysctl(ns, "net.ipv4.tcp_early_demux"),
    }


CLEAN = {"nft": False, "rules": 0, "table_5789": False, "ip_forward": "0", "early_demux": "1"}
CRASHED = {"nft": True, "rules": 3, "table_5789": True, "ip_forward": "1", "early_demux": "0"}


def connect(n: Net, port: int) -> str:
    return sh(n.cli, sys.executable, "-c", CONNECT, SRV_ADDR, str(port)).stdout.strip()


def listener(n: Net, port: int) -> subprocess.Popen:
    """A server socket on srv (the kernel completes handshakes without accept)."""
    code = f"import socket, time; s = socket.create_server(({SRV_ADDR!r}, {port})); "
    code += "print('ready', flush=True); time.sleep(60)"
    p = subprocess.Popen(["ip", "netns", "exec", n.srv, sys.executable, "-c", code],
                         stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert p.stdout.readline().strip() == "ready"
    return p


def state_of(ns: str) -> Path:
    from spacetp.live.gateway_net import STATE_DIR

    # /run/netns/NAME is a bind mount of the namespace: the same inode.
    return STATE_DIR / f"gateway-{os.stat(f'/run/netns/{ns}').st_ino}-scps9.json"


@pytest.mark.parametrize("after_crash", ["open", "closed"])
def test_after_sigkill_traffic_fails_open_or_closed_and_a_restart_restores_the_host(
    net, after_crash
):
    server = listener(net, 5000)
    try:
        p = gateway(net.gw, "--after-crash", after_crash)
        wait_running(net.gw, p)
        state = json.loads(state_of(net.gw).read_text())
        assert state["pid"] == p.pid and state["sysctl"]["net.ipv4.ip_forward"] == "0", state
        # While it runs, LAN TCP is intercepted and accepted here, never forwarded, so the
        # fail-closed rule (which resets every forwarded LAN connection) never bites.
        assert connect(net, 5000) == "connected"
        kill9(p)
        assert leftovers(net.gw) == CRASHED, leftovers(net.gw)
        table = sh(net.gw, "nft", "list", "table", "ip", "spacetp_scps9").stdout
        assert ("fail_closed" in table) == (after_crash == "closed"), table
        # The dead gateway's tproxy rule finds no socket: the SYN is forwarded to the
        # listening server (open), or the forward rule answers it with a reset (closed).
        assert connect(net, 5000) == ("connected" if after_crash == "open" else "refused")
    finally:
        server.kill()
        server.wait()
    # The next start cleans up, says so in one line naming the dead PID, and runs; its
    # clean stop restores the host as it was before the first gateway.
    q = gateway(net.gw, "--duration", "1")
    out, err = q.communicate(timeout=30)
    assert q.returncode == 0, err
    lines = [ln for ln in out.splitlines() if "cleaned up" in ln]
    assert len(lines) == 1 and lines[0].startswith(
        f"cleaned up after the spacetp gateway with --tun scps9 (pid {p.pid}, gone): "
    ), out
    assert "nft delete table ip spacetp_scps9" in lines[0]
    assert "sysctl net.ipv4.ip_forward=0" in lines[0] and "tcp_early_demux=1" in lines[0]
    assert leftovers(net.gw) == CLEAN, leftovers(net.gw)
    assert not state_of(net.gw).exists()


def test_cleanup_on_demand_and_a_running_gateway_is_named_by_pid(net):
    p = gateway(net.gw)
    wait_running(net.gw, p)
    # A second gateway on the same TUN, or on another TUN of this namespace: refused,
    # naming the first one's PID; and so is --cleanup.
    for tun, expected in (
        ("scps9", f"a spacetp gateway (pid {p.pid}) runs with --tun scps9"),
        ("scps8", f"routing table 5788 is in use: the spacetp gateway with --tun scps9 "
                  f"(pid {p.pid}) runs"),
    ):  # fmt: skip
        second = gateway(net.gw, "--duration", "1", tun=tun)
        _, err = second.communicate(timeout=30)
        assert second.returncode == 2 and expected in err, err
    r = sh(net.gw, *GATEWAY, "--cleanup", "--tun", "scps9")
    assert r.returncode == 2 and f"(pid {p.pid})" in r.stderr, r.stderr
    assert leftovers(net.gw)["nft"], "a refused start or cleanup touched the running gateway"
    kill9(p)
    r = sh(net.gw, *GATEWAY, "--cleanup", "--tun", "scps9")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 1, r.stdout
    assert "nft delete table ip spacetp_scps9" in r.stdout, r.stdout
    assert "sysctl net.ipv4.ip_forward=0" in r.stdout, r.stdout
    assert leftovers(net.gw) == CLEAN, leftovers(net.gw)
    r = sh(net.gw, *GATEWAY, "--cleanup", "--tun", "scps9")
    assert r.returncode == 0 and "nothing to clean" in r.stdout, r.stdout


def test_a_table_used_by_another_program_is_not_blamed_on_a_gateway(net):
    sh(net.gw, "ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", "5789")
    p = gateway(net.gw, "--duration", "1")
    _, err = p.communicate(timeout=30)
    assert p.returncode == 2, err
    assert "routing table 5789 is in use: no spacetp gateway state was found" in err, err
    assert "another program uses table 5789" in err, err
    sh(net.gw, "ip", "route", "del", "local", "0.0.0.0/0", "dev", "lo", "table", "5789")
    # Refused before changing anything.
    assert leftovers(net.gw) == CLEAN and not state_of(net.gw).exists()


def test_a_state_file_of_a_deleted_namespace_is_not_undone_here(net):
    # Namespace inodes are reused: a file left by a gateway killed in a namespace that was
    # then deleted names this one's inode, but not its cookie. Its sysctls are not ours.
    from spacetp.live.gateway_net import STATE_DIR

    STATE_DIR.mkdir(parents=True, exist_ok=True)
    f = state_of(net.gw)
    sh(net.gw, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    f.write_text(json.dumps({
        "pid": 4194999, "tun": "scps9", "netns": 0, "netns_cookie": 2**64 - 1,
        "sysctl": {"net.ipv4.ip_forward": "0"}, "undo": [],
    }))  # fmt: skip
    r = sh(net.gw, *GATEWAY, "--cleanup", "--tun", "scps9")
    assert r.returncode == 0 and "a network namespace that no longer exists" in r.stdout, r
    assert sysctl(net.gw, "net.ipv4.ip_forward") == "1" and not f.exists()


def test_sigterm_and_a_background_sigint_stop_cleanly(net, tmp_path):
    assert bash_ignores_sigint_in_background(), "the premise of the SIGINT case"
    for sig in (signal.SIGTERM, signal.SIGINT):
        # As a shell script runs it: `spacetp gateway ... &`, so SIGINT ignored on entry.
        log = tmp_path / f"gateway-{sig.name}.log"
        cmd = [*GATEWAY, "--tun", "scps9", "--intercept", "lan0", "--space-if", "space0",
               "--forward-original"]  # fmt: skip
        shell, pid = shell_background(["ip", "netns", "exec", net.gw, *cmd], log)
        wait_running(net.gw, log=log)
        os.kill(pid, sig)
        out, _ = shell.communicate(timeout=60)
        assert out.strip() == "rc=0", (sig, log.read_text())
        assert '"stopped": "signal"' in log.read_text(), log.read_text()
        assert leftovers(net.gw) == CLEAN, (sig, leftovers(net.gw))


def test_stopped_testbed_gateways_leave_working_routers(tmp_path):
    # The testbed's gateway hosts are routers by their own configuration: gateways that stop
    # restore what they found, ip_forward=1, and kernel TCP crosses unaccelerated.
    from spacetp.live.gateway_testbed import SRV_ADDR as SRV
    from spacetp.live.gateway_testbed import Testbed

    link = '[[links]]\nbetween = ["a", "b"]\nrate = "50 Mb/s"\ndelay = "10 ms"\n'
    probe = str(Path(__file__).with_name("gateway_probe.py"))
    with Testbed(link, tag=f"{os.getpid()}h", workdir=tmp_path, transparent=True, drain=None) as tb:
        for p in tb.procs[1:3]:  # the gateways (the emulator is procs[0])
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=20) == 0
        for role in ("gwa", "gwb"):
            assert sysctl(tb.ns(role), "net.ipv4.ip_forward") == "1", role
            assert "spacetp_" not in sh(tb.ns(role), "nft", "list", "tables").stdout, role
        sink = tb.exec("srv", [sys.executable, probe, "sink", SRV, "5000", "1"],
                       stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert json.loads(sink.stdout.readline())["ready"]
        send = tb.exec("cli", [sys.executable, probe, "send", SRV, "5000", "100000", "1", "1"],
                       stdout=subprocess.PIPE, text=True)  # fmt: skip
        sent = json.loads(send.communicate(timeout=30)[0])["flows"]
        got = json.loads(sink.communicate(timeout=30)[0])["flows"]
        assert [f["sha256"] for f in sent] == [f["sha256"] for f in got]
