"""The gateway's self-test from Python, as benches/gateway_attacks.py runs it: every class of
forged packet against an in-process gateway pair during a transfer (no root needed)."""

import json

import pytest

from spacetp import _core


def test_every_attack_class_has_its_expected_effect():
    rows = json.loads(_core.gateway_selftest('"rate": "50 Mb/s", "delay": "5 ms"', 300_000, 2))
    assert len(rows) >= 10
    for r in rows:
        assert r["expected"], r
        assert r["sent"] > 0, r
    exact = [r for r in rows if r["transfer"] == "exact"]
    reset = [r for r in rows if r["transfer"] == "reset on both sides"]
    assert len(exact) == len(rows) - 1 and len(reset) == 1
    assert "RST rejected" in next(r for r in rows if "beyond the window" in r["class"])["reaction"]
    # RFC 9293: the stale FIN is dropped and acknowledged, the transfer goes on exactly.
    fin = next(r for r in rows if r["class"].startswith("FIN+ACK"))
    assert fin["transfer"] == "exact" and "B: old FIN rejected" in fin["reaction"], fin


def test_a_bad_link_is_a_clear_error():
    with pytest.raises(ValueError, match="rate"):
        _core.gateway_selftest('"rate": "fast"', 1000, 1)
