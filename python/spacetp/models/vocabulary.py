"""The parameters the models share (RTT, loss, timeouts, windows, LTP's segments and
sessions), each a :class:`~spacetp.models.spec.Param` with its unit, default and range, and the
checks that span several parameters."""

from __future__ import annotations

import numpy as np

from . import ltp
from .spec import INF, Param


def _rtt():
    return Param("s", "mean round-trip time", required=True, low=0.0)


def _p(desc="per-packet loss probability"):
    return Param("1", desc, required=True, low=0.0, high=1.0)


def _t0(factor):
    return Param("s", f"first retransmission timeout T0 (default {factor:g} * rtt)", low=0.0)


def _alpha():
    return Param("1", "multiplicative increase per RTT", default=1.01, low=1.0)


def _beta_mimd():
    return Param("1", "multiplicative decrease factor", default=0.86, low=0.0, high=1.0)


def _b_u(unbounded_ok=True):
    # inf is meaningful for eq. (8) (it gives the limit (9)); with i.i.d. losses the mean
    # window is then infinite, and a Markov chain needs a finite top.
    desc = "upper window bound B_u" + (" (inf: no bound)" if unbounded_ok else "")
    return Param("packets", desc, default=500.0, low=0.0, high_open=not unbounded_ok)


def _w_max():
    return Param(
        "packets", "receiver window", default=INF, low=1.0, low_open=False, high_open=False
    )


def _b(default):
    return Param(
        "packets", "packets acknowledged per ACK", default=default, low=1.0, low_open=False
    )


def _w0():
    return Param(
        "packets",
        "loss-free window ceiling (Vegas equilibrium/receiver)",
        default=INF,
        low=4.0,
        low_open=False,
        high_open=False,
    )


def _ts():
    return Param("s", "SNACK delay T_s", default=0.0, low=0.0, low_open=False)


def _or(value, fallback):
    return fallback if value is None else value


def _check_vegas(v):
    if np.any(v["rtt"] <= v["base_rtt"]):
        raise ValueError(
            f"rtt must be greater than base_rtt (got rtt={v['rtt']}, base_rtt={v['base_rtt']})"
        )


def _check_bounds(v):
    if np.any(v["b_u"] <= v["b_l"]):
        raise ValueError(f"b_u must be greater than b_l (got b_u={v['b_u']}, b_l={v['b_l']})")


# LTP (ltp.py): a data-segment loss p, or a bit error rate from which p and the loss of the
# (small) report and RA segments follow.
LTP_REPORT_BYTES = 25.0  # ION's LTP configuration worksheet: "25 bytes is a reasonable estimate"


def _ltp_losses(p, ber, segment, p_ctrl):
    """(p, p_ctrl) from whichever of p and ber was given (checked by _check_ltp)."""
    if p is None:
        p = ltp.segment_loss(ber, segment)
        if p_ctrl is None:
            p_ctrl = ltp.segment_loss(ber, LTP_REPORT_BYTES)
    return p, p_ctrl


def _check_ltp(v):
    if ("p" in v) == ("ber" in v):
        raise ValueError(
            "give exactly one of p (per-segment loss probability) and ber (bit error rate)"
        )
    if np.any(v["segment"] <= v["header"]):
        raise ValueError(
            f"segment must be larger than header (got segment={v['segment']}, "
            f"header={v['header']} bytes)"
        )
    if "ber" in v:
        p = np.asarray(ltp.segment_loss(v["ber"], v["segment"]))
        if np.any(p >= 1.0):
            raise ValueError(
                f"ber = {v['ber']} loses every segment of {v['segment']} bytes (p = 1); "
                "lower ber or segment"
            )


def _ltp_params(file=False, sessions=False):
    out = {
        "rate": Param("bits/s", "link rate, data direction", required=True, low=0.0),
        "rtt": Param(
            "s", "round trip of a checkpoint and its report (2 x one-way light time)",
            required=True, low=0.0,
        ),
        "p": Param(
            "1", "per-segment loss probability (give p or ber)",
            low=0.0, high=1.0, low_open=False,
        ),
        "ber": Param(
            "1", "bit error rate, p = 1-(1-ber)^(8 segment) (give p or ber)",
            low=0.0, high=1.0, low_open=False,
        ),
        "block": Param("bytes", "block (red part) size", default=64000.0, low=0.0),
        "segment": Param(
            "bytes", "whole segment size, header included", default=1400.0, low=0.0
        ),
        "header": Param(
            "bytes", "segment bytes that carry no block data",
            default=ltp.DEFAULT_HEADER, low=0.0, low_open=False,
        ),
        "margin": Param(
            "s", "timer = rtt + margin (ION: 1 s own + 1 s remote queuing)",
            default=ltp.DEFAULT_MARGIN, low=0.0, low_open=False,
        ),
        "p_ctrl": Param(
            "1", "report/RA loss probability (default p; with ber, a 25-byte report's)",
            low=0.0, high=1.0, low_open=False,
        ),
    }  # fmt: skip
    if sessions:
        out["sessions"] = Param(
            "sessions", "export sessions open at once (ION max_export_sessions)",
            default=10.0, low=1.0, low_open=False,
        )  # fmt: skip
    if file:
        out["file"] = Param("bytes", "file size", required=True, low=0.0)
    return out


def _ltp_block(
    rate,
    rtt,
    p=None,
    ber=None,
    block=64000.0,
    segment=1400.0,
    header=ltp.DEFAULT_HEADER,
    margin=ltp.DEFAULT_MARGIN,
    p_ctrl=None,
):
    p, p_ctrl = _ltp_losses(p, ber, segment, p_ctrl)
    return ltp.block_delivery_time(
        rate, rtt, p, block, segment, header=header, margin=margin, p_ctrl=p_ctrl
    )


def _ltp_file(goodput):
    def f(
        rate,
        rtt,
        file,
        p=None,
        ber=None,
        block=64000.0,
        segment=1400.0,
        header=ltp.DEFAULT_HEADER,
        margin=ltp.DEFAULT_MARGIN,
        p_ctrl=None,
        sessions=10.0,
    ):
        p, p_ctrl = _ltp_losses(p, ber, segment, p_ctrl)
        fn = ltp.file_goodput if goodput else ltp.file_delivery_time
        return fn(
            file, rate, rtt, p, block=block, segment=segment, header=header, margin=margin,
            sessions=sessions, p_ctrl=p_ctrl,
        )  # fmt: skip

    return f


def _segments_param():
    return Param("segments", "data segments in the block", required=True, low=1.0, low_open=False)


def _p_round():
    return Param(
        "1", "per-segment loss probability", required=True, low=0.0, high=1.0, low_open=False
    )
