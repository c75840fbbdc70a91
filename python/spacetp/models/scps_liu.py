"""SCPS-TP steady-state throughput, Liu & Liu, "Modeling the Steady State Throughput of
SCPS-TP" (seed ``000``), made self-consistent.

Units: ``rtt`` (R, mean RTT), ``ts`` (T_s, the SNACK delay), ``t0`` (T_0, first timeout) in
seconds; ``p`` per-packet loss probability; windows (``w0``) in packets; throughputs in
packets/s; "packets" counts below are expected numbers of packets.

The model (section II of 000)
-----------------------------
* No loss, (1): the Vegas rate beta/(R - baseRTT) (:func:`no_loss_throughput`).
* No timeout, (2)-(10): a "transport period" (TPP) = one fast-retransmit/recovery round AB
  (W_0 packets, duration R, plus T_s if another packet of that window is lost and SNACK is
  needed), a ramp BC from 3W_0/4 to W_0 at one packet per round, and a plateau CD at W_0; from B
  to the next loss at D, 1/p packets are sent.
* Full model, (11)-(24): an interval = a start period AD (slow start from 2 packets, doubling
  every other round, to ssthresh W_0/2, then +1 per round to W_0, then flat, ending with a loss
  after 1/p packets) + n TPPs + a timeout period; the probability that a loss ends in a timeout
  is p_TO = 1/(1+n).

What W_0 is
-----------
000 never gives W_0 in closed form. Here W_0 is the window at a loss,
W_0 = min(w0, W_p(p)), where ``w0`` is the ceiling the window would hold without loss - the
Vegas equilibrium window beta R/(R - baseRTT) (:func:`spacetp.models.vegas.equilibrium_window`)
or the receiver window, whichever is smaller (default: no ceiling) - and W_p(p) is the peak of
the loss-limited sawtooth, the W at which the ramp BC uses up the 1/p packets:
7 W_p^2/32 - W_p/8 = 1/p. With W_0 <= W_p the plateau CD never has a negative length, which
the paper's formulas allow at high loss (e.g. p = 1e-2 and W_0 = 258 gives D_CD < 0 in (10)).
So the p -> 0 limit is the window-limited rate w0/R - equal to (1) when w0 is the Vegas
equilibrium window - and, without a ceiling, the no-timeout rate tends to sqrt(7/(2p))/R.
The functions of the individual equations take W_0 as given.

Corrections to 000 (each one is needed for the equations to agree with each other)
---------------------------------------------------------------------------------
C1 (4): the sum "i = 3/4 W_0 .. W_0" = 7W_0^2/32 contradicts (5) (W_0/4 rounds) and (10),
   whose "+1/8" term comes from P_BC = sum of the W_0/4 windows 3W_0/4, ..., W_0 - 1 =
   7 W_0^2/32 - W_0/8. We use the latter, so (7) and (10) agree.
C2 (6): (6) repeats (5). It should read P_BD = 1/p (expected packets from B up to and
   including the next loss); this is what (7), (8) and (10) use.
C3 (8): "re-transmitted" should be "transmitted"; with C2, P_AB + P_BC + P_CD =
   W_0 + P_BD = W_0 + 1/p, as (8) states.
C4 (13)-(14): "log" must be log2 in both: (13) is 2(2 + 4 + ... + W_0/4) = W_0 - 4, i.e.
   2^{log2 W_0} - 4, and (14) counts two rounds for each of the log2(W_0/4) window sizes
   2, 4, ..., W_0/4 (reading (14) as a natural or decimal log gives a different duration).
C5 (15): same discrete convention as C1: the W_0/2 rounds of (16) have windows W_0/2, ...,
   W_0 - 1, so P_BC = 3W_0^2/8 - W_0/4 (the paper's 3W_0^2/8 counts W_0/2 + 1 windows).
C6 (18): D_CD = P_CD/W_0 lacks the factor R (compare (7)); D_CD = R P_CD/W_0.
C7 (12)-(18) when P_CD < 0: the loss at D comes before the window reaches W_0 (always the
   case when W_0 = W_p, since 3W_p^2/8 > 7W_p^2/32). D_AD is then the time to send 1/p
   packets along the same trajectory, cut where the packets run out (:func:`start_duration`);
   it equals (14) + (16) + (18) whenever P_CD >= 0.
C8 (20): 000 defines p_TO = 1/(1+n) as the probability that a loss ends in a timeout, i.e.
   conditional on the window containing a loss, but (20) is the unconditional probability for
   any window of W_0 packets (most windows have no loss), which makes p_TO ~ W_0 p^2 instead
   of ~ p. We divide by P(at least one loss) = 1 - (1-p)^{W_0}. The i = W_0 term of the sum
   also double-counts "all packets lost" (already the p^{W_0} term); we sum i = 1 .. W_0 - 1.
   The binomial sum has the closed form (1 - p + p^2)^{W_0} - (1-p)^{W_0} (valid for
   non-integer W_0 too). ``conditional=False`` gives (20) exactly as printed.
C9 (22): p[M = k] = p^{2k} does not sum to 1. With the first timeout given and each further
   one happening when both packets sent after it are lost (probability p^2),
   P[M = k] = p^{2(k-1)} (1 - p^2), k >= 1.
C10 (23) is the first-order term of the exact mean duration with the timer doubling up to
   64 T_0, E[D_TO] = T_0 f(p^2)/(1 - p^2) with PFTK's f (the same series as PFTK's timeout
   sequence with p^2 in place of p). We use the exact value; ``first_order=True`` gives (23).
C11 (24): the sentence after (24) cites (15), (17), (19), (9), (20), (21); the durations are
   (14), (16), (18), n is (19) with (20), D_TPP is (9) and the timeout term is (23).
Also note T_0 is defined in 000 as 2 SRTT + 4 RTTVAR (i.e. 2R for a constant RTT); here T_0 is
a parameter.
"""

from __future__ import annotations

import numpy as np

from ._common import as_arrays, result, to_bits_per_second
from .pftk import backoff_factor
from .vegas import loss_limited_window, no_loss_throughput, ramp_packets, window_at_loss

__all__ = [
    "loss_limited_window",
    "no_loss_throughput",
    "no_timeout_throughput",
    "start_ca_duration",
    "start_ca_packets",
    "start_cd_duration",
    "start_cd_packets",
    "start_duration",
    "start_packets",
    "start_ss_duration",
    "start_ss_packets",
    "throughput",
    "timeout_count_pmf",
    "timeout_duration",
    "timeout_probability",
    "to_bits_per_second",
    "tpp_ab_duration",
    "tpp_ab_packets",
    "tpp_bc_duration",
    "tpp_bc_packets",
    "tpp_bd_packets",
    "tpp_cd_duration",
    "tpp_count",
    "tpp_duration",
    "tpp_packets",
    "window_at_loss",
]

# ---------------------------------------------------------------- no-timeout model, (2)-(10)


def tpp_ab_packets(w0):
    """(2): P_AB = W_0, the recovery round sends one window."""
    return result(np.asarray(w0, dtype=float))


def tpp_ab_duration(rtt, p, w0, ts):
    """(3): D_AB = R + (1 - (1-p)^{W_0 - 1}) T_s (SNACK delay only if another packet of the
    window is lost)."""
    rtt, p, w0, ts = as_arrays(rtt, p, w0, ts)
    return result(rtt - np.expm1((w0 - 1.0) * np.log1p(-p)) * ts)


def tpp_bc_packets(w0):
    """(4), corrected (C1): P_BC = 7 W_0^2/32 - W_0/8."""
    return ramp_packets(w0)


def tpp_bc_duration(rtt, w0):
    """(5): D_BC = R W_0/4."""
    rtt, w0 = as_arrays(rtt, w0)
    return result(rtt * w0 / 4.0)


def tpp_bd_packets(p):
    """(6), corrected (C2): P_BD = 1/p."""
    p = np.asarray(p, dtype=float)
    return result(1.0 / p)


def tpp_cd_duration(rtt, p, w0):
    """(7): D_CD = R (P_BD - P_BC)/W_0."""
    rtt, p, w0 = as_arrays(rtt, p, w0)
    return result(rtt * (tpp_bd_packets(p) - tpp_bc_packets(w0)) / w0)


def tpp_packets(p, w0):
    """(8): P_TPP = W_0 + 1/p."""
    p, w0 = as_arrays(p, w0)
    return result(w0 + 1.0 / p)


def tpp_duration(rtt, p, w0, ts):
    """(9): D_TPP = D_AB + D_BC + D_CD."""
    return result(
        tpp_ab_duration(rtt, p, w0, ts) + tpp_bc_duration(rtt, w0) + tpp_cd_duration(rtt, p, w0)
    )


def no_timeout_throughput(rtt, p, w0=np.inf, ts=0.0):
    """(10): P_TPP/D_TPP in packets/s with W_0 = min(w0, W_p(p)).

    ``w0`` is the loss-free window ceiling (packets, e.g. the Vegas equilibrium window);
    ``ts`` the SNACK delay T_s (s). p = 0 gives the window-limited limit w0/R.
    """
    rtt, p, w0, ts = as_arrays(rtt, p, w0, ts)
    w = window_at_loss(p, w0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = tpp_packets(p, w) / tpp_duration(rtt, p, w, ts)
    return result(np.where(p > 0, rate, w / rtt))


# ------------------------------------------------------------ start period AD, (12)-(18)


def start_packets(p):
    """(12): P_AD = 1/p."""
    return tpp_bd_packets(p)


def start_ss_packets(w0):
    """(13), corrected (C4): P_AB = 2(2 + 4 + ... + W_0/4) = W_0 - 4 (0 if W_0 < 4)."""
    w0 = np.asarray(w0, dtype=float)
    return result(np.maximum(w0 - 4.0, 0.0))


def start_ss_duration(rtt, w0):
    """(14), corrected (C4): D_AB = 2 log2(W_0/4) R (0 if W_0 < 4)."""
    rtt, w0 = as_arrays(rtt, w0)
    return result(2.0 * np.maximum(np.log2(w0 / 4.0), 0.0) * rtt)


def start_ca_packets(w0):
    """(15), corrected (C5): P_BC = 3 W_0^2/8 - W_0/4."""
    w0 = np.asarray(w0, dtype=float)
    return result(3.0 * w0**2 / 8.0 - w0 / 4.0)


def start_ca_duration(rtt, w0):
    """(16): D_BC = R W_0/2."""
    rtt, w0 = as_arrays(rtt, w0)
    return result(rtt * w0 / 2.0)


def start_cd_packets(p, w0):
    """(17): P_CD = 1/p - P_AB - P_BC (negative when the loss comes before W_0, see C7)."""
    p, w0 = as_arrays(p, w0)
    return result(1.0 / p - start_ss_packets(w0) - start_ca_packets(w0))


def start_cd_duration(rtt, p, w0):
    """(18), corrected (C6): D_CD = R P_CD/W_0."""
    rtt, p, w0 = as_arrays(rtt, p, w0)
    return result(rtt * start_cd_packets(p, w0) / w0)


def start_duration(rtt, p, w0):
    """D_AD (s): time to send 1/p packets after a timeout (C7).

    Trajectory: slow start from 2 packets doubling every other round (n packets take
    2 log2(1 + n/4) rounds), then one more packet per round from W_0/2 (m packets take
    r rounds with r W_0/2 + r(r-1)/2 = m), then W_0 per round. Equals (14) + (16) + (18)
    whenever the plateau is reached.
    """
    rtt, p, w0 = as_arrays(rtt, p, w0)
    n = 1.0 / p
    n_ss = start_ss_packets(w0)
    n_ca = start_ca_packets(w0)
    r_ss = start_ss_duration(1.0, w0)
    h = (w0 - 1.0) / 2.0
    with np.errstate(invalid="ignore"):
        in_ss = 2.0 * np.log2(1.0 + n / 4.0)
        in_ca = r_ss + np.sqrt(h**2 + 2.0 * np.maximum(n - n_ss, 0.0)) - h
        in_cd = r_ss + w0 / 2.0 + (n - n_ss - n_ca) / w0
    rounds = np.where(n <= n_ss, in_ss, np.where(n <= n_ss + n_ca, in_ca, in_cd))
    return result(rtt * rounds)


# ------------------------------------------------------------------ timeouts, (19)-(23)


def tpp_count(p_to):
    """(19): n = (1 - p_TO)/p_TO, expected number of TPPs per interval."""
    p_to = np.asarray(p_to, dtype=float)
    with np.errstate(divide="ignore"):
        return result((1.0 - p_to) / p_to)


def timeout_probability(p, w0, conditional=True):
    """(20): probability that a loss leads to a timeout, window W_0.

    ``conditional=True`` (default, correction C8): P(all W_0 lost, or 1 <= i < W_0 lost and
    all i retransmissions lost | at least one loss). ``conditional=False``: (20) as printed,
    p^{W_0} + sum_{i=1}^{W_0} C(W_0, i) p^i (1-p)^{W_0-i} p^i.
    """
    p, w0 = as_arrays(p, w0)
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # sum_{i=0}^{W} C(W,i) (p^2)^i q^(W-i) = (1-p+p^2)^W; subtract the i = 0 term q^W.
        # q^W expm1(...) avoids cancellation for small p; the direct form is exact otherwise.
        small = q**w0 * np.expm1(w0 * np.log1p(p**2 / q))
        direct = (1.0 - p + p**2) ** w0 - q**w0
        binom = np.where(p < 0.5, small, direct)
        if not conditional:
            return result(p**w0 + binom)
        joint = p**w0 + binom - p ** (2.0 * w0)
        any_loss = -np.expm1(w0 * np.log1p(-p))
        p_to = np.where(p > 0, joint / any_loss, 0.0)
    return result(np.clip(p_to, 0.0, 1.0))


def timeout_count_pmf(k, p):
    """(22), corrected (C9): P[M = k] = p^{2(k-1)} (1 - p^2) for k = 1, 2, ..."""
    k, p = as_arrays(k, p)
    return result(np.where(k >= 1, p ** (2.0 * (k - 1.0)) * (1.0 - p**2), 0.0))


def timeout_duration(p, t0, first_order=False):
    """(23): mean timeout period D_TO (s).

    Default (C10): T_0 f(p^2)/(1 - p^2), the exact mean with doubling up to 64 T_0.
    ``first_order=True``: (23) as printed, T_0 + 2 p^2 T_0.
    """
    p, t0 = as_arrays(p, t0)
    if first_order:
        return result(t0 * (1.0 + 2.0 * p**2))
    q = p**2
    return result(t0 * backoff_factor(q) / (1.0 - q))


# ---------------------------------------------------------------------- full model, (24)


def throughput(rtt, p, t0, w0=np.inf, ts=0.0, conditional=True, first_order=False):
    """(24): full-model throughput in packets/s, W_0 = min(w0, W_p(p)).

    Lambda = (P_AD + n P_TPP)/(D_AD + n D_TPP + D_TO), evaluated as
    (p_TO P_AD + (1-p_TO) P_TPP)/(p_TO (D_AD + D_TO) + (1-p_TO) D_TPP), which is the same
    with n from (19) and stays finite as p_TO -> 0. ``conditional`` selects the form of (20)
    (C8), ``first_order`` that of (23) (C10). p = 0 gives w0/R.
    """
    rtt, p, t0, w0, ts = as_arrays(rtt, p, t0, w0, ts)
    w = window_at_loss(p, w0)
    p_to = timeout_probability(p, w, conditional=conditional)
    with np.errstate(divide="ignore", invalid="ignore"):
        packets = p_to * start_packets(p) + (1.0 - p_to) * tpp_packets(p, w)
        time = p_to * (start_duration(rtt, p, w) + timeout_duration(p, t0, first_order)) + (
            1.0 - p_to
        ) * tpp_duration(rtt, p, w, ts)
        rate = packets / time
    return result(np.where(p > 0, rate, w / rtt))
