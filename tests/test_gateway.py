"""`spacetp gateway`: kernel TCP from a client namespace, through gateway A, across the emulated
space link as SCPS-TP, through gateway B to a server namespace, with hash checks.

Each test builds a `spacetp.live.gateway.Testbed` (four namespaces, two veth pairs, the
emulator between two datagram socket pairs, both gateways) and runs tests/gateway_probe.py at
both ends. The testbed removes every namespace and process on the way out, even when a test
fails. Needs root; skipped otherwise."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROBE = str(Path(__file__).with_name("gateway_probe.py"))


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the gateway testbed needs root (network namespaces, veth pairs)"
    if shutil.which("ip") is None or shutil.which("ss") is None:
        return "needs the `ip` and `ss` commands (iproute2)"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))

FAST = """
[[links]]
between = ["a", "b"]
rate = "50 Mb/s"
delay = "10 ms"
"""


def _namespaces() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()]


def transfer(link: str, gateway: dict, nbytes: int, flows: int, tmp: Path, seed: int = 1):
    """Send `flows` parallel transfers of `nbytes` through the gateways; check every hash.
    Returns (elapsed seconds of the slowest flow, the reports)."""
    from spacetp.live.gateway import GWA_ADDR, SRV_ADDR, Testbed

    tag = f"{os.getpid()}{int(time.monotonic() * 1000) % 10000}"
    with Testbed(link, gateway=gateway, tag=tag, workdir=tmp) as tb:
        names = [tb.ns(r) for r in ("cli", "gwa", "gwb", "srv")]
        assert set(names) <= set(_namespaces())
        sink = tb.exec(
            "srv",
            [sys.executable, PROBE, "sink", SRV_ADDR, "5000", str(flows)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(sink.stdout.readline())["ready"]
        send = tb.exec(
            "cli",
            [sys.executable, PROBE, "send", GWA_ADDR, "5000", str(nbytes), str(seed), str(flows)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            out, _ = send.communicate(timeout=120)
            got, _ = sink.communicate(timeout=30)
            sent = json.loads(out)["flows"]
            recv = json.loads(got)["flows"]
        except (subprocess.TimeoutExpired, ValueError, KeyError) as e:
            raise AssertionError(f"transfer failed ({e}); reports: {tb.reports()}") from None
        assert len(sent) == flows and len(recv) == flows
        assert sorted(f["sha256"] for f in sent) == sorted(f["sha256"] for f in recv)
        assert all(f["bytes"] == nbytes for f in recv)
        elapsed = max(f["t1"] for f in sent) - min(f["t0"] for f in sent)
        reps = tb.reports()
    # Teardown leaves nothing behind.
    assert not set(names) & set(_namespaces())
    assert not list(tmp.glob("gw-*"))
    return elapsed, reps


def test_5mb_exact_bytes(tmp_path):
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(FAST, proto, 5_000_000, 1, tmp_path)
    a, b = reps["gateway_a"], reps["gateway_b"]
    assert a["accepted"] == 1 and b["admitted"] == 1
    assert a["bytes_up"] == 5_000_000 and b["bytes_down"] == 5_000_000
    assert a["closed"] == 1 and b["closed"] == 1 and a["reset"] == b["reset"] == 0
    assert a["bad_checksum"] == b["bad_checksum"] == 0
    # The relay drives the simulator's Connection: the goodput is the simulator's prediction.
    from spacetp.live.gateway import predict

    sim = predict(FAST, proto, 5_000_000)
    good = 5e6 * 8 / elapsed
    pred = sim["goodput_bps"] / 1e6
    print(f"5 MB, no loss: {elapsed:.2f} s, {good / 1e6:.2f} Mb/s (simulator {pred:.2f})")
    assert abs(good / sim["goodput_bps"] - 1) < 0.2


def test_5mb_under_ber(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "5 ms"\nerrors = { ber = 1e-5 }')
    proto = {"protocol": "scps-nucc", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 5_000_000, 1, tmp_path)
    assert reps["emulator"]["directions"][0]["error_drops"] > 100
    assert reps["gateway_a"]["retransmitted_segments"] > 100
    print(f"5 MB, BER 1e-5: {elapsed:.2f} s, {5e6 * 8 / elapsed / 1e6:.2f} Mb/s")


def test_20_parallel_transfers_under_per(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "2 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 256_000, 20, tmp_path)
    assert reps["gateway_a"]["accepted"] == 20 and reps["gateway_b"]["admitted"] == 20
    assert reps["gateway_a"]["closed"] == 20
    print(f"20 x 256 kB, PER 1%: {elapsed:.2f} s")


def test_30s_outage(tmp_path):
    """The link goes down for 30 s in the middle of the transfer. The SCPS-TP side keeps
    retransmitting (max_retries raised from the profile's 12 so it outlasts the outage; the
    gateways get no link-state signal) and resumes when the link is back."""
    link = FAST + 'outages = [["1.5 s", "31.5 s"]]\n'
    proto = {"protocol": "scps-tp", "tcp": {"max_retries": 60, "scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 2_000_000, 1, tmp_path)
    assert reps["emulator"]["directions"][0]["outage_drops"] > 0
    assert elapsed > 30
    assert reps["gateway_a"]["closed"] == 1 and reps["gateway_a"]["reset"] == 0
    print(f"2 MB across a 30 s outage: {elapsed:.2f} s")


def test_100_concurrent_connections(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 50_000, 100, tmp_path, seed=100)
    a, b = reps["gateway_a"], reps["gateway_b"]
    assert a["accepted"] == b["admitted"] == 100
    assert a["closed"] == b["closed"] == 100
    assert a["max_flows"] >= 50
    print(f"100 x 50 kB, PER 1%: {elapsed:.2f} s, at most {a['max_flows']} flows at once")


def test_refused_destination_resets_the_client(tmp_path):
    """Nothing listens behind gateway B: the client's connection is reset."""
    from spacetp.live.gateway import GWA_ADDR, Testbed

    code = (
        "import socket,sys\n"
        f"c = socket.create_connection(('{GWA_ADDR}', 5000), timeout=10)\n"
        "try:\n    c.recv(1)\nexcept ConnectionResetError:\n    sys.exit(0)\nsys.exit(3)\n"
    )
    with Testbed(FAST, tag=f"{os.getpid()}r", workdir=tmp_path) as tb:
        p = tb.exec("cli", [sys.executable, "-c", code])
        assert p.wait(timeout=20) == 0
        reps = tb.reports()
    # B admitted the SCPS-TP connection, its kernel connect was refused: RST both ways.
    assert reps["gateway_b"]["admitted"] == 1 and reps["gateway_b"]["reset"] == 1
    assert reps["gateway_a"]["accepted"] == 1 and reps["gateway_a"]["reset"] == 1


def test_cli_over_udp_encapsulation(tmp_path):
    """Two `spacetp gateway --udp` processes in one namespace, on loopback: 1 MB relayed."""
    from spacetp.live.emulate import _ip, delete_namespace

    ns = f"stg-{os.getpid()}u-udp"
    exe = [sys.executable, "-m", "spacetp.cli", "gateway"]
    _ip("netns", "add", ns)
    procs = []
    try:
        _ip("-n", ns, "link", "set", "dev", "lo", "up")

        def run(*cmd, **kw):
            p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], **kw)
            procs.append(p)
            return p

        stats = [tmp_path / "a.json", tmp_path / "b.json"]
        for side, rule, udp, st in (
            ("a", "--listen=127.0.0.1:6000=6000", "127.0.0.1:4001,127.0.0.1:4002", stats[0]),
            ("b", "--forward=6000=127.0.0.1:6001", "127.0.0.1:4002,127.0.0.1:4001", stats[1]),
        ):
            local, peer = ("10.77.0.1", "10.77.0.2") if side == "a" else ("10.77.0.2", "10.77.0.1")
            run(*exe, "--local", local, "--peer", peer, rule, "--udp", udp, "--stats", str(st),
                stdout=subprocess.DEVNULL)  # fmt: skip
        sink = run(sys.executable, PROBE, "sink", "127.0.0.1", "6001", "1",
                   stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert json.loads(sink.stdout.readline())["ready"]
        for _ in range(100):
            r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", "sport = :6000"],
                               capture_output=True, text=True)  # fmt: skip
            if r.stdout.strip():
                break
            time.sleep(0.1)
        send = run(sys.executable, PROBE, "send", "127.0.0.1", "6000", "1000000", "5", "1",
                   stdout=subprocess.PIPE, text=True)  # fmt: skip
        out, _ = send.communicate(timeout=60)
        got, _ = sink.communicate(timeout=30)
        assert json.loads(out)["flows"][0]["sha256"] == json.loads(got)["flows"][0]["sha256"]
        for p in procs[:2]:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        a, b = (json.loads(s.read_text()) for s in stats)
        assert a["stopped"] == b["stopped"] == "signal"
        assert a["bytes_up"] == b["bytes_down"] == 1_000_000
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        delete_namespace(ns)
    assert ns not in _namespaces()
