"""Sweeps: grid syntax, seeds, the results store (resume, failures, crash safety), statistics,
local and Dask executors giving the same numbers, and the sweep / results / plot commands."""

from __future__ import annotations

import hashlib
import json
import math
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.stats

import spacetp
from conftest import EXAMPLES
from spacetp import _core
from spacetp.grid import make_axes, parse_spec, parse_values, points
from spacetp.stats import summarize
from spacetp.store import Store, schema
from spacetp.sweep import SweepFailed, derive_seed, load_sweep, plan_sweep

ASYM = EXAMPLES / "asymmetry.toml"
PNG = b"\x89PNG\r\n\x1a\n"


def small() -> dict:
    """The asymmetry example with a short transfer and packet losses (seeds matter)."""
    sc = spacetp.load(ASYM)
    spacetp.set_value(sc, "flows[0].bytes", "200 kB")
    spacetp.set_value(sc, "links[1].errors", {"per": 0.005})
    return sc


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


# ----------------------------------------------------------------- the store


def test_rerun_computes_nothing_and_extension_only_the_new(tmp_path):
    store = tmp_path / "s"
    grid = {"links[1].delay": "50 ms,100 ms"}
    first = spacetp.sweep(small(), grid=grid, reps=3, workers=2, store=store, progress=False)
    assert first.stats["computed"] == 6 and first.stats["cached"] == 0
    again = spacetp.sweep(small(), grid=grid, reps=3, workers=2, store=store, progress=False)
    assert again.stats["computed"] == 0 and again.stats["cached"] == 6
    pd.testing.assert_frame_equal(first.runs, again.runs, check_exact=True)
    pd.testing.assert_frame_equal(first.summary, again.summary, check_exact=True)
    wider = {"links[1].delay": "50 ms,100 ms,200 ms"}
    ext = spacetp.sweep(small(), grid=wider, reps=3, workers=2, store=store, progress=False)
    assert ext.stats["computed"] == 3 and ext.stats["cached"] == 6
    pd.testing.assert_frame_equal(
        ext.runs.iloc[:6].reset_index(drop=True), first.runs, check_exact=True
    )
    more = spacetp.sweep(small(), grid=wider, reps=4, workers=2, store=store, progress=False)
    assert more.stats["computed"] == 3
    raw = Store.open(store).read(dedupe=False)
    assert len(raw) == 12 and raw["key"].is_unique, "every run stored once"
    # results of the store = what the sweep returned
    loaded = load_sweep(store)
    pd.testing.assert_frame_equal(loaded.runs, more.runs, check_exact=True)
    pd.testing.assert_frame_equal(loaded.summary, more.summary, check_exact=True)
    # other metrics come from the stored summaries, without running
    other = load_sweep(store, ["run.end_s", "total_goodput_bps"])
    assert other.metrics == ["run.end_s", "total_goodput_bps"]
    assert (other.runs["total_goodput_bps"] == more.runs["flows[0].goodput_bps"]).all()


def test_failed_runs_are_recorded_and_the_sweep_goes_on(tmp_path):
    store = tmp_path / "s"
    grid = {"links[1].rate_back": ["5 kb/s", "-5 kb/s", "15 kb/s"]}
    res = spacetp.sweep(small(), grid=grid, reps=2, workers=2, store=store, progress=False)
    assert list(res.summary["ok"]) == [2, 0, 2] and list(res.summary["failed"]) == [0, 2, 0]
    bad = res.errors()
    assert len(bad) == 2 and all("links[1].rate_back" in e for e in bad["error"])
    assert res.runs.loc[res.runs.status == "error", "flows[0].goodput_bps"].isna().all()
    assert math.isnan(res.summary.loc[1, "flows[0].goodput_bps:mean"])
    rec = Store.open(store).read()
    assert sorted(rec["status"]) == ["error", "error", "ok", "ok", "ok", "ok"]
    # failures are results too: not re-run unless asked
    again = spacetp.sweep(small(), grid=grid, reps=2, workers=2, store=store, progress=False)
    assert again.stats["computed"] == 0
    retry = spacetp.sweep(
        small(), grid=grid, reps=2, workers=2, store=store, progress=False, retry_failed=True
    )
    assert retry.stats["computed"] == 2 and len(Store.open(store).read()) == 6

    with pytest.raises(SweepFailed, match="links\\[1\\].rate_back") as e:
        spacetp.sweep(
            small(),
            grid={"links[1].rate_back": ["-1 kb/s", "-2 kb/s", "-3 kb/s", "-4 kb/s"]},
            reps=20,
            workers=1,
            store=tmp_path / "ff",
            fail_fast=True,
            progress=False,
        )
    stopped = e.value.result
    assert stopped.stats["computed"] < 80, "fail_fast stops early"
    assert stopped.stats["missing"] > 0


OUTAGE = {"links[1].outages": [[], [["1 s", "2000 s"]]]}  # the second kills newreno


def outage_sweep(store):
    sc = small()
    spacetp.set_value(sc, "stop", "1000 s")
    spacetp.set_value(sc, "flows[0].tcp", {"max_retries": 3})
    return spacetp.sweep(sc, grid=OUTAGE, reps=2, workers=2, store=store, progress=False)


def test_each_run_and_point_says_what_limited_it_and_why_it_failed(tmp_path):
    res = outage_sweep(tmp_path / "s")
    runs, summary = res.runs, res.summary
    for col in ("limit", "limit_share", "liftable", "liftable_share", "failure"):
        assert f"flows[0].{col}" in runs.columns
    up, down = runs[runs["point"] == 0], runs[runs["point"] == 1]
    assert up["flows[0].failure"].isna().all()
    assert (down["flows[0].failure"] == "aborted: data timed out (max_retries)").all()
    assert (down["flows[0].limit"] == "link_down").all() and (
        down["flows[0].limit_share"] > 0.9
    ).all()
    # the run's columns are its summary's first state and its largest liftable one
    first = spacetp.run(res.scenario(0), seed=int(runs.seed[0])).flows[0]
    assert runs.loc[0, "flows[0].limit"] == first["limits"][0]["state"]
    assert runs.loc[0, "flows[0].limit_share"] == first["limits"][0]["share"]
    lift = next(x for x in first["limits"] if x["state"] != "link" and x["setting"])
    assert runs.loc[0, "flows[0].liftable"] == lift["state"]
    # per point: the largest mean share, its sentence, the failed runs with the reason
    row = summary.set_index("point").loc[1]
    assert row["flows[0].limit"] == "link_down"
    assert row["flows[0].limit_share"] == pytest.approx(down["flows[0].limit_share"].mean())
    assert row["flows[0].limit_text"].startswith("limited by the link being down for ")
    assert row["flows[0].failed_runs"] == 2
    assert row["flows[0].failure"] == "aborted: data timed out (max_retries)"
    assert summary.set_index("point").loc[0, "flows[0].failed_runs"] == 0
    # a page and `spacetp results` say it
    from spacetp.cli_sweep import print_summary
    from spacetp.sweep_report import write

    page = write(res, tmp_path / "page.html").read_text()
    assert "did not finish in 2 of 2 runs: aborted: data timed out (max_retries)" in page
    assert "limited by the link being down for" in page
    from spacetp.limits import point_label

    assert point_label(row.to_dict() | {"point": 1}).startswith(
        "failed in 2: aborted: data timed out (max_retries); link down "
    )
    print_summary(res)


def test_a_store_written_before_the_limit_analysis_still_loads(tmp_path):
    new = outage_sweep(tmp_path / "s")
    # the same runs as an older spacetp stored them: summaries without `limits` or `failure`
    old = Store.create(tmp_path / "old")
    old.save_definition(Store.open(tmp_path / "s").load_definition())
    rows = Store.open(tmp_path / "s").read().to_dict("records")
    for r in rows:
        summary = json.loads(r["summary"])
        for f in summary["flows"]:
            f.pop("limits", None)
            f.pop("failure", None)
        r["summary"] = json.dumps(summary)
        r["error"] = r["error"] if isinstance(r["error"], str) else None
    old.write(rows)
    res = load_sweep(tmp_path / "old")
    metrics = [c for c in new.runs.columns if not c.startswith("flows[0].l")]
    pd.testing.assert_frame_equal(res.runs[metrics], new.runs[metrics], check_exact=True)
    assert res.runs["flows[0].limit"].isna().all() and res.summary["flows[0].limit"].isna().all()
    # the failure is read from the ends' states when the summary has no `failure`
    assert list(res.runs["flows[0].failure"]) == list(new.runs["flows[0].failure"])
    assert list(res.summary["flows[0].failed_runs"]) == [0, 2]


def by_key(df: pd.DataFrame) -> pd.DataFrame:
    """Store records in a comparable order (a store's row order carries no meaning)."""
    return df.sort_values("key").reset_index(drop=True)


def test_interrupted_writes_and_compactions_never_show_half_or_double_rows(tmp_path, monkeypatch):
    store = tmp_path / "s"
    grid = {"links[1].delay": "lin:50 ms:100 ms:3"}
    res = spacetp.sweep(small(), grid=grid, reps=2, workers=2, store=store, progress=False)
    st = Store.open(store)
    runs_dir = store / "runs"
    rows = st.read()
    # a crash while writing leaves a temporary file: never read
    (runs_dir / ".part-0-0-0.parquet.tmp").write_bytes(b"PAR1 half a file")
    half = next(runs_dir.glob("part-*.parquet")).read_bytes()
    (runs_dir / ".part-1-1-1.parquet.tmp").write_bytes(half[: len(half) // 2])
    pd.testing.assert_frame_equal(by_key(st.read()), by_key(rows))

    # a crash in a compaction after writing the merged part, before deleting the old ones
    st.write(pa.Table.from_pandas(rows.iloc[:2], schema(), preserve_index=False))
    assert len(st.read(dedupe=False)) == 8  # two parts: the same records twice until merged
    real_unlink = type(runs_dir).unlink
    calls = []

    def crash_after_one(path, missing_ok=False):
        calls.append(path)
        if len(calls) > 1:
            raise KeyboardInterrupt("killed")
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(type(runs_dir), "unlink", crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        st.compact()
    monkeypatch.undo()
    assert len(list(runs_dir.glob("part-*.parquet"))) == 2  # merged part + one not yet deleted
    after = st.read(dedupe=False)
    assert len(after) == 6 and after["key"].is_unique
    pd.testing.assert_frame_equal(by_key(st.read()), by_key(rows))
    st.compact()  # finishes the job
    assert len(list(runs_dir.glob("part-*.parquet"))) == 1
    pd.testing.assert_frame_equal(by_key(st.read()), by_key(rows))
    pd.testing.assert_frame_equal(load_sweep(store).runs, res.runs, check_exact=True)


def test_parts_are_merged_when_they_pile_up(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules["spacetp.sweep"], "COMPACT_ABOVE", 2)
    store = tmp_path / "s"
    for n in (1, 2, 3):
        values = ",".join(f"{10 * (i + 1)} kB" for i in range(n))
        res = spacetp.sweep(
            small(), grid={"flows[0].bytes": values}, reps=2, workers=1, store=store, progress=False
        )
        assert res.stats["computed"] == 2
    assert len(list((store / "runs").glob("part-*.parquet"))) == 1  # 3 parts merged into one
    raw = Store.open(store).read(dedupe=False)
    assert len(raw) == 6 and raw["key"].is_unique
    pd.testing.assert_frame_equal(load_sweep(store).runs, res.runs, check_exact=True)


def test_store_refuses_other_directories(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(spacetp.ScenarioError, match="not a spacetp store"):
        spacetp.sweep(small(), reps=1, store=tmp_path, progress=False)
    with pytest.raises(spacetp.ScenarioError, match="not a sweep store"):
        load_sweep(tmp_path)


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
