"""Link sources from the user's side: bad input is one line naming the field and the rule
(exit 2); traces and plan files are read relative to the scenario; every path to the core
(run, validate, sweeps, the emulator's link) gets the resolved schedules; `spacetp
schedule` writes its table, CSV, figure and a contact plan that reads back."""

from __future__ import annotations

import json

import numpy as np
import pytest

import spacetp
from conftest import EXAMPLES

LEO = (EXAMPLES / "leo-pass.toml").read_text()
TWO = """
seed = 1
stop = "30 s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
{link}
[[flows]]
from = "a"
to = "b"
bytes = "200 kB"
"""


def _bad_tle_checksum(text: str) -> str:
    return text.replace("0  9991", "0  9992")


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param(
            _bad_tle_checksum(LEO),
            "links[0].orbit.tle: line 2: checksum 2 does not match the line",
        ),
        pytest.param(
            LEO.replace("lat = 37.9249", "lat = 100"),
            "links[0].orbit.station.lat: 100 is not a latitude; must be in [-90, 90]",
        ),
        pytest.param(
            LEO.replace("elevation_mask = 10", "elevation_mask = 95"),
            "links[0].orbit.station.elevation_mask: 95 is not an elevation mask; must be in "
            "[0, 90)",
        ),
        pytest.param(
            LEO.replace(
                'modcod = { symbol_rate = 5e6, directions = "forward" }',
                'modcod = { symbol_rate = 5e6, directions = "forward", table = '
                "[[1.0, 1.0, 1e-7], [3.0, 0.8, 1e-7]] }",
            ),
            "links[0].orbit.modcod.table[1]: 0.8 bits/symbol is not above the previous row's "
            "1.0; the table must be monotonic",
        ),
        pytest.param(
            LEO.replace('rate_back = "1 Mb/s"', 'rate_back = "1 Mb/s"\nrate = "2 Mb/s"'),
            "links[0].rate: `orbit.modcod` sets it; remove one of the two",
        ),
        (
            TWO.format(
                link='delay = "1 ms"\nrate = { schedule = [["0 s", "1 Mb/s"], ["10 s", '
                '"2 Mb/s"], ["5 s", "3 Mb/s"]] }'
            ),
            "links[0].rate.schedule[2]: time 5 s is not after the previous point's 10 s; "
            "times must be strictly increasing",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_the_rule(cli, tmp_path, text, expected):
    p = tmp_path / "s.toml"
    p.write_text(text)
    r = cli("run", str(p), cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert expected in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_mahimahi_trace_sets_the_rate_bins_and_loops(tmp_path):
    # 12 opportunities in the first 100 ms, none in the next, 3 in the third; period 300 ms.
    (tmp_path / "up.trace").write_text("\n".join(["5"] * 12 + ["250", "260", "300"]) + "\n")
    (tmp_path / "d.csv").write_text("time_ms,delay_ms\n0,20\n10000,40\n")
    link = 'trace = { mahimahi = "up.trace", delay_csv = "d.csv", duration = "1 s" }'
    p = tmp_path / "s.toml"
    p.write_text(TWO.format(link=link))
    sc = spacetp.load(p)  # file names are read relative to the scenario's folder
    from spacetp.linksrc import resolve

    lk = resolve(sc)["links"][0]
    pts = lk["rate"]["schedule"]
    assert pts[:3] == [[0.0, 12 * 1500 * 8 / 0.1], [0.1, 0.0], [pytest.approx(0.2), 3 * 12e4]]
    assert pts[3] == [pytest.approx(0.3), 12 * 1500 * 8 / 0.1], "the trace repeats"
    assert lk["delay"]["schedule"] == [[0.0, 0.02], [10.0, 0.04]]
    res = spacetp.run(sc)
    assert res.flows[0]["complete"]
    # Times that go backwards in a trace are named with the file's line.
    (tmp_path / "up.trace").write_text("5\n9\n7\n")
    with pytest.raises(spacetp.ScenarioError, match=r"links\[0\]\.trace\.mahimahi: .*line 3: 7 ms"):
        spacetp.run(spacetp.load(p))


def test_a_plan_file_drives_the_link_through_the_core(tmp_path):
    (tmp_path / "plan.ionrc").write_text(
        "a contact +2 +28 1 2 250000\na contact +2 +28 2 1 250000\na range +0 +30 1 2 1\n"
    )
    p = tmp_path / "s.toml"
    p.write_text(TWO.format(link='contacts = { file = "plan.ionrc", nodes = [1, 2] }'))
    res = spacetp.run(p)
    f = res.flows[0]
    assert f["complete"] and 2.0 <= f["min_rtt_s"] < 2.1


def test_every_path_to_the_core_resolves_the_orbit(tmp_path):
    from spacetp.executors import run_chunk
    from spacetp.live.emulate import link_scenario

    sc = spacetp.load(EXAMPLES / "leo-pass.toml")
    spacetp.set_value(sc, "flows[0].bytes", "1 MB")
    spacetp.validate(sc)
    (rec,) = run_chunk([("k", json.dumps(sc))])  # a sweep worker gets the scenario's JSON
    assert rec["status"] == "ok", rec["error"]
    assert json.loads(rec["summary"])["flows"][0]["complete"]
    text, i, desc = link_scenario(sc)  # what `spacetp emulate` hands the real-time loop
    link = json.loads(text)["links"][0]
    assert "orbit" not in link and len(link["delay"]["schedule"]) > 400
    assert desc["directions"][0]["rate_bps"] > 1e6
    # A --set on an orbit field changes the pass.
    from spacetp.linksrc import resolve

    aos = resolve(sc)["links"][0]["up"]["schedule"][1][0]
    spacetp.set_value(sc, "links[0].orbit.station.elevation_mask", 30)
    assert resolve(sc)["links"][0]["up"]["schedule"][1][0] > aos + 60


def test_schedule_command_writes_table_csv_figure_and_a_plan_that_reads_back(cli, tmp_path):
    csv, png, plan = tmp_path / "p.csv", tmp_path / "p.png", tmp_path / "p.ionrc"
    r = cli(
        "schedule",
        str(EXAMPLES / "leo-pass.toml"),
        "--csv",
        str(csv),
        "--plot",
        str(png),
        "--contact-plan",
        str(plan),
        "--node",
        "sat=2",
        "--node",
        "ground=1",
    )
    assert r.returncode == 0, r.stderr
    assert "30.90 s (22:52:10)" in r.stdout and "427.15 s (22:58:47)" in r.stdout
    head = csv.read_text().splitlines()[0].split(",")
    for col in ("time_s", "delay_s", "rate_bps", "up", "elevation_deg", "modcod", "per"):
        assert col in head
    assert png.stat().st_size > 10_000
    text = plan.read_text()
    assert "@ 2019/12/09-22:51:40" in text and "a contact +30.899" in text
    # The plan drives a link in its turn: the same window.
    sc = {
        "nodes": [{"name": "g"}, {"name": "s"}],
        "links": [{"between": ["g", "s"], "contacts": {"plan": text, "nodes": [1, 2]}}],
        "flows": [{"from": "g", "to": "s", "bytes": "1 kB", "start": "40 s"}],
    }
    res = spacetp.run(sc)
    assert res.flows[0]["complete"]


def test_a_sweep_over_an_orbit_field_resolves_each_point_in_its_worker():
    sc = spacetp.load(EXAMPLES / "leo-pass.toml")
    spacetp.set_value(sc, "flows[0].bytes", "20 MB")
    spacetp.set_value(sc, "flows[0].tcp", {"syn_retries": 10})  # SYNs until the later AOS
    res = spacetp.sweep(
        sc,
        {"links[0].orbit.station.elevation_mask": [10, 30]},
        reps=1,
        workers=1,
        progress=False,
        metrics=["flows[0].last_byte_s"],
    )
    assert (res.runs["status"] == "ok").all(), res.failures()
    t = res.runs.sort_values("links[0].orbit.station.elevation_mask")["flows[0].last_byte_s"]
    assert t.iloc[1] > t.iloc[0] + 60, "a higher mask opens the link later"


def test_traces_written_by_schedule_replay_the_same_pass(cli, tmp_path):
    """Traces out and back in: the pass written as a Mahimahi trace and a delay CSV, replayed
    by a link, carries the same bits with the same delays."""
    mm, dc = tmp_path / "pass.trace", tmp_path / "pass.csv"
    r = cli(
        "schedule", str(EXAMPLES / "leo-pass.toml"), "--mahimahi", str(mm), "--delay-csv", str(dc)
    )
    assert r.returncode == 0, r.stderr
    from spacetp.linksrc import resolve

    orig = resolve(spacetp.load(EXAMPLES / "leo-pass.toml"))["links"][0]
    sc = {
        "stop": "500 s",
        "nodes": [{"name": "a"}, {"name": "b"}],
        "links": [
            {
                "between": ["a", "b"],
                "trace": {"mahimahi": str(mm), "delay_csv": str(dc), "repeat": False, "bin": "1 s"},
            }
        ],
    }
    back = resolve(sc)["links"][0]
    from spacetp.linksrc import view

    def bits(points, up=None):  # over the pass (a trace played once then holds its last rate)
        t = np.arange(0, 427, 0.01)
        return float((view._step(points, t) * (view._up(up, t) if up else 1)).sum() * 0.01)

    down = [
        [a, b]
        for (a, u), (b, _) in zip(
            orig["up"]["schedule"], orig["up"]["schedule"][1:] + [[None, None]], strict=True
        )
        if not u
    ]
    want = bits(orig["rate"]["schedule"], down)
    got = bits(back["rate"]["schedule"])
    assert got == pytest.approx(want, rel=0.01)
    d0 = np.array(orig["delay"]["schedule"])
    d1 = np.array(back["delay"]["schedule"])
    assert np.allclose(np.interp(d0[:, 0], d1[:, 0], d1[:, 1]), d0[:, 1], atol=1e-9)
