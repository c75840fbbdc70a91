"""The hot path: nanoseconds per link traversal.

1. As users call it: `spacetp.run` on scenario D (benches/scenarios/D.toml, 100 simulated
   s) with each TCP profile, the wall of the Python call (wrapper, setup and summary
   included) over the links' tx_packets, best of `--reps`, the profiles alternated rep by
   rep; each profile's ratio to NewReno's; and, where valgrind is installed, instructions
   per traversal (the Rust example under callgrind, 20 simulated s), which do not depend
   on the machine's load.
2. With `--base REV`: the Rust example on D (NewReno and Scalable) and on D-scalable with
   BDP buffers, for the working tree against an earlier commit, alternated `--rounds`
   times. The earlier commit is exported to a temporary folder and built there; the
   benchmark program and scenarios of the working tree are copied into it when it lacks
   them.

    python benches/hot_path.py [--base c60e0c2] [--rounds 5] [--reps 5] [--out benches/hot_path.md]

Build the Python module in release first (`make build PROFILE=release`).
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

from run_walls import best_walls

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "crates/spacetp-sim/examples/hot_path.rs"
SCENARIO = "benches/scenarios/D-scalable.toml"
D = "benches/scenarios/D.toml"
PROFILES = ["newreno", "scalable", "cubic", "linux-cubic", "bbr", "linux-bbr", "bbr3"]


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
    for rel in (EXAMPLE, SCENARIO, D):
        if not (tree / rel).exists():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tree / rel)
    return tree


def wall_ns(binary: Path, scenario: Path, reps: int) -> float:
    out = subprocess.run(
        [str(binary), str(scenario), str(reps)], capture_output=True, text=True, check=True
    ).stdout
    return float(re.search(r"median ([\d.]+) ns", out).group(1))


def with_protocol(tmp: Path, protocol: str) -> Path:
    """Scenario D with `protocol` for its flow."""
    p = tmp / f"D-{protocol}.toml"
    p.write_text((ROOT / D).read_text().replace('protocol = "newreno"', f'protocol = "{protocol}"'))
    return p


def instructions(binary: Path, scenario: Path, seconds: int = 10) -> float | None:
    """Instructions per traversal under callgrind (deterministic), on `seconds` simulated."""
    if shutil.which("valgrind") is None:
        return None
    short = scenario.with_name(f"{scenario.stem}-{seconds}s.toml")
    short.write_text(scenario.read_text().replace('stop = "100 s"', f'stop = "{seconds} s"'))
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


def as_users_call_it(tmp: Path, reps: int) -> list[str]:
    """Section 1: `spacetp.run` on D with every profile."""
    import spacetp

    walls = best_walls({p: spacetp.load(with_protocol(tmp, p)) for p in PROFILES}, reps)
    best = {p: w for p, (w, _, _) in walls.items()}
    traversals = {p: n for p, (_, n, _) in walls.items()}
    example = build(ROOT, ROOT / "target")
    ns = {p: best[p] / traversals[p] * 1e9 for p in PROFILES}
    lines = [
        "## As users call it",
        "",
        f"`spacetp.run` on `{D}` (100 simulated s) with each profile: wall of the Python "
        f"call over the links' tx_packets, best of {reps}, the profiles alternated; "
        "instructions per traversal from the Rust example under callgrind (20 simulated s).",
        "",
        "| profile | traversals | wall | ns per traversal | / NewReno | instr. per traversal |",
        "|---|---|---|---|---|---|",
    ]
    for p in PROFILES:
        ins = instructions(example, with_protocol(tmp, p), 20)
        lines.append(
            f"| {p} | {traversals[p]} | {best[p]:.3f} s | {ns[p]:.0f} | "
            f"{ns[p] / ns['newreno']:.2f} | {f'{ins:.0f}' if ins else '(no valgrind)'} |"
        )
    return lines


def against_base(tmp: Path, base_rev: str, rounds: int, reps: int) -> list[str]:
    """Section 2: the Rust example, an earlier commit against the working tree."""
    print(f"building {base_rev} and the working tree ...", flush=True)
    base = build(export(base_rev, tmp), tmp / "target-base")
    head = build(ROOT, ROOT / "target")
    cases = {
        "D, newreno": with_protocol(tmp, "newreno"),
        "D, scalable": with_protocol(tmp, "scalable"),
        "D-scalable (BDP buffers)": tmp / "D-scalable.toml",
    }
    shutil.copy(ROOT / SCENARIO, cases["D-scalable (BDP buffers)"])
    lines = [
        f"## `{base_rev}` against the working tree",
        "",
        f"The Rust example (`{EXAMPLE}`), alternated {rounds} times, median of {reps} runs "
        "each; instructions under callgrind (10 simulated s).",
        "",
        f"| scenario | {base_rev} ns | working tree ns | ratio (wall) | {base_rev} instr "
        "| working tree instr | ratio (instr) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, scenario in cases.items():
        walls: dict[str, list[float]] = {"base": [], "head": []}
        for _ in range(rounds):
            for n, binary in (("base", base), ("head", head)):
                walls[n].append(wall_ns(binary, scenario, reps))
        med = {n: statistics.median(v) for n, v in walls.items()}
        ins = {n: instructions(b, scenario) for n, b in (("base", base), ("head", head))}
        ratio = f"{ins['head'] / ins['base']:.3f}" if ins["base"] and ins["head"] else "-"
        fmt = {n: f"{ins[n]:.0f}" if ins[n] else "-" for n in ins}
        lines.append(
            f"| {name} | {med['base']:.1f} | {med['head']:.1f} | "
            f"{med['head'] / med['base']:.3f} | {fmt['base']} | {fmt['head']} | {ratio} |"
        )
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="an earlier commit to compare the Rust example with")
    ap.add_argument("--rounds", type=int, default=5, help="alternations of the two builds")
    ap.add_argument("--reps", type=int, default=5, help="runs per case (best or median)")
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "hot_path.md")
    a = ap.parse_args()
    if a.rounds < 1 or a.reps < 1:
        ap.error("--rounds and --reps must be at least 1")
    lines = ["# Hot path: nanoseconds per link traversal", ""]
    with tempfile.TemporaryDirectory() as tmp:
        lines += as_users_call_it(Path(tmp), a.reps)
        print("\n".join(lines), flush=True)
        if a.base:
            lines += [""] + against_base(Path(tmp), a.base, a.rounds, a.reps)
    cmd = "python benches/hot_path.py" + (f" --base {a.base}" if a.base else "")
    lines += ["", f"`{cmd} --rounds {a.rounds} --reps {a.reps}`, this machine."]
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
