"""TCP Vegas throughput: the no-loss model of Samios & Vernon (2003) as cited by Liu & Liu
(seed ``000``, eq. (1)), and a loss model derived to be consistent with it.

Units: ``rtt`` (R, the mean RTT) and ``base_rtt`` (the minimum RTT) in seconds; ``beta`` is
Vegas' upper threshold in packets (Vegas keeps between alpha and beta of its packets queued;
ns-2 and Brakmo et al. use alpha = 1, beta = 3); windows in packets; ``p`` is the per-packet
loss probability; ``capacity`` in packets/s. Throughputs are in packets/s.

No-loss model, 000 (1)
----------------------
    Lambda_no-loss = beta / (R - baseRTT)                                      000 (1)

Vegas compares expected and actual rate, Diff = (W/baseRTT - W/R) baseRTT packets, and stops
growing once Diff reaches beta, so at equilibrium W (R - baseRTT)/R = beta and the rate W/R is
(1). Equivalently (Little's law) the beta queued packets wait R - baseRTT each. The equilibrium
window is therefore W_e = beta R/(R - baseRTT). For a single flow on a bottleneck of capacity C
with enough buffer, R = baseRTT + beta/C, W_e = C baseRTT + beta and (1) gives exactly C
(:func:`equilibrium_rtt`).

Loss model (derived here; Samios & Vernon's own text was not available to us)
----------------------------------------------------------------------------
Assumptions, following 000 section II-B ("TP performs the same as TCP Vegas", same method):
  1. Time advances in rounds of one mean RTT R (the same R as in (1)); a round sends a window.
  2. Packets are lost independently with probability p.
  3. Every loss is detected by duplicate ACKs (Vegas retransmits on the first duplicate ACK
     once its fine-grained timer has expired); there are no timeouts. Recovery takes one round
     in which W_0 packets (the window at the loss) are sent.
  4. After recovery the window is cut by a quarter to 3 W_0/4 (Vegas' decrease on a
     retransmission; 000 uses the same factor) and grows by one packet per round - the queue
     has drained, so Diff < alpha - until it reaches W_e, where it stays (Diff back in
     [alpha, beta]).
  5. From the end of recovery up to and including the next lost packet, 1/p packets are sent
     on average (geometric number of packets up to a loss).

The ramp from 3W/4 to W takes W/4 rounds with windows 3W/4, ..., W-1, i.e.
ramp_packets(W) = 7 W^2/32 - W/8 packets. If 1/p >= ramp_packets(W_e) the window reaches W_e
before the next loss and W_0 = W_e. Otherwise losses come during the ramp, the window follows
a sawtooth whose peak W_p solves ramp_packets(W_p) = 1/p:

    W_p = (16/7) (1/8 + sqrt(1/64 + 7/(8p)))

so in all cases W_0 = min(W_e, W_p). One cycle sends W_0 + 1/p packets in
R + R W_0/4 + R (1/p - ramp_packets(W_0))/W_0 seconds, hence

    Lambda = (W_0 + 1/p) / (R (9/8 + W_0/32 + 1/(p W_0)))

Consistency with (1): as p -> 0, W_0 = W_e and Lambda -> W_e/R = beta/(R - baseRTT).
For W_e large (loss-limited) Lambda ~ sqrt(7/(2p))/R, the 3/4-decrease analogue of the square
root law (Reno's 1/2 decrease gives sqrt(3/(2p))/R). This is Liu & Liu's eq. (10) with
T_s = 0 and W_0 chosen as above (see :mod:`spacetp.models.scps_liu`). Round durations are all
taken as R, although during the ramp the queue is empty and real rounds last about baseRTT;
the model therefore slightly underestimates the ramp rate.
"""

from __future__ import annotations

import numpy as np

from ._common import as_arrays, result, to_bits_per_second

__all__ = [
    "equilibrium_rtt",
    "equilibrium_window",
    "loss_limited_window",
    "no_loss_throughput",
    "ramp_packets",
    "throughput",
    "to_bits_per_second",
    "window_at_loss",
]


def no_loss_throughput(rtt, base_rtt, beta=3.0):
    """000 (1): beta/(R - baseRTT) in packets/s; requires rtt > base_rtt."""
    rtt, base_rtt, beta = as_arrays(rtt, base_rtt, beta)
    return result(beta / (rtt - base_rtt))


def equilibrium_window(rtt, base_rtt, beta=3.0):
    """Window (packets) at which Vegas holds beta packets queued: beta R/(R - baseRTT)."""
    rtt, base_rtt, beta = as_arrays(rtt, base_rtt, beta)
    return result(beta * rtt / (rtt - base_rtt))


def equilibrium_rtt(base_rtt, capacity, beta=3.0):
    """Mean RTT (s) of a single Vegas flow keeping beta packets in a bottleneck of
    ``capacity`` packets/s: baseRTT + beta/C (needs a buffer of at least beta packets)."""
    base_rtt, capacity, beta = as_arrays(base_rtt, capacity, beta)
    return result(base_rtt + beta / capacity)


def ramp_packets(w):
    """Packets sent while the window climbs from 3w/4 to w at one packet per round:
    sum of the w/4 windows 3w/4, ..., w-1 = 7 w^2/32 - w/8."""
    w = np.asarray(w, dtype=float)
    return result(7.0 * w**2 / 32.0 - w / 8.0)


def loss_limited_window(p):
    """Peak window W_p (packets) of the loss-limited sawtooth: ramp_packets(W_p) = 1/p."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return result(16.0 / 7.0 * (1.0 / 8.0 + np.sqrt(1.0 / 64.0 + 7.0 / (8.0 * p))))


def window_at_loss(p, w_e):
    """W_0 = min(W_e, W_p): the window when a loss occurs (packets)."""
    p, w_e = as_arrays(p, w_e)
    return result(np.minimum(w_e, loss_limited_window(p)))


def throughput(rtt, p, base_rtt, beta=3.0):
    """Vegas throughput with random loss, packets/s (derivation in the module docstring).

    At p = 0 this is exactly 000 (1).
    """
    rtt, p, base_rtt, beta = as_arrays(rtt, p, base_rtt, beta)
    w0 = window_at_loss(p, equilibrium_window(rtt, base_rtt, beta))
    # Numerator and denominator times p so that p = 0 gives W_e/R without 0 * inf.
    num = p * w0 + 1.0
    den = rtt * (p * (9.0 / 8.0 + w0 / 32.0) + 1.0 / w0)
    return result(num / den)
