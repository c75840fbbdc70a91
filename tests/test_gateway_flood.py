"""Hostile input at rate (issue #21, item 8), the test-sized run of benches/gateway_flood.py:
every class of `spacetp.live.flood` at 10 000 packets a second for 10 s across the emulated
link to gateway B while four real transfers run. The transfers arrive byte for byte, each
class is counted by its own counter, the SYN flood stops at max_half_open, and gateway B's
resident memory and descriptors stay flat. Needs root."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from test_gateway import _why_not

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))

BENCH = Path(__file__).resolve().parents[1] / "benches" / "gateway_flood.py"


def _bench():
    spec = importlib.util.spec_from_file_location("gateway_flood", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_class_at_10000_pps_is_counted_and_the_transfers_arrive_exactly(tmp_path):
    r = _bench().run(10_000, 10, 2_000_000, tmp_path)
    sent = r["flood"]["sent"]
    # The sender keeps 10 000 packets/s on an idle machine (the benchmark's figure); a loaded
    # one sent 83 690 in 10 s: at least half, every class, is what the test needs.
    total = sum(sent.values())
    assert total > 50_000 and all(n > 0.5 * total / len(sent) for n in sent.values()), sent
    assert r["flood"]["send_errors"] <= 0.05 * total, r["flood"]
    assert r["transfers_exact"], r["transfers"]
    b = r["gateway_b"]
    # Each class lands in its counter. A loaded host drops some of 10 000 packets/s before
    # gateway B reads them (once: 13 342 of 13 569 compressed ones counted), so each counter
    # holds at least half its class (the benchmark's figure is the exact count), and never
    # more than the packets that can land there: the malformed classes and the random bytes.
    half = 0.5
    assert half * sent["compressed"] <= b["compressed_bad"] <= sent["compressed"], b
    assert b["undecodable"] >= half * sent["trunc_opts"], b
    assert b["bad_checksum"] >= half * sent["bad_checksum"], b
    malformed = sent["trunc_opts"] + sent["bad_checksum"] + sent["compressed"] + sent["random"]
    assert b["undecodable"] + b["bad_checksum"] + b["compressed_bad"] <= malformed, b
    # A few land on the SYN flood's half-open flows (the same port, random source ports).
    assert b["foreign"] >= half * sent["foreign"], b
    assert b["rst_replies"] <= 100 * 12, b  # resets to forged segments: rate-limited
    # At most max_half_open wait for their handshake; those that ended linger 2 s more.
    assert b["half_open_dropped"] > 0 and b["max_flows"] <= 3 * 1024, b
    assert b["integrity_resets"] == 0 and r["gateway_a"].get("integrity_resets", 0) == 0
    assert r["flat"]["rss_max_over_min"] <= 1.05, r["flat"]
    assert r["flat"]["fds"][1] - r["flat"]["fds"][0] <= 16, r["flat"]
