"""What a registered model is: its parameters (unit, default, range) and its callable."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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
        return f"{lo}{num_text(self.low)}, {num_text(self.high)}{hi}"

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


def unit_text(unit: str) -> str:
    return "" if unit == "1" else f" {unit}"  # "1" marks a dimensionless parameter


def num_text(x: float) -> str:
    return "inf" if x == INF else "-inf" if x == -INF else f"{x:g}"
