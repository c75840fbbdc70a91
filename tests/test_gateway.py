"""`spacetp gateway`: kernel TCP from a client namespace, through gateway A, across the emulated
space link as SCPS-TP, through gateway B to a server namespace, with hash checks.

Each test builds a `spacetp.live.gateway_testbed.Testbed` (four namespaces, two veth pairs, the
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


def _capture(tb, role: str, dev: str, path: Path) -> subprocess.Popen:
    """tshark capturing headers on `dev` of namespace `role` into `path`, once it runs."""
    p = tb.exec(
        role,
        ["tshark", "-i", dev, "-s", "128", "-w", str(path), "-q"],
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in p.stderr:
        if "Capturing on" in line:
            return p
    raise AssertionError(f"tshark did not start capturing on {dev}")


def transfer(
    link: str,
    gateway: dict,
    nbytes: int,
    flows: int,
    tmp: Path,
    seed: int = 1,
    transparent: bool = False,
    capture: Path | None = None,
    run_as: str | None = None,
):
    """Send `flows` parallel transfers of `nbytes` through the gateways; check every hash.
    Returns (elapsed seconds of the slowest flow, the reports). `transparent`: the routed
    testbed, the client connecting to the server's own address; `capture`: a pcap of gateway
    A's side of the space link (tshark on `space0`, routed testbed only)."""
    from spacetp.live.gateway_testbed import SRV_ADDR, Testbed

    tag = f"{os.getpid()}{int(time.monotonic() * 1000) % 10000}"
    with Testbed(link, gateway=gateway, tag=tag, workdir=tmp, transparent=transparent,
                 run_as=run_as) as tb:  # fmt: skip
        names = [tb.ns(r) for r in ("cli", "gwa", "gwb", "srv")]
        assert set(names) <= set(_namespaces())
        tshark = _capture(tb, "gwa", "space0", capture) if capture else None
        host, port = tb.target
        sink = tb.exec(
            "srv",
            [sys.executable, PROBE, "sink", SRV_ADDR, "5000", str(flows)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(sink.stdout.readline())["ready"]
        send = tb.exec(
            "cli",
            [sys.executable, PROBE, "send", host, str(port), str(nbytes), str(seed), str(flows)],
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
        if tshark is not None:
            tshark.send_signal(signal.SIGINT)
            tshark.wait(timeout=10)
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
    # The relay drives the simulator's Connection: the goodput is the simulator's prediction
    # (within 20%: benches/gateway_vs_simulator.py measures it; wall-clock goodput moves with
    # the machine's load). Here only a sanity bound a loaded machine cannot miss: a tenth.
    from spacetp.live.gateway import predict

    sim = predict(FAST, proto, 5_000_000)
    good = 5e6 * 8 / elapsed
    pred = sim["goodput_bps"] / 1e6
    print(f"5 MB, no loss: {elapsed:.2f} s, {good / 1e6:.2f} Mb/s (simulator {pred:.2f})")
    assert good > sim["goodput_bps"] / 10, (good, sim["goodput_bps"])


def test_5mb_under_ber(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "5 ms"\nerrors = { ber = 1e-5 }')
    proto = {"protocol": "scps-nucc", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 5_000_000, 1, tmp_path)
    assert reps["emulator"]["directions"][0]["error_drops"] > 100
    assert reps["gateway_a"]["retransmitted_segments"] > 100
    print(f"5 MB, BER 1e-5: {elapsed:.2f} s, {5e6 * 8 / elapsed / 1e6:.2f} Mb/s")


def _tshark_fields(pcap: Path, filt: str, *fields: str) -> list[list[str]]:
    r = subprocess.run(
        ["tshark", "-r", str(pcap), "-o", "tcp.check_checksum:TRUE", "-Y", filt, "-T", "fields"]
        + [x for f in fields for x in ("-e", f)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [ln.split("\t") for ln in r.stdout.splitlines()]


@pytest.mark.skipif(shutil.which("nft") is None, reason="transparent mode needs nft (nftables)")
@pytest.mark.skipif(shutil.which("tshark") is None, reason="the capture check needs tshark")
def test_transparent_5mb_under_ber_as_real_ip_packets(tmp_path):
    """The routed testbed: the client connects to the server's own address, gateway A
    intercepts it (nftables tproxy), and the SCPS-TP segments cross the kernels of both
    gateways as IPv4 protocol-6 packets between the client's and the server's addresses.
    Wireshark's dissector reads them from a capture of the space interface: SCPS
    capabilities in both SYNs, SNACKs under loss, every checksum good."""
    from spacetp.live.gateway_testbed import CLI_ADDR, SRV_ADDR

    link = FAST.replace('delay = "10 ms"', 'delay = "5 ms"\nerrors = { ber = 1e-5 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    pcap = tmp_path / "space0.pcap"
    elapsed, reps = transfer(
        link, proto, 5_000_000, 1, tmp_path, transparent=True, capture=pcap, seed=3
    )
    a, b = reps["gateway_a"], reps["gateway_b"]
    assert a["accepted"] == 1 and b["admitted"] == 1 and a["closed"] == b["closed"] == 1
    assert b["bytes_down"] == 5_000_000
    assert reps["emulator"]["directions"][0]["error_drops"] > 100
    syns = _tshark_fields(
        pcap, "tcp.flags.syn == 1", "ip.src", "tcp.srcport", "ip.dst", "tcp.dstport",
        "tcp.flags.ack", "tcp.options.scpsflags.snack1", "ip.proto",
    )  # fmt: skip
    assert len(syns) >= 2, syns
    syn = next(x for x in syns if x[4] in ("0", "False"))
    synack = next(x for x in syns if x[4] in ("1", "True"))
    assert syn[0] == CLI_ADDR and syn[2] == SRV_ADDR and syn[3] == "5000", syn
    assert synack[0] == SRV_ADDR and synack[2] == CLI_ADDR, synack
    assert syn[5] in ("1", "True") and synack[5] in ("1", "True") and syn[6] == "6"
    snacks = _tshark_fields(pcap, "tcp.options.snack", "ip.src")
    assert len(snacks) > 10 and {x[0] for x in snacks} == {SRV_ADDR}
    bad = _tshark_fields(pcap, "tcp.checksum.status == 0 || ip.checksum.status == 0", "frame")
    assert bad == []
    print(f"transparent, 5 MB, BER 1e-5: {elapsed:.2f} s, {len(snacks)} SNACKs captured")


@pytest.mark.skipif(shutil.which("nft") is None, reason="transparent mode needs nft (nftables)")
def test_transparent_relay_with_two_capabilities_and_no_root(tmp_path):
    """The systemd unit's set-up: both gateways run as user nobody with only CAP_NET_ADMIN
    and CAP_NET_RAW (setpriv, ambient capabilities). Each sets up its TUN, routing rules,
    nftables interception and sysctls, relays intercepted transfers exactly, and takes all
    of it down again (teardown finds nothing left)."""
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    _, reps = transfer(FAST, proto, 1_000_000, 2, tmp_path, transparent=True, run_as="nobody")
    for r in (reps["gateway_a"], reps["gateway_b"]):
        assert r["closed"] == 2 and r["integrity_resets"] == 0, r


def test_transparent_compressed_headers_through_the_kernels(tmp_path):
    """Header compression on real packets: with COMP offered by both gateways, everything
    after the SYNs crosses the kernels of gwa and gwb as IP protocol 105 (routed into the
    gateways' TUN devices like TCP), under loss, and the bytes arrive exactly."""
    link = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s", "compression": True}}}
    elapsed, reps = transfer(link, proto, 2_000_000, 2, tmp_path, transparent=True)
    a, b = reps["gateway_a"], reps["gateway_b"]
    # Data one way (thousands of packets), ACKs every 100 ms the other (dozens).
    assert a["compressed_out"] > 1000 and b["compressed_in"] > 1000, (a, b)
    assert b["compressed_out"] > 20 and a["compressed_in"] > 20, (a, b)
    for r in (a, b):
        assert r["compressed_bad"] == 0 and r["closed"] == 2, r
    print(f"transparent, compressed, 2 x 2 MB, PER 1%: {elapsed:.2f} s")


def test_20_parallel_transfers_under_per(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "2 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 256_000, 20, tmp_path)
    assert reps["gateway_a"]["accepted"] == 20 and reps["gateway_b"]["admitted"] == 20
    assert reps["gateway_a"]["closed"] == 20
    print(f"20 x 256 kB, PER 1%: {elapsed:.2f} s")


def test_30s_outage(tmp_path):
    """The link goes down for 30 s in the middle of the transfer. The emulator tells both
    gateways when the outage starts and ends (as a ground station tells SCPS-TP), so their
    connections enter persist mode instead of timing out, with the profile's own
    max_retries (12), and resume as soon as the link is back."""
    link = FAST + 'outages = [["1.5 s", "31.5 s"]]\n'
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 5_000_000, 1, tmp_path)
    assert reps["emulator"]["directions"][0]["outage_drops"] > 0
    assert reps["emulator"]["link_notices"] == 4
    assert elapsed > 30
    for g in ("gateway_a", "gateway_b"):
        assert reps[g]["link_down_notices"] == 1 and reps[g]["link_up_notices"] == 1
        assert reps[g]["closed"] == 1 and reps[g]["reset"] == 0
    print(f"5 MB across a 30 s outage: {elapsed:.2f} s")


def test_30s_outage_without_link_state_aborts(tmp_path):
    """The same outage with no link-state notices and the profile's max_retries: the
    connection gives up during the outage and the client sees a reset (so the notices of the
    test above are what carries the transfer across)."""
    from spacetp.live.gateway_testbed import SRV_ADDR, Testbed

    link = FAST + 'outages = [["1.0 s", "31.0 s"]]\n'
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    with Testbed(
        link, gateway=proto, tag=f"{os.getpid()}o", workdir=tmp_path, link_state=False
    ) as tb:
        sink = tb.exec("srv", [sys.executable, PROBE, "sink", SRV_ADDR, "5000", "1"],
                       stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert json.loads(sink.stdout.readline())["ready"]
        host, port = tb.target
        send = tb.exec("cli", [sys.executable, PROBE, "send", host, str(port), "5000000", "1", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        out, err = send.communicate(timeout=120)
        reps = tb.reports()
    # The probe's sending thread dies on the reset; the probe reports no finished flow.
    assert json.loads(out)["flows"] == [], out
    assert "ConnectionResetError" in err or "BrokenPipeError" in err, err
    assert reps["gateway_a"]["reset"] == 1 and reps["gateway_a"]["link_down_notices"] == 0


def test_100_concurrent_connections(tmp_path):
    link = FAST.replace('delay = "10 ms"', 'delay = "10 ms"\nerrors = { per = 0.01 }')
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    elapsed, reps = transfer(link, proto, 50_000, 100, tmp_path, seed=100)
    a, b = reps["gateway_a"], reps["gateway_b"]
    assert a["accepted"] == b["admitted"] == 100
    assert a["closed"] == b["closed"] == 100, (a["open_at_stop"], b["open_at_stop"])
    assert a["max_flows"] >= 50
    print(f"100 x 50 kB, PER 1%: {elapsed:.2f} s, at most {a['max_flows']} flows at once")


def test_refused_destination_resets_the_client(tmp_path):
    """Nothing listens behind gateway B: the client's connection is reset."""
    from spacetp.live.gateway_testbed import GWA_ADDR, Testbed

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
            ls = ["--link-state-udp", "127.0.0.1:4999", "--metrics", "127.0.0.1:4990"]
            ls = ls if side == "a" else []
            run(*exe, "--local", local, "--peer", peer, rule, "--udp", udp, "--stats", str(st),
                *ls, stdout=subprocess.DEVNULL)  # fmt: skip
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
        # Link-state notices by hand, as a modem manager would send them.
        notify = "import socket\nfor m in (b'link down', b'link up', b'noise'):\n" + (
            "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(m, ('127.0.0.1', 4999))"
        )
        assert run(sys.executable, "-c", notify).wait(timeout=10) == 0
        # Gateway A has taken both (its /status, read inside the namespace).
        url = "http://127.0.0.1:4990/status"
        status = f"import urllib.request as u\nprint(u.urlopen('{url}').read().decode())"
        deadline = time.monotonic() + 30
        while True:
            r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", status],
                               capture_output=True, text=True)  # fmt: skip
            seen = json.loads(r.stdout) if r.returncode == 0 else {}
            if seen.get("link_up_notices", 0) >= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for p in procs[:2]:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=10)
        a, b = (json.loads(s.read_text()) for s in stats)
        assert a["stopped"] == b["stopped"] == "signal"
        assert a["bytes_up"] == b["bytes_down"] == 1_000_000
        assert a["link_down_notices"] == a["link_up_notices"] == 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        delete_namespace(ns)
    assert ns not in _namespaces()


def test_geo_gateways_beat_kernel_tcp_and_match_the_simulator(tmp_path):
    """The issue's GEO-like link (1.5 Mb/s forward, 15 kb/s return, 275 ms one way, BER 1e-5
    both ways), 1 MB: the gateway pair with the `scps-tp` profile against kernel TCP end to end
    (reno and cubic, cut at 60 s: their goodput is what arrived by then), all at once, each
    with its own emulator. The gateways must beat both. How close they land to the simulator's
    prediction for the same link and profile (within 20%; once +38% on a loaded machine) is
    the figure of benches/gateway_geo.py: here only a sanity bound load cannot miss."""
    from spacetp.live.compare import GEO, compare

    out = compare(GEO, 1_000_000, 60.0, tmp_path)
    gw = out["gateway scps-tp"]
    for name, v in out.items():
        print(f"GEO, 1 MB: {name}: {v['goodput_bps'] / 1e3:.1f} kb/s in {v['seconds']:.1f} s")
    print(f"simulator: {gw['simulator_goodput_bps'] / 1e3:.1f} kb/s")
    assert gw["finished"], gw
    for cc in ("reno", "cubic"):
        assert gw["goodput_bps"] > out[f"kernel {cc}"]["goodput_bps"], out
    assert gw["goodput_bps"] > gw["simulator_goodput_bps"] / 10, gw
