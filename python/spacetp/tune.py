"""`spacetp tune SCENARIO --protocol P`: the best settings of one protocol on this link.

Optuna's TPE sampler (seeded) searches P's key settings, a documented space per protocol
family (SPACES: its ranges follow the path's bandwidth-delay product and rate), on top of
the settings fitted to the link (`fit = true`: what the search does not set stays fitted).
Each trial runs the scenario on the same K seeds (common random numbers) through the sweep
machinery, locally or on Dask, every run kept in DIR/store; the study lives in DIR/tune.db,
so a tune interrupted at any moment (SIGKILL included) resumes where it stopped, and a
finished trial is neither asked again nor re-run. The objective is the mean completion time
of the first flow over the K seeds; a run that does not complete counts as the run's end
twice over.

The result: the best trial (or the fitted settings, when no trial beat them) with the 95%
interval of its completion time (a bootstrap of its K runs, as spacetp compare), the gain
over the fitted and the as-configured settings, the sensitivity of each setting (Optuna's
PED-ANOVA importance, and a figure of the completion time against each), and DIR/tuned.toml,
the scenario with the best settings written into its flows.

Why Optuna: a maintained library (BSD/MIT) with a sampler that handles log-scaled integer
and real ranges, persistent studies in SQLite (the resume), and parameter importances; it
runs without a server and downloads nothing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spacetp.errors import UserError
from spacetp.scenario import copy_of, load, set_value


@dataclass(frozen=True)
class Param:
    """One setting of the search: its path under every flow, its kind and its range as
    functions of the path's facts (bdp bytes, rate b/s) and the transfer's size."""

    setting: str
    kind: str  # "bytes", "int", "rate", "duration", "real": log scale for all
    low: Any
    high: Any
    # Its value at the "pipe" point, the second trial: everything sized to fill the pipe
    # from the first round trip, paced at the link's rate (None: the fitted value).
    pipe: Any = None

    def bounds(self, facts: dict) -> tuple[float, float]:
        lo = self.low(facts) if callable(self.low) else self.low
        hi = self.high(facts) if callable(self.high) else self.high
        return float(lo), float(hi)

    def value(self, x: float) -> Any:
        """The scenario value of a sampled number."""
        if self.kind == "bytes":
            return f"{int(round(x))} B"
        if self.kind == "int":
            return int(round(x))
        if self.kind == "rate":
            return f"{x:.0f} b/s"
        if self.kind == "duration":
            return f"{x * 1e3:.3f} ms"
        return float(f"{x:.3g}")


def _bdp(k: float):
    return lambda f: max(k * f["bdp"], 16_000)


def _rate(k: float):
    return lambda f: max(k * f["rate"], 1_000)


def _segments(k: float):
    """k BDPs in full segments (at least 100, RFC 6928's 10 times ten)."""
    return lambda f: max(100, int(k * f["bdp"] / 1448))


BUFFERS = (
    Param("receive_buffer", "bytes", 16_000, _bdp(8), _bdp(2)),
    Param("send_buffer", "bytes", 16_000, _bdp(8), _bdp(2)),
)
# SCPS-TP: what the RI gateway sets per interface (aif_buf, aif_rbuf, aif_rate, aif_ack_delay)
# and the initial window up to the pipe: rate control paces it, so a large one is no burst
# (on the Ka link Vegas's slow start from 10 segments costs 9 round trips, 5 s of 15).
SCPS = (
    *BUFFERS,
    Param("tcp.scps.rate", "rate", _rate(0.2), _rate(1.0)),
    Param("tcp.scps.ack_period", "duration", 0.005, 1.0),
    Param("tcp.initial_window", "int", 1, _segments(2), _segments(0.7)),
)
# Linux: the socket buffers' limits (tcp_rmem/tcp_wmem) and what `ip route` sets per route,
# the initial window (initcwnd) and the receiver's initial window (initrwnd), up to the pipe,
# and the pacing cap an application sets per socket.
LINUX = (
    *BUFFERS,
    Param("tcp.initial_window", "int", 4, _segments(2), _segments(0.7)),
    Param("tcp.receive_buffer_initial", "bytes", 64_000, _bdp(4), _bdp(2)),
    # SO_MAX_PACING_RATE (or fq's maxrate): a cap an application sets per socket.
    Param("tcp.max_pacing_rate", "rate", _rate(0.5), _rate(2.0), _rate(0.975)),
)
# The search space of each family: the settings a deployment chooses per link.
SPACES: dict[str, tuple[Param, ...]] = {
    "textbook": (*BUFFERS, Param("tcp.initial_window", "int", 1, 64)),
    "linux": LINUX,
    "draft": LINUX,
    "windows": BUFFERS,
    "scps": SCPS,
    "scps-ri": SCPS,
    "quic": (
        Param("quic.stream_receive_window", "bytes", 64_000, _bdp(8), _bdp(2)),
        Param("quic.send_window", "bytes", 64_000, _bdp(8), _bdp(2)),
        Param("quic.initial_window", "bytes", 2_400, _bdp(2), _bdp(0.7)),
        # quiche's max_pacing_rate (SO_MAX_PACING_RATE for QUIC): quinn has no cap of its own.
        Param("quic.max_pacing_rate", "rate", _rate(0.5), _rate(2.0), _rate(0.975)),
    ),
    "ltp": (
        Param("ltp.max_export_sessions", "int", 1, lambda f: max(8, 4 * f["sessions"])),
        Param("ltp.block_size", "bytes", 16_000, 4_000_000),
        Param("ltp.max_ber", "real", 1e-7, 1e-3),
    ),
    "dtn": (Param("bp.bundle_size", "bytes", 16_000, lambda f: max(32_000, f["size"])),),
}


@dataclass
class Tuned:
    """What `tune` found: per settings label ("as configured", "fitted", "tuned") the mean
    completion time over the K seeds and its 95% interval, the best settings, the
    importance of each setting, the trials, and the files written."""

    protocol: str
    family: str
    trials: int
    reps: int
    results: dict[str, dict]
    best: dict[str, Any]
    importance: dict[str, float]
    history: list[dict]
    files: dict[str, str] = field(default_factory=dict)
    resumed: int = 0


def parse_params(specs: list[str] | None, family: str) -> dict[str, tuple[float, float]]:
    """`--param SETTING=LOW:HIGH` overrides: a setting of the family's space, a non-empty
    range. UserError naming the setting otherwise."""
    from spacetp import units

    known = {p.setting: p for p in SPACES.get(family, ())}
    out = {}
    for s in specs or []:
        name, _, rng = s.partition("=")
        name = name.strip()
        if name not in known:
            raise UserError(
                f"--param {name}: not a setting the {family} search space has; it has "
                f"{', '.join(known) or 'none'}"
            )
        lo_s, _, hi_s = rng.partition(":")
        try:
            lo, hi = (units.to_si(x.strip())[0] for x in (lo_s, hi_s))
        except (TypeError, ValueError, IndexError):
            raise UserError(f"--param {s}: give LOW:HIGH, e.g. {name}=1 MB:64 MB") from None
        if not 0 < lo < hi:
            raise UserError(
                f"--param {name}: the range {lo_s}:{hi_s} is empty (need 0 < LOW < HIGH)"
            )
        out[name] = (lo, hi)
    return out


def _facts(sc: dict, protocol: str) -> dict:
    """The numbers the ranges follow: the fitted path's BDP and rate, the sessions LTP's
    rule asks for, the first flow's size."""
    from spacetp import fit, units

    rows = fit.fitted(sc, protocol)
    if rows[0]["error"]:
        raise UserError(f"--protocol {protocol}: {rows[0]['error']}")
    path = rows[0]["path"] or {}
    sessions = next(
        (int(x["value"]) for x in rows[0]["flows"][0]["fitted"]
         if x["setting"] == "ltp.max_export_sessions"),
        10,
    )  # fmt: skip
    size = (sc.get("flows") or [{}])[0].get("bytes", 1_000_000)
    q = units.to_si(size) if isinstance(size, str) else (float(size), None)
    return {"bdp": path.get("bdp_bytes", 0), "rate": path.get("rate_bps", 0.0),
            "sessions": sessions, "size": q[0] if q else 1_000_000}  # fmt: skip


def apply_settings(sc: dict, settings: dict[str, Any]) -> dict:
    """A copy of `sc` with `settings` ({path under a flow: value}) set on every flow."""
    out = copy_of(sc)
    for i in range(len(out.get("flows") or [])):
        for k, v in settings.items():
            set_value(out, f"flows[{i}].{k}", v)
    return out


def _evaluate(
    sc: dict, reps: int, store: Path, executor, workers, base_seed: int | None = None
) -> list[float]:
    """The first flow's completion time in each of the K seeds: infinite for a run whose
    flow did not complete (a transfer that aborts early must never look fast: twice its end
    once ranked quinn's "too many gaps" failure at 3.6 s above every complete run), NaN for
    a run that failed (its settings refused)."""
    from spacetp.sweep import run_sweep

    res = run_sweep(
        sc, None, reps=reps, executor=executor, workers=workers, store=store,
        metrics=["flows[0].completion_s", "flows[0].complete", "run.end_s"], base_seed=base_seed,
    )  # fmt: skip
    out = []
    for _, r in res.runs.iterrows():
        if r["status"] != "ok":
            out.append(math.nan)
        elif r["flows[0].complete"] == 1.0:
            out.append(float(r["flows[0].completion_s"]))
        else:
            out.append(math.inf)
    return out


def _stats(times: list[float]) -> dict:
    from spacetp.stats import bootstrap_ci

    ok = [t for t in times if t == t]
    done = [t for t in ok if math.isfinite(t)]
    if not done or len(done) < len(ok):  # a run that never completes: no mean to rank
        return {"mean_s": math.inf, "ci95_low_s": math.inf, "ci95_high_s": math.inf,
                "runs": len(ok), "unfinished": len(ok) - len(done)}  # fmt: skip
    lo, hi = bootstrap_ci(done)
    return {"mean_s": sum(done) / len(done), "ci95_low_s": lo, "ci95_high_s": hi,
            "runs": len(done), "unfinished": 0}  # fmt: skip


def tune(
    scenario: dict | str | Path,
    protocol: str,
    trials: int = 30,
    reps: int = 3,
    out: str | Path | None = None,
    executor: Any = "local",
    workers: int | None = None,
    params: list[str] | None = None,
    seed: int = 0,
    console=None,
    base_seed: int | None = None,
) -> Tuned:
    """Search `protocol`'s settings on `scenario` (see the module): the result, with the
    files written into `out` (default results/tune-PROTOCOL). `seed` seeds the sampler;
    `base_seed` the runs' seeds (default: the scenario's, as a sweep)."""
    import optuna

    from spacetp import fit
    from spacetp.profiles import registry

    sc = load(scenario) if isinstance(scenario, str | Path) else copy_of(scenario)
    if not sc.get("flows") or any(f.get("bytes") is None for f in sc["flows"]):
        raise UserError(
            "tune: every [[flows]] entry needs bytes (the objective is completion time)"
        )
    reg = registry()
    if protocol not in reg:
        raise UserError(f"--protocol {protocol}: unknown; see `spacetp protocols`")
    if trials < 1 or reps < 1:
        raise UserError(f"--trials {trials} --reps {reps}: both must be at least 1")
    family = reg[protocol]["family"]
    space = {p.setting: p for p in SPACES.get(family, ())}
    if not space:
        raise UserError(f"--protocol {protocol}: no search space for the {family} family")
    overrides = parse_params(params, family)
    out = Path(out) if out is not None else Path("results") / f"tune-{protocol}"
    out.mkdir(parents=True, exist_ok=True)
    store = out / "store"
    facts = _facts(sc, protocol)
    bounds = {k: overrides.get(k) or p.bounds(facts) for k, p in space.items()}
    fitted_sc = fit.with_fit(sc, protocol, True)

    def evaluate(s: dict) -> list[float]:
        return _evaluate(s, reps, store, executor, workers, base_seed)

    results = {
        "as configured": _stats(evaluate(fit.with_fit(sc, protocol, False))),
        "fitted": _stats(evaluate(fitted_sc)),
    }

    start = _start_point(sc, protocol, space, bounds)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name=protocol, storage=f"sqlite:///{out / 'tune.db'}", load_if_exists=True,
        direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed),
    )  # fmt: skip
    _fail_stale(study)
    if not study.trials:
        # The search starts from the fitted settings, then the pipe point.
        for point in (start, _pipe_point(space, facts, bounds, start)):
            if point:
                study.enqueue_trial(point)
    finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    resumed = len(finished)

    def objective(trial) -> float:
        chosen = {}
        for name, p in space.items():
            lo, hi = bounds[name]
            x = (trial.suggest_int(name, int(lo), int(hi), log=True) if p.kind == "int"
                 else trial.suggest_float(name, lo, hi, log=True))  # fmt: skip
            chosen[name] = p.value(x)
        trial.set_user_attr("settings", chosen)
        times = evaluate(apply_settings(fitted_sc, chosen))
        s = _stats(times)
        trial.set_user_attr("stats", s)
        return s["mean_s"] if math.isfinite(s["mean_s"]) else 1e12

    todo = max(0, trials - resumed)
    with _Progress(console, trials, resumed) as progress:
        for _ in range(todo):
            study.optimize(objective, n_trials=1)
            progress.trial_done(study)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    best_trial = min(done, key=lambda t: t.value) if done else None
    best_settings, best = {}, results["fitted"]
    if best_trial is not None and best_trial.user_attrs["stats"]["mean_s"] < best["mean_s"]:
        best_settings, best = best_trial.user_attrs["settings"], best_trial.user_attrs["stats"]
    results["tuned"] = best
    importance = {}
    if len(done) >= 2:
        try:
            # PED-ANOVA: built into Optuna (fANOVA would need scikit-learn); the quantile
            # of good trials is the best quarter, at least two trials, at most half.
            q = min(0.5, max(0.25, 2.0 / len(done)))  # below Optuna's region (all trials)
            evaluator = optuna.importance.PedAnovaImportanceEvaluator(target_quantile=q)
            with warnings.catch_warnings():
                # With few trials the good quarter is the whole region: Optuna warns that the
                # importances are then equal, which the page shows anyway.
                warnings.simplefilter("ignore", UserWarning)
                importance = dict(
                    optuna.importance.get_param_importances(study, evaluator=evaluator)
                )
        except (RuntimeError, ValueError, ZeroDivisionError):
            importance = {}
    history = [
        {"number": t.number, "value_s": t.value, **t.user_attrs.get("settings", {})} for t in done
    ]
    res = Tuned(protocol, family, len(done), reps, results, best_settings, importance, history,
                resumed=resumed)  # fmt: skip
    res.files = _write(res, sc, fitted_sc, out, space)
    return res


def _start_point(sc: dict, protocol: str, space: dict, bounds: dict) -> dict[str, float]:
    """The fitted settings as a point of the space (each clamped into its range): what the
    scenario sets on its first flow, else what fitting sets, else the profile's own value."""
    from spacetp import fit, units
    from spacetp.profiles import registry

    flow = (sc.get("flows") or [{}])[0]
    rows = fit.fitted(sc, protocol)
    fitted = {x["setting"]: x["value"] for x in (rows[0]["flows"] or [{}])[0].get("fitted", [])}
    profile = registry().get(protocol, {}).get("settings") or {}

    def lookup(tree: dict, path: list[str]):
        for k in path:
            if not isinstance(tree, dict) or k not in tree:
                return None
            tree = tree[k]
        return tree

    out = {}
    for name, p in space.items():
        own = name.split(".")[1:] if name.startswith(("tcp.", "quic.")) else name.split(".")
        v = lookup(flow, name.split("."))
        v = fitted.get(name) if v is None else v
        v = lookup(profile, own) if v is None else v
        q = units.to_si(v)
        if q is None or not q[0] > 0:
            continue
        lo, hi = bounds[name]
        x = min(max(q[0], lo), hi)
        out[name] = int(round(x)) if p.kind == "int" else x
    return out


def _pipe_point(space: dict, facts: dict, bounds: dict, start: dict) -> dict[str, float]:
    """The fitted point with every setting that has a pipe value set to it (clamped), or {}
    when no setting has one."""
    out, moved = dict(start), False
    for name, p in space.items():
        if p.pipe is None:
            continue
        lo, hi = bounds[name]
        x = min(max(float(p.pipe(facts)), lo), hi)
        out[name] = int(round(x)) if p.kind == "int" else x
        moved = True
    return out if moved else {}


def _fail_stale(study) -> None:
    """Trials left running by a killed tune: failed, so that they are asked again (their
    finished runs stay in the store, so nothing finished is re-run)."""
    import optuna

    for t in study.trials:
        if t.state == optuna.trial.TrialState.RUNNING:
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)


class _Progress:
    """The tune's progress on `console` (None: nothing): a bar on a terminal, else a line
    per trial (logs, pipes)."""

    def __init__(self, console, total: int, resumed: int):
        self.console, self.total, self.resumed = console, total, resumed
        self.bar = self.task = None

    def __enter__(self) -> _Progress:
        c = self.console
        if c is None:
            return self
        if self.resumed:
            c.print(f"resumed: {self.resumed} finished trials kept", highlight=False)
        if c.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            columns = (TextColumn("tune"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("{task.description}"))  # fmt: skip
            self.bar = Progress(*columns, console=c, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=self.total, completed=self.resumed)
        return self

    def trial_done(self, study) -> None:
        if self.console is None:
            return
        done = [x.value for x in study.trials if x.value is not None]
        last, best = study.trials[-1].value, min(done, default=math.nan)
        text = f"last {last:.4g} s, best {best:.4g} s" if last is not None else "failed"
        if self.bar is not None:
            self.bar.update(self.task, completed=len(done), description=text)
        else:
            self.console.print(f"trial {len(done)}/{self.total}: {text}", highlight=False)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _write(res: Tuned, sc: dict, fitted_sc: dict, out: Path, space: dict) -> dict[str, str]:
    """DIR/tuned.toml (the scenario with the best settings), DIR/sensitivity.png and
    DIR/trials.csv."""
    import pandas as pd

    from spacetp.scenario import dumps

    files = {}
    tuned = apply_settings(fitted_sc, res.best)
    (out / "tuned.toml").write_text(dumps(tuned))
    files["scenario"] = str(out / "tuned.toml")
    pd.DataFrame(res.history).to_csv(out / "trials.csv", index=False)
    files["trials"] = str(out / "trials.csv")
    if res.history:
        _sensitivity_figure(res, space, out / "sensitivity.png")
        files["sensitivity"] = str(out / "sensitivity.png")
    return files


def _sensitivity_figure(res: Tuned, space: dict, path: Path) -> None:
    """The completion time of every trial against each setting (log axes), the setting's
    PED-ANOVA importance in its title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from spacetp import units

    names = list(space)
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        xs, ys = [], []
        for h in res.history:
            v = h.get(name)
            q = units.to_si(v) if isinstance(v, str) else (v, None)
            if q is not None and q[0] is not None and h["value_s"] is not None:
                xs.append(float(q[0]))
                ys.append(h["value_s"])
        ax.scatter(xs, ys, s=14, label="trials")
        for label, style in (("fitted", "--"), ("as configured", ":")):
            ax.axhline(res.results[label]["mean_s"], ls=style, color="grey", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=7)
        ax.set_xlabel(name)
        ax.set_ylabel("completion (s)")
        ax.set_title(f"{name}: importance {res.importance.get(name, float('nan')):.2f}", fontsize=8)
        ax.grid(True, alpha=0.3)
    title = f"{res.protocol}: completion time of each trial (mean of {res.reps} seeds)"
    fig.suptitle(title + " against each setting", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def lines(res: Tuned) -> list[str]:
    """What `spacetp tune` prints."""
    from spacetp import human

    def cell(r: dict) -> str:
        if r.get("unfinished") or not r["runs"]:
            return f"did not finish in {r.get('unfinished', 0)} of {r['runs']} runs"
        if r["runs"] < 2:
            return f"{human.duration(r['mean_s'])} ({r['runs']} run: no interval)"
        return (f"{human.duration(r['mean_s'])} (95% CI {human.duration(r['ci95_low_s'])}–"
                f"{human.duration(r['ci95_high_s'])}, {r['runs']} runs)")  # fmt: skip

    kept = f" ({res.resumed} kept from the interrupted study)" if res.resumed else ""
    out = [f"{res.protocol} ({res.family}): {res.trials} trials of {res.reps} seeds{kept}"]
    for label in ("as configured", "fitted", "tuned"):
        out.append(f"  {label:13} {cell(res.results[label])}")
    t, f, a = (res.results[k]["mean_s"] for k in ("tuned", "fitted", "as configured"))
    if all(math.isfinite(x) for x in (t, f, a)):
        out.append(f"  tuned against fitted: {100 * (f - t) / f:+.1f}% faster; against as "
                   f"configured: {100 * (a - t) / a:+.1f}%")  # fmt: skip
    if res.best:
        out.append("  best settings: " + ", ".join(f"{k} = {v}" for k, v in res.best.items()))
    else:
        out.append("  best settings: the fitted ones (no trial beat them)")
    if res.importance:
        imp = sorted(res.importance.items(), key=lambda kv: -kv[1])
        out.append("  sensitivity: " + ", ".join(f"{k} {v:.2f}" for k, v in imp))
    return out


__all__ = ["SPACES", "Param", "Tuned", "apply_settings", "lines", "parse_params", "tune"]
