"""Slow-start duration, Akan et al. (seed 003) eq. (2)."""

import numpy as np
import pytest

from spacetp.models import slowstart


def test_003_slow_start_ends_at_7200_s():
    # 003 III-A: RTT = 20 min, ssthresh = 20: "At the end of 6 RTT, the slow start is
    # terminated and congestion avoidance is called at t = 7200 s".
    assert slowstart.rounds(20) == 6
    assert slowstart.duration(20 * 60, 20) == pytest.approx(7200.0)


def test_003_two_hour_sentence_is_rtt_20_min():
    # "approximately 2 hours ... for ssthresh = 20 and RTT = 40 min": (2) gives 2 h for
    # 20 min and 4 h for 40 min (the paper's slip; (2) is implemented as printed).
    assert slowstart.duration(20 * 60, 20) == pytest.approx(2 * 3600)
    assert slowstart.duration(40 * 60, 20) == pytest.approx(4 * 3600)


def test_eq2_rounding_at_powers_of_two():
    # ceil(log2 16) + 1 = 5, ceil(log2 17) + 1 = 6, ceil(log2 1) + 1 = 1.
    assert np.array_equal(slowstart.rounds([1, 2, 16, 17, 32, 33]), [1, 2, 5, 6, 6, 7])
    assert np.allclose(slowstart.duration([1.0, 2.0], [16, 20]), [5.0, 12.0])


def test_window_curve_of_003_fig2():
    rtt = 1200.0
    t, w = slowstart.cwnd_curve(rtt, 20, 20_000)
    assert t[0] == 0 and t[-1] < 20_000 and np.all(np.diff(t) == rtt)
    # Slow start doubles from 1 until ssthresh, rounds 0..5; CA adds one per round from 7200 s.
    assert list(w[:9]) == [1, 2, 4, 8, 16, 20, 21, 22, 23]
    assert slowstart.cwnd_at(7199.0, rtt, 20) == 20
    assert slowstart.cwnd_at(7200.0, rtt, 20) == 21
    # 003 III-C: a loss at t = 9500 s; "It takes approximately 11 RTT for TCP source to resume
    # its original rate before halving": the window there is 22, and 22/2 = 11 rounds.
    w_loss = slowstart.cwnd_at(9500.0, rtt, 20)
    assert w_loss - w_loss / 2 == 11


def test_window_curve_broadcasts_and_caps():
    w = slowstart.cwnd_at(np.array([[0.0], [5.0], [50.0]]), 1.0, np.array([8.0, 20.0]), w_max=25)
    assert w.shape == (3, 2)
    assert np.array_equal(w[:, 0], [1, 8 + (5 - 3), 25])  # CA from round 3 = ceil(log2 8)
    assert np.array_equal(w[:, 1], [1, 20, 25])
