"""The sweep store: reruns compute nothing, failures are kept, limits recorded, writes and
compactions are atomic, and the store stays in its own directory."""

from __future__ import annotations

import json
import math
import sys

import pandas as pd
import pyarrow as pa
import pytest

import spacetp
from spacetp.store import Store, schema
from spacetp.sweep import SweepFailed, load_sweep
from sweep_cases import small

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
