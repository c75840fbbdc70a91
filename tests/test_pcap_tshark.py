"""The pcap of the space link opens in tshark with no malformed packet and good checksums."""

import shutil
import subprocess

import pytest

import spacetp
from conftest import EXAMPLES

TSHARK = shutil.which("tshark")


def _fields(path, *fields, filt="tcp"):
    cmd = [TSHARK, "-r", str(path), "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    cmd += ["-Y", filt, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (.ci/run installs it)")
def test_space_link_pcap_decodes_cleanly(tmp_path):
    pcap = tmp_path / "space.pcap"
    sc = spacetp.load(EXAMPLES / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].errors", {"per": 0.01})
    spacetp.set_value(sc, "flows[0].bytes", "500 kB")
    # Queues large enough that every original reaches the capture point.
    spacetp.set_value(sc, "links[0].queue", {"packets": 10000})
    spacetp.set_value(sc, "links[1].queue", {"packets": 10000})
    res = spacetp.run(sc, pcap={"router-server": str(pcap)})
    sent = res.links[2]["tx_packets"] + res.links[3]["tx_packets"]
    rows = _fields(pcap, "frame.number", "tcp.checksum.status", "ip.checksum.status")
    assert len(rows) == sent
    # tshark checksum status: 0 bad, 1 good, 2 unverified
    assert all(r[1] == "1" for r in rows), "every TCP checksum verified good"
    assert all(r[2] == "1" for r in rows), "every IP checksum verified good"
    assert _fields(pcap, "frame.number", filt="_ws.malformed or _ws.expert.severity >= error") == []
    syn = _fields(pcap, "tcp.options.mss_val", "tcp.options.wscale.shift", filt="tcp.flags.syn==1")
    assert syn[0] == ["472", "3"]
    # Data segments whose sequence number was already on the wire = our retransmissions.
    seen, again = set(), 0
    for seq, length in _fields(pcap, "tcp.seq_raw", "tcp.len", filt="tcp.srcport==49152"):
        if int(length) > 0:
            again += seq in seen
            seen.add(seq)
    assert again == res.flows[0]["retransmitted_segments"] > 0
