"""What a sweep measures in each run: numbers taken from the run's summary.

A metric is either a path into the summary (`flows[0].goodput_bps`, `run.end_s`,
`links[2].queue_drops`, `datagrams[0].packets_received`, a flow's own transport block as
`flows[0].tcp.fast_retransmits`) or an aggregate over all flows (workload files included):

    total_goodput_bps     sum of the flows' goodputs
    mean_goodput_bps      their mean
    mean_completion_s     mean completion time of the complete flows
    max_completion_s      largest completion time of the complete flows
    all_complete          1 if every finite flow completed, else 0
    total_bytes_delivered, total_retransmitted_segments, total_timeouts
    total_retransmissions total_retransmitted_segments, with bp flows counted by their LTP
                          hops' data segments sent again (their own count is 0)
    total_error_drops     packets the links' error models dropped, every link both ways
    flow_count            number of flows in the results

Every metric is a float: booleans are 0/1 (so a mean is a fraction), a missing value (the
completion time of an incomplete flow, an index beyond the flows of this run) is NaN.

Default metrics: for each `[[flows]]` entry i, `flows[i].goodput_bps`, `completion_s`,
`complete`, `retransmitted_segments`, `timeouts` and `mean_rtt_s`; with more than one flow
or any workload, the aggregates `total_goodput_bps`, `mean_completion_s`, `all_complete`,
`total_retransmitted_segments` and `flow_count` too.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from spacetp.scenario import ScenarioError, _parse_path

FLOW_DEFAULTS = (
    "goodput_bps",
    "completion_s",
    "complete",
    "retransmitted_segments",
    "timeouts",
    "mean_rtt_s",
)
AGGREGATE_DEFAULTS = (
    "total_goodput_bps",
    "mean_completion_s",
    "all_complete",
    "total_retransmitted_segments",
    "flow_count",
)

# Numeric fields of each part of the summary (docs/scenario.md, "Outputs").
FIELDS = {
    "run": {"seed", "end_s", "events", "peak_packets"},
    "flows": {
        "bytes_requested",
        "bytes_delivered",
        "bytes_undelivered",
        "complete",
        "start_s",
        "last_byte_s",
        "completion_s",
        "goodput_bps",
        "segments_sent",
        "data_segments_sent",
        "retransmitted_segments",
        "retransmitted_bytes",
        "timeouts",
        "acks_sent",
        "mean_rtt_s",
        "min_rtt_s",
        "final_cwnd_bytes",
    },
    "links": {
        "tx_packets",
        "tx_bytes",
        "queue_drops",
        "error_drops",
        "corrupted",
        "outage_drops",
        "delivered_packets",
        "max_queue_packets",
        "max_queue_bytes",
    },
    "datagrams": {"packets_sent", "packets_received", "bytes_received"},
}
# Numeric fields of a flow's own transport block (`flows[0].tcp.fast_retransmits`).
FLOW_BLOCK_FIELDS = {
    "tcp": {
        "spurious_timeouts",
        "fast_retransmits",
        "loss_probes",
        "loss_probe_recoveries",
        "nil_segments_sent",
        "snacks_received",
        "snack_retransmits",
        "records_delivered",
        "bets_bytes_lost",
        "rst_rejected",
        "syn_rejected",
        "ack_rejected",
        "out_of_window_segments",
        "challenge_acks",
    },
}


def _num(v: object) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    return float(v)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _complete_times(s: dict) -> list[float]:
    return [f["completion_s"] for f in s["flows"] if f["complete"]]


def _retransmissions(s: dict) -> float:
    """Every flow's retransmitted segments (TCP, SCPS-TP, QUIC's lost packets sent again,
    LTP's data segments and checkpoints sent again); bp flows by their LTP hops' data
    segments sent again (summary["dtn"]["hops"]), which carry every bundle of the run."""
    own = sum(f["retransmitted_segments"] for f in s["flows"] if f.get("protocol") != "bp")
    if any(f.get("protocol") == "bp" for f in s["flows"]):
        hops = (s.get("dtn") or {}).get("hops") or []
        own += sum(h.get("data_segments_retransmitted", 0) for h in hops)
    return float(own)


AGGREGATES: dict[str, Callable[[dict], float]] = {
    "total_goodput_bps": lambda s: float(sum(f["goodput_bps"] for f in s["flows"])),
    "mean_goodput_bps": lambda s: _mean([f["goodput_bps"] for f in s["flows"]]),
    "mean_completion_s": lambda s: _mean(_complete_times(s)),
    "max_completion_s": lambda s: max(_complete_times(s), default=math.nan),
    "all_complete": lambda s: _num(
        all(f["complete"] for f in s["flows"] if f["bytes_requested"] is not None)
    ),
    "total_bytes_delivered": lambda s: float(sum(f["bytes_delivered"] for f in s["flows"])),
    "total_retransmitted_segments": lambda s: float(
        sum(f["retransmitted_segments"] for f in s["flows"])
    ),
    "total_retransmissions": lambda s: _retransmissions(s),
    "total_error_drops": lambda s: float(sum(li["error_drops"] for li in s.get("links") or [])),
    "total_timeouts": lambda s: float(sum(f["timeouts"] for f in s["flows"])),
    "flow_count": lambda s: float(len(s["flows"])),
}


def defaults(scenario: dict) -> list[str]:
    """The default metrics of a scenario (see the module docstring)."""
    n = len(scenario.get("flows") or [])
    out = [f"flows[{i}].{f}" for i in range(n) for f in FLOW_DEFAULTS]
    if n != 1 or scenario.get("workloads"):
        out += AGGREGATE_DEFAULTS
    return out


def _usage() -> str:
    return (
        "a metric is an aggregate (" + ", ".join(AGGREGATES) + ") or a summary path such as "
        "flows[0].goodput_bps, run.end_s, links[2].queue_drops"
    )


def check(metric: str) -> None:
    """Raise ScenarioError for a metric that is neither an aggregate nor a numeric path."""
    if metric in AGGREGATES:
        return
    try:
        tokens = _parse_path(metric)
    except ScenarioError:
        raise ScenarioError(f"--metric {metric}: {_usage()}") from None
    head = tokens[0]
    if head not in FIELDS:
        raise ScenarioError(f"--metric {metric}: {_usage()}")
    if head == "flows" and len(tokens) == 4 and isinstance(tokens[1], int):
        _check_block(metric, tokens[2], tokens[3])
        return
    shape_ok = (
        len(tokens) == 2 and isinstance(tokens[1], str)
        if head == "run"
        else len(tokens) == 3 and isinstance(tokens[1], int) and isinstance(tokens[2], str)
    )
    if not shape_ok:
        example = "run.end_s" if head == "run" else f"{head}[0].{sorted(FIELDS[head])[0]}"
        raise ScenarioError(f"--metric {metric}: expected a path like {example}")
    if tokens[-1] not in FIELDS[head]:
        block = next((b for b, fs in FLOW_BLOCK_FIELDS.items() if tokens[-1] in fs), None)
        if head == "flows" and block is not None:
            raise ScenarioError(
                f"--metric {metric}: `{tokens[-1]}` is in the flow's {block} block: "
                f"flows[{tokens[1]}].{block}.{tokens[-1]}"
            )
        raise ScenarioError(
            f"--metric {metric}: `{tokens[-1]}` is not a numeric field of {head}; "
            f"fields: {', '.join(sorted(FIELDS[head]))}"
        )


def _check_block(metric: str, block: object, field: object) -> None:
    """A path into a flow's own transport block, e.g. flows[0].tcp.fast_retransmits."""
    fields = FLOW_BLOCK_FIELDS.get(block) if isinstance(block, str) else None
    if fields is None:
        raise ScenarioError(
            f"--metric {metric}: `{block}` is not a flow block with numeric fields; "
            f"blocks: {', '.join(sorted(FLOW_BLOCK_FIELDS))}"
        )
    if field not in fields:
        raise ScenarioError(
            f"--metric {metric}: `{field}` is not a numeric field of a flow's {block} block; "
            f"fields: {', '.join(sorted(fields))}"
        )


def extractor(metric: str) -> Callable[[dict], float]:
    """A function giving the value of one metric in a run summary (the metric is checked)."""
    check(metric)
    agg = AGGREGATES.get(metric)
    if agg is not None:
        return agg
    tokens = _parse_path(metric)
    if tokens[0] == "run":
        field = tokens[1]
        return lambda s: _num(s["run"].get(field))
    part, i, *fields = tokens

    def value(s: dict) -> float:
        items = s.get(part) or []
        v = items[i] if i < len(items) else None
        for field in fields:
            v = v.get(field) if isinstance(v, dict) else None
        return _num(v)

    return value
