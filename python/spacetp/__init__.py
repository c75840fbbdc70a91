"""spacetp: a laboratory for transport protocols over space links.

    import spacetp
    sc = spacetp.load("examples/asymmetry.toml")
    res = spacetp.run(sc, seed=1)
    res.flows[0]["goodput_bps"]

The simulator core is Rust (`spacetp._core`); this package holds scenarios, results, models,
sweeps, figures and the `spacetp` command.
"""

from spacetp.result import Result
from spacetp.scenario import ScenarioError, apply_set, load, loads, set_value, validate
from spacetp.simulate import protocols, run
from spacetp.sweep import SweepResult, load_sweep, sweep

__all__ = [
    "Result",
    "ScenarioError",
    "SweepResult",
    "apply_set",
    "load",
    "load_sweep",
    "loads",
    "protocols",
    "run",
    "set_value",
    "sweep",
    "validate",
]
