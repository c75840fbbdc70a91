"""The gateway's metrics endpoint (`spacetp gateway --metrics ADDRESS:PORT`) in Prometheus'
text exposition format 0.0.4, and `spacetp gateway --status ADDRESS:PORT`, a table of it.

The gateway hands its counters over about once a second (`spacetp._core.gateway`'s
`on_tick`); a thread serves the latest at `/metrics` (Prometheus) and `/status` (the report
as JSON). Counters are `spacetp_gateway_<name>_total`; gauges (open connections, link state,
the largest number of flows at once, uptime) and the histogram of the open connections'
smoothed RTTs (`spacetp_gateway_rtt_seconds`) keep their names.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "spacetp_gateway"

# Report fields that are not counters: gauges, and what the histogram and text carry.
GAUGES = {
    "open_connections": "Relayed connections open now.",
    "link_up": "1 while the space link is up (no link-down notice in force), else 0.",
    "max_flows": "The most relayed connections open at once so far.",
    "elapsed_s": "Seconds since the gateway started.",
}
NOT_METRICS = {"stopped", "open_at_stop", "rtt_buckets", "rtt_sum_s", "rtt_count"}

# What each counter counts, for its HELP line (the report's fields, docs/live.md).
HELP = {
    "accepted": "Connections accepted from local applications.",
    "intercepted": "Connections accepted from the transparent sockets (nftables tproxy).",
    "admitted": "Connections admitted from the peer gateway.",
    "refused": "Connections refused (no rule, or the destination refused).",
    "foreign": "Segments from the link that matched no connection.",
    "closed": "Relayed connections that ended with a close.",
    "reset": "Relayed connections that ended with a reset.",
    "bytes_up": "Bytes relayed from local applications to the link.",
    "bytes_down": "Bytes relayed from the link to local applications.",
    "packets_in": "Packets read from the space link.",
    "packets_out": "Packets written to the space link.",
    "bad_checksum": "Packets from the link dropped for a bad checksum.",
    "undecodable": "Packets from the link that did not decode.",
    "retransmitted_segments": "Segments sent again.",
    "snacks_received": "SNACK options received.",
    "snack_retransmits": "Segments resent for SNACKs.",
    "timeouts": "Retransmission timeouts.",
    "rst_rejected": "Resets refused (RFC 5961).",
    "syn_rejected": "SYNs refused in a synchronized state (RFC 5961).",
    "ack_rejected": "ACKs refused outside the window (RFC 5961).",
    "keepalive_probes": "Keepalive probes sent across the link.",
    "reaped": "Connections ended because the peer stopped answering keepalives.",
    "idle_reaped": "Connections ended after moving no data for the idle timeout.",
    "half_open_dropped": "SYNs dropped: max_half_open connections waited for their handshake.",
    "wakeups": "Times the event loop waited and woke (about 20 a second at rest).",
}


def _name(key: str) -> str:
    return f"{PREFIX}_{key.removesuffix('_s')}"


def _value(v: int | float) -> str:
    """A sample value exactly: integers in full (a counter of 10 000 000 bytes must not read
    1e+07), other numbers as Python's shortest round-tripping repr."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 2**53):
        return str(int(v))
    return repr(float(v))


def prometheus_text(report: dict) -> str:
    """The report in the text exposition format (one HELP and TYPE per metric)."""
    out = []
    for key, value in report.items():
        if key in NOT_METRICS or not isinstance(value, (int, float)):
            continue
        v = _value(value)
        if key in GAUGES:
            name = _name(key) + ("_seconds" if key.endswith("_s") else "")
            out += [f"# HELP {name} {GAUGES[key]}", f"# TYPE {name} gauge", f"{name} {v}"]
        else:
            name = _name(key) + "_total"
            what = HELP.get(key, key.replace("_", " ").capitalize() + ".")
            out += [f"# HELP {name} {what}", f"# TYPE {name} counter", f"{name} {v}"]
    if report.get("rtt_buckets") is not None:
        name = f"{PREFIX}_rtt_seconds"
        out += [
            f"# HELP {name} Smoothed RTT of each open connection, at the last update.",
            f"# TYPE {name} histogram",
        ]
        for le, n in report["rtt_buckets"]:
            out.append(f'{name}_bucket{{le="{le:g}"}} {n}')
        out.append(f'{name}_bucket{{le="+Inf"}} {report.get("rtt_count", 0)}')
        out.append(f"{name}_sum {_value(report.get('rtt_sum_s', 0.0))}")
        out.append(f"{name}_count {report.get('rtt_count', 0)}")
    out += _peer_lines(report.get("peers") or [])
    return "\n".join(out) + "\n"


# Per-peer series: (field, metric suffix, type, help).
PEER_SERIES = (
    ("open_connections", "peer_open_connections", "gauge", "Connections open now, by peer."),
    ("connections", "peer_connections_total", "counter", "Connections relayed, by peer."),
    ("bytes_up", "peer_bytes_up_total", "counter", "Bytes from the local side, by peer."),
    ("bytes_down", "peer_bytes_down_total", "counter", "Bytes to the local side, by peer."),
    ("retransmitted_segments", "peer_retransmitted_segments_total", "counter",
     "Segments retransmitted across the link, by peer."),
)  # fmt: skip


def _peer_lines(peers: list[dict]) -> list[str]:
    """One series per peer (the far end's address on the link; "other" past 256 peers)."""
    out: list[str] = []
    if not peers:
        return out
    for field, suffix, kind, what in PEER_SERIES:
        name = f"{PREFIX}_{suffix}"
        out += [f"# HELP {name} {what}", f"# TYPE {name} {kind}"]
        out += [f'{name}{{peer="{p["peer"]}"}} {_value(p[field])}' for p in peers]
    return out


class MetricsServer:
    """An HTTP server in a daemon thread serving the latest report."""

    def __init__(self, host: str, port: int):
        self.latest: dict = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path == "/metrics":
                    body = prometheus_text(server.latest).encode()
                    kind = "text/plain; version=0.0.4; charset=utf-8"
                elif self.path == "/status":
                    body = json.dumps(server.latest).encode()
                    kind = "application/json"
                else:
                    self.send_error(404, "try /metrics or /status")
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # a scrape every few seconds is not news
                pass

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def update(self, report_json: str) -> None:
        try:
            latest = json.loads(report_json)
        except ValueError:
            return
        latest.pop("events", None)  # the log's, since the last update
        self.latest = latest

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def status_rows(report: dict) -> list[tuple[str, str]]:
    """What `--status` prints: the gauges first, then every non-zero counter."""
    rows = [("state", str(report.get("stopped", "?"))),
            ("link", "up" if report.get("link_up", True) else "down"),
            ("open connections", str(report.get("open_connections", 0)))]  # fmt: skip
    if report.get("rtt_count"):
        rows.append(("mean RTT of open connections",
                     f"{report['rtt_sum_s'] / report['rtt_count'] * 1e3:.0f} ms"))  # fmt: skip
    for key, value in report.items():
        if key in NOT_METRICS or key in GAUGES or isinstance(value, (bool, list, str, dict)):
            continue
        if value:
            rows.append((key.replace("_", " "), _value(value)))
    return rows
