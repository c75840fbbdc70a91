"""Golden summaries of the examples whose links come from an orbit, an ephemeris, a trace or a
contact-plan file: the Python front turns those into schedules (spacetp.linksrc: sgp4,
skyfield, DE421) before the core runs, so crates/spacetp-sim/tests/golden.rs, which reads
every other example as it is, leaves them here. Each runs as it is (no override) through
`spacetp.run`, and its summary must equal the stored one in tests/golden/NAME.txt.

Both golden tests also check coverage: every example has exactly one golden file (here or in
crates/spacetp-sim/tests/golden/), and no golden file is left of an example that is gone.

A change that moves a number fails here. If it is meant, regenerate and say in the commit
what moved and why:

    SPACETP_BLESS=1 .venv/bin/pytest -q tests/test_linksrc_examples.py
"""

from __future__ import annotations

import json
import os
from importlib.metadata import version
from pathlib import Path

import pytest

import spacetp
from conftest import EXAMPLES, ROOT
from spacetp.linksrc import needs_resolution

GOLDEN = Path(__file__).with_name("golden")
RUST_GOLDEN = ROOT / "crates" / "spacetp-sim" / "tests" / "golden"
BLESS = os.environ.get("SPACETP_BLESS") == "1"
ALL = sorted(EXAMPLES.glob("*.toml"))
PYTHON_SIDE = [p for p in ALL if needs_resolution(spacetp.load(p))]


def versions() -> str:
    return ", ".join(f"{m} {version(m)}" for m in ("sgp4", "skyfield", "skyfield-data", "numpy"))


def header(name: str) -> str:
    return (
        f"# Golden summary of examples/{name}.toml, run as it is by spacetp.run (the Python\n"
        "# front turns its links' orbit, ephemeris, trace or contact file into schedules).\n"
        f"# Written with {versions()}.\n"
        "# tests/test_linksrc_examples.py compares the JSON below with a fresh run. If a\n"
        "# change is meant to move it, regenerate and say in the commit what moved and why:\n"
        "#   SPACETP_BLESS=1 .venv/bin/pytest -q tests/test_linksrc_examples.py\n"
    )


def body(text: str) -> str:
    """The JSON of a golden file: everything after its comment lines."""
    return "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))


@pytest.mark.parametrize("path", PYTHON_SIDE, ids=[p.stem for p in PYTHON_SIDE])
def test_example_gives_its_golden_summary(path: Path):
    got = spacetp.run(path).to_json() + "\n"
    golden = GOLDEN / f"{path.stem}.txt"
    if BLESS:
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(header(path.stem) + got)
        return
    assert golden.is_file(), f"{golden.name}: missing; run with SPACETP_BLESS=1"
    text = golden.read_text()
    if body(text) != got:
        want, now = json.loads(body(text)), json.loads(got)
        moved = [
            f"{kind}[{i}].{k}: {w.get(k)!r} -> {n.get(k)!r}"
            for kind in ("flows", "links")
            for i, (w, n) in enumerate(zip(want[kind], now[kind], strict=False))
            for k in sorted(set(w) | set(n))
            if w.get(k) != n.get(k)
        ]
        written = next((ln for ln in text.splitlines() if ln.startswith("# Written with")), "")
        pytest.fail(
            f"examples/{path.stem}.toml: the summary moved ({len(moved)} values; first: "
            f"{moved[:5]}). {written[2:].rstrip('.')}; now {versions()}. If meant: SPACETP_BLESS=1."
        )


def test_every_example_has_one_golden_file_and_none_is_stale():
    examples = {p.stem for p in ALL}
    python_side = {p.stem for p in PYTHON_SIDE}
    ours = {p.stem for p in GOLDEN.glob("*.txt")}
    rust = {p.stem for p in RUST_GOLDEN.glob("*.json")}
    assert python_side, "no example needs the Python front: this test checks nothing"
    assert not python_side - ours, f"examples without a golden file here: {python_side - ours}"
    assert not ours - python_side, (
        f"stale golden files in tests/golden (no such example, or golden.rs covers it): "
        f"{sorted(ours - python_side)}"
    )
    missing = examples - python_side - rust
    assert not missing, f"examples without a golden file in {RUST_GOLDEN}: {sorted(missing)}"
    assert not python_side & rust, f"covered twice: {sorted(python_side & rust)}"
