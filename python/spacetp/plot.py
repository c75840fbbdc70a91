"""Figures of sweeps: a metric's mean against a parameter, with error bars (95% confidence
interval or standard deviation), one line per value of a second parameter, and optionally an
analytic model of spacetp.models drawn along the x axis.

Parameter values with units (`"50 ms"`, `"5 kb/s"`) are plotted in SI base units (s, B,
b/s). Model parameters are numbers, quantities (`600 ms`) or arithmetic expressions of `x`,
the x value in those units (`rtt=2*x+0.02`, `p=x`); `scale` multiplies the model's output,
e.g. by 8 * segment bytes to turn packets/s into b/s.
"""

from __future__ import annotations

import ast
import math
import operator
from pathlib import Path
from typing import Any

import numpy as np

from spacetp import units
from spacetp.scenario import ScenarioError, _parse_value
from spacetp.stats import column

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def expression(text: str, x: Any = None, what: str = "value") -> Any:
    """A number, a quantity with a unit (in SI) or an arithmetic expression of `x`."""
    q = units.to_si(text.strip())
    if q is not None:
        return q[0]
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ScenarioError(f"{what} {text!r}: not a number nor an expression of x") from None

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in ("x", "inf"):
            if node.id == "inf":
                return math.inf
            if x is None:
                raise ScenarioError(f"{what} {text!r}: x is not available here")
            return x
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ScenarioError(
            f"{what} {text!r}: only numbers, x, + - * / ** and parentheses are allowed"
        )

    return ev(tree.body)


def numeric(values: list[Any], name: str) -> tuple[np.ndarray, str | None]:
    """Parameter values as numbers in SI units, and their kind (duration, size, rate)."""
    out, kinds = [], set()
    for v in values:
        q = units.to_si(v)
        if q is None:
            raise ScenarioError(
                f"--x {name}: value {v!r} is not a number or a quantity; plot it with --hue"
            )
        out.append(q[0])
        kinds.add(q[1])
    if len(kinds) > 1:
        raise ScenarioError(f"--x {name}: values mix units of different kinds")
    return np.array(out, dtype=float), kinds.pop() if kinds else None


def _matches(cell: Any, text: str) -> bool:
    return cell == _parse_value(text) or str(cell) == text.strip()


def select(summary, params: list[str], x: str, hue: str | None, where: dict[str, str]):
    """The summary rows to draw: `where` fixes parameters; every other varied parameter
    than x and hue must then have a single value."""
    for p in [x, *([hue] if hue else []), *where]:
        if p not in params:
            raise ScenarioError(
                f"{p}: not a parameter of this sweep; parameters: {', '.join(params) or 'none'}"
            )
    if hue == x:
        raise ScenarioError(f"--hue {hue}: already the x axis")
    rows = summary
    for p, v in where.items():
        rows = rows[[_matches(c, v) for c in rows[p]]]
        if not len(rows):
            values = ", ".join(map(str, dict.fromkeys(summary[p])))
            raise ScenarioError(f"--where {p}={v}: no such value; values: {values}")
    for p in params:
        if p in (x, hue) or p in where:
            continue
        values = list(dict.fromkeys(map(str, rows[p])))
        if len(values) > 1:
            raise ScenarioError(
                f"{p} also varies ({', '.join(values)}): pick it as --hue or fix it with "
                f"--where '{p}=VALUE'"
            )
    return rows


def plot_sweep(
    result,
    x: str,
    y: str,
    out: str | Path,
    *,
    hue: str | None = None,
    where: dict[str, str] | None = None,
    logx: bool = False,
    logy: bool = False,
    err: str = "ci",
    model: str | None = None,
    model_params: dict[str, str] | None = None,
    model_scale: str = "1",
    title: str | None = None,
) -> Path:
    """Draw `y` (a metric) against `x` (a parameter) from a SweepResult and save it to `out`
    (the format follows the suffix: .png, .pdf, .svg)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    if y not in result.metrics:
        raise ScenarioError(
            f"--y {y}: not a metric of this sweep; metrics: {', '.join(result.metrics)}"
        )
    if err not in ("ci", "std"):
        raise ScenarioError(f"--err {err}: use ci (95% confidence interval) or std")
    rows = select(result.summary, result.params, x, hue, where or {})
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    groups = (
        [(None, rows)]
        if hue is None
        else [(h, rows[rows[hue] == h]) for h in dict.fromkeys(rows[hue])]
    )
    all_x = []
    drawn = 0
    kind = None
    for h, g in groups:
        xs, kind = numeric(list(g[x]), x)
        order = np.argsort(xs, kind="stable")
        mean = g[column(y, "mean")].to_numpy(dtype=float)[order]
        spread = g[column(y, "ci95" if err == "ci" else "std")].to_numpy(dtype=float)[order]
        drawn += int(np.isfinite(mean).sum())
        label = None if h is None else f"{hue} = {h}"
        ax.errorbar(xs[order], mean, yerr=np.nan_to_num(spread), marker="o", capsize=3, label=label)
        all_x.append(xs)
    if drawn == 0:
        raise ScenarioError(f"--y {y}: no value to plot (no successful run with this metric)")
    if model is not None:
        _overlay(ax, model, model_params or {}, model_scale, np.concatenate(all_x), logx)
    unit = units.si_unit(kind)
    ax.set_xlabel(f"{x} ({unit})" if unit else x)
    ax.set_ylabel(y)
    ax.set_xscale("log" if logx else "linear")
    ax.set_yscale("log" if logy else "linear")
    ax.grid(True, alpha=0.3)
    bars = "95% CI" if err == "ci" else "1 std"
    ax.set_title(title or f"{result.plan.base.get('name') or 'sweep'} (bars: {bars})")
    if hue is not None or model is not None:
        ax.legend()
    out = Path(out)
    try:
        fig.savefig(out, dpi=120)
    except ValueError as e:  # unknown format
        raise ScenarioError(f"--out {out}: {e}") from None
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write it ({e.strerror})") from None
    return out


def _overlay(ax, name: str, params: dict[str, str], scale: str, xs: np.ndarray, logx: bool):
    from spacetp.models import MODELS, evaluate

    if name not in MODELS:
        raise ScenarioError(f"--model {name}: unknown model; models: {', '.join(MODELS)}")
    lo, hi = float(np.min(xs)), float(np.max(xs))
    if logx and lo > 0:
        grid = np.geomspace(lo, hi, 200)
    else:
        grid = np.linspace(lo, hi, 200)
    values = {k: expression(v, grid, f"--model-param {k}") for k, v in params.items()}
    factor = expression(scale, None, "--model-scale")
    try:
        ys = np.asarray(evaluate(name, **values), dtype=float) * factor
    except ValueError as e:
        raise ScenarioError(f"--model {name}: {e}") from None
    ys = np.broadcast_to(ys, grid.shape)
    ax.plot(grid, ys, "--", color="black", label=f"model: {name}")
