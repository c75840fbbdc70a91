"""File delivery time of CFDP class 2 (CCSDS 727.0-B-5, acknowledged, immediate NAKs) over a
lossy link with a long delay, as this project runs it (cfdp-rs's entities, the sender's PDUs
paced at the link's rate, repairs sent before new data).

Sources
-------
* CCSDS 727.0-B-5 for the protocol: the sender sends the metadata, the file data and EOF;
  in immediate NAK mode the receiver asks for a gap as soon as a later PDU shows it
  (4.6.4.3.3), and after EOF for every gap still open (the deferred procedure, 4.6.4.3.2),
  then again on its NAK timer (4.6.4.7) until the file is whole.
* cfdp-rs 0.3's receiver, which the simulator runs: an immediate NAK names only the new gap;
  a gap whose NAK or repair was lost is asked for again only by EOF's NAK or the NAK timer.
* The mean-value reasoning is the LTP model's (``ltp.py``): losses independent per PDU.

Equation numbers (C1)-(C6) are this module's own.

Units: ``rate`` bits/s; ``one_way`` and times in seconds; ``file``, ``segment`` and
``header`` bytes; ``p`` (data PDU loss) and ``p_ctrl`` (NAK loss) probabilities.

Model
-----
(C1) N = ceil(F / s) file data PDUs of s bytes (the last F - (N-1) s), each taking
     tau = 8 (s + h) / rate on the link, h the CFDP header with IPv4 and UDP (14 + 28 B).
(C2) Link time of the file data, every PDU sent until it arrives: N tau / (1 - p)
     (repairs go before new data, so the link stays busy until the pass ends).
(C3) With no loss: E[T] = t_md + N tau + D (metadata, the pass, one way). Exact.
(C4) The tail: a PDU lost j PDUs before the end of the pass is repaired a round trip after
     its NAK (the next PDU shows the gap): the file ends 2D + 2 tau - j tau after the pass's
     last PDU would have arrived. Only the latest loss counts (it ends last):
         X_tail = sum_{j < W} p (1-p)^j (2D + 2 tau - j tau),  W = (2D + 2 tau) / tau.
(C5) The EOF round: an earlier loss whose NAK (p_ctrl) or repair (p) is lost stays open
     until EOF's NAK; then the file ends a round trip after EOF, 2D + 2 tau after the pass.
     P_eof = 1 - (1 - p q)^(N - W), q = 1 - (1 - p_ctrl)(1 - p).
(C6) Later rounds: a repair of the EOF round lost again waits for the NAK timer, taken as
     the fitted one, 2D + 1 s (``transport/cfdp/fit.rs``):
         X_later = P_eof q / (1 - q) (2D + 1).
     E[T] = t_md + (C2) + D + (1 - P_eof) X_tail + P_eof max(2D + 2 tau, X_tail) + X_later.

Checked against the simulator on a grid (``tests/test_models_cfdp.py``; 2 MB at 2 Mb/s,
one way 10 ms to 10 s, PER 0 to 2%, 20 seeds, docs/models.md): exact at p = 0; within 1.5%
where a round trip is short against the pass; 2.6-5.5% under where it is long (one way 2 s
at PER 1-2%), where the simulator's later rounds cost more than one NAK timer each.

Assumptions
-----------
* Losses independent, per PDU; the link symmetric; the NAK's own link time neglected.
* Immediate NAK mode, NAK timer and positive-ACK timer fitted (a round trip plus 1 s): no
  limit is reached (the model is for loss rates where a PDU lost at every try is unlikely).
* EOF, Finished and their ACKs are not lost (their loss costs a positive-ACK timer).
"""

from __future__ import annotations

import math

import numpy as np

from ._common import result

__all__ = ["DEFAULT_HEADER", "DEFAULT_SEGMENT", "METADATA_BYTES", "file_delivery_time"]

#: CFDP PDU header with 2-byte entity IDs and sequence numbers, plus the file data PDU's
#: offset (14 B), and IPv4 and UDP (28 B).
DEFAULT_HEADER = 42.0
#: File data per PDU in 1500-byte packets.
DEFAULT_SEGMENT = 1458.0
#: A metadata PDU with this project's file names, IPv4 and UDP included.
METADATA_BYTES = 66.0


def _one(file, rate, one_way, p, p_ctrl, segment, header):
    n = max(math.ceil(file / segment - 1e-12), 1)
    last = file - (n - 1) * segment
    tau = 8.0 * (segment + header) / rate
    t_md = 8.0 * METADATA_BYTES / rate
    passing = ((n - 1) * tau + 8.0 * (last + header) / rate) / (1.0 - p)  # (C1), (C2)
    rtt = 2.0 * one_way
    w = int((rtt + 2.0 * tau) / tau)
    tail = sum(p * (1 - p) ** j * (rtt + 2.0 * tau - j * tau) for j in range(min(w, n)))  # (C4)
    q = 1.0 - (1.0 - p_ctrl) * (1.0 - p)
    p_eof = 1.0 - (1.0 - p * q) ** max(n - w, 0)  # (C5)
    later = p_eof * q / (1.0 - q) * (rtt + 1.0) if q < 1.0 else math.inf  # (C6)
    extra = (1.0 - p_eof) * tail + p_eof * max(rtt + 2.0 * tau, tail) + later
    return t_md + passing + one_way + extra


def file_delivery_time(
    file, rate, one_way, p, p_ctrl=None, segment=DEFAULT_SEGMENT, header=DEFAULT_HEADER
):
    """E[T] (C1)-(C6): seconds from the metadata leaving to the file complete at the
    receiver. Broadcasts over array arguments."""
    p_ctrl = p if p_ctrl is None else p_ctrl
    f = np.vectorize(_one, otypes=[float])
    return result(f(file, rate, one_way, p, p_ctrl, segment, header))
