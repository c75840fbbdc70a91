"""Numbers read out of the summary tables of the paper modules (one row per simulated point,
its statistics in the columns `mean`, `std`, `ci95`, `n`: see `framework.summarize`)."""

from __future__ import annotations

import math
from collections.abc import Callable

from spacetp.experiments.framework import select


def value_at(s, col: str = "mean", **where) -> float:
    """Column `col` of the row matching every column = value; NaN when no row does."""
    d = select(s, **where)
    return float(d[col].iloc[0]) if len(d) else math.nan


def lookup(*keys: str) -> Callable[..., float]:
    """`value_at` with the key columns given by position: `at = lookup("setup", "case")`,
    then `at(s, "emu", "1A", ber=1e-7)` is the mean and `at(..., col="std")` another column."""

    def at(s, *values, col: str = "mean", **where) -> float:
        return value_at(s, col, **dict(zip(keys, values, strict=True)), **where)

    return at


def improvement_pct(t: float, reference: float) -> float:
    """Reduction of a time against a reference, in %: (1 - t / reference) x 100."""
    return (1 - t / reference) * 100


def stat_columns(d, stem: str):
    """The statistics columns mean, std, ci95 renamed STEM_mean, STEM_std, STEM_ci95."""
    return d.rename(columns={k: f"{stem}_{k}" for k in ("mean", "std", "ci95")})
