"""`spacetp testbed`: client, gateway pair (SCPS-TP or QUIC) or plain routers, emulated link and
server in namespaces from one scenario file; transfers checked by SHA-256 and put beside the
simulator's prediction; everything torn down after. Needs root (namespaces, TUN, nftables);
the bad-input checks do not."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import spacetp_cli

LINK = """seed = 3
[[nodes]]
name = "ground"
[[nodes]]
name = "craft"
[[links]]
between = ["ground", "craft"]
rate = "10 Mb/s"
rate_back = "1 Mb/s"
delay = "20 ms"
errors = { per = 1e-3 }
[[flows]]
from = "ground"
to = "craft"
protocol = "newreno"
bytes = 400000
"""

root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")


def _namespaces() -> set[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {ln.split()[0] for ln in r.stdout.splitlines() if ln.startswith("stg-")}


@root
@pytest.mark.parametrize("gateway", ["none", "scps-tp", "quic-cubic"])
def test_transfers_cross_the_testbed_exactly_beside_the_prediction(tmp_path, gateway):
    f = tmp_path / "link.toml"
    f.write_text(LINK)
    out = tmp_path / "res.json"
    # Namespaces of other runs on this host (a run killed by a reboot) are not this one's.
    before = _namespaces()
    r = spacetp_cli("testbed", str(f), "--gateway", gateway, "--transfers", "2",
                    "--tcp" if gateway == "scps-tp" else "--cc",
                    '{"scps": {"rate": "10 Mb/s"}}' if gateway == "scps-tp" else "reno",
                    "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SHA-256 equal in 2 of 2" in r.stdout, r.stdout
    res = json.loads(out.read_text())
    assert res["all_equal"] and len(res["transfers"]) == 2
    assert all(t["bytes"] == 400_000 for t in res["transfers"])
    # The emulator ran in real time and said how late it was.
    assert res["emulator"]["realtime"] and res["emulator"]["p99_us"] > 0
    # The live time against the simulator's, same link, seed and protocol: within a factor
    # of 2 (the table shows the figure; benches hold the agreement).
    assert 0.5 < res["simulated_seconds"] / res["live_seconds"] < 2, res
    if gateway == "none":
        assert "gateways" not in res or not res["gateways"]
        assert "linux-reno" in r.stdout
    else:
        a = res["gateways"]["gateway_a"]
        assert a["accepted"] == 2 and a["bytes_up"] == 800_000, a
    assert _namespaces() == before, "the testbed left namespaces behind"


def test_bad_input_names_the_option(tmp_path):
    f = tmp_path / "link.toml"
    f.write_text(LINK)
    r = spacetp_cli("testbed", str(f), "--gateway", "none", "--tcp", '{"x": 1}')
    assert r.returncode == 2 and "--gateway none" in r.stderr, r.stderr
    r = spacetp_cli("testbed", str(f), "--transfers", "0")
    assert r.returncode == 2 and "--transfers 0" in r.stderr, r.stderr
    r = spacetp_cli("testbed", str(f), "--tcp", "{bad")
    assert r.returncode == 2 and "--tcp: not valid JSON" in r.stderr, r.stderr
    r = spacetp_cli("testbed", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "no such file" in r.stderr, r.stderr


def test_a_gateway_stopped_by_its_duration_says_it_reset_what_was_open(tmp_path):
    # `--duration` stops as a signal does: open connections are reset on both sides, and the
    # gateway says so (and how to let them finish instead), on loopback without root.
    import socket

    from conftest import free_ports, listening_ports, start_gateway

    srv = socket.create_server(("127.0.0.1", 0))
    p_a, p_b = free_ports(2)
    a = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", "127.0.0.1:0=5000",
         "--udp", f"127.0.0.1:{p_a},127.0.0.1:{p_b}", "--duration", "3"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1",
         "--forward", f"5000=127.0.0.1:{srv.getsockname()[1]}",
         "--udp", f"127.0.0.1:{p_b},127.0.0.1:{p_a}", "--duration", "60"]  # fmt: skip
    (gb, _), (ga, ioa) = start_gateway(*b), start_gateway(*a)
    try:
        p_listen = listening_ports(ioa.wait_for("ready: pid"))[0]
        c = socket.create_connection(("127.0.0.1", p_listen))
        c.sendall(b"open, then nothing")
        s, _ = srv.accept()
        _, err = ioa.finish(timeout=30)
        assert ga.returncode == 0, err
        assert "stopped by duration: 1 open connections reset on both sides" in err, err
        assert "--drain SECONDS" in err
        c.settimeout(10)
        with pytest.raises(ConnectionResetError):
            c.recv(1)
    finally:
        for g in (ga, gb):
            if g.poll() is None:
                g.kill()
        srv.close()
