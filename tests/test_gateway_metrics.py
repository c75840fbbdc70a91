"""`spacetp gateway --metrics ADDRESS:PORT` and `--status`: a gateway pair on loopback (UDP
encapsulation, no root) relays a transfer; its endpoint, read by the Prometheus project's own
parser (prometheus_client), has the counters, gauges and RTT histogram with the right
values, and `--status` prints them."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from conftest import free_ports, spacetp_cli, start_gateway
from spacetp.live.gateway_metrics import PREFIX, prometheus_text

N = 300_000


def _gateways(p: list[int]) -> list:
    """Gateways B and A, each (process, Output) once ready; they run until SIGTERM."""
    a = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", f"127.0.0.1:{p[0]}=5000",
         "--udp", f"127.0.0.1:{p[1]},127.0.0.1:{p[2]}",
         "--metrics", f"127.0.0.1:{p[4]}"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p[3]}",
         "--udp", f"127.0.0.1:{p[2]},127.0.0.1:{p[1]}"]  # fmt: skip
    return [start_gateway(*args, "--duration", "600") for args in (b, a)]


def _scrape(url: str, deadline: float) -> str:
    while True:
        try:
            return urllib.request.urlopen(url, timeout=2).read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_the_metrics_endpoint_counts_a_relayed_transfer(tmp_path):
    p = free_ports(5)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", p[3]))
    srv.listen()
    got = []

    def serve():
        c, _ = srv.accept()
        n = 0
        while b := c.recv(65536):
            n += len(b)
        got.append(n)

    threading.Thread(target=serve, daemon=True).start()
    gws = []
    try:
        gws += _gateways(p)
        url = f"http://127.0.0.1:{p[4]}/metrics"
        c = socket.create_connection(("127.0.0.1", p[0]))
        c.sendall(os.urandom(N))
        c.close()
        deadline = time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            time.sleep(0.1)
        assert got == [N]
        # The endpoint is updated about once a second: read it until it has the transfer.
        while True:
            text = _scrape(url, time.monotonic() + 30)
            fams = {f.name: f for f in text_string_to_metric_families(text)}
            value = {s.name: s.value for f in fams.values() for s in f.samples if not s.labels}
            if value.get("spacetp_gateway_bytes_up_total") == N or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert fams["spacetp_gateway_accepted"].type == "counter"
        assert value["spacetp_gateway_accepted_total"] == 1
        assert value["spacetp_gateway_bytes_up_total"] == N
        assert value["spacetp_gateway_link_up"] == 1
        assert fams["spacetp_gateway_open_connections"].type == "gauge"
        assert fams["spacetp_gateway_rtt_seconds"].type == "histogram"
        buckets = [s for s in fams["spacetp_gateway_rtt_seconds"].samples if s.labels]
        counts = [s.value for s in buckets]
        assert counts == sorted(counts) and buckets[-1].labels["le"] == "+Inf"
        # Per peer: gateway A's one peer on the link is gateway B's address.
        peer = {(s.name, s.labels.get("peer")): s.value for f in fams.values() for s in f.samples}
        assert peer[("spacetp_gateway_peer_bytes_up_total", "10.77.0.2")] == N
        assert peer[("spacetp_gateway_peer_connections_total", "10.77.0.2")] == 1
        assert fams["spacetp_gateway_peer_open_connections"].type == "gauge"
        # Every integer of the report is printed in full, as /status has it (a counter of
        # 10 000 000 once read 1e+07; 12 345 678 would have read 1.23457e+07).
        status = json.loads(_scrape(f"http://127.0.0.1:{p[4]}/status", deadline))
        lines = dict(ln.rsplit(" ", 1) for ln in text.splitlines() if not ln.startswith("#"))
        for key, v in status.items():
            if isinstance(v, int) and not isinstance(v, bool) and f"{PREFIX}_{key}_total" in lines:
                assert lines[f"{PREFIX}_{key}_total"] == str(v), (key, v)
        r = spacetp_cli("gateway", "--status", f"127.0.0.1:{p[4]}")
        assert r.returncode == 0 and "open connections" in r.stdout and "bytes up" in r.stdout
        for g, io in gws:
            g.send_signal(signal.SIGTERM)
            _, err = io.finish(timeout=60)
            assert g.returncode == 0, err
    finally:
        for g, _ in gws:
            if g.poll() is None:
                g.kill()
        srv.close()


def test_status_of_nothing_is_one_line(tmp_path):
    r = spacetp_cli("gateway", "--status", "127.0.0.1:9")
    assert r.returncode == 2 and "--status 127.0.0.1:9: no gateway metrics there" in r.stderr


def test_counters_print_in_full_and_fractions_round_trip():
    text = prometheus_text({"bytes_down": 12_345_678, "elapsed_s": 1234567.125, "link_up": True})
    lines = dict(ln.rsplit(" ", 1) for ln in text.splitlines() if not ln.startswith("#"))
    assert lines[f"{PREFIX}_bytes_down_total"] == "12345678"
    assert lines[f"{PREFIX}_elapsed_seconds"] == "1234567.125"
    assert lines[f"{PREFIX}_link_up"] == "1"
