"""The analytic model's prediction beside each profile of `spacetp compare`, where one applies.

Each profile is matched to the model of spacetp.models whose assumptions its mechanisms meet,
with the path's facts (spacetp.pathfacts) and the profile's own settings as inputs:

- Reno-family AIMD (congestion control newreno: tahoe, reno, newreno, sack, fack,
  linux-reno, win2000, winnt, scps-1b, scps-1c): PFTK full (Padhye et al. 2000), with the
  RTT measured (the mean of the runs; the propagation RTT without them), p the loss of a
  full packet, T0 the profile's `min_rto` (at least 2 RTT), W_max the receive buffer in
  segments and b its `ack_every`.
- Scalable TCP: Altman et al. eq. (8), q = p, B_u the receive buffer in segments, the
  profile's alpha and beta.
- Vegas: Liu & Liu eq. (1) with the derived loss model (measured and propagation RTT, p,
  the profile's beta).
- SCPS-TP with Vegas reacting to loss and SNACK (scps-2a): Liu & Liu eq. (24), corrected,
  W0 the receive buffer.
- SCPS-TP with rate control that does not cut its window for corruption, or with no
  congestion control (scps-tp, scps-ri, scps-ri-gateway, scps-nucc, scps-2b): the rate
  bound min(rate control, link, window / RTT) x (1 - p).
- LTP: the LTP file model (spacetp.models.ltp, L11-L12) with the link rate, the RTT, the
  file, p and ION's block, segment and session defaults.
- CFDP: the class 2 file model (spacetp.models.cfdp, C1-C6) with the link rate, the one-way
  delay, the file, p for data PDUs and the ACK-sized loss for NAKs; goodput 8 file / time.
- No loss on the path: the window bound min(link, receive window / RTT).

Every prediction is a goodput in bits/s of payload, capped by what the link can carry
(rate x payload / packet) and by the receive window over the RTT. Other profiles (CUBIC,
BBR, HighSpeed, Hybla, BIC, Westwood+, Peach+, QUIC) have no model here: their row shows
none. A path whose loss has no single rate (Gilbert-Elliott, Markov slots) or that changes
over time (schedules, outages) gets no prediction either: the steady state the models
describe does not exist there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spacetp import units
from spacetp.pathfacts import PathFacts


@dataclass(frozen=True)
class Prediction:
    model: str  # the spacetp model name, or "" when none applies
    goodput_bps: float | None
    why: str  # what the model is, or why there is none


NONE = Prediction("", None, "no analytic model of this controller in spacetp.models")


def _bytes(v, default: float) -> float:
    q = units.to_si(v) if v is not None else None
    return default if q is None else q[0]


def _seconds(v, default: float) -> float:
    q = units.to_si(v) if v is not None else None
    return default if q is None else q[0]


def tcp_payload(settings: dict, mtu: int) -> int:
    return mtu - 40 - (12 if settings.get("timestamps") else 0)


def _cap(facts: PathFacts, payload: float, window_bytes: float, rtt: float) -> float:
    link = facts.rate_bps * payload / facts.mtu
    return min(link, 8.0 * window_bytes / rtt) if rtt > 0 else link


def predict(
    protocol: str,
    settings: dict | None,
    facts: PathFacts | None,
    rtt_s: float | None = None,
    family: str = "",
) -> Prediction:
    """The model's goodput for `protocol` (its profile `settings` and `family`; settings
    None outside the registry, as LTP) on the path; `rtt_s` the mean RTT measured in the
    runs (None: the propagation RTT)."""
    if facts is None:
        return Prediction("", None, "no model: the path is not made of declared [[links]]")
    if facts.varying:
        return Prediction("", None, "no model: " + "; ".join(facts.varying))
    if facts.loss is None:
        return Prediction("", None, "no model: the loss process has no single rate")
    p = facts.loss
    rtt = rtt_s if rtt_s is not None and math.isfinite(rtt_s) and rtt_s > 0 else facts.rtt_s
    if rtt <= 0:
        return Prediction("", None, "no model: the path has no delay")
    if protocol == "ltp":
        return _ltp(facts, p)
    if protocol == "cfdp":
        return _cfdp(facts, p)
    if settings is None or family == "quic" or "recovery" not in settings:
        return NONE  # QUIC: the TCP models' segments, ACKs and timers are not its own
    from spacetp.models import evaluate

    cc = settings["congestion_control"]
    scps = settings.get("scps") or {}
    payload = tcp_payload(settings, facts.mtu)
    rwnd = _bytes(settings.get("receive_buffer"), 300000.0)
    w_max = max(rwnd / payload, 1.0)
    cap = _cap(facts, payload, rwnd, rtt)
    to_bps = 8.0 * payload

    def done(name: str, pkts: float, why: str) -> Prediction:
        return Prediction(name, min(float(pkts) * to_bps, cap), why)

    if scps.get("enabled") and (cc == "none" or scps.get("loss_source") == "corruption"):
        q = units.to_si(scps.get("rate")) if scps.get("rate") else None
        rate = q[0] * payload / facts.mtu if q else math.inf
        bound = min(rate, cap) * (1.0 - p)
        return Prediction(
            "rate bound", bound, "min(rate control, link, window / RTT) x (1 - p): no window cut"
        )
    if p <= 0:
        return Prediction("window bound", cap, "no loss: min(link, receive window / RTT)")
    try:
        if cc == "newreno" and not settings.get("peach"):
            t0 = max(_seconds(settings.get("min_rto"), 1.0), 2.0 * rtt)
            b = float(settings.get("ack_every") or 2)
            pk = evaluate("pftk", rtt=rtt, p=p, t0=t0, w_max=w_max, b=b)
            return done("pftk", pk, "PFTK full model (Padhye et al. 2000)")
        if cc == "scalable":
            sc = settings.get("scalable") or {}
            pk = evaluate(
                "scalable", q=p, rtt=rtt, b_u=w_max, alpha=sc.get("alpha"), beta=sc.get("beta")
            )
            return done("scalable", pk, "Scalable TCP, Altman et al. eq. (8)")
        if cc == "vegas" and scps.get("enabled") and scps.get("snack"):
            t0 = max(_seconds(settings.get("min_rto"), 1.0), 2.0 * rtt)
            pk = evaluate("scps-liu", rtt=rtt, p=p, t0=t0, w0=max(w_max, 4.0))
            return done("scps-liu", pk, "SCPS-TP, Liu & Liu eq. (24) corrected")
        if cc == "vegas" and rtt > facts.rtt_s:
            beta = (settings.get("vegas") or {}).get("beta", 3.0)
            pk = evaluate("vegas", rtt=rtt, p=p, base_rtt=facts.rtt_s, beta=beta)
            return done("vegas", pk, "TCP Vegas, Liu & Liu eq. (1) with losses")
    except ValueError as e:  # a parameter outside the model's range
        return Prediction("", None, f"no model: {e}")
    return NONE


def _ltp(facts: PathFacts, p: float) -> Prediction:
    from spacetp.models import evaluate

    if facts.bytes is None:
        return Prediction("", None, "no model: the LTP model needs a file size (flows[i].bytes)")
    segment = min(1400.0, facts.mtu - 28.0)
    try:
        bps = evaluate(
            "ltp-goodput",
            rate=facts.rate_bps,
            rtt=facts.rtt_s,
            file=facts.bytes,
            p=p,
            segment=segment,
            block=64000.0,
            sessions=10.0,
        )
    except ValueError as e:
        return Prediction("", None, f"no model: {e}")
    return Prediction(
        "ltp-goodput", float(bps), "LTP file model: RFC 5326 rounds, ION timers, 10 sessions"
    )


def _cfdp(facts: PathFacts, p: float) -> Prediction:
    from spacetp.models import evaluate

    if facts.bytes is None:
        return Prediction("", None, "no model: the CFDP model needs a file size (flows[i].bytes)")
    try:
        t = evaluate(
            "cfdp",
            file=facts.bytes,
            rate=facts.rate_bps,
            one_way=facts.rtt_s / 2.0,
            p=p,
            p_ctrl=facts.ack_loss if facts.ack_loss is not None else p,
            segment=max(facts.mtu - 42.0, 1.0),
        )
    except ValueError as e:
        return Prediction("", None, f"no model: {e}")
    return Prediction(
        "cfdp", 8.0 * facts.bytes / float(t), "CFDP class 2 file model: immediate NAKs, EOF round"
    )
