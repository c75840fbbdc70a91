"""Paced departures of linux-bbr against what the kernel was seen to send
(benches/kernel_bursts.md: kernel 6.18's bbr across `spacetp emulate`, its departures read on
the TUN device), and the bench's grouping of packets into departures."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from spacetp.live import vs_linux

BENCH = Path(__file__).resolve().parents[1] / "benches" / "kernel_bursts.py"
spec = importlib.util.spec_from_file_location("kernel_bursts", BENCH)
kb = importlib.util.module_from_spec(spec)
sys.modules["kernel_bursts"] = kb  # its dataclass looks its module up there
spec.loader.exec_module(kb)

CASES = {c.name: c for c in vs_linux.GRID}


def test_segments_closer_than_50_us_are_one_departure():
    segments = [(0.0, 0, 1000), (10e-6, 1000, 1000), (30e-6, 2000, 1000), (1e-3, 3000, 1000)]
    deps = kb.departures(segments)
    assert [(d.t, d.segments) for d in deps] == [(0.0, 3), (1e-3, 1)]
    s = kb.summary(deps)
    assert s["share"][3] == 0.5 and s["share"][1] == 0.5 and s["mean"] == 2.0
    assert s["resent"] == 0 and s["mixed"] == 0


def test_a_departure_with_resent_data_is_mixed_when_it_carries_new_data_or_a_gap():
    # Sequence numbers wrap: 2^32 - 1000 then 0 follow one another.
    top = (1 << 32) - 1000
    segments = [
        (0.0, top, 1000), (10e-6, 0, 1000), (20e-6, 1000, 1000),  # new, across the wrap
        (1e-3, 0, 1000), (1.01e-3, 1000, 1000),  # resent, one range: not mixed
        (2e-3, top, 1000), (2.01e-3, 2000, 1000),  # resent, then new: mixed
        (3e-3, 0, 1000), (3.01e-3, top, 1000),  # resent, not contiguous: mixed
    ]  # fmt: skip
    deps = kb.departures(segments)
    assert [(d.segments, d.resent, d.mixed) for d in deps] == [
        (3, False, False), (2, True, False), (2, True, True), (2, True, True)
    ]  # fmt: skip


def test_at_10_mbps_linux_bbr_departs_as_the_kernel_did_singles_then_pairs(tmp_path):
    # The kernel: 1 120 departures, 12% of one segment (pacing below 1.2 Mb/s in the
    # first round trips), 88% of two (bbr_min_tso_segs above it: 1 ms is less than one).
    s = kb.summary(kb.departures(kb.sim_departures(CASES["geo"], tmp_path)))
    assert abs(s["share"][2] - 0.88) < 0.03, s
    assert abs(s["share"][1] - 0.12) < 0.03, s
    assert s["share"][3] == 0, s


def test_at_50_mbps_linux_bbr_departs_in_fours_about_every_ms_as_the_kernel_did(tmp_path):
    # The kernel in ProbeBW (the transfer's second half), over nine runs: 930-1 022
    # departures, 59-79% of them 4 segments (tcp_tso_autosize: ~6 kB in 1 ms), 3.67-4.01
    # segments each (3.89-4.01 in the seven without a spell of single segments), median
    # 0.967-0.968 ms from one to the next, its payload at the pacing rate. Per segment, as
    # the simulator paced before, every departure would be one segment 0.24 ms apart; with
    # headers counted, the gap would be 1.1% (once) or 3.8% (per segment) longer. The two
    # round trips after a loss's first resend are left out on both sides: where the link's
    # losses fall depends on the packets sent before.
    case = CASES["leo"]
    deps = kb.departures(kb.sim_departures(case, tmp_path))
    s = kb.summary(kb.outside_recovery(kb.second_half(deps), 2 * case.one_way_s))
    assert max(range(1, 7), key=lambda k: s["share"][k]) == 4, s
    assert abs(s["median_gap_ms"] - 0.968) / 0.968 < 0.01, s
    assert abs(s["mean"] - 3.96) < 0.15, s
    assert s["departures"] > 700, s


def test_at_50_mbps_linux_bbr_departs_over_the_whole_transfer_as_the_kernel_did(tmp_path):
    # The kernel over nine runs of the whole transfer: 1 945-2 266 departures, 3.21-3.74
    # segments each, median gap 0.962-0.966 ms. Window-limited at the end of Startup it
    # waits for an ACK rather than send a departure cut short (tcp_tso_should_defer); sending
    # what each ACK allowed, the simulator made 2 878 departures of 2.53 segments, a median
    # 0.465 ms apart. A departure is one range of one kind, as an skb is: the kernel's
    # 198-259 departures with resent data carried nothing else. A loss probe leaves without
    # waiting for its departure time, so it may follow one within 50 us.
    s = kb.summary(kb.departures(kb.sim_departures(CASES["leo"], tmp_path)))
    assert 1900 <= s["departures"] <= 2350, s
    assert 3.1 <= s["mean"] <= 3.8, s
    assert abs(s["median_gap_ms"] - 0.964) / 0.964 < 0.01, s
    assert s["resent"] > 100, s
    assert s["mixed"] <= 0.01 * s["resent"], s
