"""The limit analysis from Python and the command line: every flow's `limits` in the summary
(shares that add up to 1), the line under `spacetp run`'s table, the states over time with
the traces (`Result.limits_frame`, `--trace`'s `-limits` file), and the shading of the
time-sequence and throughput graphs. The engine's own catalogue is
crates/spacetp-sim/tests/limits.rs."""

from __future__ import annotations

import pytest

import spacetp
from conftest import spacetp_cli

# 250 Mb/s down, 3 up, 300 ms each way, a BDP queue: Linux's 6 MB receive buffer holds the
# window at 3.93 MB against an 18.75 MB pipe (a smaller transfer keeps the test quick).
GEO = """
seed = 1
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "250 Mb/s"
rate_back = "3 Mb/s"
delay = "300 ms"
queue = { bdp = 1.0 }
[[flows]]
from = "a"
to = "b"
protocol = "linux-cubic"
bytes = "60 MB"
"""


@pytest.fixture
def geo(tmp_path):
    f = tmp_path / "geo.toml"
    f.write_text(GEO)
    return f


def test_the_summary_names_the_receive_window_with_its_setting(geo):
    r = spacetp.run(str(geo))
    lim = r.flows[0]["limits"]
    assert sum(x["share"] for x in lim) == pytest.approx(1.0)
    top = lim[0]
    assert top["state"] == "receive_window" and top["share"] > 0.4, lim
    assert top["setting"] == "flows[0].receive_buffer"
    assert 3.8e6 < top["mean_bytes"] < 4.0e6
    assert "BDP 18.8 MB" in top["text"]


def test_spacetp_run_prints_what_limited_each_flow(geo):
    r = spacetp_cli("run", str(geo))
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("flow0: limited by"))
    assert "receive window" in line and "flows[0].receive_buffer" in r.stdout


def test_the_states_over_time_come_with_the_traces(geo, tmp_path):
    r = spacetp.run(str(geo), trace_segments=True)
    lf = r.limits_frame()
    assert set(lf["state"]) <= set(spacetp._core.limit_states())
    iv = r.limit_intervals(0)
    assert iv["state"].iloc[0] == "handshake" and iv["start_s"].iloc[0] == 0.0
    assert (iv["end_s"] >= iv["start_s"]).all()
    assert iv["end_s"].iloc[-1] == pytest.approx(r.flows[0]["last_byte_s"])
    assert "receive_window" in set(iv["state"])
    # Without tracing there is no timeline (the summary still has the shares).
    assert spacetp.run(str(geo)).limits_frame() is None
    out = tmp_path / "trace.csv"
    res = spacetp_cli("run", str(geo), "--trace", str(out), "-q")
    assert res.returncode == 0, res.stderr
    assert "receive_window" in (tmp_path / "trace-limits.csv").read_text()


def test_the_graphs_shade_the_limiting_state(geo, tmp_path):
    html = tmp_path / "tsg.html"
    r = spacetp_cli("plot", "tsg", str(geo), "--out", str(html))
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert "limited by: receive window" in page and "limited by: handshake" in page
    png = tmp_path / "thr.png"
    r = spacetp_cli("plot", "throughput", str(geo), "--out", str(png))
    assert r.returncode == 0 and png.stat().st_size > 10_000, r.stderr
