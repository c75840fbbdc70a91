"""Sweeps: grid syntax, seeds, statistics, local and Dask executors giving the same numbers,
and the sweep / results / plot commands (the results store: test_sweep_store.py)."""

from __future__ import annotations

import hashlib
import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import spacetp
from spacetp import _core
from spacetp.grid import make_axes, parse_spec, parse_values, points
from spacetp.stats import summarize
from spacetp.store import Store
from spacetp.sweep import derive_seed, plan_sweep
from sweep_cases import ASYM, small

PNG = b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------- grid syntax


@pytest.mark.parametrize(
    "spec, values",
    [
        ("50 ms,100 ms,200 ms", ["50 ms", "100 ms", "200 ms"]),
        ("4, 8", [4, 8]),
        ('"5 MB",1e-5,true', ["5 MB", 1e-5, True]),
        ("{ per = 0.01 },{ ber = 1e-6, x = [1, 2] }", [{"per": 0.01}, {"ber": 1e-6, "x": [1, 2]}]),
        ("log:1e-9:1e-5:5", [1e-9, 1e-8, 1e-7, 1e-6, 1e-5]),
        ("lin:50 ms:300 ms:6", ["50 ms", "100 ms", "150 ms", "200 ms", "250 ms", "300 ms"]),
        ("log:1 kb/s:100 kb/s:3", ["1 kb/s", "10 kb/s", "100 kb/s"]),
        ("lin:2:10:5", [2, 4, 6, 8, 10]),
        ("log:1:1000:4", [1, 10, 100, 1000]),
        ("lin:0:1:11", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
        ("lin:0.5:1:2", [0.5, 1.0]),
    ],
)
def test_grid_values(spec, values):
    got = parse_values(spec)
    assert got == values
    assert [type(v) for v in got] == [type(v) for v in values]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("links[1].delay", "use PATH=VALUES"),
        ("links[1].delay=", "no values"),
        ("links[1].delay=1,,2", "empty item"),
        ("links[1].errors.per=log:0:1e-2:3", "log spacing needs ends above 0"),
        ("links[1].errors.per=log:1e-5:1e-2", "three fields"),
        ("links[1].delay=lin:50 ms:1 s:3", "same unit"),
        ("links[1].delay=lin:1 parsec:2 parsec:3", "unknown unit 'parsec'"),
        ("links[1].delay=lin:1:2:1", "at least 2 points"),
        ("links[1].delay=lin:1:2:x", "not a whole number"),
        ("links[1].delay=lin:a:2:3", "'a' is not a number"),
    ],
)
def test_bad_grid_specs_say_why(spec, message):
    with pytest.raises(spacetp.ScenarioError, match="--grid") as e:
        parse_spec(spec)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "grid, message",
    [
        ({"links[1].dealy": "50 ms"}, "--grid links[1].dealy: no field `dealy`"),
        ({"links[7].delay": "50 ms"}, "has 2 entries, no [7]"),
        ({"seed": "1,2"}, "seeds are derived per run"),
        ({"links[1].delay": "50 ms,100 ms,50 ms"}, 'value "50 ms" is listed twice'),
    ],
)
def test_bad_grids_fail_before_running(grid, message):
    with pytest.raises(spacetp.ScenarioError) as e:
        spacetp.sweep(small(), grid=grid, reps=1, progress=False)
    assert message in str(e.value)


def test_bad_arguments():
    with pytest.raises(spacetp.ScenarioError, match="--reps 0"):
        plan_sweep(small(), None, 0)
    with pytest.raises(spacetp.ScenarioError, match="--metric flows\\[0\\].goodput"):
        plan_sweep(small(), None, 1, metrics=["flows[0].goodput"])
    with pytest.raises(spacetp.ScenarioError, match="is not a numeric field"):
        plan_sweep(small(), None, 1, metrics=["flows[0].state"])
    with pytest.raises(spacetp.ScenarioError, match="--executor ssh"):
        spacetp.sweep(small(), reps=1, executor="ssh", progress=False)
    with pytest.raises(spacetp.ScenarioError, match="--workers 0"):
        spacetp.sweep(small(), reps=1, workers=0, progress=False)


def test_a_tcp_only_counter_is_a_metric_of_the_flows_tcp_block():
    from spacetp.metrics import extractor

    sc = small()
    spacetp.set_value(sc, "links[1].errors", {"per": 0.02})
    res = spacetp.run(sc, seed=3)
    block = res.summary["flows"][0]["tcp"]
    assert "fast_retransmits" not in res.summary["flows"][0], "TCP's counters are in its block"
    assert block["fast_retransmits"] > 0
    assert extractor("flows[0].tcp.fast_retransmits")(res.summary) == block["fast_retransmits"]
    assert math.isnan(extractor("flows[5].tcp.fast_retransmits")(res.summary))
    with pytest.raises(spacetp.ScenarioError, match=r"flows\[0\]\.tcp\.fast_retransmits"):
        plan_sweep(small(), None, 1, metrics=["flows[0].fast_retransmits"])
    with pytest.raises(spacetp.ScenarioError, match="`tcp_x` is not a flow block"):
        plan_sweep(small(), None, 1, metrics=["flows[0].tcp_x.fast_retransmits"])
    with pytest.raises(spacetp.ScenarioError, match="not a numeric field of a flow's tcp block"):
        plan_sweep(small(), None, 1, metrics=["flows[0].tcp.state"])


def test_cartesian_product_and_zipped_axes():
    grid = {
        "links[1].delay": "50 ms,100 ms,200 ms",
        "links[1].rate_back": ["5 kb/s", "15 kb/s"],
        "flows[0].tcp.initial_window": "lin:2:4:2",
    }
    plan = plan_sweep(small(), grid, 3)
    assert len(plan.points) == 3 * 2 * 2 and len(plan.runs) == 36
    assert plan.params == list(grid)
    assert plan.points[0] == {
        "links[1].delay": "50 ms",
        "links[1].rate_back": "5 kb/s",
        "flows[0].tcp.initial_window": 2,
    }
    zipped = {("links[1].delay", "links[1].delay_back"): [("50 ms", "60 ms"), ("1 s", "2 s")]}
    axes = make_axes(zipped, ["flows[0].mtu=512,1500", "flows[0].bytes=1 kB,2 kB"])
    pts = points(axes)
    assert len(pts) == 4
    assert pts[1] == {
        "links[1].delay": "50 ms",
        "links[1].delay_back": "60 ms",
        "flows[0].mtu": 1500,
        "flows[0].bytes": "2 kB",
    }
    with pytest.raises(spacetp.ScenarioError, match="as many values"):
        make_axes(None, ["flows[0].mtu=512,1500", "flows[0].bytes=1 kB"])


# ----------------------------------------------------------------- seeds and keys


def test_seeds_are_deterministic_and_distinct():
    grid = {"links[1].delay": "50 ms,100 ms", "links[1].rate_back": "5 kb/s,15 kb/s"}
    a = plan_sweep(small(), grid, 4)
    b = plan_sweep(small(), dict(reversed(grid.items())), 4)  # axis order does not matter
    assert sorted(r.seed for r in a.runs) == sorted(r.seed for r in b.runs)
    assert {r.key for r in a.runs} == {r.key for r in b.runs}
    assert len({r.seed for r in a.runs}) == len(a.runs)
    assert all(0 <= r.seed < 2**63 for r in a.runs)
    c = plan_sweep(small(), grid, 4, base_seed=2)
    assert not {r.seed for r in a.runs} & {r.seed for r in c.runs}
    assert a.runs[0].seed == derive_seed(1, a.points[0], 0)
    # extending a grid or the replicates keeps the runs already planned
    more = plan_sweep(small(), {**grid, "links[1].delay": "50 ms,100 ms,300 ms"}, 5)
    assert {r.key for r in a.runs} < {r.key for r in more.runs}


def test_a_row_rerun_alone_gives_the_same_numbers(tmp_path):
    res = spacetp.sweep(
        small(),
        grid={"links[1].delay": "50 ms,150 ms"},
        reps=3,
        workers=2,
        store=tmp_path / "s",
        progress=False,
    )
    assert len(res.runs) == 6 and (res.runs["status"] == "ok").all()
    assert res.runs["flows[0].retransmitted_segments"].nunique() > 1, "seeds differ per rep"
    stored = Store.open(tmp_path / "s").read().set_index("key")
    for i, row in res.runs.iterrows():
        # from the point's scenario and the row's seed
        sc = spacetp.load(ASYM)
        spacetp.set_value(sc, "flows[0].bytes", "200 kB")
        spacetp.set_value(sc, "links[1].errors", {"per": 0.005})
        spacetp.set_value(sc, "links[1].delay", row["links[1].delay"])
        alone = spacetp.run(sc, seed=int(row["seed"]))
        f = alone.flows[0]
        for m in ("goodput_bps", "completion_s", "retransmitted_segments", "timeouts"):
            assert row[f"flows[0].{m}"] == float(f[m]), (i, m)
        assert spacetp.run(res.scenario(i)).to_json() == alone.to_json()
        # and from the store alone: the scenario hashes to its key and gives its summary
        rec = stored.loc[row["key"]]
        text = json.dumps(
            {"scenario": json.loads(rec["scenario"]), "version": _core.__version__},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        assert hashlib.sha256(text.encode()).hexdigest() == row["key"]
        assert json.loads(rec["summary"]) == alone.summary


# ----------------------------------------------------------------- statistics


def test_summary_statistics_match_scipy():
    values = [3.1, 2.7, 3.9, 3.3, 2.2, 3.0, 4.1]
    runs = pd.DataFrame(
        {
            "point": [0] * 7 + [1, 1, 1],
            "p": ["a"] * 7 + ["b"] * 3,
            "status": ["ok"] * 7 + ["ok", "ok", "error"],
            "m": values + [5.0, np.nan, np.nan],
        }
    )
    s = summarize(runs, ["p"], ["m"])
    assert list(s["runs"]) == [7, 3] and list(s["ok"]) == [7, 2] and list(s["failed"]) == [0, 1]
    mean, sem = np.mean(values), scipy.stats.sem(values)
    lo, hi = scipy.stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    assert s.loc[0, "m:mean"] == pytest.approx(mean, rel=1e-14)
    assert s.loc[0, "m:std"] == pytest.approx(np.std(values, ddof=1), rel=1e-14)
    assert s.loc[0, "m:count"] == 7
    assert s.loc[0, "m:ci95"] == pytest.approx((hi - lo) / 2, rel=1e-12)
    # one value (the NaN and the failed run do not count): no spread, no interval
    assert s.loc[1, "m:mean"] == 5.0 and s.loc[1, "m:count"] == 1
    assert math.isnan(s.loc[1, "m:std"]) and math.isnan(s.loc[1, "m:ci95"])


# ----------------------------------------------------------------- executors


def test_local_and_dask_give_identical_frames(tmp_path):
    grid = {"links[1].delay": "50 ms,200 ms", "links[1].errors.per": "log:1e-3:1e-2:2"}
    kw = {"grid": grid, "reps": 3, "workers": 2, "progress": False}
    local = spacetp.sweep(small(), executor="local", store=tmp_path / "a", **kw)
    dask = spacetp.sweep(small(), executor="dask", store=tmp_path / "b", **kw)
    assert len(local.runs) == 12 and dask.stats["computed"] == 12
    a = local.runs.sort_values("key").reset_index(drop=True)
    b = dask.runs.sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.equals(b)
    pd.testing.assert_frame_equal(local.summary, dask.summary, check_exact=True)
    sa = Store.open(tmp_path / "a").read().set_index("key").sort_index()
    sb = Store.open(tmp_path / "b").read().set_index("key").sort_index()
    assert (sa["summary"] == sb["summary"]).all(), "stored summaries equal byte for byte"


# ----------------------------------------------------------------- the commands


@pytest.fixture
def main(capsys, monkeypatch):
    """Run `spacetp ARGS...` in this process (as the entry point does: exit code, one-line
    errors) and return (exit code, stdout, stderr). Saves a second of imports per call."""
    from spacetp.cli import main as entry

    def call(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["spacetp", *args])
        try:
            entry()
            code = 0
        except SystemExit as e:
            code = e.code or 0
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return call


def test_sweep_results_plot_commands(cli, main, tmp_path):
    store = str(tmp_path / "s")
    r = cli(
        "sweep",
        str(ASYM),
        "--set",
        'flows[0].bytes="100 kB"',
        "--grid",
        "links[1].errors.per=log:1e-3:1e-2:3",
        "--grid",
        "links[1].delay=50 ms,150 ms",
        "--reps",
        "3",
        "--workers",
        "2",
        "--store",
        store,
        "--metric",
        "flows[0].goodput_bps",
        "--metric",
        "run.end_s",
    )
    assert r.returncode == 0, r.stderr
    assert "links[1].errors.per" in r.stdout and "flows[0].goodput_bps" in r.stdout
    assert "18 runs: 18 computed, 0 from the store, 0 failed" in r.stdout
    assert "18/18" in r.stderr, "the progress bar's last state"

    code, out, err = main("results", store)
    assert code == 0, err
    assert "150 ms" in out and "run.end_s" in out and "±" in out
    code, out, err = main("results", store, "--csv", str(tmp_path / "summary.csv"))
    assert code == 0, err
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == 6 and "flows[0].goodput_bps:ci95" in summary.columns
    code, out, err = main("results", store, "--runs", "--csv", str(tmp_path / "runs.csv"))
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 18 and set(runs["status"]) == {"ok"}
    code, out, err = main("results", store, "--runs")
    assert code == 0 and "18 runs" in out

    fig = tmp_path / "fig.png"
    code, out, err = main(
        "plot",
        store,
        "--x",
        "links[1].errors.per",
        "--y",
        "flows[0].goodput_bps",
        "--hue",
        "links[1].delay",
        "--logx",
        "--model",
        "pftk",
        "--model-param",
        "rtt=0.25+2*0.05",
        "--model-param",
        "p=x",
        "--model-scale",
        "472*8",
        "--out",
        str(fig),
    )
    assert code == 0, err
    assert fig.read_bytes()[:8] == PNG and fig.stat().st_size > 10_000
    fig2 = tmp_path / "fig2.png"
    code, out, err = main(
        "plot",
        store,
        "--x",
        "links[1].delay",
        "--y",
        "total_timeouts",  # not swept: computed from the stored summaries
        "--where",
        "links[1].errors.per=0.01",
        "--err",
        "std",
        "--out",
        str(fig2),
    )
    assert code == 0, err
    assert fig2.read_bytes()[:8] == PNG

    for args, message in [
        (["plot", store, "--x", "links[1].delay", "--y", "flows[0].goodput_bps"], "--where"),
        (["plot", store, "--x", "links[0].rate", "--y", "run.end_s"], "not a parameter"),
        (["plot", store, "--x", "links[1].delay", "--y", "flows[0].goodput"], "--y flows[0]"),
        (
            ["plot", store, "--x", "links[1].errors.per", "--y", "run.end_s", "--hue"]
            + ["links[1].delay", "--model", "nope"],
            "unknown model",
        ),
        (["plot", store, "--y", "run.end_s"], "--x"),
        (["results", str(tmp_path / "empty")], "not a sweep store"),
        (["sweep", str(ASYM), "--store", store, "--grid", "links[1].delay=lin:1:2"], "three"),
        (["sweep", str(ASYM), "--store", store, "--grid", "links[1].dely=1 s"], "`dely`"),
        (["sweep", str(ASYM), "--grid", "links[1].delay=1 s"], "--store DIR is required"),
    ]:
        if args[0] == "plot":
            args = [*args, "--out", str(tmp_path / "x.png")]
        code, out, err = main(*args)
        assert code == 2, (args, out, err)
        assert "Traceback" not in err and message in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err


def test_failures_in_the_command(main, tmp_path):
    code, out, err = main(
        "sweep",
        str(ASYM),
        "--grid",
        "links[1].rate_back=-5 kb/s",
        "--reps",
        "2",
        "--workers",
        "1",
        "--store",
        str(tmp_path / "s"),
        "--fail-fast",
        "--no-progress",
    )
    assert code == 2, out
    assert "run failed" in err and "links[1].rate_back" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    code, out, err = main(
        "sweep",
        str(ASYM),
        "--grid",
        "links[1].rate_back=-5 kb/s,5 kb/s",
        "--set",
        'flows[0].bytes="50 kB"',
        "--reps",
        "1",
        "--workers",
        "1",
        "--store",
        str(tmp_path / "t"),
    )
    assert code == 0, err
    assert "1 failed" in out and "1 run(s) failed" in err
