"""Scalable TCP (MIMD) window models, Altman, Avrachenkov, Kherani & Prabhu, "Analysis of
Scalable TCP in the presence of Markovian Losses" (seed ``004``).

Units: windows (``b_u``, ``b_l``, results E[W]) in packets; ``rtt`` in seconds; ``q`` is the
per-packet loss probability; ``p`` (i.i.d. model) and the entries of ``P`` (Markov model) are
probabilities of a window reduction per RTT; ``alpha`` > 1 and ``beta`` < 1 are the per-RTT
increase and decrease factors (004 uses alpha = 1.01, beta = 0.86, k ~ 15). Throughputs are
E[W]/RTT in packets/s (the window is sampled once per RTT, as in 004); use
:func:`to_bits_per_second` with the packet size in bytes for bits/s.

Window dynamics, 004 (1) and (11): W_{n+1} = min(alpha W_n, B_u) without loss in RTT n,
max(beta W_n, B_l) with one or more losses (one reduction per RTT). k = -log(beta)/log(alpha).

i.i.d. losses, 004 (5) (from reference [5] of 004, no lower bound):
    E[W] = B_u (1 - (k+1) p) (1 - 1/alpha) / (p alpha^-(k+1) - 1/alpha + (1 - p))
When (k+1) p >= 1 the mean log-window drift (1-p) log alpha + p log beta is <= 0 and, with no
lower bound, the window collapses; (5) would turn negative, so 0 is returned there.

Window-dependent losses, 004 (2)-(8): p_n = 1 - (1-q)^{W_n} ~ q W_n (3), so E[p] = q E[W] (4);
substituting in (5) gives c2 E^2 + c1 E + c0 = 0 (6) with
c2 = q (1 - alpha^-(k+1))/(1 - alpha^-1), c1 = -(1 + (k+1) q B_u), c0 = B_u, and the root
below B_u is (8): E = (-c1 - sqrt(c1^2 - 4 c2 c0))/(2 c2). We evaluate the same root as
2 c0/(-c1 + sqrt(c1^2 - 4 c2 c0)), which avoids cancellation for large B_u or small q and is
B_u at q = 0. The discriminant is always positive and the root is always < B_u (c2 <
(k+1) q, so c1^2 - 4 c2 c0 > (1 - (k+1) q B_u)^2). Limits (9)-(10): E[W] -> 1/(q (k+1)),
throughput -> 1/(RTT q (k+1)) as B_u -> infinity.

Markovian window-independent losses, 004 section 4, (11)-(13): Y = (log W - log B_l)/log alpha
moves +1 (capped at M) without a reduction and -k (floored at 0) with one; L is the loss
chain with transition matrix A and per-state reduction probability P = diag(p_i). The
transition matrix of (Y, L), block (y, y') of size N x N, has (I-P)A at y' = min(y+1, M) and
PA at y' = max(y-k, 0) ((PA)_ij = p_i A_ij: the state of RTT n decides the loss, then the chain
moves). 004's printed T (drawn for k = 2) omits the (I-P)A block of its third block row; every
row y has both blocks. The stationary vector is found with a sparse direct solve, and
E[W] = sum_y,i pi(y, i) B_l alpha^y.

Non-integer k and M: 004 assumes k = -log beta/log alpha and M = log(B_u/B_l)/log alpha are
integers; with alpha = 1.01, beta = 0.86, B_l = 8, B_u = 500 they are 15.16 and 415.5. The
default ``lattice="interpolate"`` solves the four integer models (floor/ceil k) x (floor/ceil
M) - each with top B_l alpha^M' - and interpolates E[W] bilinearly in (k, M), so E[W] is
continuous in beta and B_u and exact whenever k and M are integers. ``lattice="round"`` solves
the single model with k and M rounded to the nearest integers (E[W] then jumps as beta or B_u
cross half-integers of k or M).

The chain of 004 (14): A = [[g, 1-g], [1-b, b]], P = diag(0, 1). GOOD never loses; every RTT
spent in BAD causes a loss and hence exactly one window reduction (004 loses "exactly one
packet in every RTT spent in the BAD state"). So p_a = (1-g)/(2-b-g), the stationary
probability of BAD (15), is the fraction of RTTs with a reduction - a per-RTT loss-event rate,
not a per-packet loss rate (the packet loss rate is p_a/E[W]). b is the probability that a BAD
RTT follows a BAD RTT (mean BAD run 1/(1-b) RTTs); b = 0 never has reductions in consecutive
RTTs. :func:`burst_chain` solves p_a = (1-g)/(2-b-g) for g = (1 - 2 p_a + p_a b)/(1 - p_a).
"""

from __future__ import annotations

import numpy as np

from ._common import as_arrays, result, to_bits_per_second

__all__ = [
    "burst_chain",
    "k_exponent",
    "mean_window",
    "mean_window_burst",
    "mean_window_iid",
    "mean_window_markov",
    "mean_window_unbounded",
    "stationary_distribution",
    "throughput",
    "throughput_burst",
    "throughput_iid",
    "throughput_markov",
    "throughput_unbounded",
    "to_bits_per_second",
    "transition_matrix",
]

# A computed k or M this close to an integer is treated as that integer.
_INT_TOL = 1e-9


def k_exponent(alpha=1.01, beta=0.86):
    """k = -log(beta)/log(alpha): RTTs of growth undone by one reduction."""
    alpha, beta = as_arrays(alpha, beta)
    return result(-np.log(beta) / np.log(alpha))


# ------------------------------------------------------------------ i.i.d. and window-dependent


def mean_window_iid(p, b_u, alpha=1.01, beta=0.86):
    """004 (5): E[W] (packets) for i.i.d. per-RTT reduction probability p, upper bound B_u."""
    p, b_u, alpha, beta = as_arrays(p, b_u, alpha, beta)
    k = k_exponent(alpha, beta)
    num = b_u * (1.0 - (k + 1.0) * p) * (1.0 - 1.0 / alpha)
    den = p * alpha ** (-(k + 1.0)) - 1.0 / alpha + (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where((k + 1.0) * p < 1.0, num / den, 0.0)
    return result(w)


def mean_window(q, b_u, alpha=1.01, beta=0.86):
    """004 (6)-(8): E[W] (packets) for per-packet loss probability q, upper bound B_u.

    ``b_u = inf`` gives the limit (9).
    """
    q, b_u, alpha, beta = as_arrays(q, b_u, alpha, beta)
    k = k_exponent(alpha, beta)
    c2 = q * (1.0 - alpha ** (-(k + 1.0))) / (1.0 - 1.0 / alpha)
    c1 = -(1.0 + (k + 1.0) * q * b_u)
    c0 = b_u
    with np.errstate(invalid="ignore", divide="ignore"):
        w = 2.0 * c0 / (-c1 + np.sqrt(c1**2 - 4.0 * c2 * c0))
        w = np.where(np.isfinite(b_u), w, 1.0 / (q * (k + 1.0)))
    return result(w)


def mean_window_unbounded(q, alpha=1.01, beta=0.86):
    """004 (9): lim_{B_u -> inf} E[W] = 1/(q (k+1)) packets."""
    q, alpha, beta = as_arrays(q, alpha, beta)
    with np.errstate(divide="ignore"):
        return result(1.0 / (q * (k_exponent(alpha, beta) + 1.0)))


def throughput_unbounded(q, rtt, alpha=1.01, beta=0.86):
    """004 (10): E[eta] = 1/(RTT q (k+1)) packets/s."""
    q, rtt, alpha, beta = as_arrays(q, rtt, alpha, beta)
    return result(mean_window_unbounded(q, alpha, beta) / rtt)


def throughput(q, rtt, b_u, alpha=1.01, beta=0.86):
    """Window-dependent model (8) as a rate: E[W]/RTT packets/s."""
    q, rtt, b_u, alpha, beta = as_arrays(q, rtt, b_u, alpha, beta)
    return result(mean_window(q, b_u, alpha, beta) / rtt)


def throughput_iid(p, rtt, b_u, alpha=1.01, beta=0.86):
    """i.i.d. model (5) as a rate: E[W]/RTT packets/s."""
    p, rtt, b_u, alpha, beta = as_arrays(p, rtt, b_u, alpha, beta)
    return result(mean_window_iid(p, b_u, alpha, beta) / rtt)


# ---------------------------------------------------------------------------- Markov model


def _chain(A, P):
    """Validate the loss chain; return (A, p) with p the vector of per-state probabilities."""
    A = np.atleast_2d(np.asarray(A, dtype=float))
    P = np.asarray(P, dtype=float)
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    if np.any(A < 0) or not np.allclose(A.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("A must be a stochastic matrix: entries >= 0, every row summing to 1")
    if P.ndim == 2:
        if P.shape != (n, n) or np.any(P - np.diag(np.diag(P)) != 0):
            raise ValueError(f"P must be a diagonal {n}x{n} matrix or a vector of length {n}")
        P = np.diag(P)
    P = np.atleast_1d(P)
    if P.shape != (n,):
        raise ValueError(f"P must have {n} entries (one per state of A), got shape {P.shape}")
    if np.any((P < 0) | (P > 1)):
        raise ValueError(f"P entries are probabilities and must be in [0, 1], got {P}")
    return A, P


def transition_matrix(A, P, k, M):
    """Sparse transition matrix T of (Y, L) for integer k >= 1 and M >= 1 (004 section 4).

    State (y, i) has index y N + i, y = 0..M, i = 0..N-1.
    """
    import scipy.sparse as sp  # here: importing it costs every command 0.1-0.3 s

    A, p = _chain(A, P)
    k, M = int(k), int(M)
    if k < 1 or M < 1:
        raise ValueError(f"k and M must be integers >= 1, got k={k}, M={M}")
    n = len(p)
    y = np.arange(M + 1)[:, None, None]
    i = np.arange(n)[None, :, None]
    j = np.arange(n)[None, None, :]
    shape = (M + 1, n, n)
    rows = np.broadcast_to(y * n + i, shape)
    up = np.broadcast_to(np.minimum(y + 1, M) * n + j, shape)
    down = np.broadcast_to(np.maximum(y - k, 0) * n + j, shape)
    no_loss = np.broadcast_to(((1.0 - p)[:, None] * A)[None], shape)
    loss = np.broadcast_to((p[:, None] * A)[None], shape)
    size = (M + 1) * n
    T = sp.coo_matrix(
        (
            np.concatenate([no_loss.ravel(), loss.ravel()]),
            (
                np.concatenate([rows.ravel(), rows.ravel()]),
                np.concatenate([up.ravel(), down.ravel()]),
            ),
        ),
        shape=(size, size),
    )
    return T.tocsr()  # duplicate (row, col) entries are summed, as transition mass should be


def stationary_distribution(A, P, k, M):
    """Stationary distribution of (Y, L) as an array of shape (M+1, N), summing to 1.

    Solves pi (T - I) = 0 with one balance equation replaced by sum(pi) = 1 (scipy.sparse
    direct solver). Round-off negatives (> -1e-9 relative) are set to 0; anything larger, or a
    singular system (a reducible loss chain), raises ValueError.
    """
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    A, p = _chain(A, P)
    T = transition_matrix(A, p, k, M)
    size = T.shape[0]
    Q = (T.T - sp.identity(size, format="csr")).tocsr()
    Q = sp.vstack([Q[:-1], sp.csr_matrix(np.ones((1, size)))]).tocsc()
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    with np.errstate(all="ignore"):
        pi = spla.spsolve(Q, rhs)
    if not np.all(np.isfinite(pi)):
        raise ValueError("no unique stationary distribution: is the loss chain A irreducible?")
    if pi.min() < -1e-9 * pi.max():
        raise ValueError(f"stationary solve is inaccurate (entry {pi.min():.3g} < 0)")
    pi = np.clip(pi, 0.0, None)
    return (pi / pi.sum()).reshape(int(M) + 1, len(p))


def _mean_window_lattice(A, p, b_l, alpha, k, M):
    """E[W] of one integer lattice model: sum pi(y) B_l alpha^y."""
    pi = stationary_distribution(A, p, k, M).sum(axis=1)
    return float(pi @ (b_l * alpha ** np.arange(M + 1)))


def _brackets(x, mode):
    """Integer points and weights representing a real lattice size x."""
    nearest = round(x)
    if mode == "round" or abs(x - nearest) < _INT_TOL:
        return [(int(nearest), 1.0)]
    lo = int(np.floor(x))
    w = x - lo
    return [(lo, 1.0 - w), (lo + 1, w)]


def mean_window_markov(A, P, b_l, b_u, alpha=1.01, beta=0.86, lattice="interpolate"):
    """E[W] (packets) under window-independent Markovian losses, 004 section 4.

    ``A``: N x N transition matrix of the loss chain (one step per RTT); ``P``: per-state
    reduction probabilities as a vector or diagonal matrix; ``b_l``/``b_u``: window bounds.
    ``lattice``: "interpolate" (bilinear in k and M between the bracketing integer models) or
    "round" (nearest integers); see the module docstring. b_l, b_u, alpha, beta broadcast.
    """
    if lattice not in ("interpolate", "round"):
        raise ValueError(f"lattice must be 'interpolate' or 'round', got {lattice!r}")
    A, p = _chain(A, P)
    b_l, b_u, alpha, beta = as_arrays(b_l, b_u, alpha, beta)
    out = np.empty(b_l.shape)
    for idx in np.ndindex(b_l.shape):
        bl, bu, a, bt = float(b_l[idx]), float(b_u[idx]), float(alpha[idx]), float(beta[idx])
        if not (a > 1.0 and 0.0 < bt < 1.0 and 0.0 < bl < bu):
            raise ValueError(
                f"need alpha > 1, 0 < beta < 1 and 0 < b_l < b_u, got alpha={a}, beta={bt}, "
                f"b_l={bl}, b_u={bu}"
            )
        k = float(k_exponent(a, bt))
        m = np.log(bu / bl) / np.log(a)
        if k < 1.0 - _INT_TOL or m < 1.0 - _INT_TOL:
            raise ValueError(
                f"lattice too coarse: k = -log(beta)/log(alpha) = {k:.3g} and "
                f"M = log(b_u/b_l)/log(alpha) = {m:.3g} must both be >= 1"
            )
        out[idx] = sum(
            wk * wm * _mean_window_lattice(A, p, bl, a, ki, mi)
            for ki, wk in _brackets(k, lattice)
            for mi, wm in _brackets(m, lattice)
        )
    return result(out)


def throughput_markov(A, P, rtt, b_l, b_u, alpha=1.01, beta=0.86, lattice="interpolate"):
    """Markov model as a rate: E[W]/RTT packets/s."""
    return result(np.asarray(mean_window_markov(A, P, b_l, b_u, alpha, beta, lattice)) / rtt)


def burst_chain(p_a, b):
    """(A, P) of 004 (14) for average reduction rate ``p_a`` and burstiness ``b``.

    g = (1 - 2 p_a + p_a b)/(1 - p_a) solves p_a = (1-g)/(2-b-g). Raises ValueError unless
    0 < p_a < 1, 0 <= b < 1 (b = 1 makes BAD absorbing) and 0 <= g <= 1 (which needs
    b >= 2 - 1/p_a, a constraint only when p_a > 1/2).
    """
    p_a, b = float(p_a), float(b)
    if not 0.0 < p_a < 1.0:
        raise ValueError(f"p_a must be in (0, 1), got {p_a}")
    if not 0.0 <= b < 1.0:
        raise ValueError(f"burstiness b must be in [0, 1), got {b}")
    g = (1.0 - 2.0 * p_a + p_a * b) / (1.0 - p_a)
    if not 0.0 <= g <= 1.0:
        raise ValueError(
            f"p_a={p_a} is infeasible with b={b}: g = {g:.4g} is not a probability "
            f"(need b >= 2 - 1/p_a = {2.0 - 1.0 / p_a:.4g})"
        )
    A = np.array([[g, 1.0 - g], [1.0 - b, b]])
    P = np.diag([0.0, 1.0])
    return A, P


def mean_window_burst(p_a, b, b_l, b_u, alpha=1.01, beta=0.86, lattice="interpolate"):
    """E[W] (packets) for the chain of 004 (14); all arguments broadcast."""
    p_a, b, b_l, b_u, alpha, beta = as_arrays(p_a, b, b_l, b_u, alpha, beta)
    out = np.empty(p_a.shape)
    for idx in np.ndindex(p_a.shape):
        A, P = burst_chain(p_a[idx], b[idx])
        out[idx] = mean_window_markov(A, P, b_l[idx], b_u[idx], alpha[idx], beta[idx], lattice)
    return result(out)


def throughput_burst(p_a, b, rtt, b_l, b_u, alpha=1.01, beta=0.86, lattice="interpolate"):
    """Chain of 004 (14) as a rate: E[W]/RTT packets/s."""
    return result(np.asarray(mean_window_burst(p_a, b, b_l, b_u, alpha, beta, lattice)) / rtt)
