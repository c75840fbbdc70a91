"""LTP and the Bundle Protocol from the command line and Python, and their packets as
Wireshark reads them: the simulator's pcaps of an LTP flow and of a bp flow decode with
tshark's `ltp` and `bpv7` dissectors, every bundle's CRC good, nothing malformed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import spacetp

ROOT = Path(__file__).resolve().parent.parent
tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")

LTP_LINK = """
seed = 2
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "2 Mb/s"
delay = "300 ms"
errors = { drop = [30, 31, 95] }
[[flows]]
from = "a"
to = "b"
protocol = "ltp"
bytes = "300 kB"
ltp = { max_export_sessions = 8 }
"""


def _tshark(pcap: Path, filt: str, *fields: str) -> list[list[str]]:
    args = ["tshark", "-r", str(pcap), "-d", "udp.port==1113,ltp", "-Y", filt]
    if fields:
        args += ["-T", "fields"] + [x for f in fields for x in ("-e", f)]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    return [ln.split("\t") for ln in r.stdout.splitlines() if ln.strip()]


@tshark
def test_tshark_reads_an_ltp_flow_s_segments_reports_and_repairs(tmp_path):
    sc = tmp_path / "ltp.toml"
    sc.write_text(LTP_LINK)
    pcap = tmp_path / "ltp.pcap"
    res = spacetp.run(sc, pcap={"0": str(pcap)})
    f = res.flows[0]
    assert f["complete"] and f["ltp"]["blocks_delivered"] == f["ltp"]["sessions"]
    assert _tshark(pcap, "_ws.malformed") == []
    # The three dropped packets were data; each was named in a report and sent again.
    reports = _tshark(pcap, "ltp.type == 8")
    assert len(reports) == f["ltp"]["report_segments_sent"] > 0
    acks = _tshark(pcap, "ltp.type == 9")
    assert len(acks) == f["ltp"]["report_acks_sent"]
    sessions = {r[0] for r in _tshark(pcap, "ltp.type <= 3", "ltp.session.number")}
    assert len(sessions) == f["ltp"]["sessions"]
    assert f["retransmitted_segments"] >= 3


MARS = ROOT / "examples" / "mars-relay-dtn.toml"


@tshark
def test_tshark_reads_the_bundles_of_a_bp_flow_with_good_crcs(tmp_path):
    sc = spacetp.load(MARS)
    spacetp.set_value(sc, "flows[0].bytes", "3 MB")
    pcap = tmp_path / "relay.pcap"
    res = spacetp.run(sc, pcap={"orbiter-earth": str(pcap)})
    f = res.flows[0]
    assert f["complete"] and f["bp"]["bundles_delivered"] == 3
    assert _tshark(pcap, "_ws.malformed") == []
    rows = _tshark(
        pcap,
        "bpv7",
        "bpv7.primary.src_uri",
        "bpv7.primary.dst_uri",
        "bpv7.crc_status",
    )
    # Every bundle that crossed orbiter -> earth (fragments included), from the lander to Earth.
    assert len(rows) >= 3
    assert {(r[0], r[1]) for r in rows} == {("ipn:1.1", "ipn:3.1")}
    # The primary block's CRC-16 (the only one, as ION sends bundles) is good (1).
    assert all(r[2] == "1" for r in rows), rows


def test_bp_and_ltp_from_python_and_the_command_line(tmp_path):
    res = spacetp.run(MARS)
    f = res.flows[0]
    assert f["complete"] and f["bp"]["bundles"] == 50
    nodes = {n["node"]: n for n in res.summary["dtn"]["nodes"]}
    assert nodes["lander"]["storage_time_mean_s"] > 3600  # kept until the passes
    assert nodes["earth"]["bundles_delivered"] >= 50
    out = subprocess.run(
        [sys.executable, "-m", "spacetp.cli", "run", str(MARS)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "bundle agents" in out.stdout and "orbiter" in out.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(MARS.read_text().replace("a contact +3600 +4200 1 2 16000",
                                            "a contact +3600 +4200 1 7 16000"))  # fmt: skip
    r = subprocess.run(
        [sys.executable, "-m", "spacetp.cli", "run", str(bad)], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert "dtn.contact_plan" in r.stderr and "line" in r.stderr, r.stderr
    js = subprocess.run(
        [sys.executable, "-m", "spacetp.cli", "schema", "--ltp"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "max_export_sessions" in json.loads(js)["properties"]
