"""CFDP flows (`protocol = "cfdp"`) from the CLI and from Python: the file-delivery time on a
lossy GEO link against the link's arithmetic, class 1's failure named with CFDP's condition
code, the settings' schema from the transport registry, bad settings naming the field, and
Wireshark's CFDP dissector reading the PDUs."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import spacetp
from conftest import EXAMPLES
from spacetp.scenario import load

CFDP_GEO = EXAMPLES / "cfdp-geo.toml"


def test_class_2_delivers_the_file_a_round_trip_after_its_pass(cli, tmp_path):
    out = tmp_path / "run.json"
    r = cli("run", CFDP_GEO, "--json", out)
    assert r.returncode == 0, r.stderr
    f = json.loads(out.read_text())["flows"][0]
    c = f["cfdp"]
    assert f["complete"] and f["bytes_delivered"] == 5_000_000 and c["file_intact"]
    assert c["receiver_condition"] == "NoError" and c["naks_sent"] > 0
    # 1458 B of file data per 1500-byte packet at 2 Mb/s, the repairs too, then the
    # repairs' round trip (0.54 s) at most twice.
    pdus = c["sender_pdus"]["file_data"]
    on_air = pdus * 1500 * 8 / 2e6
    assert on_air + 0.27 < f["completion_s"] < on_air + 2 * 0.54 + 0.2, (f["completion_s"], on_air)


def test_class_1_cannot_repair_and_the_failure_names_cfdps_condition():
    sc = load(CFDP_GEO)
    sc["flows"][0]["cfdp"]["class"] = 1
    f = spacetp.run(sc).summary["flows"][0]
    assert not f["complete"] and f["bytes_delivered"] == 0
    assert "CheckLimitReached" in f["failure"], f["failure"]


def test_the_settings_schema_comes_from_the_registry(cli):
    r = cli("schema", "--transport", "cfdp")
    assert r.returncode == 0, r.stderr
    props = json.loads(r.stdout)["properties"]
    assert {"class", "nak_mode", "positive_ack_timer", "nak_timer", "rate"} <= set(props)
    assert "cfdp" in spacetp.protocols()


def test_bad_cfdp_settings_name_the_field(cli):
    r = cli("run", CFDP_GEO, "--set", "flows[0].cfdp.class=3")
    assert r.returncode == 2 and "flows[0].cfdp.class" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = cli("run", CFDP_GEO, "--set", 'flows[0].read_rate="1 Mb/s"')
    assert r.returncode == 2 and "flows[0].read_rate" in r.stderr, r.stderr


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (.ci/run installs it)")
def test_wireshark_reads_every_pdu_as_cfdp_and_nothing_malformed(cli, tmp_path):
    pcap = tmp_path / "cfdp.pcap"
    r = cli("run", CFDP_GEO, "--pcap", f"ground-terminal={pcap}", "-q")
    assert r.returncode == 0, r.stderr

    def rows(filt: str, *fields: str) -> list[str]:
        args = ["tshark", "-r", str(pcap), "-d", "udp.port==4556,cfdp", "-Y", filt]
        if fields:
            args += ["-T", "fields", *sum((["-e", f] for f in fields), [])]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        return out.splitlines()

    assert rows("_ws.malformed || _ws.expert.severity >= warning") == []
    assert len(rows("udp")) == len(rows("cfdp")) > 3000, "every datagram is a CFDP PDU"
    # Wireshark's reading of the directive codes (727.0-B-5 table 5-4): EOF 4, Finished 5,
    # ACK 6, metadata 7, NAK 8; one each of metadata, EOF and Finished, an ACK of each of
    # EOF and Finished.
    codes = rows("cfdp.fdtype", "cfdp.fdtype")
    count = {c: codes.count(c) for c in set(codes)}
    assert count.get("7") == count.get("4") == count.get("5") == 1, count
    assert count.get("8", 0) > 0 and count.get("6", 0) == 2, count
    # Every PDU of one acknowledged transaction (mode 0) from entity 1 to entity 2, the
    # nodes' numbers.
    assert set(rows("cfdp", "cfdp.trans_mode", "cfdp.srcid", "cfdp.dstid")) == {"0\t1\t2"}


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (.ci/run installs it)")
def test_wireshark_reads_the_prompts_and_keep_alives_built_beside_cfdp_rs(cli, tmp_path):
    # cfdp-rs has no Prompt or Keep Alive PDU: spacetp-cfdp builds them (keep_alive.rs).
    # Wireshark's dissector is the outside check of their bytes.
    pcap = tmp_path / "ka.pcap"
    r = cli("run", CFDP_GEO, "--set", 'flows[0].cfdp.keep_alive_interval="2 s"',
            "--pcap", f"ground-terminal={pcap}", "-q")  # fmt: skip
    assert r.returncode == 0, r.stderr

    def rows(filt: str, *fields: str) -> list[str]:
        args = ["tshark", "-r", str(pcap), "-d", "udp.port==4556,cfdp", "-Y", filt]
        args += ["-T", "fields", *sum((["-e", f] for f in fields), [])] if fields else []
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()

    assert rows("_ws.malformed || _ws.expert.severity >= warning") == []
    prompts = rows("cfdp.fdtype == 9", "frame.number")
    progress = [int(x) for x in rows("cfdp.fdtype == 12", "cfdp.progress")]
    assert len(prompts) >= 8 and len(progress) == len(prompts), (prompts, progress)
    # Each Keep Alive says how far the file has arrived: it only grows, up to the file.
    assert progress == sorted(progress) and 0 < progress[-1] <= 5_000_000, progress
