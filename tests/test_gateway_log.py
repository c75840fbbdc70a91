"""`spacetp gateway --log json --idle-timeout S`: a gateway pair on loopback (UDP
encapsulation, no root) relays a connection that then goes quiet; the idle timeout resets
both ends, and each gateway's log (stderr) says so in JSON lines with the connection's id: its
opening, its end (reset, why, bytes each way); the final report is one line on stdout."""

from __future__ import annotations

import json
import signal
import socket
import threading

import pytest

from conftest import free_ports, start_gateway, until_reset
from spacetp.live.gateway_log import event_line


def _gateways(p: list[int], extra: list[str]) -> list:
    """Gateways A and B, each (process, Output) once ready; they run until SIGTERM."""
    a = ["--local", "10.77.0.1", "--peer", "10.77.0.2", "--listen", f"127.0.0.1:{p[0]}=5000",
         "--udp", f"127.0.0.1:{p[1]},127.0.0.1:{p[2]}"]  # fmt: skip
    b = ["--local", "10.77.0.2", "--peer", "10.77.0.1", "--forward", f"5000=127.0.0.1:{p[3]}",
         "--udp", f"127.0.0.1:{p[2]},127.0.0.1:{p[1]}"]  # fmt: skip
    return [start_gateway(*args, *extra, "--duration", "600") for args in (a, b)]


def test_an_idle_connection_is_reset_on_both_ends_and_logged_as_json_lines():
    p = free_ports(4)
    srv = socket.create_server(("127.0.0.1", p[3]))
    at_server: list = []

    def serve():
        c, _ = srv.accept()
        c.settimeout(10)
        try:
            at_server.append(c.recv(100))
            at_server.append(c.recv(100))  # nothing more comes: the reset ends this
        except OSError as e:
            at_server.append(e)

    threading.Thread(target=serve, daemon=True).start()
    gws = []
    try:
        gws += _gateways(p, ["--log", "json", "--idle-timeout", "1"])
        c = socket.create_connection(("127.0.0.1", p[0]))
        c.sendall(b"hello")
        c.settimeout(60)
        got, took = until_reset(c)
        for g, _ in gws:
            g.send_signal(signal.SIGTERM)
        outs = [io.finish(timeout=60) for _, io in gws]
    finally:
        for g, _ in gws:
            g.kill()
    # Reset by the idle timeout (the logs say "idle" below), not before a second of quiet.
    assert got == "reset" and took >= 0.9, (got, took)
    assert at_server[:1] == [b"hello"], at_server
    assert isinstance(at_server[-1], ConnectionResetError), at_server
    causes = []
    for out, err in outs:
        # The log on stderr (every line JSON), the final report on stdout (one line).
        events = [json.loads(x) for x in err.splitlines() if x.strip()]
        assert all(isinstance(x["time"], float) for x in events)
        opened = [x for x in events if x["event"] == "open"]
        closed = [x for x in events if x["event"] == "close"]
        assert [x["conn"] for x in opened] == [1] and [x["conn"] for x in closed] == [1], events
        assert closed[0]["how"] == "reset"
        assert closed[0]["bytes_up"] + closed[0]["bytes_down"] == 5
        causes.append(closed[0]["cause"])
        [report] = [json.loads(x) for x in out.splitlines() if x.strip()]
        assert report["stopped"] == "signal" and "events" not in report
    assert "idle" in causes, causes


def test_a_stop_signal_during_a_tick_waits_until_its_events_are_written():
    # Under load a SIGTERM landed while the tick wrote the events the core had handed it:
    # the handler's KeyboardInterrupt cut it short and the connection's open and close never
    # reached the log. The stop now waits for the tick's end.
    from spacetp.cli_gateway import _ready_then, _StopSignal

    stop, lines = _StopSignal(), []

    class Ticker:
        def say(self, line):
            lines.append(line)

        def tick(self, report_json):
            for ev in json.loads(report_json)["events"]:
                lines.append(ev)
                stop(signal.SIGTERM, None)  # a SIGTERM between two events

    tick = _ready_then(Ticker(), stop)
    with pytest.raises(KeyboardInterrupt):
        tick(json.dumps({"events": ["open", "close"]}))
    assert lines[0].startswith("ready: pid") and lines[1:] == ["open", "close"], lines
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGTERM, None)  # outside a tick: at once
    assert tick(json.dumps({"events": []})) is None  # the pending stop was spent


def test_text_log_lines_name_the_connection_and_what_it_moved():
    ev = {"event": "close", "conn": 7, "how": "reset", "cause": "idle", "bytes_up": 1500,
          "bytes_down": 2_000_000, "seconds": 61.25, "retransmitted": 3}  # fmt: skip
    line = event_line(ev, "text")
    assert line.startswith("conn 7 reset (idle) after 61.2 s:"), line
    assert "1.5 kB up" in line and "2 MB down" in line and "3 retransmitted" in line, line
    opened = {"event": "open", "conn": 7, "side": "accepted", "local": "10.77.0.1:49200",
              "remote": "10.77.0.2:5000"}  # fmt: skip
    assert event_line(opened, "text") == "conn 7 accepted: 10.77.0.2:5000 <-> 10.77.0.1:49200"
    assert event_line(ev, "summary") is None
