"""docs/scenario.md documents the whole scenario schema, and every example scenario runs.

The schema side is read from the compiled core (`_core.schema()`, and each transport's
settings from `_core.transport_schema`), so a field added in Rust without a line in the
reference fails here, and so does a path in the reference that the schema does not have.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

import spacetp
from spacetp import _core

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "scenario.md"
EXAMPLES_DIR = ROOT / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.toml"))
REQUIRED_EXAMPLES = ["geo", "leo-pass", "mars", "dumbbell", "ground-stations", "markov"]

# A field path as written in the reference: `links[i].errors.ber`, `flows[0].tcp.max_rto`.
PATH_RE = re.compile(r"[a-z_]+(\[[A-Za-z0-9_]*\])?(\.[a-z_][a-z0-9_]*(\[[A-Za-z0-9_]*\])?)*")


# ----- the schema -----


def _scenario_schema() -> dict:
    return json.loads(_core.schema())


def _tcp_schema() -> dict:
    return json.loads(_core.transport_schema("tcp"))


def _quic_schema() -> dict:
    return json.loads(_core.transport_schema("quic"))


def _ltp_schema() -> dict:
    return json.loads(_core.transport_schema("ltp"))


def _alternatives(node: dict, owner: str, rel: str, root: dict) -> list[tuple[dict, str, str]]:
    """The concrete schema nodes behind `node` (through $ref, anyOf, oneOf, allOf), each with
    the definition that owns it and the path relative to that definition."""
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        return _alternatives(root["definitions"][name], name, "", root)
    out = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key, []):
            out += _alternatives(sub, owner, rel, root)
    if not out or "properties" in node or "items" in node:
        out.append((node, owner, rel))
    return out


def schema_fields(root: dict) -> dict[tuple[str, str], set[str]]:
    """{(owning definition, path inside it): {full paths}} for every property reachable from
    the root, e.g. ("ErrorCfg", "ber") -> {"links[].errors.ber", "links[].errors_back.ber",
    "topology.core.errors.ber", ...}. Arrays add `[]`; tuples (fixed `items` lists) are leaves.
    """
    out: dict[tuple[str, str], set[str]] = defaultdict(set)

    def walk(node: dict, path: str, owner: str, rel: str, depth: int) -> None:
        assert depth < 30, f"schema nesting too deep at {path}"
        for alt, alt_owner, alt_rel in _alternatives(node, owner, rel, root):
            for name, sub in alt.get("properties", {}).items():
                p = f"{path}.{name}" if path else name
                r = f"{alt_rel}.{name}" if alt_rel else name
                out[(alt_owner, r)].add(p)
                walk(sub, p, alt_owner, r, depth + 1)
            items = alt.get("items")
            if isinstance(items, dict):
                walk(items, path + "[]", alt_owner, alt_rel + "[]", depth + 1)

    walk(root, "", "Scenario", "", 0)
    return out


def _prefixes(path: str) -> set[str]:
    parts = re.findall(r"\.?[a-z_][a-z0-9_]*|\[\]", path)
    return {"".join(parts[: i + 1]).lstrip(".") for i in range(len(parts))}


def valid_paths() -> set[str]:
    """Every full path of the schema (normalised to `[]`), with its prefixes, and every
    transport's settings under `flows[].KEY` (and `workloads[].KEY`)."""
    paths: set[str] = set()
    for full in schema_fields(_scenario_schema()).values():
        for p in full:
            paths |= _prefixes(p)
    # Every transport's settings table, from the core's registry; TCP's and QUIC's are
    # workloads' too.
    for t in json.loads(_core.transports()):
        key = t["settings_key"]
        for full in schema_fields(json.loads(_core.transport_schema(key))).values():
            for p in full:
                for pre in _prefixes(p):
                    paths.add(f"flows[].{key}.{pre}")
                    if t["workloads"]:
                        paths.add(f"workloads[].{key}.{pre}")
    return paths


def _enum_values(root: dict) -> set[str]:
    values: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            values.update(v for v in node.get("enum", []) if isinstance(v, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(root)
    return values


# ----- the reference -----


def _doc_text() -> str:
    assert DOC.is_file(), f"{DOC} is missing"
    return DOC.read_text(encoding="utf-8")


def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def inline_code(text: str) -> list[str]:
    """Backticked spans outside fenced blocks."""
    return re.findall(r"`([^`\n]+)`", _without_fences(text))


def _normalise(token: str) -> str:
    return re.sub(r"\[[A-Za-z0-9_]*\]", "[]", token.strip())


def documented_paths(text: str) -> set[str]:
    return {_normalise(t) for t in inline_code(text) if PATH_RE.fullmatch(t.strip())}


def toml_snippets(text: str) -> list[str]:
    return re.findall(r"^```toml\n(.*?)^```", text, flags=re.S | re.M)


def _needs_orbits_extra(sc: dict) -> bool:
    """The scenario has an orbit or an ephemeris and sgp4/skyfield are not installed."""
    import importlib.util

    has = any(
        isinstance(lk, dict) and (lk.get("orbit") or lk.get("ephemeris"))
        for lk in sc.get("links", [])
    )
    missing = not all(importlib.util.find_spec(m) for m in ("sgp4", "skyfield", "skyfield_data"))
    return has and missing


# ----- tests of the test helpers (so that a broken walker cannot pass silently) -----


def test_schema_walker_finds_nested_fields():
    fields = schema_fields(_scenario_schema())
    assert (
        "links[].errors.gilbert_elliott.p_bad_to_good"
        in fields[("GilbertElliottCfg", "p_bad_to_good")]
    )
    assert "topology.core.errors_back.markov_slot.slot" in fields[("MarkovSlotCfg", "slot")]
    assert "links[].delay.schedule" in fields[("Sched_for_Duration", "schedule")]
    assert "workloads[].interval.uniform" in fields[("DistCfg_for_Duration", "uniform")]
    assert ("Scenario", "stop") in fields
    assert len(fields) > 80


def test_doc_path_extraction():
    text = "| `links[i].rate_back` | `links[1].errors.ber` · `x y` | `a->b` |\n```\n`seed.x`\n```"
    assert documented_paths(text) == {"links[].rate_back", "links[].errors.ber"}


# ----- the reference covers the schema -----


def test_every_scenario_field_is_documented():
    documented = documented_paths(_doc_text())
    missing = sorted(
        min(paths) for paths in schema_fields(_scenario_schema()).values() if not paths & documented
    )
    assert not missing, (
        f"{len(missing)} scenario fields have no backticked path in docs/scenario.md "
        f"(e.g. `links[i].rate_back`): {', '.join(missing)}"
    )


def test_every_tcp_setting_is_documented():
    documented = documented_paths(_doc_text())
    missing = sorted(
        p
        for p in _tcp_schema()["properties"]
        if f"flows[].tcp.{p}" not in documented and f"workloads[].tcp.{p}" not in documented
    )
    assert not missing, (
        "transport settings without a `flows[i].tcp.NAME` row in docs/scenario.md: "
        + ", ".join(missing)
    )


def test_every_ltp_setting_is_documented():
    documented = documented_paths(_doc_text())
    missing = sorted(p for p in _ltp_schema()["properties"] if f"flows[].ltp.{p}" not in documented)
    assert not missing, "LTP settings without a `flows[i].ltp.NAME` row: " + ", ".join(missing)


def test_every_quic_setting_is_documented_with_quinns_default():
    text = _doc_text()
    documented = documented_paths(text)
    schema = _quic_schema()
    missing = sorted(p for p in schema["properties"] if f"flows[].quic.{p}" not in documented)
    assert not missing, "QUIC settings without a `flows[i].quic.NAME` row: " + ", ".join(missing)
    for name, prop in schema["properties"].items():
        value = prop["default"]
        row = next(ln for ln in text.splitlines() if ln.startswith(f"| `flows[i].quic.{name}`"))
        shown = (
            "none"
            if value is None
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )
        assert f"`{shown}`" in row, f"flows[i].quic.{name}: default {shown!r} not in: {row}"


def test_documented_paths_exist_in_the_schema():
    valid = valid_paths()
    tops = set(_scenario_schema()["properties"])
    invented = sorted(
        p
        for p in documented_paths(_doc_text())
        if re.match(r"[a-z_]+", p).group(0) in tops and ("." in p or "[" in p) and p not in valid
    )
    assert not invented, f"docs/scenario.md names paths the schema does not have: {invented}"


def test_every_enum_value_is_documented():
    spans = {s.strip().strip('"') for s in inline_code(_doc_text())}
    values = _enum_values(_scenario_schema()) | _enum_values(_tcp_schema())
    missing = sorted(values - spans)
    assert not missing, f"enum values not in docs/scenario.md (as `value`): {missing}"


def _fmt(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _flatten(settings: dict, prefix: str = "") -> dict:
    """Controller tables (`vegas = {...}`) become `vegas.alpha` etc."""
    out = {}
    for k, v in settings.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def test_tcp_defaults_match_the_newreno_profile():
    settings = _flatten(spacetp.protocols()["newreno"]["settings"])
    tables = {
        k for k, v in spacetp.protocols()["newreno"]["settings"].items() if isinstance(v, dict)
    }
    rows = {}
    for line in _doc_text().splitlines():
        m = re.match(r"\|\s*`flows\[i\]\.tcp\.([a-z0-9_.]+)`\s*\|([^|]*)\|([^|]*)\|", line)
        if m and m.group(1) not in tables:
            rows[m.group(1)] = m.group(3)
    assert set(rows) == set(settings), (
        f"tcp table rows {sorted(set(rows) ^ set(settings))} differ from the profile's settings"
    )
    wrong = []
    for name, value in settings.items():
        m = re.search(r"`([^`]+)`", rows[name])
        shown = m.group(1) if m else rows[name].strip()
        if shown.lower() != _fmt(value).lower():
            wrong.append(f"{name}: doc says {shown!r}, profile has {_fmt(value)!r}")
    assert not wrong, "; ".join(wrong)


def test_doc_lists_every_example():
    text = _doc_text()
    missing = [p.name for p in EXAMPLES if f"examples/{p.name}" not in text]
    assert not missing, f"examples not listed in docs/scenario.md: {missing}"


def test_toml_snippets_parse_and_complete_ones_validate():
    snippets = toml_snippets(_doc_text())
    assert len(snippets) >= 5
    complete = 0
    for i, snip in enumerate(snippets):
        try:
            tomllib.loads(snip)
        except tomllib.TOMLDecodeError as e:
            pytest.fail(f"toml snippet {i} of docs/scenario.md does not parse: {e}\n{snip}")
        if "[[flows]]" in snip or "[[workloads]]" in snip:
            complete += 1
            if _needs_orbits_extra(tomllib.loads(snip)):
                continue
            try:
                spacetp.validate(spacetp.loads(snip))
            except spacetp.ScenarioError as e:
                pytest.fail(f"toml snippet {i} of docs/scenario.md is invalid: {e}\n{snip}")
    assert complete >= 3


# ----- the examples -----


def test_required_examples_exist():
    names = {p.stem for p in EXAMPLES}
    assert not set(REQUIRED_EXAMPLES) - names


@pytest.mark.parametrize("name", REQUIRED_EXAMPLES)
def test_example_explains_itself(name: str):
    lines = (EXAMPLES_DIR / f"{name}.toml").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#"), f"{name}.toml: start with comments that explain it"
    assert sum(line.lstrip().startswith("#") for line in lines) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_validates_and_runs(path: Path):
    sc = spacetp.load(path)
    if _needs_orbits_extra(sc):
        # The README's test command installs the extra; without it this is a failure, not
        # a skip, so a broken install cannot hide the orbit examples.
        import importlib.util

        missing = [m for m in ("sgp4", "skyfield") if importlib.util.find_spec(m) is None]
        assert not missing, f"{path.name} needs the orbits extra: pip install spacetp[orbits]"
    spacetp.validate(sc)
    # Examples run in about a second: held by CPU time (this process's: the core runs in it),
    # which a loaded machine does not stretch as it does wall time.
    t0 = time.process_time()
    res = spacetp.run(path)
    cpu = time.process_time() - t0
    assert cpu < 10, f"{path.name}: {cpu:.1f} s of CPU"
    assert res.flows, f"{path.name}: no flows in the results"
    # A flow reset on purpose by an on-path attacker (examples/attack.toml) must end reset.
    reset = {a["flow"] for a in sc.get("attacks", []) if a.get("seq") == "exact"}
    for i, f in enumerate(res.flows):
        if i in reset:
            assert not f["complete"] and f["receiver_state"] == "reset by peer", f
            continue
        if f["bytes_requested"] is not None:
            assert f["complete"], f"{path.name}: {f['name']} incomplete ({f['state']})"
            assert f["bytes_undelivered"] == 0, f"{path.name}: {f['name']}"
        assert f["goodput_bps"] > 0, f"{path.name}: {f['name']} delivered nothing"
    assert res.to_json() == spacetp.run(path).to_json(), f"{path.name}: not deterministic"


def _run(name: str, *sets: tuple[str, object]):
    sc = spacetp.load(EXAMPLES_DIR / f"{name}.toml")
    for p, v in sets:
        spacetp.set_value(sc, p, v)
    return spacetp.run(sc)


def _bps(res, i=0) -> float:
    return res.flows[i]["goodput_bps"]


def test_geo_goodput_below_the_link():
    res = _run("geo")
    assert 0.1e6 < _bps(res) < 2e6
    assert res.flows[0]["min_rtt_s"] >= 2 * 0.275  # 2 x (270 + 5) ms


def test_leo_pass_completes_inside_the_pass():
    from spacetp.linksrc import resolve  # the pass comes from an orbit: needs spacetp[orbits]

    up = resolve(spacetp.load(EXAMPLES_DIR / "leo-pass.toml"))["links"][0]["up"]["schedule"]
    aos, los = up[1][0], up[2][0]  # 30.9 s and 427.15 s: ISS over Wallops above 10 degrees
    assert 30 < aos < 32 and 426 < los < 428
    res = _run("leo-pass")
    f = res.flows[0]
    # The SYNs sent before AOS are lost; the file ends inside the pass.
    assert aos < f["last_byte_s"] < los
    assert res.links[0]["outage_drops"] >= 1
    assert f["min_rtt_s"] >= 2 * 1.69e-3  # 509 km at culmination (54.5 degrees)
    # A file too big for the pass does not complete by the stop.
    big = _run("leo-pass", ("flows[0].bytes", "600 MB"))
    assert not big.flows[0]["complete"]
    assert big.flows[0]["last_byte_s"] <= los + 0.1


def test_mars_needs_its_transport_settings():
    res = _run("mars")
    assert res.flows[0]["state"] == "closed"
    assert res.flows[0]["min_rtt_s"] >= 1200
    # With the profile's timers the handshake gives up long before the SYN-ACK can return.
    default = _run("mars", ("flows[0].tcp", {}))
    assert default.flows[0]["state"].startswith("aborted: handshake")
    assert default.flows[0]["bytes_delivered"] == 0


def test_dumbbell_uses_the_topology_and_background():
    sc = spacetp.load(EXAMPLES_DIR / "dumbbell.toml")
    assert sc["topology"]["kind"] == "dumbbell"
    res = spacetp.run(sc)
    assert res.links[0]["name"] == "left->right"
    assert res.links[0]["max_queue_packets"] <= 10
    assert res.links[0]["error_drops"] > 0
    assert res.links[1]["error_drops"] == 0  # errors_back = {}
    assert res.summary["datagrams"][0]["packets_received"] > 0
    assert _bps(res) < 10e6


def test_ground_stations_workload():
    res = _run("ground-stations")
    files = [f for f in res.flows if f["workload"] == "workload0"]
    assert len(files) >= 35
    assert {f["to"] for f in files} <= {f"h{i}" for i in range(35)}
    assert all(f["from"] == "srv0" for f in files)
    assert min(f["min_rtt_s"] for f in files) >= 1.4


def test_markov_is_window_limited():
    res = _run("markov")
    f = res.flows[0]
    assert f["bytes_requested"] is None
    assert res.summary["run"]["end_s"] == pytest.approx(60)
    # B_u = 500 packets of 1000 B per 120 ms RTT.
    assert 0 < _bps(res) <= 500 * 1000 * 8 / 0.12
    assert res.links[0]["error_drops"] > 0
    assert res.links[1]["error_drops"] == 0
