"""The CFDP class 2 file-delivery-time model (spacetp.models.cfdp) against the simulator on a
grid of one-way delays and loss rates: exact with no loss; within 2% plus three standard
errors of the simulator's mean over seeds elsewhere, including where the tail and the EOF
round add most of the time (10 s one way, PER 1e-3: 18 s without them, 31 s with)."""

from __future__ import annotations

import math
import statistics

import pytest

import spacetp
from spacetp.models import cfdp, evaluate

FILE, RATE = 2_000_000, 2e6


def _scenario(one_way: float, per: float, seed: int) -> dict:
    return {
        "seed": seed,
        "stop": "20000 s",
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "2 Mb/s", "delay": f"{one_way} s",
                   "queue": {"packets": 100000}, "errors": {"per": per}}],
        "flows": [{"from": "a", "to": "b", "protocol": "cfdp", "bytes": f"{FILE} B",
                   "fit": True}],
    }  # fmt: skip


def _simulated(one_way: float, per: float, seeds: int = 12) -> list[float]:
    out = []
    for seed in range(1, seeds + 1):
        f = spacetp.run(_scenario(one_way, per, seed)).summary["flows"][0]
        assert f["complete"], f["failure"]
        out.append(f["completion_s"])
    return out


def test_with_no_loss_the_model_is_the_simulators_time_exactly():
    for one_way in (0.01, 0.27, 10.0):
        (t,) = _simulated(one_way, 0.0, seeds=1)
        m = cfdp.file_delivery_time(FILE, RATE, one_way, 0.0)
        assert m == pytest.approx(t, rel=1e-4), (one_way, m, t)


@pytest.mark.parametrize(
    "one_way, per",
    [(0.01, 0.01), (0.27, 0.01), (0.27, 0.02), (2.0, 0.001), (2.0, 0.02), (10.0, 0.001)],
)
def test_the_model_is_within_2_percent_and_3_standard_errors_of_the_simulator(one_way, per):
    ts = _simulated(one_way, per)
    mean = statistics.mean(ts)
    se = statistics.stdev(ts) / math.sqrt(len(ts))
    m = float(evaluate("cfdp", file=FILE, rate=RATE, one_way=one_way, p=per))
    assert abs(m - mean) <= 0.02 * mean + 3 * se, (one_way, per, m, mean, se)


def test_the_tail_and_the_eof_round_are_what_a_long_delay_adds():
    # 10 s one way, PER 1e-3: the pass alone is 8.2 s plus 10 s; a loss in the last round
    # trip, or an early one whose NAK or repair is lost, adds about a round trip (20 s).
    base = cfdp.file_delivery_time(FILE, RATE, 10.0, 0.0)
    lossy = cfdp.file_delivery_time(FILE, RATE, 10.0, 1e-3)
    assert 18.0 < base < 18.5 and lossy > base + 10.0
