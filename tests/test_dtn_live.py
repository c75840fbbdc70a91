"""`spacetp dtn`: the LTP engine and bundle agent on real UDP sockets.

Over `spacetp emulate` between two namespaces (needs root and /dev/net/tun): a file sent as
one bundle arrives exactly (SHA-256) across a 10 s one-way delay, a packet error rate of 1e-3
and a scheduled outage. Without root: a node stopped before its contact keeps the bundle in
its store directory, and the next start delivers it; bad flags get one line naming them."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from conftest import free_ports, spacetp_cli
from test_emulate import A, B, _exe, emulator, needs_root  # noqa: F401  (emulator is a fixture)

LINK = """
[[links]]
between = ["a", "b"]
rate = "2 Mb/s"
delay = "10 s"
errors = { per = 1e-3 }
outages = [["2 s", "6 s"]]
"""

# The plan knows the outage (as a mission's would, a little inside the emulator's: the two
# clocks start about a second apart): LTP suspends its timers and sends nothing in the gap.
PLAN = """
a contact +0 +2 1 2 250000
a contact +5 +3600 1 2 250000
a contact +0 +3600 2 1 250000
a range +0 +3600 1 2 10
"""


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _node(ns: str | None, *args: object) -> subprocess.Popen:
    cmd = [*_exe(), "dtn", *map(str, args)]
    if ns is not None:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _until_bound(p: subprocess.Popen, port: int, within: float = 60) -> None:
    """Wait until node `p` has bound its UDP socket to `port` (ss): its signal handlers are
    in place (installed before the core starts) and the core has read its --send files
    (before its first look at signals)."""
    deadline = time.monotonic() + within
    while not subprocess.run(["ss", "-Hlun", f"sport = :{port}"], capture_output=True,
                             text=True).stdout.strip():  # fmt: skip
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, f"nothing bound UDP port {port}"
        time.sleep(0.05)


def _finish(p: subprocess.Popen, timeout: float) -> str:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, out + err
    return out


@needs_root
def test_a_file_crosses_10s_delay_loss_and_an_outage_exactly(emulator, tmp_path):  # noqa: F811
    e = emulator(LINK)
    data = tmp_path / "image.raw"
    data.write_bytes(os.urandom(1_000_000))
    plan = tmp_path / "plan.txt"
    plan.write_text(PLAN)
    rx_rep, tx_rep = tmp_path / "rx.json", tmp_path / "tx.json"
    rx = _node(e.ns_b, "--node", 2, "--bind", f"{B}:1113", "--peer", f"1={A}", "--contact-plan",
               plan, "--out", tmp_path / "in", "--until-delivered", 1, "--duration", 150,
               "--report", rx_rep)  # fmt: skip
    tx = _node(e.ns_a, "--node", 1, "--bind", f"{A}:1113", "--peer", f"2={B}", "--contact-plan",
               plan, "--send", f"{data}=ipn:2.1", "--until-sent", "--duration", 150,
               "--report", tx_rep)  # fmt: skip
    e.probes += [rx, tx]
    _finish(tx, 170)
    out = _finish(rx, 60)
    link = e.stop()
    r, t = json.loads(rx_rep.read_text()), json.loads(tx_rep.read_text())
    assert r["stopped"] == "delivered" and t["stopped"] == "sent", (r["stopped"], t["stopped"])
    [got] = r["delivered"]
    assert got["sha256"] == _sha(data) == t["sent"][0]["sha256"] == _sha(Path(got["file"]))
    assert got["source"] == "ipn:1.1" and got["bytes"] == 1_000_000
    assert "sha256 " + got["sha256"] in out
    # Nothing crosses a 10 s light time faster: checkpoint out, report back.
    assert got["since_creation_s"] > 10
    fwd, back = link["directions"]
    print(json.dumps({"rx": r, "tx": t, "link": link["directions"]}))  # seen with pytest -s
    assert fwd["delivered_packets"] > 700  # 1 MB in 1400-byte segments, and the reports' answers
    # The plan's gap (2 s to 5 s of the node's clock) falls inside the emulator's outage:
    # the sender held its segments, and what was lost to errors was reported and resent.
    span = t["spans"][0]
    lost = fwd["error_drops"] + fwd["outage_drops"]
    assert span["data_segments_retransmitted"] >= fwd["error_drops"] - 2 * span["checkpoints_sent"]
    assert span["reports_received"] >= 1 and r["spans"][0]["reports_sent"] >= 1
    assert lost == 0 or span["data_segments_retransmitted"] > 0


def test_a_node_stopped_before_its_contact_keeps_the_bundle_and_delivers_it_after(tmp_path):
    data = tmp_path / "f.bin"
    data.write_bytes(os.urandom(300_000))
    store = tmp_path / "store"
    later = tmp_path / "later.txt"  # the contact opens after the node is stopped
    later.write_text("a contact +600 +3600 1 2 1000000\na contact +0 +3600 2 1 1000000\n"
                     "a range +0 +3600 1 2 0\n")  # fmt: skip
    now = tmp_path / "now.txt"
    now.write_text("a contact +0 +3600 1 2 1000000\na contact +0 +3600 2 1 1000000\n"
                   "a range +0 +3600 1 2 0\n")  # fmt: skip
    port_a, port_b = free_ports(2)
    a = f"--bind 127.0.0.1:{port_a} --peer 2=127.0.0.1:{port_b}".split()
    first = _node(None, "--node", 1, *a, "--contact-plan", later, "--send", f"{data}=ipn:2.7",
                  "--store", store, "--until-sent", "--report",
                  tmp_path / "first.json")  # fmt: skip
    _until_bound(first, port_a)
    first.send_signal(signal.SIGTERM)
    _finish(first, 20)
    rep = json.loads((tmp_path / "first.json").read_text())
    assert rep["stopped"] == "signal" and rep["stored_at_stop"] == 1
    assert len(list(store.glob("*.bundle"))) == 1
    rx = _node(None, "--node", 2, "--bind", f"127.0.0.1:{port_b}", "--peer",
               f"1=127.0.0.1:{port_a}", "--contact-plan", now, "--out", tmp_path / "in",
               "--until-delivered", 1, "--linger", 1, "--duration", 30,
               "--report", tmp_path / "rx.json")  # fmt: skip
    second = _node(None, "--node", 1, *a, "--contact-plan", now, "--store", store,
                   "--until-sent", "--duration", 30, "--report",
                   tmp_path / "second.json")  # fmt: skip
    _finish(second, 40)
    _finish(rx, 40)
    s = json.loads((tmp_path / "second.json").read_text())
    r = json.loads((tmp_path / "rx.json").read_text())
    assert s["restored"] == 1 and s["stored_at_stop"] == 0 and s["stopped"] == "sent"
    [got] = r["delivered"]
    assert got["sha256"] == _sha(data) and got["service"] == 7
    assert not list(store.glob("*.bundle"))


def test_bad_flags_are_one_line_naming_them(tmp_path):
    plan = tmp_path / "plan.txt"
    plan.write_text("a contact +0 +60 1 2 1000\na range +0 +60 1 2 1\n")
    base = ["dtn", "--node", "1", "--contact-plan", str(plan), "--duration", "1"]
    cases = [
        (["--peer", "2:127.0.0.1"], "--peer 2:127.0.0.1: want NODE=ADDRESS"),
        (["--peer", "3=127.0.0.1"], "dtn.contact_plan"),
        (["--peer", "2=127.0.0.1", "--send", "nofile=ipn:2.1"], "dtn.send[0]"),
        (["--peer", "2=127.0.0.1", "--send", "x=ipn:two"], "want FILE=ipn:NODE.SERVICE"),
        (["--peer", "2=127.0.0.1", "--lifetime", "-5"], "dtn.lifetime_s"),
        (["--peer", "2=127.0.0.1", "--ltp", "max_export_sessions=0"], "dtn.ltp"),
    ]
    for extra, want in cases:
        r = spacetp_cli(*base, *extra)
        assert r.returncode == 2, (extra, r.stdout, r.stderr)
        assert want in r.stderr and len(r.stderr.strip().splitlines()) == 1, (extra, r.stderr)
    plan.write_text("a contact +0 +60 1 2 -5\n")
    r = spacetp_cli(*base, "--peer", "2=127.0.0.1")
    assert r.returncode == 2 and "line 1" in r.stderr, r.stderr


def test_a_file_crosses_the_udp_convergence_layer_in_fragments(tmp_path):
    # ION's udpclo/udpcli: a bundle per datagram. 300 kB does not fit one, so it goes as
    # fragments that the destination joins.
    data = tmp_path / "f.bin"
    data.write_bytes(os.urandom(300_000))
    plan = tmp_path / "plan.txt"
    plan.write_text("a contact +0 +3600 1 2 10000000\na contact +0 +3600 2 1 10000000\n")
    r = spacetp_cli("dtn", "--node", "1", "--udp-peer", "2=127.0.0.1", "--contact-plan",
                    str(plan), "--duration", "1")  # fmt: skip
    assert r.returncode == 2 and "dtn.udp_peers[0]" in r.stderr and "a range" in r.stderr
    plan.write_text(plan.read_text() + "a range +0 +3600 1 2 0\n")
    ports = free_ports(4)
    rx = _node(None, "--node", 2, "--bind", f"127.0.0.1:{ports[0]}", "--udp-bind",
               f"127.0.0.1:{ports[1]}", "--udp-peer", f"1=127.0.0.1:{ports[3]}",
               "--contact-plan", plan, "--out", tmp_path / "in", "--until-delivered", 1,
               "--linger", 0, "--duration", 30, "--report", tmp_path / "rx.json")  # fmt: skip
    _until_bound(rx, ports[1])  # its bundle socket (bound after LTP's)
    tx = _node(None, "--node", 1, "--bind", f"127.0.0.1:{ports[2]}", "--udp-bind",
               f"127.0.0.1:{ports[3]}", "--udp-peer", f"2=127.0.0.1:{ports[1]}",
               "--contact-plan", plan, "--send", f"{data}=ipn:2.1", "--until-sent",
               "--linger", 0, "--duration", 30, "--report", tmp_path / "tx.json")  # fmt: skip
    _finish(tx, 40)
    _finish(rx, 40)
    r = json.loads((tmp_path / "rx.json").read_text())
    t = json.loads((tmp_path / "tx.json").read_text())
    assert t["udp"]["fragmented"] == 1 and t["udp"]["bundles_out"] == 5, t["udp"]
    assert r["udp"]["bundles_in"] == 5 and r["stopped"] == "delivered", r
    [got] = r["delivered"]
    assert got["sha256"] == _sha(data) and got["bytes"] == 300_000
    assert t["spans"] == [] and r["spans"] == []  # nothing went by LTP


def test_a_misspelt_ltp_key_is_refused_with_every_real_key_listed(tmp_path):
    # --ltp max_bar=1e-5 once got serde's list of the span's fields, which lacks max_ber and
    # the flow's own keys; the list now comes from the schema of every LTP key.
    from spacetp import _core

    keys = sorted(json.loads(_core.transport_schema("ltp"))["properties"])
    assert "max_ber" in keys and "max_export_sessions" in keys and "peer_engine_id" not in keys
    plan = tmp_path / "plan.txt"
    plan.write_text("a contact +0 +60 1 2 1000\na range +0 +60 1 2 1\n")
    r = spacetp_cli("dtn", "--node", "1", "--contact-plan", str(plan), "--peer", "2=127.0.0.1",
                    "--ltp", "max_bar=1e-5", "--check")  # fmt: skip
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "dtn.ltp.max_bar" in r.stderr and "did you mean `max_ber`?" in r.stderr, r.stderr
    missing = [k for k in keys if f"`{k}`" not in r.stderr]
    assert not missing, (missing, r.stderr)


class _LossyRelay:
    """UDP between two loopback nodes, each datagram lost with probability `loss` (seeded):
    node 1 sends to `port_for_1`, node 2 to `port_for_2`."""

    def __init__(self, to_1: int, to_2: int, loss: float, seed: int = 5):
        import random
        import threading

        self.rng = random.Random(seed)
        self.loss = loss
        self.socks = {}
        for dest in (to_1, to_2):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.settimeout(0.1)
            self.socks[dest] = s
        self.port_for_1 = self.socks[to_2].getsockname()[1]  # node 1 sends towards 2
        self.port_for_2 = self.socks[to_1].getsockname()[1]
        self.stop = False
        self.threads = [threading.Thread(target=self._run, args=(s, d), daemon=True)
                        for d, s in self.socks.items()]  # fmt: skip
        for t in self.threads:
            t.start()

    def _run(self, s: socket.socket, dest: int) -> None:
        while not self.stop:
            try:
                data = s.recv(65536)
            except TimeoutError:
                continue
            if self.rng.random() >= self.loss:
                s.sendto(data, ("127.0.0.1", dest))

    def close(self) -> None:
        self.stop = True
        for t in self.threads:
            t.join()
        for s in self.socks.values():
            s.close()


def test_canceled_sessions_are_said_as_they_happen_and_a_bundle_is_given_up_after_the_bound(
    tmp_path,
):
    # At 10% loss each way and ION's default max_ber (1e-6: limits for 1.1% loss), every
    # session of a 1 MB block reaches its checkpoint limit and is canceled; ION and spacetp
    # once resent such a bundle for ever, silently. Each cancel is now a line with its cause
    # as it happens, and after --max-session-cancels the bundle is given up: exit status 1.
    data = tmp_path / "f.bin"
    data.write_bytes(os.urandom(1_000_000))
    plan = tmp_path / "plan.txt"
    plan.write_text("a contact +0 +3600 1 2 2500000\na contact +0 +3600 2 1 2500000\n"
                    "a range +0 +3600 1 2 0\n")  # fmt: skip
    port_1, port_2 = free_ports(2)
    relay = _LossyRelay(port_1, port_2, loss=0.10)
    try:
        rx = _node(None, "--node", 2, "--bind", f"127.0.0.1:{port_2}", "--peer",
                   f"1=127.0.0.1:{relay.port_for_2}", "--contact-plan", plan, "--duration", 90,
                   "--report", tmp_path / "rx.json")  # fmt: skip
        _until_bound(rx, port_2)
        tx = _node(None, "--node", 1, "--bind", f"127.0.0.1:{port_1}", "--peer",
                   f"2=127.0.0.1:{relay.port_for_1}", "--contact-plan", plan, "--send",
                   f"{data}=ipn:2.1", "--until-sent", "--max-session-cancels", 3, "--duration",
                   90, "--report", tmp_path / "tx.json")  # fmt: skip
        # The first cancel is said while the node runs, not in its final report.
        first = tx.stdout.readline()
        assert tx.poll() is None, first
        assert " to node 2 canceled here: retransmission limit: " in first, first
        # The cause, the loss the limits planned for and what the peer missed (10%, 2e-5
        # plans for 20%), and the setting to change.
        assert "(max_retransmission_cycles=3)" in first, first
        assert "max_ber 1e-6 plans for 1.1% loss of 1400-byte segments" in first, first
        missed = float(first.split("node 2 missed ")[1].split("%")[0])
        assert 7 < missed < 13 and "--ltp max_ber=2e-5 plans for 20.1%" in first, first
        out, err = tx.communicate(timeout=120)
        rx.send_signal(signal.SIGTERM)
        rx_out, rx_err = rx.communicate(timeout=30)
    finally:
        relay.close()
    assert tx.returncode == 1, out + err
    lines = [first, *out.splitlines()]
    canceled = [x for x in lines if "canceled here: retransmission limit" in x]
    assert len(canceled) == 3, lines
    [gave_up] = [x for x in lines if "gave up the bundle" in x]
    assert "to ipn:2.1 (1000000 bytes" in gave_up and "canceled 3 times" in gave_up, gave_up
    assert "max_session_cancels=3" in gave_up
    assert "gave up 1 bundle after 3 canceled LTP sessions" in err, err
    t = json.loads((tmp_path / "tx.json").read_text())
    assert t["given_up"] == 1 and t["stored_at_stop"] == 0, t
    [d] = t["dropped"]
    assert d["destination"] == "ipn:2.1" and d["why"].startswith("given up"), d
    assert t["spans"][0]["export_sessions_canceled"] == 3, t["spans"]
    assert len(t["notices"]) == 4  # 3 cancels, 1 bundle given up
    # The receiver said each cancel it was told of, with the sender's cause.
    r = json.loads((tmp_path / "rx.json").read_text())
    told = [x for x in rx_out.splitlines() if "from node 1 canceled by node 1" in x]
    assert len(told) == 3 and "reached its own limit on checkpoints" in told[0], rx_out + rx_err
    assert r["delivered"] == [] and r["spans"][0]["import_sessions_canceled"] == 3
