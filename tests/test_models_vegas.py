"""TCP Vegas: Liu & Liu (seed 000) eq. (1) and the derived loss model."""

import numpy as np
import pytest

from spacetp.models import scps_liu, vegas


def test_000_eq1_hand_computed():
    # beta/(R - baseRTT) = 3/(0.3 - 0.2) = 30 packets/s.
    assert vegas.no_loss_throughput(0.3, 0.2, 3) == pytest.approx(30.0, rel=1e-12)
    # Liu's dumbbell: baseRTT 204 ms, R = 204 ms + 3 packets queued at 1250 pkt/s (10 Mb/s,
    # 1000-byte packets) = 206.4 ms: 3/0.0024 = 1250 pkt/s, the bottleneck rate.
    assert vegas.no_loss_throughput(0.2064, 0.204, 3) == pytest.approx(1250.0, rel=1e-9)
    assert vegas.equilibrium_rtt(0.204, 1250.0, 3) == pytest.approx(0.2064, rel=1e-12)


def test_equilibrium_window_is_rate_times_rtt():
    # W_e = beta R/(R - baseRTT) = 3*0.2064/0.0024 = 258 = BDP (255) + beta (3).
    assert vegas.equilibrium_window(0.2064, 0.204, 3) == pytest.approx(258.0, rel=1e-9)


def test_loss_model_reduces_to_eq1_without_loss():
    rtt, base = np.array([0.21, 0.3, 0.6]), 0.2
    assert np.allclose(vegas.throughput(rtt, 0.0, base), vegas.no_loss_throughput(rtt, base))
    # First-order deviation for small p: -p W_e (1/8 + W_e/32) (module docstring).
    w_e = vegas.equilibrium_window(0.3, 0.2, 3)  # 9 packets
    p = 1e-7
    rel = vegas.throughput(0.3, p, 0.2) / vegas.no_loss_throughput(0.3, 0.2) - 1
    assert rel == pytest.approx(-p * w_e * (1 / 8 + w_e / 32), rel=1e-3)


def test_loss_limited_asymptote_is_three_quarter_sawtooth():
    # Window far above the loss-limited peak: Lambda ~ sqrt(7/(2p))/R.
    p = np.array([1e-6, 1e-8])
    rate = vegas.throughput(0.1, p, 0.1 - 1e-9)
    assert np.allclose(rate * 0.1 / np.sqrt(3.5 / p), 1, rtol=2e-3)


def test_ramp_packets_is_the_discrete_sum():
    # Windows 3W/4 .. W-1 over W/4 rounds, W = 64: 48 + ... + 63 = 888.
    assert vegas.ramp_packets(64) == sum(range(48, 64))
    # W_p solves ramp_packets(W_p) = 1/p.
    assert vegas.ramp_packets(vegas.loss_limited_window(1e-3)) == pytest.approx(1e3)


def test_loss_model_is_liu_no_timeout_with_zero_snack_delay():
    p = np.logspace(-5, -1, 20)
    w_e = vegas.equilibrium_window(0.25, 0.2, 3)
    assert np.allclose(
        vegas.throughput(0.25, p, 0.2, 3), scps_liu.no_timeout_throughput(0.25, p, w_e, 0.0)
    )


def test_loss_model_decreases_with_loss_and_stays_below_eq1():
    p = np.logspace(-6, -1, 40)
    rate = vegas.throughput(0.25, p, 0.2)
    assert np.all(np.diff(rate) < 0)
    assert np.all(rate < vegas.no_loss_throughput(0.25, 0.2))
