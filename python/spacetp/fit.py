"""Settings fitted to the link (`spacetp fit`, and `spacetp compare` by default): for each
protocol, what the engine's rules (written beside each transport: crates/spacetp-sim/src/
transport/*/fit.rs, docs/fit.md) set on this scenario's path when its flows have
`fit = true`, each with the value the profile had and the rule with its source.

    import spacetp.fit as fit
    rows = fit.fitted("examples/geo.toml", protocols="scps-tp,quic,ltp")
"""

from __future__ import annotations

import json
from pathlib import Path

from spacetp.scenario import ScenarioError, copy_of, load, to_json

# Families whose hosts size their own buffers: fitted as deployed (nothing).
AS_DEPLOYED = {"linux": "the kernel sizes its buffers itself (autotuning to tcp_rmem's limit)",
               "draft": "on Linux's settings, which the kernel sizes itself",
               "windows": "the stack's fixed windows, as deployed"}  # fmt: skip


def with_fit(scenario: dict, protocol: str | None = None, on: bool = True) -> dict:
    """A copy of `scenario` whose every flow and workload has `fit = on` (and `protocol`, if
    given)."""
    sc = copy_of(scenario)
    for key in ("flows", "workloads"):
        for f in sc.get(key) or []:
            f["fit"] = on
            if protocol is not None:
                f["protocol"] = protocol
    return sc


def fitted(scenario: dict | str | Path, protocols: str | list[str] | None = None) -> list[dict]:
    """For each protocol (`spacetp compare`'s list: None or "all" for every profile): the
    path of its first flow and the settings fitted to each flow, or the error a protocol
    meets on this scenario. One dict per protocol: {protocol, family, path, flows, error}."""
    from spacetp import _core
    from spacetp.profiles import choose, registry

    sc = load(scenario) if isinstance(scenario, str | Path) else copy_of(scenario)
    if not (sc.get("flows") or sc.get("workloads")):
        raise ScenarioError("fit: the scenario has no [[flows]] or [[workloads]] to fit")
    names, _ = choose(protocols)
    reg = registry()
    rows = []
    for p in names:
        row = {"protocol": p, "family": reg.get(p, {}).get("family", ""), "path": None,
               "flows": [], "error": None}  # fmt: skip
        try:
            got = json.loads(_core.fit_settings(to_json(with_fit(sc, p))))
        except ValueError as e:
            row["error"] = str(e)
        else:
            row["flows"] = got["flows"]
            row["path"] = got["flows"][0]["path"] if got["flows"] else None
        rows.append(row)
    return rows


def lines(row: dict) -> list[str]:
    """What `spacetp fit` prints of one protocol."""
    if row["error"]:
        return [f"not on this scenario: {row['error']}"]
    out = []
    for f in row["flows"]:
        for x in f["fitted"]:
            out.append(f"{f['name']}: {x['setting']} {x['was']} -> {x['value']}  ({x['rule']})")
    if not out:
        why = AS_DEPLOYED.get(row["family"], "its settings already suit this path")
        out.append(f"nothing fitted: {why}")
    return out
