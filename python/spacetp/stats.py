"""Per-grid-point statistics of a sweep: mean, standard deviation, count and the half-width of
the 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom:
t(0.975, n-1) * std / sqrt(n)). NaN values (an incomplete flow's completion time) and failed
runs do not count; with fewer than two values the std and the interval are NaN. `bootstrap_ci`:
the percentile bootstrap interval of a mean, which `spacetp compare` uses (it never leaves the
values' range: no interval of times below zero)."""

from __future__ import annotations

import numpy as np

STATS = ("mean", "std", "count", "ci95")


def ci95(std, count):
    """Half-width of the 95% t confidence interval of a mean (arrays broadcast)."""
    from scipy.special import stdtrit  # the t quantile; scipy.stats takes 3x longer to import

    std = np.asarray(std, dtype=float)
    n = np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = stdtrit(np.where(n >= 2, n - 1, np.nan), 0.975)
        return np.where(n >= 2, q * std / np.sqrt(n), np.nan)


BOOTSTRAP_RESAMPLES = 10000


def bootstrap_ci(values, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0):
    """(low, high): the percentile bootstrap interval of the mean of `values` (NaN dropped):
    the mean of `resamples` resamples with replacement, their (1 - level) / 2 and
    (1 + level) / 2 quantiles. Unlike mean ± t x std / sqrt(n) it stays within the values'
    range, so an interval of times or rates never goes below zero, and it follows a skewed
    spread (one run ten times slower than the others widens the upper side only). Seeded:
    the same values give the same interval. (NaN, NaN) with fewer than two values."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    lo, hi = np.quantile(means, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(lo), float(hi)


def column(metric: str, stat: str) -> str:
    """Name of a summary column, e.g. `flows[0].goodput_bps:mean`."""
    return f"{metric}:{stat}"


def summarize(runs, params: list[str], metrics: list[str]):
    """One row per grid point (`point` column) of a runs frame: its parameters, `runs`
    (planned), `ok`, `failed`, then METRIC:mean, :std, :count, :ci95 for each metric."""
    import pandas as pd

    first = runs.drop_duplicates("point").set_index("point")
    index = first.index
    out = {"point": index.to_numpy()}
    for p in params:
        out[p] = first[p].to_numpy()
    flags = pd.DataFrame(
        {"point": runs["point"], "ok": runs["status"] == "ok", "failed": runs["status"] == "error"}
    ).groupby("point")
    out["runs"] = flags.size().reindex(index).to_numpy()
    out["ok"] = flags["ok"].sum().reindex(index).to_numpy()
    out["failed"] = flags["failed"].sum().reindex(index).to_numpy()
    ok = runs[runs["status"] == "ok"]
    g = ok.groupby("point")
    for m in metrics:
        mean = g[m].mean().reindex(index).to_numpy(dtype=float)
        std = g[m].std(ddof=1).reindex(index).to_numpy(dtype=float)
        count = g[m].count().reindex(index, fill_value=0).to_numpy(dtype=np.int64)
        out[column(m, "mean")] = mean
        out[column(m, "std")] = std
        out[column(m, "count")] = count
        out[column(m, "ci95")] = ci95(std, count)
    return pd.DataFrame(out)
