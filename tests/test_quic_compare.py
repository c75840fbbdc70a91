"""`spacetp bench --quic`: the comparison table and figures, and two results it must show
that nobody here decided: loss-based QUIC on the interop runner's SATLOSS case runs at the
rate of Mathis et al.'s square-root formula, and BBR, which does not read loss as
congestion, finishes several times sooner."""

from __future__ import annotations

import math
import statistics

from conftest import spacetp_cli
from spacetp import quic_compare as qc


def test_the_table_has_every_protocol_on_every_case_and_a_figure_each(tmp_path):
    rows = qc.run_comparison(tmp_path, reps=1, quick=True, say=lambda *a: None)
    protos = {r["protocol"] for r in rows}
    assert protos == {*qc.QUIC, *qc.TCP, qc.SCPS}
    assert all(r["completed"] == 1 for r in rows), [r for r in rows if not r["completed"]]
    md = (tmp_path / "quic_comparison.md").read_text()
    for c in qc.CASES:
        assert f"`{c.name}`" in md
        assert (tmp_path / f"cwnd-{c.name}.png").stat().st_size > 5_000


def test_quic_newreno_on_satloss_runs_at_the_square_root_formulas_rate():
    satloss = next(c for c in qc.CASES if c.name == "satloss")
    secs = [qc.sim_run(satloss, "quic-newreno", s, 10_000_000)["seconds"] for s in (1, 2, 3)]
    # Mathis et al. 1997: rate = MSS / RTT x sqrt(3/2) / sqrt(p), with p = 1% and about
    # 1440 stream bytes per 1472-byte datagram: 10 MB in about 341 s.
    mathis = 10e6 * 8 / (1440 * 8 / 0.6 * math.sqrt(1.5) / math.sqrt(0.01))
    assert abs(statistics.fmean(secs) / mathis - 1) < 0.2, (secs, mathis)


def test_bbr_finishes_satloss_several_times_sooner_than_loss_based_quic():
    satloss = next(c for c in qc.CASES if c.name == "satloss")
    bbr = qc.sim_run(satloss, "quic-bbr", 1, 3_000_000)["seconds"]
    reno = qc.sim_run(satloss, "quic-newreno", 1, 3_000_000)["seconds"]
    assert bbr * 5 < reno, (bbr, reno)


def test_bench_takes_one_benchmark_at_a_time():
    r = spacetp_cli("bench", "--quic", "--vs-linux")
    assert r.returncode == 2 and "choose one benchmark" in r.stderr
