"""SCPS-TP end to end (issue 4): Nguyen & Sterbenz's asymmetry and corruption tests, explicit
corruption signalling, and the wire format as tshark decodes it."""

import shutil
import subprocess

import pytest

import spacetp
from conftest import EXAMPLES

TSHARK = shutil.which("tshark")


def asym(rev="5 kb/s", protocol="newreno"):
    sc = spacetp.load(EXAMPLES / "asymmetry.toml")
    spacetp.set_value(sc, "links[1].rate_back", rev)
    spacetp.set_value(sc, "flows[0].protocol", protocol)
    return sc


def test_asymmetry_scps_beats_newreno_three_times_at_5_kbps():
    # Nguyen & Sterbenz section 4.2: ~800 kb/s, ~5x NewReno, ~10x Vegas at a 300:1 ratio.
    g = {
        p: spacetp.run(asym(protocol=p)).flows[0]["goodput_bps"]
        for p in ("newreno", "vegas", "scps-tp")
    }
    assert g["scps-tp"] >= 3 * g["newreno"], g
    assert g["scps-tp"] >= 5 * g["vegas"], g


def corruption(delay, protocol, seed):
    sc = asym(rev="1.5 Mb/s", protocol=protocol)
    spacetp.set_value(sc, "links[1].delay", delay)
    spacetp.set_value(sc, "links[1].errors", {"ber": 1e-5})
    return spacetp.run(sc, seed=seed).flows[0]["goodput_bps"]


def test_corruption_scps_holds_its_rate_when_delay_doubles_newreno_halves():
    # Section 4.5: NewReno 110 -> 58 kb/s from 50 to 100 ms; SCPS-TP ~300 kb/s at both.
    mean = lambda d, p: sum(corruption(d, p, s) for s in (1, 2, 3)) / 3  # noqa: E731
    scps = mean("100 ms", "scps-nucc") / mean("50 ms", "scps-nucc")
    reno = mean("100 ms", "newreno") / mean("50 ms", "newreno")
    assert scps > 0.9, scps
    assert reno < 0.7, reno


def test_routers_signal_corruption_and_the_sender_keeps_its_window():
    # A lossy first hop delivers corrupted packets to the router, which notifies the sender;
    # under the congestion policy the notices still make the sender treat losses as
    # corruption. The same losses dropped silently cost congestion reductions.
    def run(policy):
        sc = asym(rev="1.5 Mb/s", protocol="scps-tp")
        spacetp.set_value(
            sc,
            "flows[0].tcp",
            {
                "scps": {
                    **spacetp.protocols()["scps-tp"]["settings"]["scps"],
                    "loss_source": "congestion",
                }
            },
        )
        spacetp.set_value(sc, "links[0].errors", {"per": 0.02})
        spacetp.set_value(sc, "links[0].errors_back", {})
        spacetp.set_value(sc, "links[0].corrupted", policy)
        return spacetp.run(sc)

    signalled, silent = run("deliver"), run("drop")
    assert signalled.summary["run"]["corruption_notices"] > 0
    assert silent.summary["run"]["corruption_notices"] == 0
    assert signalled.flows[0]["complete"] and silent.flows[0]["complete"]
    assert signalled.flows[0]["goodput_bps"] > 1.2 * silent.flows[0]["goodput_bps"]


def _tshark(pcap, filt, *fields):
    cmd = [TSHARK, "-r", str(pcap), "-Y", filt, "-T", "fields", "-E", "occurrence=a"]
    cmd += [x for f in fields or ("frame.number",) for x in ("-e", f)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (.ci/run installs it)")
def test_tshark_sees_capabilities_snacks_naming_the_true_holes_and_corruption(tmp_path):
    pcap = tmp_path / "scps.pcap"
    sc = asym(rev="15 kb/s", protocol="scps-tp")
    spacetp.set_value(sc, "flows[0].bytes", "300 kB")
    drops = [60, 61, 80]  # router -> server packets, counting from the SYN
    spacetp.set_value(sc, "links[1].errors", {"drop": drops})
    spacetp.set_value(sc, "links[1].errors_back", {})
    res = spacetp.run(sc, pcap={"1": str(pcap)})
    assert res.flows[0]["complete"]
    syn = _tshark(pcap, "tcp.flags.syn==1", "tcp.flags.ack", "tcp.options.scps.vector")
    assert [r[0] for r in syn] == ["0", "1"] and all(r[1] == "0x40" for r in syn), syn
    assert _tshark(pcap, "tcp.option_kind==20 and tcp.flags.syn==0") == []
    # The true holes: the relative sequence numbers of the dropped router -> server packets.
    fwd = _tshark(pcap, "ip.src==10.0.0.1", "tcp.seq")
    lost = {int(fwd[i][0]) for i in drops}
    seg = 472
    named = set()
    for ack, off, size in _tshark(
        pcap,
        "tcp.options.snack.offset",
        "tcp.ack",
        "tcp.options.snack.offset",
        "tcp.options.snack.size",
    ):
        for o, n in zip(off.split(","), size.split(","), strict=True):
            for k in range(int(n)):
                named.add(int(ack) + (int(o) + k) * seg)
    assert named == lost, (sorted(named), sorted(lost))
    # Corruption delivered to the server: its ACKs echo Corruption Experienced (kind 23).
    pcap2 = tmp_path / "corrupt.pcap"
    spacetp.set_value(sc, "links[1].errors", {"per": 0.05})
    spacetp.set_value(sc, "links[1].corrupted", "deliver")
    spacetp.run(sc, pcap={"1": str(pcap2)})
    assert _tshark(pcap2, "tcp.option_kind==23 and ip.src==10.0.0.3", "frame.number")


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (.ci/run installs it)")
@pytest.mark.parametrize("sender, receiver", [("scps-tp", "newreno"), ("newreno", "scps-tp")])
def test_fallback_to_plain_tcp_leaves_no_scps_option_after_the_handshake(
    tmp_path, sender, receiver
):
    pcap = tmp_path / "fallback.pcap"
    sc = asym(rev="15 kb/s", protocol=sender)
    spacetp.set_value(sc, "flows[0].peer_protocol", receiver)
    spacetp.set_value(sc, "flows[0].bytes", "300 kB")
    spacetp.set_value(sc, "links[1].errors", {"drop": [60, 61]})
    res = spacetp.run(sc, pcap={"1": str(pcap)})
    assert res.flows[0]["complete"]
    scps_opts = (
        "tcp.option_kind==20 or tcp.option_kind==21 or tcp.option_kind==22 or tcp.option_kind==23"
    )
    after = _tshark(pcap, f"({scps_opts}) and tcp.flags.syn==0", "frame.number")
    assert after == [], after
    synack = _tshark(pcap, "tcp.flags.syn==1 and tcp.flags.ack==1", "tcp.options.scps.vector")
    assert synack == [[""]], "the SYN-ACK carries no capabilities"


def resume_after_outage(protocol):
    """5 MB over the example at 1.5 Mb/s both ways, RTT 100 ms, with the space link down from
    10 s to 70 s: when does the sender send data again after the link returns?"""
    sc = asym(rev="1.5 Mb/s", protocol=protocol)
    spacetp.set_value(sc, "links[1].outages", [["10 s", "70 s"]])
    res = spacetp.run(sc, trace_segments=True)
    t = res.segments["time_s"]
    return res, float(t[t >= 70.0].min()) - 70.0


def test_outage_persist_mode_resumes_within_two_rtts_newreno_later():
    scps, scps_gap = resume_after_outage("scps-tp")
    reno, reno_gap = resume_after_outage("newreno")
    assert scps.flows[0]["complete"] and reno.flows[0]["complete"]
    assert scps.flows[0]["timeouts"] == 0, "persist mode suspends the timer"
    assert scps_gap <= 0.2, f"SCPS-TP resumed {scps_gap:.3f} s after the link returned"
    assert reno_gap > 0.2, f"NewReno resumed {reno_gap:.3f} s after the link returned"


def _geo(protocol: str) -> dict:
    sc = {
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "10 Mb/s", "delay": "300 ms"}],
        "flows": [{"from": "a", "to": "b", "protocol": protocol, "bytes": "2 MB"}],
    }
    return spacetp.run(sc).flows[0]


def test_the_ri_defaults_are_window_limited_on_geo_and_rate_limited_without_the_delay():
    # The RI's default buffers are 32 kB (BUFFER_SIZE): at most 32 kB per 600 ms round trip,
    # whatever the 2 Mb/s rate control allows. Its gateway default has no congestion
    # control, so it starts at the window at once instead of growing to it.
    ri, gw = _geo("scps-ri"), _geo("scps-ri-gateway")
    window_limit = 32_768 * 8 / 0.6
    assert 0.7 * window_limit < ri["goodput_bps"] <= window_limit, ri["goodput_bps"]
    assert gw["goodput_bps"] >= ri["goodput_bps"]
    assert gw["goodput_bps"] <= window_limit


def test_protocols_names_the_ri_source_of_each_ri_default(cli):
    r = cli("protocols")
    assert r.returncode == 0
    assert "scps-ri-gateway" in r.stdout
    assert "tp_RTOMIN" in r.stdout and "DEFAULT_RATE" in r.stdout
