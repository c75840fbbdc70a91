"""What every paper reproduction shares: the run context (quick or full, seeds, executor,
output directory, progress), sweeps over named cases, per-point statistics, the targets file
and the verdicts.

A paper module (``spacetp.experiments.papers.NAME``) defines ``run(ctx) -> Outcome``: its
figures (a matplotlib figure and the data behind it, per figure id of targets.toml) and its
measures (the numbers the targets of targets.toml name). This module turns those into
verdicts; ``spacetp.experiments.runner.run_paper`` runs a paper module and has
``spacetp.report`` write them out.
"""

from __future__ import annotations

import math
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spacetp.scenario import ScenarioError
from spacetp.stats import ci95

TARGETS_FILE = Path(__file__).with_name("targets.toml")

PASS, FAIL, NOT_COMPARABLE = "PASS", "FAIL", "NOT COMPARABLE"


# ------------------------------------------------------------------------- targets file


def load_targets_file(path: Path = TARGETS_FILE) -> dict:
    """The whole data file: {"papers": {...}, "figures": [...], "targets": [...]}."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    data.setdefault("papers", {})
    data.setdefault("figures", [])
    data.setdefault("targets", [])
    return data


def paper_entries(name: str, data: dict | None = None) -> tuple[dict, list[dict], list[dict]]:
    """(paper metadata, its figures, its targets) from the data file."""
    data = data or load_targets_file()
    meta = data["papers"][name]
    figures = [f for f in data["figures"] if f["paper"] == name]
    targets = [t for t in data["targets"] if t["paper"] == name]
    return meta, figures, targets


# ---------------------------------------------------------------------- what a paper returns


@dataclass
class Measure:
    """A number (or a string / boolean) a target compares; `value = None` means it could not
    be computed, and `note` then says why (the verdict is NOT COMPARABLE)."""

    value: float | str | bool | None
    note: str = ""


@dataclass
class FigureOut:
    """One figure: the matplotlib figure, the tidy data behind it (written as CSV) and an
    optional note of ours shown under the paper's caption."""

    id: str
    figure: Any
    data: Any  # pandas DataFrame
    note: str = ""


@dataclass
class Outcome:
    figures: list[FigureOut]
    measures: dict[str, Measure]
    assumptions: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------- run context


@dataclass
class Context:
    """How to run a paper: quick or full, seeds per point (None: the paper's default),
    executor and workers for sweeps, output directory, console for progress (None: quiet)."""

    paper: str
    out: Path
    quick: bool = False
    reps: int | None = None
    executor: Any = "local"
    workers: int | None = None
    console: Any = None
    log: list[str] = field(default_factory=list)
    seeds_used: set[int] = field(default_factory=set)

    def choose(self, quick: Any, full: Any) -> Any:
        """The quick or the full variant of a setting."""
        return quick if self.quick else full

    def seeds(self, quick: int, full: int) -> int:
        """Replicates per point: --reps when given, else the paper's quick/full default."""
        n = self.reps if self.reps is not None else self.choose(quick, full)
        self.seeds_used.add(n)
        return n

    @property
    def store(self) -> Path:
        return self.out / "store"

    def say(self, text: str) -> None:
        self.log.append(text)
        if self.console is not None:
            self.console.print(f"[bold]{self.paper}[/bold]: {text}", highlight=False)

    def sweep_cases(
        self,
        what: str,
        base: dict,
        cases: dict[str, dict[str, Any]],
        reps: int,
        metrics: list[str],
        protocols: list[str] | None = None,
    ):
        """Run every case (a {path: value} dict, the same paths in each) x protocol x rep as
        one spacetp sweep (one zipped axis for the cases, one axis for the protocols), kept in
        the store under the output directory. Returns the runs frame with a `case` column
        (the case name) and, with protocols, a `protocol` column."""
        from spacetp.sweep import run_sweep

        names = list(cases)
        paths = tuple(cases[names[0]])
        for n in names:
            if tuple(cases[n]) != paths:
                raise ValueError(f"case {n!r} sets {tuple(cases[n])}, expected {paths}")
        grid: dict[Any, Any] = {paths: [tuple(cases[n][p] for p in paths) for n in names]}
        if protocols:
            grid["flows[0].protocol"] = list(protocols)
        per_case = f" x {len(protocols)} protocols" if protocols else ""
        total = len(names) * (len(protocols) if protocols else 1) * reps
        self.say(f"{what}: {total} runs ({len(names)} cases{per_case} x {reps} seeds)")
        res = run_sweep(
            base,
            grid,
            reps=reps,
            executor=self.executor,
            workers=self.workers,
            store=self.store,
            metrics=metrics,
            console=self.console,
        )
        st = res.stats
        self.log.append(
            f"{what}: {st['computed']} runs computed, {st['cached']} found in the store "
            f"({self.store}), {st['elapsed_s']:.0f} s"
        )
        bad = res.runs[res.runs["status"] != "ok"]
        if len(bad):
            first = bad.iloc[0]
            raise ScenarioError(
                f"{len(bad)} of {len(res.runs)} runs of '{what}' failed; first: {first['error']}"
            )
        runs = res.runs.copy()
        point_case = {}
        for i, point in enumerate(res.plan.points):
            values = tuple(point[p] for p in paths)
            point_case[i] = next(n for n in names if tuple(cases[n][p] for p in paths) == values)
        runs["case"] = runs["point"].map(point_case)
        if protocols:
            runs["protocol"] = runs["flows[0].protocol"]
        return runs


def fresh_store(out: Path) -> None:
    """Forget the runs kept under an output directory (after the simulator changed)."""
    shutil.rmtree(out / "store", ignore_errors=True)


def summarize(runs, by: list[str], value: str):
    """Mean, sample std, count and 95% CI half-width of `value` per group of `by`."""
    g = runs.groupby(by, sort=False)[value]
    out = g.agg(mean="mean", std="std", n="count").reset_index()
    out["ci95"] = ci95(out["std"].to_numpy(dtype=float), out["n"].to_numpy(dtype=float))
    return out


# --------------------------------------------------------------------------------- verdicts


@dataclass
class Verdict:
    target: dict
    value: Any
    verdict: str
    reason: str


def tolerance_text(t: dict) -> str:
    """The check of a target in words: '308 b/s ±1%', '> 3', '= westwood'."""
    unit = f" {t['unit']}" if t.get("unit") else ""
    if "above" in t:
        return f"> {_fmt(t['above'])}{unit}"
    if "below" in t:
        return f"< {_fmt(t['below'])}{unit}"
    if isinstance(t.get("expect"), bool | str):
        return f"= {str(t['expect']).lower()}"
    if "rel_tol" in t:
        return f"{_fmt(t['expect'])}{unit} ± {t['rel_tol'] * 100:g}%"
    if "abs_tol" in t:
        return f"{_fmt(t['expect'])} ± {_fmt(t['abs_tol'])}{unit}"
    raise ValueError(f"target {t['id']}: no check (expect + rel_tol/abs_tol, above or below)")


def _fmt(x: Any) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int | float):
        if x == 0:
            return "0"
        if abs(x) >= 1e5 or abs(x) < 1e-3:
            return f"{x:.3g}"
        return f"{x:.4g}"
    return str(x)


def format_value(value: Any, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    text = _fmt(value)
    return f"{text} {unit}" if unit and not isinstance(value, bool | str) else text


def judge(t: dict, m: Measure | None) -> Verdict:
    """Compare one measure with its target."""
    if m is None:
        raise KeyError(
            f"target {t['paper']}/{t['id']}: the paper module computed no {t['measure']!r}"
        )
    v = m.value
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return Verdict(t, None, NOT_COMPARABLE, m.note or "no value")
    if isinstance(t.get("expect"), bool | str):
        ok = v == t["expect"]
    elif "above" in t:
        ok = float(v) > t["above"]
    elif "below" in t:
        ok = float(v) < t["below"]
    elif "rel_tol" in t:
        ok = abs(float(v) / t["expect"] - 1.0) <= t["rel_tol"] + 1e-12
    elif "abs_tol" in t:
        ok = abs(float(v) - t["expect"]) <= t["abs_tol"] + 1e-12
    else:
        raise ValueError(f"target {t['id']}: no check")
    ok = bool(ok)
    reason = m.note
    if not ok and t.get("explain"):
        reason = f"{reason}. Why it differs: {t['explain']}" if reason else t["explain"]
    return Verdict(t, v, PASS if ok else FAIL, reason)


def judge_all(targets: list[dict], measures: dict[str, Measure]) -> list[Verdict]:
    return [judge(t, measures.get(t["measure"])) for t in targets]


# ------------------------------------------------------------------------------- the driver


@dataclass
class PaperRun:
    name: str
    meta: dict
    figures: list[dict]  # the data file's figure entries, with "files" added
    verdicts: list[Verdict]
    assumptions: list[str]
    info: dict


def verdict_counts(verdicts: list[Verdict]) -> dict[str, int]:
    counts = {PASS: 0, FAIL: 0, NOT_COMPARABLE: 0}
    for v in verdicts:
        counts[v.verdict] += 1
    return counts


def select(s, **where):
    """Rows of the summary matching every column = value (floats compared exactly: the same
    grid values go in and come out)."""
    m = np.ones(len(s), dtype=bool)
    for k, v in where.items():
        m &= s[k].to_numpy() == v
    return s[m]


def geomean(xs) -> float:
    xs = np.asarray(xs, dtype=float)
    return float(np.exp(np.mean(np.log(xs)))) if len(xs) and np.all(xs > 0) else math.nan
