"""PFTK model of TCP Reno steady-state throughput.

J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Reno performance: a simple model and
its empirical validation", IEEE/ACM Trans. Networking 8(2), 2000 (reference [7] of Akan et al.,
seed ``003``). Equation numbers "PFTK (n)" are those of the ToN paper; "003 (1)" is Akan et al.

Units: ``rtt`` and ``t0`` in seconds; ``p`` is the probability that a packet is lost
(dimensionless, per packet); windows (``w_max``) in packets; ``b`` is the number of packets
acknowledged by one ACK (2 with delayed ACKs). Every throughput is returned in packets/s; use
:func:`to_bits_per_second` with the segment size in bytes to get bits/s.

Functions
---------
expected_window(p, b)
    E[W_u], the unconstrained mean window at a loss indication, PFTK (13):
    E[W_u] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2).
timeout_probability(p, w)
    Q^(p, w), probability that a loss indication in a window of w packets is a timeout:
    min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)), and 1 for w <= 3.
backoff_factor(p)
    f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6, PFTK (28): mean length of a run of
    timeouts in units of T0/(1-p), with the timer doubling up to 64 T0.
full_throughput(rtt, p, t0, w_max=None, b=2)
    The full model, PFTK (31):
      if E[W_u] < W_max:
        B = ((1-p)/p + E[W_u] + Q^(E[W_u])/(1-p))
            / (RTT (b/2 E[W_u] + 1) + Q^(E[W_u]) T0 f(p)/(1-p))
      else:
        B = ((1-p)/p + W_max + Q^(W_max)/(1-p))
            / (RTT (b/8 W_max + (1-p)/(p W_max) + 2) + Q^(W_max) T0 f(p)/(1-p))
approx_throughput(rtt, p, t0, b=1, w_max=None)
    The approximate model, min(W_max/RTT, 1/(RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8))
    p (1+32p^2))). With b = 1 and no W_max this is exactly 003 (1), which is why b defaults
    to 1 here (003 states the formula without b).
mathis_throughput(rtt, p, b=1)
    Square-root law (Mathis et al. 1997; PFTK's fast-retransmit-only limit):
    B = 1/(RTT sqrt(2bp/3)) = sqrt(3/(2bp))/RTT.
throughput(rtt, p, t0, approx=False, w_max=None, b=2)
    Dispatch to the full or approximate model.

Numerics: the full model is evaluated with numerator and denominator multiplied by p(1-p),
which is algebraically identical but finite at p = 0 (limit W_max/RTT when W_max is finite,
infinity otherwise) and at p = 1 (limit 1/(64 T0)).

Note on 003's numbers: "At RTT = 1000 s ... 308 b/s for a segment size of 1 KB" with
p = 1e-3 is reproduced by 003 (1) only with 1 KB = 1000 bytes and 1.93 RTT <= T0 <= 3.38 RTT
(1024-byte segments would need T0 of about 13 RTT). We take T0 = 3 RTT, the first RTO computed
after one RTT sample (SRTT + 4 RTTVAR with RTTVAR = RTT/2, RFC 6298 and ns-2), which gives
307.8 b/s.
"""

from __future__ import annotations

import numpy as np

from ._common import as_arrays, result, to_bits_per_second

__all__ = [
    "approx_throughput",
    "backoff_factor",
    "expected_window",
    "full_throughput",
    "mathis_throughput",
    "throughput",
    "timeout_probability",
    "to_bits_per_second",
]


def _one_minus_power(p, n):
    """1 - (1-p)^n without cancellation for small p."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.expm1(n * np.log1p(-p))


def _p_times_window(p, b):
    """p * E[W_u] from PFTK (13), finite at p = 0 (where it is 0)."""
    c = (2.0 + b) / (3.0 * b)
    return p * c + np.sqrt(8.0 * p * (1.0 - p) / (3.0 * b) + (p * c) ** 2)


def expected_window(p, b=2):
    """Unconstrained mean window E[W_u] in packets, PFTK (13). Infinite at p = 0."""
    p, b = as_arrays(p, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(p > 0, _p_times_window(p, b) / p, np.inf)
    return result(w)


def timeout_probability(p, w):
    """Q^(p, w): probability that a loss indication is a timeout, window w packets.

    Equal to 1 for w <= 3 (too few packets to produce three duplicate ACKs); the p -> 0 limit
    min(1, 3/w) is used at p = 0, where the formula is 0/0.
    """
    p, w = as_arrays(p, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        q3 = 1.0 - _one_minus_power(p, 3.0)  # (1-p)^3
        num = _one_minus_power(p, 3.0) * (1.0 + q3 * _one_minus_power(p, w - 3.0))
        ratio = np.where(p > 0, num / _one_minus_power(p, w), 3.0 / w)
    q = np.where(w <= 3.0, 1.0, np.minimum(1.0, ratio))
    return result(q)


def backoff_factor(p):
    """f(p) of PFTK (28): timeout-run length factor with backoff capped at 64 T0."""
    p = np.asarray(p, dtype=float)
    return result(1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6)


def full_throughput(rtt, p, t0, w_max=None, b=2):
    """Full PFTK model, PFTK (31), in packets/s.

    ``w_max`` (receiver window, packets) of None or inf means unlimited. ``b`` packets per ACK.
    """
    w_max = np.inf if w_max is None else w_max
    rtt, p, t0, w_max, b = as_arrays(rtt, p, t0, w_max, b)
    f = backoff_factor(p)
    pw = _p_times_window(p, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_u = np.where(p > 0, pw / p, np.inf)
    unlimited = (w_u < w_max) | ~np.isfinite(w_max)

    # Window-unconstrained branch, numerator and denominator times p(1-p).
    q_u = timeout_probability(p, w_u)
    num_u = (1 - p) ** 2 + (1 - p) * pw + p * q_u
    den_u = (1 - p) * rtt * (b / 2 * pw + p) + p * q_u * t0 * f

    # Receiver-window-limited branch, same scaling; finite w_max only.
    wm = np.where(np.isfinite(w_max), w_max, 1.0)
    q_m = timeout_probability(p, wm)
    num_m = (1 - p) ** 2 + p * (1 - p) * wm + p * q_m
    den_m = (1 - p) * rtt * (p * b * wm / 8 + (1 - p) / wm + 2 * p) + p * q_m * t0 * f

    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(unlimited, num_u / den_u, num_m / den_m)
    return result(rate)


def approx_throughput(rtt, p, t0, b=1, w_max=None):
    """Approximate PFTK model in packets/s; with b=1 and no w_max exactly 003 (1).

    T = 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)), capped at
    W_max/RTT when ``w_max`` is given.
    """
    w_max = np.inf if w_max is None else w_max
    rtt, p, t0, b, w_max = as_arrays(rtt, p, t0, b, w_max)
    den = rtt * np.sqrt(2 * b * p / 3) + t0 * np.minimum(1, 3 * np.sqrt(3 * b * p / 8)) * p * (
        1 + 32 * p**2
    )
    with np.errstate(divide="ignore"):
        rate = np.minimum(1.0 / den, w_max / rtt)
    return result(rate)


def mathis_throughput(rtt, p, b=1):
    """Square-root law in packets/s: sqrt(3/(2bp))/RTT (C = sqrt(3/2) for b = 1)."""
    rtt, p, b = as_arrays(rtt, p, b)
    with np.errstate(divide="ignore"):
        return result(1.0 / (rtt * np.sqrt(2 * b * p / 3)))


def throughput(rtt, p, t0, approx=False, w_max=None, b=2):
    """PFTK throughput in packets/s: full model PFTK (31), or the approximation if ``approx``.

    Note the default b=2 here (delayed ACKs, as in PFTK); 003 (1) is ``approx=True, b=1``.
    """
    if approx:
        return approx_throughput(rtt, p, t0, b=b, w_max=w_max)
    return full_throughput(rtt, p, t0, w_max=w_max, b=b)
