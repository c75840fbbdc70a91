"""NewReno on the asymmetry example against ns-3.44 (../shared/anchors/ns3/results.csv,
scenario A), with ns-3's settings matched: initial window 10, SACK and timestamps off,
delayed ACK 2 / 200 ms, min RTO 1 s, 300 kB buffers (all `newreno` profile defaults), 2-byte
PPP framing, 100-packet host queues, a BDP router queue."""

import csv

import pytest

import spacetp
from conftest import EXAMPLES, SHARED

NS3 = SHARED / "anchors" / "ns3" / "results.csv"


def ns3_goodput(rev_bps):
    with NS3.open() as f:
        for row in csv.DictReader(f):
            if (row["scenario"], row["variant"], row["value"]) == ("A", "TcpNewReno", rev_bps):
                return float(row["goodput_bps"])
    raise LookupError(rev_bps)


@pytest.mark.parametrize("rev", ["1500000", "15000", "5000", "1500"])
def test_newreno_goodput_within_25_percent_of_ns3(rev):
    assert NS3.exists(), f"{NS3} is missing: ../shared must sit beside the repository"
    sc = spacetp.load(EXAMPLES / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].rate_back", f"{rev} b/s")
    for i in (0, 1):
        spacetp.set_value(sc, f"links[{i}].framing", "2 B")
    ours = spacetp.run(sc).flows[0]["goodput_bps"]
    theirs = ns3_goodput(rev)
    assert abs(ours - theirs) / theirs < 0.25, (ours, theirs)
