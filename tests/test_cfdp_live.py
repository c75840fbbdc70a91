"""`spacetp cfdp`: live CFDP entities on real UDP sockets, against cfdp-py (PyPI `cfdp-py`, the
IRS's Python CFDP library: an implementation nobody here wrote), both ways.

On loopback (no privileges): through a relay that loses every 20th datagram either way, a
file crosses from cfdp-py to spacetp and from spacetp to cfdp-py with SHA-256 equal at both
ends, the loss repaired by the receiver's NAKs. Over `spacetp emulate` between two namespaces
(root): both directions at once across 2 Mb/s, 250 ms one way, 1% packet errors and a 3 s
outage. Bad flags exit 2 naming the setting."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from conftest import free_ports, spacetp_cli
from test_emulate import A, B, _exe, emulator, needs_root  # noqa: F401  (emulator is a fixture)

PEER = [sys.executable, str(Path(__file__).with_name("cfdp_py_peer.py"))]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _start(cmd: list[str], ns: str | None = None) -> subprocess.Popen:
    if ns is not None:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), (line, p.communicate(timeout=10))
    return p


def _finish(p: subprocess.Popen, timeout: float) -> str:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, out + err
    return out


def _peer_result(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


class Relay:
    """Loopback UDP relay: what `a` sends to `port_b` leaves from `port_a` to `b` and back;
    every `nth` datagram (either way) is lost."""

    def __init__(self, a: int, b: int, nth: int):
        self.sa = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sb = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sa.bind(("127.0.0.1", 0))
        self.sb.bind(("127.0.0.1", 0))
        self.port_a, self.port_b = self.sa.getsockname()[1], self.sb.getsockname()[1]
        self.a, self.b, self.nth = ("127.0.0.1", a), ("127.0.0.1", b), nth
        self.seen = self.dropped = 0
        self.stop = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self) -> None:
        import select

        while not self.stop:
            ready, _, _ = select.select([self.sa, self.sb], [], [], 0.05)
            for s in ready:
                data = s.recv(65536)
                self.seen += 1
                if self.seen % self.nth == 0:
                    self.dropped += 1
                    continue
                out, to = (self.sa, self.b) if s is self.sb else (self.sb, self.a)
                out.sendto(data, to)

    def close(self) -> None:
        self.stop = True
        self.t.join()


def _file(path: Path, n: int) -> Path:
    path.write_bytes(os.urandom(n))
    return path


def test_cfdp_py_sends_to_spacetp_through_loss_and_the_file_is_exact(tmp_path):
    data = _file(tmp_path / "image.raw", 400_000)
    pa, pb = free_ports(2)
    relay = Relay(pa, pb, 20)
    rx = _start([*_exe(), "cfdp", "--entity", "2", "--bind", f"127.0.0.1:{pb}",
                 "--peer", f"1=127.0.0.1:{relay.port_a}", "--out", str(tmp_path / "in"),
                 "--until-received", "1", "--linger", "1", "--duration", "60",
                 "--set", "nak_timer=1s", "--set", "nak_limit=20",
                 "--report", str(tmp_path / "rx.json")])  # fmt: skip
    tx = _start([*PEER, "send", "--entity", "1", "--bind", f"127.0.0.1:{pa}",
                 "--peer", f"2=127.0.0.1:{relay.port_b}", "--file", str(data),
                 "--name", "landed.raw", "--rate", "20e6"])  # fmt: skip
    sent = _peer_result(_finish(tx, 90))
    out = _finish(rx, 30)
    relay.close()
    rep = json.loads((tmp_path / "rx.json").read_text())
    [got] = rep["received"]
    print(json.dumps({"cfdp-py": sent, "spacetp": got, "relay": [relay.seen, relay.dropped]}))
    assert sent["condition"] == "NO_ERROR" and sent["delivery"] == "DATA_COMPLETE", sent
    assert got["condition"] == "NoError" and got["complete"], got
    landed = tmp_path / "in" / "landed.raw"
    assert got["sha256"] == _sha(data) == _sha(landed) == sent["sha256"]
    assert relay.dropped > 10
    assert got["pdus"]["nak"] > 0, "spacetp's receiver asked for what the relay lost"
    assert "sha256 " + got["sha256"] in out


def test_spacetp_sends_to_cfdp_py_through_loss_and_the_file_is_exact(tmp_path):
    data = _file(tmp_path / "image.raw", 400_000)
    (tmp_path / "in").mkdir()
    pa, pb = free_ports(2)
    relay = Relay(pa, pb, 20)
    rx = _start([*PEER, "receive", "--entity", "2", "--bind", f"127.0.0.1:{pb}",
                 "--peer", f"1=127.0.0.1:{relay.port_a}",
                 "--out", str(tmp_path / "in")])  # fmt: skip
    tx = _start([*_exe(), "cfdp", "--entity", "1", "--bind", f"127.0.0.1:{pa}",
                 "--peer", f"2=127.0.0.1:{relay.port_b}", "--send", f"{data}=2:landed.raw",
                 "--until-sent", "--linger", "0.5", "--duration", "60",
                 "--set", "rate=20Mb/s", "--set", "checksum=crc32",
                 "--set", "positive_ack_timer=1s", "--set", "positive_ack_limit=20",
                 "--report", str(tmp_path / "tx.json")])  # fmt: skip
    _finish(tx, 90)
    got = _peer_result(_finish(rx, 30))
    relay.close()
    [sent] = json.loads((tmp_path / "tx.json").read_text())["sent"]
    print(json.dumps({"spacetp": sent, "cfdp-py": got, "relay": [relay.seen, relay.dropped]}))
    assert sent["condition"] == "NoError" and sent["complete"], sent
    assert got["condition"] == "NO_ERROR" and got["file_status"] == "FILE_RETAINED", got
    assert got["sha256"] == _sha(data) == sent["sha256"]
    assert relay.dropped > 10
    # cfdp-py NAKed the lost segments; spacetp sent them again.
    assert sent["pdus"]["file_data"] > 286, sent["pdus"]


def test_bad_flags_name_the_setting(tmp_path):
    r = spacetp_cli("cfdp", "--entity", "1", "--send", "nofile.raw=2", "--duration", "1")
    assert r.returncode == 2
    assert "cfdp.send[0]" in r.stderr and "no address" in r.stderr, r.stderr
    r = spacetp_cli("cfdp", "--entity", "1", "--set", "nak_timer=soon", "--duration", "1")
    assert r.returncode == 2 and "cfdp.settings.nak_timer" in r.stderr, r.stderr
    r = spacetp_cli("cfdp", "--entity", "1", "--peer", "x", "--duration", "1")
    assert r.returncode == 2 and "--peer x: want ENTITY=ADDRESS[:PORT]" in r.stderr, r.stderr
    r = spacetp_cli("cfdp", "--entity", "1")
    assert r.returncode == 2 and "give a stop" in r.stderr, r.stderr


def test_cfdp_over_bp_class_1_arrives_whole_through_losses_ltp_repairs(tmp_path):
    """Both entities on DTN nodes (as ION's bputa over LTP) through a relay that loses every
    11th LTP segment or report: class 1 CFDP asks for nothing, LTP's red blocks repair."""
    la, lb = free_ports(2)
    relay = Relay(la, lb, 11)
    plan = tmp_path / "plan.txt"
    plan.write_text(
        "a contact +0 +3600 1 2 1250000\na contact +0 +3600 2 1 1250000\na range +0 +3600 1 2 1\n"
    )
    src, out = _file(tmp_path / "img.raw", 400_000), tmp_path / "in"
    # 9% loss: LTP's retransmission limits planned for it (max_ber), as the node says to.
    bp = ["--set", "carrier=bp", "--set", "class=1", "--contact-plan", str(plan),
          "--ltp", "max_ber=1e-5"]  # fmt: skip
    try:
        rx = _start([*_exe(), "cfdp", "--entity", "2", "--bind", f"127.0.0.1:{lb}",
                     "--peer", f"1=127.0.0.1:{relay.port_a}", *bp, "--out", str(out),
                     "--until-received", "1", "--duration", "60",
                     "--report", str(tmp_path / "rx.json")])  # fmt: skip
        tx = _start([*_exe(), "cfdp", "--entity", "1", "--bind", f"127.0.0.1:{la}",
                     "--peer", f"2=127.0.0.1:{relay.port_b}", *bp, "--send", f"{src}=2",
                     "--until-sent", "--duration", "60"])  # fmt: skip
        sent = _finish(tx, 90)
        got = _finish(rx, 90)
    finally:
        relay.close()
    assert _sha(out / "img.raw") == _sha(src), got
    assert "bundles out" in sent and "LTP span to 2" in sent, sent
    rep = json.loads((tmp_path / "rx.json").read_text())
    [t] = rep["received"]
    assert t["condition"] == "NoError" and t["complete"] and t["pdus"]["nak"] == 0, t
    # The metadata, 286 file data PDUs and the EOF, each one bundle.
    assert rep["bp"]["agent"]["bundles_delivered"] == 288, rep["bp"]["agent"]
    assert relay.dropped > 10, relay.dropped
    resent = sum(s["reports_sent"] for s in rep["bp"]["spans"])
    assert resent > 1, rep["bp"]["spans"]
    # The receiver's node stopped once its entity was done and its peer answered, not when
    # the run's duration ran out.
    assert rep["stopped"] == "received" and rep["bp"]["stopped"] == "answered", rep["bp"]
    assert rep["bp"]["elapsed_s"] < 30, rep["bp"]["elapsed_s"]


def test_bad_bp_flags_say_what_to_give(tmp_path):
    r = spacetp_cli("cfdp", "--entity", "1", "--set", "carrier=bp", "--duration", "1")
    assert r.returncode == 2 and "--contact-plan" in r.stderr, r.stderr
    plan = tmp_path / "plan.txt"
    plan.write_text("a contact +0 +60 1 2 1000\n")
    r = spacetp_cli("cfdp", "--entity", "1", "--contact-plan", str(plan), "--duration", "1")
    assert r.returncode == 2 and "carrier=bp" in r.stderr, r.stderr
    r = spacetp_cli("cfdp", "--entity", "1", "--set", "carrier=bp", "--contact-plan",
                    str(plan), "--peer", "2=127.0.0.1", "--duration", "1")  # fmt: skip
    assert r.returncode == 2 and "cfdp.bp." in r.stderr and "a range" in r.stderr, r.stderr


LINK = """
[[links]]
between = ["a", "b"]
rate = "2 Mb/s"
delay = "250 ms"
errors = { per = 0.01 }
outages = [["5 s", "8 s"]]
"""


@needs_root
def test_both_ways_with_cfdp_py_across_delay_loss_and_an_outage(emulator, tmp_path):  # noqa: F811
    """cfdp-py on A sends to spacetp on B while spacetp on B sends to cfdp-py on A, at once,
    each at 0.9 Mb/s of the 2 Mb/s link."""
    e = emulator(LINK)
    up = _file(tmp_path / "up.raw", 500_000)
    down = _file(tmp_path / "down.raw", 500_000)
    (tmp_path / "at_a").mkdir()
    timers = ["--set", "nak_timer=1.5s", "--set", "nak_limit=30", "--set",
              "positive_ack_timer=1.5s", "--set", "positive_ack_limit=30"]  # fmt: skip
    # Started at once, the outage (5-8 s) takes cfdp-py's ACK of spacetp's EOF and its
    # first Finished: spacetp then takes the next Finished as that ACK (late.rs; cfdp-py
    # 0.5 acknowledges no EOF sent again), else both ends wait until their limits.
    st_rx = _start([*_exe(), "cfdp", "--entity", "2", "--bind", f"{B}:4556",
                    "--peer", f"1={A}:4556", "--peer", f"3={A}:4557",
                    "--out", str(tmp_path / "at_b"), "--send", f"{down}=3:down.raw",
                    "--until-received", "1", "--until-sent", "--linger", "2",
                    "--duration", "120", "--set", "rate=0.9Mb/s", *timers,
                    "--report", str(tmp_path / "b.json")], e.ns_b)  # fmt: skip
    py_rx = _start([*PEER, "receive", "--entity", "3", "--bind", f"{A}:4557",
                    "--peer", f"2={B}:4556", "--out", str(tmp_path / "at_a"), "--timer", "1.5",
                    "--timeout", "120"], e.ns_a)  # fmt: skip
    py_tx = _start([*PEER, "send", "--entity", "1", "--bind", f"{A}:4556",
                    "--peer", f"2={B}:4556", "--file", str(up), "--name", "up.raw",
                    "--rate", "0.9e6", "--timer", "1.5", "--timeout", "120"], e.ns_a)  # fmt: skip
    e.probes += [st_rx, py_rx, py_tx]
    sent_up = _peer_result(_finish(py_tx, 150))
    got_down = _peer_result(_finish(py_rx, 150))
    _finish(st_rx, 60)
    link = e.stop()
    b = json.loads((tmp_path / "b.json").read_text())
    [got_up], [sent_down] = b["received"], b["sent"]
    fwd, back = link["directions"]
    print(json.dumps({"b": b, "py_tx": sent_up, "py_rx": got_down, "link": link["directions"]}))
    assert got_up["condition"] == "NoError" and got_up["complete"], got_up
    assert got_up["sha256"] == _sha(up) == _sha(tmp_path / "at_b" / "up.raw")
    assert sent_down["condition"] == "NoError" and sent_down["complete"], sent_down
    assert got_down["condition"] == "NO_ERROR" and got_down["sha256"] == _sha(down), got_down
    # The link did lose: packet errors both ways and the outage.
    assert fwd["error_drops"] + back["error_drops"] > 0
    assert fwd["outage_drops"] + back["outage_drops"] > 0
    assert got_up["pdus"]["nak"] + sent_down["pdus"]["file_data"] > 357
