"""Scale: does the cost per link traversal, and the memory per flow, stay flat as a scenario
grows? And how much of `spacetp run` is outside the simulator's core?

- Flows: N concurrent unlimited linux-cubic flows share a 1 Gb/s, 20 ms link (queue of
  one BDP) for 2 simulated seconds, N = 10, 100, 1 000, 10 000: the link carries about
  the same packets whatever N, so the time per traversal shows what each flow adds.
- Flows at a constant share (`--share MBPS`): N flows each get MBPS of a link of N x MBPS
  (queue of one BDP), so each flow's regime (its window, its losses) is the same whatever N
  and only the number of flows grows; the packets carried grow with N. This tells the
  regime of a crowded link (above: 10 000 flows get 100 kb/s each, drop and time out) apart
  from what holding many flows costs.
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

    python benches/scale.py [--reps 3] [--share 10] [--out benches/scale.md]
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


def flows_scenario(n: int, rate: str = "1 Gb/s") -> str:
    head = (
        f'name = "{n} flows"\nseed = 1\nstop = "2 s"\n'
        '[[nodes]]\nname = "a"\n[[nodes]]\nname = "b"\n'
        f'[[links]]\nbetween = ["a", "b"]\nrate = "{rate}"\ndelay = "20 ms"\n'
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


def setup_file(path: Path) -> Path:
    """The same scenario stopped after 1 us: reading it, building the world and the
    summary."""
    short = path.with_name(path.stem + "-setup.toml")
    short.write_text(re.sub(r'stop = "[^"]*"', 'stop = "1 us"', path.read_text(), count=1))
    return short


def run_once(path: Path) -> dict:
    """One run of the binary: its wall, peak RSS and the links' traversals."""
    r = subprocess.run([str(BIN), str(path)], capture_output=True, text=True, check=True)
    return {
        "wall": float(re.search(r"wall ([\d.]+) s", r.stderr).group(1)),
        "rss_mb": int(re.search(r"peak RSS (\d+) kB", r.stderr).group(1)) / 1024,
        "traversals": sum(link["tx_packets"] for link in json.loads(r.stdout)["links"]),
    }


def measure(files: dict[str, Path], reps: int) -> dict[str, dict]:
    """Best run of each file and of its setup, the repetitions taken in turns over all the
    files: this machine's speed drifts by tens of percent within minutes, and files run one
    after the other would each see another speed; in turns, every file sees the same drift."""
    runs = {**files, **{f"{k} setup": setup_file(p) for k, p in files.items()}}
    best: dict[str, dict] = {}
    for rep in range(reps):
        for key, path in runs.items():
            r = run_once(path)
            if key not in best or r["wall"] < best[key]["wall"]:
                best[key] = r
        print(f"round {rep + 1} of {reps} done", flush=True)
    return {k: {**best[k], "setup": best[f"{k} setup"]["wall"]} for k in files}


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
    ap.add_argument(
        "--share", type=float, metavar="MBPS", help="also run N flows on a link of N x MBPS Mb/s"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "scale.md")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "spacetp-sim"], cwd=ROOT,
                   check=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        files = {}
        for n in SIZES:
            files[f"flows {n}"] = t / f"flows-{n}.toml"
            files[f"flows {n}"].write_text(flows_scenario(n))
            files[f"chain {n}"] = t / f"chain-{n}.toml"
            files[f"chain {n}"].write_text(chain_scenario(n))
            if a.share:
                files[f"share {n}"] = t / f"share-{n}.toml"
                files[f"share {n}"].write_text(flows_scenario(n, f"{n * a.share:g} Mb/s"))
        best = measure(files, a.reps)
        flows = {n: best[f"flows {n}"] for n in SIZES}
        chain = {n: best[f"chain {n}"] for n in SIZES}
        fixed_share = {n: best[f"share {n}"] for n in SIZES} if a.share else {}
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
        f"`python benches/scale.py --reps {a.reps}"
        + (f" --share {a.share:g}" if a.share else "")
        + "`, this machine; the core's figures from `target/release/spacetp-sim` (best wall "
        "of the reps, taken in turns over all the files, its peak RSS).",
        "",
        "N concurrent linux-cubic flows on one 1 Gb/s, 20 ms link, 2 simulated s:",
        "",
        *table("flows", flows, "RSS per flow"),
        "",
        *(
            [
                f"N linux-cubic flows on one link of N x {a.share:g} Mb/s, 20 ms (each flow's "
                "share fixed; the packets carried grow with N), 2 simulated s:",
                "",
                *table("flows", fixed_share, "RSS per flow"),
                "",
            ]
            if a.share
            else []
        ),
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
