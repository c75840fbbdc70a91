"""A sweep's tables from its store: one row per run (point, parameters, rep, seed, key,
status, error, metrics, each flow's limit and failure) and one per point (statistics, the
flows' limits over the point's runs)."""

from __future__ import annotations

import json
from typing import Any

from spacetp import limits
from spacetp import metrics as metric_defs
from spacetp.grid import canonical
from spacetp.store import Store


def _cell(value: Any) -> Any:
    """A parameter value as a frame cell: tables and lists as their JSON text."""
    return canonical(value) if isinstance(value, dict | list) else value


# What every run and every point says of each [[flows]] entry beside the metrics, read from
# the stored summaries (spacetp.limits), so stores written before these existed load too:
# per run the state with the largest share of the flow's time and the largest one a setting
# lifts, with their shares, and why the flow failed (None: it did not); per point the same
# over the point's runs (largest mean share), with the sentence, and the failed runs.
LIMIT_COLUMNS = ("limit", "limit_share", "liftable", "liftable_share", "failure")
POINT_LIMIT_COLUMNS = (
    "limit", "limit_share", "limit_text", "liftable", "liftable_share", "liftable_text",
    "failed_runs", "failure",
)  # fmt: skip


def _limit_view(flow: dict) -> dict:
    """What the limit columns read of a flow summary: its analysis and its failure."""
    return {"limits": limits.entries(flow), "failure": limits.failure(flow)}


def _limit_cells(view: dict) -> dict:
    top, lift = limits.main(view), limits.liftable(view)
    return {
        "limit": top["state"] if top else None,
        "limit_share": top["share"] if top else None,
        "liftable": lift["state"] if lift else None,
        "liftable_share": lift["share"] if lift else None,
        "failure": view["failure"],
    }


def _point_cells(agg: limits.Aggregate) -> dict:
    r = agg.result()
    return {
        "limit": r["state"],
        "limit_share": r["share"],
        "limit_text": r["text"],
        "liftable": r["liftable_state"],
        "liftable_share": r["liftable_share"],
        "liftable_text": r["liftable_text"],
        "failed_runs": agg.failed,
        "failure": agg.failure_text() if agg.failed else None,
    }


def frames(plan, store: Store) -> tuple[Any, Any, dict]:
    """(runs, summary, counts) of a plan (a `spacetp.sweep.Plan`: this module is below it)
    from what the store holds."""
    import numpy as np
    import pandas as pd

    keys = [r.key for r in plan.runs]
    records = store.read(["status", "error", "summary"], keys=set(keys))
    by_key = dict(zip(records["key"].tolist(), range(len(records)), strict=True))
    rec_status = records["status"].tolist()
    rec_error = records["error"].tolist()
    rec_summary = records["summary"].tolist()
    extract = [metric_defs.extractor(m) for m in plan.metrics]
    values: dict[str, list[float]] = {}  # key -> metric values, parsed once per key
    flows: dict[str, list[dict]] = {}  # key -> the scenario's flows' limits and failure
    nflows = len(plan.base.get("flows") or [])
    aggs = [[limits.Aggregate() for _ in range(nflows)] for _ in plan.points]
    n = len(plan.runs)
    status, error = [], []
    cols = np.full((len(plan.metrics), n), np.nan)
    lim: dict[str, list] = {
        f"flows[{f}].{c}": [None] * n for f in range(nflows) for c in LIMIT_COLUMNS
    }
    for j, r in enumerate(plan.runs):
        i = by_key.get(r.key)
        if i is None:
            status.append("missing")
            error.append(None)
            continue
        st = rec_status[i]
        status.append(st)
        error.append(rec_error[i] if st != "ok" else None)
        if st == "ok":
            if r.key not in values:
                summary = json.loads(rec_summary[i])
                values[r.key] = [f(summary) for f in extract]
                flows[r.key] = [_limit_view(f) for f in (summary.get("flows") or [])[:nflows]]
            cols[:, j] = values[r.key]
            for f, view in enumerate(flows[r.key]):
                aggs[r.point][f].add(view)
                for c, v in _limit_cells(view).items():
                    lim[f"flows[{f}].{c}"][j] = v
    data: dict[str, Any] = {"point": [r.point for r in plan.runs]}
    for p in plan.params:
        data[p] = [_cell(plan.points[r.point][p]) for r in plan.runs]
    data["rep"] = [r.rep for r in plan.runs]
    data["seed"] = np.array([r.seed for r in plan.runs], dtype=np.int64)
    data["key"] = keys
    data["status"] = status
    data["error"] = pd.Series(error, dtype=object)  # None when ok, whatever the others
    for m, col in zip(plan.metrics, cols, strict=True):
        data[m] = col
    for name, col in lim.items():
        data[name] = pd.Series(col, dtype=float if name.endswith("_share") else object)
    runs = pd.DataFrame(data)
    from spacetp import stats  # numpy: only when a sweep's tables are made

    summary = stats.summarize(runs, plan.params, plan.metrics)
    for f in range(nflows):
        per_point = [_point_cells(aggs[p][f]) for p in summary["point"]]
        for c in POINT_LIMIT_COLUMNS:
            values_c = [cells[c] for cells in per_point]
            kind = float if c.endswith("_share") else int if c == "failed_runs" else object
            summary[f"flows[{f}].{c}"] = pd.Series(values_c, dtype=kind)
    counts = {
        "planned": n,
        "ok": status.count("ok"),
        "failed": status.count("error"),
        "missing": status.count("missing"),
    }
    return runs, summary, counts
