"""Scalable TCP models of Altman et al. (seed 004)."""

import math

import numpy as np
import pytest

from spacetp.models import scalable as st

ALPHA, BETA = 1.01, 0.86  # 004 section 5 (k ~ 15)


def test_k_of_the_paper():
    # 004: "This value of beta gives k = -log[beta]/log[alpha] ~ 15".
    assert round(float(st.k_exponent(ALPHA, BETA))) == 15


def test_eq5_hand_computed():
    # alpha = 2, beta = 1/2 -> k = 1; p = 0.1, B_u = 100:
    # 100 (1 - 2*0.1)(1 - 1/2)/(0.1/4 - 1/2 + 0.9) = 40/0.425 = 94.1176...
    assert st.mean_window_iid(0.1, 100, 2.0, 0.5) == pytest.approx(40 / 0.425, rel=1e-12)
    # No loss: the window sits at B_u; (k+1) p >= 1: no positive solution -> 0.
    assert st.mean_window_iid(0.0, 500) == pytest.approx(500)
    assert st.mean_window_iid(0.5, 100, 2.0, 0.5) == 0.0


def test_eq8_is_the_paper_root_and_below_b_u():
    q, b_u = np.logspace(-7, -1, 25)[:, None], np.array([500.0, 2000.0])[None, :]
    k = st.k_exponent(ALPHA, BETA)
    c2 = q * (1 - ALPHA ** -(k + 1)) / (1 - 1 / ALPHA)
    c1 = -(1 + (k + 1) * q * b_u)
    c0 = b_u
    disc = np.sqrt(c1**2 - 4 * c2 * c0)
    minus, plus = (-c1 - disc) / (2 * c2), (-c1 + disc) / (2 * c2)  # (7)
    w = st.mean_window(q, b_u, ALPHA, BETA)
    assert np.allclose(w, minus, rtol=1e-6)  # (8), Proposition 3.1
    assert np.all(w <= b_u) and np.all(plus > b_u)
    assert np.allclose(c2 * w**2 + c1 * w + c0, 0, atol=1e-6 * b_u)  # solves (6)
    assert np.all(np.diff(w, axis=0) < 0)


def test_eq8_with_eq4_satisfies_eq5():
    # (8) is (5) evaluated at p = q E[W] (4).
    q, b_u = 1e-4, 500
    w = st.mean_window(q, b_u)
    assert st.mean_window_iid(q * w, b_u) == pytest.approx(w, rel=1e-10)


def test_unbounded_limits_eq9_eq10():
    q = 1e-4
    k = st.k_exponent(ALPHA, BETA)
    assert st.mean_window_unbounded(q) == pytest.approx(1 / (q * (k + 1)))
    # E[W] -> 1/(q(k+1)) as B_u grows, from below.
    w = st.mean_window(q, np.array([1e3, 1e5, 1e7, 1e9]))
    assert np.all(np.diff(w) > 0) and np.all(w < st.mean_window_unbounded(q))
    assert w[-1] == pytest.approx(st.mean_window_unbounded(q), rel=1e-5)
    assert st.mean_window(q, np.inf) == pytest.approx(st.mean_window_unbounded(q))
    # (10): alpha = 2, beta = 1/2 (k = 1), q = 1e-3, RTT = 0.12 s -> 1/(0.12e-3 * 2) pkt/s.
    assert st.throughput_unbounded(1e-3, 0.12, 2.0, 0.5) == pytest.approx(1 / 0.24e-3)
    assert st.throughput(q, 0.12, 1e12) == pytest.approx(st.throughput_unbounded(q, 0.12), 1e-6)


@pytest.mark.parametrize("p", [0.005, 0.02, 0.04])
def test_markov_with_identical_rows_is_eq5(p):
    # i.i.d. losses written as a Markov chain whose rows are equal; B_l = 8, B_u = 500.
    expected = st.mean_window_iid(p, 500)
    two = np.array([[1 - p, p], [1 - p, p]])
    assert st.mean_window_markov(two, [0.0, 1.0], 8, 500) == pytest.approx(expected, rel=0.01)
    # Three states, identical rows: reduction probability 0.5*0 + 0.3*p/0.6 + 0.2*p/0.4 = p.
    three = np.tile([0.5, 0.3, 0.2], (3, 1))
    probs = np.array([0.0, p / 0.6, p / 0.4])
    assert st.mean_window_markov(three, probs, 8, 500) == pytest.approx(expected, rel=0.01)
    assert st.mean_window_markov([[1.0]], [p], 8, 500) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("p_a", [0.02, 0.04])
def test_burstiness_lowers_the_window(p_a):
    # 004 Figs. 3-4: p_a = 0.02 and 0.04, B_u = 500, B_l = 8, b from 0 to 0.9.
    b = np.linspace(0.0, 0.9, 10)
    w = st.mean_window_burst(p_a, b, 8, 500)
    assert np.all(np.diff(w) < 0)
    assert np.all((w > 8) & (w < 500))


def test_effect_of_burstiness_grows_with_loss():
    # 004: "As the average loss probability increases, the effect of bursty losses also
    # increases."
    drop = [
        1 - st.mean_window_burst(pa, 0.9, 8, 500) / st.mean_window_burst(pa, 0, 8, 500)
        for pa in (0.02, 0.04)
    ]
    assert drop[1] > drop[0] > 0


def test_stationary_distribution_is_a_distribution():
    A, P = st.burst_chain(0.04, 0.5)
    pi = st.stationary_distribution(A, P, 15, 400)
    assert pi.shape == (401, 2)
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(pi >= 0)
    T = st.transition_matrix(A, P, 15, 400)
    assert np.allclose(T.sum(axis=1), 1.0)
    assert np.allclose(pi.ravel() @ T, pi.ravel(), atol=1e-14)
    # The L-marginal is the stationary vector (15) of A.
    assert pi[:, 1].sum() == pytest.approx(0.04, rel=1e-9)


def test_transition_matrix_blocks():
    # Small example of 004's T with k = 2, M = 4: (I-P)A at y+1 (M at the top), PA at y-k.
    A = np.array([[0.9, 0.1], [0.5, 0.5]])
    p = np.array([0.2, 0.7])
    T = st.transition_matrix(A, p, 2, 4).toarray()
    PA, IPA = p[:, None] * A, (1 - p)[:, None] * A

    def block(y, z):
        return T[2 * y : 2 * y + 2, 2 * z : 2 * z + 2]

    for y in range(5):
        down, up = max(y - 2, 0), min(y + 1, 4)
        for z in range(5):
            expected = (PA if z == down else 0) + (IPA if z == up else 0)
            assert np.allclose(block(y, z), expected), (y, z)


def test_burst_chain_matches_eq14_eq15():
    A, P = st.burst_chain(0.02, 0.6)
    g = A[0, 0]
    assert np.allclose(A, [[g, 1 - g], [0.4, 0.6]]) and np.allclose(P, np.diag([0, 1]))
    assert (1 - g) / (2 - 0.6 - g) == pytest.approx(0.02)  # p_a of (15)
    # b = 0: after a BAD RTT always GOOD.
    A0, _ = st.burst_chain(0.02, 0.0)
    assert A0[1, 1] == 0.0
    for bad in [(0.0, 0.5), (1.0, 0.5), (0.02, 1.0), (0.02, -0.1), (0.6, 0.0)]:
        with pytest.raises(ValueError):
            st.burst_chain(*bad)
    A6, _ = st.burst_chain(0.6, 0.5)  # feasible: b >= 2 - 1/0.6 = 1/3
    assert 0 <= A6[0, 0] <= 1


def test_p_as_vector_or_diagonal_matrix():
    A, P = st.burst_chain(0.02, 0.3)
    assert st.mean_window_markov(A, P, 8, 500) == st.mean_window_markov(A, np.diag(P), 8, 500)
    with pytest.raises(ValueError):
        st.mean_window_markov(A, [[0, 0.1], [0, 1]], 8, 500)
    with pytest.raises(ValueError):
        st.mean_window_markov([[0.5, 0.6], [0.5, 0.5]], [0, 1], 8, 500)


def test_lattice_choice_behaves_sensibly():
    A, P = st.burst_chain(0.02, 0.5)
    # Exact when k and M are integers: beta = alpha^-15, B_u = 8 alpha^400.
    beta15, b_u = ALPHA**-15, 8 * ALPHA**400
    pi = st.stationary_distribution(A, P, 15, 400).sum(axis=1)
    direct = pi @ (8 * ALPHA ** np.arange(401))
    assert st.mean_window_markov(A, P, 8, b_u, ALPHA, beta15) == pytest.approx(direct, rel=1e-9)
    # Non-integer k = 15.16, M = 415.58: the interpolated value lies between the bracketing
    # integer models, and close to the rounded one.
    k, m = st.k_exponent(ALPHA, BETA), math.log(500 / 8) / math.log(ALPHA)
    interp = st.mean_window_markov(A, P, 8, 500)
    corners = [
        st.mean_window_markov(A, P, 8, 8 * ALPHA**mi, ALPHA, ALPHA**-ki)
        for ki in (math.floor(k), math.ceil(k))
        for mi in (math.floor(m), math.ceil(m))
    ]
    assert min(corners) <= interp <= max(corners)
    assert st.mean_window_markov(A, P, 8, 500, lattice="round") == pytest.approx(interp, rel=0.02)
    # Continuous and increasing in B_u; rounding makes a staircase instead.
    b_us = np.arange(490.0, 511.0)
    smooth = st.mean_window_markov(A, P, 8, b_us)
    stairs = st.mean_window_markov(A, P, 8, b_us, lattice="round")
    assert np.all(np.diff(smooth) > 0) and np.max(np.diff(smooth)) < 1.5
    assert np.sum(np.diff(stairs) == 0) > 10
    # Likewise in beta (k from 17.5 down to 12.8): a gentler cut gives a larger window.
    w_beta = st.mean_window_markov(A, P, 8, 500, ALPHA, np.linspace(0.84, 0.88, 21))
    assert np.all(np.diff(w_beta) > 0) and np.max(np.diff(w_beta)) < 2.0


def test_markov_throughput_in_004_units():
    # 004 section 5: RTT 0.12 s, 1040-byte packets; B_u = 500 caps the rate at 34.67 Mb/s.
    A, P = st.burst_chain(0.02, 0.0)
    rate = st.throughput_markov(A, P, 0.12, 8, 500)
    bps = st.to_bits_per_second(rate, 1040)
    assert bps == pytest.approx(st.mean_window_markov(A, P, 8, 500) / 0.12 * 1040 * 8)
    assert 0.9 * 500 * 1040 * 8 / 0.12 < bps < 500 * 1040 * 8 / 0.12
