"""Analytic throughput models and the registry the ``spacetp model`` command is built on.

Modules (numpy only, each documents its equations, units and corrections):
:mod:`.pftk` (Padhye et al.; Akan et al. eq. 1; square-root law), :mod:`.slowstart`
(Akan et al. eq. 2), :mod:`.vegas` (Liu & Liu eq. 1 and a derived loss model),
:mod:`.scps_liu` (Liu & Liu eqs. 1-24, corrected), :mod:`.scalable` (Altman et al.),
:mod:`.ltp` (LTP block and file delivery time: RFC 5326 rounds, timers, export sessions),
:mod:`.cfdp` (CFDP class 2 file delivery time: immediate NAKs, the EOF round, NAK timers).

``MODELS`` maps a CLI name to a :class:`ModelSpec`; :func:`evaluate` validates parameters and
calls the model; :func:`parse_sweep` turns ``"p=1e-4:1e-1:log20"`` into ``("p", array)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import cfdp, ltp, pftk, scalable, scps_liu, slowstart, vegas
from ._common import to_bits_per_second

__all__ = [
    "MODELS",
    "cfdp",
    "ModelSpec",
    "Param",
    "evaluate",
    "ltp",
    "parse_sweep",
    "pftk",
    "scalable",
    "scps_liu",
    "slowstart",
    "to_bits_per_second",
    "vegas",
]

INF = math.inf


@dataclass(frozen=True)
class Param:
    """One model parameter: unit, default, allowed range and a short description.

    ``default=None`` on an optional parameter means the model derives it (see description).
    """

    unit: str
    description: str
    default: float | None = None
    required: bool = False
    low: float = -INF
    high: float = INF
    low_open: bool = True
    high_open: bool = True

    def range_text(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open else "]"
        return f"{lo}{_num(self.low)}, {_num(self.high)}{hi}"

    def contains(self, x: np.ndarray) -> np.ndarray:
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above & below  # NaN fails both comparisons, so it is rejected too


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: the callable, its parameters (name -> Param) and output unit."""

    func: Callable[..., object]
    params: dict[str, Param]
    returns: str
    description: str
    check: Callable[[dict[str, np.ndarray]], None] | None = None


def _unit(unit: str) -> str:
    return "" if unit == "1" else f" {unit}"  # "1" marks a dimensionless parameter


def _num(x: float) -> str:
    return "inf" if x == INF else "-inf" if x == -INF else f"{x:g}"


# ------------------------------------------------------------------ parameter vocabulary


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
                f"{param.range_text()}{_unit(param.unit)}"
            )
        values[key] = x
    if spec.check is not None:
        spec.check(values)
    return spec.func(**values)


_RANGE = re.compile(r"^(log|lin)(\d+)$")


def parse_sweep(text: str) -> tuple[str, np.ndarray]:
    """Parse ``NAME=a:b:logN``, ``NAME=a:b:linN`` (N >= 2 points, ends included) or
    ``NAME=v1,v2,...`` into ``(NAME, values)``. Raises ValueError with the reason."""
    usage = "expected NAME=a:b:logN, NAME=a:b:linN or NAME=v1,v2,..."
    name, sep, rhs = text.partition("=")
    name, rhs = name.strip(), rhs.strip()
    if not sep or not name.isidentifier():
        raise ValueError(f"bad sweep {text!r}: {usage}")
    if not rhs:
        raise ValueError(f"bad sweep {text!r}: no values after '='; {usage}")

    def number(s):
        try:
            return float(s)
        except ValueError:
            raise ValueError(f"bad sweep {text!r}: {s.strip()!r} is not a number") from None

    if ":" in rhs:
        parts = rhs.split(":")
        if len(parts) != 3:
            raise ValueError(f"bad sweep {text!r}: a range has three fields a:b:logN; {usage}")
        a, b = number(parts[0]), number(parts[1])
        m = _RANGE.match(parts[2].strip())
        if m is None:
            raise ValueError(
                f"bad sweep {text!r}: spacing {parts[2].strip()!r} must be logN or linN"
            )
        kind, n = m.group(1), int(m.group(2))
        if n < 2:
            raise ValueError(f"bad sweep {text!r}: a range needs at least 2 points, got {n}")
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"bad sweep {text!r}: range ends must be finite")
        if kind == "log":
            if a <= 0 or b <= 0:
                raise ValueError(f"bad sweep {text!r}: log spacing needs positive ends")
            return name, np.geomspace(a, b, n)
        return name, np.linspace(a, b, n)
    items = [s for s in rhs.split(",")]
    if any(not s.strip() for s in items):
        raise ValueError(f"bad sweep {text!r}: empty item in the list; {usage}")
    return name, np.array([number(s) for s in items])
