"""What `spacetp gateway --tun` does to the host, and that every way of stopping it leaves the
host as it was: a clean stop restores it; after SIGKILL the next start (or `--cleanup`) finds
the state file, undoes what it records (sysctls back to the values from before the first
gateway) and starts; `--after-crash closed` leaves TCP rejected rather than passing the dead
gateway; a second gateway on the same TUN is refused with the first one's PID; and a
background job started by a shell (SIGINT ignored) still stops on SIGINT.

Each test builds its own network namespace (`stgh-<pid>-<n>`) with two veth interfaces
standing for the LAN and the space link, and deletes it. Needs root, TUN and nftables."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


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


def sh(ns: str, *cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)


def sysctl(ns: str, key: str) -> str:
    return sh(ns, "sysctl", "-n", key).stdout.strip()


@pytest.fixture
def ns():
    name = f"stgh-{os.getpid()}-{next(_n)}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        # Stand-ins for the LAN and the space link (veth: this kernel has no dummy devices).
        for dev in ("lan0", "space0"):
            sh(name, "ip", "link", "add", dev, "type", "veth", "peer", "name", f"{dev}p")
            sh(name, "ip", "link", "set", dev, "up")
        sh(name, "sysctl", "-qw", "net.ipv4.ip_forward=0")
        sh(name, "sysctl", "-qw", "net.ipv4.tcp_early_demux=1")
        yield name
    finally:
        sh(name, sys.executable, "-m", "spacetp.cli", "gateway", "--cleanup", "--tun", "scps9")
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def gateway(ns: str, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "spacetp.cli", "gateway", "--tun", "scps9", "--intercept",
           "lan0", "--space-if", "space0", "--forward-original", *extra]  # fmt: skip
    return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip


def wait_running(ns: str, p: subprocess.Popen) -> None:
    for _ in range(200):
        if "spacetp_scps9" in sh(ns, "nft", "list", "tables").stdout:
            time.sleep(0.2)  # the table is the last change: the state file is complete
            return
        if p.poll() is not None:
            raise AssertionError(f"the gateway exited: {p.communicate()}")
        time.sleep(0.05)
    raise AssertionError("the gateway did not set up its interception")


def leftovers(ns: str) -> dict:
    return {
        "nft": "spacetp_scps9" in sh(ns, "nft", "list", "tables").stdout,
        "rules": sh(ns, "ip", "rule").stdout.count("lookup 578"),
        "table_5789": bool(sh(ns, "ip", "route", "show", "table", "5789").stdout.strip()),
        "ip_forward": sysctl(ns, "net.ipv4.ip_forward"),
        "early_demux": sysctl(ns, "net.ipv4.tcp_early_demux"),
    }


CLEAN = {"nft": False, "rules": 0, "table_5789": False, "ip_forward": "0", "early_demux": "1"}


@pytest.mark.parametrize("after_crash", ["open", "closed"])
def test_after_sigkill_a_restart_cleans_up_and_restores_the_sysctls(ns, after_crash):
    p = gateway(ns, "--after-crash", after_crash)
    wait_running(ns, p)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    left = leftovers(ns)
    assert left == {"nft": True, "rules": 3, "table_5789": True, "ip_forward": "1",
                    "early_demux": "0"}, left  # fmt: skip
    # Fail-closed keeps a rule resetting forwarded LAN TCP while the table is left.
    fail_closed = "fail_closed" in sh(ns, "nft", "list", "table", "ip", "spacetp_scps9").stdout
    assert fail_closed == (after_crash == "closed")
    # The next start cleans up and runs; its clean stop restores the host as it first was.
    p = gateway(ns, "--duration", "1")
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert "cleaned up after a crashed gateway" in out, out
    assert leftovers(ns) == CLEAN, leftovers(ns)


def test_cleanup_on_demand_and_a_running_gateway_is_named(ns):
    p = gateway(ns)
    wait_running(ns, p)
    # A second gateway on the same TUN: refused, naming the first one's PID.
    second = gateway(ns, "--duration", "1")
    _, err = second.communicate(timeout=30)
    assert second.returncode == 2 and "(pid " in err and "runs with --tun scps9" in err, err
    r = sh(ns, sys.executable, "-m", "spacetp.cli", "gateway", "--cleanup", "--tun", "scps9")
    assert r.returncode == 2 and "(pid " in r.stderr, r.stderr
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    r = sh(ns, sys.executable, "-m", "spacetp.cli", "gateway", "--cleanup", "--tun", "scps9")
    assert r.returncode == 0, r.stderr
    assert "nft delete table ip spacetp_scps9" in r.stdout, r.stdout
    assert "sysctl net.ipv4.ip_forward=0" in r.stdout, r.stdout
    assert leftovers(ns) == CLEAN, leftovers(ns)
    r = sh(ns, sys.executable, "-m", "spacetp.cli", "gateway", "--cleanup", "--tun", "scps9")
    assert r.returncode == 0 and "nothing to clean" in r.stdout, r.stdout


def test_sigterm_and_a_background_sigint_stop_cleanly(ns):
    for sig in (signal.SIGTERM, signal.SIGINT):
        # As a shell script runs it in the background: SIGINT ignored on entry.
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-c",
             "import signal, sys, runpy; signal.signal(signal.SIGINT, signal.SIG_IGN); "
             "sys.argv = ['spacetp', 'gateway', '--tun', 'scps9', '--intercept', 'lan0', "
             "'--space-if', 'space0', '--forward-original']; "
             "runpy.run_module('spacetp.cli', run_name='__main__')"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        wait_running(ns, p)
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=20)
        assert p.returncode == 0, (sig, err)
        assert time.monotonic() - t0 < 10
        assert '"stopped": "signal"' in out, out
        assert leftovers(ns) == CLEAN, (sig, leftovers(ns))
