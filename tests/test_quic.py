"""QUIC flows (quinn-proto in the simulator) from Python and the command line: a GEO transfer
with its handshake on the clock, Wireshark reading the packets as QUIC version 1 with our
TLS ClientHello inside, and bad settings refused with the field named."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import spacetp
from conftest import spacetp_cli

GEO = """
seed = 1
[[nodes]]
name = "ground"
[[nodes]]
name = "craft"
[[links]]
between = ["ground", "craft"]
rate = "10 Mb/s"
rate_back = "1 Mb/s"
delay = "300 ms"
queue = { bdp = 1.0 }
[[flows]]
from = "ground"
to = "craft"
protocol = "quic"
bytes = "2 MB"
"""


def test_a_quic_transfer_runs_from_python_with_quics_own_counters():
    f = spacetp.run(spacetp.loads(GEO)).flows[0]
    assert f["complete"] and f["bytes_delivered"] == 2_000_000
    q = f["quic"]
    # One round trip (600 ms) to the client's handshake completion (RFC 9001).
    assert 0.6 <= q["handshake_s"] < 0.7
    assert q["mtu"] == 1472 and q["failure"] is None


@pytest.mark.parametrize("cc", ["newreno", "cubic", "bbr"])
def test_each_of_quinns_controllers_completes(cc):
    sc = spacetp.loads(GEO)
    spacetp.set_value(sc, "flows[0].protocol", f"quic-{cc}")
    f = spacetp.run(sc).flows[0]
    assert f["complete"], f["state"]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_the_pcap_as_quic_v1_with_our_client_hello(tmp_path):
    sc_path = tmp_path / "geo.toml"
    sc_path.write_text(GEO)
    pcap = tmp_path / "geo.pcap"
    r = spacetp_cli("run", str(sc_path), "--pcap", f"0={pcap}", "-q")
    assert r.returncode == 0, r.stderr
    # Initial packets are protected with keys derived from the connection ID (RFC 9001
    # 5.2), which tshark derives too: it finds the TLS ClientHello and its server name.
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "tls.handshake.type == 1", "-T", "fields",
         "-e", "quic.version", "-e", "tls.handshake.extensions_server_name"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert out[:2] == ["0x00000001", "spacetp"], out


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_with_the_key_log_tshark_decrypts_the_stream_to_its_last_byte(tmp_path):
    sc_path = tmp_path / "geo.toml"
    sc_path.write_text(GEO)
    pcap, keys = tmp_path / "geo.pcap", tmp_path / "keys.txt"
    r = spacetp_cli("run", str(sc_path), "--pcap", f"0={pcap}", "--keylog", str(keys), "-q")
    assert r.returncode == 0, r.stderr
    assert "CLIENT_TRAFFIC_SECRET_0" in keys.read_text()
    # Decrypted with our secrets, the 1-RTT packets carry STREAM frames of the client's
    # first unidirectional stream (id 2, RFC 9000 2.1), and the FIN ends it at 2 MB.
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-o", f"tls.keylog_file:{keys}", "-Y", "quic.stream.fin == 1",
         "-T", "fields", "-e", "quic.stream.stream_id", "-e", "quic.stream.offset",
         "-e", "quic.stream.length"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    sid, offset, length = out[:3]
    assert sid == "2" and int(offset) + int(length) == 2_000_000, out


def test_qlog_records_each_end_on_simulated_time(tmp_path):
    import json

    res = spacetp.run(spacetp.loads(GEO), qlog=tmp_path / "qlog")
    f = res.flows[0]
    events = {}
    for side in ("client", "server"):
        text = (tmp_path / "qlog" / f"flow0-{side}.sqlog").read_text()
        records = [json.loads(r) for r in text.split("\x1e") if r.strip()]
        assert records[0]["qlog_format"] == "JSON-SEQ"
        events[side] = records[1:]
    first = events["client"][0]
    assert first["name"] == "transport:packet_sent" and first["time"] == 0.0
    assert first["data"]["header"]["packet_type"] == "initial"
    # Times are simulated milliseconds: the last event is near the run's last byte.
    last_ms = max(e["time"] for e in events["server"])
    assert abs(last_ms / 1000 - f["last_byte_s"]) < 1.0, (last_ms, f["last_byte_s"])
    sent = sum(e["name"] == "transport:packet_sent" for e in events["client"])
    assert sent >= f["segments_sent"]  # coalesced packets share a datagram


def test_a_quic_flow_on_a_512_byte_mtu_is_refused_with_the_field_named(tmp_path):
    sc_path = tmp_path / "geo.toml"
    sc_path.write_text(GEO)
    r = spacetp_cli("run", str(sc_path), "--set", "flows[0].mtu=512", "-q")
    assert r.returncode == 2
    assert "flows[0].quic.initial_mtu" in r.stderr and "484" in r.stderr, r.stderr


def test_protocols_lists_the_quic_profiles():
    p = spacetp.protocols()
    for name in ("quic", "quic-cubic", "quic-newreno", "quic-bbr"):
        assert p[name]["family"] == "quic"
    assert p["quic-bbr"]["settings"]["congestion_control"] == "bbr"


def test_sizes_only_and_real_crypto_give_the_same_run_from_python():
    # quic.crypto unset is "sizes" (no pcap, no key log): the same packets, nothing
    # encrypted; "real" encrypts them. Every flow and link field is the same.
    runs = {}
    for mode in ("real", "sizes", None):
        sc = spacetp.loads(GEO.replace("2 MB", "500 kB"))
        spacetp.set_value(sc, "links[0].errors", {"per": 0.01})
        if mode:
            spacetp.set_value(sc, "flows[0].quic", {"crypto": mode})
        r = spacetp.run(sc)
        runs[mode] = (r.flows, r.links)
    assert runs["real"][0][0]["quic"]["packets_lost"] > 0
    assert runs["real"] == runs["sizes"] == runs[None]


def test_sizes_only_crypto_with_a_pcap_or_key_log_is_refused_with_the_field_named(tmp_path):
    sc_path = tmp_path / "geo.toml"
    sc_path.write_text(GEO)
    sizes = ("--set", 'flows[0].quic.crypto="sizes"', "-q")
    for extra, why in ((("--pcap", f"0={tmp_path / 'a.pcap'}"), "pcap"),
                       (("--keylog", str(tmp_path / "keys.txt")), "key log")):  # fmt: skip
        r = spacetp_cli("run", str(sc_path), *extra, *sizes)
        assert r.returncode == 2, r.stderr
        assert "flows[0].quic.crypto" in r.stderr and why in r.stderr, r.stderr
    r = spacetp_cli("run", str(sc_path), "--set", 'flows[0].quic.crypto="fast"', "-q")
    assert r.returncode == 2 and "flows[0].quic.crypto" in r.stderr, r.stderr


# A long, lossy link: the handshake's packets decide RTT samples that the whole run keeps.
LONG_LOSSY = """
seed = 3
stop = "60 s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "1 Mb/s"
delay = "10 s"
errors = { per = 1e-3 }
[[flows]]
from = "a"
to = "b"
protocol = "quic"
bytes = "50 MB"
"""


def test_a_quic_run_is_the_same_in_every_process(tmp_path):
    # Each process makes its own certificate and key; with an ECDSA key the handshake's sizes
    # changed with the signatures' random nonces, and with them this run's RTT (3 different
    # summaries out of 6 processes).
    path = tmp_path / "long-lossy.toml"
    path.write_text(LONG_LOSSY)
    code = f"import spacetp; print(spacetp.run({str(path)!r}).to_json())"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(4)
    }
    assert len(outs) == 1, "the summaries differ between processes"
