"""The LTP delivery-time model (``ltp.py``, (L11)) beside the simulator's LTP engine on a grid.

Each point is one file sent with ``protocol = "ltp"`` over a two-node path (rate, one-way
delay, packet error rate on both directions, a queue that never drops), simulated with
``reps`` seeds, and the model's E[T_file] for the same numbers: the LTP rate is the link's
less the IPv4 and UDP headers of each segment (the engine's default transmission rate), the
timer margin ION's 1 s + 1 s queuing latencies, and control segments lost as data segments.

    python -m spacetp.models.ltp_vs_sim --out docs/figures   # the figure and CSV of docs/dtn.md
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from spacetp.models import ltp

IP_UDP = 28


@dataclass
class Point:
    one_way_s: float
    per: float
    sessions: int
    model_s: float
    sim_mean_s: float
    sim_min_s: float
    sim_max_s: float
    reps: int

    @property
    def ratio(self) -> float:
        return self.sim_mean_s / self.model_s


def scenario(rate_bps, one_way_s, per, sessions, file, block, mtu, seed) -> str:
    return f"""
name = "ltp model grid"
seed = {seed}
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "{rate_bps} b/s"
delay = "{one_way_s} s"
errors = {{ per = {per} }}
queue = {{ packets = 100000 }}
[[flows]]
from = "a"
to = "b"
protocol = "ltp"
bytes = "{file} B"
mtu = {mtu}
[flows.ltp]
max_export_sessions = {sessions}
max_import_sessions = {sessions}
block_size = "{block} B"
aggregation_size_limit = "{block} B"
max_ber = {max_ber(per, mtu - IP_UDP)}
"""


def max_ber(per: float, segment: int) -> float:
    """The bit error rate at which a segment is lost with probability ``per``: what an ION
    user sets as `m maxber` for the link, so that the retransmission limits it derives do not
    cancel sessions (a case the model leaves out)."""
    return max(-np.expm1(np.log1p(-per) / (8 * segment)), 1e-9)


def point(one_way_s, per, sessions, rate_bps=1e6, file=2e6, block=1e5, mtu=1500, reps=4):
    """Simulate ``reps`` seeds of one grid point; the model beside it."""
    import spacetp

    times = []
    for seed in range(1, reps + 1):
        sc = spacetp.loads(scenario(rate_bps, one_way_s, per, sessions, int(file), int(block),
                                    mtu, seed))  # fmt: skip
        f = spacetp.run(sc).flows[0]
        if not f["complete"]:
            raise RuntimeError(f"LTP did not deliver at {one_way_s} s, PER {per}: {f['state']}")
        times.append(f["completion_s"])
    seg = mtu - IP_UDP
    model = float(
        ltp.file_delivery_time(
            file,
            rate_bps * seg / mtu,
            2 * one_way_s,
            per,
            block=block,
            segment=seg,
            sessions=sessions,
        )  # fmt: skip
    )
    return Point(one_way_s, per, sessions, model, float(np.mean(times)), min(times), max(times),
                 reps)  # fmt: skip


def grid(one_ways=(0.05, 1, 10, 100, 1200), pers=(0.0, 1e-3, 1e-2, 5e-2), sessions=(4, 64),
         **kw) -> list[Point]:  # fmt: skip
    return [point(d, p, m, **kw) for m in sessions for p in pers for d in one_ways]


def plot(points: list[Point], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sessions = sorted({p.sessions for p in points})
    fig, axes = plt.subplots(1, len(sessions), figsize=(5.2 * len(sessions), 4.2), squeeze=False)
    for ax, m in zip(axes[0], sessions, strict=True):
        for i, per in enumerate(sorted({p.per for p in points})):
            row = sorted((p for p in points if p.sessions == m and p.per == per),
                         key=lambda p: p.one_way_s)  # fmt: skip
            x = [p.one_way_s * 2 for p in row]
            c = f"C{i}"
            ax.plot(x, [p.model_s for p in row], "-", color=c, label=f"model, PER {per:g}")
            spread = [[p.sim_mean_s - p.sim_min_s for p in row],
                      [p.sim_max_s - p.sim_mean_s for p in row]]  # fmt: skip
            ax.errorbar(x, [p.sim_mean_s for p in row], yerr=spread, fmt="o", color=c, ms=4,
                        capsize=2, label=f"simulator, PER {per:g}")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("round-trip light time (s)")
        ax.set_ylabel("file delivery time (s)")
        ax.set_title(f"2 MB over 1 Mb/s, 100 kB blocks, {m} export sessions", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    points = grid(reps=a.reps)
    with open(a.out / "ltp_model_vs_sim.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*asdict(points[0]), "ratio"])
        w.writeheader()
        for p in points:
            w.writerow({**asdict(p), "ratio": round(p.ratio, 4)})
    plot(points, a.out / "ltp_model_vs_sim.png")
    worst = max(points, key=lambda p: abs(p.ratio - 1))
    print(f"{len(points)} points; simulator / model from {min(p.ratio for p in points):.3f} to "
          f"{max(p.ratio for p in points):.3f} (worst at RTT {2 * worst.one_way_s:g} s, "
          f"PER {worst.per:g}, {worst.sessions} sessions)")  # fmt: skip


if __name__ == "__main__":
    main()
