"""The hot path: wall nanoseconds (and, where valgrind is installed, instructions) per link
traversal on scenario D with Scalable TCP (benches/scenarios/D-scalable.toml), for the
working tree against an earlier commit, the two run alternately in one session so that the
machine's load falls on both alike.

    python benches/hot_path.py --base f1da9f7 [--rounds 5] [--reps 3] [--out benches/hot_path.md]

The earlier commit is exported to a temporary folder and built there (its own target dir);
the benchmark program and scenario of the working tree are copied into it when it lacks them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "crates/spacetp-sim/examples/hot_path.rs"
SCENARIO = "benches/scenarios/D-scalable.toml"


def build(tree: Path, target: Path) -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "spacetp-sim", "--example", "hot_path"],
        cwd=tree,
        env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        check=True,
    )
    return target / "release" / "examples" / "hot_path"


def export(rev: str, into: Path) -> Path:
    tree = into / rev
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    for rel in (EXAMPLE, SCENARIO):
        if not (tree / rel).exists():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tree / rel)
    return tree


def wall_ns(binary: Path, scenario: Path, reps: int) -> float:
    out = subprocess.run(
        [str(binary), str(scenario), str(reps)], capture_output=True, text=True, check=True
    ).stdout
    return float(re.search(r"median ([\d.]+) ns", out).group(1))


def instructions(binary: Path, scenario: Path) -> float | None:
    """Instructions per traversal under callgrind (deterministic), on 10 simulated seconds."""
    if shutil.which("valgrind") is None:
        return None
    short = scenario.with_name("D-scalable-10s.toml")
    short.write_text(scenario.read_text().replace('stop = "100 s"', 'stop = "10 s"'))
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        + [str(binary), str(short), "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    total = int(re.search(r"Collected : (\d+)", r.stderr).group(1))
    traversals = int(re.search(r"(\d+) traversals", r.stdout).group(1))
    return total / traversals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit to compare with")
    ap.add_argument("--rounds", type=int, default=5, help="alternations of the two builds")
    ap.add_argument("--reps", type=int, default=3, help="runs per build per round (median)")
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "hot_path.md")
    a = ap.parse_args()
    if a.rounds < 1 or a.reps < 1:
        ap.error("--rounds and --reps must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"building {a.base} and the working tree ...", flush=True)
        base = build(export(a.base, tmp), tmp / "target-base")
        head = build(ROOT, ROOT / "target")
        scenario = tmp / "D-scalable.toml"
        shutil.copy(ROOT / SCENARIO, scenario)
        walls: dict[str, list[float]] = {"base": [], "head": []}
        for i in range(a.rounds):
            for name, binary in (("base", base), ("head", head)):
                walls[name].append(wall_ns(binary, scenario, a.reps))
            print(
                f"round {i + 1}: base {walls['base'][-1]:.1f} ns, head {walls['head'][-1]:.1f} ns"
            )
        instr = {n: instructions(b, scenario) for n, b in (("base", base), ("head", head))}
    med = {n: statistics.median(v) for n, v in walls.items()}
    lines = [
        "# Hot path: nanoseconds per link traversal",
        "",
        f"Scenario D with Scalable TCP (`{SCENARIO}`, 100 simulated s), `{a.base}` against the "
        f"working tree, alternated {a.rounds} times, median of {a.reps} runs each "
        "(`python benches/hot_path.py`).",
        "",
        "| build | median ns per traversal | per round | instructions per traversal |",
        "|---|---|---|---|",
    ]
    for n, label in (("base", a.base), ("head", "working tree")):
        rounds = ", ".join(f"{w:.0f}" for w in walls[n])
        ins = f"{instr[n]:.0f}" if instr[n] else "(no valgrind)"
        lines.append(f"| {label} | {med[n]:.1f} | {rounds} | {ins} |")
    lines += ["", f"Ratio working tree / {a.base}: {med['head'] / med['base']:.3f} (wall)"]
    if instr["base"] and instr["head"]:
        lines[-1] += f", {instr['head'] / instr['base']:.3f} (instructions)"
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
