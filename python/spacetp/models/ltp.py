"""Delivery time of blocks and files sent with LTP (Licklider Transmission Protocol, RFC 5326)
over a lossy link with a long delay: the retransmission-round model.

Sources
-------
* RFC 5326 (Ramadas, Burleigh, Farrell, 2008) for the protocol: a block's red part goes out as
  data segments, the last of them a checkpoint (CP); the receiver answers a CP with a report
  segment (RS) that claims what arrived (6.11); the sender acknowledges the RS with an RA and
  resends what the report does not claim, ending again with a CP (6.13); a CP or RS that is
  not answered in time is sent again by its timer (6.7, 6.8), whose interval is twice the
  one-way light time plus the processing time at both ends (6.2, 6.3, and section 3.1.3).
* NASA ION's choices where RFC 5326 leaves one, as this project's engine (crate
  ``spacetp-ltp``) follows them: a CP is sent again *as is*, with its data (ION
  ltpResendCheckpoint); the timer is sent + 2 x OWLT + own queuing latency + remote queuing
  latency (ION's setTimer, defaults 1 s + 1 s); the final report is resent by its own timer
  until an RA arrives; a segment of S bytes is lost with probability 1 - (1 - BER)^(8 S)
  (ION's segment error rate; this project's ``spacetp_ltp::config::segment_loss_rate``).
* The number of rounds: R. Lent, "Analysis of the block delivery time of the Licklider
  Transmission Protocol", IEEE Trans. Communications 67(1), 2019, doi
  10.1109/TCOMM.2018.2875717, and Y. Dong, C. Lin, "Number of round trips in LTP data block
  transmissions", J. Tsinghua Univ. (Sci. & Tech.) 55(11):1216-1220, 2015, model a block as
  rounds, "each one re-sending the segments lost during the previous round", and derive exact
  and approximate means of the number of rounds (their abstracts; the bodies were not
  available to us, so no equation of theirs is quoted here). With every segment lost
  independently, the rounds a block needs are the maximum of N geometric variables; its exact
  mean is the series (L4) (M. Spivey's answer to MathOverflow question 41604 gives the
  equivalent alternating sum). The bounds and the approximation (L5) follow the method of
  Spivey's blog post on the same question (mikespivey.wordpress.com): the series read as
  left and right Riemann sums of an integral that equals H_N / lambda, then first-order
  Euler-Maclaurin (the post's formulas did not survive in the copy we read, so they are
  re-derived here); B. Eisenberg, "On the expectation of the maximum of IID geometric random
  variables", Statistics & Probability Letters 78 (2008) 135-143, analyses the remainder.
* The file model over M export sessions is the mean-value (asymptotic-bound) argument of
  operational analysis (Lazowska et al., Quantitative System Performance, 1984, ch. 5): the
  link is a single server that every block needs for W seconds, a session is held for C_s
  seconds per block, so at most min(M / C_s, 1 / W) blocks per second get through. ION's LTP
  configuration guide (Burleigh, Gao, Torgerson, "A Guide to Configuring LTP in ION", item 12
  and 19) sizes the export-session count the same way: rate x round-trip light time / block
  size sessions keep the link busy, fewer cannot.

Equation numbers (L1)-(L13) are this module's own.

Units: ``rate`` in bits/s; ``rtt`` (the round-trip time of a CP -> RS exchange, 2 x OWLT plus
any turnaround), ``margin`` and every time in seconds; ``block``, ``segment``, ``header``,
``file`` in bytes; ``p``, ``p_ctrl`` and ``ber`` are probabilities; ``sessions`` is a count.

Model
-----
(L1) p = 1 - (1 - BER)^(8 S): a segment of S bytes is lost if any bit is wrong.
(L2) N = ceil(B / (S - h)) segments per block of B bytes, S the whole segment (header h
     included, as ION's max_segment_size); a segment takes tau = 8 (B/N + h) / rate seconds
     to send (the mean segment, the last one being short).
(L3) T = rtt + margin: the CP and RS timer interval (RFC 5326 6.2/6.3; ION: 2 OWLT + own +
     remote queuing latency, margin = 1 s + 1 s by default).
(L4) Independent rounds (``structure="independent"``, the literature's model): every data
     segment is lost independently in every round, so the rounds are the maximum of N
     geometric variables, E[R] = sum_{k>=0} (1 - (1 - p^k)^N), and the data segments sent are
     E[S] = N / (1 - p).
(L5) Bounds and approximation (Spivey's method), with lambda = ln(1/p) and H_N the N-th harmonic
     number: H_N / lambda <= E[R] <= 1 + H_N / lambda, E[R] ~ 1/2 + H_N / lambda (good for large
     N and p not small; at p -> 0 the bounds tend to [0, 1] and the approximation to 1/2
     while E[R] -> 1).
(L6) ION rounds (``structure="ion"``, this project's engine): a round's last segment is the CP
     and its timer sends it again until it arrives, so it is never among the next round's
     gaps; the others are lost independently with p. With f(0) = g(0) = 0 and
         f(n) = 1 + sum_{j=0}^{n-1} C(n-1, j) p^j (1-p)^(n-1-j) f(j),
         g(n) = n + sum_{j=0}^{n-1} C(n-1, j) p^j (1-p)^(n-1-j) g(j),
     E[R] = f(N) rounds and E[S] = g(N) data segments (CP resends by timer not counted).
(L7) Delivery of one block, from its first bit leaving to its last bit arriving:
         E[D] = tau E[S] + (E[R] - 1) rtt + rtt/2
                + E[R] p/(1-p) (T + tau) + (E[R] - 1) p_c/(1-p_c) T.
     Each round waits one rtt for its report, except the last, whose CP arrives rtt/2 after
     it leaves; each lost CP costs its timer and a resend, E[R] p/(1-p) of them; each lost
     report of a round that is not the last costs one timer (the receiver's RS timer resends
     it; the sender's CP timer fires first but its answer comes tau later). Exact within the
     round model by Wald's identity (per-round losses are independent of the round count).
(L8) The export session closes when the final report arrives:
         E[C_s] = E[D] + rtt/2 + p_c/(1-p_c) T.
(L9) The import session closes when the RA of the final report arrives; the report is resent
     on its timer until both it and its RA get through:
         E[C_r] = E[D] + rtt + (1 - (1-p_c)^2)/(1-p_c)^2 T.
(L10) Link time per block: W = tau (E[S] + E[R] p/(1-p) + (E[R] - 1) p_c/(1-p_c)) (data,
     CP resends, and the CP resend each lost report provokes).
(L11) A file of F bytes is n_b = ceil(F/B) blocks (the last one F - (n_b - 1) B bytes), handed
     to M export sessions in order. With k = ceil(n_b/M) blocks on the busiest session and
     j = n_b - (k-1) M the last block's place in its wave:
         session-limited  T_s = (k-1) E[C_s] + (j-1) N tau + E[D_last],
         link-limited     T_r = (n_b - 1) W + E[D_last],
         E[T_file] ~ max(T_s, T_r).
     Exact at p = 0 (the sessions start their blocks back to back and the link is either
     never idle or never contended); for p > 0 the random durations are replaced by their
     means, which is optimistic (the last of M sessions finishes later than the mean one):
     (L13) adds the tail.
(L13) The tail: the file ends with its slowest block, not its mean one. The blocks still open
     near the end, n_t = min(M, n_b, ceil(E[C_s] / W)) of them (one per session, and only
     those whose first round ends within a session cycle of the last one's: the extra
     rounds of earlier ones fit in the link time that follows them), need together the
     rounds of all their segments, E[R_t] = f((n_t - 1) N + N_last) (a maximum of maxima is
     the maximum over every segment; (L6) or (L4)); each round beyond the last block's own
     E[R] adds what a round costs in (L7), rtt + p/(1-p) (T + tau) + p_c/(1-p_c) T:
         E[T_file] ~ max(T_s, T_r) + (E[R_t] - E[R_last]) (rtt + p/(1-p) (T + tau) + p_c/(1-p_c) T).
     Zero at p = 0. Against the simulator (``ltp_vs_sim.py``, docs/dtn.md) it moved the
     worst ratio at PER 1e-3 from 2.6 (64 sessions, one wave of 20 blocks, RTT 2400 s) to
     0.90-1.05, and the model is no longer monotone in M by up to 1.6% where adding a session
     changes the last wave but not the number of waves.
(L12) Goodput 8 F / E[T_file] bits/s; in steady state min(M/E[C_s], 1/W) 8 B bits/s; the link
     stays busy from M* = E[C_s] / W sessions on. At p = 0, M* = 1 + rtt x rate / (8 (B + N h)),
     i.e. one more than ION's guide's rate x round-trip light time / block size (the block
     being sent also holds a session).

Assumptions (each one a thing to hold fixed in a simulation that checks the model)
--------------------------------------------------------------------------------
* Losses are independent, per segment, with probability p for data segments and p_c for
  report and RA segments (p_c = p by default: a per-frame erasure channel); no outages.
* The link is symmetric: the CP reaches the receiver rtt/2 after it leaves, and the report
  comes back in rtt/2. Control segments (RS, RA) take no link time; the receiver answers at
  once (the queuing latencies only enter the timer).
* One report segment per round (the engine splits a report of more than 20 claims).
* All data is red; a block is B bytes, formed before its session starts (no aggregation
  wait); blocks are independent.
* No session is canceled: the retransmission limits (ION's maxTimeouts, getMaxReports) are
  never reached, so the model is for loss rates where p^(limit+1) is negligible.
* A lost report makes the sender's CP timer resend the CP; the extra report it draws makes the
  engine resend the same gaps again (duplicates). The model counts the CP resend's link time
  but neither the duplicates' link time nor the second chance they give.
* The receiver has at least as many import sessions as the sender has export sessions plus
  the ones still waiting for a final RA (a new block's first segment otherwise finds no
  import session and is dropped).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._common import as_arrays, result

__all__ = [
    "BlockTimes",
    "block_delivery_time",
    "block_times",
    "file_delivery_time",
    "file_goodput",
    "harmonic",
    "rounds_ion",
    "rounds_max_geometric",
    "rounds_max_geometric_approx",
    "rounds_max_geometric_bounds",
    "segment_loss",
    "segment_time",
    "segments_per_block",
    "segments_sent",
    "sessions_to_fill",
    "steady_goodput",
    "timer_interval",
]

STRUCTURES = ("ion", "independent")
# ION's own queuing latency and the span's queuing latency, 1 s each by default.
DEFAULT_MARGIN = 2.0
DEFAULT_HEADER = 14.0
# The ION recursion (L6) is O(N x window); beyond this many segments use "independent".
MAX_ION_SEGMENTS = 100_000
# Terms of the series (L4) beyond which p is too close to 1 for it.
_MAX_SERIES_TERMS = 2_000_000
_EULER_GAMMA = 0.5772156649015329


# ------------------------------------------------------------------------------ validation


def _check(name, x, low=None, high=None, low_open=False, high_open=False, whole=False, hint=""):
    """Raise ValueError naming ``name`` if any element of ``x`` is outside the range."""
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) | ((high is None) & (x == np.inf))
    if low is not None:
        ok &= x > low if low_open else x >= low
    if high is not None:
        ok &= x < high if high_open else x <= high
    if whole:
        ok &= x == np.floor(x)
    if not np.all(ok):
        bad = x[~ok].flat[0] if x.ndim else x
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        rng = f"{'(' if low_open else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        kind = "a whole number in " if whole else ""
        raise ValueError(f"{name} = {float(bad):g} is out of range: allowed {kind}{rng}{hint}")
    return x


def _check_structure(structure):
    if structure not in STRUCTURES:
        raise ValueError(f"structure = {structure!r}: allowed {', '.join(map(repr, STRUCTURES))}")


# ------------------------------------------------------------------- link and segment (L1-L3)


def segment_loss(ber, size):
    """(L1) Probability that a segment of ``size`` bytes is lost at bit error rate ``ber``:
    1 - (1 - BER)^(8 size). ION caps this at 0.99; here it is not capped."""
    ber = _check("ber", ber, 0.0, 1.0, high_open=True)
    size = _check("size", size, 0.0, low_open=True)
    ber, size = as_arrays(ber, size)
    return result(-np.expm1(8.0 * size * np.log1p(-ber)))


def segments_per_block(block, segment, header=DEFAULT_HEADER):
    """(L2) N = ceil(block / (segment - header)): data segments in a block (bytes in)."""
    block = _check("block", block, 0.0, low_open=True)
    segment = _check("segment", segment, 0.0, low_open=True)
    header = _check("header", header, 0.0)
    block, segment, header = as_arrays(block, segment, header)
    if np.any(segment <= header):
        raise ValueError(
            f"segment must be larger than header (got segment={segment}, header={header} "
            "bytes): a segment carries its header and at least one byte of data"
        )
    return result(np.maximum(np.ceil(block / (segment - header) - 1e-12), 1.0))


def segment_time(rate, block, segment, header=DEFAULT_HEADER):
    """(L2) tau = 8 (block/N + header) / rate: seconds to send the mean segment."""
    rate = _check("rate", rate, 0.0, low_open=True)
    n = segments_per_block(block, segment, header)
    rate, block, header, n = as_arrays(rate, block, header, n)
    return result(8.0 * (block / n + header) / rate)


def timer_interval(rtt, margin=DEFAULT_MARGIN):
    """(L3) T = rtt + margin (s): the CP and RS timer (ION: 2 OWLT + own + remote queuing)."""
    rtt = _check("rtt", rtt, 0.0)
    margin = _check("margin", margin, 0.0)
    rtt, margin = as_arrays(rtt, margin)
    return result(rtt + margin)


# ------------------------------------------------------------------------- rounds (L4-L6)


def harmonic(n):
    """H_n = 1 + 1/2 + ... + 1/n for whole n >= 1 (asymptotic series above 64, error < 1e-15)."""
    n = _check("n", n, 1.0, whole=True)
    out = np.empty(n.shape)
    flat, res = n.ravel(), out.ravel()
    small = flat <= 64
    cums = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, 65))))
    res[small] = cums[flat[small].astype(int)]
    big = flat[~small]
    res[~small] = (
        np.log(big) + _EULER_GAMMA + 1 / (2 * big) - 1 / (12 * big**2) + 1 / (120 * big**4)
    )
    return result(out)


def rounds_max_geometric(n, p):
    """(L4) E[R] = sum_{k>=0} (1 - (1 - p^k)^n): mean number of rounds when each of ``n``
    segments is lost independently with probability ``p`` in every round (the maximum of n
    geometric variables). 1 at p = 0; 1/(1-p) for n = 1."""
    n = _check("n", n, 1.0)
    p = _check("p", p, 0.0, 1.0, high_open=True)
    n, p = as_arrays(n, p)
    lam = -np.log(np.where(p > 0, p, 0.5))
    needed = np.where(p > 0, (np.log(np.maximum(n, 1.0)) + 40.0) / lam, 1.0)
    if np.any(needed > _MAX_SERIES_TERMS):
        raise ValueError(
            f"p = {float(p[needed > _MAX_SERIES_TERMS].flat[0]):g} is too close to 1 for the "
            "series (L4): more than 2e6 terms"
        )
    total = np.ones(n.shape)  # the k = 0 term
    k0, chunk = 1, 512
    with np.errstate(divide="ignore"):
        logp = np.log(p)[..., None]
    while True:
        k = np.arange(k0, k0 + chunk, dtype=float)
        pk = np.exp(k * logp)  # p^k (0 at p = 0)
        terms = -np.expm1(n[..., None] * np.log1p(-pk))
        total = total + terms.sum(axis=-1)
        k0 += chunk
        if terms.size == 0 or np.all(terms[..., -1] < 1e-18):
            break
    return result(total)


def rounds_max_geometric_bounds(n, p):
    """(L5) Bounds (H_n/lambda, 1 + H_n/lambda), lambda = ln(1/p), on (L4): the series
    between its right and left Riemann sums of int_0^inf 1 - (1 - e^(-lambda x))^n dx."""
    h = harmonic(n)
    p = _check("p", p, 0.0, 1.0, high_open=True)
    h, p = as_arrays(h, p)
    with np.errstate(divide="ignore"):
        x = h / -np.log(p)
    x = np.where(p > 0, x, 0.0)
    return result(x), result(1.0 + x)


def rounds_max_geometric_approx(n, p):
    """(L5) E[R] ~ 1/2 + H_n / ln(1/p) (Euler-Maclaurin; poor when p is small or n is)."""
    low, _ = rounds_max_geometric_bounds(n, p)
    return result(0.5 + np.asarray(low))


def _ion_tables(n_max, p):
    """f(0..n_max), g(0..n_max) of (L6) for one scalar p."""
    f = np.zeros(n_max + 1)
    g = np.zeros(n_max + 1)
    if n_max >= 1:
        f[1], g[1] = 1.0, 1.0
    if p == 0.0:
        f[1:] = 1.0
        g[:] = np.arange(n_max + 1)
        return f, g
    logfact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n_max + 1)))))
    lp, lq = math.log(p), math.log1p(-p)
    for n in range(2, n_max + 1):
        m = n - 1  # segments other than the CP
        mu, sd = m * p, math.sqrt(m * p * (1.0 - p))
        lo = max(0, int(mu - 12.0 * sd - 30.0))
        hi = min(m, int(mu + 12.0 * sd + 30.0))
        j = np.arange(lo, hi + 1)
        w = np.exp(logfact[m] - logfact[j] - logfact[m - j] + j * lp + (m - j) * lq)
        f[n] = 1.0 + w @ f[lo : hi + 1]
        g[n] = n + w @ g[lo : hi + 1]
    return f, g


def _ion(n, p):
    """E[R] and E[S] of (L6), broadcast over whole n >= 1 and p in [0, 1)."""
    n = _check("n", n, 1.0, float(MAX_ION_SEGMENTS), whole=True)
    p = _check("p", p, 0.0, 1.0, high_open=True)
    n, p = as_arrays(n, p)
    rounds, sent = np.empty(n.shape), np.empty(n.shape)
    rf, sf, nf, pf = rounds.ravel(), sent.ravel(), n.ravel().astype(int), p.ravel()
    for pv in np.unique(pf):
        idx = pf == pv
        f, g = _ion_tables(int(nf[idx].max()), float(pv))
        rf[idx], sf[idx] = f[nf[idx]], g[nf[idx]]
    return rounds, sent


def rounds_ion(n, p):
    """(L6) E[R] for the engine's rule: a round's last segment (its CP) is resent by its timer
    until it arrives, the other ``n`` - 1 are lost independently with ``p``. n whole, <= 1e5."""
    return result(_ion(n, p)[0])


def segments_sent(n, p, structure="ion"):
    """E[S]: data segments sent per block of ``n`` segments over all rounds, CP resends by
    timer excluded: g(n) of (L6) for ``"ion"``, n/(1-p) for ``"independent"``."""
    _check_structure(structure)
    if structure == "ion":
        return result(_ion(n, p)[1])
    n = _check("n", n, 1.0)
    p = _check("p", p, 0.0, 1.0, high_open=True)
    n, p = as_arrays(n, p)
    return result(n / (1.0 - p))


def _rounds_and_sent(n, p, structure):
    _check_structure(structure)
    if structure == "ion":
        return _ion(n, p)
    return np.asarray(rounds_max_geometric(n, p)), np.asarray(segments_sent(n, p, structure))


# ------------------------------------------------------------------------- one block (L7-L10)


class BlockTimes(NamedTuple):
    """Expected times (s) and counts for one block; see (L6)-(L10)."""

    delivery: np.ndarray  # E[D]: first bit out -> last bit in
    sender_close: np.ndarray  # E[C_s]: first bit out -> final report in (export slot free)
    receiver_close: np.ndarray  # E[C_r]: first bit out -> final RA in (import slot free)
    link_time: np.ndarray  # W: seconds of link time the block uses
    first_round: np.ndarray  # N tau: the first round's sending time
    rounds: np.ndarray  # E[R]
    segments: np.ndarray  # E[S]
    n: np.ndarray  # N


def block_times(
    rate,
    rtt,
    p,
    block=64000.0,
    segment=1400.0,
    header=DEFAULT_HEADER,
    margin=DEFAULT_MARGIN,
    p_ctrl=None,
    structure="ion",
):
    """(L6)-(L10) for one block of ``block`` bytes: a :class:`BlockTimes` of arrays.

    ``rate`` bits/s, ``rtt`` s (CP -> RS round trip), ``p`` data-segment loss probability,
    ``segment`` whole segment and ``header`` its non-data bytes, ``margin`` s added to rtt
    for the timers, ``p_ctrl`` the loss probability of report and RA segments (default p),
    ``structure`` ``"ion"`` (L6) or ``"independent"`` (L4).
    """
    _check_structure(structure)
    rate = _check("rate", rate, 0.0, low_open=True)
    rtt = _check("rtt", rtt, 0.0)
    p = _check("p", p, 0.0, 1.0, high_open=True)
    p_ctrl = p if p_ctrl is None else _check("p_ctrl", p_ctrl, 0.0, 1.0, high_open=True)
    n = np.asarray(segments_per_block(block, segment, header))
    tau = np.asarray(segment_time(rate, block, segment, header))
    t = np.asarray(timer_interval(rtt, margin))
    rate, rtt, p, p_ctrl, n, tau, t = as_arrays(rate, rtt, p, p_ctrl, n, tau, t)
    rounds, sent = _rounds_and_sent(n, p, structure)
    cp_lost = rounds * p / (1.0 - p)  # E[R] p/(1-p) CP timeouts
    rs_lost = (rounds - 1.0) * p_ctrl / (1.0 - p_ctrl)  # lost reports before the last round
    delivery = tau * sent + (rounds - 1.0) * rtt + rtt / 2 + cp_lost * (t + tau) + rs_lost * t
    sender_close = delivery + rtt / 2 + p_ctrl / (1.0 - p_ctrl) * t
    both = (1.0 - p_ctrl) ** 2
    receiver_close = delivery + rtt + (1.0 - both) / both * t
    link = tau * (sent + cp_lost + rs_lost)
    return BlockTimes(
        *(result(x) for x in (delivery, sender_close, receiver_close, link, n * tau)),
        result(rounds),
        result(sent),
        result(n),
    )


def block_delivery_time(rate, rtt, p, block=64000.0, segment=1400.0, **kw):
    """(L7) E[D] (s): expected time from a block's first bit leaving to its last bit arriving.
    Keywords as :func:`block_times`."""
    return block_times(rate, rtt, p, block, segment, **kw).delivery


# ------------------------------------------------------------------------------ files (L11-L12)


def file_delivery_time(
    file,
    rate,
    rtt,
    p,
    block=64000.0,
    segment=1400.0,
    header=DEFAULT_HEADER,
    margin=DEFAULT_MARGIN,
    sessions=10.0,
    p_ctrl=None,
    structure="ion",
):
    """(L11) with the tail (L13), E[T_file] (s): a file of ``file`` bytes cut into blocks of
    ``block`` bytes over ``sessions`` export sessions, from the first bit leaving to the last
    block delivered."""
    file = _check("file", file, 0.0, low_open=True)
    sessions = _check(
        "sessions", sessions, 1.0, whole=True, hint=" (sweep it as a list: sessions=1,2,5,10)"
    )
    block_ = _check("block", block, 0.0, low_open=True)
    kw = dict(header=header, margin=margin, p_ctrl=p_ctrl, structure=structure)
    full = block_times(rate, rtt, p, block_, segment, **kw)
    file, block_, m = as_arrays(file, block_, sessions)
    n_blocks = np.maximum(np.ceil(file / block_ - 1e-12), 1.0)
    last = block_times(rate, rtt, p, file - (n_blocks - 1.0) * block_, segment, **kw)
    k = np.ceil(n_blocks / m - 1e-12)
    j = n_blocks - (k - 1.0) * m
    t_sessions = (k - 1.0) * full.sender_close + (j - 1.0) * full.first_round + last.delivery
    t_link = (n_blocks - 1.0) * full.link_time + last.delivery
    # (L13) The blocks still open near the end: one per session, at most those whose first
    # round ends within one session cycle of the last (earlier ones' extra rounds fit in the
    # link time that follows them).
    tail = np.minimum(np.minimum(m, n_blocks), np.ceil(full.sender_close / full.link_time))
    extra = _tail_rounds(full, last, tail, rtt, p, margin, p_ctrl, structure)
    return result(np.maximum(t_sessions, t_link) + extra)


def _tail_rounds(full, last, j, rtt, p, margin, p_ctrl, structure):
    """(L13) The rounds the j blocks still open at the end need beyond the last block's own,
    each at the cost of a round of (L7). Zero at p = 0."""
    n_wave = (j - 1.0) * full.n + last.n
    rounds_wave, _ = _rounds_and_sent(n_wave, p, structure)
    pc = p if p_ctrl is None else p_ctrl
    t = np.asarray(timer_interval(rtt, margin))
    tau = last.first_round / last.n
    per_round = rtt + p / (1.0 - p) * (t + tau) + pc / (1.0 - pc) * t
    return np.maximum(rounds_wave - last.rounds, 0.0) * per_round


def file_goodput(file, rate, rtt, p, **kw):
    """(L12) 8 file / E[T_file] in bits/s; keywords as :func:`file_delivery_time`."""
    t = np.asarray(file_delivery_time(file, rate, rtt, p, **kw))
    return result(8.0 * np.asarray(file, dtype=float) / t)


def steady_goodput(rate, rtt, p, block=64000.0, segment=1400.0, sessions=10.0, **kw):
    """(L12) min(M / E[C_s], 1 / W) 8 block bits/s: a long file's goodput."""
    sessions = _check("sessions", sessions, 1.0)
    bt = block_times(rate, rtt, p, block, segment, **kw)
    blocks_per_s = np.minimum(
        sessions / np.asarray(bt.sender_close), 1.0 / np.asarray(bt.link_time)
    )
    return result(8.0 * np.asarray(block, dtype=float) * blocks_per_s)


def sessions_to_fill(rate, rtt, p, block=64000.0, segment=1400.0, **kw):
    """(L12) M* = E[C_s] / W: export sessions from which the link is never idle."""
    bt = block_times(rate, rtt, p, block, segment, **kw)
    return result(np.asarray(bt.sender_close) / np.asarray(bt.link_time))
