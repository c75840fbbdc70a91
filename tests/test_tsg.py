"""Time-sequence, throughput and RTT graphs (`spacetp plot tsg | throughput | rtt`) from
captures and simulated flows, checked against what nobody here wrote: tshark's TCP analysis
(retransmissions, "previous segment not captured") on the SCPS Reference Implementation's own
captures (raw IP protocol 106, UDP-encapsulated, gateway protocol 6), its compressed headers
against its uncompressed run, scripted drops against the presumed losses, and a kernel TCP
capture through `spacetp emulate`."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import spacetp
from chromium import CHROMIUM, blank, page_check
from conftest import EXAMPLES, RI_DATA
from spacetp import tsg

RI = RI_DATA
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark is not installed")
DECODE = {  # how tshark is told what the RI's captures carry (their README)
    "rawip": ["-d", "ip.proto==106,tcp"],
    "udp_encap": ["-d", "udp.port==7168,ip", "-d", "ip.proto==106,tcp"],
}
RETX = (
    "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || "
    "tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order"
)


def tshark_frames(pcap, display_filter: str) -> set[int]:
    extra = next((v for k, v in DECODE.items() if pcap.name.startswith(k)), [])
    r = subprocess.run(
        [TSHARK, "-r", str(pcap), *extra, "-Y", display_filter, "-T", "fields", "-e",
         "frame.number"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {int(x) for x in r.stdout.split()}


RI_CAPTURES = [
    "rawip_ttcp_loss2pct_snack.pcap",
    "udp_encap_ttcp_loss2pct.pcap",
    "gateway_pair_wan_loss2pct.pcap",
    "gateway_tun_Bside.pcap",
]


@needs_tshark
@pytest.mark.parametrize("name", RI_CAPTURES)
def test_retransmissions_and_gaps_are_the_ones_tshark_finds(name):
    pcap = RI / name
    view = tsg.from_pcap(pcap)
    ours = set(view.data.loc[view.data["retx"], "frame"])
    assert ours == tshark_frames(pcap, RETX)
    assert set(view.gaps["frame"]) == tshark_frames(pcap, "tcp.analysis.lost_segment")
    if "loss" in name:
        assert ours, "the lossy captures have retransmissions"


def test_snack_holes_of_the_reference_implementation_are_read_and_answered():
    # README of the captures: 43 SNACK ACKs, each `15 06 0000 0001` (offset 0, one segment),
    # each followed by an immediate retransmission.
    view = tsg.from_pcap(RI / "rawip_ttcp_loss2pct_snack.pcap")
    snacks = view.blocks[view.blocks["kind"] == "SNACK"]
    assert len(snacks) == 43
    acks = view.acks.set_index("t")["ack"]
    resent = view.data[view.data["retx"]]
    for _, h in snacks.iterrows():
        assert h["left"] == acks.loc[h["t"]].max()  # offset 0 from the ACK
        assert h["right"] - h["left"] == 1448  # one MSS (1460 - 12 of timestamps)
        later = resent[(resent["t"] >= h["t"]) & (resent["start"] == h["left"])]
        assert len(later), f"hole at {h['left']} never resent"


def test_compressed_headers_carry_the_same_transfer_as_the_plain_run():
    plain = tsg.from_pcap(RI / "rawip_ttcp.pcap")
    comp = tsg.from_pcap(RI / "rawip_ttcp_compressed.pcap")
    assert "compressed headers" in comp.title
    for v in (plain, comp):
        d = v.data[~v.data["fin"]]
        assert d["len"].sum() == 65536 and d["start"].min() == 0 and d["end"].max() == 65536
        assert (d["start"].iloc[1:].to_numpy() == d["end"].iloc[:-1].to_numpy()).all()
        assert v.acks["ack"].max() == 65537  # every byte and the FIN acknowledged
    assert len(comp.rtt) and 0 < comp.rtt["rtt_s"].median() < 0.05


def lossy_link(drop: list[int], protocol: str = "sack") -> dict:
    return {
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [
            {
                "between": ["a", "b"],
                "rate": "2 Mb/s",
                "delay": "100 ms",
                "errors": {"drop": drop},
                "errors_back": {},
            }
        ],
        "flows": [{"from": "a", "to": "b", "protocol": protocol, "bytes": "400 kB"}],
    }


def test_scripted_drops_are_the_presumed_losses(tmp_path):
    # Packet k of the forward direction (0 = the SYN) is lost after it starts on the link;
    # the tap sees it start, and the graph must mark exactly those transmissions.
    from spacetp.pcapflows import read

    dropped = [40, 41, 120]
    sc = lossy_link(dropped)
    spacetp.run(sc, pcap={"0": str(tmp_path / "a.pcap")})
    (conv,) = read(tmp_path / "a.pcap")
    forward = [p for p in conv.packets if p["dir"] == 0]
    view = tsg.from_conversation(conv, "")
    at = view.data.set_index(["t", "start"])["frame"]
    lost = {int(at.loc[(lo["t"], lo["start"])]) for _, lo in view.lost.iterrows()}
    assert lost == {forward[k]["frame"] for k in dropped}
    assert view.counts()["retransmissions"] == len(dropped)
    # the same through the command's path (a tap on the flow's first link)
    assert len(tsg.from_simulation(sc).lost) == len(dropped)


def test_a_simulated_scps_tp_transfer_shows_its_snacks_and_retransmissions(tmp_path):
    sc = spacetp.load(EXAMPLES / "geo.toml")
    spacetp.set_value(sc, "flows[0].protocol", "scps-tp")
    spacetp.set_value(sc, "links[1].errors", {"ber": 1e-6})
    view = tsg.from_simulation(sc)
    res = spacetp.run(sc)
    c = view.counts()
    assert c["snack_holes"] > 0
    assert c["retransmissions"] == res.flows[0]["retransmitted_segments"]
    assert f"the sender's trace counts {c['retransmissions']} retransmissions" in view.notes
    assert view.acks["ack"].max() == 5_000_001  # every byte and the FIN
    med = view.rtt["rtt_s"].median()
    assert 0.55 <= med < 1.5  # the propagation RTT plus queueing
    th = tsg.throughput(view, 1.0)
    assert th["goodput_bps"].sum() * 1.0 / 8 == pytest.approx(5_000_001)


def test_the_plot_commands_write_static_and_zoomable_figures(cli, tmp_path):
    geo = str(EXAMPLES / "geo.toml")
    for kind, name in (("tsg", "t.png"), ("throughput", "h.svg"), ("rtt", "r.html")):
        r = cli("plot", kind, geo, "--out", str(tmp_path / name), "--time", "0:30")
        assert r.returncode == 0, r.stderr
        assert "figure written to" in r.stdout
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (tmp_path / "h.svg").read_text()[:3000]
    assert "Plotly.newPlot" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["tsg", "nothing.pcap", "--out", "x.png"], "nothing.pcap: no such file"),
        (["tsg", "README.md", "--out", "x.png"], "give a capture"),
        (["tsg", str(EXAMPLES / "geo.toml"), "--flow", "3", "--out", "x.png"], "--flow 3"),
        (["tsg", str(EXAMPLES / "geo.toml"), "--time", "10", "--out", "x.png"], "--time 10"),
        (["throughput", str(EXAMPLES / "geo.toml"), "--bin", "-1 s", "--out", "x.png"], "--bin"),
        (
            [
                "tsg",
                str(EXAMPLES / "geo.toml"),
                "--set",
                'flows[0].protocol="quic"',
                "--out",
                "x.png",
            ],
            "spacetp run SCENARIO --qlog DIR",
        ),
    ],
)
def test_bad_plot_input_is_one_line(cli, tmp_path, args, message):
    r = cli("plot", *args)
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and "Traceback" not in r.stderr


def test_no_option_is_offered_that_does_not_work(cli, tmp_path):
    # `--keylog` was offered and then refused ("not written yet"): it is gone, and a QUIC
    # capture is refused in one line saying what to use instead
    for kind in ("tsg", "throughput", "rtt"):
        r = cli("plot", kind, "--help")
        assert r.returncode == 0 and "--keylog" not in r.stdout and "not written" not in r.stdout
    pcap = tmp_path / "q.pcap"
    r = cli("run", str(EXAMPLES / "geo.toml"), "--set", 'flows[0].protocol="quic"', "--set",
            'flows[0].bytes="200 kB"', "--pcap", f"0={pcap}", "-q")  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = cli("plot", "tsg", str(pcap), "--out", str(tmp_path / "x.png"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "no TCP or SCPS-TP conversation" in r.stderr and "--qlog DIR" in r.stderr
    assert "not written yet" not in r.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_zoomable_tsg_renders_in_chromium(cli, tmp_path):
    page = tmp_path / "tsg.html"
    sc = str(EXAMPLES / "geo.toml")
    r = cli("plot", "tsg", sc, "--set", 'flows[0].protocol="scps-tp"', "--out", str(page))
    assert r.returncode == 0, r.stderr
    info = page_check(page)
    assert info["errors"] == [] and info["plots"] == info["drawn"] == 1
    assert not blank(info["screenshot"], info["boxes"][0])
