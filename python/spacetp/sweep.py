"""Sweeps: a scenario run over a grid of parameter values times replicates, in parallel, with
every run kept in a results store so that a sweep interrupted at any moment resumes where it
stopped.

    import spacetp
    res = spacetp.sweep("examples/asymmetry.toml",
                        grid={"links[1].delay": "50 ms,100 ms,200 ms",
                              "links[1].errors.per": "log:1e-4:1e-2:3"},
                        reps=10, store="results/asym")
    res.runs        # one row per run: point, parameters, rep, seed, key, status, error, metrics
    res.summary     # one row per grid point: METRIC:mean, :std, :count, :ci95

How it works:
- the grid (spacetp.grid) gives the points; each point and replicate becomes a resolved
  scenario: the base scenario with the point's values set, and a seed derived from (base seed,
  point, replicate) by hashing, so a row re-runs alone: `spacetp.run(res.scenario(i),
  seed=res.runs.seed[i])` gives the same numbers.
- a run's key is the sha256 of its resolved scenario (seed included) and the spacetp version.
  The store (spacetp.store) keeps one record per key: a sweep runs only the keys it lacks, so
  re-running is free, extending the grid runs only the new points, and an upgrade of spacetp
  recomputes everything.
- runs execute in chunks on a local process pool or a Dask cluster (spacetp.executors).
- metrics (spacetp.metrics) are computed from the stored summaries, so they can be changed
  after the fact; statistics per point (spacetp.stats) use Student's t.

Note: `spacetp.sweep` is this function once the package is imported; reach the module's other
names with `from spacetp.sweep import load_sweep, SweepResult`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spacetp import grid as grids
from spacetp import metrics as metric_defs
from spacetp.grid import Axis, canonical
from spacetp.scenario import ScenarioError, copy_of, load, set_value
from spacetp.store import COMPACT_ABOVE, Store
from spacetp.sweep_frames import frames

FLUSH_EVERY_S = 0.5
FLUSH_ROWS = 5000
SEED_BITS = 63  # seeds fit an int64 column


class SweepFailed(ScenarioError):
    """fail_fast: a run failed. `.result` holds what the sweep had when it stopped."""

    def __init__(self, message: str, result: SweepResult | None = None):
        super().__init__(message)
        self.result = result


def _version(fallback: str | None = None) -> str:
    """The compiled core's version (part of every run key). When the core cannot be imported,
    `fallback` if given (the reports can be written without it), else the error."""
    try:
        from spacetp import _core

        return _core.__version__
    except Exception:
        if fallback is None:
            raise
        return fallback


def derive_seed(base_seed: int, point: dict[str, Any], rep: int) -> int:
    """The seed of replicate `rep` at a grid point: a hash of (base seed, the point's values by
    path, rep). Adding values or axes leaves the seeds of the other points as they were only
    if their values are unchanged: a new axis changes every point."""
    return _seed(base_seed, canonical(sorted(point.items())), rep)


def _seed(base_seed: int, point_text: str, rep: int) -> int:
    # the text of canonical([base_seed, sorted(point.items()), rep]), the point's part made once
    import hashlib  # here: loading OpenSSL costs 3 ms of every `spacetp` start

    text = f"[{base_seed},{point_text},{rep}]"
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def run_key(scenario: dict, version: str) -> str:
    """Content hash of a run: its resolved scenario (seed included) and the spacetp version."""
    return _key(canonical(scenario), version)


def _key(scenario_text: str, version: str) -> str:
    # the text of canonical({"scenario": ..., "version": ...}) from the scenario's own text
    import hashlib

    text = f'{{"scenario":{scenario_text},"version":{canonical(version)}}}'
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class PlannedRun:
    point: int
    rep: int
    seed: int
    key: str
    scenario: str  # the resolved scenario, JSON


@dataclass
class Plan:
    """A sweep fully resolved: every run with its seed, key and scenario."""

    base: dict
    axes: list[Axis]
    reps: int
    base_seed: int
    metrics: list[str]
    version: str
    source: str | None = None
    points: list[dict] = field(default_factory=list)
    runs: list[PlannedRun] = field(default_factory=list)

    @property
    def params(self) -> list[str]:
        return [p for ax in self.axes for p in ax.paths]

    def scenario(self, point: int, seed: int) -> dict:
        sc = copy_of(self.base)
        sc.pop("trace", None)  # a sweep keeps summaries only
        for path, value in self.points[point].items():
            set_value(sc, path, value)
        sc["seed"] = seed
        return sc

    def resolve(self) -> Plan:
        self.points = grids.points(self.axes)
        self.runs = []
        for i, point in enumerate(self.points):
            at_point = self.scenario(i, 0)  # the replicates differ by their seed only
            point_text = canonical(sorted(point.items()))
            for rep in range(self.reps):
                seed = _seed(self.base_seed, point_text, rep)
                text = canonical({**at_point, "seed": seed})
                self.runs.append(PlannedRun(i, rep, seed, _key(text, self.version), text))
        return self

    def definition(self) -> dict:
        return {
            "source": self.source,
            "scenario": self.base,
            "axes": [ax.to_json() for ax in self.axes],
            "reps": self.reps,
            "base_seed": self.base_seed,
            "metrics": self.metrics,
            "version": self.version,
            "runs": len(self.runs),
        }

    @classmethod
    def from_definition(cls, d: dict, metrics: list[str] | None = None) -> Plan:
        return cls(
            base=d["scenario"],
            axes=[Axis.from_json(a) for a in d["axes"]],
            reps=d["reps"],
            base_seed=d["base_seed"],
            metrics=metrics or d["metrics"],
            version=d["version"],
            source=d.get("source"),
        ).resolve()


@dataclass
class SweepResult:
    """`runs`: one row per run (plan order). `summary`: one row per grid point. `params`: the
    varied paths; `metrics`: the metric columns. `stats`: `planned`, `ok`, `failed` and
    `missing` runs of the plan; `computed` now and `cached` (found in the store); `failed_now`;
    `elapsed_s`; `sim_s`, the core's own time of the runs computed now."""

    runs: Any
    summary: Any
    params: list[str]
    metrics: list[str]
    stats: dict
    store: Path | None
    plan: Plan = field(repr=False)

    def scenario(self, row: int) -> dict:
        """The resolved scenario (seed included) of row `row` of `runs` (by position)."""
        r = self.plan.runs[row]
        return self.plan.scenario(r.point, r.seed)

    def errors(self):
        """The failed runs: parameters, rep, seed, key and error."""
        bad = self.runs[self.runs["status"] == "error"]
        return bad[[*self.params, "rep", "seed", "key", "error"]]


class _Bar:
    """A rich progress bar (done/total, failures, ETA), or nothing without a console."""

    def __init__(self, console, total: int, cached: int):
        self.progress = None
        if console is None or total == 0:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        what = f"sweep ({cached} already in the store)" if cached else "sweep"
        self.task = self.progress.add_task(what, total=total, failed=0)
        self.failed = 0

    def __enter__(self):
        if self.progress is not None:
            self.progress.start()
        return self

    def advance(self, done: int, failed: int) -> None:
        if self.progress is not None:
            self.failed += failed
            self.progress.update(self.task, advance=done, failed=self.failed)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()


def _progress_console(progress: bool):
    """A stderr console when a progress bar can be shown (a terminal or a notebook)."""
    if not progress:
        return None
    from rich.console import Console

    c = Console(stderr=True)
    return c if (c.is_terminal or c.is_jupyter) else None


def sweep(
    scenario: dict | str | Path,
    grid: dict | None = None,
    reps: int = 10,
    executor: Any = "local",
    workers: int | None = None,
    store: str | Path | None = None,
    metrics: list[str] | None = None,
    fail_fast: bool = False,
    progress: bool = True,
    base_seed: int | None = None,
    *,
    retry_failed: bool = False,
) -> SweepResult:
    """Run `scenario` at every point of `grid`, `reps` times each, and return the runs and
    per-point statistics.

    grid: {path: values}, values a list or a spec string ("50 ms,100 ms", "log:1e-9:1e-5:9",
    "lin:50 ms:300 ms:6"); {(path_a, path_b): [(a1, b1), ...]} varies paths together. The
    points are the cartesian product of the entries. No grid: one point, the scenario itself.
    executor: "local" (process pool), "dask" (a local Dask cluster), "dask://HOST:PORT", or a
    dask.distributed Client. workers: default os.cpu_count().
    store: a directory keeping every run (resumable); None keeps nothing.
    metrics: summary paths or aggregates (spacetp.metrics); default: spacetp.metrics.defaults.
    fail_fast: raise SweepFailed at the first failed run (else failures are recorded and the
    sweep goes on). retry_failed: run again the runs the store records as failed.
    base_seed: default the scenario's `seed` (1 without one).
    """
    return run_sweep(
        scenario,
        grid,
        reps=reps,
        executor=executor,
        workers=workers,
        store=store,
        metrics=metrics,
        fail_fast=fail_fast,
        base_seed=base_seed,
        retry_failed=retry_failed,
        console=_progress_console(progress),
    )


def plan_sweep(
    scenario: dict | str | Path,
    grid_spec: dict | None,
    reps: int,
    metrics: list[str] | None = None,
    base_seed: int | None = None,
    zipped: list[str] | None = None,
    source: str | None = None,
) -> Plan:
    """Check every argument and resolve every run (nothing runs). `source`: the scenario's
    file name, kept in the store (default: `scenario` itself when it is a path)."""
    if source is None and isinstance(scenario, str | Path):
        source = str(scenario)
    base = load(scenario) if isinstance(scenario, str | Path) else copy_of(scenario)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise ScenarioError(f"--reps {reps}: must be a whole number >= 1")
    if base_seed is None:
        base_seed = base.get("seed", 1)
    if not isinstance(base_seed, int) or isinstance(base_seed, bool) or base_seed < 0:
        raise ScenarioError(f"--seed {base_seed}: must be a whole number >= 0")
    chosen = list(metrics) if metrics else metric_defs.defaults(base)
    if not chosen:
        raise ScenarioError("no metric: the scenario has no [[flows]]; give --metric")
    for m in chosen:
        metric_defs.check(m)
    if len(set(chosen)) != len(chosen):
        raise ScenarioError("--metric: a metric is listed twice")
    axes = grids.make_axes(grid_spec, zipped)
    grids.check_axes(axes, base)
    return Plan(base, axes, reps, base_seed, chosen, _version(), source).resolve()


def run_sweep(
    scenario: dict | str | Path,
    grid_spec: dict | None = None,
    *,
    reps: int = 10,
    executor: Any = "local",
    workers: int | None = None,
    store: str | Path | None = None,
    metrics: list[str] | None = None,
    fail_fast: bool = False,
    base_seed: int | None = None,
    retry_failed: bool = False,
    zipped: list[str] | None = None,
    source: str | None = None,
    console=None,
) -> SweepResult:
    """`sweep` with the CLI's extras: `zipped` (--zip specs), `source` (the scenario file of
    a scenario given as a dict) and the console of the progress bar (None: no bar)."""
    t0 = time.perf_counter()
    from spacetp import executors  # (process pools and Dask load when a sweep runs)

    executors.check(executor)
    workers = executors.default_workers() if workers is None else workers
    if not isinstance(workers, int) or workers < 1:
        raise ScenarioError(f"--workers {workers}: must be a whole number >= 1")
    plan = plan_sweep(scenario, grid_spec, reps, metrics, base_seed, zipped, source)
    st = Store.create(store)
    st.save_definition(plan.definition())

    done = st.done_keys(retry_failed)
    todo: dict[str, PlannedRun] = {}
    for r in plan.runs:
        if r.key not in done and r.key not in todo:
            todo[r.key] = r
    computed, failed, sim_s, first_error = _execute(
        plan, list(todo.values()), executor, workers, st, fail_fast, console, len(done)
    )
    if st.part_count() > COMPACT_ABOVE:
        st.compact()
    runs, summary, counts = frames(plan, st)
    counts.update(
        computed=computed,
        cached=len({r.key for r in plan.runs} - set(todo)),
        failed_now=failed,
        elapsed_s=time.perf_counter() - t0,
        sim_s=sim_s,
        workers=workers,
        executor=executors.describe(executor),
    )
    res = SweepResult(runs, summary, plan.params, plan.metrics, counts, st.path, plan)
    if first_error is not None:
        raise SweepFailed(first_error, res)
    return res


def _execute(plan, todo, executor, workers, st, fail_fast, console, cached):
    """Run `todo`, writing records as they come. Returns (computed, failed, core seconds,
    the first error when fail_fast stopped the sweep)."""
    from spacetp import executors

    by_key = {r.key: r for r in todo}
    work = [[(r.key, r.scenario) for r in c] for c in executors.chunks(todo, workers)]
    buffer: list[dict] = []
    last_flush = time.monotonic()
    computed = failed = 0
    sim_s = 0.0
    first_error = None

    def flush() -> None:
        nonlocal last_flush
        if buffer:
            st.write(buffer)
            buffer.clear()
        last_flush = time.monotonic()

    it = executors.iterate(executor, work, workers)
    try:
        with _Bar(console, len(todo), cached) as bar:
            for records in it:
                bad = 0
                for rec in records:
                    r = by_key[rec["key"]]
                    rec.update(seed=r.seed, version=plan.version, scenario=r.scenario)
                    sim_s += rec["wall_s"]
                    if rec["status"] != "ok":
                        bad += 1
                        if fail_fast and first_error is None:
                            p = plan.points[r.point]
                            where = ", ".join(f"{k}={_show(v)}" for k, v in p.items())
                            first_error = (
                                f"run failed ({where or 'the scenario'}, rep {r.rep}, "
                                f"seed {r.seed}): {rec['error']}"
                            )
                buffer.extend(records)
                computed += len(records)
                failed += bad
                bar.advance(len(records), bad)
                if first_error is not None:
                    break
                if time.monotonic() - last_flush >= FLUSH_EVERY_S or len(buffer) >= FLUSH_ROWS:
                    flush()
    finally:
        it.close()
        flush()
    return computed, failed, sim_s, first_error


def _show(value: Any) -> str:
    return value if isinstance(value, str) else canonical(value)


def load_sweep(store: str | Path, metrics: list[str] | None = None) -> SweepResult:
    """The last sweep run into a store, as `sweep` returned it (nothing runs). `metrics`:
    other metrics than the sweep's, computed from the stored summaries."""
    st = Store.open(store)
    d = st.load_definition()
    if metrics:
        for m in metrics:
            metric_defs.check(m)
    plan = Plan.from_definition(d, list(metrics) if metrics else None)
    runs, summary, counts = frames(plan, st)
    counts.update(computed=0, cached=counts["ok"] + counts["failed"], elapsed_s=math.nan)
    return SweepResult(runs, summary, plan.params, plan.metrics, counts, st.path, plan)
