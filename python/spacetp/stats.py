"""Per-grid-point statistics of a sweep: mean, standard deviation, count and the half-width of
the 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom:
t(0.975, n-1) * std / sqrt(n)). NaN values (an incomplete flow's completion time) and failed
runs do not count; with fewer than two values the std and the interval are NaN."""

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
