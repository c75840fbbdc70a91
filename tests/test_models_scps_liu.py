"""SCPS-TP model of Liu & Liu (seed 000), corrected as documented in scps_liu."""

import math

import numpy as np
import pytest

from spacetp.models import scps_liu as liu
from spacetp.models import vegas

R = 0.2064  # 204 ms base RTT + Vegas' 3 queued packets at 10 Mb/s (000 section III)
W_E = 258.0  # Vegas equilibrium window there: 3 R/(R - 0.204)
P_RANGE = np.logspace(-4, -2, 21)  # 000 Fig. III: loss 0.01% .. 1%


def test_eq10_as_printed_when_the_plateau_is_reached():
    # 000 (10) verbatim; W_0 = 64 is below W_p(1e-4) = 160, so W_0 = w0.
    p, w0, ts = 1e-4, 64.0, 0.1
    printed = (w0 + 1 / p) / (
        R + (1 - (1 - p) ** (w0 - 1)) * ts + w0 / 4 * R + (1 / (p * w0) - 7 * w0 / 32 + 1 / 8) * R
    )
    assert liu.no_timeout_throughput(R, p, w0, ts) == pytest.approx(printed, rel=1e-12)


def test_corrected_sums_match_the_discrete_windows():
    w0 = 64
    assert liu.tpp_bc_packets(w0) == sum(range(48, 64))  # (4): W/4 rounds 3W/4 .. W-1
    assert liu.start_ss_packets(w0) == 2 * (2 + 4 + 8 + 16)  # (13): 2(2 + ... + W/4)
    assert liu.start_ss_duration(1.0, w0) == len([2, 2, 4, 4, 8, 8, 16, 16])  # (14), log2
    assert liu.start_ca_packets(w0) == sum(range(32, 64))  # (15): W/2 rounds W/2 .. W-1
    assert liu.start_ca_duration(1.0, w0) == 32  # (16)
    assert liu.tpp_bd_packets(1e-3) == pytest.approx(1000)  # (6) corrected: P_BD = 1/p
    # (8): P_AB + P_BC + P_CD = W_0 + 1/p, with P_CD = P_BD - P_BC.
    p = 1e-4
    p_cd = liu.tpp_bd_packets(p) - liu.tpp_bc_packets(w0)
    assert liu.tpp_ab_packets(w0) + liu.tpp_bc_packets(w0) + p_cd == pytest.approx(
        liu.tpp_packets(p, w0)
    )
    # (7) and (18) both scale with R.
    assert liu.tpp_cd_duration(2.0, p, w0) == pytest.approx(2 * p_cd / w0)
    assert liu.start_cd_duration(2.0, p, w0) == pytest.approx(2 * liu.start_cd_packets(p, w0) / w0)


def test_start_duration_extends_eqs_14_16_18():
    # Plateau reached: D_AD = (14) + (16) + (18).
    w0, p = 64.0, 1e-5
    parts = liu.start_ss_duration(R, w0) + liu.start_ca_duration(R, w0)
    assert liu.start_duration(R, p, w0) == pytest.approx(parts + liu.start_cd_duration(R, p, w0))
    # Loss in slow start: 1/p = 28 packets = 2 + 2 + 4 + 4 + 8 + 8 -> exactly 6 rounds.
    assert liu.start_duration(1.0, 1 / 28, w0) == pytest.approx(6.0)
    # Loss during the ramp: 60 + 32 + 33 packets -> 8 slow-start rounds + 2 ramp rounds.
    assert liu.start_duration(1.0, 1 / 125, w0) == pytest.approx(10.0)
    # Increasing in the number of packets 1/p and continuous where the stages meet
    # (60 packets end slow start, 60 + 1520 end the ramp).
    d = liu.start_duration(1.0, 1 / np.linspace(1, 5000, 20000), w0)
    assert np.all(np.diff(d) > 0)
    for n in (60.0, 1580.0):
        below, above = liu.start_duration(1.0, 1 / np.array([n - 1e-6, n + 1e-6]), w0)
        assert above - below == pytest.approx(0, abs=1e-6)


def test_timeout_probability_printed_and_conditional():
    p, w = 0.05, 10
    printed = p**w + sum(
        math.comb(w, i) * p**i * (1 - p) ** (w - i) * p**i for i in range(1, w + 1)
    )
    assert liu.timeout_probability(p, w, conditional=False) == pytest.approx(printed, rel=1e-12)
    # (20)'s own approximation W p^2 (1-p)^(W-1) at small p.
    assert liu.timeout_probability(1e-4, w, conditional=False) == pytest.approx(
        w * 1e-8 * (1 - 1e-4) ** (w - 1), rel=1e-3
    )
    # Conditional on a loss, without the double-counted i = W term.
    joint = p**w + sum(math.comb(w, i) * p**i * (1 - p) ** (w - i) * p**i for i in range(1, w))
    assert liu.timeout_probability(p, w) == pytest.approx(joint / (1 - (1 - p) ** w), rel=1e-12)
    # The double count matters only when p^(2W) does: p = 0.5, W = 3.
    p, w = 0.5, 3
    joint = p**w + sum(math.comb(w, i) * p**i * (1 - p) ** (w - i) * p**i for i in range(1, w))
    assert liu.timeout_probability(p, w) == pytest.approx(joint / (1 - (1 - p) ** w), rel=1e-12)
    # ~ p (the lost packet's retransmission is lost) rather than ~ W p^2.
    assert liu.timeout_probability(1e-5, 100) == pytest.approx(1e-5, rel=2e-3)


def test_timeout_count_and_duration():
    p = 0.3
    k = np.arange(1, 200)
    pmf = liu.timeout_count_pmf(k, p)
    assert pmf.sum() == pytest.approx(1.0)
    # Mean duration by explicit sum: k timeouts last T0 (1 + 2 + 4 + ... ) capped at 64 T0.
    lengths = np.array([min(2.0**j, 64.0) for j in range(200)]).cumsum()[: len(k)]
    assert liu.timeout_duration(p, 1.0) == pytest.approx(float(pmf @ lengths), rel=1e-12)
    # (23) is the first-order term: T0 + 2 p^2 T0.
    assert liu.timeout_duration(p, 2.0, first_order=True) == pytest.approx(2.0 * (1 + 2 * p**2))
    small = 1e-3
    assert liu.timeout_duration(small, 1.0) == pytest.approx(1 + 2 * small**2, abs=1e-11)


def test_no_timeout_tends_to_window_limit_as_p_goes_to_zero():
    # Derivation: Lambda = (w0/R)(1 - p w0 (1/8 + w0/32) + O(p^2)).
    p = np.array([1e-7, 1e-8, 1e-9])
    for ts in (0.0, 0.1):
        rel = liu.no_timeout_throughput(R, p, W_E, ts) / (W_E / R) - 1
        assert np.allclose(rel / p, -W_E * (1 / 8 + W_E / 32), rtol=1e-3)
    # With w0 the Vegas equilibrium window the limit is 000's no-loss model (1).
    eq1 = liu.no_loss_throughput(R, 0.204, 3)
    assert liu.no_timeout_throughput(R, 0.0, vegas.equilibrium_window(R, 0.204, 3)) == (
        pytest.approx(eq1)
    )
    assert liu.throughput(R, 1e-10, 2 * R, W_E, 0.1) == pytest.approx(eq1, rel=1e-5)


def test_without_ceiling_no_timeout_follows_the_sqrt_law():
    p = np.array([1e-6, 1e-8])
    assert np.allclose(liu.no_timeout_throughput(R, p) * R / np.sqrt(3.5 / p), 1, rtol=2e-3)


@pytest.mark.parametrize("w0", [32.0, W_E, np.inf])
@pytest.mark.parametrize("ts", [0.0, 0.1, R])
def test_full_model_below_no_timeout_and_decreasing(w0, ts):
    p = P_RANGE[:, None]
    rtt = np.linspace(0.204, 0.6, 25)[None, :]
    full = liu.throughput(rtt, p, 2 * rtt, w0, ts)
    no_to = liu.no_timeout_throughput(rtt, p, w0, ts)
    assert np.all(full <= no_to)
    assert np.all(np.diff(full, axis=0) < 0)  # in p
    assert np.all(np.diff(full, axis=1) < 0)  # in RTT
    assert np.all(np.diff(no_to, axis=1) < 0)
    # The paper's printed (20) and (23) give a (slightly) higher full-model throughput.
    printed = liu.throughput(rtt, p, 2 * rtt, w0, ts, conditional=False, first_order=True)
    assert np.all(printed >= full) and np.all(printed <= no_to * (1 + 1e-12))


def test_full_model_tends_to_no_timeout_model():
    p = np.array([1e-6, 1e-7])
    ratio = liu.throughput(R, p, 2 * R, W_E, 0.1) / liu.no_timeout_throughput(R, p, W_E, 0.1)
    assert np.all(ratio < 1) and np.all(ratio > 1 - 10 * p)


def test_window_at_loss_caps_the_ceiling():
    # Liu's range: W_p(1e-2) = 21.7 < W_E, so D_CD of (7) stays >= 0 ...
    w = liu.window_at_loss(P_RANGE, W_E)
    assert np.all(w <= W_E) and w[-1] == pytest.approx(21.67, abs=0.01)
    assert np.all(liu.tpp_cd_duration(R, P_RANGE, w) >= -1e-9)
    # ... where (10) with W_0 = W_E would have a negative plateau.
    assert liu.tpp_cd_duration(R, 1e-2, W_E) < 0


def test_full_model_is_eq24_assembled_from_its_parts():
    # (24) = (P_AD + n P_TPP)/(D_AD + n D_TPP + D_TO) with n from (19)-(20), in a regime
    # where timeouts weigh: p = 5e-2, T0 = 3 s.
    rtt, p, t0, w0, ts = 0.25, 5e-2, 3.0, 40.0, 0.05
    w = liu.window_at_loss(p, w0)
    n = liu.tpp_count(liu.timeout_probability(p, w))
    packets = liu.start_packets(p) + n * liu.tpp_packets(p, w)
    time = liu.start_duration(rtt, p, w) + n * liu.tpp_duration(rtt, p, w, ts)
    time += liu.timeout_duration(p, t0)
    assert liu.throughput(rtt, p, t0, w0, ts) == pytest.approx(packets / time, rel=1e-12)
    # Longer timeouts cost throughput.
    rates = liu.throughput(rtt, p, np.array([0.5, 1.0, 3.0, 10.0]), w0, ts)
    assert np.all(np.diff(rates) < 0)
