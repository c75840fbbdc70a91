"""Nguyen & Sterbenz (seed 001): the simulated set-up of `spacetp.experiments.papers.nguyen`
(that module's docstring and ASSUMPTIONS say what the paper leaves out and what we chose):
the reverse rates, delays and MTUs of the figures (quick, full), the protocols and their
labels, the metrics, the base scenario (examples/asymmetry.toml) and one sweep case."""

from __future__ import annotations

import copy

import spacetp

REVERSE = {  # reverse (ACK channel) rate -> b/s, the paper's set
    "1.5 Mb/s": 1.5e6,
    "15 kb/s": 15e3,
    "5 kb/s": 5e3,
    "3 kb/s": 3e3,
    "2 kb/s": 2e3,
    "1.5 kb/s": 1.5e3,
}
QUICK_REVERSE = ["1.5 Mb/s", "15 kb/s", "5 kb/s", "3 kb/s", "1.5 kb/s"]
DELAYS = ([50, 100, 200, 300], [50, 100, 150, 200, 250, 300])  # ms, (quick, full)
MTUS = ([100, 296, 512, 1500], [100, 200, 296, 512, 576, 1000, 1500])
CORRUPTION_SEEDS = (3, 10)
BER = 1e-5
LABELS = {
    "newreno": "NewReno",
    "vegas": "Vegas",
    "scps-tp": "SCPS-TP",
    "scps-nucc": "SCPS-TP (Table 2)",
    "scps-nucc-nosnack": "SCPS-TP (Table 2), SNACK off",
    "westwood": "Westwood+",
    "highspeed": "HighSpeed",
    "hybla": "Hybla",
}
VARIANTS = ["westwood", "highspeed", "hybla"]
HYBLA_RTT0 = "0.05 s"  # ns-3's TcpHybla RRTT
OUTAGE = (10.0, 70.0)  # s: Fig. S1's link outage

METRICS = [
    "flows[0].goodput_bps",
    "flows[0].complete",
    "flows[0].timeouts",
    "flows[0].retransmitted_segments",
    "flows[0].acks_sent",
    "flows[0].data_segments_sent",
    "links[1].queue_drops",
]

ASSUMPTIONS = [
    "Topology and settings of section 4.1 and Tables 1-2 as in examples/asymmetry.toml: client "
    "- 1.5 Mb/s, 0.01 ms - router - space link (1.5 Mb/s forward, reverse rate varied, 50 ms "
    "one way unless varied, drop-tail queue of one BDP at the router) - server; MTU 512 (472 "
    "payload bytes); a 5 MB transfer per run; throughput = bytes x 8 / time of the last byte, "
    "the handshake included (as ns-3's PacketSink measures it).",
    "SCPS-TP = the scps-tp profile (Table 1) for Figures 3-7 and scps-nucc (Table 2) for the "
    "corruption test; TCP variants are spacetp's profiles unchanged (initial window 10, an ACK "
    "every 2 segments or 200 ms, min RTO 1 s, as ns-3); SACK and timestamps off.",
    "'SCPS-TP with Westwood / HighSpeed / Hybla' (Figure 5) = the scps-tp profile with that "
    "congestion controller: fixed ACK frequency 0.1 s, SNACK and 1.5 Mb/s rate control kept. "
    "Hybla's reference RTT is ns-3's 50 ms (rho = 2 at this RTT; spacetp's default is Linux's "
    "25 ms, with which plain Hybla's slow-start bursts overflow the router queue and it carries "
    "15-220 kb/s below 1.5 Mb/s reverse).",
    "The reverse rate of the 1:1 .. 1000:1 sweep uses the paper's six values; '500:1' is "
    "3 kb/s (the paper's own equivalence in section 4.4).",
    "Queues other than the router's keep spacetp's default (100 packets); the paper does not "
    "give them. Because the client's link is as fast as the space link, the router queue "
    "builds only when the sender bursts.",
    "Corruption test: bit errors (BER 1e-5) on the router -> server direction only, on the "
    "512-byte IP packet (about 4% packet loss); the reverse direction is error free. "
    "Sequence plots show seed 1; the targets use the mean over several seeds.",
    "Figures 8-9 also show, dashed, scps-nucc with SNACK turned off (ours, not in the paper): "
    "how the corruption test behaves when losses are repaired by the retransmission timer.",
]


def base() -> dict:
    """examples/asymmetry.toml (tests check they agree), with the knobs the sweeps set."""
    return {
        "name": "nguyen: client - router - asymmetric space link - server",
        "nodes": [{"name": "client"}, {"name": "router"}, {"name": "server"}],
        "links": [
            {"between": ["client", "router"], "rate": "1.5 Mb/s", "delay": "0.01 ms"},
            {
                "between": ["router", "server"],
                "rate": "1.5 Mb/s",
                "rate_back": "5 kb/s",
                "delay": "50 ms",
                "queue": {"bdp": 1.0},
                "errors": {},
            },
        ],
        "flows": [
            {
                "from": "client",
                "to": "server",
                "protocol": "newreno",
                "bytes": "5 MB",
                "mtu": 512,
                "tcp": {},
            }
        ],
    }


def scps_settings(name: str) -> dict:
    return copy.deepcopy(spacetp.protocols()[name]["settings"]["scps"])


def run_case(protocol: str, rev: str = "5 kb/s", delay_ms: float = 50, mtu: int = 512, ber=None):
    """The values a case sets (the same paths in every case)."""
    tcp: dict = {}
    proto = protocol
    if protocol.startswith("scps-tp+"):  # SCPS-TP with another congestion controller
        proto = "scps-tp"
        tcp = {"congestion_control": protocol.split("+", 1)[1]}
    elif protocol == "scps-nucc-nosnack":
        proto = "scps-nucc"
        tcp = {"scps": {**scps_settings("scps-nucc"), "snack": False}}
    if protocol.endswith("hybla"):
        tcp["hybla"] = {"rtt0": HYBLA_RTT0}  # ns-3's reference RTT (ours defaults to Linux's)
    return {
        "flows[0].protocol": proto,
        "flows[0].tcp": tcp,
        "flows[0].mtu": mtu,
        "links[1].rate_back": rev,
        "links[1].delay": f"{delay_ms:g} ms",
        "links[1].errors": {"ber": ber} if ber else {},
    }


def scenario_of(values: dict) -> dict:
    sc = base()
    for path, v in values.items():
        spacetp.set_value(sc, path, v)
    return sc
