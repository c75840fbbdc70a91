"""Akan, Fang & Akyildiz (seed 003): the simulated set-up of `spacetp.experiments.papers.akan`
(that module's docstring and ASSUMPTIONS say what the paper leaves out and what we chose):
protocols, link, segment and window settings, the grids of the figures (quick, full), the
retransmission timer for RTTs up to 40 minutes, the base scenario and one sweep case."""

from __future__ import annotations

PROTOCOLS = ["tahoe", "reno", "newreno", "sack", "vegas", "fack", "westwood", "peach+"]
LABELS = {
    "tahoe": "Tahoe",
    "reno": "Reno",
    "newreno": "NewReno",
    "sack": "SACK",
    "vegas": "Vegas",
    "fack": "FACK",
    "westwood": "Westwood+",
    "peach+": "Peach+",
}
OTHERS = [p for p in PROTOCOLS if p != "peach+"]

SEGMENT = 1000  # payload bytes of a "1 KB" segment
MTU = SEGMENT + 40
LINK_RATE = "1 Mb/s"
P_LOSS = 1e-3
SSTHRESH = 20  # segments
RWND = 64  # segments
DURATION = 20_000.0  # s of data transfer
RTT_DEEP = 1200.0  # 20 min, Figs. 2 and 6

# RTT grids (s) of Table I's three ranges, and the loss grid of Fig. 6: (quick, full).
LOW = ([0.001, 0.03, 0.3, 1.0], [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5, 1.0])
HIGH = ([1.0, 5.0, 20.0, 100.0], [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0])
VERY_HIGH = (
    [100.0, 540.0, 1200.0, 2400.0],
    [100.0, 200.0, 300.0, 540.0, 900.0, 1200.0, 1800.0, 2400.0],
)
LOSSES = ([1e-6, 1e-4, 1e-3, 1e-2], [1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2])
S1_RWND = ([20, 64, 128], [20, 32, 64, 128, 256])
S1_DURATION = ([10_000.0, 20_000.0, 40_000.0], [5_000.0, 10_000.0, 20_000.0, 40_000.0, 80_000.0])
SEEDS = (2, 5)  # per point: quick, full
FIG2_SEEDS = (40, 200)  # Reno traces for the slow-start and recovery measures

METRICS = [
    "flows[0].bytes_delivered",
    "flows[0].timeouts",
    "flows[0].tcp.fast_retransmits",
    "flows[0].retransmitted_segments",
]


# ---------------------------------------------------------------------------- scenarios


def rto_settings(rtt: float) -> dict:
    """Timer settings for an RTT of up to 40 minutes (see ASSUMPTIONS)."""
    return {
        "initial_rto": max(1.0, 3.0 * rtt),
        "min_rto": max(1.0, 1.25 * rtt),
        "max_rto": max(60.0, 8.0 * rtt),
    }


def scenario(rtt: float = RTT_DEEP, p_loss: float = P_LOSS, protocol: str = "reno") -> dict:
    """The paper's topology: source - 1 Mb/s lossy link - destination, one bulk flow."""
    return {
        "name": f"akan: {LINK_RATE}, RTT {rtt:g} s, P_Loss {p_loss:g}",
        "stop": rtt + DURATION,
        "nodes": [{"name": "source"}, {"name": "destination"}],
        "links": [
            {
                "between": ["source", "destination"],
                "rate": LINK_RATE,
                "delay": rtt / 2,
                "queue": {"packets": 100, "discipline": "priority"},
                "errors": {"per": p_loss},
                "errors_back": {},
            }
        ],
        "flows": [
            {
                "from": "source",
                "to": "destination",
                "protocol": protocol,
                "mtu": MTU,
                "receive_buffer": RWND * SEGMENT,
                "send_buffer": RWND * SEGMENT,
                "tcp": {
                    "initial_window": 1,
                    "initial_ssthresh": SSTHRESH * SEGMENT,
                    "ack_every": 1,
                    **rto_settings(rtt),
                },
            }
        ],
    }


def case(rtt: float, p_loss: float = P_LOSS, rwnd: int = RWND, duration: float = DURATION):
    """(name, {path: value}) of one sweep case."""
    r = rto_settings(rtt)
    name = f"rtt={rtt:g} p={p_loss:g} w={rwnd} T={duration:g}"
    return name, {
        "links[0].delay": rtt / 2,
        "links[0].errors.per": p_loss,
        "flows[0].tcp.initial_rto": r["initial_rto"],
        "flows[0].tcp.min_rto": r["min_rto"],
        "flows[0].tcp.max_rto": r["max_rto"],
        "flows[0].receive_buffer": rwnd * SEGMENT,
        "flows[0].send_buffer": rwnd * SEGMENT,
        "stop": rtt + duration,
    }
