"""Paced departures of linux-bbr against what the kernel was seen to send
(benches/kernel_bursts.md: kernel 6.18's bbr across `spacetp emulate`, its departures read on
the TUN device), and the bench's grouping of packets into departures."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spacetp.live import vs_linux

BENCH = Path(__file__).resolve().parents[1] / "benches" / "kernel_bursts.py"
spec = importlib.util.spec_from_file_location("kernel_bursts", BENCH)
kb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kb)

CASES = {c.name: c for c in vs_linux.GRID}


def test_packets_closer_than_50_us_are_one_departure_and_acks_are_left_out():
    packets = [(0.0, 1500), (10e-6, 1500), (20e-6, 52), (30e-6, 1500), (1e-3, 1500)]
    assert kb.departures(packets) == [(0.0, 3), (1e-3, 1)]
    s = kb.summary(kb.departures(packets))
    assert s["share"][3] == 0.5 and s["share"][1] == 0.5 and s["mean"] == 2.0


def test_at_10_mbps_linux_bbr_departs_as_the_kernel_did_singles_then_pairs(tmp_path):
    # The kernel: 1 120 departures, 12% of one segment (pacing below 1.2 Mb/s in the
    # first round trips), 88% of two (bbr_min_tso_segs above it: 1 ms is less than one).
    s = kb.summary(kb.departures(kb.sim_departures(CASES["geo"], tmp_path)))
    assert abs(s["share"][2] - 0.88) < 0.03, s
    assert abs(s["share"][1] - 0.12) < 0.03, s
    assert s["share"][3] == 0, s


def test_at_50_mbps_linux_bbr_departs_in_fours_about_every_ms_as_the_kernel_did(tmp_path):
    # The kernel in ProbeBW (the transfer's second half): 930 departures, 77% of them 4
    # segments (tcp_tso_autosize: ~6 kB in 1 ms), 3.99 segments each, median 0.968 ms from
    # one to the next, its payload at the pacing rate (one run; the whole transfer's median
    # was 0.960-0.965 ms over five). Per segment, as the simulator paced before, every
    # departure would be one segment 0.24 ms apart; with headers counted, the gap would be
    # 1.1% (once) or 3.8% (per segment) longer.
    deps = kb.second_half(kb.departures(kb.sim_departures(CASES["leo"], tmp_path)))
    s = kb.summary(deps)
    assert max(range(1, 7), key=lambda k: s["share"][k]) == 4, s
    assert abs(s["median_gap_ms"] - 0.968) / 0.968 < 0.01, s
    assert abs(s["mean"] - 3.99) < 0.25, s
    assert abs(s["departures"] - 930) < 30, s
