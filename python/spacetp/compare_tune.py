"""`spacetp compare --tune N`: every profile tuned to the link, ranked, beside its fitted and
as-configured selves.

For each profile with a search space (spacetp.tune.SPACES), `tune` searches N trials from
its fitted settings (its study in OUT/tune/PROFILE, resumable like the rest); then each
profile runs the compare's replicates at its best settings, one sweep per profile (their
settings tables differ: a TCP table on a QUIC flow is an error) on the same seeds as the
fitted ranking, read as one sweep (MergedSweep) that the ranking and the page take as they
take a single one. The fitted and the as-configured sweeps of the same replicates give the
two other columns; every column is a mean with its 95% interval over the same seeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

from spacetp.errors import ScenarioError, UserError


@dataclass
class MergedSweep:
    """Sweeps of one grid axis (one profile each) read as one: `runs` and `summary` with
    their points renumbered, `stats` summed, `scenario(row)` from the sweep that ran it."""

    parts: list
    runs: Any
    summary: Any
    stats: dict

    @classmethod
    def of(cls, parts: list) -> MergedSweep:
        import pandas as pd

        runs, summary, offset = [], [], 0
        for p in parts:
            r, s = p.runs.copy(), p.summary.copy()
            r["point"] += offset
            s["point"] += offset
            offset += len(p.summary)
            runs.append(r)
            summary.append(s)
        stats: dict = {}
        for p in parts:
            for k, v in p.stats.items():
                if isinstance(v, int | float):
                    stats[k] = stats.get(k, 0) + v
        return cls(
            parts,
            pd.concat(runs, ignore_index=True),
            pd.concat(summary, ignore_index=True),
            stats,
        )

    def scenario(self, row: int) -> dict:
        for p in self.parts:
            if row < len(p.runs):
                return p.scenario(row)
            row -= len(p.runs)
        raise IndexError(row)


def tuned_sweep(
    sc: dict, names: list[str], paths: list[str], trials: int, tune_reps: int, reps: int,
    out: Path | None, run: dict, console=None,
) -> tuple[MergedSweep, dict[str, dict]]:  # fmt: skip
    """(the sweep of every profile at its tuned settings, `reps` replicates, {profile:
    {"settings": the best (empty: the fitted ones won), "family", "searched"}}): each
    profile tuned by `trials` trials of `tune_reps` seeds. `run`: run_sweep's executor,
    workers, base_seed, metrics and source."""
    from spacetp import fit
    from spacetp.profiles import registry
    from spacetp.sweep import run_sweep
    from spacetp.tune import SPACES, apply_settings, tune

    if not all(f.get("bytes") is not None for f in sc.get("flows") or [{}]):
        raise UserError("--tune: every [[flows]] entry needs bytes (tune minimises completion)")
    reg = registry()
    parts, best = [], {}
    for p in names:
        family = reg.get(p, {}).get("family", "")
        settings: dict = {}
        if family in SPACES:
            if console is not None:
                console.print(f"tuning {p}: {trials} trials of {tune_reps} seeds", highlight=False)
            where = out / "tune" / p if out is not None else mkdtemp(prefix=f"spacetp-tune-{p}-")
            try:
                t = tune(
                    sc, p, trials=trials, reps=tune_reps, out=where,
                    executor=run["executor"], workers=run["workers"], base_seed=run["base_seed"],
                )  # fmt: skip
                settings = t.best
            except (ScenarioError, UserError) as e:
                # The profile cannot run here: its runs fail too and the page lists why.
                best[p] = {"settings": {}, "family": family, "searched": False, "error": str(e)}
        best.setdefault(p, {"settings": settings, "family": family, "searched": family in SPACES})
        mine = apply_settings(fit.with_fit(sc, p), settings)
        parts.append(
            run_sweep(
                mine, {tuple(paths): [(p,) * len(paths)]}, reps=reps,
                executor=run["executor"], workers=run["workers"],
                store=None if out is None else out / "store", metrics=run["metrics"],
                base_seed=run["base_seed"], source=run["source"],
            )
        )  # fmt: skip
    return MergedSweep.of(parts), best


def settings_text(entry: dict) -> str:
    """The tuned settings of a profile as the page and the table show them."""
    if entry.get("error"):
        return f"not tuned: {entry['error']}"
    if not entry["searched"]:
        return f"not tuned (no search space for the {entry['family']} family)"
    if not entry["settings"]:
        return "the fitted ones (no trial beat them)"
    return ", ".join(f"{k} = {v}" for k, v in entry["settings"].items())


def add_columns(table, others: dict[str, Any], role: str, tuned: dict[str, dict]) -> None:
    """Beside each tuned row, the same profile's mean and interval as configured and fitted
    (`others`: {label: their ranked table}), and its tuned settings; in place."""
    for label, t in others.items():
        by = {r["protocol"]: r for _, r in t.iterrows()}
        key = f"{role}_{label.replace(' ', '_')}"  # completion_fitted, completion_fitted_lo...
        for suffix in ("", "_lo", "_hi"):
            table[f"{key}{suffix}"] = [
                by[p][f"{role}{suffix}"] if p in by else float("nan") for p in table["protocol"]
            ]
        # Where that mean is missing, why: its runs did not finish ("did not finish in 3 of
        # 3 runs: ..."), so the cell says so instead of a bare dash.
        table[f"{key}_why"] = [
            str(by[p]["unfinished"] or "") if p in by else "" for p in table["protocol"]
        ]
    table["tuned"] = [settings_text(tuned[p]) for p in table["protocol"]]
