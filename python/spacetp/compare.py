"""`spacetp compare`: every protocol profile on the user's link, ranked, on one page.

    import spacetp.compare as cmp
    c = cmp.compare("examples/geo.toml", protocols="newreno,scps-tp,ltp", reps=5,
                    out="results/compare-geo")
    c.table          # one row per profile: rank, time and goodput with 95% CIs, what
                     # limited it (limited_by), failed runs (unfinished), model
    c.page           # results/compare-geo/report.html

How it works: the profiles (every one `spacetp protocols` lists: every protocol of every
transport in the core's registry, the aliases once) are one axis of a spacetp sweep that sets
the `protocol` of every `[[flows]]` and `[[workloads]]` entry; the sweep keeps every run in
DIR/store, so an interrupted comparison resumes and a repeated one computes nothing, and runs
on Dask with `executor`. Profiles whose runs fail (QUIC or LTP on a scenario with
`[flows.tcp]` settings, say) are listed with the reason, not ranked.

Ranking: by completion time when every flow has `bytes` (lower is better; profiles that did
not finish every run come after those that did), else by goodput: the mean over the runs
that did not fail, with a percentile bootstrap interval (spacetp.stats.bootstrap_ci: never
below zero). Runs whose flow failed are counted and named with their reason (`unfinished`),
never averaged in. Each row says what limited it: the engine's limit analysis over the runs
(spacetp.limits, through the sweep's columns), and carries the analytic model's prediction
where one applies (spacetp.compare_models, with the scenario's own settings). The best and
the worst are run once more with a trace, for the window and bytes in flight over time (or,
for a transport without a window, the bytes sent and delivered). spacetp.compare_page writes
the page, the PNG/SVG figures and the CSV tables.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spacetp import limits
from spacetp.compare_models import predict
from spacetp.errors import UserError
from spacetp.limits import LIFT_SHARE
from spacetp.pathfacts import PathFacts, facts
from spacetp.profiles import all_protocols, choose, registry  # noqa: F401
from spacetp.scenario import ScenarioError, copy_of, load
from spacetp.stats import bootstrap_ci


@dataclass
class Comparison:
    """The outcome of `compare`: `table` (pandas, one row per profile run, best first; see
    compare_page.CSV_COLUMNS), `failed` (profiles that could not run, with the error),
    `facts` (the path, or None), `rank_by` ("completion" or "goodput"), `traces` ({profile:
    its first flow over time}) of the best and the worst, `sweep` (the SweepResult), `out`
    and `page`."""

    name: str
    scenario: dict
    protocols: list[str]
    aliases: dict[str, str]
    reps: int
    facts: PathFacts | None
    rank_by: str
    axis: str  # the sweep parameter holding the profile (the first protocol path)
    table: Any
    failed: Any
    traces: dict[str, Any]
    sweep: Any
    elapsed_s: float
    source: str | None = None
    command: str | None = None
    out: Path | None = None
    page: Path | None = None
    files: dict[str, str] = field(default_factory=dict)
    # "fitted" (every profile's per-link settings fitted to the path, the default) or
    # "as configured" (the profiles exactly as written), and what fitting set per profile.
    mode: str = "fitted"
    fitted: dict[str, list] = field(default_factory=dict)

    @property
    def best(self) -> str | None:
        return None if self.table.empty else self.table["protocol"].iloc[0]

    @property
    def worst(self) -> str | None:
        return None if self.table.empty else self.table["protocol"].iloc[-1]


# ------------------------------------------------------------------------------ the runs


def _protocol_paths(sc: dict) -> list[str]:
    paths = [f"flows[{i}].protocol" for i in range(len(sc.get("flows") or []))]
    paths += [f"workloads[{i}].protocol" for i in range(len(sc.get("workloads") or []))]
    if not paths:
        raise ScenarioError("compare: the scenario has no [[flows]] or [[workloads]] to compare")
    return paths


def _finite(sc: dict) -> bool:
    flows = sc.get("flows") or []
    return bool(flows) and all(f.get("bytes") is not None for f in flows)


def _metrics(sc: dict) -> dict[str, str]:
    """{role: metric}: what the ranking reads from each run. Retransmissions count LTP's
    data segments and checkpoints sent again and bp's over its LTP hops
    (spacetp.metrics: total_retransmissions); drops are the links' error drops."""
    single = len(sc.get("flows") or []) == 1 and not sc.get("workloads")
    if single:
        m = {
            "goodput": "flows[0].goodput_bps",
            "completion": "flows[0].completion_s",
            "complete": "flows[0].complete",
            "timeouts": "flows[0].timeouts",
            "rtt": "flows[0].mean_rtt_s",
        }
    else:
        m = {
            "goodput": "total_goodput_bps",
            "completion": "max_completion_s",
            "complete": "all_complete",
            "timeouts": "total_timeouts",
            "rtt": "flows[0].mean_rtt_s",
        }
    m["retx"] = "total_retransmissions"
    m["drops"] = "total_error_drops"
    m["end"] = "run.end_s"
    return m


def compare(
    scenario: dict | str | Path,
    protocols: str | list[str] | None = None,
    reps: int = 10,
    out: str | Path | None = None,
    executor: Any = "local",
    workers: int | None = None,
    base_seed: int | None = None,
    *,
    source: str | None = None,
    command: str | None = None,
    console=None,
    write: bool = True,
    as_configured: bool = False,
    tune_trials: int = 0,
) -> Comparison:
    """Run every chosen profile `reps` times on `scenario` (a dict or a TOML path), rank
    them and, with `out` and `write`, write the page (report.html), figures and tables
    there (the sweep store goes to OUT/store; without `out` nothing is kept). Each profile's
    per-link settings are fitted to the path (`fit = true`, spacetp.fit) unless
    `as_configured`: then they run exactly as written. With `tune_trials` > 0 each profile
    is tuned too (spacetp.compare_tune) and the tuned profiles are ranked, beside their
    fitted and as-configured times."""
    from spacetp import fit
    from spacetp.sweep import run_sweep

    t0 = time.perf_counter()
    if tune_trials and as_configured:
        raise UserError("--tune and --as-configured: choose one (tune starts from fitted)")
    if tune_trials < 0:
        raise UserError(f"--tune {tune_trials}: the trials per profile, 0 (off) or more")
    if source is None and isinstance(scenario, str | Path):
        source = str(scenario)
    sc = load(scenario) if isinstance(scenario, str | Path) else copy_of(scenario)
    names, aliases = choose(protocols)
    paths = _protocol_paths(sc)
    pf = facts(sc)
    roles = _metrics(sc)
    grid = {tuple(paths): [(p,) * len(paths) for p in names]}
    out = None if out is None else Path(out)
    fitted = {} if as_configured else {r["protocol"]: r for r in fit.fitted(sc, names)}
    res = run_sweep(
        sc if as_configured else fit.with_fit(sc),
        grid,
        reps=reps,
        executor=executor,
        workers=workers,
        store=None if out is None else out / "store",
        metrics=list(dict.fromkeys(roles.values())),
        base_seed=base_seed,
        source=source,
        console=console,
    )
    rank_by = "completion" if _finite(sc) else "goodput"
    table, failed = rank(res, paths[0], roles, rank_by, pf, registry(), sc, fitted)
    mode = "as configured" if as_configured else "fitted"
    if tune_trials:
        res, table, failed = _tuned(sc, names, paths, roles, rank_by, pf, fitted, table,
                                    tune_trials, reps, out, dict(
            executor=executor, workers=workers, base_seed=base_seed, source=source,
            metrics=list(dict.fromkeys(roles.values()))), console)  # fmt: skip
        mode = "tuned"
    c = Comparison(
        name=sc.get("name") or (Path(source).stem if source else "scenario"),
        scenario=sc,
        protocols=names,
        aliases=aliases,
        reps=reps,
        facts=pf,
        rank_by=rank_by,
        axis=paths[0],
        table=table,
        failed=failed,
        traces={},
        sweep=res,
        elapsed_s=0.0,
        source=source,
        command=command,
        out=out,
        mode=mode,
        fitted={p: _first_flow_fitted(r) for p, r in fitted.items()},
    )
    c.traces = traces(c)
    c.elapsed_s = time.perf_counter() - t0
    if out is not None and write:
        from spacetp import compare_page

        compare_page.write(c, out)
    return c


def _tuned(sc, names, paths, roles, rank_by, pf, fitted, fitted_table, trials, reps, out,
           run: dict, console):  # fmt: skip
    """(the merged sweep, the ranked table, the failed profiles) of the tuned profiles, the
    table carrying the fitted and as-configured columns (spacetp.compare_tune)."""
    from spacetp import compare_tune, fit
    from spacetp.sweep import run_sweep

    grid = {tuple(paths): [(p,) * len(paths) for p in names]}
    store = None if out is None else out / "store"
    configured = run_sweep(fit.with_fit(sc, None, False), grid, reps=reps, store=store, **run)
    configured_table, _ = rank(configured, paths[0], roles, rank_by, pf, registry(), sc, {})
    merged, tuned = compare_tune.tuned_sweep(sc, names, paths, trials, min(reps, TUNE_REPS),
                                             reps, out, run, console)  # fmt: skip
    table, failed = rank(merged, paths[0], roles, rank_by, pf, registry(), sc, fitted)
    others = {"as configured": configured_table, "fitted": fitted_table}
    if not table.empty:
        compare_tune.add_columns(table, others, rank_by, tuned)
    return merged, table, failed


# The seeds each trial of `compare --tune` runs (the ranking then runs all the replicates).
TUNE_REPS = 3


# ------------------------------------------------------------------------------ ranking


def _merged(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def effective_settings(settings: dict | None, flow: dict | None) -> dict | None:
    """A profile's settings as the scenario's first flow runs them: its `[flows.tcp]`
    overrides laid over the profile's, then the buffer shorthands (what the engine does,
    spacetp-proto's settings.rs); None outside the TCP registry."""
    if settings is None or not flow or "congestion_control" not in settings:
        return settings
    out = _merged(settings, flow.get("tcp") or {})
    for key in ("receive_buffer", "send_buffer"):
        if flow.get(key) is not None:
            out[key] = flow[key]
    return out


def _run_failure(run: dict, nflows: int, complete: str) -> str | None:
    """Why a run did not complete because a flow failed (the first failed flow's reason),
    or None: it completed (a flow whose receiving end failed after the last byte arrived
    still moved the data), or no flow failed."""
    if run.get(complete) == 1.0:
        return None
    for i in range(nflows):
        why = run.get(f"flows[{i}].failure")
        if isinstance(why, str) and why:
            return why if nflows == 1 else f"flows[{i}] {why}"
    return None


def _counted(reasons: list[str]) -> str:
    """`aborted: data timed out (max_retries)`, or several with their counts."""
    counts = Counter(reasons)
    if len(counts) == 1:
        return reasons[0]
    return "; ".join(f"{why} ({n})" for why, n in counts.most_common())


def unfinished_text(row: dict) -> str:
    """`did not finish in 3 of 10 runs: aborted: data timed out (max_retries)`, or ""."""
    reasons = list(row.get("_reasons") or [])
    if not reasons:
        return ""
    return f"did not finish in {len(reasons)} of {row['ok']} runs: {_counted(reasons)}"


def _first_flow_fitted(row: dict) -> list[dict]:
    """What fitting set on the scenario's first flow (or workload) for one profile."""
    flows = row.get("flows") or []
    return list(flows[0].get("fitted") or []) if flows else []


def fitted_text(entries: list[dict], family: str, mode: str) -> str:
    """The page's "settings" cell: what fitting set, or why nothing was."""
    if mode != "fitted":
        return "as written"
    if entries:
        return "; ".join(f"{x['setting']} {x['value']} (was {x['was']})" for x in entries)
    from spacetp.fit import AS_DEPLOYED

    return AS_DEPLOYED.get(family, "nothing to fit on this path")


def _apply_fitted(settings: dict | None, entries: list[dict]) -> dict | None:
    """A TCP profile's settings with what fitting set (for the analytic model)."""
    if settings is None or not entries:
        return settings
    out = dict(settings)
    for x in entries:
        keys = x["setting"].removeprefix("tcp.").split(".")
        node = out
        for k in keys[:-1]:
            node[k] = dict(node.get(k) or {})
            node = node[k]
        node[keys[-1]] = x["value"]
    return out


def rank(
    res, path: str, roles: dict[str, str], rank_by: str, pf, reg: dict, sc: dict,
    fitted: dict | None = None,
):  # fmt: skip
    """(the ranked table, the profiles that could not run) from a sweep's runs. Runs whose
    flow failed (aborted, reset, refused by the transport) are counted and named, never
    averaged in: every mean and interval is over the runs that did not fail (completion
    times over the runs that completed)."""
    import numpy as np
    import pandas as pd

    flows = sc.get("flows") or []
    nflows = len(flows)
    rows, failed = [], []
    runs = res.runs
    for _, s in res.summary.iterrows():
        proto = s[path]
        info = reg.get(proto, {})
        if s["ok"] == 0:
            errs = runs[(runs["point"] == s["point"]) & runs["error"].notna()]["error"]
            failed.append({"protocol": proto, "error": errs.iloc[0] if len(errs) else "no run"})
            continue
        mine = runs[(runs["point"] == s["point"]) & (runs["status"] == "ok")]
        why = [_run_failure(r, nflows, roles["complete"]) for r in mine.to_dict("records")]
        ok = np.array([w is None for w in why])
        good = mine[ok]
        row = {"protocol": proto, "family": info.get("family", ""), "ok": len(mine)}
        row["runs"] = int(s["runs"])
        for role, m in roles.items():
            vals = good[m].to_numpy(dtype=float)
            row[role] = float(np.nanmean(vals)) if np.isfinite(vals).any() else math.nan
            if role in ("completion", "goodput"):
                row[f"{role}_lo"], row[f"{role}_hi"] = bootstrap_ci(vals)
        done = mine[roles["complete"]].to_numpy(dtype=float)
        row["complete"] = float(np.nanmean(done)) if len(done) else math.nan
        row["failed_runs"] = int((~ok).sum())
        row["failure"] = _counted([w for w in why if w]) if row["failed_runs"] else ""
        reasons = [w for w in why if w]
        stopped = int(((done < 1.0 - 1e-9) & ok).sum()) if rank_by == "completion" else 0
        reasons += ["still sending when the run stopped"] * stopped
        row["_reasons"] = reasons
        row["unfinished"] = unfinished_text(row)
        settings = effective_settings(info.get("settings"), flows[0] if flows else None)
        entries = _first_flow_fitted((fitted or {}).get(proto) or {})
        settings = _apply_fitted(settings, entries)
        row["fitted"] = fitted_text(entries, row["family"], "fitted" if fitted else "as written")
        pred = predict(proto, settings, pf, row.get("rtt"), row["family"])
        row["model"], row["model_bps"], row["model_why"] = pred.model, pred.goodput_bps, pred.why
        row.update(_limit_cells(s, bool(flows)))
        row["description"] = info.get("description", "")
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table.empty:
        table = table.drop(columns="_reasons")
        if rank_by == "completion":
            table["_done"] = table["complete"] >= 1.0 - 1e-9
            table = table.sort_values(
                ["_done", "completion", "goodput"],
                ascending=[False, True, False],
                kind="stable",
                na_position="last",
            ).drop(columns="_done")
        else:
            table = table.sort_values("goodput", ascending=False, kind="stable", na_position="last")
        table.insert(0, "rank", range(1, len(table) + 1))
        table = table.reset_index(drop=True)
    return table, pd.DataFrame(failed, columns=["protocol", "error"])


def _limit_cells(s, has_flows: bool = True) -> dict:
    """What limited flows[0] over the profile's runs (the engine's analysis, spacetp.limits):
    the state with the largest mean share and its sentence, the largest liftable one, the
    short label, and the sentence the page shows ("limited_by")."""
    get = {k: s.get(f"flows[0].{k}") for k in ("limit", "limit_share", "limit_text", "liftable",
                                              "liftable_share", "liftable_text")}  # fmt: skip
    text = get["limit_text"] if isinstance(get["limit_text"], str) else ""
    lift = get["liftable_share"]
    if get["limit"] == "link" and isinstance(get["liftable_text"], str) and lift >= LIFT_SHARE:
        text += "; then " + get["liftable_text"]
    return {
        "limit": get["limit"] if isinstance(get["limit"], str) else "",
        "limit_share": get["limit_share"],
        "liftable": get["liftable"] if isinstance(get["liftable"], str) else "",
        "liftable_share": lift,
        "limit_label": limits.brief(get["limit"], get["limit_share"], get["liftable"], lift),
        "limited_by": text or (NO_ANALYSIS if has_flows else NO_FLOWS),
    }


NO_ANALYSIS = "no limit analysis in these runs' summaries"
NO_FLOWS = "not summarised: the transfers are workload files, not [[flows]]"


# ------------------------------------------------------------------------------ traces


def trace_interval(c: Comparison, protocol: str | None = None) -> str:
    """About 400 samples over a profile's run (the longest of all without one), between
    1 ms and 1 s."""
    t = c.table if protocol is None else c.table[c.table["protocol"] == protocol]
    end = float(t["end"].max()) if not t.empty and t["end"].notna().any() else 10.0
    step = min(1.0, max(0.001, end / 400.0))
    return f"{step * 1000:.0f} ms"


def traces(c: Comparison) -> dict[str, Any]:
    """The first flow over time for the best and the worst profile (seed of their first
    replicate): cwnd, bytes in flight (sent, not yet acknowledged) and bytes delivered from
    the sender's samples; `kind` "window". A transport with no sender samples (bp: bundles
    hop by hop) gets instead the bytes its sender put on the flow's first link (a capture
    there) and the bytes delivered, cumulative; `kind` "delivery"."""
    from spacetp.simulate import run

    out = {}
    if c.table.empty:
        return out
    runs = c.sweep.runs
    for proto in dict.fromkeys([c.best, c.worst]):
        interval = trace_interval(c, proto)
        first = runs[(runs[c.axis] == proto) & (runs["status"] == "ok")].sort_values("rep").iloc[0]
        sc = c.sweep.scenario(int(first.name))
        res = run(sc, trace_interval=interval)
        s = res.samples_frame()
        s = s[s["flow"] == 0] if s is not None and len(s) else None
        if s is not None and len(s):
            frame = s[["time_s", "cwnd", "snd_max", "snd_una", "delivered"]].copy()
            frame["in_flight"] = frame["snd_max"] - frame["snd_una"]
            frame["sent"] = frame["snd_max"]
            frame["kind"] = "window"
        else:
            frame = _delivery(c, sc, res, interval)
        frame.insert(0, "protocol", proto)
        out[proto] = frame.reset_index(drop=True)
    return out


def _delivery(c: Comparison, sc: dict, res, interval: str):
    """Bytes sent on the first flow's first link and bytes delivered over time, for a flow
    without sender samples: a capture on that link, its packets from the sender's address
    (the simulator numbers node i 10.0.0.i+1) summed per interval."""
    import tempfile

    import numpy as np
    import pandas as pd

    from spacetp import units
    from spacetp.pcapflows import packets_from
    from spacetp.simulate import run

    f = res.flows[0]
    end = float(res.summary["run"]["end_s"])
    step = units.to_si(interval)[0]
    t = np.arange(0.0, end + step, step)
    sent = np.full(len(t), np.nan)
    flow = (sc.get("flows") or [{}])[0]
    names = [n["name"] for n in sc.get("nodes") or []]
    if c.facts is not None and flow.get("from") in names:
        src = f"10.0.0.{names.index(flow['from']) + 1}"
        with tempfile.TemporaryDirectory() as td:
            pcap = f"{td}/first-link.pcap"
            run(sc, pcap={str(c.facts.hops[0][0]): pcap})
            pk = packets_from(pcap, src)
        if pk:
            times, sizes = np.array(pk, dtype=float).T
            sent = np.cumsum(sizes)[np.searchsorted(times, t, side="right") - 1]
            sent[np.searchsorted(times, t, side="right") == 0] = 0.0
    last = f.get("last_byte_s")
    delivered = np.zeros(len(t))
    if last is not None:
        delivered[t >= float(last)] = float(f["bytes_delivered"])
    return pd.DataFrame(
        {"time_s": t, "cwnd": 0.0, "snd_max": np.nan, "snd_una": np.nan,
         "delivered": delivered, "in_flight": np.nan, "sent": sent, "kind": "delivery"}
    )  # fmt: skip
