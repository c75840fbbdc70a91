"""Analytic models against the simulator, with the models' assumptions matched (issue 5).

Only the operating points where each model's assumptions hold are asserted; the others, with
the assumption that differs, are tabulated in docs/models.md ("Models against the simulator").
"""

import numpy as np
import pytest

import spacetp
from spacetp.models import pftk, scalable


def two_nodes(rate, delay, errors, protocol, rcv, mtu, stop, tcp=None):
    flow = {
        "from": "a",
        "to": "b",
        "protocol": protocol,
        "mtu": mtu,
        "receive_buffer": rcv,
        "send_buffer": "64 MB",
    }
    if tcp:
        flow["tcp"] = tcp
    return {
        "stop": stop,
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [
            {
                "between": ["a", "b"],
                "rate": rate,
                "delay": delay,
                "queue": {"packets": 10000},
                "errors": errors,
                "errors_back": {},
            }
        ],
        "flows": [flow],
    }


def mean_over_seeds(sc, f, seeds=(1, 2, 3)):
    return float(np.mean([f(spacetp.run(sc, seed=s).flows[0]) for s in seeds]))


@pytest.mark.parametrize("p", [1e-3, 3e-3, 1e-2])
def test_pftk_against_reno(p):
    # Reno with delayed ACKs (b = 2), min RTO 1 s (T0), not window limited, i.i.d. losses.
    sc = two_nodes("100 Mb/s", "50 ms", {"per": p}, "reno", "16 MB", 1500, "200 s")
    sim = mean_over_seeds(sc, lambda f: f["goodput_bps"] / (1460 * 8))
    rtt = mean_over_seeds(sc, lambda f: f["mean_rtt_s"])
    model = float(pftk.throughput(rtt, p, 1.0, b=2))
    assert abs(sim / model - 1) < 0.20, (sim, model)


# Altman et al.'s ns-2 setup: ACK per packet (alpha - 1 per ACK), NewReno that deflates to
# ssthresh at the end of recovery (PRR does here), alpha 1.01, beta 0.86, B_l = 8.
SCALABLE = {"ack_every": 1, "prr": True, "scalable": {"alpha": 1.01, "beta": 0.86, "low_window": 8}}


def scalable_window(errors, b_u, stop):
    sc = two_nodes("150 Mb/s", "60 ms", errors, "scalable", f"{b_u * 1000} B", 1040, stop, SCALABLE)
    # E[W] = throughput (1000-byte packets) x RTT (0.12 s; the queue never builds)
    return mean_over_seeds(sc, lambda f: f["goodput_bps"] / 8000 * 0.12)


@pytest.mark.parametrize("b_u, q", [(500, 1e-5), (500, 1e-4), (2000, 1e-5)])
def test_scalable_eq8_against_simulation(b_u, q):
    sim = scalable_window({"per": q}, b_u, "200 s")
    model = float(scalable.mean_window(q, b_u, alpha=1.01, beta=0.86))
    assert abs(sim / model - 1) < 0.15, (sim, model)


@pytest.mark.parametrize("burst", [0.0, 0.5, 0.9])
def test_scalable_markov_model_against_the_per_rtt_markov_channel(burst):
    a, p = scalable.burst_chain(0.02, burst)
    loss = np.diag(p) if np.ndim(p) == 2 else np.asarray(p)
    channel = {
        "markov_slot": {
            "slot": "120 ms",
            "transition": np.asarray(a).tolist(),
            "loss": loss.tolist(),
        }
    }
    sim = scalable_window(channel, 500, "400 s")
    model = float(scalable.mean_window_markov(a, p, 8, 500, 1.01, 0.86))
    assert abs(sim / model - 1) < 0.15, (sim, model)


# Liu & Liu's dumbbell (seed 000, section III) with SCPS-TP's Vegas reacting to loss, as the
# reproduction runs it (spacetp.experiments.papers.liu: congestion loss-source policy, SNACK,
# an ACK per packet, ns-3's Vegas response, no rate control, 1 MB buffers, light background).


def liu_ratio(p, tcp=None, seeds=(1, 2, 3, 4)):
    """Simulated SCPS-TP throughput / Liu's full model (24) at loss rate p, RTT 204 ms."""
    from spacetp.experiments.papers import liu

    sc = liu.scenario(300.0)
    sc["topology"]["core"]["errors"] = {"per": p}
    if tcp is not None:
        sc["flows"][0]["tcp"] = tcp
    flows = [spacetp.run(sc, seed=s).flows[0] for s in seeds]
    sim = np.mean([f["goodput_bps"] for f in flows]) / (liu.PAYLOAD * 8)
    rtt = np.mean([f["mean_rtt_s"] for f in flows])
    base = min(f["min_rtt_s"] for f in flows)
    return sim / float(liu.model_pkts(p, rtt, base))


@pytest.mark.parametrize("p", [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2])
def test_liu_model_against_scps_tp_on_the_dumbbell(p):
    # Issue 5: within 20% over 1e-4 .. 1e-2, with the 1/4 window decrease the paper states
    # (`vegas.loss_response = "quarter"`); 6 seeds gave 0.82 .. 1.03 (docs/models.md).
    ratio = liu_ratio(p)
    assert abs(ratio - 1) < 0.20, ratio


def test_the_vegas_loss_response_decides_the_agreement():
    # The model cuts the window by 1/4 at every loss. ns-3's Vegas response cuts less (a loss
    # soon after another lowers ssthresh by one packet): the simulation runs well above the
    # model; Linux's halves: well below it (docs/models.md).
    from spacetp.experiments.papers import liu

    def with_response(r):
        return liu._merge(liu.SCPS_TCP, {"vegas": {"loss_response": r}})

    ns3 = liu_ratio(1e-3, with_response("ns3"), seeds=(1, 2))
    halving = liu_ratio(1e-3, with_response("reno"), seeds=(1, 2))
    assert ns3 > 1.25 and halving < 0.8, (ns3, halving)


def test_model_command(cli):
    r = cli("model", "pftk-approx", "--rtt", "1000", "--p", "1e-3", "--t0", "3000")
    assert r.returncode == 0, r.stderr
    assert "0.03847" in r.stdout  # x 8000 bits = 308 b/s, Akan et al. section II
    r = cli("model", "pftk", "--rtt", "-1", "--p", "0.1")
    assert r.returncode == 2 and "rtt = -1 is out of range" in r.stderr
