"""The registry ``spacetp model`` is built on: ``MODELS`` maps a CLI name to a
:class:`~spacetp.models.spec.ModelSpec`; :func:`evaluate` validates parameters and calls it."""

from __future__ import annotations

import numpy as np

from . import cfdp, ltp, pftk, scalable, scps_liu, slowstart, vegas
from .spec import INF, ModelSpec, Param, unit_text
from .vocabulary import (  # the parameter vocabulary
    _alpha,
    _b,
    _b_u,
    _beta_mimd,
    _check_bounds,
    _check_ltp,
    _check_vegas,
    _ltp_block,
    _ltp_file,
    _ltp_params,
    _or,
    _p,
    _p_round,
    _rtt,
    _segments_param,
    _t0,
    _ts,
    _w0,
    _w_max,
)

MODELS: dict[str, ModelSpec] = {
    "pftk": ModelSpec(
        func=lambda rtt, p, t0=None, w_max=INF, b=2.0: pftk.full_throughput(
            rtt, p, _or(t0, 3.0 * rtt), w_max=w_max, b=b
        ),
        params={
            "rtt": _rtt(),
            "p": _p(),
            "t0": _t0(3),
            "w_max": _w_max(),
            "b": _b(2.0),
        },
        returns="packets/s",
        description="PFTK full TCP Reno model with timeouts and receiver window (Padhye 2000)",
    ),
    "pftk-approx": ModelSpec(
        func=lambda rtt, p, t0=None, b=1.0, w_max=INF: pftk.approx_throughput(
            rtt, p, _or(t0, 3.0 * rtt), b=b, w_max=w_max
        ),
        params={
            "rtt": _rtt(),
            "p": _p(),
            "t0": _t0(3),
            "b": _b(1.0),
            "w_max": _w_max(),
        },
        returns="packets/s",
        description="PFTK approximate formula, Akan et al. eq. (1) with the defaults",
    ),
    "mathis": ModelSpec(
        func=pftk.mathis_throughput,
        params={
            "rtt": _rtt(),
            "p": _p(),
            "b": _b(1.0),
        },
        returns="packets/s",
        description="square-root law sqrt(3/(2bp))/RTT (Mathis et al. 1997)",
    ),
    "slowstart": ModelSpec(
        func=slowstart.duration,
        params={
            "rtt": _rtt(),
            "ssthresh": Param(
                "packets", "slow-start threshold", required=True, low=1.0, low_open=False
            ),
        },
        returns="s",
        description="slow-start duration (ceil(log2 ssthresh) + 1) RTT, Akan et al. eq. (2)",
    ),
    "vegas": ModelSpec(
        func=vegas.throughput,
        params={
            "rtt": _rtt(),
            "p": Param(
                "1",
                "per-packet loss probability (0: no-loss eq. 1)",
                default=0.0,
                low=0.0,
                high=1.0,
                low_open=False,
            ),
            "base_rtt": Param("s", "minimum (propagation) RTT", required=True, low=0.0),
            "beta": Param("packets", "Vegas upper threshold", default=3.0, low=0.0),
        },
        returns="packets/s",
        description="TCP Vegas: beta/(R - baseRTT) without loss (Liu eq. 1), derived loss model",
        check=_check_vegas,
    ),
    "scps-liu": ModelSpec(
        func=lambda rtt, p, t0=None, w0=INF, ts=0.0: scps_liu.throughput(
            rtt, p, _or(t0, 2.0 * rtt), w0=w0, ts=ts
        ),
        params={
            "rtt": _rtt(),
            "p": _p(),
            "t0": _t0(2),
            "w0": _w0(),
            "ts": _ts(),
        },
        returns="packets/s",
        description="SCPS-TP full model with timeouts, Liu & Liu eq. (24), corrected",
    ),
    "scps-liu-nt": ModelSpec(
        func=scps_liu.no_timeout_throughput,
        params={
            "rtt": _rtt(),
            "p": _p(),
            "w0": _w0(),
            "ts": _ts(),
        },
        returns="packets/s",
        description="SCPS-TP no-timeout model, Liu & Liu eq. (10), corrected",
    ),
    "scalable": ModelSpec(
        func=scalable.throughput,
        params={
            "q": _p("per-packet loss probability q"),
            "rtt": _rtt(),
            "b_u": _b_u(),
            "alpha": _alpha(),
            "beta": _beta_mimd(),
        },
        returns="packets/s",
        description="Scalable TCP, window-dependent losses, Altman et al. eq. (8)",
    ),
    "scalable-iid": ModelSpec(
        func=scalable.throughput_iid,
        params={
            "p": _p("probability of a window reduction per RTT"),
            "rtt": _rtt(),
            "b_u": _b_u(unbounded_ok=False),
            "alpha": _alpha(),
            "beta": _beta_mimd(),
        },
        returns="packets/s",
        description="Scalable TCP, i.i.d. per-RTT losses, Altman et al. eq. (5)",
    ),
    "scalable-markov": ModelSpec(
        func=lambda p_a, burstiness, rtt, b_l=8.0, b_u=500.0, alpha=1.01, beta=0.86: (
            scalable.throughput_burst(p_a, burstiness, rtt, b_l, b_u, alpha, beta)
        ),
        params={
            "p_a": _p("fraction of RTTs in the BAD state (one reduction each)"),
            "burstiness": Param(
                "1",
                "P(BAD -> BAD), b of Altman et al. eq. (14)",
                default=0.0,
                low=0.0,
                high=1.0,
                low_open=False,
            ),
            "rtt": _rtt(),
            "b_l": Param("packets", "lower window bound B_l", default=8.0, low=0.0),
            "b_u": _b_u(unbounded_ok=False),
            "alpha": _alpha(),
            "beta": _beta_mimd(),
        },
        returns="packets/s",
        description="Scalable TCP, two-state Markov losses of Altman et al. eq. (14), section 4",
        check=_check_bounds,
    ),
    "cfdp": ModelSpec(
        func=cfdp.file_delivery_time,
        params={
            "file": Param("bytes", "file size", required=True, low=0.0),
            "rate": Param("bits/s", "link rate, data direction", required=True, low=0.0),
            "one_way": Param(
                "s", "one-way delay (propagation)", required=True, low=0.0, low_open=False
            ),
            "p": Param(
                "1",
                "file data PDU loss probability",
                required=True,
                low=0.0,
                high=1.0,
                low_open=False,
            ),
            "p_ctrl": Param(
                "1", "NAK loss probability (default: p)", low=0.0, high=1.0, low_open=False
            ),
            "segment": Param("bytes", "file data per PDU", default=cfdp.DEFAULT_SEGMENT, low=0.0),
            "header": Param(
                "bytes",
                "CFDP, UDP and IPv4 headers per PDU",
                default=cfdp.DEFAULT_HEADER,
                low=0.0,
                low_open=False,
            ),
        },
        returns="s",
        description="CFDP class 2 file delivery time, immediate NAKs (cfdp.py C1-C6)",
    ),
    "ltp": ModelSpec(
        func=_ltp_file(goodput=False),
        params=_ltp_params(file=True, sessions=True),
        returns="s",
        description="LTP file delivery time over M export sessions (RFC 5326 rounds, ltp.py L11)",
        check=_check_ltp,
    ),
    "ltp-goodput": ModelSpec(
        func=_ltp_file(goodput=True),
        params=_ltp_params(file=True, sessions=True),
        returns="bits/s",
        description="LTP file goodput 8 file / delivery time (ltp.py L12)",
        check=_check_ltp,
    ),
    "ltp-block": ModelSpec(
        func=_ltp_block,
        params=_ltp_params(),
        returns="s",
        description="LTP expected delivery time of one block, ION rounds and timers (ltp.py L7)",
        check=_check_ltp,
    ),
    "ltp-rounds": ModelSpec(
        func=ltp.rounds_max_geometric,
        params={"n": _segments_param(), "p": _p_round()},
        returns="rounds",
        description="LTP rounds per block, max of n geometric variables (ltp.py L4)",
    ),
    "ltp-rounds-ion": ModelSpec(
        func=ltp.rounds_ion,
        params={"n": _segments_param(), "p": _p_round()},
        returns="rounds",
        description="LTP rounds per block when the checkpoint is resent by its timer (L6)",
    ),
    "ltp-segment-loss": ModelSpec(
        func=ltp.segment_loss,
        params={
            "ber": Param("1", "bit error rate", required=True, low=0.0, high=1.0, low_open=False),
            "size": Param("bytes", "segment size", default=1400.0, low=0.0),
        },  # fmt: skip
        returns="1",
        description="probability that a segment is lost, 1-(1-ber)^(8 size) (ltp.py L1)",
    ),
}


def evaluate(name: str, **params):
    """Validate ``params`` for model ``name`` and evaluate it (arrays broadcast).

    Raises ValueError for an unknown model, an unknown or missing parameter, a non-numeric
    value, or a value outside the parameter's range; messages name the parameter.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; available: {', '.join(MODELS)}")
    spec = MODELS[name]
    allowed = ", ".join(spec.params)
    for key in params:
        if key not in spec.params:
            raise ValueError(
                f"unknown parameter {key!r} for model {name!r}; allowed parameters: {allowed}"
            )
    values: dict[str, np.ndarray] = {}
    for key, param in spec.params.items():
        if key not in params or params[key] is None:
            if param.required:
                raise ValueError(
                    f"missing parameter {key!r} ({param.description}, {param.unit}) "
                    f"for model {name!r}"
                )
            if param.default is not None:  # None: the model derives it (e.g. t0 from rtt)
                values[key] = np.asarray(param.default)
            continue
        try:
            x = np.asarray(params[key], dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{key}: expected a number or array, got {params[key]!r}") from None
        ok = param.contains(x)
        if not np.all(ok):
            bad = x[~ok].flat[0] if x.ndim else x
            raise ValueError(
                f"{key} = {float(bad):g} is out of range for model {name!r}: allowed "
                f"{param.range_text()}{unit_text(param.unit)}"
            )
        values[key] = x
    if spec.check is not None:
        spec.check(values)
    return spec.func(**values)
