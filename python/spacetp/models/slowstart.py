"""Slow-start duration on long-delay links, Akan, Fang & Akyildiz (seed ``003``), eq. (2).

    t_SS = (ceil(log2 ssthresh) + 1) * RTT                                   003 (2)

Units: ``rtt`` and times in seconds, ``ssthresh`` and windows in packets (>= 1).

The window curve implied by (2) (the "round" model used throughout): time is divided into
rounds of one RTT, round n covering [n RTT, (n+1) RTT). The connection starts with a window of
one packet and slow start doubles it every round, so round n sends min(2^n, ssthresh) packets.
The window first reaches ssthresh in round n_ss = ceil(log2 ssthresh); that round is still slow
start, so slow start covers rounds 0..n_ss, i.e. n_ss + 1 rounds, which is the "+1" of (2).
Congestion avoidance starts at t_SS with one more packet per round: round n_ss + j has
ssthresh + j packets (j >= 1). An optional receiver window ``w_max`` caps the curve.

Check against 003's text: ssthresh = 20, RTT = 20 min gives 6 RTT = 7200 s ("At the end of
6 RTT, the slow start is terminated and congestion avoidance is called at t = 7200 s"), and the
window at the loss at t = 9500 s is 22, whose half takes 11 RTT to recover ("approximately
11 RTT"). Correction: 003 also says "approximately 2 hours ... for ssthresh = 20 and RTT = 40
min"; (2) gives 6 x 40 min = 4 h there. The 2 h figure matches RTT = 20 min, the value used in
the rest of the section, so "40 min" is taken to be a slip and (2) is implemented as printed.
"""

from __future__ import annotations

import numpy as np

from ._common import as_arrays, result

__all__ = ["cwnd_at", "cwnd_curve", "duration", "rounds"]

# log2 of an exact power of two computed from a float can land just above the integer;
# without the tolerance ceil() would add a spurious round.
_LOG_TOL = 1e-9


def rounds(ssthresh):
    """Number of slow-start rounds ceil(log2 ssthresh) + 1 (dimensionless)."""
    s = np.asarray(ssthresh, dtype=float)
    return result(np.ceil(np.log2(s) - _LOG_TOL) + 1.0)


def duration(rtt, ssthresh):
    """Slow-start duration t_SS in seconds, 003 (2)."""
    rtt, ssthresh = as_arrays(rtt, ssthresh)
    return result(rounds(ssthresh) * rtt)


def cwnd_at(t, rtt, ssthresh, w_max=None):
    """Congestion window (packets) in use at time ``t`` (s) in the round model of 003 (2).

    All arguments broadcast. Before t = 0 the window is 0 (nothing sent yet).
    """
    w_max = np.inf if w_max is None else w_max
    t, rtt, ssthresh, w_max = as_arrays(t, rtt, ssthresh, w_max)
    n = np.floor(t / rtt)
    n_ss = np.ceil(np.log2(ssthresh) - _LOG_TOL)
    slow = np.minimum(np.exp2(np.minimum(n, n_ss)), ssthresh)
    avoid = ssthresh + (n - n_ss)
    w = np.where(n <= n_ss, slow, avoid)
    w = np.minimum(w, w_max)
    return result(np.where(t < 0, 0.0, w))


def cwnd_curve(rtt, ssthresh, t_end, w_max=None):
    """Window-vs-time step curve for one connection (scalar parameters).

    Returns ``(t, cwnd)``: the start time (s) of every round in [0, t_end) and the window
    (packets) used in that round; plot with ``drawstyle="steps-post"``.
    """
    t = np.arange(0.0, float(t_end), float(rtt))
    return t, np.asarray(cwnd_at(t, rtt, ssthresh, w_max), dtype=float)
