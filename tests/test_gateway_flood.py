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
    assert sum(sent.values()) > 90_000 and r["flood"]["send_errors"] == 0, r["flood"]
    assert r["transfers_exact"], r["transfers"]
    b = r["gateway_b"]
    # Each class lands in its counter (the link loses none: no errors configured).
    assert b["undecodable"] >= sent["trunc_opts"], b
    assert b["compressed_bad"] == sent["compressed"], b
    assert b["bad_checksum"] >= sent["bad_checksum"], b
    # A few land on the SYN flood's half-open flows (the same port, random source ports).
    assert b["foreign"] >= 0.95 * sent["foreign"], b
    assert b["rst_replies"] <= 100 * 12, b  # resets to forged segments: rate-limited
    # At most max_half_open wait for their handshake; those that ended linger 2 s more.
    assert b["half_open_dropped"] > 0 and b["max_flows"] <= 3 * 1024, b
    assert b["integrity_resets"] == 0 and r["gateway_a"].get("integrity_resets", 0) == 0
    assert r["flat"]["rss_max_over_min"] <= 1.05, r["flat"]
    assert r["flat"]["fds"][1] - r["flat"]["fds"][0] <= 16, r["flat"]
