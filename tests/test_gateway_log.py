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


def test_a_stop_with_a_connection_open_is_said_in_json_too():
    # With --log json every line on stderr is JSON, the stop's "reset on both sides" notice
    # as well (CI once found it as plain text when the stop came before the idle reset).
    p = free_ports(4)
    srv = socket.create_server(("127.0.0.1", p[3]))
    gws = []
    try:
        gws += _gateways(p, ["--log", "json"])
        c = socket.create_connection(("127.0.0.1", p[0]))
        c.sendall(b"open, then nothing")
        srv.settimeout(30)
        s, _ = srv.accept()
        assert s.recv(100) == b"open, then nothing"
        (ga, ioa), (gb, iob) = gws
        ga.send_signal(signal.SIGTERM)  # A first: B then sees the connection reset by its peer
        outs = [ioa.finish(timeout=60)]
        iob.wait_for('"event": "close"')  # B has logged that before its own stop
        gb.send_signal(signal.SIGTERM)
        outs.append(iob.finish(timeout=60))
    finally:
        for g, _ in gws:
            g.kill()
    logs = []
    for (g, _), (_, err) in zip(gws, outs, strict=True):
        assert g.returncode == 0, err
        logs.append([json.loads(x) for x in err.splitlines() if x.strip()])
    said = [x["text"] for x in logs[0] if x["event"] == "message"]
    assert any("1 open connections reset on both sides" in x for x in said), said
    [closed] = [x for x in logs[0] if x["event"] == "close"]
    assert (closed["how"], closed["cause"]) == ("reset", "stop"), closed
    [closed] = [x for x in logs[1] if x["event"] == "close"]
    assert (closed["how"], closed["cause"]) == ("reset", "reset by peer"), closed


def test_a_stop_signal_never_cuts_short_the_tick_that_writes_the_log():
    # CI once saw a gateway's log hold only its readiness line: a SIGTERM handled as the tick
    # began raised KeyboardInterrupt there, and the open and close events the core had just
    # handed over were never written. The handler now only records the signal, the core asks
    # between its steps, and no Python code of the gateway is ever interrupted.
    import os

    from conftest import free_ports
    from spacetp.cli_gateway import _ready_then, _StopSignal
    from spacetp.live.gateway import run

    stop, lines = _StopSignal(), []

    class Ticker:
        def say(self, line):
            lines.append(line)

        def tick(self, report_json):
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, mid-tick
            lines.append(json.loads(report_json)["events"])

    (port,) = free_ports(1)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    cfg = {"local": "10.77.0.1", "peer": "10.77.0.2", "log_connections": True,
           "listen": [[f"127.0.0.1:{port}", 5000]], "duration_s": 30}  # fmt: skip
    old = signal.signal(signal.SIGTERM, stop)
    try:
        rep = run(cfg, a.fileno(), None, _ready_then(Ticker()), stop.requested)
    except KeyboardInterrupt:  # caught here: it would end the whole pytest session
        pytest.fail("the stop signal raised inside the gateway's tick")
    finally:
        signal.signal(signal.SIGTERM, old)
        a.close()
        b.close()
    # The tick ran to its end, then the core began the orderly stop.
    assert lines[0].startswith("ready: pid") and lines[1:] == [[]], lines
    assert rep["stopped"] == "signal", rep
    assert not stop.requested()  # the core took the request


def test_two_stop_signals_are_two_requests():
    # The second signal while draining resets at once: it must not merge into the first.
    from spacetp.cli_gateway import _StopSignal

    stop = _StopSignal()
    assert not stop.requested()
    stop(signal.SIGTERM, None)
    stop(signal.SIGINT, None)
    assert [stop.requested(), stop.requested(), stop.requested()] == [True, True, False]


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
