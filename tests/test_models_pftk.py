"""PFTK model (Padhye et al. 2000) and Akan et al. (seed 003) eq. (1)."""

import math

import numpy as np
import pytest

from spacetp.models import pftk

KB = 1000  # bytes: 003's "1 KB" segment (1024 bytes cannot give 308 b/s, see below)


def test_003_eq1_gives_308_bps_at_rtt_1000s():
    # 003 section II: "At RTT = 1000 s ... the achievable throughput degenerates to 308 b/s
    # for a segment size of 1 KB" (p = 1e-3, Fig. 1). T0 = 3 RTT (first RTO after one
    # sample, SRTT + 4 RTTVAR with RTTVAR = RTT/2).
    rtt, p = 1000.0, 1e-3
    bps = pftk.to_bits_per_second(pftk.approx_throughput(rtt, p, t0=3 * rtt), KB)
    assert round(float(bps)) == 308
    # The same through the dispatcher with 003's b = 1.
    assert pftk.throughput(rtt, p, 3 * rtt, approx=True, b=1) * 8 * KB == pytest.approx(bps)


def test_003_sentence_pins_t0_and_segment_size():
    # The 308 b/s statement holds for 1.93 RTT <= T0 <= 3.38 RTT with 1000-byte segments ...
    rtt, p = 1000.0, 1e-3
    for factor, inside in [(1.9, False), (2.0, True), (3.0, True), (3.4, False)]:
        bps = float(pftk.approx_throughput(rtt, p, factor * rtt)) * 8 * KB
        assert (round(bps) == 308) is inside, (factor, bps)
    # ... and for no T0 up to 10 RTT with 1024-byte segments.
    t0 = np.linspace(0, 10 * rtt, 101)
    assert np.all(pftk.approx_throughput(rtt, p, t0) * 8 * 1024 > 308.5)


def test_approx_is_003_eq1_as_printed():
    rtt, p, t0 = 2.5, 0.02, 7.0
    printed = 1 / (
        rtt * math.sqrt(2 * p / 3) + t0 * min(1, 3 * math.sqrt(3 * p / 8)) * p * (1 + 32 * p**2)
    )
    assert pftk.approx_throughput(rtt, p, t0) == pytest.approx(printed, rel=1e-14)


def test_mathis_hand_computed():
    # sqrt(3/(2 b p))/RTT with b = 1, p = 0.01, RTT = 0.1 s: sqrt(150)/0.1 = 122.474487 pkt/s.
    assert pftk.mathis_throughput(0.1, 0.01) == pytest.approx(122.4744871391589, rel=1e-12)
    # With delayed ACKs (b = 2) the constant is sqrt(3/4): sqrt(75)/0.1.
    assert pftk.mathis_throughput(0.1, 0.01, b=2) == pytest.approx(86.60254037844386, rel=1e-12)


def test_full_model_window_limited_branch_hand_computed():
    # p = 0.01, b = 2: E[W_u] = 2/3 + sqrt(8*0.99/0.06 + 4/9) = 12.175 > W_max = 10.
    # Q^(10) = (1-.99^3)(1+.99^3(1-.99^7))/(1-.99^10) = 0.029701*1.065917/0.095618 = 0.331097
    # f(0.01) = 1.010204; numerator = 99 + 10 + 0.331097/0.99 = 109.33444
    # denominator = 0.1*(10/4 + 0.99/0.1 + 2) + 0.331097*1.0*1.010204/0.99 = 1.777854
    assert pftk.expected_window(0.01, 2) == pytest.approx(12.175117667754712, rel=1e-12)
    assert pftk.timeout_probability(0.01, 10) == pytest.approx(0.331097, abs=1e-6)
    assert pftk.backoff_factor(0.01) == pytest.approx(1.010204, abs=1e-6)
    rate = pftk.full_throughput(0.1, 0.01, t0=1.0, w_max=10, b=2)
    assert rate == pytest.approx(109.33444 / 1.777854, rel=1e-5)


def test_full_model_unlimited_branch_hand_computed():
    # p = 0.05, b = 1, RTT = 1 s, T0 = 2 s, no W_max:
    # E[W_u] = 1 + sqrt(8*0.95/0.15 + 1) = 8.187953
    # Q^(8.187953) = (1-.95^3)(1+.95^3(1-.95^5.187953))/(1-.95^8.187953) = 0.499193
    # numerator = 0.95/0.05 + 8.187953 + 0.499193/0.95 = 27.713419
    # denominator = 1*(8.187953/2 + 1) + 0.499193*2*1.0555555/0.95 = 6.203294
    assert pftk.expected_window(0.05, 1) == pytest.approx(8.187953, abs=1e-6)
    assert pftk.timeout_probability(0.05, 8.187953) == pytest.approx(0.499193, abs=1e-6)
    rate = pftk.full_throughput(1.0, 0.05, t0=2.0, b=1)
    assert rate == pytest.approx(27.713419 / 6.203294, rel=1e-6)


@pytest.mark.parametrize("b", [1, 2])
@pytest.mark.parametrize("rtt", [0.1, 1000.0])
def test_full_and_approx_agree_where_the_approximation_holds(rtt, b):
    # Small p, no receiver-window limit: PFTK's approximation is within a few per cent.
    p = np.logspace(-5, -2, 13)
    full = pftk.full_throughput(rtt, p, 3 * rtt, b=b)
    approx = pftk.approx_throughput(rtt, p, 3 * rtt, b=b)
    assert np.all(np.abs(full / approx - 1) < 0.03)


def test_full_model_tends_to_window_limit_without_nan():
    rtt, w_max = 0.2, 64
    p = np.array([0.0, 1e-15, 1e-12, 1e-9])
    rate = pftk.full_throughput(rtt, p, 1.0, w_max=w_max)
    assert np.all(np.isfinite(rate))
    assert rate[0] == pytest.approx(w_max / rtt, rel=1e-12)
    assert np.allclose(rate, w_max / rtt, rtol=1e-5)
    assert np.all(rate <= w_max / rtt * (1 + 1e-12))
    # Unlimited window: infinite at p = 0, no NaN.
    assert pftk.full_throughput(rtt, 0.0, 1.0) == np.inf
    assert pftk.approx_throughput(rtt, 0.0, 1.0, w_max=w_max) == pytest.approx(w_max / rtt)


def test_full_model_decreases_with_loss_and_is_broadcast():
    p = np.logspace(-6, -0.5, 60)[:, None]
    rtt = np.array([0.05, 0.5, 5.0])[None, :]
    rate = pftk.full_throughput(rtt, p, 3 * rtt, w_max=200)
    assert rate.shape == (60, 3)
    assert np.all(np.diff(rate, axis=0) < 0)
    assert np.all(np.diff(rate, axis=1) < 0)
    assert np.all(rate <= 200 / rtt * (1 + 1e-12))


def test_timeout_probability_limits():
    # Q^ = 1 for w <= 3, -> 3/w as p -> 0, in (0, 1] otherwise.
    assert pftk.timeout_probability(0.1, 3) == 1.0
    assert pftk.timeout_probability(1e-12, 30) == pytest.approx(0.1, rel=1e-6)
    assert pftk.timeout_probability(0.0, 30) == pytest.approx(0.1)
    q = pftk.timeout_probability(np.logspace(-6, -0.1, 50), 20)
    assert np.all((q > 0) & (q <= 1))
