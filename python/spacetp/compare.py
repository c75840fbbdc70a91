"""`spacetp compare`: every protocol profile on the user's link, ranked, on one page.

    import spacetp.compare as cmp
    c = cmp.compare("examples/geo.toml", protocols="newreno,scps-tp,ltp", reps=5,
                    out="results/compare-geo")
    c.table          # one row per profile: rank, time or goodput with its 95% CI, notes, model
    c.page           # results/compare-geo/report.html

How it works: the profiles (every one `spacetp protocols` lists, the aliases once, plus the
transports outside that registry, EXTRA_PROTOCOLS) are one axis of a spacetp sweep that sets
the `protocol` of every `[[flows]]` and `[[workloads]]` entry; the sweep keeps every run in
DIR/store, so an interrupted comparison resumes and a repeated one computes nothing, and runs
on Dask with `executor`. Profiles whose runs fail (QUIC or LTP on a scenario with
`[flows.tcp]` settings, say) are listed with the reason, not ranked.

Ranking: by completion time when every flow has `bytes` (lower is better; profiles that did
not finish every run come after those that did), else by goodput. Each row says in words
what limited it (`notes`), and carries the analytic model's prediction where one applies
(spacetp.compare_models). The best and the worst are run once more with a trace, for the
window and bytes in flight over time. spacetp.compare_page writes the page, the PNG/SVG
figures and the CSV tables.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spacetp import human
from spacetp.compare_models import predict, tcp_payload
from spacetp.pathfacts import PathFacts, facts
from spacetp.scenario import ScenarioError, copy_of, load
from spacetp.stats import column

# Transports outside the TCP/QUIC profile registry (`spacetp protocols`), with what the page
# says about them. A new one is one line here.
EXTRA_PROTOCOLS = {
    "ltp": ("ltp", "LTP (RFC 5326) as NASA ION runs it: blocks, checkpoints and reports, no "
            "congestion control ([flows.ltp])"),
    "bp": ("dtn", "the Bundle Protocol (RFC 9171) over LTP: store and forward by contact "
           "graph routing over the plan the links (or [dtn]) give ([flows.bp])"),
}  # fmt: skip

FILL = 0.85  # "fills the link": goodput at least this share of the link's payload rate
ACK_BUSY = 0.8  # "ACK-starved": ACKs use at least this share of the return link
STALL = 0.5  # "stalled by timeouts": timeouts and goodput below this share of the link


@dataclass
class Comparison:
    """The outcome of `compare`: `table` (pandas, one row per profile run, best first; see
    `COLUMNS`), `failed` (profiles whose runs failed, with the error), `facts` (the path, or
    None), `rank_by` ("completion" or "goodput"), `traces` ({profile: samples frame of its
    first flow}) of the best and the worst, `sweep` (the SweepResult), `out` and `page`."""

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

    @property
    def best(self) -> str | None:
        return None if self.table.empty else self.table["protocol"].iloc[0]

    @property
    def worst(self) -> str | None:
        return None if self.table.empty else self.table["protocol"].iloc[-1]


# ------------------------------------------------------------------------------ profiles


def registry() -> dict[str, dict]:
    """Every profile to compare: `spacetp protocols` plus EXTRA_PROTOCOLS, as {name:
    {"family", "description", "settings" (None outside the registry)}}."""
    from spacetp.simulate import protocols as profiles

    out = {
        k: {"family": v["family"], "description": v["description"], "settings": v["settings"]}
        for k, v in profiles().items()
    }
    for name, (family, desc) in EXTRA_PROTOCOLS.items():
        out.setdefault(name, {"family": family, "description": desc, "settings": None})
    return out


def all_protocols() -> tuple[list[str], dict[str, str]]:
    """(the profiles `--protocols all` runs, {alias: the profile it is the same as}): two
    profiles with the same family and settings (bbr = linux-bbr, quic = quic-cubic) run
    once, under the first name."""
    names, aliases, seen = [], {}, {}
    for name, info in registry().items():
        key = (info["family"], repr(info["settings"])) if info["settings"] else (name,)
        if key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        names.append(name)
    return names, aliases


def choose(spec: str | list[str] | None) -> tuple[list[str], dict[str, str]]:
    """The profiles of `--protocols`: None or "all" for all of them, else a comma list
    (or a Python list) of names, each checked against the registry."""
    names, aliases = all_protocols()
    if spec is None or spec == "all" or spec == ["all"]:
        return names, aliases
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    known = registry()
    chosen = []
    for s in items:
        if not s:
            raise ScenarioError(f"--protocols {spec}: an empty name in the list")
        if s not in known:
            raise ScenarioError(
                f"--protocols {s}: unknown protocol; use 'all' or names from `spacetp "
                f"protocols`: {', '.join(known)}"
            )
        if s in chosen:
            raise ScenarioError(f"--protocols {s}: listed twice")
        chosen.append(s)
    return chosen, {}


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


def _metrics(sc: dict, pf: PathFacts | None) -> dict[str, str]:
    """{role: metric}: what the ranking reads from each run."""
    single = len(sc.get("flows") or []) == 1 and not sc.get("workloads")
    if single:
        m = {
            "goodput": "flows[0].goodput_bps",
            "completion": "flows[0].completion_s",
            "complete": "flows[0].complete",
            "retx": "flows[0].retransmitted_segments",
            "timeouts": "flows[0].timeouts",
            "rtt": "flows[0].mean_rtt_s",
        }
    else:
        m = {
            "goodput": "total_goodput_bps",
            "completion": "max_completion_s",
            "complete": "all_complete",
            "retx": "total_retransmitted_segments",
            "timeouts": "total_timeouts",
            "rtt": "flows[0].mean_rtt_s",
        }
    m["end"] = "run.end_s"
    if pf is not None:
        data, ack = pf.summary_index(pf.bottleneck), pf.summary_index(pf.ack_bottleneck)
        m["ack_bytes"] = f"links[{ack}].tx_bytes"
        m["queue_drops"] = f"links[{data}].queue_drops"
        m["ack_queue_drops"] = f"links[{ack}].queue_drops"
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
) -> Comparison:
    """Run every chosen profile `reps` times on `scenario` (a dict or a TOML path), rank
    them and, with `out` and `write`, write the page (report.html), figures and tables
    there (the sweep store goes to OUT/store; without `out` nothing is kept)."""
    from spacetp.sweep import run_sweep

    t0 = time.perf_counter()
    if source is None and isinstance(scenario, str | Path):
        source = str(scenario)
    sc = load(scenario) if isinstance(scenario, str | Path) else copy_of(scenario)
    names, aliases = choose(protocols)
    paths = _protocol_paths(sc)
    pf = facts(sc)
    roles = _metrics(sc, pf)
    grid = {tuple(paths): [(p,) * len(paths) for p in names]}
    out = None if out is None else Path(out)
    res = run_sweep(
        sc,
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
    table, failed = rank(res, paths[0], roles, rank_by, pf, registry())
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
    )
    c.traces = traces(c)
    c.elapsed_s = time.perf_counter() - t0
    if out is not None and write:
        from spacetp import compare_page

        compare_page.write(c, out)
    return c


# ------------------------------------------------------------------------------ ranking


def rank(res, path: str, roles: dict[str, str], rank_by: str, pf, reg: dict):
    """(the ranked table, the failed profiles) from a sweep's summary."""
    import pandas as pd

    rows, failed = [], []
    runs = res.runs
    for _, s in res.summary.iterrows():
        proto = s[path]
        info = reg.get(proto, {})
        if s["ok"] == 0:
            errs = runs[(runs["point"] == s["point"]) & runs["error"].notna()]["error"]
            failed.append({"protocol": proto, "error": errs.iloc[0] if len(errs) else "no run"})
            continue
        row = {"protocol": proto, "family": info.get("family", ""), "ok": int(s["ok"])}
        row["runs"] = int(s["runs"])
        for role, m in roles.items():
            row[role] = float(s[column(m, "mean")])
            row[f"{role}_ci"] = float(s[column(m, "ci95")])
        pred = predict(proto, info.get("settings"), pf, row.get("rtt"), row["family"])
        row["model"], row["model_bps"], row["model_why"] = pred.model, pred.goodput_bps, pred.why
        row["notes"] = "; ".join(notes(row, info.get("settings"), pf))
        row["description"] = info.get("description", "")
        rows.append(row)
    table = pd.DataFrame(rows)
    if not table.empty:
        if rank_by == "completion":
            table["_done"] = table["complete"] >= 1.0 - 1e-9
            table = table.sort_values(
                ["_done", "completion", "goodput"], ascending=[False, True, False], kind="stable"
            ).drop(columns="_done")
        else:
            table = table.sort_values("goodput", ascending=False, kind="stable")
        table.insert(0, "rank", range(1, len(table) + 1))
        table = table.reset_index(drop=True)
    return table, pd.DataFrame(failed, columns=["protocol", "error"])


def _payload(settings: dict | None, pf: PathFacts) -> float:
    if settings is not None and "congestion_control" in settings:
        return tcp_payload(settings, pf.mtu)
    return pf.mtu - 28.0 - 8.0  # UDP/IP and a short QUIC or LTP header, about


def notes(row: dict, settings: dict | None, pf: PathFacts | None) -> list[str]:
    """What limited a profile, in plain words, the strongest reason first."""
    out = []
    if row.get("complete", 1.0) < 1.0 - 1e-9:
        n = row["ok"]
        done = round(row["complete"] * n)
        out.append(f"did not finish in {n - done} of {n} runs")
    if pf is None:
        if row.get("timeouts", 0) >= 1:
            out.append(f"{human.number(row['timeouts'])} timeouts per run")
        return out or ["-"]
    link = pf.rate_bps * _payload(settings, pf) / pf.mtu
    share = row["goodput"] / link if link > 0 else math.nan
    end = row.get("end") or math.nan
    ack_share = 8.0 * row.get("ack_bytes", 0.0) / end / pf.ack_rate_bps if end > 0 else 0.0
    if share >= FILL:
        out.append(f"fills the link ({human.percent(share)} of its payload rate)")
    if ack_share >= ACK_BUSY or row.get("ack_queue_drops", 0) >= 1:
        out.append(
            f"ACK-starved return: ACKs use {human.percent(ack_share)} of the "
            f"{human.rate(pf.ack_rate_bps)} return"
        )
    if row.get("timeouts", 0) >= 1 and share < STALL:
        out.append(f"stalled by timeouts ({human.number(row['timeouts'])} per run)")
    scps = (settings or {}).get("scps") or {}
    rate = scps.get("rate") if scps.get("enabled") else None
    if rate:
        from spacetp import units

        r = units.to_si(rate)[0]
        if r < 0.95 * pf.rate_bps:
            out.append(f"held to {human.rate(r)} by its rate control")
    if settings is not None and "receive_buffer" in settings:
        from spacetp import units

        rwnd = units.to_si(settings["receive_buffer"])[0]
        if rwnd < 0.9 * pf.bdp_bytes:
            out.append(
                f"window-limited: receive buffer {human.size(rwnd)} < the path's "
                f"bandwidth-delay product {human.size(pf.bdp_bytes)}"
            )
    if row.get("queue_drops", 0) >= 1:
        out.append(
            f"overflows the bottleneck queue ({human.number(row['queue_drops'])} drops per run)"
        )
    if not out and row.get("retx", 0) >= 1 and share < FILL:
        out.append(
            f"loss-limited: {human.number(row['retx'])} retransmissions per run "
            f"({human.percent(share)} of the link)"
        )
    return out or [f"{human.percent(share)} of the link"]


# ------------------------------------------------------------------------------ traces


def trace_interval(c: Comparison) -> str:
    """About 400 samples over the best profile's run, between 10 ms and 1 s."""
    end = float(c.table["end"].max()) if not c.table.empty else 10.0
    step = min(1.0, max(0.01, end / 400.0))
    return f"{step * 1000:.0f} ms"


def traces(c: Comparison) -> dict[str, Any]:
    """The first flow's sender state over time for the best and the worst profile (seed of
    their first replicate): cwnd, bytes in flight (sent, not yet acknowledged) and bytes
    acknowledged."""
    from spacetp.simulate import run

    out = {}
    if c.table.empty:
        return out
    interval = trace_interval(c)
    runs = c.sweep.runs
    for proto in dict.fromkeys([c.best, c.worst]):
        first = runs[(runs[c.axis] == proto) & (runs["status"] == "ok")].sort_values("rep").iloc[0]
        sc = c.sweep.scenario(int(first.name))
        res = run(sc, trace_interval=interval)
        s = res.samples_frame()
        s = s[s["flow"] == 0]
        frame = s[["time_s", "cwnd", "snd_max", "snd_una"]].copy()
        frame["in_flight"] = frame["snd_max"] - frame["snd_una"]
        frame.insert(0, "protocol", proto)
        out[proto] = frame.reset_index(drop=True)
    return out
