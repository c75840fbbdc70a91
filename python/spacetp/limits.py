"""What held a flow back, read from the engine's limit analysis (each flow summary's
`limits`: its time from start to last byte split into named states, largest share first,
each with the setting that lifts it), and why a flow failed; for one run and over many.

    from spacetp import limits
    limits.main(flow)         # the state with the largest share: {"state", "share", ...}
    limits.liftable(flow)     # the largest one a setting lifts (never the link)
    limits.failure(flow)      # "aborted: data timed out (max_retries)", or None
    agg = limits.Aggregate()  # over runs: the state with the largest mean share
    for f in flows: agg.add(f)
    agg.result()

The engine's states (crates/spacetp-sim/src/limits/): link (the bottleneck was busy: the
good case), handshake, congestion_window, receive_window, slow_reader, send_buffer,
rate_control, pacing, ltp_sessions, return_path, recovery, application, link_down and
propagation. Nothing here names them: a new state reads as its key with spaces.

Used by the sweep's run and point columns (spacetp.sweep: `flows[i].limit`, ...),
`spacetp results` and the compare page (spacetp.compare).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LIFT_SHARE = 0.1  # a liftable state is named after the link only from this mean share on
FAILED = ("failed", "aborted", "reset")  # how a failed end's state begins
_SHARE = re.compile(r"for \d+% of the time")


def label(state: str | None) -> str:
    """A state's key as a short label: `receive window`, `LTP sessions`."""
    if not state:
        return "-"
    return state.replace("_", " ").replace("ltp", "LTP")


def entries(flow: dict) -> list[dict]:
    """The flow's limit analysis, largest share first ([] for a transport without one and
    for summaries written before it existed)."""
    return list(flow.get("limits") or [])


def main(flow: dict) -> dict | None:
    """The state with the largest share."""
    lims = entries(flow)
    return lims[0] if lims else None


def is_liftable(entry: dict) -> bool:
    """A state a setting lifts: it names one, and it is not the link (the good case)."""
    return entry.get("state") != "link" and bool(entry.get("setting"))


def liftable(flow: dict) -> dict | None:
    """The largest state a setting lifts (it may be the main one)."""
    return next((e for e in entries(flow) if is_liftable(e)), None)


def failure(flow: dict) -> str | None:
    """Why the flow failed, or None: the engine's `failure` when the summary has it, else
    the first of the sender's state, the receiver's state and QUIC's failure that says so
    ("failed: ...", "aborted: ...", "reset by peer")."""
    if "failure" in flow:
        return flow["failure"] or None
    quic = (flow.get("quic") or {}).get("failure")
    for s in (flow.get("state"), flow.get("receiver_state"), quic):
        if isinstance(s, str) and s.startswith(FAILED):
            return s
    return f"failed: {quic}" if quic else None


def sentence(entry: dict, share: float | None = None) -> str:
    """The engine's line for a state ("limited by receive window 3.93 MB for 71% of the time
    (BDP 18.8 MB): raise flows[0].receive_buffer (6.29 MB) to the BDP"), with `share` in
    place of the run's own when given (a mean over runs)."""
    text = entry.get("text") or f"limited by {label(entry.get('state'))}"
    if share is None:
        return text
    return _SHARE.sub(f"for {100.0 * share:.0f}% of the time", text, count=1)


def short(state: str | None, share: float | None) -> str:
    """`receive window 71%`."""
    if not state:
        return "-"
    return f"{label(state)} {100.0 * share:.0f}%" if share is not None else label(state)


@dataclass
class Aggregate:
    """The limit analyses and failures of one flow over several runs. `add` each run's
    flow summary; `result()` gives the state with the largest mean share (a state a run
    did not have counts 0 in it), and the largest liftable one."""

    runs: int = 0
    analysed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    _sums: dict[str, float] = field(default_factory=dict)
    _entry: dict[str, dict] = field(default_factory=dict)  # per state, the run with most

    def add(self, flow: dict) -> None:
        self.runs += 1
        why = failure(flow)
        if why:
            self.failures[why] = self.failures.get(why, 0) + 1
        lims = entries(flow)
        if not lims:
            return
        self.analysed += 1
        for e in lims:
            st = e["state"]
            self._sums[st] = self._sums.get(st, 0.0) + float(e["share"])
            if st not in self._entry or e["share"] > self._entry[st]["share"]:
                self._entry[st] = e

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    def failure_text(self) -> str:
        """`aborted: data timed out (max_retries)`, or several reasons with their counts,
        the commonest first."""
        items = sorted(self.failures.items(), key=lambda kv: (-kv[1], kv[0]))
        if len(items) == 1:
            return items[0][0]
        return "; ".join(f"{why} ({n})" for why, n in items)

    def shares(self) -> list[tuple[str, float]]:
        """(state, mean share over the analysed runs), largest first."""
        if not self.analysed:
            return []
        means = [(st, s / self.analysed) for st, s in self._sums.items()]
        return sorted(means, key=lambda x: -x[1])

    def result(self) -> dict:
        """{"state", "share", "text", "setting"} of the largest mean share, and the same
        under "liftable_*" for the largest liftable state (None without one); "runs" and
        "analysed" count the runs."""
        out = {"runs": self.runs, "analysed": self.analysed}
        means = self.shares()
        top = means[0] if means else (None, None)
        lift = next(((s, m) for s, m in means if is_liftable(self._entry[s])), (None, None))
        for prefix, (st, m) in (("", top), ("liftable_", lift)):
            e = self._entry.get(st) if st else None
            out[f"{prefix}state"] = st
            out[f"{prefix}share"] = m
            out[f"{prefix}text"] = sentence(e, m) if e else None
            out[f"{prefix}setting"] = e.get("setting") if e else None
        return out

    def words(self) -> str:
        """The main state's sentence over the runs, and when the link leads, the largest
        liftable state from LIFT_SHARE on; "" without an analysis."""
        r = self.result()
        if not r["state"]:
            return ""
        text = r["text"]
        if r["state"] == "link" and r["liftable_state"] and r["liftable_share"] >= LIFT_SHARE:
            text += "; then " + r["liftable_text"]
        return text

    def label(self) -> str:
        """The short form: `receive window 71%`, `link 46%, receive window 30%`."""
        r = self.result()
        return brief(r["state"], r["share"], r["liftable_state"], r["liftable_share"])


def brief(state, share, lift_state=None, lift_share=None) -> str:
    """`receive window 71%`; when the link leads, the largest liftable state after it from
    LIFT_SHARE on: `link 46%, receive window 30%`; "" without a state."""
    if not isinstance(state, str) or not state:
        return ""
    text = short(state, share)
    if state == "link" and isinstance(lift_state, str) and (lift_share or 0) >= LIFT_SHARE:
        text += ", " + short(lift_state, lift_share)
    return text


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def point_label(row: dict, flow: int = 0) -> str:
    """A sweep point's cell for flows[flow] (its summary columns, spacetp.sweep): the failed
    runs with the reason, then the main state: `failed in 2: aborted: data timed out
    (max_retries); link down 94%`."""
    p = f"flows[{flow}]."
    text = brief(row.get(p + "limit"), row.get(p + "limit_share"), row.get(p + "liftable"),
                 row.get(p + "liftable_share"))  # fmt: skip
    failed = row.get(p + "failed_runs")
    if not _missing(failed) and failed:
        text = f"failed in {int(failed)}: {row.get(p + 'failure')}" + (f"; {text}" if text else "")
    return text or "-"


def run_label(row: dict, flow: int = 0) -> str:
    """A run's cell for flows[flow] (its run columns): `FAILED: reason; link down 94%`."""
    p = f"flows[{flow}]."
    text = brief(row.get(p + "limit"), row.get(p + "limit_share"), row.get(p + "liftable"),
                 row.get(p + "liftable_share"))  # fmt: skip
    why = row.get(p + "failure")
    if isinstance(why, str) and why:
        text = f"FAILED: {why}" + (f"; {text}" if text else "")
    return text or "-"
