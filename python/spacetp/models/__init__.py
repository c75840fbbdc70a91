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

from . import cfdp, ltp, pftk, scalable, scps_liu, slowstart, vegas
from ._common import to_bits_per_second
from .registry import MODELS, evaluate
from .spec import ModelSpec, Param
from .sweep_range import parse_sweep

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
