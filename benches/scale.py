"""Scale: does the cost per link traversal, and the memory per flow, stay flat as a scenario
grows? And how much of `spacetp run` is outside the simulator's core?

- Flows: N concurrent unlimited linux-cubic flows share a 1 Gb/s, 20 ms link (queue of
  one BDP) for 2 simulated seconds, N = 10, 100, 1 000, 10 000: the link carries about
  the same packets whatever N, so the time per traversal shows what each flow adds.
- Chain: one NewReno flow across a chain of N nodes (N = 10 ... 10 000) of 100 Mb/s links
  whose delays add up to 20 ms, for 5 simulated seconds: each packet crosses N - 1 links.
- Outside the core: `.venv/bin/spacetp run FILE --json OUT -q` as a user runs it (the
  process's wall, best of the reps) against the core's wall (the binary's, setup and
  summary included, best of the reps) on the 10 000-flow file. With Python's bytecode
  cache, as Python keeps it by default: a shell that sets PYTHONDONTWRITEBYTECODE (this
  development machine's does) recompiles spacetp's modules at every start, about 30 ms.

The core's figures come from the `spacetp-sim` binary (its wall and peak RSS); time per
traversal is its wall, less the wall of the same file stopped after 1 us (reading it,
building the world, the summary), over the links' tx_packets; memory per flow is the peak
RSS over N.

    python benches/scale.py [--reps 3] [--out benches/scale.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/spacetp-sim"
SIZES = [10, 100, 1_000, 10_000]


def flows_scenario(n: int) -> str:
    head = (
        f'name = "{n} flows"\nseed = 1\nstop = "2 s"\n'
        '[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n'
        '[[links]]\nbetween = ["a", "b"]\nrate = "1 Gb/s"\ndelay = "20 ms"\n'
        "queue = { bdp = 1.0 }\n"
    )
    flow = '[[flows]]\nfrom = "a"\nto = "b"\nprotocol = "linux-cubic"\n'
    return head + flow * n


def chain_scenario(n: int) -> str:
    hop_ns = 20_000_000 // (n - 1)
    nodes = "".join(f'[[nodes]]\nname = "n{i}"\n' for i in range(n))
    links = "".join(
        f'[[links]]\nbetween = ["n{i}", "n{i + 1}"]\nrate = "100 Mb/s"\ndelay = "{hop_ns} ns"\n'
        for i in range(n - 1)
    )
    flow = f'[[flows]]\nfrom = "n0"\nto = "n{n - 1}"\nprotocol = "newreno"\n'
    return f'name = "chain of {n}"\nseed = 1\nstop = "5 s"\n' + nodes + links + flow


def setup_wall(path: Path, reps: int) -> float:
    """Best wall of the same scenario stopped after 1 us: reading it, building the world
    and the summary."""
    short = path.with_name(path.stem + "-setup.toml")
    short.write_text(re.sub(r'stop = "[^"]*"', 'stop = "1 us"', path.read_text(), count=1))
    return core(short, reps, with_setup=False)["wall"]


def core(path: Path, reps: int, with_setup: bool = True) -> dict:
    """Best wall of the binary, its peak RSS, the traversals and the setup's wall."""
    best = None
    for _ in range(reps):
        r = subprocess.run([str(BIN), str(path)], capture_output=True, text=True, check=True)
        wall = float(re.search(r"wall ([\d.]+) s", r.stderr).group(1))
        rss_kb = int(re.search(r"peak RSS (\d+) kB", r.stderr).group(1))
        if best is None or wall < best["wall"]:
            d = json.loads(r.stdout)
            best = {
                "wall": wall,
                "rss_mb": rss_kb / 1024,
                "traversals": sum(link["tx_packets"] for link in d["links"]),
            }
    if with_setup:
        best["setup"] = setup_wall(path, reps)
    return best


def per_traversal(r: dict) -> float:
    """Nanoseconds per traversal of the run itself (the setup's wall taken off)."""
    return (r["wall"] - r["setup"]) / r["traversals"] * 1e9


def table(kind: str, rows: dict[int, dict], per: str) -> list[str]:
    first = per_traversal(rows[SIZES[0]])
    out = [
        f"| {kind} | traversals | core wall | of it setup | ns per traversal | / N = {SIZES[0]} "
        f"| peak RSS | {per} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, r in rows.items():
        ns = per_traversal(r)
        out.append(
            f"| {n} | {r['traversals']} | {r['wall']:.3f} s | {r['setup']:.3f} s | {ns:.0f} | "
            f"{ns / first:.2f} | {r['rss_mb']:.1f} MB | {r['rss_mb'] * 1024 / n:.1f} kB |"
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "scale.md")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "spacetp-sim"], cwd=ROOT,
                   check=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        flows, chain = {}, {}
        for n in SIZES:
            (t / f"flows-{n}.toml").write_text(flows_scenario(n))
            (t / f"chain-{n}.toml").write_text(chain_scenario(n))
            flows[n] = core(t / f"flows-{n}.toml", a.reps)
            chain[n] = core(t / f"chain-{n}.toml", a.reps)
            print(f"N = {n}: flows {flows[n]}, chain {chain[n]}", flush=True)
        big = t / f"flows-{SIZES[-1]}.toml"
        user_wall = float("inf")  # best of the reps, as the core's
        as_users_have_it = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for _ in range(a.reps):
            t0 = time.perf_counter()
            subprocess.run(
                [str(Path(sys.executable).parent / "spacetp"), "run", str(big),
                 "--json", str(t / "out.json"), "-q"],
                check=True, env=as_users_have_it,
            )  # fmt: skip
            user_wall = min(user_wall, time.perf_counter() - t0)
        assert json.loads((t / "out.json").read_text())["flows"]
    core_wall = flows[SIZES[-1]]["wall"]
    outside = user_wall - core_wall
    lines = [
        "# Scale: cost per traversal and memory as a scenario grows",
        "",
        f"`python benches/scale.py --reps {a.reps}`, this machine; the core's figures from "
        "`target/release/spacetp-sim` (best wall of the reps, its peak RSS).",
        "",
        "N concurrent linux-cubic flows on one 1 Gb/s, 20 ms link, 2 simulated s:",
        "",
        *table("flows", flows, "RSS per flow"),
        "",
        "One NewReno flow across a chain of N nodes (100 Mb/s links, 20 ms end to end), "
        "5 simulated s:",
        "",
        *table("nodes", chain, "RSS per node"),
        "",
        f"`spacetp run` of the {SIZES[-1]}-flow file (`.venv/bin/spacetp run FILE --json OUT -q`, "
        f"best of {a.reps}): "
        f"{user_wall:.2f} s in all, the core {core_wall:.2f} s, outside it (starting Python "
        "with its bytecode cache, "
        f"loading and checking the file, the summary and its JSON) {outside:.2f} s = "
        f"{outside / core_wall:.2f} x the core's.",
    ]
    a.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
