"""NewReno on the asymmetry example against ns-3.44 (benches/ns3/results.csv, scenario A;
provenance in benches/ns3/README.md), with ns-3's settings matched: initial window 10, SACK
and timestamps off, delayed ACK 2 / 200 ms, min RTO 1 s, 300 kB buffers (all `newreno`
profile defaults), 2-byte PPP framing, 100-packet host queues, a BDP router queue."""

import csv

import pytest

import spacetp
from conftest import EXAMPLES, NS3_ANCHORS

NS3 = NS3_ANCHORS / "results.csv"


def ns3_goodput(rev_bps):
    with NS3.open() as f:
        for row in csv.DictReader(f):
            if (row["scenario"], row["variant"], row["value"]) == ("A", "TcpNewReno", rev_bps):
                return float(row["goodput_bps"])
    raise LookupError(rev_bps)


@pytest.mark.parametrize("rev", ["1500000", "15000", "5000", "1500"])
def test_newreno_goodput_within_25_percent_of_ns3(rev):
    sc = spacetp.load(EXAMPLES / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].rate_back", f"{rev} b/s")
    for i in (0, 1):
        spacetp.set_value(sc, f"links[{i}].framing", "2 B")
    ours = spacetp.run(sc).flows[0]["goodput_bps"]
    theirs = ns3_goodput(rev)
    assert abs(ours - theirs) / theirs < 0.25, (ours, theirs)


SENS = NS3_ANCHORS / "results_sensitivity.csv"


def ns3_row(path, scenario, variant, param, value):
    with path.open() as f:
        for row in csv.DictReader(f):
            if (row["scenario"], row["variant"], row["param"], row["value"]) == (
                scenario,
                variant,
                param,
                value,
            ):
                return row
    raise LookupError((scenario, variant, param, value))


@pytest.mark.parametrize("delay", ["250", "300"])
def test_sack_prr_recovery_matches_ns3_exactly(delay):
    """B-sack: SACK with PRR (ns-3's default recovery) after a slow-start overshoot that
    drops 143 / 161 segments in the client's queue: same drops, same retransmissions, and
    goodput within 1%."""
    sc = spacetp.load(EXAMPLES / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].rate_back", "1.5 Mb/s")
    spacetp.set_value(sc, "links[1].delay", f"{delay} ms")
    for i in (0, 1):
        spacetp.set_value(sc, f"links[{i}].framing", "2 B")
    spacetp.set_value(sc, "flows[0].tcp", {"sack": True, "recovery": "sack", "prr": True})
    res = spacetp.run(sc)
    row = ns3_row(
        SENS.with_name("results_sensitivity_detail.csv"),
        "B-sack",
        "TcpNewReno",
        "delay_ms@rev_bps=1500000",
        delay,
    )
    f = res.flows[0]
    assert f["retransmitted_segments"] == int(row["retx"])
    assert res.links[0]["queue_drops"] == int(row["tc_drops"])
    theirs = float(row["goodput_bps"])
    assert abs(f["goodput_bps"] - theirs) / theirs < 0.01, (f["goodput_bps"], theirs)
